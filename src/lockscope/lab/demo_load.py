"""The contended demo load for ``lockscope watch`` without ``--dsn``, the watch tests and the observer benchmark.

pgbench select-only on ``pgbench_accounts`` with ~100 extra indexes at ``max_locks_per_transaction`` 16: each
primary-key SELECT locks the table and its ~101 indexes (AccessShareLock, planner locks), far more than the 16
fast-path slots, so ~85 locks per transaction go to the main lock table and the 16 clients queue on
``LWLock:LockManager`` (seed 2-007; pg-lock-internals.md sections 1-3). On this 2-core machine: 33k tps and a
LockManager share of 0 % with no extra index; 6k tps and ~67 % with 100.

Load only ever goes to a :class:`~lockscope.server.ScratchServer` lockscope started.
"""

from __future__ import annotations

from collections.abc import Callable

from ..db import connect, run_script
from ..demo import set_extra_indexes
from ..pgbench import PgbenchRun, pgbench_init, start_pgbench
from ..server import ScratchServer

__all__ = ["DEMO_CLIENTS", "DEMO_EXTRA_INDEXES", "DEMO_INDEX_PREFIX", "DEMO_MLPT", "prepare_contended_schema",
           "start_demo_load"]

DEMO_CLIENTS = 16
DEMO_EXTRA_INDEXES = 100
DEMO_MLPT = 16
#: Name prefix of the demo load's extra indexes (``pgbench_accounts_watch_extra_1`` ...).
DEMO_INDEX_PREFIX = "pgbench_accounts_watch_extra"


def prepare_contended_schema(server: ScratchServer, *, extra_indexes: int = DEMO_EXTRA_INDEXES,
                             mlpt: int | None = DEMO_MLPT, scale: int = 1,
                             progress: Callable[[str], None] = lambda _: None) -> None:
    """Set a scratch server up for the contended load: ``max_locks_per_transaction`` (restart if it differs),
    pg_stat_statements (when the installation has it and preloads it), ``pgbench -i`` (once), and exactly
    ``extra_indexes`` extra indexes (:func:`lockscope.demo.set_extra_indexes`).

    :param extra_indexes: indexes on pgbench_accounts besides its primary key (count).
    :param mlpt: max_locks_per_transaction, or None to keep the server's.
    :param scale: pgbench scale factor for the first ``pgbench -i``.
    :raises ScratchServerError, DatabaseError: when a step fails.
    """
    if mlpt is not None and server.settings.max_locks_per_transaction != mlpt:
        progress(f"restarting with max_locks_per_transaction={mlpt}")
        server.reconfigure(max_locks_per_transaction=mlpt)
    with connect(server.conninfo()) as session:
        state = session.query("demo_load_state")[0]
    if state["has_pgss"] and state["pgss_preloaded"]:
        run_script(server.conninfo(), "create extension if not exists pg_stat_statements")
    if not state["has_accounts"]:
        progress(f"pgbench -i -s {scale}")
        pgbench_init(server, scale)
    progress(f"{extra_indexes} extra indexes on pgbench_accounts")
    set_extra_indexes(server.conninfo(), extra_indexes, prefix=DEMO_INDEX_PREFIX)


def start_demo_load(server: ScratchServer, *, duration_s: float, clients: int = DEMO_CLIENTS) -> PgbenchRun:
    """Start ``pgbench -S -c clients -T duration_s`` in the background (stop it with the returned run).

    :raises ScratchServerError: if pgbench cannot start.
    """
    return start_pgbench(server, clients=clients, duration_s=max(1.0, duration_s), select_only=True)
