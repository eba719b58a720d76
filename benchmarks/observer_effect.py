"""Observer effect of lockscope watch vs a pg_blocking_pids() loop (issue 4), as seed 2-007 measured it.

Contended load on a scratch PostgreSQL (pgbench -S, 100 extra indexes on pgbench_accounts, 16 clients,
max_locks_per_transaction 16); conditions interleaved per round (order rotated): no observer, the real
`lockscope watch --hz 10` CLI, `--hz 100`, `--hz 10 --locks-every 1`, and `SELECT pg_blocking_pids(pid) FROM
pg_stat_activity` at ~100 Hz. Prints per-condition TPS, the median per-round TPS ratio to the baseline, and the
observer's achieved rate. Results go into BENCHMARKS.md ("watch: observer effect").

Usage (always under the machine's load lock)::

    flock /tmp/lockscope-load.lock python benchmarks/observer_effect.py [--rounds 7] [--duration 20]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time

from lockscope.server import ScratchServer, ScratchSettings
from lockscope.watch.observer import CONDITIONS, measure_observer_effect


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--duration", type=float, default=20.0, help="pgbench seconds per run")
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--extra-indexes", type=int, default=100)
    parser.add_argument("--mlpt", type=int, default=16)
    parser.add_argument("--conditions", default=",".join(CONDITIONS))
    args = parser.parse_args()
    conditions = tuple(c for c in args.conditions.split(",") if c)
    started = time.time()
    with ScratchServer(settings=ScratchSettings(max_locks_per_transaction=args.mlpt)) as server:
        result = measure_observer_effect(
            server, clients=args.clients, duration_s=args.duration, rounds=args.rounds,
            extra_indexes=args.extra_indexes, mlpt=args.mlpt, conditions=conditions,
            progress=lambda msg: print(f"[{time.time() - started:6.0f} s] {msg}", file=sys.stderr, flush=True))
    print(f"machine: {os.cpu_count()} cores, {_cpu_model()}, {platform.system()} {platform.release()}")
    print(f"PostgreSQL {result.server_version}, max_locks_per_transaction {result.max_locks_per_transaction}, "
          f"pgbench -S -c{result.clients} -T{result.duration_s:g}, {result.extra_indexes} extra indexes, "
          f"{result.rounds} rounds, date {time.strftime('%Y-%m-%d')}")
    if result.lockmanager_share is not None:
        print(f"LWLock:LockManager share of active-session samples (10 Hz recordings): "
              f"{100 * result.lockmanager_share:.0f}%")
    print()
    print("| condition | observer rate (Hz) | observer CPU (% of machine) | median TPS | TPS per round | "
          "TPS ratio (median of rounds) | TPS cost |")
    print("|---|---|---|---|---|---|---|")
    for cond in result.conditions:
        hz = statistics.median(result.observer_hz[cond]) if cond != "none" else 0.0
        rounds = " ".join(f"{t:,.0f}" for t in result.tps[cond])
        ratios = result.round_ratios(cond)
        spread = f" (rounds {min(ratios):.3f}..{max(ratios):.3f})" if cond != "none" else ""
        cpu = result.median_cpu_pct(cond)
        cpu_text = "-" if cond == "none" or cpu != cpu else f"{cpu:.2f}%"
        print(f"| {cond} | {hz:.1f} | {cpu_text} | {result.median_tps(cond):,.0f} | {rounds} | "
              f"{result.ratio(cond):.3f}{spread} | {result.cost_pct(cond):+.1f}% |")
    print(f"\ntotal time {time.time() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
