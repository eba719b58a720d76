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
from ..pgbench import PgbenchRun, pgbench_init, start_pgbench
from ..server import ScratchServer

__all__ = ["DEMO_CLIENTS", "DEMO_EXTRA_INDEXES", "DEMO_MLPT", "prepare_contended_schema", "set_extra_indexes",
           "start_demo_load"]

DEMO_CLIENTS = 16
DEMO_EXTRA_INDEXES = 100
DEMO_MLPT = 16
_INDEX = "pgbench_accounts_watch_extra_{}"


def set_extra_indexes(server: ScratchServer, count: int) -> None:
    """Make ``pgbench_accounts`` have exactly ``count`` extra indexes (on ``bid``) besides its primary key.

    :raises StatementError: if pgbench_accounts does not exist.
    """
    with connect(server.conninfo()) as session:
        rows = session.fetch_all(
            "SELECT c.relname::text AS name FROM pg_catalog.pg_index i "
            "JOIN pg_catalog.pg_class c ON c.oid = i.indexrelid "
            "WHERE i.indrelid = 'public.pgbench_accounts'::regclass "
            "AND c.relname LIKE 'pgbench_accounts_watch_extra_%'")
    have = {str(r["name"]) for r in rows}
    want = {_INDEX.format(k) for k in range(1, count + 1)}
    script = "".join(f"drop index {name};" for name in sorted(have - want))
    script += "".join(f"create index {name} on pgbench_accounts (bid);" for name in sorted(want - have))
    if script:
        run_script(server.conninfo(), script)


def prepare_contended_schema(server: ScratchServer, *, extra_indexes: int = DEMO_EXTRA_INDEXES,
                             mlpt: int | None = DEMO_MLPT, scale: int = 1,
                             progress: Callable[[str], None] = lambda _: None) -> None:
    """Set a scratch server up for the contended load: ``max_locks_per_transaction`` (restart if it differs),
    pg_stat_statements (when the installation has it), ``pgbench -i`` (once), and the extra indexes.

    :param extra_indexes: indexes on pgbench_accounts besides its primary key (count).
    :param mlpt: max_locks_per_transaction, or None to keep the server's.
    :param scale: pgbench scale factor for the first ``pgbench -i``.
    :raises ScratchServerError, DatabaseError: when a step fails.
    """
    if mlpt is not None and server.settings.max_locks_per_transaction != mlpt:
        progress(f"restarting with max_locks_per_transaction={mlpt}")
        server.reconfigure(max_locks_per_transaction=mlpt)
    with connect(server.conninfo()) as session:
        has_accounts = bool(session.fetch_one(
            "SELECT pg_catalog.to_regclass('public.pgbench_accounts') IS NOT NULL AS present")["present"])
        has_pgss = bool(session.fetch_one(
            "SELECT count(*) > 0 AS present FROM pg_catalog.pg_available_extensions "
            "WHERE name = 'pg_stat_statements'")["present"])
        preloaded = "pg_stat_statements" in str(session.fetch_one(
            "SELECT current_setting('shared_preload_libraries') AS libs")["libs"])
    if has_pgss and preloaded:
        run_script(server.conninfo(), "create extension if not exists pg_stat_statements")
    if not has_accounts:
        progress(f"pgbench -i -s {scale}")
        pgbench_init(server, scale)
    progress(f"{extra_indexes} extra indexes on pgbench_accounts")
    set_extra_indexes(server, extra_indexes)


def start_demo_load(server: ScratchServer, *, duration_s: float, clients: int = DEMO_CLIENTS) -> PgbenchRun:
    """Start ``pgbench -S -c clients -T duration_s`` in the background (stop it with the returned run).

    :raises ScratchServerError: if pgbench cannot start.
    """
    return start_pgbench(server, clients=clients, duration_s=max(1.0, duration_s), select_only=True)
