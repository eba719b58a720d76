"""The lab figures recorded in BENCHMARKS.md (sections ``## lab: ...``), measured on this machine.

Run under the machine-wide load lock (the machine is shared; TPS depends on it)::

    flock /tmp/lockscope-load.lock python benchmarks/lab_benchmarks.py --out /tmp/lab-bench [--pg17 17]

Runs, each into its own results directory under ``--out`` (plots and report.html included):

1. ``indexes``: scale 10; 0-20, 25, 30, 50, 100 extra indexes; mlpt 16 and 128; 16 clients; 1 s warm-up + 5 s
   per point (embedded PG 18).
2. ``partitions``: 0, 8, 32, 128, 512, 2048 partitions x 3 plan_cache_modes; 1 client; 5 s per point.
3. ``indexes`` on PG 17 (``lab install 17``; or Debian's 15 with ``--pg17 /usr/lib/postgresql/15/bin``) and on
   PG 18 at the same settings (0, 10, 14, 15, 16, 20, 30, 50, 100 extra indexes; mlpt 16, 128), then
   ``lab compare`` of the two.

Prints a markdown summary (our figures next to the published ones).
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

from lockscope.lab import IndexesScenario, PartitionsScenario, run_lab
from lockscope.lab.compare import load_for_compare
from lockscope.lab.indexes import summary as index_summary
from lockscope.lab.partitions import summary as partition_summary
from lockscope.pgbin import resolve_pg_bin
from lockscope.report.lab_report import write_compare_report, write_lab_report
from lockscope.server import default_bin_dir


def _f(v: Any, digits: int = 3) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return str(v)


def indexes_section(out: Path) -> str:
    res = run_lab(IndexesScenario(scale=10, extra_indexes=(*tuple(range(21)), 25, 30, 50, 100), mlpts=(16, 128),
                                  clients=16, duration_s=5, warmup_s=1, profile="benchmark"),
                  out=out / "indexes", write_report=write_lab_report)
    rows = list(res.rows)
    by = {(r["max_locks_per_transaction"], r["extra_indexes"]): r for r in rows}
    lines = [f"results: `{res.out_dir}` ({res.status}, {res.elapsed_s:.0f} s, PG {res.servers[0].pg_version})", "",
             "| extra idx | relation locks | main-table @16 | main-table @128 | plan ms @16 | plan ms @128 | "
             "exec ms @16 | TPS @16 | TPS @128 | LockManager @16 | LockManager @128 |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for k in sorted({r["extra_indexes"] for r in rows}):
        a, b = by.get((16, k), {}), by.get((128, k), {})
        lines.append(f"| {k} | {a.get('relation_locks')} | {a.get('main_table_locks')} | {b.get('main_table_locks')} | "
                     f"{_f(a.get('mean_plan_ms'))} | {_f(b.get('mean_plan_ms'))} | {_f(a.get('mean_exec_ms'))} | "
                     f"{_f(a.get('tps'), 0)} | {_f(b.get('tps'), 0)} | "
                     f"{_f(100 * a.get('lockmanager_share', math.nan), 0)}% | "
                     f"{_f(100 * b.get('lockmanager_share', math.nan), 0)}% |")
    for s in index_summary(rows):
        lines.append("")
        lines.append(f"- mlpt {s['max_locks_per_transaction']}: first spill at {s['first_spill_extra_indexes']} extra "
                     f"indexes (last clean {s['last_clean_extra_indexes']}); planning-time step ratio "
                     f"{_f(s['plan_ms_step_ratio'], 2)}; at {s['max_extra_indexes']} extra: TPS ratio vs mlpt "
                     f"{s['tps_ratio_vs_mlpt']} = {_f(s['tps_ratio'], 2)}, LockManager "
                     f"{_f(100 * (s['lockmanager_share_at_max'] or 0), 0)}% of active-session samples, top wait "
                     f"{s['top_wait_at_max']}")
    top = by.get((16, 100), {})
    lines.append(f"- waits at 100 extra indexes, mlpt 16: `{top.get('waits')}`")
    return "\n".join(lines)


def partitions_section(out: Path) -> str:
    res = run_lab(PartitionsScenario(partitions=(0, 8, 32, 128, 512, 2048), clients=1, duration_s=5,
                                     profile="benchmark"),
                  out=out / "partitions", write_report=write_lab_report)
    rows = list(res.rows)
    lines = [f"results: `{res.out_dir}` ({res.status}, {res.elapsed_s:.0f} s, PG {res.servers[0].pg_version})", "",
             "| partitions | mode | locks per execution | main-table | locks by execution | TPS | plan ms/call |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['partitions']} | {r['plan_cache_mode']} | {r['locks_per_execution']} | "
                     f"{r['main_table_locks']} | {r['locks_by_execution']} | {_f(r.get('tps'), 0)} | "
                     f"{_f(r.get('mean_plan_ms'), 4)} |")
    for s in partition_summary(rows):
        lines.append(f"- {s['plan_cache_mode']}: TPS {s['max_partitions']} / {s['reference_partitions']} partitions = "
                     f"{_f(s['tps_ratio'], 3)} ({_f(s['tps_max'], 0)} vs {_f(s['tps_reference'], 0)}); "
                     f"locks per execution = P + 1 at every P: {s['locks_equal_p_plus_1']}")
    return "\n".join(lines)


def versions_section(out: Path, old: str) -> str:
    runs = []
    for name, bin_dir in (("old", resolve_pg_bin(old)), ("pg18", default_bin_dir())):
        res = run_lab(IndexesScenario(pg_bins=(bin_dir,), scale=10, extra_indexes=(0, 10, 14, 15, 16, 20, 30, 50, 100),
                                      mlpts=(16, 128), clients=16, duration_s=5, warmup_s=1, profile="benchmark"),
                      out=out / f"versions-{name}", write_report=write_lab_report)
        runs.append(res.out_dir)
    results = load_for_compare(runs)
    cmp_dir = out / "versions-compare"
    cmp_dir.mkdir()
    written = write_compare_report(results, cmp_dir)
    lines = [f"compare: `{cmp_dir}` ({', '.join(p.name for p in written)})", "",
             "| version | mlpt | fast-path slots | first spill | plan step ratio | TPS @100 | TPS ratio vs 128 | "
             "LockManager @100 |", "|---|---|---|---|---|---|---|---|"]
    for r in results:
        for s in index_summary(list(r.rows)):
            lines.append(f"| {s['pg_version']} | {s['max_locks_per_transaction']} | {s['fast_path_slots']} | "
                         f"{s['first_spill_extra_indexes']} | {_f(s['plan_ms_step_ratio'], 2)} | "
                         f"{_f(s['tps_at_max'], 0)} | {_f(s['tps_ratio'], 2)} | "
                         f"{_f(100 * (s['lockmanager_share_at_max'] or 0), 0)}% |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--pg17", default="17", help="older PostgreSQL: an installed version or a bin dir")
    ap.add_argument("--only", choices=("indexes", "partitions", "versions"), action="append")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    cpu = subprocess.run(["sh", "-c", "grep -m1 'model name' /proc/cpuinfo | cut -d: -f2"], capture_output=True,
                         text=True).stdout.strip()
    print(f"machine: {os.cpu_count()} cores ({cpu}), {platform.system()} {platform.release()}, "
          f"Python {sys.version.split()[0]}")
    only = args.only or ["indexes", "partitions", "versions"]
    if "indexes" in only:
        print("\n### indexes\n\n" + indexes_section(args.out), flush=True)
    if "partitions" in only:
        print("\n### partitions\n\n" + partitions_section(args.out), flush=True)
    if "versions" in only:
        print("\n### versions\n\n" + versions_section(args.out, args.pg17), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
