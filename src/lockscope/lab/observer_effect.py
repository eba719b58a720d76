"""The observer effect of sampling, measured as seed 2-007 did: pgbench throughput on the contended load with and
without an observer, interleaved runs, reported as TPS ratios.

Conditions (:data:`CONDITIONS`):

- ``none``: no observer (the baseline of each round);
- ``watch_10hz`` / ``watch_100hz``: the real ``lockscope watch --hz N --record FILE --no-live`` CLI as a separate
  process (started, and sampling, before pgbench starts; stopped with SIGTERM after it ends);
- ``watch_10hz_locks_1s``: the same at 10 Hz with ``--locks-every 1`` (the cost of the pg_locks snapshot);
- ``blocking_pids_100hz``: ``SELECT pg_blocking_pids(pid) FROM pg_stat_activity`` at ~100 Hz on one connection
  (the observer seed 2-007 measured at -9.1 % TPS on 8 cores).

In each round every condition runs once, in an order rotated by one per round (so slow drift of the machine does
not favour any condition); a condition's ratio is the median over rounds of its TPS divided by the same round's
baseline TPS. Load goes only to the scratch server given.

The observers (:class:`WatchProcess`, :class:`BlockingLoop`), :func:`cpu_seconds` and :func:`prepare_run` also
serve the paired within-run method, which only the benchmarks use (``benchmarks/observer_paired.py``).
"""

from __future__ import annotations

import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..db import connect
from ..demo_load import DEMO_CLIENTS, DEMO_EXTRA_INDEXES, DEMO_MLPT, prepare_contended_schema
from ..errors import BadInputError, LockscopeError, ScratchServerError
from ..pgbench import run_pgbench
from ..rows import BlockingLoopRow
from ..server import ScratchServer
from ..watch.aas import achieved_hz, share
from ..watch.sampler import Schedule
from ..watch.store import open_recording

__all__ = [
    "BASELINE",
    "CONDITIONS",
    "DEFAULT_CONDITIONS",
    "BlockingLoop",
    "ObserverResult",
    "WatchProcess",
    "cpu_seconds",
    "measure_observer_effect",
    "prepare_run",
]

BASELINE = "none"
#: Every condition :func:`measure_observer_effect` knows.
CONDITIONS = ("none", "watch_10hz", "watch_100hz", "watch_10hz_locks_1s", "blocking_pids_100hz")
#: The conditions run by default (the issue's four).
DEFAULT_CONDITIONS = ("none", "watch_10hz", "watch_100hz", "blocking_pids_100hz")


@dataclass(frozen=True)
class ObserverResult:
    """Observer-effect measurements.

    :ivar server_version: e.g. ``18.6``.
    :ivar clients: pgbench clients (count).
    :ivar duration_s: pgbench duration per run (s).
    :ivar rounds: rounds (count).
    :ivar extra_indexes: extra indexes on pgbench_accounts (count).
    :ivar max_locks_per_transaction: the server's setting (count).
    :ivar conditions: condition names, baseline first.
    :ivar tps: condition -> pgbench TPS per round, in round order.
    :ivar observer_hz: condition -> achieved observer rate per round (Hz; 0 for the baseline).
    :ivar lockmanager_share: fraction (0..1) of active-session samples on LWLock:LockManager in the 10 Hz watch
        recordings (median over rounds; None if that condition was not run) - shows the load was contended.
    :ivar observer_cpu_pct: condition -> CPU time the observer used during each run, its client (the watch
        process, or the loop's thread) plus its server backend, as % of the machine's CPU capacity (all cores
        over the run): on a CPU-bound load this bounds the TPS the observer can take through CPU alone, and it
        is precise where TPS ratios on a busy machine are noisy (Linux /proc; empty elsewhere).
    """

    server_version: str
    clients: int
    duration_s: float
    rounds: int
    extra_indexes: int
    max_locks_per_transaction: int
    conditions: tuple[str, ...]
    tps: dict[str, tuple[float, ...]]
    observer_hz: dict[str, tuple[float, ...]]
    lockmanager_share: float | None
    observer_cpu_pct: dict[str, tuple[float, ...]] = field(default_factory=dict)

    def median_cpu_pct(self, condition: str) -> float:
        """Median over rounds of :attr:`observer_cpu_pct` (%), NaN when not measured."""
        values = self.observer_cpu_pct.get(condition, ())
        return statistics.median(values) if values else float("nan")

    def round_ratios(self, condition: str) -> tuple[float, ...]:
        """TPS of ``condition`` / baseline TPS, per round."""
        return tuple(c / b for c, b in zip(self.tps[condition], self.tps[BASELINE], strict=False) if b > 0)

    def ratio(self, condition: str) -> float:
        """Median over rounds of the per-round TPS ratio to the baseline (1.0 = no cost)."""
        ratios = self.round_ratios(condition)
        return statistics.median(ratios) if ratios else float("nan")

    @property
    def ratios(self) -> dict[str, float]:
        """condition -> :meth:`ratio`."""
        return {c: self.ratio(c) for c in self.conditions}

    def cost_pct(self, condition: str) -> float:
        """TPS lost to the observer (%): ``(1 - ratio) * 100``."""
        return (1.0 - self.ratio(condition)) * 100.0

    def median_tps(self, condition: str) -> float:
        """Median TPS of a condition over rounds."""
        return statistics.median(self.tps[condition])


def cpu_seconds(path: str) -> float | None:
    """utime + stime of a process (``/proc/PID/stat``) or thread (``/proc/PID/task/TID/stat``), in s."""
    try:
        with open(path) as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class _CpuMeter:
    """CPU seconds used by some processes/threads between :meth:`start` and :meth:`stop`, as % of the machine."""

    def __init__(self, paths: Sequence[str]) -> None:
        self.paths = list(paths)
        self._t0 = 0.0
        self._cpu0: list[float | None] = []

    def _read(self) -> list[float | None]:
        return [cpu_seconds(p) for p in self.paths]

    def start(self) -> None:
        """Take the first reading."""
        self._cpu0 = self._read()
        self._t0 = time.monotonic()

    def stop(self) -> float | None:
        """CPU used since :meth:`start` (% of all cores over the elapsed time); None when a reading failed."""
        cpu1 = self._read()
        elapsed = time.monotonic() - self._t0
        before = [v for v in self._cpu0 if v is not None]
        after = [v for v in cpu1 if v is not None]
        if not self.paths or len(before) != len(self.paths) or len(after) != len(self.paths) or elapsed <= 0:
            return None
        used = sum(after) - sum(before)
        return 100.0 * used / (elapsed * (os.cpu_count() or 1))


class BlockingLoop:
    """``SELECT pg_blocking_pids(pid) FROM pg_stat_activity`` at ``hz`` on one connection, in a thread."""

    def __init__(self, conninfo: str, hz: float) -> None:
        self.conninfo = conninfo
        self.hz = hz
        self.calls = 0
        self.error: BaseException | None = None
        self.thread_id: int | None = None
        self.backend_pid: int | None = None
        self._stop = threading.Event()
        self._ready = threading.Event()
        #: Cleared by :meth:`pause` (no queries until :meth:`resume`); set by default.
        self._active = threading.Event()
        self._active.set()
        self._thread = threading.Thread(target=self._run, name="lockscope-blocking-loop", daemon=True)

    def _run(self) -> None:
        try:
            self.thread_id = threading.get_native_id()
            with connect(self.conninfo, sampler=True, statement_timeout_ms=2000) as session:
                self.backend_pid = session.backend_pid
                self._ready.set()
                schedule = Schedule(self.hz)
                while not self._stop.is_set():
                    if not self._active.is_set():
                        self._stop.wait(0.01)
                        if self._active.is_set():
                            schedule = Schedule(self.hz)  # resume on a fresh schedule: no catch-up burst
                        continue
                    session.query_rows("watch_blocking_loop", BlockingLoopRow)
                    self.calls += 1
                    schedule.wait(self._stop)
        except BaseException as exc:
            self.error = exc
        finally:
            self._ready.set()

    def start(self) -> None:
        """Start the thread and wait until it is connected. :raises: what the connection raised."""
        self._thread.start()
        self._ready.wait(30)
        if self.error is not None:
            raise self.error

    def pause(self) -> None:
        """Stop querying until :meth:`resume` (the connection stays open and idle)."""
        self._active.clear()

    def resume(self) -> None:
        """Query again at ``hz``."""
        self._active.set()

    def stop(self) -> None:
        """Stop the thread. :raises: what the loop raised while it ran."""
        self._stop.set()
        self._thread.join(30)
        if self.error is not None:
            raise self.error


class WatchProcess:
    """The real ``lockscope watch`` CLI in a separate process, recording to a temporary file."""

    def __init__(self, conninfo: str, hz: float, record: Path, extra: Sequence[str] = ()) -> None:
        self.record = record
        argv = [sys.executable, "-m", "lockscope", "watch", "--dsn", conninfo, "--hz", f"{hz:g}",
                "--record", str(record), "--no-live", *extra]
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=self._stderr, start_new_session=True)

    def samples(self) -> list[float]:
        """Unix times (s) of the samples recorded so far (empty while the recording is missing or unreadable)."""
        if not self.record.exists() or self.record.stat().st_size == 0:
            return []
        try:
            with open_recording(self.record) as rec:
                return [float(r[0]) for r in rec.rows("SELECT ts FROM samples ORDER BY id")]
        except LockscopeError:
            return []

    def wait_sampling(self, timeout_s: float = 60.0) -> None:
        """Until the process has recorded a few samples (its start-up CPU is then over)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise ScratchServerError(f"lockscope watch exited early: {self._error_text()}")
            if len(self.samples()) >= 3:
                return
            time.sleep(0.2)
        self.stop()
        raise ScratchServerError("lockscope watch did not start sampling in time")

    def _error_text(self) -> str:
        self._stderr.seek(0)
        lines = [ln for ln in self._stderr.read().decode(errors="replace").splitlines() if ln.strip()]
        return lines[-1] if lines else f"exit {self.proc.returncode}"

    def stop(self) -> None:
        """SIGTERM (SIGKILL to its process group after 30 s); the recording is then complete."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self._stderr.close()

    def cpu_paths(self) -> list[str]:
        """/proc stat files of the watch process and of its server backend (from the recording's meta)."""
        with open_recording(self.record) as rec:
            backend = rec.meta.get("backend_pid")
        return [f"/proc/{self.proc.pid}/stat"] + ([f"/proc/{backend}/stat"] if backend else [])

    def achieved_hz(self, start_wall_s: float, end_wall_s: float) -> float:
        """Samples per second recorded between two wall times (Hz)."""
        ts = [t for t in self.samples() if start_wall_s <= t <= end_wall_s]
        return achieved_hz(len(ts), end_wall_s - start_wall_s)

    def lockmanager_share(self) -> float:
        """Fraction of active-session samples on LWLock:LockManager in the recording."""
        with open_recording(self.record) as rec:
            row = rec.rows("SELECT count(*), sum(wait_event_type = 'LWLock' AND wait_event = 'LockManager') "
                           "FROM sessions")[0]
        return share(row[1] or 0, row[0])


def prepare_run(server: ScratchServer, *, prepare: bool, extra_indexes: int, mlpt: int | None, clients: int,
                 warmup_s: float, say: Callable[[str], None]) -> tuple[str, int]:
    """Shared start of both observer benchmarks: schema (when ``prepare``), server facts, optional warm-up run.

    :param warmup_s: a pgbench run not counted (s; below 1 = none).
    :return: (server_version, max_locks_per_transaction in force).
    :raises ScratchServerError, DatabaseError: when the set-up, the server or pgbench fails.
    """
    if prepare:
        prepare_contended_schema(server, extra_indexes=extra_indexes, mlpt=mlpt, progress=say)
    with connect(server.conninfo()) as session:
        version = session.facts.server_version
        server_mlpt = session.facts.max_locks_per_transaction
    if warmup_s >= 1:
        say(f"warm-up pgbench run ({warmup_s:g} s)")
        run_pgbench(server, clients=clients, duration_s=warmup_s)
    return version, server_mlpt


def measure_observer_effect(
    server: ScratchServer,
    *,
    clients: int = DEMO_CLIENTS,
    duration_s: float = 15.0,
    rounds: int = 5,
    extra_indexes: int = DEMO_EXTRA_INDEXES,
    mlpt: int | None = DEMO_MLPT,
    conditions: Sequence[str] = DEFAULT_CONDITIONS,
    prepare: bool = True,
    warmup_s: float = 3.0,
    progress: Callable[[str], None] | None = None,
) -> ObserverResult:
    """Measure pgbench TPS on the contended load under each observer condition, interleaved.

    :param server: a running scratch server (load goes only there).
    :param clients: pgbench clients (count).
    :param duration_s: pgbench run length per condition and round (s, >= 1).
    :param rounds: rounds (count, >= 1).
    :param extra_indexes: extra indexes on pgbench_accounts (count), set up when ``prepare``.
    :param mlpt: max_locks_per_transaction to run at (server restarted if it differs), None = keep.
    :param conditions: names from :data:`CONDITIONS`; the baseline ``none`` is always included.
    :param prepare: set up the schema first (:func:`prepare_contended_schema`).
    :param warmup_s: a pgbench run not counted, before the first round (s; 0 = none).
    :param progress: called with a short description before each run.
    :raises BadInputError: unknown condition or out-of-range argument.
    :raises ScratchServerError, DatabaseError: when pgbench, the watch CLI or the server fails.
    """
    say = progress or (lambda _: None)
    names = _condition_names(conditions, rounds, duration_s)
    version, server_mlpt = prepare_run(server, prepare=prepare, extra_indexes=extra_indexes, mlpt=mlpt,
                                       clients=clients, warmup_s=warmup_s, say=say)
    runs: dict[str, list[_ConditionRun]] = {c: [] for c in names}
    with tempfile.TemporaryDirectory(prefix="lockscope-observer-") as tmp:
        for r in range(rounds):
            order = names[r % len(names):] + names[:r % len(names)]
            for cond in order:
                say(f"round {r + 1}/{rounds}: {cond}")
                runs[cond].append(_run_condition(server, cond, clients=clients, duration_s=duration_s,
                                                 record=Path(tmp) / f"{cond}-{r}.db"))
    shares = [run.lockmanager_share for run in runs.get("watch_10hz", []) if run.lockmanager_share is not None]
    cpu = {c: tuple(run.cpu_pct for run in v if run.cpu_pct is not None) for c, v in runs.items() if c != BASELINE}
    return ObserverResult(
        server_version=version,
        clients=clients,
        duration_s=float(max(1, round(duration_s))),
        rounds=rounds,
        extra_indexes=extra_indexes,
        max_locks_per_transaction=server_mlpt,
        conditions=names,
        tps={c: tuple(run.tps for run in v) for c, v in runs.items()},
        observer_hz={c: tuple(run.hz for run in v) for c, v in runs.items()},
        lockmanager_share=statistics.median(shares) if shares else None,
        observer_cpu_pct={c: v for c, v in cpu.items() if v},
    )


def _condition_names(conditions: Sequence[str], rounds: int, duration_s: float) -> tuple[str, ...]:
    """The baseline, then the other conditions given. :raises BadInputError: unknown condition, bad range."""
    unknown = [c for c in conditions if c not in CONDITIONS]
    if unknown:
        raise BadInputError(f"unknown observer condition(s): {', '.join(unknown)} (known: {', '.join(CONDITIONS)})")
    if rounds < 1 or duration_s < 1:
        raise BadInputError("observer benchmark needs at least 1 round of at least 1 s")
    return (BASELINE, *[c for c in conditions if c != BASELINE])


@dataclass(frozen=True)
class _ConditionRun:
    """One pgbench run under one condition: its TPS, the observer's achieved rate (Hz; 0 for the baseline), the
    observer's CPU (% of the machine; None when not measured) and, for ``watch_10hz``, the LockManager share."""

    tps: float
    hz: float
    cpu_pct: float | None = None
    lockmanager_share: float | None = None


def _run_condition(server: ScratchServer, cond: str, *, clients: int, duration_s: float,
                   record: Path) -> _ConditionRun:
    """pgbench for ``duration_s`` with the observer of ``cond`` (a watch process recording to ``record``, removed
    afterwards; the loop thread; or none)."""
    if cond == BASELINE:
        return _ConditionRun(tps=run_pgbench(server, clients=clients, duration_s=duration_s).tps, hz=0.0)
    if cond == "blocking_pids_100hz":
        return _run_blocking_loop(server, clients=clients, duration_s=duration_s)
    rate_hz = 100.0 if cond == "watch_100hz" else 10.0
    extra = ("--locks-every", "1") if cond == "watch_10hz_locks_1s" else ()
    watch = WatchProcess(server.conninfo(), rate_hz, record, extra)
    try:
        watch.wait_sampling()
        meter = _CpuMeter(watch.cpu_paths())
        meter.start()
        start = time.time()
        result = run_pgbench(server, clients=clients, duration_s=duration_s)
        end = time.time()
        used = meter.stop()
    finally:
        watch.stop()
    run = _ConditionRun(tps=result.tps, hz=watch.achieved_hz(start, end), cpu_pct=used,
                        lockmanager_share=watch.lockmanager_share() if cond == "watch_10hz" else None)
    record.unlink(missing_ok=True)
    return run


def _run_blocking_loop(server: ScratchServer, *, clients: int, duration_s: float) -> _ConditionRun:
    """pgbench for ``duration_s`` with the ~100 Hz ``pg_blocking_pids`` loop running."""
    loop = BlockingLoop(server.conninfo(), 100.0)
    loop.start()
    try:
        meter = _CpuMeter([f"/proc/{os.getpid()}/task/{loop.thread_id}/stat", f"/proc/{loop.backend_pid}/stat"])
        meter.start()
        t0 = time.monotonic()
        calls0 = loop.calls
        result = run_pgbench(server, clients=clients, duration_s=duration_s)
        rate = achieved_hz(loop.calls - calls0, time.monotonic() - t0)
        used = meter.stop()
    finally:
        loop.stop()
    return _ConditionRun(tps=result.tps, hz=rate, cpu_pct=used)
