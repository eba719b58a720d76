"""Benchmark: real client libraries with their default statement caching, the plan-cache phase lockscope attributes
their calls to, and its main-lock-table acquisitions/s against pg_locks (issue 18's table per driver and major).

For each server (PostgreSQL 15 and 18 with ``pg_stat_statements.track_planning``, 18 without it, 19; all at
max_locks_per_transaction 16, scratch servers on this machine) and each driver of ``tests/drivers`` (pgx, pgjdbc,
psycopg, node-postgres unnamed and named): the 3-table join of tests/test_plan_phases.py (42 relation locks and 26
in the main lock table when planned, 6 and none when a cached generic plan is reused) runs on 4 connections; after
a warm-up, ``lockscope audit``'s engine reads pg_stat_statements over an interval (5 s; 10 s without
track_planning, where its own pg_locks snapshots are the basis) while this script samples pg_locks every 0.05 s
(complete observations only: 42 locks or exactly 6) as the truth. Prints a Markdown table for BENCHMARKS.md:
calls/s, plannings/s (pg_stat_statements ``plans``), the share of calls reusing a cached plan, the basis,
acquisitions/s reported vs measured, and whether the audit would recommend a max_locks_per_transaction restart.

    python benchmarks/plan_phases.py
"""

from __future__ import annotations

import argparse
import platform
import sys
import threading
import time
from pathlib import Path

import psycopg

from lockscope.audit import AuditOptions, run_audit
from lockscope.db import connect, run_script
from lockscope.server import ScratchServer, ScratchSettings

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the tests' driver harness and PG binaries
from tests.drivers import run as run_driver
from tests.fix_versions import bin_dir_of

SQL = "select a.id, b.id, c.id from j1 a join j2 b on b.a_id = a.id join j3 c on c.b_id = b.id where a.id = $1"
SCHEMA = "".join(
    f"create table j{t} (id int primary key, a_id int, b_id int, "
    + ", ".join(f"c{i} int" for i in range(1, n + 1)) + ");\n"
    + "".join(f"create index on j{t} (c{i});\n" for i in range(1, n))
    + f"insert into j{t} select g, g, g, " + ", ".join("g" for _ in range(n)) + " from generate_series(1, 2000) g;\n"
    for t, n in ((1, 9), (2, 12), (3, 16))
) + "create index on j2 (a_id); create index on j3 (b_id); analyze; create extension pg_stat_statements;\n"
PLANNED_LOCKS, REUSED_LOCKS = 42, 6
CONFIGS = [(15, True), (18, True), (18, False), (19, True)]
DRIVERS = ["pgx", "pgjdbc", "psycopg", "node-pg", "node-pg-named"]


def _counters(conninfo: str) -> tuple[int, int]:
    with psycopg.connect(conninfo, autocommit=True) as conn:
        row = conn.execute("select coalesce(sum(calls), 0), coalesce(sum(plans), 0) from pg_stat_statements "
                           "where query like 'select a.id, b.id%'").fetchone()
        return (int(row[0]), int(row[1])) if row else (0, 0)


def _truth(conninfo: str, stop: threading.Event, out: list[tuple[int, int]]) -> None:
    with psycopg.connect(conninfo, autocommit=True) as conn:
        while not stop.is_set():
            out.extend((int(m), int(t)) for m, t in conn.execute(
                "select count(*) filter (where not l.fastpath), count(*) from pg_stat_get_activity(null) a "
                "join pg_locks l on l.pid = a.pid where a.state = 'active' and a.query like 'select a.id, b.id%' "
                "and l.locktype = 'relation' and l.granted group by a.pid"))
            time.sleep(0.05)


def measure(server: ScratchServer, driver: str, interval_s: float) -> dict[str, object]:
    """One driver on one server: the audit's view and pg_locks' truth."""
    conninfo = server.conninfo()
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute("select pg_stat_statements_reset()")
    seconds = 2.0 + interval_s + 2.0
    done: list[object] = []
    load = threading.Thread(target=lambda: done.append(run_driver(driver, conninfo, SQL, ["int:42"], clients=4,
                                                                  seconds=seconds)), daemon=True)
    load.start()
    time.sleep(2.0)
    stop = threading.Event()
    samples: list[tuple[int, int]] = []
    sampler = threading.Thread(target=_truth, args=(conninfo, stop, samples), daemon=True)
    sampler.start()
    c0, p0, t0 = *_counters(conninfo), time.monotonic()
    with connect(conninfo) as session:
        report = run_audit(session, AuditOptions(interval_s=interval_s, top_n=10, unused_min_age_s=0))
    c1, p1, t1 = *_counters(conninfo), time.monotonic()
    stop.set()
    sampler.join(5)
    load.join(seconds + 180)
    audit = next(a for a in report.workload.statements if a.query.startswith("select a.id, b.id"))
    complete = [m for m, t in samples if t >= PLANNED_LOCKS or t == REUSED_LOCKS] or [m for m, _ in samples]
    truth = sum(complete) / len(complete) if complete else 0.0
    calls = (c1 - c0) / (t1 - t0)
    split = audit.split
    frac = split.reused_fraction if split is not None else None
    return {"calls": calls, "plans": (p1 - p0) / (t1 - t0) if server.settings.track_planning else None,
            "reused": frac, "basis": audit.basis, "reported": audit.main_lock_table_per_s,
            "reported_low": audit.main_lock_table_per_s_low, "truth": calls * truth, "observations": len(complete),
            "restart": any(f.kind == "max-locks-per-transaction" and f.severity != "info" for f in report.findings)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--drivers", nargs="+", default=DRIVERS)
    args = parser.parse_args()
    rows = []
    for major, track in CONFIGS:
        settings = ScratchSettings(max_locks_per_transaction=16, track_planning=track)
        with ScratchServer(bin_dir_of(major), settings) as server:
            run_script(server.conninfo(), SCHEMA)
            for driver in args.drivers:
                r = measure(server, driver, 5.0 if track or major >= 19 else 10.0)
                rows.append((f"{major}{'' if track or major >= 19 else ' (no track_planning)'}", driver, r))
                print(f"done: PostgreSQL {major}, {driver}", flush=True)
    print(f"\n{platform.machine()}, {platform.system()}, 4 client connections, max_locks_per_transaction 16\n")
    print("| PG | driver | calls/s | plannings/s | calls reusing a cached plan | basis | main-lock-table acq/s "
          "reported | measured (pg_locks) | restart advised |")
    print("|---|---|---:|---:|---:|---|---:|---:|---|")
    for pg, driver, r in rows:
        plans = "-" if r["plans"] is None else f"{r['plans']:,.0f}"
        reused = "unknown" if r["reused"] is None else f"{100 * float(r['reused']):.2f}%"  # type: ignore[arg-type]
        reported = (f"{r['reported_low']:,.0f}-{r['reported']:,.0f}" if r["basis"] == "unknown"
                    else f"{r['reported']:,.0f}")
        print(f"| {pg} | {driver} | {r['calls']:,.0f} | {plans} | {reused} | {r['basis']} | {reported} | "
              f"{r['truth']:,.0f} ({r['observations']} obs.) | {'yes' if r['restart'] else 'no'} |")


if __name__ == "__main__":
    main()
