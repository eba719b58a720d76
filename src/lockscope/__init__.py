"""lockscope: see, predict, reproduce and fix PostgreSQL lock-manager contention (``LWLock:LockManager``).

Public API (frozen dataclasses, no printing)::

    from lockscope import connect, measure_footprint, ScratchServer
    with ScratchServer() as srv, connect(srv.conninfo()) as session:
        fp = measure_footprint(session, "select * from t where id = $1", params=["1"], protocol="prepared")
        [(e.phase, e.lock_count, e.main_table_count) for e in fp.executions]
"""

__version__ = "0.1.0"

from .capacity import CapacityModel
from .db import Session, connect
from .errors import LockscopeError
from .footprint import Execution, Footprint, RelationLock, measure_all_modes, measure_footprint
from .server import ScratchServer, ScratchSettings

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
