"""The demo database ``lockscope audit`` audits when no ``--dsn`` is given.

On a scratch server (embedded PostgreSQL 18, max_locks_per_transaction 16 by default: one group of 16 fast-path
slots, the PG 13-17 capacity) lockscope creates the seed scenarios (``events``: 12 monthly partitions x 3 indexes;
``t``: 5 indexes; ``p40``: 40 partitions) plus:

- ``orders``: 18 indexes, among them two duplicates, a redundant prefix and an invalid index left by a failed
  ``CREATE INDEX CONCURRENTLY``: 19 planner locks, 3 over the 16 slots.
- ``metrics``: 60 range partitions x 2 indexes, queried with and without its partition key.

and runs a pgbench workload against them (prepared protocol, 2 clients) between the two pg_stat_statements snapshots,
so every kind of finding has data behind it. Load goes only to that scratch server.
"""

from __future__ import annotations

import threading

from ..db import load_script, run_script
from ..demo import EVENTS_SQL, P40_SQL, T5_SQL
from ..errors import StatementError
from ..pgbench import PgbenchResult, run_pgbench
from ..server import ScratchServer

__all__ = ["DEMO_INVALID_INDEX", "DEMO_SCHEMA", "DEMO_WORKLOAD", "DemoWorkload", "create_demo_database"]

#: The demo schema: the seed scenarios, then ``sql/scenario_audit_demo.sql`` (orders, customers, metrics, rows).
DEMO_SCHEMA = EVENTS_SQL + T5_SQL + P40_SQL + load_script("scenario_audit_demo")
#: A failed CREATE INDEX CONCURRENTLY (division by zero at id 1000) leaves an invalid index behind, locked at planning.
DEMO_INVALID_INDEX = load_script("scenario_audit_invalid_index")
#: The pgbench script (``-f`` format) run between the audit's snapshots.
DEMO_WORKLOAD = load_script("scenario_audit_workload")
#: SQLSTATE division_by_zero (``errcodes.txt``): how :data:`DEMO_INVALID_INDEX` fails.
_DIVISION_BY_ZERO = "22012"


def create_demo_database(server: ScratchServer) -> None:
    """Create the demo schema (with its invalid index) on a scratch server lockscope started.

    :raises StatementError: if a set-up statement other than the deliberately failing one fails.
    """
    run_script(server.conninfo(), DEMO_SCHEMA)
    try:
        run_script(server.conninfo(), DEMO_INVALID_INDEX)
    except StatementError as exc:  # expected: division by zero; the index stays, invalid
        if exc.sqlstate != _DIVISION_BY_ZERO:
            raise


class DemoWorkload:
    """pgbench with :data:`DEMO_WORKLOAD` (or another pgbench script: ``audit --scratch --workload FILE``) in a
    background thread, started between the audit's snapshots.

    :ivar result: the pgbench summary once :meth:`join` returned (None if it failed; ``error`` says why).
    """

    def __init__(self, server: ScratchServer, duration_s: float, clients: int = 2,
                 script: str = DEMO_WORKLOAD) -> None:
        self.server = server
        self.script = script
        self.duration_s = max(1.0, duration_s)
        self.clients = clients
        self.result: PgbenchResult | None = None
        self.error: Exception | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start pgbench (``-M prepared``) for ``duration_s`` seconds."""
        def work() -> None:
            try:
                self.result = run_pgbench(self.server, clients=self.clients, duration_s=self.duration_s,
                                          protocol="prepared", script=self.script)
            except Exception as exc:  # reported by the caller; never kills the audit
                self.error = exc

        self._thread = threading.Thread(target=work, name="lockscope-demo-workload", daemon=True)
        self._thread.start()

    def join(self) -> None:
        """Wait for pgbench to finish."""
        if self._thread is not None:
            self._thread.join()
