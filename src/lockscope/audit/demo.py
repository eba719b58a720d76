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

import contextlib
import threading
from collections.abc import Callable

from ..db import run_script
from ..demo import EVENTS_SQL, P40_SQL, T5_SQL
from ..errors import StatementError
from ..pgbench import PgbenchResult, run_pgbench
from ..server import ScratchServer

__all__ = ["DEMO_INVALID_INDEX", "DEMO_SCHEMA", "DEMO_WORKLOAD", "DemoWorkload", "create_demo_database"]

DEMO_SCHEMA = EVENTS_SQL + T5_SQL + P40_SQL + """
create extension if not exists pg_stat_statements;
insert into p40 select g % 400, 'v' || g from generate_series(1, 4000) g;
create table customers (id int primary key, email text not null, region text);
insert into customers select g, 'c' || g || '@example.com', 'r' || (g % 7) from generate_series(1, 500) g;
create table orders (id int primary key, customer_id int not null, status text not null,
                     created_at timestamptz not null,
                     updated_at timestamptz, total numeric, note text, region text, coupon text, email text);
insert into orders select g, 1 + g % 500, (array['new','paid','shipped','void'])[1 + g % 4],
       '2024-01-01'::timestamptz + g * interval '1 hour', null, g % 1000, 'n' || g, 'r' || (g % 7), null, null
from generate_series(1, 2000) g;
create index orders_customer_id on orders (customer_id);
create index orders_customer_id_again on orders (customer_id);
create index orders_status on orders (status);
create index orders_status_copy on orders (status);
create index orders_created_at on orders (created_at);
create index orders_customer_created on orders (customer_id, created_at);
create index orders_customer_status on orders (customer_id, status);
create index orders_note on orders (note);
create index orders_note_lower on orders (lower(note));
create index orders_total on orders (total);
create index orders_updated_at on orders (updated_at);
create index orders_region on orders (region);
create index orders_region_created on orders (region, created_at);
create index orders_created_id on orders (created_at, id);
create index orders_coupon on orders (coupon) where coupon is not null;
create index orders_email on orders (email);
create table metrics (day int not null, device int not null, value float8) partition by range (day);
do $$ begin
  for i in 0..59 loop
    execute format('create table metrics_d%s partition of metrics for values from (%s) to (%s)', i, i, i + 1);
  end loop;
end $$;
create index on metrics (device);
create index on metrics (day, device);
insert into metrics select g % 60, g % 50, random() from generate_series(1, 6000) g;
analyze;
"""
#: A failed CREATE INDEX CONCURRENTLY (division by zero at id 1000) leaves an invalid index behind, locked at planning.
DEMO_INVALID_INDEX = "create index concurrently orders_ratio on orders ((100 / (id - 1000)))"

DEMO_WORKLOAD = """\\set id random(1, 2000)
\\set d random(0, 59)
\\set k random(0, 399)
select * from orders where id = :id;
update orders set updated_at = now() where id = :id;
select * from metrics where day = :d and device = 3;
select count(*) from metrics where device = :d;
select * from p40 where k = :k;
select * from p40 where k = (select :k::int);
select * from customers where id = :k;
"""


def create_demo_database(server: ScratchServer) -> None:
    """Create the demo schema (with its invalid index) on a scratch server lockscope started.

    :raises StatementError: if a set-up statement other than the deliberately failing one fails.
    """
    run_script(server.conninfo(), DEMO_SCHEMA)
    with contextlib.suppress(StatementError):  # expected: division by zero; the index stays, invalid
        run_script(server.conninfo(), DEMO_INVALID_INDEX)


class DemoWorkload:
    """pgbench with :data:`DEMO_WORKLOAD` in a background thread, started between the audit's snapshots.

    :ivar result: the pgbench summary once :meth:`join` returned (None if it failed; ``error`` says why).
    """

    def __init__(self, server: ScratchServer, duration_s: float, clients: int = 2) -> None:
        self.server = server
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
                                          protocol="prepared", script=DEMO_WORKLOAD)
            except Exception as exc:  # reported by the caller; never kills the audit
                self.error = exc

        self._thread = threading.Thread(target=work, name="lockscope-demo-workload", daemon=True)
        self._thread.start()

    def join(self) -> None:
        """Wait for pgbench to finish."""
        if self._thread is not None:
            self._thread.join()

    def as_callback(self) -> Callable[[], None]:
        """``run_audit(during_interval=...)`` hook."""
        return self.start
