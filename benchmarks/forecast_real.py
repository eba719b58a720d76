"""Benchmark: the ground truth for the forecast model on statements that are NOT pgbench -S (``points.json``).

Measures, on a scratch PostgreSQL 18 (embedded) on this machine, an application-like schema ("app") and eight
pgbench workloads, and writes ``OUT/points.json`` (default ``benchmarks/results/forecast-real-<UTC date>/``) with
the exact schema (``schema.sql``) and pgbench scripts (``scripts/*.sql``) beside it, so that a later forecast step
can read every measured figure and every statement's measured lock footprint without measuring again. Prints a
Markdown summary (also saved as ``summary.md``).

    .venv/bin/python benchmarks/forecast_real.py              # full: ~20 min with the full lab ceiling
    .venv/bin/python benchmarks/forecast_real.py --quick      # clients 1, 4, 16; one run; quick lab ceiling
    .venv/bin/python benchmarks/forecast_real.py --only join2 --only mix --ceiling none --out /tmp/fr

Every load run (pgbench, the single-client EXPLAIN timings and ``lab ceiling``) holds the machine's load lock: an
exclusive ``fcntl.flock`` on ``/tmp/lockscope-load.lock`` taken inside this script around each run (never run this
script itself under ``flock``). Load goes only to the scratch server this script starts.

Server: ``ScratchServer`` with ``ScratchSettings(max_locks_per_transaction=16)`` (one fast-path group of 16
slots on PostgreSQL 18), ``pg_stat_statements`` preloaded with ``track_planning = on`` (the ScratchSettings
default), ``fsync``/``synchronous_commit``/``full_page_writes`` off (the scratch server's own settings), and
``max_parallel_workers_per_gather = 0`` (the model takes one call as one backend; recorded in ``settings``).

Schema (``schema.sql``; deterministic data, ``vacuum analyze`` at the end):

- ``customers`` 5,000 rows, 9 indexes (pkey, unique email, country, city, created_at, status, segment, phone,
  last_login);
- ``items`` 20,000 rows (a product catalogue), 11 indexes (pkey, unique sku, name, category, brand, supplier_id,
  price, created_at, updated_at, status, (category, price));
- ``orders`` 50,000 rows, fillfactor 90, 16 indexes (pkey, customer_id, (customer_id, created_at), item_id,
  status, (status, created_at), created_at, updated_at, shipped_at, currency, channel, warehouse_id,
  sales_rep_id, region, unique external_ref, coupon_code); FKs ``orders.customer_id -> customers.id`` and
  ``orders.item_id -> items.id``;
- ``events`` range-partitioned by ``day`` (date), 32 daily partitions from 2025-01-01, 2 indexes each
  (``account_id``, ``ts``), 100,000 rows (1,000 accounts).

Statements (one pgbench script each, random ids with ``\\set``; each script is one transaction, ``-M simple``):

| name | SQL |
|---|---|
| ``join2`` | orders ⋈ customers by primary key (``o.id = :id``) |
| ``join3`` | orders ⋈ customers ⋈ items by primary key |
| ``count50k`` | ``count(*)`` of orders with ``amount >= :lo`` (no index on amount: a 50k-row seq scan) |
| ``pk9`` | ``select * from customers where id = :id`` (9 indexes: 10 locks) |
| ``agg_part`` | ``count(*), sum(value)`` of events ``where account_id = :a group by kind`` (all 32 partitions) |
| ``agg_part_pruned`` | the same with ``day = date '2025-01-01' + :d`` (pruned at plan time to one partition) |
| ``update_ret`` | ``update orders set amount = amount + 1, note = ... where id = :id returning ...`` |
| ``mix`` | ``-f join2.sql@5 -f pk9.sql@3 -f update_ret.sql@2`` |

Each SQL text carries a comment ``/* fcbench:NAME */`` after its first keyword so that pg_stat_statements rows are
matched to statements by name (the comment does not change the query id).

What is measured, in order (``--only`` restricts the statements, ``--no-fixes`` skips the fixes):

1. per statement, on the mlpt-16 server: its footprint (``lockscope.footprint.measure_footprint``, simple
   protocol, EXPLAIN in a rolled-back READ ONLY transaction) with representative parameter values; the
   single-client EXPLAIN timings (median of 20); a warm-up (``--warmup`` s of pgbench, 2 clients, not recorded);
   then for each run and each client count a point (``lockscope.lab.load.measure_load``: pg_stat_statements
   reset, pgbench ``-T --duration``, wait events sampled at 10 Hz, ``/proc/stat`` around the run). Runs are
   interleaved: run 1 over all client counts, then run 2.
2. the fixes, for ``join2`` and ``join3`` at 8 and 16 clients (``FIX_CLIENTS``), on three fresh servers built
   like the base one: ``before`` (unchanged), ``mlpt64`` (max_locks_per_transaction 64: 4 fast-path groups; in
   production a restart) and ``drop5`` (max_locks_per_transaction 16, the 5 indexes of ``DROPPED_INDEXES``
   dropped; their reasons are recorded, and every orders index's ``idx_scan`` over all of step 1). Footprints on
   each, a warm-up on each, then runs interleaved: each run goes over the client counts and, within each, over the
   three servers, so that a fix and its "before" are measured side by side (a first version compared against the
   step-1 points and was ruined by other engineers' load arriving in between).
3. ``lockscope lab ceiling`` (``--ceiling full`` by default, ``quick`` with ``--quick``, ``none`` to skip): its
   ``calibration.json`` is copied to ``OUT/calibration.json``, its ``results.json`` kept in ``OUT/ceiling/``.

``points.json`` (schema ``lockscope/forecast-real/v1``; NaN is written as null; times in ms unless the name says
otherwise):

- ``schema``, ``started`` / ``finished`` (UTC), ``command`` (argv), ``git_commit`` (HEAD of this checkout),
  ``machine``: ``cores`` (os.cpu_count), ``platform``, ``memory_gib``; ``server``: ``version``
  (server_version), ``version_num``, ``database_oid`` (the database the statements ran in);
  ``settings``: the scratch server's settings at the base points (name -> value as ``SHOW`` prints it);
  ``profile``: ``mode`` (``full``/``quick``), ``clients``, ``runs``, ``duration_s``, ``warmup_s``,
  ``sample_hz``, ``explain_repeats``.
- ``statements``: NAME -> ``{sql`` (the statement with ``$n`` parameters), ``params`` (the values the footprint
  and the EXPLAIN of the record used), ``script`` (pgbench script file name, or the mix's ``-f`` arguments),
  ``dml`` (bool), ``weights`` (mix only: component -> pgbench weight), ``components`` (mix only, runs after
  2026-11-24: component -> FOOTPRINT; else see the components' own records), ``pgss_query`` (the text
  pg_stat_statements normalised it to), ``footprint``, ``explain}``:
  - ``footprint`` (mix: null; see its components) = FOOTPRINT:
    ``{max_locks_per_transaction, fast_path_slots, fast_path_groups`` (capacity of the measured server: slots in
    all, groups of 16), ``locks`` (relation locks
    held, count), ``fast_path_locks``, ``main_table_locks`` (pg_locks ``fastpath = false``), ``partition_load``
    (16 counts: main-table locks per lock partition, index = partition), ``partitions_touched`` (count of
    non-zero), ``planned_relations`` (relations the planner opens beyond the base statement's two, as the
    forecast engine's ``StatementShape`` counts them), ``plans`` (true: planned each call), ``database_oid``,
    ``relations``: ``[{order, relation, relation_oid, role, mode, fastpath, lock_partition}]}`` in acquisition
    order; locks a trigger or the FK check would take at run time are not in EXPLAIN and not here.
  - ``explain``: ``{repeats, analyze_planning_ms, analyze_execution_ms`` (each ``{median, min, max, values}``
    over ``repeats`` runs of ``EXPLAIN (ANALYZE, SUMMARY, FORMAT JSON)``, one connection, random parameters of
    the pgbench script's ranges from a fixed seed; DML inside a rolled-back transaction), ``plan_only_planning_ms``
    (the same for ``EXPLAIN (SUMMARY, FORMAT JSON)``, no execution), ``plan`` (one EXPLAIN ANALYZE's text)``}``.
- ``points``: one per run: ``{statement, setting`` (``base`` = step 1: mlpt 16, all indexes; ``before``,
  ``mlpt64``, ``drop5``: step 2's servers),
  ``max_locks_per_transaction, clients, run`` (1-based), ``best`` (true for the run with the highest TPS of its
  statement, setting and clients), ``duration_s`` (pgbench ``-T``, s), ``load_avg_1m`` (the machine's 1-minute
  load average just before the run), ``other_cpu_fraction`` (fraction 0..1 of all cores that processes other
  than this run's took during it: machine busy core-s from ``/proc/stat`` minus ``process_cpu_us_per_transaction``'s
  total, over cores x wall time of the window; other engineers' tests on a shared machine show here), ``tps``
  (transactions/s without connection time; a transaction = one script = one statement), ``latency_ms`` (pgbench
  mean),
  ``transactions``, ``failed`` (counts), ``samples`` (sampling ticks), ``active_session_samples`` (active client
  sessions summed over ticks), ``aas`` (average active sessions = active_session_samples / samples),
  ``aas_by_class`` (wait_event_type or ``CPU`` -> average sessions; sums to aas), ``waits`` (``type:event`` or
  ``CPU`` -> active-session samples), ``lockmanager_share`` (fraction 0..1 of active-session samples on
  ``LWLock:LockManager``), ``cpu_share`` (fraction not waiting), ``client_backends`` (distinct client backends
  sampled while active: a lower bound of those that ran statements), ``cpu_busy_fraction`` (all cores busy
  during pgbench, 0..1, ``/proc/stat``: the backends, pgbench, the sampler and anything else on the machine),
  ``cpu_us_per_transaction`` (busy core-µs / transactions, the same counters), ``context_switches_per_transaction``
  (machine-wide), ``process_cpu_us_per_transaction`` (core-µs per transaction of the processes this run owns,
  from ``/proc/PID/stat`` of the postmaster (its own time and that of its reaped children, i.e. the backends)
  and of its live children, and ``getrusage`` of pgbench and of this script; window: the whole measure_load
  call): ``{server, pgbench, harness, total}``; the machine figure minus ``total`` is what other processes took,
  ``mean_plan_ms`` / ``mean_exec_ms`` (pg_stat_statements: total planning / execution time over calls of the
  point's statements), ``statements``: ``[{name`` (our statement name, or null for a statement we did not send),
  ``queryid, query`` (normalised), ``calls, plans, mean_plan_ms`` (per planning; null without plannings),
  ``mean_exec_ms, rows, shared_blks_hit, shared_blks_read`` (counts summed over the calls), ``waits``
  (active-session samples of backends running this statement, by wait label), ``lockmanager_share`` (of those),
  ``client_backends}]`` (only our statements, by their ``fcbench`` tag: lockscope's own sampling queries are
  left out of the rows and of ``mean_plan_ms`` / ``mean_exec_ms``).

Runs per point: ``--runs`` (2; ``--quick`` 1), interleaved; a client count whose best run had
``other_cpu_fraction`` > ``OTHER_LOAD_RETRY`` (0.10) gets one more run (``run`` = runs + 1). ``best`` marks the
highest TPS (other load only ever slows a run down).
- ``fixes``: ``{design`` (text), ``before`` / ``mlpt64: {description, max_locks_per_transaction, footprints:
  NAME -> FOOTPRINT}``, ``drop5: {description, max_locks_per_transaction, dropped: [{index, definition, reason}],
  orders_idx_scan_before`` (index -> pg_stat_user_indexes ``idx_scan`` over all of step 1 on the base server),
  ``footprints}``, ``comparison: [{statement, clients, fix, step1_base_tps`` (step 1's best, for reference),
  ``before_tps, after_tps, tps_ratio`` (after / before), ``before_lockmanager_share, after_lockmanager_share,
  before_cpu_us_per_txn, after_cpu_us_per_txn`` (machine-wide ``cpu_us_per_transaction``),
  ``before_main_table_locks, after_main_table_locks}]}`` (best runs of ``before`` and of the fix).
- ``calibration``: the ``lockscope/calibration/v2`` JSON of this machine's ``lab ceiling`` run (also
  ``calibration.json``), ``ceiling_profile`` (``full``/``quick``), or null when skipped.

``--reforecast POINTS_JSON [--calibration FILE]`` measures nothing: it forecasts every best point with this
checkout's model (:func:`lockscope.forecast.model.forecast` over the recorded footprints: one transaction class per
statement; the mix as its components weighted by that point's pg_stat_statements calls), the calibration
``calibration.json`` beside the points unless given, and writes ``reforecast.json`` beside them: ``rows``:
``[{statement, setting, clients, measured_tps, forecast_tps, ratio`` (forecast / measured),
``measured_lockmanager_share, forecast_lockmanager_share, measured_cpu_us_per_txn`` (machine-wide, as the
calibration measures it), ``forecast_cpu_us_per_txn, binding}]``.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import math
import os
import platform
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg

from lockscope.catalog import database_facts, relation_facts
from lockscope.db import connect, run_script
from lockscope.footprint import Footprint, measure_footprint
from lockscope.forecast.calibration import DEFAULT_CALIBRATION, Calibration, load_calibration
from lockscope.forecast.live import LivePoint
from lockscope.forecast.model import TransactionClass, forecast, forecast_curve, idle_round_trip_s, workload_demands
from lockscope.lab.load import (
    LoadFigures,
    MachineCounters,
    StatementFigures,
    install_pg_stat_statements,
    measure_load,
)
from lockscope.pgbench import run_pgbench
from lockscope.server import ScratchServer, ScratchSettings
from lockscope.shapes import shape_from_footprint

SCHEMA_ID = "lockscope/forecast-real/v1"
LOAD_LOCK = Path("/tmp/lockscope-load.lock")
ROOT = Path(__file__).resolve().parent.parent
CLIENTS_FULL = (1, 2, 4, 8, 16, 32)
CLIENTS_QUICK = (1, 4, 16)
FIX_STATEMENTS = ("join2", "join3")
FIX_CLIENTS = (8, 16)
BASE_MLPT = 16
#: A point is run once more when other processes took more than this fraction of the cores in its best run.
OTHER_LOAD_RETRY = 0.10
FIX_MLPT = 64
SETTINGS_SHOWN = ("server_version", "max_locks_per_transaction", "max_connections", "shared_buffers", "fsync",
                  "synchronous_commit", "full_page_writes", "pg_stat_statements.track_planning", "compute_query_id",
                  "max_parallel_workers_per_gather", "plan_cache_mode", "jit", "work_mem", "autovacuum")

SCHEMA = """\
-- forecast_real: the "app" schema (deterministic data)
create table customers (
  id bigint primary key, email text not null, name text not null, country char(2) not null, city text not null,
  created_at timestamptz not null, status smallint not null, segment text not null, phone text,
  last_login timestamptz, credit_limit numeric(12, 2) not null default 0);
create unique index customers_email_key on customers (email);
create index customers_country_idx on customers (country);
create index customers_city_idx on customers (city);
create index customers_created_at_idx on customers (created_at);
create index customers_status_idx on customers (status);
create index customers_segment_idx on customers (segment);
create index customers_phone_idx on customers (phone);
create index customers_last_login_idx on customers (last_login);
insert into customers
select g, 'c' || g || '@example.com', 'customer ' || g,
       (array['DE','FR','US','GB','NL','ES','IT','PL'])[1 + g % 8], 'city ' || (g % 300),
       timestamptz '2020-01-01' + (g % 1500) * interval '1 day', (g % 4)::smallint,
       (array['retail','smb','enterprise'])[1 + g % 3], '+49' || (100000000 + g * 7),
       timestamptz '2025-01-01' + (g % 700) * interval '1 hour', (g % 50) * 100
from generate_series(1, 5000) g;

create table items (
  id bigint primary key, sku text not null, name text not null, category int not null, brand text not null,
  supplier_id int not null, price numeric(10, 2) not null, created_at timestamptz not null,
  updated_at timestamptz not null, status smallint not null, description text);
create unique index items_sku_key on items (sku);
create index items_name_idx on items (name);
create index items_category_idx on items (category);
create index items_brand_idx on items (brand);
create index items_supplier_id_idx on items (supplier_id);
create index items_price_idx on items (price);
create index items_created_at_idx on items (created_at);
create index items_updated_at_idx on items (updated_at);
create index items_status_idx on items (status);
create index items_category_price_idx on items (category, price);
insert into items
select g, 'SKU-' || lpad(g::text, 6, '0'), 'item ' || g, g % 200, 'brand ' || (g % 150), g % 400,
       1 + (g * 37 % 50000) / 100.0, timestamptz '2019-01-01' + (g % 2000) * interval '1 day',
       timestamptz '2024-01-01' + (g % 500) * interval '1 hour', (g % 3)::smallint, repeat('d', 40)
from generate_series(1, 20000) g;

create table orders (
  id bigint primary key, customer_id bigint not null references customers (id),
  item_id bigint not null references items (id), status text not null, created_at timestamptz not null,
  updated_at timestamptz not null, shipped_at timestamptz, currency char(3) not null, channel text not null,
  warehouse_id int not null, sales_rep_id int, region text not null, external_ref text not null,
  coupon_code text, amount numeric(12, 2) not null, quantity int not null, note text)
  with (fillfactor = 90);
create index orders_customer_id_idx on orders (customer_id);
create index orders_customer_id_created_at_idx on orders (customer_id, created_at);
create index orders_item_id_idx on orders (item_id);
create index orders_status_idx on orders (status);
create index orders_status_created_at_idx on orders (status, created_at);
create index orders_created_at_idx on orders (created_at);
create index orders_updated_at_idx on orders (updated_at);
create index orders_shipped_at_idx on orders (shipped_at);
create index orders_currency_idx on orders (currency);
create index orders_channel_idx on orders (channel);
create index orders_warehouse_id_idx on orders (warehouse_id);
create index orders_sales_rep_id_idx on orders (sales_rep_id);
create index orders_region_idx on orders (region);
create unique index orders_external_ref_key on orders (external_ref);
create index orders_coupon_code_idx on orders (coupon_code);
insert into orders
select g, 1 + (g * 7919) % 5000, 1 + (g::bigint * 104729) % 20000,
       (array['new','paid','shipped','delivered','cancelled'])[1 + g % 5],
       timestamptz '2024-01-01' + g * interval '10 minutes', timestamptz '2024-01-01' + g * interval '11 minutes',
       case when g % 5 >= 2 then timestamptz '2024-01-02' + g * interval '10 minutes' end,
       (array['EUR','USD','GBP'])[1 + g % 3], (array['web','app','store','phone'])[1 + g % 4], g % 12,
       case when g % 3 = 0 then g % 80 end, (array['north','south','east','west'])[1 + g % 4],
       'EXT-' || g, case when g % 10 = 0 then 'CPN' || (g % 97) end, 1 + (g * 53 % 100000) / 100.0,
       1 + g % 5, 'order note ' || g
from generate_series(1, 50000) g;

create table events (
  id bigint not null, day date not null, ts timestamptz not null, kind smallint not null, account_id int not null,
  value numeric(10, 2) not null, payload text) partition by range (day);
do $$
begin
  for i in 0..31 loop
    execute format('create table events_%s partition of events for values from (%L) to (%L)',
                   to_char(date '2025-01-01' + i, 'YYYYMMDD'), date '2025-01-01' + i, date '2025-01-01' + i + 1);
  end loop;
end $$;
create index events_account_id_idx on events (account_id);
create index events_ts_idx on events (ts);
insert into events
select g, date '2025-01-01' + (g % 32), timestamptz '2025-01-01' + (g % 32) * interval '1 day'
         + (g % 86400) * interval '1 second', (g % 8)::smallint, 1 + (g * 31) % 1000, (g % 1000) / 10.0,
       'payload ' || g
from generate_series(1, 100000) g;

vacuum analyze;
"""


@dataclass(frozen=True)
class Statement:
    """One scenario statement.

    :ivar name: short name (``join2``).
    :ivar sql: the statement with ``$n`` parameters (footprint, EXPLAIN).
    :ivar sets: pgbench ``\\set`` lines, ``(variable, low, high)``: ``$1`` is the first variable, etc.
    :ivar params: the parameter values of the recorded footprint.
    :ivar dml: changes rows (EXPLAIN ANALYZE inside a rolled-back transaction).
    """

    name: str
    sql: str
    sets: tuple[tuple[str, int, int], ...]
    params: tuple[str, ...]
    dml: bool = False

    def script(self) -> str:
        """The pgbench script: ``\\set`` lines, then the statement with ``:variable`` for ``$n``."""
        text = self.sql
        for i, (var, _, _) in reversed(list(enumerate(self.sets, 1))):
            text = text.replace(f"${i}", f":{var}")
        return "".join(f"\\set {v} random({lo}, {hi})\n" for v, lo, hi in self.sets) + text + ";\n"

    def random_params(self, rng: random.Random) -> list[str]:
        """Values from the script's ``\\set`` ranges."""
        return [str(rng.randint(lo, hi)) for _, lo, hi in self.sets]

    def bound(self, params: Sequence[str]) -> str:
        """The statement with its (integer) parameters inlined as literals."""
        text = self.sql
        for i in range(len(params), 0, -1):
            text = text.replace(f"${i}", str(int(params[i - 1])))
        return text


def _tagged(name: str, sql: str) -> str:
    """``sql`` with ``/* fcbench:NAME */`` after its first keyword."""
    first, rest = sql.split(" ", 1)
    return f"{first} /* fcbench:{name} */ {rest}"


STATEMENTS: dict[str, Statement] = {s.name: s for s in (
    Statement("join2", _tagged("join2", "select o.id, o.status, o.amount, o.created_at, c.name, c.email, c.country "
                                        "from orders o join customers c on c.id = o.customer_id where o.id = $1"),
              (("id", 1, 50000),), ("4242",)),
    Statement("join3", _tagged("join3", "select o.id, o.status, o.amount, c.name, c.email, i.sku, i.name, i.price "
                                        "from orders o join customers c on c.id = o.customer_id "
                                        "join items i on i.id = o.item_id where o.id = $1"),
              (("id", 1, 50000),), ("4242",)),
    Statement("count50k", _tagged("count50k", "select count(*) from orders where amount >= $1"),
              (("lo", 1, 1000),), ("500",)),
    Statement("pk9", _tagged("pk9", "select * from customers where id = $1"), (("id", 1, 5000),), ("42",)),
    Statement("agg_part", _tagged("agg_part", "select kind, count(*), sum(value) from events where account_id = $1 "
                                              "group by kind"),
              (("a", 1, 1000),), ("42",)),
    Statement("agg_part_pruned", _tagged("agg_part_pruned", "select kind, count(*), sum(value) from events "
                                                            "where day = date '2025-01-01' + cast($1 as int) "
                                                            "and account_id = $2 group by kind"),
              (("d", 0, 31), ("a", 1, 1000)), ("7", "42")),
    Statement("update_ret", _tagged("update_ret", "update orders set amount = amount + 1, note = 'updated' "
                                                  "where id = $1 returning id, amount, status"),
              (("id", 1, 50000),), ("4242",), dml=True),
)}
MIX = {"join2": 5, "pk9": 3, "update_ret": 2}
ALL_NAMES = (*STATEMENTS, "mix")
#: The fix "drop5": 5 of the 16 orders indexes, none used by any scenario statement (idx_scan is recorded).
DROPPED_INDEXES = {
    "orders_customer_id_idx": "redundant: the leading column of orders_customer_id_created_at_idx",
    "orders_status_idx": "redundant: the leading column of orders_status_created_at_idx",
    "orders_currency_idx": "3 distinct values (a third of the table each): never chosen by the planner",
    "orders_channel_idx": "4 distinct values (a quarter of the table each): never chosen by the planner",
    "orders_region_idx": "4 distinct values (a quarter of the table each): never chosen by the planner",
}


# -- load lock and process CPU ---------------------------------------------------------------------------------------
@contextlib.contextmanager
def load_lock() -> Iterator[None]:
    """The machine's load lock (``/tmp/lockscope-load.lock``, exclusive flock) for one load run."""
    with open(LOAD_LOCK, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _children(postmaster: int) -> Iterator[tuple[int, float, str]]:
    """(pid, CPU seconds, command line) of each live child of the postmaster."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, ValueError, IndexError):
            cpu, _, ppid = _proc_times(int(entry.name))
            if ppid == postmaster:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                yield int(entry.name), cpu, cmdline


def wait_no_clients(postmaster: int, timeout_s: float = 5.0) -> None:
    """Wait until no client backend of the server is alive (their process titles hold ``[local]``), so that the
    CPU of an earlier run's backends, reaped late, does not land in the next window."""
    end = time.monotonic() + timeout_s
    while time.monotonic() < end and any("[local]" in cmd for _, _, cmd in _children(postmaster)):
        time.sleep(0.02)


def _proc_times(pid: int) -> tuple[float, float, int]:
    """(utime + stime, cutime + cstime, ppid) of a process in seconds (``/proc/PID/stat``)."""
    text = Path(f"/proc/{pid}/stat").read_text()
    fields = text[text.rindex(")") + 2:].split()
    tick = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / tick, (int(fields[13]) + int(fields[14])) / tick, int(fields[1])


def server_cpu_s(postmaster: int) -> float:
    """CPU seconds of the server: the postmaster's own and its reaped children's (exited backends), plus its live
    children's."""
    own, reaped, _ = _proc_times(postmaster)
    return own + reaped + sum(cpu for _, cpu, _ in _children(postmaster))


def _rusage_s(who: int) -> float:
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime


def postmaster_pid(server: ScratchServer) -> int:
    return int((server.data_dir / "postmaster.pid").read_text().split()[0])


# -- footprints and EXPLAIN ------------------------------------------------------------------------------------------
def footprint_record(conninfo: str, st: Statement) -> dict[str, Any]:
    """FOOTPRINT of the module docstring, measured now."""
    with connect(conninfo) as session:
        db, _ = database_facts(session)
        fp: Footprint = measure_footprint(session, st.sql, params=st.params)
        oids = [lk.relation_oid for e in fp.executions for lk in e.locks]
        shared = frozenset(o for o, (s, _) in relation_facts(session, oids).items() if s)
    shape = shape_from_footprint(fp, db, shared, name=st.name)
    e = fp.executions[-1]
    load = e.partition_load
    return {
        "max_locks_per_transaction": fp.capacity.max_locks_per_transaction,
        "fast_path_slots": fp.capacity.slots, "fast_path_groups": fp.capacity.groups,
        "locks": e.lock_count, "fast_path_locks": e.fastpath_count, "main_table_locks": e.main_table_count,
        "partition_load": list(load), "partitions_touched": sum(1 for n in load if n),
        "planned_relations": shape.planned_relations, "plans": shape.plans, "database_oid": db,
        "relations": [{"order": lk.order, "relation": lk.relation, "relation_oid": lk.relation_oid,
                       "role": lk.role, "mode": lk.mode, "fastpath": lk.fastpath, "lock_partition": lk.lock_partition}
                      for lk in sorted(e.locks, key=lambda lk: lk.order)],
    }


def _spread(values: Sequence[float]) -> dict[str, Any]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values),
            "values": [round(v, 4) for v in values]}


def explain_record(conninfo: str, st: Statement, repeats: int) -> dict[str, Any]:
    """Single-client EXPLAIN timings: one connection, the parameters inlined as literals (planned with the values,
    as pgbench -M simple sends them), two unrecorded runs first to fill the connection's caches."""
    rng = random.Random(20261124)
    plan_a: list[float] = []
    exec_a: list[float] = []
    plan_only: list[float] = []
    with psycopg.connect(conninfo, autocommit=True) as conn:

        def explain(options: str, params: Sequence[str]) -> list[Any]:
            if st.dml:
                conn.execute("begin")
            try:
                return [r[0] for r in conn.execute(f"explain ({options}) {st.bound(params)}").fetchall()]
            finally:
                if st.dml:
                    conn.execute("rollback")

        for i in range(repeats + 2):
            params = st.random_params(rng)
            # as lockscope times a statement on a scratch server (db.time_on_scratch): no per-node timing
            doc: dict[str, Any] = explain("analyze, timing off, summary, format json", params)[0][0]
            plan = explain("summary, format json", params)[0][0]
            if i >= 2:
                plan_a.append(float(doc["Planning Time"]))
                exec_a.append(float(doc["Execution Time"]))
                plan_only.append(float(plan["Planning Time"]))
        text = [str(line) for line in explain("analyze, summary", st.params)]
    return {"repeats": repeats, "analyze_planning_ms": _spread(plan_a), "analyze_execution_ms": _spread(exec_a),
            "plan_only_planning_ms": _spread(plan_only), "plan": text}


# -- points ----------------------------------------------------------------------------------------------------------
def _nan_to_none(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _nan_to_none(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_nan_to_none(v) for v in value]
    return value


def statement_name(query: str) -> str | None:
    """Our statement's name from the ``fcbench:NAME`` tag in a pg_stat_statements text."""
    match = re.search(r"/\* fcbench:([a-z0-9_]+) \*/", query)
    return match.group(1) if match else None


def _statement_row(s: StatementFigures) -> dict[str, Any]:
    total = sum(s.waits.values())
    return {"name": statement_name(s.query), "queryid": s.queryid, "calls": s.calls,
            "plans": s.plans, "mean_plan_ms": s.mean_plan_ms, "mean_exec_ms": s.mean_exec_ms, "rows": s.rows,
            "shared_blks_hit": s.shared_blks_hit, "shared_blks_read": s.shared_blks_read, "waits": s.waits,
            "lockmanager_share": s.waits.get("LWLock:LockManager", 0) / total if total else None,
            "client_backends": s.client_backends}


def point_record(load: LoadFigures, cpu: dict[str, float]) -> dict[str, Any]:
    """The measured figures of one run (the POINT fields after ``load_avg_1m``)."""
    tx = load.transactions
    return {
        "tps": load.tps, "latency_ms": load.latency_ms, "transactions": tx, "failed": load.failed,
        "samples": load.samples, "active_session_samples": load.active_session_samples, "aas": load.aas,
        "aas_by_class": load.aas_by_class, "waits": load.waits, "lockmanager_share": load.lockmanager_share,
        "cpu_share": load.cpu_share, "client_backends": load.client_backends,
        "cpu_busy_fraction": load.cpu_busy_fraction, "cpu_us_per_transaction": load.cpu_us_per_transaction,
        "context_switches_per_transaction": load.context_switches_per_transaction,
        "process_cpu_us_per_transaction": {k: v / tx * 1e6 if tx else math.nan for k, v in cpu.items()},
        "mean_plan_ms": load.mean_plan_ms, "mean_exec_ms": load.mean_exec_ms,
        "statements": [_statement_row(s) for s in load.statements],
    }


@dataclass
class Run:
    """What the measurement loop needs: the server, the output, the profile."""

    server: ScratchServer
    out: Path
    clients: tuple[int, ...]
    runs: int
    duration_s: float
    warmup_s: float
    explain_repeats: int
    say: Callable[[str], None]
    doc: dict[str, Any] = field(default_factory=dict)

    def script_args(self, name: str) -> list[str]:
        """pgbench ``-f`` arguments of a statement or the mix (files in OUT/scripts)."""
        scripts = self.out / "scripts"
        if name == "mix":
            return [a for part, w in MIX.items() for a in ("-f", f"{scripts / (part + '.sql')}@{w}")]
        return ["-f", str(scripts / f"{name}.sql")]

    def warm_up(self, name: str, server: ScratchServer | None = None) -> None:
        if self.warmup_s >= 1:
            with load_lock():
                run_pgbench(server or self.server, clients=2, duration_s=self.warmup_s, select_only=False,
                            extra_args=self.script_args(name))

    def point(self, name: str, setting: str, clients: int, run: int,
              server: ScratchServer | None = None) -> dict[str, Any]:
        """One pgbench run with its figures (under the load lock), on ``server`` (default the base server)."""
        server = server or self.server
        postmaster = postmaster_pid(server)
        with load_lock():
            wait_no_clients(postmaster)
            load_avg = os.getloadavg()[0]
            m0, w0 = MachineCounters.read(), time.monotonic()
            before = (server_cpu_s(postmaster), _rusage_s(resource.RUSAGE_CHILDREN), _rusage_s(resource.RUSAGE_SELF))
            load = measure_load(server, clients=clients, duration_s=self.duration_s, sample_hz=10.0,
                                extra_args=self.script_args(name),
                                statement_filter=lambda s: statement_name(s.query) is not None)
            wait_no_clients(postmaster)
            after = (server_cpu_s(postmaster), _rusage_s(resource.RUSAGE_CHILDREN), _rusage_s(resource.RUSAGE_SELF))
            m1, w1 = MachineCounters.read(), time.monotonic()
        cpu = {"server": after[0] - before[0], "pgbench": after[1] - before[1], "harness": after[2] - before[2]}
        cpu["total"] = sum(cpu.values())
        for s in load.statements:  # the normalised text, once per statement
            n = statement_name(s.query)
            if n in self.doc["statements"]:
                self.doc["statements"][n].setdefault("pgss_query", s.query)
        other = math.nan
        if m0 is not None and m1 is not None:
            other = max(0.0, (m1.busy_s - m0.busy_s) - cpu["total"]) / ((os.cpu_count() or 1) * (w1 - w0))
        rec = {"statement": name, "setting": setting,
               "max_locks_per_transaction": server.settings.max_locks_per_transaction, "clients": clients,
               "run": run, "best": False, "duration_s": self.duration_s, "load_avg_1m": load_avg,
               "other_cpu_fraction": other, **point_record(load, cpu)}
        own = rec["process_cpu_us_per_transaction"]["total"]
        self.say(f"{name} [{setting}] c={clients} run {run}: {load.tps:,.0f} TPS, LockManager "
                 f"{load.lockmanager_share:.0%}, CPU busy {load.cpu_busy_fraction:.0%}, "
                 f"{load.cpu_us_per_transaction:.0f} µs/txn (own processes {own:.0f}), other load {other:.0%}")
        return rec

    def points(self, name: str, setting: str, clients: Sequence[int]) -> list[dict[str, Any]]:
        """Every run at every client count (runs interleaved), the best run of each marked; one more run of a
        client count whose best run saw other processes take more than OTHER_LOAD_RETRY of the cores."""
        return self.interleaved(name, {setting: self.server}, clients)

    def interleaved(self, name: str, servers: dict[str, ScratchServer],
                    clients: Sequence[int]) -> list[dict[str, Any]]:
        """:meth:`points` over several servers (setting -> server), interleaved: each run goes over every client
        count and, within it, over every server, so that paired points see the same machine."""
        out = [self.point(name, setting, c, r, server) for r in range(1, self.runs + 1) for c in clients
               for setting, server in servers.items()]

        def best(setting: str, c: int) -> dict[str, Any]:
            return max((p for p in out if p["clients"] == c and p["setting"] == setting),
                       key=lambda p: p["tps"] if math.isfinite(p["tps"]) else -1.0)

        for c in clients:
            for setting, server in servers.items():
                other = best(setting, c)["other_cpu_fraction"]
                if other is not None and other > OTHER_LOAD_RETRY:
                    self.say(f"{name} [{setting}] c={c}: other processes took {other:.0%} of the cores in the best "
                             "run: one more run")
                    out.append(self.point(name, setting, c, self.runs + 1, server))
                best(setting, c)["best"] = True
        return out

    def save(self) -> None:
        """points.json: indented, one point a line."""
        doc = _nan_to_none(self.doc)
        text = json.dumps({k: v for k, v in doc.items() if k != "points"}, indent=1, ensure_ascii=False)
        points = ",\n".join("  " + json.dumps(p, separators=(",", ":"), ensure_ascii=False) for p in doc["points"])
        (self.out / "points.json").write_text(text[:-2] + ',\n "points": [\n' + points + "\n ]\n}\n")


def server_settings(conninfo: str) -> dict[str, str]:
    with psycopg.connect(conninfo, autocommit=True) as conn:
        rows = conn.execute("select name, current_setting(name) from pg_settings where name = any(%s)",
                            [list(SETTINGS_SHOWN)]).fetchall()
        return {str(n): str(v) for n, v in rows}


def index_scans(conninfo: str, table: str) -> dict[str, int]:
    with psycopg.connect(conninfo, autocommit=True) as conn:
        rows = conn.execute("select indexrelname, idx_scan from pg_stat_user_indexes where relname = %s "
                            "order by indexrelname", [table]).fetchall()
        return {str(n): int(s) for n, s in rows}


def measure_statements(r: Run, names: Sequence[str]) -> None:
    """Step 1: footprint, EXPLAIN timings, warm-up and points of each statement on the base server."""
    conninfo = r.server.conninfo()
    for name in names:
        if name == "mix":
            r.doc["statements"][name] = {"sql": None, "params": None, "script": " ".join(
                f"-f {p}.sql@{w}" for p, w in MIX.items()), "dml": True, "weights": MIX, "footprint": None,
                "explain": None,
                "components": {p: footprint_record(conninfo, STATEMENTS[p]) for p in MIX}}
        else:
            st = STATEMENTS[name]
            r.say(f"{name}: footprint and EXPLAIN timings")
            rec: dict[str, Any] = {"sql": st.sql, "params": list(st.params), "script": f"{name}.sql", "dml": st.dml,
                                   "weights": None, "footprint": footprint_record(conninfo, st)}
            with load_lock():
                rec["explain"] = explain_record(conninfo, st, r.explain_repeats)
            r.doc["statements"][name] = rec
        r.warm_up(name)
        r.doc["points"] += r.points(name, "base", r.clients)
        r.save()


def fix_server(mlpt: int, drop: Sequence[str] = ()) -> ScratchServer:
    """A fresh scratch server with the base settings but ``mlpt``, the schema, pg_stat_statements and ``drop``
    (indexes) dropped; the caller stops it."""
    server = ScratchServer(None, ScratchSettings(max_locks_per_transaction=mlpt,
                                                 extra={"max_parallel_workers_per_gather": "0"})).start()
    try:
        run_script(server.conninfo(), SCHEMA)
        install_pg_stat_statements(server)
        if drop:
            run_script(server.conninfo(), "".join(f"drop index {ix};\n" for ix in drop) + "vacuum analyze orders;\n")
    except BaseException:
        server.stop()
        raise
    return server


def measure_fixes(r: Run, names: Sequence[str]) -> None:
    """Step 2: the fixes for join2/join3 at FIX_CLIENTS, each on a fresh server built like the base one, with a
    fresh unfixed server as the paired "before"; runs interleaved over the three servers."""
    names = [n for n in FIX_STATEMENTS if n in names]
    if not names:
        return
    scans = index_scans(r.server.conninfo(), "orders")  # every run of step 1, all statements
    defs: dict[str, str] = {}
    with psycopg.connect(r.server.conninfo(), autocommit=True) as conn:
        defs = {str(n): str(d) for n, d in conn.execute(
            "select indexname, indexdef from pg_indexes where tablename = 'orders'").fetchall()}
    r.say(f"fixes: fresh servers: before (mlpt {BASE_MLPT}), mlpt{FIX_MLPT}, drop5 ({', '.join(DROPPED_INDEXES)})")
    with contextlib.ExitStack() as stack:
        servers = {"before": stack.enter_context(fix_server(BASE_MLPT)),
                   "mlpt64": stack.enter_context(fix_server(FIX_MLPT)),
                   "drop5": stack.enter_context(fix_server(BASE_MLPT, tuple(DROPPED_INDEXES)))}
        footprints = {k: {n: footprint_record(srv.conninfo(), STATEMENTS[n]) for n in names}
                      for k, srv in servers.items()}
        r.doc["fixes"] = {
            "design": "three fresh servers with the base schema and settings, built one after the other: 'before' "
                      f"(unchanged: max_locks_per_transaction {BASE_MLPT}, all 16 orders indexes), 'mlpt64' and "
                      "'drop5'; per statement one warm-up on each, then every run goes over FIX_CLIENTS and, within "
                      "each client count, over the three servers (paired points under the same machine load)",
            "before": {"description": f"unchanged (max_locks_per_transaction {BASE_MLPT}, 16 orders indexes)",
                       "max_locks_per_transaction": BASE_MLPT, "footprints": footprints["before"]},
            "mlpt64": {"description": f"max_locks_per_transaction {BASE_MLPT} -> {FIX_MLPT} (a server restart in "
                                      f"production: {FIX_MLPT // 16} fast-path groups of 16 slots)",
                       "max_locks_per_transaction": FIX_MLPT, "footprints": footprints["mlpt64"]},
            "drop5": {"description": f"drop 5 of the 16 indexes of orders (max_locks_per_transaction {BASE_MLPT})",
                      "max_locks_per_transaction": BASE_MLPT,
                      "dropped": [{"index": ix, "definition": defs.get(ix, ""), "reason": why}
                                  for ix, why in DROPPED_INDEXES.items()],
                      "orders_idx_scan_before": scans, "footprints": footprints["drop5"]},
        }
        for n in names:
            for srv in servers.values():
                r.warm_up(n, srv)
            r.doc["points"] += r.interleaved(n, servers, FIX_CLIENTS)
            r.save()
    r.doc["fixes"]["comparison"] = compare_fixes(r.doc)


def _best(points: Sequence[dict[str, Any]], name: str, setting: str, clients: int) -> dict[str, Any] | None:
    for p in points:
        if p["statement"] == name and p["setting"] == setting and p["clients"] == clients and p["best"]:
            return p
    return None


def compare_fixes(doc: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for fix in ("mlpt64", "drop5"):
        for name in FIX_STATEMENTS:
            fps = doc["fixes"].get(fix, {}).get("footprints", {})
            for c in FIX_CLIENTS:
                before, after, base = (_best(doc["points"], name, s, c) for s in ("before", fix, "base"))
                if before is None or after is None or name not in fps:
                    continue
                out.append({"statement": name, "clients": c, "fix": fix,
                            "step1_base_tps": base["tps"] if base else None, "before_tps": before["tps"],
                            "after_tps": after["tps"], "tps_ratio": after["tps"] / before["tps"],
                            "before_lockmanager_share": before["lockmanager_share"],
                            "after_lockmanager_share": after["lockmanager_share"],
                            "before_cpu_us_per_txn": before["cpu_us_per_transaction"],
                            "after_cpu_us_per_txn": after["cpu_us_per_transaction"],
                            "before_main_table_locks": doc["fixes"]["before"]["footprints"][name]["main_table_locks"],
                            "after_main_table_locks": fps[name]["main_table_locks"]})
    return out


def run_ceiling(out: Path, profile: str, say: Callable[[str], None]) -> dict[str, Any] | None:
    """``lockscope lab ceiling`` (under the load lock) into OUT/ceiling; keeps calibration.json and results.json."""
    target = out / "ceiling"
    if target.exists():
        shutil.rmtree(target)
    argv = [str(Path(sys.executable).with_name("lockscope")), "lab", "ceiling", "--out", str(target)]
    if profile == "quick":
        argv.append("--quick")
    say(f"lab ceiling ({profile}): {' '.join(argv[1:])}")
    with load_lock():
        proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        say(f"lab ceiling failed (exit {proc.returncode}): {(proc.stderr or proc.stdout).strip()[-500:]}")
        return None
    for child in target.iterdir():  # plots and the HTML report are not needed for a reforecast
        if child.name not in ("calibration.json", "results.json"):
            shutil.rmtree(child) if child.is_dir() else child.unlink()
    shutil.copy(target / "calibration.json", out / "calibration.json")
    cal: dict[str, Any] = json.loads((target / "calibration.json").read_text())
    return cal


# -- summary ---------------------------------------------------------------------------------------------------------
def _f(value: Any, fmt: str) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "–"
    return format(value, fmt)


def summary(doc: dict[str, Any]) -> str:
    """Markdown: the best run per statement and clients, the fixes, the lock counts."""
    lines = ["| statement | setting | clients | TPS (runs) | LockManager | CPU busy | CPU µs/txn (own procs) | "
             "plan ms | exec ms | AAS | top wait |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    points = doc["points"]
    settings = ("base", "before", "mlpt64", "drop5")
    order = {n: i for i, n in enumerate(ALL_NAMES)}
    for p in sorted(points, key=lambda p: (settings.index(p["setting"]) if p["setting"] in settings else 9,
                                           order.get(p["statement"], 99), p["clients"])):
        if not p["best"]:
            continue
        runs = [q["tps"] for q in points if q["statement"] == p["statement"] and q["setting"] == p["setting"]
                and q["clients"] == p["clients"]]
        waits = {k: v for k, v in p["waits"].items() if k != "CPU"}
        top = max(waits.items(), key=lambda kv: kv[1]) if waits else None
        top_text = f"{top[0]} {top[1] / p['active_session_samples']:.0%}" if top else "–"
        own = p["process_cpu_us_per_transaction"]["total"]
        lines.append(
            f"| {p['statement']} | {p['setting']} | {p['clients']} | {_f(p['tps'], ',.0f')} "
            f"({' / '.join(_f(t, ',.0f') for t in runs)}) | {_f(p['lockmanager_share'], '.0%')} | "
            f"{_f(p['cpu_busy_fraction'], '.0%')} | {_f(p['cpu_us_per_transaction'], '.0f')} ({_f(own, '.0f')}) | "
            f"{_f(p['mean_plan_ms'], '.3f')} | {_f(p['mean_exec_ms'], '.3f')} | {_f(p['aas'], '.2f')} | {top_text} |")
    lines += ["", "| statement | locks | fast-path | main table | partitions touched | EXPLAIN ANALYZE plan / exec ms "
              "(median) | EXPLAIN plan ms |", "|---|---:|---:|---:|---:|---:|---:|"]
    for name, st in doc["statements"].items():
        fp, ex = st["footprint"], st["explain"]
        if fp is None:
            lines.append(f"| {name} | {st['script']} | | | | | |")
            continue
        lines.append(f"| {name} | {fp['locks']} | {fp['fast_path_locks']} | {fp['main_table_locks']} | "
                     f"{fp['partitions_touched']} | {ex['analyze_planning_ms']['median']:.3f} / "
                     f"{ex['analyze_execution_ms']['median']:.3f} | {ex['plan_only_planning_ms']['median']:.3f} |")
    comparison = (doc.get("fixes") or {}).get("comparison", [])
    if comparison:
        lines += ["", "| fix | statement | clients | main-table locks | TPS before → after | ratio | LockManager "
                  "before → after | CPU µs/txn before → after | step-1 base TPS |",
                  "|---|---|---:|---|---|---:|---|---|---:|"]
        for c in comparison:
            lines.append(f"| {c['fix']} | {c['statement']} | {c['clients']} | {c['before_main_table_locks']} → "
                         f"{c['after_main_table_locks']} | {_f(c['before_tps'], ',.0f')} → "
                         f"{_f(c['after_tps'], ',.0f')} | {_f(c['tps_ratio'], '.2f')} | "
                         f"{_f(c['before_lockmanager_share'], '.0%')} → "
                         f"{_f(c['after_lockmanager_share'], '.0%')} | {_f(c['before_cpu_us_per_txn'], '.0f')} → "
                         f"{_f(c['after_cpu_us_per_txn'], '.0f')} | {_f(c['step1_base_tps'], ',.0f')} |")
    return "\n".join(lines)


# -- reforecast ------------------------------------------------------------------------------------------------------
def _class(name: str, fp: dict[str, Any], calls: float = 1.0, own_s: float | None = None,
           own_at: tuple[int, int, int, int] | None = None) -> TransactionClass:
    return TransactionClass(name, int(fp["fast_path_locks"]), tuple(int(n) for n in fp["partition_load"]), calls,
                            int(fp["planned_relations"]), bool(fp["plans"]), executor_relations=1, own_s=own_s,
                            own_at=own_at)


def _at(fp: dict[str, Any]) -> tuple[int, int, int, int]:
    return int(fp["locks"]), int(fp["planned_relations"]), int(fp["main_table_locks"]), 1


def _footprint_at(doc: dict[str, Any], name: str, setting: str) -> dict[str, Any]:
    if setting in ("base", "before"):
        fp: dict[str, Any] = doc["statements"][name]["footprint"]
    else:
        fp = doc["fixes"][setting]["footprints"][name]
    return fp


def _explain_own(doc: dict[str, Any], name: str, cal: Calibration) -> float:
    """The statement's own time as ``lockscope forecast --scratch`` finds it: the planning of a plain EXPLAIN
    (what the engine times, warm runs' median) and the execution of EXPLAIN ANALYZE, medians on the scratch server,
    made steady-state (``OwnCost.steady``)."""
    ex = doc["statements"][name]["explain"]
    planning = ex.get("plan_only_planning_ms") or ex["analyze_planning_ms"]
    plan = max(0.0, planning["median"] / 1000.0 - cal.explain_plan_extra_s)
    execution = max(0.0, ex["analyze_execution_ms"]["median"] / 1000.0 - cal.explain_exec_extra_s)
    return plan + execution


def _statement_classes(doc: dict[str, Any], p: dict[str, Any], cal: Calibration) -> list[TransactionClass]:
    """Statement mode: each statement's footprint at the point's setting with its own cost measured on its base
    footprint (a fix moves it by the calibrated per-lock figures)."""
    name, setting = p["statement"], p["setting"]
    if name == "mix":
        calls = {s["name"]: s["calls"] for s in p["statements"] if s["name"]}
        mix = doc["statements"]["mix"]
        fps = mix.get("components") or {n: doc["statements"][n]["footprint"] for n in mix["weights"]}
        return [_class(n, fps[n], calls.get(n) or w, _explain_own(doc, n, cal),
                       _at(doc["statements"][n]["footprint"])) for n, w in mix["weights"].items()]
    return [_class(name, _footprint_at(doc, name, setting), 1.0, _explain_own(doc, name, cal),
                   _at(doc["statements"][name]["footprint"]))]


def _live(p: dict[str, Any], cores: int) -> LivePoint:
    rate = float(p["tps"])
    # the population as lockscope counts it (pg_stat_activity.state_change over the interval): pgbench's clients
    return LivePoint(rate, int(p["clients"]), "client backends that ran statements", float(p["aas"]),
                     float(p["aas_by_class"].get("CPU", 0.0)), float(p["lockmanager_share"]), int(p["samples"]))


def _workload_classes(doc: dict[str, Any], p: dict[str, Any], cal: Calibration,
                      deflate: float) -> list[TransactionClass]:
    """Workload mode: each statement's pg_stat_statements means over the point, deflated to CPU."""
    out = []
    for st in p["statements"]:
        if not st["name"] or not st["calls"]:
            continue
        fp = _footprint_at(doc, st["name"], p["setting"]) if st["name"] in doc["statements"] else None
        if fp is None:
            continue
        plan = st["mean_plan_ms"] if st.get("mean_plan_ms") is not None and math.isfinite(st["mean_plan_ms"]) else 0
        own = (plan + st["mean_exec_ms"]) * deflate / 1000.0
        out.append(_class(st["name"], fp, float(st["calls"]), own, _at(fp)))
    return out


def reforecast(doc: dict[str, Any], cal: Calibration) -> list[dict[str, Any]]:
    """The model over every best point of a points.json (no measurement), two ways:

    - **statement**: what ``lockscope forecast SQL --scratch --setup`` says at the point's clients: the footprint,
      the own cost from the recorded EXPLAIN ANALYZE medians, no think time;
    - **workload** ("model vs now"): what ``lockscope forecast`` on the live server solves first at the measured
      operating point: pg_stat_statements times of that point deflated to CPU, the population = the client
      backends that ran statements, the think time by Little's law; before any re-anchoring.
    """
    out = []
    cores = int(doc["machine"]["cores"])
    for p in doc["points"]:
        if not p["best"]:
            continue
        f = forecast(workload_demands(_statement_classes(doc, p, cal), cal), cores, int(p["clients"]))
        live = _live(p, cores)
        w_classes = _workload_classes(doc, p, cal, live.cpu_deflation(cores))
        think = live.think_s(cores, idle_round_trip_s(cal, max(1, live.population), cores))
        w = forecast_curve(workload_demands(w_classes, cal), cores, [max(1, live.population)],
                           think_s=think)[0] if w_classes else None
        out.append({"statement": p["statement"], "setting": p["setting"], "clients": p["clients"],
                    "measured_tps": p["tps"], "forecast_tps": f.throughput_tps, "ratio": f.throughput_tps / p["tps"],
                    "measured_lockmanager_share": p["lockmanager_share"],
                    "forecast_lockmanager_share": f.lockmanager_share,
                    "measured_cpu_us_per_txn": p["cpu_us_per_transaction"],
                    "forecast_cpu_us_per_txn": f.cpu_per_transaction_us, "binding": f.binding_resource,
                    "population": live.population, "think_ms": think * 1000.0,
                    "workload_tps": w.throughput_tps if w else None,
                    "workload_ratio": w.throughput_tps / p["tps"] if w else None,
                    "workload_lockmanager_share": w.lockmanager_share if w else None})
    return out


def fix_gains(doc: dict[str, Any], rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each fix's measured gain (after / before TPS, paired runs) against the forecast's (statement mode, the same
    clients), with the LockManager shares."""
    by = {(r["statement"], r["setting"], r["clients"]): r for r in rows}
    out = []
    for c in (doc.get("fixes") or {}).get("comparison", []):
        before = by.get((c["statement"], "before", c["clients"]))
        after = by.get((c["statement"], c["fix"], c["clients"]))
        if before is None or after is None:
            continue
        out.append({"fix": c["fix"], "statement": c["statement"], "clients": c["clients"],
                    "measured_gain": c["tps_ratio"] - 1.0,
                    "forecast_gain": after["forecast_tps"] / before["forecast_tps"] - 1.0,
                    "measured_lockmanager": (c["before_lockmanager_share"], c["after_lockmanager_share"]),
                    "forecast_lockmanager": (before["forecast_lockmanager_share"],
                                             after["forecast_lockmanager_share"]),
                    "measured_cpu_us": (c["before_cpu_us_per_txn"], c["after_cpu_us_per_txn"]),
                    "forecast_cpu_us": (before["forecast_cpu_us_per_txn"], after["forecast_cpu_us_per_txn"])})
    return out


def reforecast_table(rows: Sequence[dict[str, Any]], gains: Sequence[dict[str, Any]] = ()) -> str:
    lines = ["| statement | setting | clients | measured TPS | statement forecast (ratio) | model vs now: "
             "population, think ms, forecast (ratio) | LockManager measured / statement / workload | CPU µs/txn "
             "measured / forecast | binding (forecast) |",
             "|---|---|---:|---:|---|---|---|---|---|"]
    for r in rows:
        wl = (f"{r['population']}, {r['think_ms']:.2f}, {_f(r['workload_tps'], ',.0f')} "
              f"({_f(r['workload_ratio'], '.2f')})" if r["workload_tps"] is not None else "–")
        lines.append(f"| {r['statement']} | {r['setting']} | {r['clients']} | {_f(r['measured_tps'], ',.0f')} | "
                     f"{_f(r['forecast_tps'], ',.0f')} ({_f(r['ratio'], '.2f')}) | {wl} | "
                     f"{_f(r['measured_lockmanager_share'], '.0%')} / {_f(r['forecast_lockmanager_share'], '.0%')} / "
                     f"{_f(r['workload_lockmanager_share'], '.0%')} | "
                     f"{_f(r['measured_cpu_us_per_txn'], '.0f')} / {_f(r['forecast_cpu_us_per_txn'], '.0f')} | "
                     f"{r['binding']} |")
    if gains:
        lines += ["", "| fix | statement | clients | TPS gain measured / forecast | LockManager measured "
                  "before → after | forecast before → after | CPU µs/txn measured before → after | forecast |",
                  "|---|---|---:|---|---|---|---|---|"]
        for g in gains:
            ml, fl, mc, fc = (g["measured_lockmanager"], g["forecast_lockmanager"], g["measured_cpu_us"],
                              g["forecast_cpu_us"])
            lines.append(f"| {g['fix']} | {g['statement']} | {g['clients']} | {100 * g['measured_gain']:+.0f} % / "
                         f"{100 * g['forecast_gain']:+.0f} % | {_f(ml[0], '.0%')} → {_f(ml[1], '.0%')} | "
                         f"{_f(fl[0], '.0%')} → {_f(fl[1], '.0%')} | {_f(mc[0], '.0f')} → {_f(mc[1], '.0f')} | "
                         f"{_f(fc[0], '.0f')} → {_f(fc[1], '.0f')} |")
    return "\n".join(lines)


def accuracy_summary(rows: Sequence[dict[str, Any]], gains: Sequence[dict[str, Any]]) -> str:
    """The goals of issue 19 over the rows: TPS within 25 %, LockManager share within 10 points, fix gains within
    10 points."""
    def within(values: Sequence[float], tol: float) -> str:
        ok = sum(1 for v in values if abs(v) <= tol)
        return f"{ok} of {len(values)}"
    ratios = [r["ratio"] - 1 for r in rows if r["ratio"] is not None and math.isfinite(r["ratio"])]
    now = [r["workload_ratio"] - 1 for r in rows if r["workload_ratio"] is not None]
    lm = [r["forecast_lockmanager_share"] - r["measured_lockmanager_share"] for r in rows
          if r["measured_lockmanager_share"] is not None and math.isfinite(r["measured_lockmanager_share"])]
    lm_now = [r["workload_lockmanager_share"] - r["measured_lockmanager_share"] for r in rows
              if r["workload_lockmanager_share"] is not None and r["measured_lockmanager_share"] is not None
              and math.isfinite(r["measured_lockmanager_share"])]
    g = [x["forecast_gain"] - x["measured_gain"] for x in gains]
    return (f"statement forecast TPS within 25 %: {within(ratios, 0.25)}; model vs now within 25 %: "
            f"{within(now, 0.25)}; LockManager share within 10 points: statement {within(lm, 0.10)}, "
            f"model vs now {within(lm_now, 0.10)}; fix gains within 10 points: {within(g, 0.10)}")


def run_reforecast(points: Path, calibration: Path | None) -> None:
    """``--reforecast``: forecast the best points of an earlier run with this checkout's model (no load)."""
    doc = json.loads(points.read_text())
    if doc.get("schema") != SCHEMA_ID:
        raise SystemExit(f"{points}: not a {SCHEMA_ID} file")
    cal_file = calibration or points.parent / "calibration.json"
    cal = load_calibration(cal_file) if cal_file.exists() else DEFAULT_CALIBRATION
    rows = reforecast(doc, cal)
    gains = fix_gains(doc, rows)
    (points.parent / "reforecast.json").write_text(json.dumps(
        _nan_to_none({"points": str(points), "calibration": str(cal_file) if cal_file.exists() else "default",
                      "git_commit": _git_commit(), "rows": rows, "fix_gains": gains}), indent=1) + "\n")
    print(f"calibration: {cal_file if cal_file.exists() else 'DEFAULT_CALIBRATION'}\n")
    print(reforecast_table(rows, gains))
    print()
    print(accuracy_summary(rows, gains))


# -- main ------------------------------------------------------------------------------------------------------------
def _git_commit() -> str:
    proc = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, check=False)
    return proc.stdout.strip()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="clients 1, 4, 16; one run; quick lab ceiling")
    parser.add_argument("--only", action="append", choices=ALL_NAMES, metavar="STATEMENT",
                        help=f"measure only this statement (repeatable): {', '.join(ALL_NAMES)}")
    parser.add_argument("--out", type=Path, help="results directory (default benchmarks/results/"
                                                 "forecast-real-<UTC date>, or -quick- with --quick)")
    parser.add_argument("--duration", type=float, default=4.0, help="pgbench seconds per point (4)")
    parser.add_argument("--warmup", type=float, default=2.0, help="unrecorded pgbench seconds per statement (2)")
    parser.add_argument("--runs", type=int, help="runs per point (2; --quick 1)")
    parser.add_argument("--explain-repeats", type=int, default=20, help="EXPLAIN timings per statement (20)")
    parser.add_argument("--ceiling", choices=("full", "quick", "none"),
                        help="lab ceiling profile (full; --quick: quick)")
    parser.add_argument("--no-fixes", action="store_true", help="skip the fixes (mlpt64, drop5)")
    parser.add_argument("--reforecast", type=Path, metavar="POINTS_JSON",
                        help="measure nothing: forecast the best points of that file with this checkout's model "
                             "(writes reforecast.json beside it)")
    parser.add_argument("--calibration", type=Path, help="with --reforecast: the calibration (default: "
                                                         "calibration.json beside the points, else the built-in)")
    args = parser.parse_args(argv)
    if args.reforecast is not None:
        run_reforecast(args.reforecast, args.calibration)
        return
    started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    date = time.strftime("%Y-%m-%d", time.gmtime())
    out: Path = args.out or ROOT / "benchmarks" / "results" / f"forecast-real-{'quick-' if args.quick else ''}{date}"
    out.mkdir(parents=True, exist_ok=True)
    names = [n for n in ALL_NAMES if args.only is None or n in args.only]
    clients = CLIENTS_QUICK if args.quick else CLIENTS_FULL
    runs = args.runs or (1 if args.quick else 2)
    ceiling = args.ceiling or ("quick" if args.quick else "full")
    t0 = time.monotonic()

    def say(text: str) -> None:
        print(f"[{time.strftime('%H:%M:%S')} +{time.monotonic() - t0:5.0f}s load {os.getloadavg()[0]:.1f}] {text}",
              flush=True)

    (out / "schema.sql").write_text(SCHEMA)
    (out / "scripts").mkdir(exist_ok=True)
    for st in STATEMENTS.values():
        (out / "scripts" / f"{st.name}.sql").write_text(st.script())
    settings = ScratchSettings(max_locks_per_transaction=BASE_MLPT, extra={"max_parallel_workers_per_gather": "0"})
    with ScratchServer(None, settings) as server:
        say(f"scratch server PostgreSQL {server.major}: schema")
        run_script(server.conninfo(), SCHEMA)
        install_pg_stat_statements(server)
        with psycopg.connect(server.conninfo(), autocommit=True) as conn:
            version = conn.execute("select current_setting('server_version'), "
                                   "current_setting('server_version_num')::int, "
                                   "(select oid from pg_database where datname = current_database())").fetchone()
        assert version is not None
        r = Run(server, out, clients, runs, args.duration, args.warmup, args.explain_repeats, say)
        r.doc = {
            "schema": SCHEMA_ID, "started": started, "finished": None,
            "command": [sys.argv[0], *(argv or sys.argv[1:])],
            "git_commit": _git_commit(),
            "machine": {"cores": os.cpu_count(), "platform": platform.platform(),
                        "memory_gib": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)},
            "server": {"version": version[0], "version_num": version[1], "database_oid": version[2]},
            "settings": server_settings(server.conninfo()),
            "profile": {"mode": "quick" if args.quick else "full", "clients": list(clients), "runs": runs,
                        "duration_s": args.duration, "warmup_s": args.warmup, "sample_hz": 10.0,
                        "explain_repeats": args.explain_repeats},
            "statements": {}, "points": [], "fixes": None, "calibration": None, "ceiling_profile": None,
        }
        measure_statements(r, names)
        if not args.no_fixes:
            measure_fixes(r, names)
        r.save()
    if ceiling != "none":
        r.doc["calibration"] = run_ceiling(out, ceiling, say)
        r.doc["ceiling_profile"] = ceiling if r.doc["calibration"] is not None else None
    r.doc["finished"] = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    r.save()
    text = summary(r.doc)
    (out / "summary.md").write_text(f"{SCHEMA_ID}, started {started}, {r.doc['machine']['cores']} cores, PostgreSQL "
                                    f"{r.doc['server']['version']}\n\n{text}\n")
    print("\n" + text)
    say(f"done: {out}")


if __name__ == "__main__":
    main()
