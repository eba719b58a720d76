"""The contended demo load of ``--demo`` (``lockscope watch``, ``lockscope diagnose``), the watch tests and the
observer benchmarks.

pgbench select-only on ``pgbench_accounts`` with ~100 extra indexes at ``max_locks_per_transaction`` 16: each
primary-key SELECT locks the table and its ~101 indexes (AccessShareLock, planner locks), far more than the 16
fast-path slots, so ~85 locks per transaction go to the main lock table and the 16 clients queue on
``LWLock:LockManager`` (seed 2-007; pg-lock-internals.md sections 1-3). On this 2-core machine: 33k tps and a
LockManager share of 0 % with no extra index; 6k tps and ~67 % with 100.

:func:`demo_load` is the whole of it as one ``with`` block (scratch server started, schema prepared, pgbench
running; all stopped and removed on exit); :func:`prepare_contended_schema` and :func:`start_demo_load` are its
steps, for a caller that owns its server. Load only ever goes to a :class:`~lockscope.server.ScratchServer`
lockscope started.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

from .db import connect, run_script
from .demo import set_extra_indexes
from .pgbench import PgbenchRun, pgbench_init, start_pgbench
from .rows import DemoLoadStateRow
from .server import ScratchServer, ScratchSettings, default_bin_dir
from .watch.wait_sampling import scratch_preload

__all__ = ["DEMO_CLIENTS", "DEMO_EXTRA_INDEXES", "DEMO_INDEX_PREFIX", "DEMO_MLPT", "RunningDemo", "demo_load",
           "prepare_contended_schema", "start_demo_load"]

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
        state = session.query_rows("demo_load_state", DemoLoadStateRow)[0]
    if state.has_pgss and state.pgss_preloaded:
        run_script(server.conninfo(), "create extension if not exists pg_stat_statements")
    if not state.has_accounts:
        progress(f"pgbench -i -s {scale}")
        pgbench_init(server, scale)
    progress(f"{extra_indexes} extra indexes on pgbench_accounts")
    set_extra_indexes(server.conninfo(), extra_indexes, prefix=DEMO_INDEX_PREFIX)


def start_demo_load(server: ScratchServer, *, duration_s: float, clients: int = DEMO_CLIENTS) -> PgbenchRun:
    """Start ``pgbench -S -c clients -T duration_s`` in the background (stop it with the returned run).

    :raises ScratchServerError: if pgbench cannot start.
    """
    return start_pgbench(server, clients=clients, duration_s=max(1.0, duration_s), select_only=True)


@dataclass(frozen=True)
class RunningDemo:
    """The demo load of a :func:`demo_load` block, running.

    :ivar server: the scratch server (started by lockscope; removed when the block ends).
    :ivar clients: pgbench clients (count).
    :ivar extra_indexes: extra indexes on pgbench_accounts (count).
    :ivar mlpt: the server's max_locks_per_transaction (count).
    """

    server: ScratchServer
    clients: int
    extra_indexes: int
    mlpt: int

    @property
    def conninfo(self) -> str:
        """libpq connection string of the scratch server."""
        return self.server.conninfo()

    @property
    def source(self) -> str:
        """What the server is, for a command's first line (``scratch server started by lockscope, demo load: ...``)."""
        return (f"scratch server started by lockscope, demo load: pgbench -S -c{self.clients}, {self.extra_indexes} "
                f"extra indexes, max_locks_per_transaction {self.mlpt}")


def _silent(_: str) -> None:
    return None


@contextlib.contextmanager
def demo_load(*, pg_bin: Path | None = None, mlpt: int | None = None, extra_indexes: int | None = None,
              clients: int | None = None, duration_s: float, wait_sampling: bool = False,
              progress: AbstractContextManager[Callable[[str], None]] | None = None) -> Iterator[RunningDemo]:
    """``with demo_load(duration_s=...) as running:``: a scratch server started, the contended schema prepared
    (:func:`prepare_contended_schema`), ``pgbench -S`` running for ``duration_s + 5`` s (started 0.5 s before the
    block's body runs); on exit, also on an error or Ctrl-C, pgbench is killed and the server stopped and removed.

    :param pg_bin: the server's bin directory (None: the embedded PostgreSQL 18).
    :param mlpt: max_locks_per_transaction (None: :data:`DEMO_MLPT`).
    :param extra_indexes: extra indexes on pgbench_accounts (count; None: :data:`DEMO_EXTRA_INDEXES`).
    :param clients: pgbench clients (count; None: :data:`DEMO_CLIENTS`).
    :param duration_s: how long the body will use the load (s); pgbench runs 5 s longer.
    :param wait_sampling: also preload pg_wait_sampling (with pg_stat_statements) and create it, when the
        installation has it.
    :param progress: a context manager, entered while the server starts and the schema is prepared and left
        before the load starts, that gives the callable told each step (a command's ``steps(...)``); None: silent.
    :raises ScratchServerError, DatabaseError: when the server, the set-up or pgbench fails.
    """
    mlpt = DEMO_MLPT if mlpt is None else mlpt
    extra_indexes = DEMO_EXTRA_INDEXES if extra_indexes is None else extra_indexes
    clients = DEMO_CLIENTS if clients is None else clients
    preload = scratch_preload(pg_bin or default_bin_dir()) if wait_sampling else {}
    server = ScratchServer(pg_bin, ScratchSettings(max_locks_per_transaction=mlpt,
                                                   max_connections=max(100, clients + 20), extra=preload))
    try:
        with progress or contextlib.nullcontext(_silent) as step:
            step("starting a scratch PostgreSQL")
            server.start()
            prepare_contended_schema(server, extra_indexes=extra_indexes, mlpt=None, progress=step)
            if preload:
                run_script(server.conninfo(), "create extension if not exists pg_wait_sampling")
        with start_demo_load(server, duration_s=duration_s + 5, clients=clients):
            time.sleep(0.5)
            yield RunningDemo(server=server, clients=clients, extra_indexes=extra_indexes, mlpt=mlpt)
    finally:
        server.stop()
