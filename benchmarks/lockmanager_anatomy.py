"""What a sampled ``LWLock:LockManager`` is on this machine (issue 27): the sleep on the semaphore, the wait for a
core after the wake-up, and the time pgstat reports the wait event around them.

lwlock.c ``LWLockAcquire`` reports the wait event (``LWLockReportWaitStart``) just before its loop around
``PGSemaphoreLock`` and clears it (``LWLockReportWaitEnd``) just after, so a sampler that reads pg_stat_activity
sees ``LWLock:LockManager`` from the call of ``PGSemaphoreLock`` to its return: the sleep until ``LWLockWakeup``
posts the semaphore (``sched:sched_wakeup`` of the backend), then the time the woken backend waits for a core
until it runs again and returns. This script measures both with uprobes on the running server's postgres binary
(``perf probe -x BIN PGSemaphoreLock`` and its return) and the scheduler's wake-up tracepoint, during the demo
load (pgbench -S, extra indexes on pgbench_accounts, max_locks_per_transaction 16), beside a pg_stat_activity
sampler of the same seconds (the oracle). Run as root on a quiet machine, under the load lock::

    flock /tmp/lockscope-load.lock .venv/bin/python benchmarks/lockmanager_anatomy.py --out DIR

Writes ``DIR/anatomy.json`` (one entry per condition) and prints a markdown table.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import time
from collections import defaultdict
from pathlib import Path

from lockscope.db import connect
from lockscope.demo_load import demo_load
from lockscope.watch.aas import CPU
from lockscope.watch.sampler import BackgroundSampler, Sample

LM = "LWLock:LockManager"


def _proc_stat() -> tuple[int, int]:
    """(busy, total) jiffies of all CPUs."""
    fields = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = fields[3] + fields[4]
    return sum(fields) - idle, sum(fields)


def _probes(binary: Path) -> list[str]:
    subprocess.run(["perf", "probe", "-q", "-d", "probe_postgres:*"], check=False, capture_output=True)
    for spec in ("PGSemaphoreLock", "PGSemaphoreLock%return"):
        subprocess.run(["perf", "probe", "-q", "-x", str(binary), spec], check=True, capture_output=True)
    return ["probe_postgres:PGSemaphoreLock", "probe_postgres:PGSemaphoreLock__return"]


def _episodes(script: str) -> dict[str, float]:
    """Per PGSemaphoreLock call: entry -> the backend's wake-up -> return; sums in seconds."""
    entry: dict[int, float] = {}
    woken: dict[int, float] = {}
    sleep = runq = total = 0.0
    n = no_wake = 0
    t_first = t_last = None
    for line in script.splitlines():
        parts = line.split()
        if len(parts) < 3:
            continue
        try:
            pid, t = int(parts[0]), float(parts[1].rstrip(":"))
        except ValueError:
            continue
        t_first = t if t_first is None else t_first
        t_last = t
        event = parts[2].rstrip(":")
        if event.endswith("PGSemaphoreLock__return"):
            if pid in entry:
                start = entry.pop(pid)
                wake = woken.pop(pid, None)
                total += t - start
                n += 1
                if wake is None or wake < start:
                    no_wake += 1
                else:
                    sleep += wake - start
                    runq += t - wake
        elif event.endswith("PGSemaphoreLock"):
            entry[pid] = t
            woken.pop(pid, None)
        elif event == "sched:sched_wakeup":
            target = next((int(p.split("=")[1]) for p in parts[3:] if p.startswith("pid=")), None)
            if target in entry and target not in woken:
                woken[target] = t
    span = (t_last - t_first) if t_first is not None and t_last is not None else 0.0
    return {"episodes": n, "no_wakeup": no_wake, "in_semaphore_s": total, "sleep_s": sleep, "runq_s": runq,
            "span_s": span}


def _sampled(samples: list[Sample]) -> dict[str, float]:
    """AAS, on CPU, on LockManager and the other waits of the demo database's client backends."""
    by_wait: dict[str, int] = defaultdict(int)
    active = 0
    for sample in samples:
        for sess in sample.sessions:
            if sess.backend_type not in (None, "client backend") or sess.application_name == "lockscope" \
                    or sess.datname != "postgres":
                continue
            by_wait[sess.wait] += 1
            active += 1
    ticks = max(1, len(samples))
    return {"ticks": len(samples), "aas": active / ticks, "aas_cpu": by_wait.get(CPU, 0) / ticks,
            "aas_lockmanager": by_wait.get(LM, 0) / ticks, "lockmanager_share": by_wait.get(LM, 0) / max(1, active),
            **{f"aas {k}": v / ticks for k, v in by_wait.items() if k not in (CPU, LM)}}


def _calls(conninfo: str) -> float:
    with connect(conninfo) as s:
        return float(s.oracle_rows("select coalesce(sum(calls), 0)::float8 from pg_stat_statements "
                                   "where query like 'SELECT abalance%'")[0][0])


def measure(extra_indexes: int, clients: int, seconds: float, hz: float, out: Path) -> dict[str, object]:
    """The same load twice in a row: sampled alone, then sampled with the uprobes and the wake-up tracepoint."""
    with demo_load(duration_s=2 * seconds + 8, extra_indexes=extra_indexes, clients=clients) as running:
        pid = int((running.server.data_dir / "postmaster.pid").read_text().split()[0])
        binary = Path(f"/proc/{pid}/exe").resolve()  # the binary the server runs (a copy when run as root)
        events = _probes(binary)
        time.sleep(1.0)
        c0, b0, t0 = _calls(running.conninfo), _proc_stat(), time.monotonic()
        with BackgroundSampler(running.conninfo, hz=hz) as sampler:
            time.sleep(seconds)
        plain = _sampled(sampler.stop())
        c1, b1, t1 = _calls(running.conninfo), _proc_stat(), time.monotonic()
        data = out / f"perf-{extra_indexes}.data"
        with BackgroundSampler(running.conninfo, hz=hz) as sampler:
            subprocess.run(["perf", "record", "-q", "-a", "-o", str(data), "-e", events[0], "-e", events[1],
                            "-e", "sched:sched_wakeup", "--", "sleep", str(seconds)], check=True,
                           capture_output=True)
        traced = _sampled(sampler.stop())
        c2, b2, t2 = _calls(running.conninfo), _proc_stat(), time.monotonic()
    script = subprocess.run(["perf", "script", "-i", str(data), "-F", "pid,time,event,trace"], check=True,
                            capture_output=True, text=True).stdout
    subprocess.run(["perf", "probe", "-q", "-d", "probe_postgres:*"], check=False, capture_output=True)
    ep = _episodes(script)
    span = ep["span_s"] or seconds
    slept = max(1, ep["episodes"] - ep["no_wakeup"])
    return {
        "extra_indexes": extra_indexes, "clients": clients, "seconds": seconds,
        "plain": {**plain, "tps": (c1 - c0) / (t1 - t0), "cpu_busy": (b1[0] - b0[0]) / max(1, b1[1] - b0[1])},
        "traced": {**traced, "tps": (c2 - c1) / (t2 - t1), "cpu_busy": (b2[0] - b1[0]) / max(1, b2[1] - b1[1]),
                   "episodes_per_s": ep["episodes"] / span, "sleeps_per_s": (ep["episodes"] - ep["no_wakeup"]) / span,
                   "aas_in_semaphore": ep["in_semaphore_s"] / span, "aas_sleep": ep["sleep_s"] / span,
                   "aas_runq_after_wakeup": ep["runq_s"] / span, "mean_sleep_us": 1e6 * ep["sleep_s"] / slept,
                   "mean_runq_us": 1e6 * ep["runq_s"] / slept},
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--hz", type=float, default=20.0)
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--indexes", default="100,15")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    rows = [measure(int(n), args.clients, args.seconds, args.hz, args.out) for n in args.indexes.split(",")]
    (args.out / "anatomy.json").write_text(json.dumps(rows, indent=2))
    print("| extra indexes | clients | run | TPS | AAS | on CPU | LockManager sampled (AAS, share) | in "
          "PGSemaphoreLock (AAS) | asleep | runnable after the wake-up | sleeps/s | mean sleep / run-queue µs |")
    print("|---:|---:|---|---:|---:|---:|---|---:|---:|---:|---:|---|")
    for r in rows:
        for run in ("plain", "traced"):
            m = r[run]
            assert isinstance(m, dict)
            extra = (f"{m['aas_in_semaphore']:.2f} | {m['aas_sleep']:.2f} | {m['aas_runq_after_wakeup']:.2f} | "
                     f"{m['sleeps_per_s']:,.0f} | {m['mean_sleep_us']:.0f} / {m['mean_runq_us']:.0f}"
                     if run == "traced" else " | | | | ")
            print(f"| {r['extra_indexes']} | {r['clients']} | {run} | {m['tps']:,.0f} | {m['aas']:.2f} | "
                  f"{m['aas_cpu']:.2f} | {m['aas_lockmanager']:.2f} ({100 * m['lockmanager_share']:.0f} %) | {extra} |")

if __name__ == "__main__":
    main()
