"""The seed footprints on a real server of every major 13-19, and PostgreSQL 19's lock counters, as markdown.

Prints three tables (BENCHMARKS.md "Every major 13-19", the README's short table comes from the first):

1. Per major: the events statement (12 range partitions x 3 indexes) prepared, plan_cache_mode auto, 8
   executions at max_locks_per_transaction 64 (custom / generic build / after); ``select from t`` (5 indexes)
   prepared (6 locks, then 1 from the reused generic plan); the first extra index on pgbench_accounts that spills
   at mlpt 16 (pgbench's primary-key select); measured = predicted (every lock's fast-path flag against the
   capacity model).
2. PostgreSQL 19, mlpt 16: ``pg_stat_lock.fastpath_exceeded`` against the main-table locks of a probe workload
   (N executions of ``select * from fx where id = 1`` with k spilled locks each) in warm sessions (caches built,
   one flush per execution) and in N fresh sessions (one execution each).
3. PostgreSQL 19: pg_stat_statements ``generic_plan_calls`` / ``custom_plan_calls`` of a statement executed N
   times as a prepared statement in plan_cache_mode auto (5 custom plans, then the generic plan).

Usage (starts scratch servers one at a time; light load, but keep it under the machine's load lock)::

    flock /tmp/lockscope-load.lock python benchmarks/versions_table.py [--majors 13,14,15,16,17,18,19]

Servers: 18 is the embedded default, 15 Debian's /usr/lib/postgresql/15/bin when installed, every other major the
``lab install`` cache (fetched by ``pgbin.ensure_major`` when missing).
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

import psycopg

from lockscope.db import connect, run_script
from lockscope.demo import EVENTS_STATEMENT, extra_index_sweep
from lockscope.footprint import measure_footprint
from lockscope.pgbench import pgbench_init
from lockscope.pgbin import ensure_major
from lockscope.server import ScratchServer, ScratchSettings

DEBIAN_PG15 = Path("/usr/lib/postgresql/15/bin")
EVENTS_PARAM = ["2024-06-06 00:00:00+00"]


def bin_dir(major: int) -> Path | None:
    """The bin directory of ``major`` (None: the embedded PostgreSQL 18)."""
    if major == 18:
        return None
    if major == 15 and (DEBIAN_PG15 / "postgres").exists():
        return DEBIAN_PG15
    return ensure_major(major).bin_dir


def seed_row(major: int) -> tuple[str, ...]:
    """One row of table 1, measured on a fresh server of ``major``."""
    from tests.conftest import DEMO_SCHEMA  # the test suite's demo schema (events, t, p40, acct)

    with ScratchServer(bin_dir(major), ScratchSettings(max_locks_per_transaction=64)) as server:
        run_script(server.conninfo(), DEMO_SCHEMA)
        with connect(server.conninfo()) as session:
            version = session.facts.server_version
            events = measure_footprint(session, EVENTS_STATEMENT, params=EVENTS_PARAM, protocol="prepared",
                                       plan_cache_mode="auto", executions=8)
            t5 = measure_footprint(session, "select from t", protocol="prepared", param_types=["int"], params=["1"],
                                   executions=8)
        pgbench_init(server)
        points = extra_index_sweep(server, (16,), 17)
    counts = [e.lock_count for e in events.executions]
    t5_counts = [e.lock_count for e in t5.executions]
    first_spill = next((p.extra_indexes for p in points if p.main_table), None)
    mismatches = (sum(len(e.mismatches) for fp in (events, t5) for e in fp.executions)
                  + sum(p.footprint.mismatch_count for p in points)
                  + sum(p.main_table != p.predicted_main_table for p in points))
    return (str(major), version, f"{counts[0]}/{counts[5]}/{counts[6]}",
            f"{t5_counts[0]} then {t5_counts[6]}",
            f"{first_spill} ({points[first_spill].locks if first_spill is not None else '-'} locks)",
            f"{sum(e.main_table_count for e in events.executions)}",
            "yes" if mismatches == 0 else f"no ({mismatches})")


def _fastpath(conn: psycopg.Connection) -> int:
    row = conn.execute("select fastpath_exceeded::int8 from pg_stat_lock where locktype = 'relation'").fetchone()
    assert row is not None
    return int(row[0])


def _settled(reader: psycopg.Connection, previous: int) -> int:
    deadline = time.monotonic() + 3.0
    value = _fastpath(reader)
    while value == previous and time.monotonic() < deadline:
        time.sleep(0.05)
        value = _fastpath(reader)
    return value


def pg19_tables(executions: int = 5) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
    """Tables 2 and 3 on PostgreSQL 19 (mlpt 16, autovacuum off)."""
    schema = "".join(
        f"create table fx{k} (id int primary key, v int);"
        + "".join(f"create index fx{k}_i{i} on fx{k} (v);" for i in range(k))
        + f"insert into fx{k} values (1, 1);" for k in (30, 60, 90))
    schema += ("create table gp (id int primary key, v int); insert into gp select g, g from "
               "generate_series(1, 1000) g; analyze gp; create extension pg_stat_statements;")
    fastpath_rows: list[tuple[str, ...]] = []
    plan_rows: list[tuple[str, ...]] = []
    with ScratchServer(bin_dir(19), ScratchSettings(max_locks_per_transaction=16,
                                                    extra={"autovacuum": "off"})) as server:
        run_script(server.conninfo(), schema)
        ci = server.conninfo()
        with psycopg.connect(ci, autocommit=True) as reader:
            for k in (30, 60, 90):
                sql = f"select * from fx{k} where id = 1"
                with connect(ci) as session:
                    e = measure_footprint(session, sql).executions[0]
                with psycopg.connect(ci, autocommit=True, prepare_threshold=None) as warm:
                    warm.execute(sql).fetchall()
                    warm.execute("select pg_stat_force_next_flush()")
                    time.sleep(0.3)
                    warm_total = 0
                    for _ in range(executions):
                        before = _fastpath(reader)
                        warm.execute(sql).fetchall()
                        warm.execute("select pg_stat_force_next_flush()")
                        warm_total += _settled(reader, before) - before
                fresh_total = 0
                for _ in range(executions):
                    before = _fastpath(reader)
                    with psycopg.connect(ci, autocommit=True, prepare_threshold=None) as fresh:
                        fresh.execute(sql).fetchall()
                        fresh.execute("select pg_stat_force_next_flush()")
                    fresh_total += _settled(reader, before) - before
                fastpath_rows.append((
                    f"{k + 2} ({k} extra indexes)", str(e.main_table_count), str(executions),
                    f"{executions * e.main_table_count:,}", f"{warm_total:,}", f"{fresh_total:,}",
                    f"{(fresh_total - warm_total) / executions:,.0f}"))
            for n in (8, 20):
                reader.execute("select pg_stat_statements_reset()")
                with psycopg.connect(ci, autocommit=True, prepare_threshold=0) as app:
                    for i in range(n):
                        app.execute("select * from gp where id = %s", [i + 1]).fetchall()
                row = reader.execute("select calls, generic_plan_calls, custom_plan_calls from pg_stat_statements "
                                     "where query = 'select * from gp where id = $1'").fetchone()
                assert row is not None
                plan_rows.append((str(n), "5", str(n - 5), str(row[0]), str(row[2]), str(row[1])))
    return fastpath_rows, plan_rows


def _table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--majors", default="13,14,15,16,17,18,19")
    parser.add_argument("--executions", type=int, default=5)
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests.conftest's demo schema
    majors = [int(m) for m in args.majors.split(",")]
    started = time.monotonic()
    rows = []
    for major in majors:
        print(f"measuring PostgreSQL {major} ...", file=sys.stderr, flush=True)
        rows.append(seed_row(major))
    print(f"<!-- benchmarks/versions_table.py, {time.strftime('%Y-%m-%d')}, {platform.machine()}, "
          f"{len(majors)} majors -->\n")
    print(_table(("major", "server", "events auto: custom/build/after (mlpt 64)", "t prepared", "first spill, "
                  "mlpt 16: extra indexes", "events: main-table locks in 8 executions", "measured = predicted"),
                 rows))
    if 19 in majors:
        print("measuring PostgreSQL 19 counters ...", file=sys.stderr, flush=True)
        fastpath_rows, plan_rows = pg19_tables(args.executions)
        print()
        print(_table(("statement locks", "spilled per execution (pg_locks)", "executions N", "N x spilled",
                      "fastpath_exceeded, warm session", "fastpath_exceeded, N fresh sessions",
                      "extra per fresh session"), fastpath_rows))
        print()
        print(_table(("prepared executions", "expected custom", "expected generic", "calls", "custom_plan_calls",
                      "generic_plan_calls"), plan_rows))
    print(f"\n({time.monotonic() - started:.0f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
