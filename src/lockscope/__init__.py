"""lockscope: see, predict, reproduce and fix PostgreSQL lock-manager contention (``LWLock:LockManager``).

Public API (frozen dataclasses, no printing)::

    from lockscope import connect, measure_footprint, ScratchServer
    with ScratchServer() as srv, connect(srv.conninfo()) as session:
        fp = measure_footprint(session, "select * from t where id = $1", params=["1"], protocol="prepared")
        [(e.phase, e.lock_count, e.main_table_count) for e in fp.executions]

The names are imported on first use (module ``__getattr__``, PEP 562): ``import lockscope`` alone imports neither
psycopg nor pglast, so ``lockscope --version``, ``--help`` and shell completion start quickly.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._lazy import lazy_exports

__version__ = "0.1.0"

if TYPE_CHECKING:  # the same names, for type checkers and readers
    from .capacity import CapacityModel
    from .db import Session, connect
    from .errors import LockscopeError
    from .footprint import Execution, Footprint, RelationLock, measure_all_modes, measure_footprint
    from .server import ScratchServer, ScratchSettings

#: public name -> the module (below ``lockscope``) that defines it
_PUBLIC = {
    "CapacityModel": "capacity",
    "Execution": "footprint",
    "Footprint": "footprint",
    "LockscopeError": "errors",
    "RelationLock": "footprint",
    "ScratchServer": "server",
    "ScratchSettings": "server",
    "Session": "db",
    "connect": "db",
    "measure_all_modes": "footprint",
    "measure_footprint": "footprint",
}

__all__ = [
    "CapacityModel",
    "Execution",
    "Footprint",
    "LockscopeError",
    "RelationLock",
    "ScratchServer",
    "ScratchSettings",
    "Session",
    "__version__",
    "connect",
    "measure_all_modes",
    "measure_footprint",
]

__getattr__, __dir__ = lazy_exports(__name__, _PUBLIC)
