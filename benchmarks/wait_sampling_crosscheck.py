"""Cross-validation of lockscope's wait-event sampling against pg_wait_sampling (issue 12), over the same minutes.

One scratch PostgreSQL 15 with Debian's pg_wait_sampling 1.1.4 preloaded; per load, three observers at once:

- **lockscope 10 Hz**: lockscope's per-tick query (``pg_stat_get_activity(NULL)``, as ``sql/activity_sample``)
  without its ``state = 'active'`` filter, so the same samples give lockscope's figures (``state = 'active'``) and
  also what pg_wait_sampling can see (every process of a session type, whatever its state);
- **pg_wait_sampling profile**: reset at the start, read at the end: the collector's 10 ms samples per pid and
  wait event (1.1.4 records only processes that wait: no CPU);
- **lockscope --source pg_wait_sampling**: :class:`lockscope.watch.wait_sampling.WaitSamplingReader` at 100 Hz
  (every collector walk, CPU inferred).

Both pg_wait_sampling figures keep only client backends (lockscope's own backends, idle sessions'
``Client:ClientRead`` and background processes out), as lockscope does. Prints, per load, the share of every wait
event (of waiting samples: CPU excluded, the profile has none; and of all active-session samples) and the
difference in percentage points, plus the top-5 agreement. Results go to BENCHMARKS.md
("watch: pg_wait_sampling cross-check").

Loads: ``contended`` = pgbench -S -c16, 100 extra indexes on pgbench_accounts, max_locks_per_transaction 16 (the
demo load); ``mixed`` = pgbench tpcb-like -c16 at scale 20 with shared_buffers 16MB (IO:DataFileRead from the
page cache, Lock:transactionid on the 20 branch rows, WAL).

Usage (under the machine's load lock)::

    flock /tmp/lockscope-load.lock python benchmarks/wait_sampling_crosscheck.py [--duration 60]
"""

from __future__ import annotations

import argparse
import os
import platform
import threading
import time
from collections import Counter
from pathlib import Path

from lockscope.db import Session, connect, run_script
from lockscope.demo_load import prepare_contended_schema
from lockscope.pgbench import pgbench_init, start_pgbench
from lockscope.server import ScratchServer, ScratchSettings
from lockscope.watch.aas import CPU
from lockscope.watch.sampler import Sample, wait_label
from lockscope.watch.wait_sampling import WaitSamplingReader, is_session_wait, require, scratch_preload

PG15_BIN = Path("/usr/lib/postgresql/15/bin")
ALL_BACKENDS_SQL = """
SELECT s.pid, s.backend_type, s.state, s.wait_event_type, s.wait_event
FROM pg_catalog.pg_stat_get_activity(NULL) AS s
WHERE s.pid <> pg_catalog.pg_backend_pid() AND s.backend_type = 'client backend'
"""


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


class ActivityObserver(threading.Thread):
    """lockscope's tick query at ``hz``: per tick, every client backend's state and wait."""

    def __init__(self, conninfo: str, hz: float) -> None:
        super().__init__(daemon=True)
        self.conninfo, self.hz = conninfo, hz
        self.stop = threading.Event()
        self.ticks = 0
        self.active: Counter[tuple[int, str]] = Counter()   # state = 'active' (lockscope's definition)
        self.visible: Counter[tuple[int, str]] = Counter()  # what pg_wait_sampling sees: not idle-waiting on the client
        self.pid = 0

    def run(self) -> None:
        with connect(self.conninfo, sampler=True, statement_timeout_ms=1000) as session:
            self.pid = session.backend_pid
            period = 1.0 / self.hz
            due = time.monotonic()
            while not self.stop.is_set():
                for pid, _, state, wait_event_type, wait_event in session.oracle_rows(ALL_BACKENDS_SQL):
                    label = wait_label(wait_event_type, wait_event)
                    if state == "active":
                        self.active[(int(pid), label)] += 1
                    if is_session_wait(wait_event_type, wait_event):
                        self.visible[(int(pid), label)] += 1
                self.ticks += 1
                due += period
                self.stop.wait(max(0.0, due - time.monotonic()))


class HistoryObserver(threading.Thread):
    """lockscope's pg_wait_sampling source at 100 Hz (every collector walk)."""

    def __init__(self, conninfo: str) -> None:
        super().__init__(daemon=True)
        self.conninfo = conninfo
        self.stop = threading.Event()
        self.samples: list[Sample] = []
        self.walks_lost = 0
        self.pid = 0

    def run(self) -> None:
        with connect(self.conninfo, sampler=True, statement_timeout_ms=2000) as session:
            self.pid = session.backend_pid
            reader = WaitSamplingReader(session, require(session), hz=100)
            while not self.stop.is_set():
                self.stop.wait(reader.interval_s)
                self.samples.extend(reader.read())
            self.walks_lost = reader.walks_lost


def _profile(session: Session, exclude: set[int]) -> Counter[str]:
    types = {int(pid): backend_type for pid, backend_type in session.oracle_rows(
        "select pid, backend_type from pg_catalog.pg_stat_get_activity(NULL)")}
    out: Counter[str] = Counter()
    for pid, event_type, event, count in session.oracle_rows(
            "select pid, event_type, event, count from pg_wait_sampling_profile"):
        if int(pid) in exclude or types.get(int(pid)) != "client backend" or not is_session_wait(event_type, event):
            continue
        out[wait_label(event_type, event)] += int(count)
    return out


def _without(counts: Counter[tuple[int, str]], pids: set[int]) -> Counter[str]:
    out: Counter[str] = Counter()
    for (pid, label), n in counts.items():
        if pid not in pids:
            out[label] += n
    return out


def _shares(counts: Counter[str], *, without_cpu: bool) -> dict[str, float]:
    """Shares in %; ``without_cpu``: of waiting samples other than Client:ClientRead (the profile has neither: 1.1.4
    records no CPU, and an active session's ClientRead cannot be told from an idle one's)."""
    c = Counter({k: v for k, v in counts.items() if not (without_cpu and k in (CPU, "Client:ClientRead"))})
    total = sum(c.values())
    return {k: 100.0 * v / total for k, v in c.items()} if total else {}


def _table(title: str, a_name: str, a: dict[str, float], b_name: str, b: dict[str, float]) -> float:
    keys = sorted(set(a) | set(b), key=lambda k: -max(a.get(k, 0.0), b.get(k, 0.0)))
    shown = [k for k in keys if max(a.get(k, 0.0), b.get(k, 0.0)) >= 0.1]
    print(f"\n{title}\n")
    print(f"| wait event | {a_name} | {b_name} | difference (pp) |")
    print("|---|---|---|---|")
    worst = 0.0
    for k in shown:
        d = b.get(k, 0.0) - a.get(k, 0.0)
        worst = max(worst, abs(d))
        print(f"| `{k}` | {a.get(k, 0.0):.1f} % | {b.get(k, 0.0):.1f} % | {d:+.1f} |")
    top_a = [k for k, v in sorted(a.items(), key=lambda kv: -kv[1])[:5] if v >= 0.5]
    top_b = [k for k, v in sorted(b.items(), key=lambda kv: -kv[1])[:5] if v >= 0.5]
    same = len(set(top_a) & set(top_b))
    print(f"\nlargest difference {worst:.1f} pp; top 5 (events >= 0.5 %): {same} of {len(set(top_a) | set(top_b))} "
          f"in both, order {'identical' if top_a == top_b else 'differs'} "
          f"(lockscope: {', '.join(top_a)} / pg_wait_sampling: {', '.join(top_b)})")
    return worst


def measure(server: ScratchServer, load: str, duration_s: float) -> None:
    conninfo = server.conninfo()
    with connect(conninfo) as s:
        s.oracle_rows("select pg_wait_sampling_reset_profile()")
    if load == "contended":
        run = start_pgbench(server, clients=16, duration_s=duration_s + 6, select_only=True)
    else:
        run = start_pgbench(server, clients=16, duration_s=duration_s + 6, select_only=False)
    time.sleep(2.0)
    act = ActivityObserver(conninfo, 10.0)
    hist = HistoryObserver(conninfo)
    with connect(conninfo) as s:
        s.oracle_rows("select pg_wait_sampling_reset_profile()")
        act.start()
        hist.start()
        t0 = time.monotonic()
        time.sleep(duration_s)
        profile_pid = s.backend_pid
        profile = _profile(s, {act.pid, hist.pid, profile_pid})
        elapsed = time.monotonic() - t0
        act.stop.set()
        hist.stop.set()
        act.join(10)
        hist.join(10)
    result = run.wait()
    observers = {act.pid, hist.pid, profile_pid}  # lockscope's and the benchmark's own backends: out everywhere
    hist_counts: Counter[str] = Counter(x.wait for smp in hist.samples for x in smp.sessions
                                        if x.backend_type == "client backend" and x.pid not in observers)
    active = _without(act.active, observers)
    visible = _without(act.visible, observers)
    print(f"\n### {load} load: {elapsed:.0f} s, pgbench {result.tps:,.0f} tps; lockscope {act.ticks} ticks "
          f"({act.ticks / elapsed:.1f} Hz); pg_wait_sampling profile {sum(profile.values()):,} waiting samples; "
          f"history {len(hist.samples):,} walks ({len(hist.samples) / elapsed:.1f} Hz), {hist.walks_lost} lost")
    n = max(1, act.ticks)
    print(f"AAS: lockscope {sum(active.values()) / n:.2f} (state active), "
          f"{sum(visible.values()) / n:.2f} (every non-idle-waiting client backend); "
          f"pg_wait_sampling history {sum(hist_counts.values()) / max(1, len(hist.samples)):.2f}")
    _table("Share of WAITING samples (CPU and Client:ClientRead excluded): lockscope 10 Hz (state active) vs "
           "pg_wait_sampling profile (10 ms)", "lockscope 10 Hz", _shares(active, without_cpu=True),
           "pg_wait_sampling profile", _shares(profile, without_cpu=True))
    _table("Share of ALL samples, CPU included: lockscope 10 Hz (state active) vs lockscope --source "
           "pg_wait_sampling (history, CPU inferred)", "lockscope 10 Hz", _shares(active, without_cpu=False),
           "pg_wait_sampling history", _shares(hist_counts, without_cpu=False))
    _table("Share of ALL samples, same population (client backends not idle-waiting on the client, any state): "
           "lockscope 10 Hz vs pg_wait_sampling history", "lockscope 10 Hz", _shares(visible, without_cpu=False),
           "pg_wait_sampling history", _shares(hist_counts, without_cpu=False))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=60.0, help="seconds measured per load (default 60)")
    parser.add_argument("--loads", default="contended,mixed", help="comma-separated: contended, mixed")
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} cores, {_cpu_model()}, {platform.system()} {platform.release()}; "
          f"date {time.strftime('%Y-%m-%d')}")
    for load in args.loads.split(","):
        extra = dict(scratch_preload(PG15_BIN))
        if load == "mixed":
            extra["shared_buffers"] = "16MB"
        settings = ScratchSettings(max_locks_per_transaction=16 if load == "contended" else 64, extra=extra)
        with ScratchServer(PG15_BIN, settings) as server:
            run_script(server.conninfo(), "create extension pg_wait_sampling")
            with connect(server.conninfo()) as s:
                version = s.facts.server_version
                ext = s.oracle_rows("select extversion from pg_extension where extname = 'pg_wait_sampling'")
            print(f"\nPostgreSQL {version}, pg_wait_sampling {ext[0][0]} (Debian 1.1.4)")
            if load == "contended":
                prepare_contended_schema(server)
            else:
                pgbench_init(server, 20)
            measure(server, load, args.duration)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
