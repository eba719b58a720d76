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

import importlib
from typing import TYPE_CHECKING, Any

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


def __getattr__(name: str) -> Any:
    """The public name ``name``, imported from its module on first use (then cached in this module).

    :raises AttributeError: not a public name (nor a submodule, which Python's import system finds itself).
    """
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'lockscope' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_PUBLIC})
