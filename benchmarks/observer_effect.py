"""Observer effect of lockscope watch vs a pg_blocking_pids() loop (issue 4), as seed 2-007 measured it.

Contended load on a scratch PostgreSQL (pgbench -S, 100 extra indexes on pgbench_accounts, 16 clients,
max_locks_per_transaction 16); conditions interleaved per round (order rotated): no observer, the real
`lockscope watch --hz 10` CLI, `--hz 100`, `--hz 10 --locks-every 1`, and `SELECT pg_blocking_pids(pid) FROM
pg_stat_activity` at ~100 Hz. Prints per-condition TPS, the median per-round TPS ratio to the baseline, and the
observer's achieved rate. Results go into BENCHMARKS.md ("watch: observer effect").

Usage (always under the machine's load lock)::

    flock /tmp/lockscope-load.lock python benchmarks/observer_effect.py [--rounds 7] [--duration 20]

``--paired``: the paired within-run method instead (``measure_observer_effect_paired`` of
benchmarks/observer_paired.py): ONE pgbench run of ``--duration`` s (default 600) with ``-P 1``, the observer
(``--observer watch|blocking_pids`` at ``--hz``) switched on and off in alternating ``--block`` s blocks
(SIGSTOP/SIGCONT of one real ``lockscope watch`` process), ``--settle`` s discarded after each switch; ratio per "on"
block to its adjacent "off" blocks, mean with a 95 % interval::

    flock /tmp/lockscope-load.lock python benchmarks/observer_effect.py --paired --duration 600 --block 10
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

from lockscope.lab.observer_effect import CONDITIONS, measure_observer_effect
from lockscope.server import ScratchServer, ScratchSettings

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # benchmarks.observer_paired, run as a script
from benchmarks.observer_paired import PAIRED_OBSERVERS, measure_observer_effect_paired


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
    parser.add_argument("--duration", type=float, default=None,
                        help="pgbench seconds per run (default 20; with --paired the one run's length, default 600)")
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--extra-indexes", type=int, default=100)
    parser.add_argument("--mlpt", type=int, default=16)
    parser.add_argument("--conditions", default=",".join(CONDITIONS))
    parser.add_argument("--paired", action="store_true", help="paired within-run method (one long pgbench run)")
    parser.add_argument("--observer", choices=PAIRED_OBSERVERS, default="watch", help="with --paired")
    parser.add_argument("--hz", type=float, default=None, help="with --paired (default 10 watch, 100 loop)")
    parser.add_argument("--block", type=float, default=10.0, help="with --paired: block length (s)")
    parser.add_argument("--settle", type=float, default=2.0, help="with --paired: s discarded after a switch")
    parser.add_argument("--seed", type=int, default=None, help="with --paired")
    args = parser.parse_args()
    if args.paired:
        return paired(args)
    if args.duration is None:
        args.duration = 20.0
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


def paired(args: argparse.Namespace) -> int:
    """The ``--paired`` mode: run, then print the setting, per-block figures and the estimate."""
    started = time.time()
    hz = args.hz if args.hz is not None else (10.0 if args.observer == "watch" else 100.0)
    with ScratchServer(settings=ScratchSettings(max_locks_per_transaction=args.mlpt)) as server:
        r = measure_observer_effect_paired(
            server, observer=args.observer, hz=hz, clients=args.clients,
            duration_s=args.duration if args.duration is not None else 600.0, block_s=args.block,
            settle_s=args.settle, extra_indexes=args.extra_indexes, mlpt=args.mlpt, seed=args.seed,
            progress=lambda msg: print(f"[{time.time() - started:6.0f} s] {msg}", file=sys.stderr, flush=True))
    print(f"machine: {os.cpu_count()} cores, {_cpu_model()}, {platform.system()} {platform.release()}")
    print(f"PostgreSQL {r.server_version}, max_locks_per_transaction {r.max_locks_per_transaction}, "
          f"pgbench -S -c{r.clients} -T{r.duration_s:g} -P 1, {r.extra_indexes} extra indexes, "
          f"date {time.strftime('%Y-%m-%d')}")
    print(f"observer {r.observer} at {r.observer_hz:g} Hz (achieved {r.achieved_hz:.1f} Hz while on), "
          f"blocks of {r.block_s:g} s ({len(r.blocks)}), {r.settle_s:g} s discarded after each switch")
    if r.lockmanager_share is not None:
        print(f"LWLock:LockManager share of active-session samples: {100 * r.lockmanager_share:.0f}%")
    print("blocks (on/off: mean TPS over counted seconds):")
    print("  " + " ".join(f"{'ON' if b.on else 'off'}:{b.mean_tps:,.0f}" for b in r.blocks))
    print(f"pgbench summary TPS {r.pgbench_tps:,.0f}; mean TPS on {r.mean_tps(True):,.0f}, "
          f"off {r.mean_tps(False):,.0f}")
    print(f"pair ratios ({len(r.pair_ratios)}): " + " ".join(f"{x:.3f}" for x in r.pair_ratios))
    lo, hi = r.cost_ci95_pct
    print(f"ratio mean {r.ratio_mean:.4f} (median {r.ratio_median:.4f}), 95% CI {r.ratio_ci95[0]:.4f}.."
          f"{r.ratio_ci95[1]:.4f}")
    print(f"TPS cost {r.cost_pct:+.2f}% (95% CI {lo:+.2f}%..{hi:+.2f}%); < 1% shown: {r.below_1pct_shown}")
    cpu = "n/a" if r.observer_cpu_pct is None else f"{r.observer_cpu_pct:.2f}%"
    print(f"observer CPU while on: {cpu} of the machine")
    print(f"\ntotal time {time.time() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
