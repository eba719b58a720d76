"""What ``lockscope audit`` and ``lockscope diagnose`` cost a live, contended server (issue 17).

The contended demo load on a scratch PostgreSQL (``src/lockscope/demo_load.py``: pgbench -S, 100 extra indexes on
pgbench_accounts, 16 clients, max_locks_per_transaction 16: ~86 main-lock-table locks per transaction, most active
sessions on LWLock:LockManager) runs for the whole benchmark as ONE pgbench run (``-P 1 --progress-timestamp``).
Within it, windows alternate: "off" (no lockscope) and "on" (one real ``lockscope audit`` or ``lockscope diagnose``
CLI run against the server with ``--dsn``, so the default pacing of pg_locks reads applies: 2 per second; and, to
see the probing alone over a longer window, ``lockscope footprint --protocol prepared --executions N`` of the load's
own statement: N probes back to back, N pg_locks reads at 2 per second), in rounds audit, diagnose, footprint. The
TPS of each "on" window (the command's whole run) is compared with the mean TPS of the "off" windows on either
side (paired, so slow drift of the machine cancels); the first ``--settle`` s after each switch are not counted.
The pg_locks reads and their time are the commands' own figures (JSON ``probe_cost``). lockscope runs on the same
machine as the server here, so the TPS cost includes its client's CPU (reported) on top of its server work.

Usage (under the machine's load lock, about 4 minutes)::

    flock /tmp/lockscope-load.lock python benchmarks/probe_cost.py [--rounds 2] [--off 12]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lockscope.db import connect
from lockscope.demo_load import DEMO_CLIENTS, DEMO_EXTRA_INDEXES, DEMO_MLPT, prepare_contended_schema
from lockscope.pgbench import run_pgbench, start_pgbench
from lockscope.server import ScratchServer, ScratchSettings

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # benchmarks.observer_paired, run as a script
from benchmarks.observer_paired import parse_progress


@dataclass
class Window:
    """One window of the run: ``kind`` is ``off``, ``audit`` or ``diagnose``; times are Unix seconds."""

    kind: str
    start_s: float
    end_s: float = 0.0
    tps: list[float] = field(default_factory=list)
    doc: dict[str, Any] = field(default_factory=dict)
    client_cpu_s: float = 0.0
    last_line: str = ""

    @property
    def mean_tps(self) -> float:
        return statistics.fmean(self.tps) if self.tps else float("nan")


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _machine() -> str:
    cpu = "unknown CPU"
    with open("/proc/cpuinfo") as fh:
        for line in fh:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    with open("/proc/meminfo") as fh:
        mem_kib = int(fh.readline().split()[1])
    return f"{os.cpu_count()} cores ({cpu}), {mem_kib / 2**20:.0f} GiB, {platform.system()} {platform.release()}"


#: The load's own statement (pgbench -S), probed by the footprint rows.
PGBENCH_SELECT = "SELECT abalance FROM pgbench_accounts WHERE aid = $1"


def _run_command(kind: str, conninfo: str, json_path: Path, args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    """Run ``lockscope audit|diagnose|footprint --dsn ... --json FILE``; return its JSON and its last stderr line."""
    argv = [sys.executable, "-m", "lockscope", kind, "--dsn", conninfo, "--json", str(json_path)]
    if kind == "audit":
        argv += ["--interval", f"{args.audit_interval:g}"]
    elif kind == "diagnose":
        argv += ["--duration", f"{args.diagnose_duration:g}s"]
    else:
        argv += ["--protocol", "prepared", "--executions", str(args.executions), "--param", "1", PGBENCH_SELECT]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=600)
    if proc.returncode not in (0, 6):  # audit's --fail-on is not used; 6 would still be a finished audit
        raise SystemExit(f"lockscope {kind} failed (exit {proc.returncode}): {proc.stderr.strip()[-500:]}")
    lines = proc.stderr.strip().splitlines()
    return json.loads(json_path.read_text()), lines[-1] if lines else ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2, help="runs of each command (default 2)")
    parser.add_argument("--off", type=float, default=12.0, help="seconds of each window without lockscope")
    parser.add_argument("--settle", type=float, default=1.0, help="seconds not counted after each switch")
    parser.add_argument("--lead", type=float, default=10.0,
                        help="seconds of the measured pgbench run before the first window (not counted)")
    parser.add_argument("--audit-interval", type=float, default=10.0, help="audit --interval (default 10)")
    parser.add_argument("--diagnose-duration", type=float, default=20.0, help="diagnose --duration (s)")
    parser.add_argument("--executions", type=int, default=24, help="footprint --executions (default 24)")
    parser.add_argument("--clients", type=int, default=DEMO_CLIENTS)
    parser.add_argument("--extra-indexes", type=int, default=DEMO_EXTRA_INDEXES)
    parser.add_argument("--mlpt", type=int, default=DEMO_MLPT)
    args = parser.parse_args()
    started = time.time()

    def say(msg: str) -> None:
        print(f"[{time.time() - started:5.0f} s] {msg}", file=sys.stderr, flush=True)

    plan = ["off"]
    for _ in range(args.rounds):
        for kind in ("audit", "diagnose", "footprint"):
            plan += [kind, "off"]
    budget = (len(plan) * args.off + args.rounds * (args.audit_interval + args.diagnose_duration
                                                    + args.executions / 2 + 60) + 120)
    windows: list[Window] = []
    with ScratchServer(settings=ScratchSettings(max_locks_per_transaction=args.mlpt,
                                                max_connections=max(100, args.clients + 20))) as server, \
            tempfile.TemporaryDirectory(prefix="lockscope-probe-cost-") as tmp:
        say("preparing the contended schema")
        prepare_contended_schema(server, extra_indexes=args.extra_indexes, mlpt=args.mlpt, progress=say)
        with connect(server.conninfo()) as session:
            version = session.facts.server_version
        say("warm-up pgbench run (5 s)")
        run_pgbench(server, clients=args.clients, duration_s=5)
        conninfo = server.conninfo()
        with start_pgbench(server, clients=args.clients, duration_s=budget + args.lead,
                           extra_args=("-P", "1", "--progress-timestamp")) as run:
            time.sleep(args.lead)
            for n, kind in enumerate(plan):
                window = Window(kind, time.time())
                if kind == "off":
                    time.sleep(args.off)
                else:
                    say(f"lockscope {kind}")
                    cpu0 = _children_cpu_s()
                    window.doc, window.last_line = _run_command(kind, conninfo, Path(tmp) / f"{n}.json", args)
                    window.client_cpu_s = _children_cpu_s() - cpu0
                window.end_s = time.time()
                windows.append(window)
            run._output.seek(0)  # the per-second progress lines, read before the run is stopped
            text = run._output.read().decode(errors="replace")
    rows = parse_progress(text)
    for w in windows:
        # a progress line stamped t covers (t - 1, t]
        w.tps = [v for t, v in rows if t - 1.0 >= w.start_s + args.settle - 1e-6 and t <= w.end_s + 0.05]

    print(f"machine: {_machine()}")
    print(f"PostgreSQL {version}, max_locks_per_transaction {args.mlpt}, pgbench -S -c{args.clients} -P 1, "
          f"{args.extra_indexes} extra indexes; date {time.strftime('%Y-%m-%d')}")
    print(f"audit --dsn --interval {args.audit_interval:g}; diagnose --dsn --duration {args.diagnose_duration:g}s; "
          f"footprint --dsn --protocol prepared --executions {args.executions} '{PGBENCH_SELECT}'; default pacing "
          f"(2 pg_locks reads/s); off windows {args.off:g} s; {args.settle:g} s after each switch not counted")
    print()
    print("| command | run (s) | statements probed | pg_locks reads | inside pg_locks (ms) | probing (s) | "
          "lockscope client CPU (% of machine) | TPS on | TPS off (adjacent) | TPS ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    ratios: dict[str, list[float]] = {"audit": [], "diagnose": [], "footprint": []}
    for i, w in enumerate(windows):
        if w.kind == "off":
            continue
        offs = [windows[j].mean_tps for j in (i - 1, i + 1) if 0 <= j < len(windows) and windows[j].kind == "off"]
        base = statistics.fmean(offs)
        ratio = w.mean_tps / base
        ratios[w.kind].append(ratio)
        cost = w.doc["probe_cost"]
        run_s = w.end_s - w.start_s
        if w.kind == "diagnose":
            measured = w.doc.get("statements_measured")
        elif w.kind == "audit":
            measured = sum(1 for s in w.doc["statements"]["items"] if s.get("custom") or s.get("generic"))
        else:
            measured = 1
        cpu = 100.0 * w.client_cpu_s / (run_s * (os.cpu_count() or 1))
        print(f"| {w.kind} | {run_s:.1f} | {measured} | {cost['pg_locks_reads']} | {cost['pg_locks_ms']:.1f} | "
              f"{cost['probing_s']:.1f} | {cpu:.1f}% | {w.mean_tps:,.0f} | {base:,.0f} | {ratio:.3f} |")
    print()
    for kind, values in ratios.items():
        if values:
            print(f"{kind}: mean TPS ratio {statistics.fmean(values):.3f} over {len(values)} runs "
                  f"(TPS cost {100 * (1 - statistics.fmean(values)):+.1f}%)")
    share = [w.doc["watch"]["lockmanager_share"] for w in windows if w.kind == "diagnose"]
    if share:
        print(f"LWLock:LockManager share of active-session samples (diagnose): "
              f"{', '.join(f'{100 * s:.0f}%' for s in share)}")
    off_tps = [w.mean_tps for w in windows if w.kind == "off"]
    print(f"off windows: TPS {', '.join(f'{t:,.0f}' for t in off_tps)}")
    for w in windows:
        if w.kind != "off":
            print(f"last stderr line of {w.kind}: {w.last_line}")
    print(f"\ntotal time {time.time() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
