"""Benchmark: how long ``lockscope audit`` takes on a large catalog, and how it grows with relation count.

Builds, on a scratch server (embedded PostgreSQL 18, or --pg-bin), a range-partitioned table with 9 indexes and
N partitions (each partition gets the 9 indexes: ~10 x N relations), plus pg_stat_statements with a few statements,
then times ``run_audit`` (catalog, footprints, index analysis, advice, statement probes; rates since reset) at
each size. Prints a Markdown table for BENCHMARKS.md. Run it under the machine's load lock:

    flock /tmp/lockscope-load.lock python benchmarks/audit_scale.py --partitions 250 500 1000
"""

from __future__ import annotations

import argparse
import platform
import time
from pathlib import Path

from lockscope.audit import AuditOptions, run_audit
from lockscope.db import connect, run_script
from lockscope.server import ScratchServer, ScratchSettings

INDEXES = 9


def build(conninfo: str, partitions: int, start: int) -> None:
    """Add partitions ``start .. partitions-1`` (the parent and its 9 partitioned indexes exist)."""
    run_script(conninfo, f"""
do $$ begin
  for i in {start}..{partitions - 1} loop
    execute format('create table big_p%s partition of big for values from (%s) to (%s)', i, i * 10, i * 10 + 10);
  end loop;
end $$;
analyze big;
""")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partitions", type=int, nargs="+", default=[250, 500, 1000])
    parser.add_argument("--pg-bin", type=Path)
    parser.add_argument("--repeat", type=int, default=3, help="audits per size; the median is reported")
    args = parser.parse_args()
    settings = ScratchSettings(max_locks_per_transaction=64)
    with ScratchServer(args.pg_bin, settings) as server:
        conninfo = server.conninfo()
        cols = ", ".join(f"c{i} int" for i in range(INDEXES))
        run_script(conninfo, f"create extension pg_stat_statements; "
                             f"create table big (k int not null, {cols}) partition by range (k);"
                             + "".join(f"create index on big (c{i});" for i in range(INDEXES))
                             + "select * from big where k = 5; select * from big where c1 = 3;")
        rows = []
        done = 0
        for n in sorted(args.partitions):
            t0 = time.monotonic()
            build(conninfo, n, done)
            build_s = time.monotonic() - t0
            done = n
            times = []
            for _ in range(args.repeat):
                with connect(conninfo, statement_timeout_ms=60000, pg_locks_rate_hz=20) as session:
                    t1 = time.monotonic()
                    report = run_audit(session, AuditOptions(interval_s=0))
                    times.append(time.monotonic() - t1)
            times.sort()
            median = times[len(times) // 2]
            rel = report.relations + report.indexes
            rows.append((n, rel, median, report.timings_s, build_s, len(report.findings)))
            print(f"{n} partitions: {rel} relations, audit {median:.2f} s (min {times[0]:.2f}, max {times[-1]:.2f}); "
                  f"phases {({k: round(v, 2) for k, v in report.timings_s.items()})}; build {build_s:.1f} s",
                  flush=True)
        version = report.server_version
    print()
    print(f"machine: {platform.node()} {platform.machine()}, {__import__('os').cpu_count()} cores; "
          f"PostgreSQL {version}; {time.strftime('%Y-%m-%d')}")
    print("| partitions | relations (tables + indexes) | audit median (s) | catalog (s) | footprints (s) | "
          "probes (s) |")
    print("|---:|---:|---:|---:|---:|---:|")
    for n, rel, median, phases, _build, _f in rows:
        print(f"| {n:,} | {rel:,} | {median:.2f} | {phases['catalog']:.2f} | {phases['footprints']:.2f} | "
              f"{phases['probes']:.2f} |")


if __name__ == "__main__":
    main()
