"""The convoy model of a sampled ``LWLock:LockManager`` against the sampled share (issue 27).

For each demo condition (pgbench -S, ``max_locks_per_transaction`` 16, N extra indexes on pgbench_accounts, C
clients; each ``--runs`` times) this script runs ``lockscope diagnose --demo`` in-process (:func:`run_diagnose`,
``--duration`` s of wait-event samples, the machine's cores) under the machine's load lock
(``/tmp/lockscope-load.lock``, one lock per load), and records at the operating point diagnose reproduces: the
sampled LockManager share, the model's share as printed today (partition queues and LWLock sleeps), and the share
with the time asleep behind a preempted holder (:func:`lockscope.forecast.model.convoy_lockmanager_s`) added.
``uptime`` before and after. Never run under ``flock`` itself::

    .venv/bin/python benchmarks/lockmanager_convoy.py --out DIR [--conditions 100x16,50x16] [--runs 2]

Writes ``DIR/convoy.json`` and prints a markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from lockscope.db import connect
from lockscope.demo_load import demo_load
from lockscope.diagnose import run_diagnose
from lockscope.diagnose.engine import DiagnoseOptions
from lockscope.forecast.engine import default_cores

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # benchmarks.forecast_real, run as a script
from benchmarks.forecast_real import load_lock

DEFAULT_CONDITIONS = "100x16,50x16,15x16,0x16,100x4,100x32"


def _share(wait_ms: float, cpu_us: float) -> float:
    return wait_ms / (wait_ms + cpu_us / 1000.0) if wait_ms + cpu_us > 0 else 0.0


def measure(extra: int, clients: int, seconds: float, cores: int) -> dict[str, object]:
    """One demo load, diagnosed: the sampled share and the model's two shares at the reproduced operating point."""
    with load_lock():
        load0 = os.getloadavg()
        with demo_load(extra_indexes=extra, clients=clients, duration_s=seconds) as running, \
                connect(running.conninfo) as session:
            d = run_diagnose(session, running.conninfo, DiagnoseOptions(duration_s=seconds, cores=cores), demo=True)
        load1 = os.getloadavg()
    f, live, anchor = d.forecast_before, d.live, d.anchor
    row: dict[str, object] = {"extra_indexes": extra, "clients": clients, "seconds": seconds,
                              "loadavg_before": load0, "loadavg_after": load1, "at": time.strftime("%H:%M:%S")}
    if f is None or live is None or anchor is None:
        return {**row, "error": "no forecast: " + "; ".join(d.notes)}
    convoy_lm = f.partition_wait_ms + f.convoy_wait_ms
    return {**row, "measured_tps": live.rate_tps, "population": live.population, "aas": live.aas,
            "aas_cpu": live.aas_cpu, "sampled_share": live.lockmanager_share,
            "sampled_aas": live.lockmanager_share * live.aas, "think_ms": d.think_s * 1000,
            "model_tps_first": anchor.model_tps, "cost_factor": anchor.factor, "model_tps": f.throughput_tps,
            "cpu_us": f.cpu_per_transaction_us, "queue_wait_ms": f.partition_wait_ms,
            "convoy_wait_ms": f.convoy_wait_ms,
            "model_share_now": _share(f.partition_wait_ms, f.cpu_per_transaction_us),
            "model_share_convoy": _share(convoy_lm, f.cpu_per_transaction_us),
            "model_aas_convoy": f.throughput_tps * convoy_lm / 1000.0}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--seconds", type=float, default=6.0)
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--conditions", default=DEFAULT_CONDITIONS, help="EXTRAxCLIENTS,... (default %(default)s)")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    cores = default_cores()
    rows = []
    for run in range(args.runs):
        for cond in args.conditions.split(","):
            extra, clients = (int(v) for v in cond.split("x"))
            rows.append({"run": run + 1, **measure(extra, clients, args.seconds, cores)})
            (args.out / "convoy.json").write_text(json.dumps(rows, indent=2))
    print("| extra indexes | clients | run | TPS | AAS | LockManager sampled | model now | convoy model | |Δ| pp |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        if "error" in r:
            print(f"| {r['extra_indexes']} | {r['clients']} | {r['run']} | error: {r['error']} |")
            continue
        s, m, c = (100 * float(r[k]) for k in ("sampled_share", "model_share_now", "model_share_convoy"))  # type: ignore[arg-type]
        print(f"| {r['extra_indexes']} | {r['clients']} | {r['run']} | {float(r['measured_tps']):,.0f} | "  # type: ignore[arg-type]
              f"{float(r['aas']):.2f} | {s:.0f} % | {m:.0f} % | {c:.0f} % | {abs(c - s):.0f} |")  # type: ignore[arg-type]


if __name__ == "__main__":
    main()
