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
"""

from __future__ import annotations

import os
import random
import re
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

from ..db import connect, load_sql
from ..demo_load import DEMO_CLIENTS, DEMO_EXTRA_INDEXES, DEMO_MLPT, prepare_contended_schema
from ..errors import BadInputError, LockscopeError, ScratchServerError
from ..pgbench import run_pgbench, start_pgbench
from ..server import ScratchServer
from ..watch.aas import achieved_hz, share
from ..watch.sampler import Schedule
from ..watch.store import open_recording

__all__ = [
    "BASELINE",
    "CONDITIONS",
    "DEFAULT_CONDITIONS",
    "PAIRED_OBSERVERS",
    "ObserverResult",
    "PairedBlock",
    "PairedObserverResult",
    "measure_observer_effect",
    "measure_observer_effect_paired",
    "paired_ratios",
    "parse_progress",
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


def _cpu_s(path: str) -> float | None:
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
        return [_cpu_s(p) for p in self.paths]

    def start(self) -> None:
        self._cpu0 = self._read()
        self._t0 = time.monotonic()

    def stop(self) -> float | None:
        cpu1 = self._read()
        elapsed = time.monotonic() - self._t0
        before = [v for v in self._cpu0 if v is not None]
        after = [v for v in cpu1 if v is not None]
        if not self.paths or len(before) != len(self.paths) or len(after) != len(self.paths) or elapsed <= 0:
            return None
        used = sum(after) - sum(before)
        return 100.0 * used / (elapsed * (os.cpu_count() or 1))


class _BlockingLoop:
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
                sql = load_sql("watch_blocking_loop", session.facts.server_version_num)
                self._ready.set()
                schedule = Schedule(self.hz)
                while not self._stop.is_set():
                    if not self._active.is_set():
                        self._stop.wait(0.01)
                        if self._active.is_set():
                            schedule = Schedule(self.hz)  # resume on a fresh schedule: no catch-up burst
                        continue
                    session.fetch_all(sql)
                    self.calls += 1
                    schedule.wait(self._stop)
        except BaseException as exc:
            self.error = exc
        finally:
            self._ready.set()

    def start(self) -> None:
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
        self._stop.set()
        self._thread.join(30)
        if self.error is not None:
            raise self.error


class _WatchProcess:
    """The real ``lockscope watch`` CLI in a separate process, recording to a temporary file."""

    def __init__(self, conninfo: str, hz: float, record: Path, extra: Sequence[str] = ()) -> None:
        self.record = record
        argv = [sys.executable, "-m", "lockscope", "watch", "--dsn", conninfo, "--hz", f"{hz:g}",
                "--record", str(record), "--no-live", *extra]
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=self._stderr, start_new_session=True)

    def _samples(self) -> list[float]:
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
            if len(self._samples()) >= 3:
                return
            time.sleep(0.2)
        self.stop()
        raise ScratchServerError("lockscope watch did not start sampling in time")

    def _error_text(self) -> str:
        self._stderr.seek(0)
        lines = [ln for ln in self._stderr.read().decode(errors="replace").splitlines() if ln.strip()]
        return lines[-1] if lines else f"exit {self.proc.returncode}"

    def stop(self) -> None:
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
        ts = [t for t in self._samples() if start_wall_s <= t <= end_wall_s]
        return achieved_hz(len(ts), end_wall_s - start_wall_s)

    def lockmanager_share(self) -> float:
        """Fraction of active-session samples on LWLock:LockManager in the recording."""
        with open_recording(self.record) as rec:
            row = rec.rows("SELECT count(*), sum(wait_event_type = 'LWLock' AND wait_event = 'LockManager') "
                           "FROM sessions")[0]
        return share(row[1] or 0, row[0])


def _prepare_run(server: ScratchServer, *, prepare: bool, extra_indexes: int, mlpt: int | None, clients: int,
                 warmup_s: float, say: Callable[[str], None]) -> tuple[str, int]:
    """Shared start of both observer benchmarks: schema, server facts, optional warm-up run.

    :return: (server_version, max_locks_per_transaction in force).
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
    unknown = [c for c in conditions if c not in CONDITIONS]
    if unknown:
        raise BadInputError(f"unknown observer condition(s): {', '.join(unknown)} (known: {', '.join(CONDITIONS)})")
    if rounds < 1 or duration_s < 1:
        raise BadInputError("observer benchmark needs at least 1 round of at least 1 s")
    names = (BASELINE, *[c for c in conditions if c != BASELINE])
    version, server_mlpt = _prepare_run(server, prepare=prepare, extra_indexes=extra_indexes, mlpt=mlpt,
                                        clients=clients, warmup_s=warmup_s, say=say)
    conninfo = server.conninfo()
    tps: dict[str, list[float]] = {c: [] for c in names}
    hz: dict[str, list[float]] = {c: [] for c in names}
    cpu: dict[str, list[float]] = {c: [] for c in names if c != BASELINE}
    shares: list[float] = []
    with tempfile.TemporaryDirectory(prefix="lockscope-observer-") as tmp:
        for r in range(rounds):
            order = names[r % len(names):] + names[:r % len(names)]
            for cond in order:
                say(f"round {r + 1}/{rounds}: {cond}")
                record = Path(tmp) / f"{cond}-{r}.db"
                if cond == BASELINE:
                    result = run_pgbench(server, clients=clients, duration_s=duration_s)
                    tps[cond].append(result.tps)
                    hz[cond].append(0.0)
                elif cond == "blocking_pids_100hz":
                    loop = _BlockingLoop(conninfo, 100.0)
                    loop.start()
                    try:
                        meter = _CpuMeter([f"/proc/{os.getpid()}/task/{loop.thread_id}/stat",
                                           f"/proc/{loop.backend_pid}/stat"])
                        meter.start()
                        t0 = time.monotonic()
                        calls0 = loop.calls
                        result = run_pgbench(server, clients=clients, duration_s=duration_s)
                        rate = achieved_hz(loop.calls - calls0, time.monotonic() - t0)
                        used = meter.stop()
                    finally:
                        loop.stop()
                    tps[cond].append(result.tps)
                    hz[cond].append(rate)
                    if used is not None:
                        cpu[cond].append(used)
                else:
                    rate_hz = 100.0 if cond == "watch_100hz" else 10.0
                    extra = ("--locks-every", "1") if cond == "watch_10hz_locks_1s" else ()
                    watch = _WatchProcess(conninfo, rate_hz, record, extra)
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
                    if used is not None:
                        cpu[cond].append(used)
                    tps[cond].append(result.tps)
                    hz[cond].append(watch.achieved_hz(start, end))
                    if cond == "watch_10hz":
                        shares.append(watch.lockmanager_share())
                    record.unlink(missing_ok=True)
    return ObserverResult(
        server_version=version,
        clients=clients,
        duration_s=float(max(1, round(duration_s))),
        rounds=rounds,
        extra_indexes=extra_indexes,
        max_locks_per_transaction=server_mlpt,
        conditions=names,
        tps={c: tuple(v) for c, v in tps.items()},
        observer_hz={c: tuple(v) for c, v in hz.items()},
        lockmanager_share=statistics.median(shares) if shares else None,
        observer_cpu_pct={c: tuple(v) for c, v in cpu.items() if v},
    )


# --- paired, within-run method -----------------------------------------------------------------------------------

#: Observers :func:`measure_observer_effect_paired` can toggle.
PAIRED_OBSERVERS = ("watch", "blocking_pids")

_PROGRESS = re.compile(r"^progress: ([\d.]+) s, ([\d.]+) tps", re.M)


def parse_progress(text: str) -> list[tuple[float, float]]:
    """``(t_s, tps)`` per pgbench ``-P 1 --progress-timestamp`` line: ``t_s`` is the Unix time (s) at the end of
    the reporting interval, ``tps`` the transactions per second in that interval."""
    return [(float(m.group(1)), float(m.group(2))) for m in _PROGRESS.finditer(text)]


@dataclass(frozen=True)
class PairedBlock:
    """One block of a paired run.

    :ivar on: whether the observer was sampling.
    :ivar start_s: Unix time (s) the state was switched (signal sent / loop resumed or paused).
    :ivar end_s: Unix time (s) the next switch was due.
    :ivar seconds: pgbench progress intervals counted (count; those after the settle time, inside the block).
    :ivar mean_tps: mean TPS over those intervals (NaN when none).
    """

    on: bool
    start_s: float
    end_s: float
    seconds: int
    mean_tps: float


def paired_ratios(blocks: Sequence[PairedBlock]) -> list[float]:
    """Per "on" block: its mean TPS / the mean of the mean TPS of its adjacent "off" blocks (the one before and the
    one after, where present and counted). With alternating blocks this cancels drift that is linear over three
    blocks. Blocks without counted seconds are skipped. Returns ratios in block order (1.0 = no cost)."""
    out = []
    for i, b in enumerate(blocks):
        if not b.on or b.seconds == 0:
            continue
        nb = [blocks[j].mean_tps for j in (i - 1, i + 1)
              if 0 <= j < len(blocks) and not blocks[j].on and blocks[j].seconds > 0]
        if nb and statistics.fmean(nb) > 0:
            out.append(b.mean_tps / statistics.fmean(nb))
    return out


def _block_bootstrap_ci(values: Sequence[float], *, block_len: int = 2, resamples: int = 10000,
                        seed: int = 0) -> tuple[float, float]:
    """95 % percentile interval of the mean by a moving-block bootstrap (blocks of ``block_len`` consecutive
    values, so that neighbouring pair ratios that share an "off" block stay together)."""
    n = len(values)
    if n < 2:
        return (float("nan"), float("nan"))
    block_len = max(1, min(block_len, n))
    starts = n - block_len + 1
    rng = random.Random(seed)
    means = []
    for _ in range(resamples):
        picked: list[float] = []
        while len(picked) < n:
            k = rng.randrange(starts)
            picked.extend(values[k:k + block_len])
        means.append(statistics.fmean(picked[:n]))
    means.sort()
    return (means[int(0.025 * resamples)], means[min(resamples - 1, int(0.975 * resamples))])


@dataclass(frozen=True)
class PairedObserverResult:
    """Observer effect measured within one pgbench run, observer toggled in alternating blocks.

    :ivar server_version: e.g. ``18.6``.
    :ivar observer: ``watch`` (the real ``lockscope watch`` CLI, SIGSTOP/SIGCONT) or ``blocking_pids`` (the
        ``pg_blocking_pids`` loop thread, paused/resumed).
    :ivar observer_hz: the observer's requested rate (Hz).
    :ivar achieved_hz: samples (or loop queries) per second during "on" blocks (Hz).
    :ivar clients: pgbench clients (count).
    :ivar duration_s: pgbench run length (s).
    :ivar block_s: block length (s).
    :ivar settle_s: seconds discarded after each switch (s).
    :ivar extra_indexes: extra indexes on pgbench_accounts (count).
    :ivar max_locks_per_transaction: the server's setting (count).
    :ivar blocks: the blocks in time order.
    :ivar pair_ratios: :func:`paired_ratios` of the blocks (one per "on" block, 1.0 = no cost).
    :ivar ratio_mean: mean of :attr:`pair_ratios`.
    :ivar ratio_median: median of :attr:`pair_ratios`.
    :ivar ratio_ci95: 95 % interval of the mean ratio (moving-block bootstrap, blocks of 2 pair ratios).
    :ivar pgbench_tps: pgbench's summary TPS for the whole run.
    :ivar observer_cpu_pct: CPU the observer used while "on" (client process/thread + its server backend), as % of
        the machine's capacity (all cores x "on" time); None off Linux.
    :ivar lockmanager_share: fraction (0..1) of active-session samples on LWLock:LockManager in the watch
        recording (None for ``blocking_pids``).
    """

    server_version: str
    observer: str
    observer_hz: float
    achieved_hz: float
    clients: int
    duration_s: float
    block_s: float
    settle_s: float
    extra_indexes: int
    max_locks_per_transaction: int
    blocks: tuple[PairedBlock, ...]
    pair_ratios: tuple[float, ...]
    ratio_mean: float
    ratio_median: float
    ratio_ci95: tuple[float, float]
    pgbench_tps: float
    observer_cpu_pct: float | None
    lockmanager_share: float | None

    @property
    def cost_pct(self) -> float:
        """TPS lost to the observer (%): ``(1 - ratio_mean) * 100``."""
        return (1.0 - self.ratio_mean) * 100.0

    @property
    def cost_ci95_pct(self) -> tuple[float, float]:
        """95 % interval of :attr:`cost_pct` (%, low, high)."""
        return ((1.0 - self.ratio_ci95[1]) * 100.0, (1.0 - self.ratio_ci95[0]) * 100.0)

    @property
    def below_1pct_shown(self) -> bool:
        """True when the whole 95 % interval of the cost lies below 1 %."""
        return self.cost_ci95_pct[1] < 1.0

    def mean_tps(self, on: bool) -> float:
        """Mean over counted seconds of the "on" (or "off") blocks (TPS)."""
        vals = [b.mean_tps for b in self.blocks if b.on == on and b.seconds > 0]
        return statistics.fmean(vals) if vals else float("nan")


def measure_observer_effect_paired(
    server: ScratchServer,
    *,
    observer: str = "watch",
    hz: float = 10.0,
    clients: int = DEMO_CLIENTS,
    duration_s: float = 600.0,
    block_s: float = 10.0,
    settle_s: float = 2.0,
    extra_indexes: int = DEMO_EXTRA_INDEXES,
    mlpt: int | None = DEMO_MLPT,
    prepare: bool = True,
    warmup_s: float = 3.0,
    seed: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> PairedObserverResult:
    """Measure the observer's TPS cost within ONE pgbench run (``-P 1 --progress-timestamp``), toggling the
    observer in alternating blocks of ``block_s`` (first state random from ``seed``), so that slow drift of the
    machine between runs cancels.

    One observer runs for the whole pgbench run, so its start-up is never charged to "on" blocks: for ``watch`` the
    real ``lockscope watch --dsn ... --hz N --record FILE --no-live`` CLI, stopped with SIGSTOP (no sampling, no
    CPU) and resumed with SIGCONT; for ``blocking_pids`` the ``pg_blocking_pids`` loop thread, paused and resumed.
    Per-second TPS from pgbench's progress lines is assigned to blocks by timestamp; the first ``settle_s`` seconds
    after each switch are discarded. Estimate: per "on" block, its mean TPS / the mean of its adjacent "off"
    blocks' mean TPS (:func:`paired_ratios`); mean and median over blocks, 95 % interval by moving-block bootstrap.

    :param server: a running scratch server (load goes only there).
    :param observer: one of :data:`PAIRED_OBSERVERS`.
    :param hz: the observer's rate (Hz; e.g. 10 for watch, 100 for the loop).
    :param clients: pgbench clients (count).
    :param duration_s: pgbench run length (s, >= 4 blocks).
    :param block_s: block length (s, > settle_s + 1).
    :param settle_s: seconds discarded after each switch (s, >= 0).
    :param extra_indexes: extra indexes on pgbench_accounts (count), set up when ``prepare``.
    :param mlpt: max_locks_per_transaction to run at (server restarted if it differs), None = keep.
    :param prepare: set up the schema first (:func:`prepare_contended_schema`).
    :param warmup_s: a pgbench run not counted, before the measured run (s; 0 = none).
    :param seed: chooses the first block's state and the bootstrap's resamples (None = random).
    :param progress: called with short descriptions.
    :raises BadInputError: unknown observer or out-of-range argument.
    :raises ScratchServerError, DatabaseError: when pgbench, the watch CLI or the server fails.
    """
    say = progress or (lambda _: None)
    if observer not in PAIRED_OBSERVERS:
        raise BadInputError(f"unknown paired observer {observer!r} (known: {', '.join(PAIRED_OBSERVERS)})")
    if hz <= 0 or settle_s < 0 or block_s < settle_s + 1 or duration_s < 4 * block_s:
        raise BadInputError("paired observer benchmark needs hz > 0, block_s >= settle_s + 1 and at least 4 blocks")
    seed = random.SystemRandom().randrange(2**31) if seed is None else seed
    rng = random.Random(seed)
    version, server_mlpt = _prepare_run(server, prepare=prepare, extra_indexes=extra_indexes, mlpt=mlpt,
                                        clients=clients, warmup_s=warmup_s, say=say)
    conninfo = server.conninfo()
    n_blocks = int(duration_s // block_s)
    seconds = round(n_blocks * block_s)
    first_on = rng.random() < 0.5
    states = [(k % 2 == 0) == first_on for k in range(n_blocks)]

    with tempfile.TemporaryDirectory(prefix="lockscope-observer-paired-") as tmp:
        record = Path(tmp) / "watch.db"
        watch: _WatchProcess | None = None
        loop: _BlockingLoop | None = None
        if observer == "watch":
            watch = _WatchProcess(conninfo, hz, record, ("--duration", f"{seconds + 600}s"))
        else:
            loop = _BlockingLoop(conninfo, hz)

        def switch(on: bool) -> None:
            if watch is not None:
                watch.proc.send_signal(signal.SIGCONT if on else signal.SIGSTOP)
            elif loop is not None:
                (loop.resume if on else loop.pause)()

        try:
            if watch is not None:
                watch.wait_sampling()
                paths = watch.cpu_paths()
            else:
                assert loop is not None
                loop.start()
                paths = [f"/proc/{os.getpid()}/task/{loop.thread_id}/stat", f"/proc/{loop.backend_pid}/stat"]
            switch(states[0])
            time.sleep(0.2)
            cpu0 = [_cpu_s(p) for p in paths]
            calls_at: list[int] = []
            say(f"pgbench {seconds} s with {observer} at {hz:g} Hz toggled every {block_s:g} s "
                f"({n_blocks} blocks, first {'on' if first_on else 'off'}, seed {seed})")
            with start_pgbench(server, clients=clients, duration_s=seconds,
                               extra_args=("-P", "1", "--progress-timestamp")) as run:
                t0 = time.time()
                switched: list[float] = []
                for k in range(n_blocks):
                    due = t0 + k * block_s
                    delay = due - time.time()
                    if delay > 0:
                        time.sleep(delay)
                    if k > 0:
                        switch(states[k])
                    switched.append(time.time())
                    calls_at.append(loop.calls if loop is not None else 0)
                    if k % 6 == 0:
                        say(f"block {k + 1}/{n_blocks} ({'on' if states[k] else 'off'})")
                while run.running:
                    time.sleep(0.2)
                calls_at.append(loop.calls if loop is not None else 0)
                cpu1 = [_cpu_s(p) for p in paths]
                # pgbench's output file is read here, before wait() parses and closes it (it keeps the
                # per-second progress lines we need; wait() returns the summary only).
                run._output.seek(0)
                text = run._output.read().decode(errors="replace")
                summary = run.wait()
            switch(True)
            ends = [*switched[1:], t0 + seconds]
            rows = parse_progress(text)
            blocks = []
            for on, start, end in zip(states, switched, ends, strict=False):
                tps = [v for t, v in rows if t - 1.0 >= start + settle_s - 1e-6 and t <= end + 0.05]
                blocks.append(PairedBlock(on=on, start_s=start, end_s=end, seconds=len(tps),
                                          mean_tps=statistics.fmean(tps) if tps else float("nan")))
            on_s = sum(e - s for on, s, e in zip(states, switched, ends, strict=False) if on)
            cpu_pct = None
            if all(v is not None for v in cpu0 + cpu1) and on_s > 0:
                used = sum(v for v in cpu1 if v is not None) - sum(v for v in cpu0 if v is not None)
                cpu_pct = 100.0 * used / (on_s * (os.cpu_count() or 1))
        finally:
            if watch is not None:
                if watch.proc.poll() is None:
                    watch.proc.send_signal(signal.SIGCONT)
                watch.stop()
            if loop is not None:
                loop.resume()
                loop.stop()
        # after the watch process has exited: its recording holds every sample
        if watch is not None:
            samples = watch._samples()
            n_on = sum(1 for t in samples
                       for on, s, e in zip(states, switched, ends, strict=False) if on and s <= t < e)
            achieved = achieved_hz(n_on, on_s)
            share: float | None = watch.lockmanager_share()
        else:
            calls = sum(calls_at[k + 1] - calls_at[k] for k in range(n_blocks) if states[k])
            achieved = achieved_hz(calls, on_s)
            share = None
    ratios = paired_ratios(blocks)
    if not ratios:
        raise ScratchServerError("paired observer benchmark: no on/off block pair had pgbench progress lines")
    return PairedObserverResult(
        server_version=version,
        observer=observer,
        observer_hz=float(hz),
        achieved_hz=achieved,
        clients=clients,
        duration_s=float(seconds),
        block_s=float(block_s),
        settle_s=float(settle_s),
        extra_indexes=extra_indexes,
        max_locks_per_transaction=server_mlpt,
        blocks=tuple(blocks),
        pair_ratios=tuple(ratios),
        ratio_mean=statistics.fmean(ratios),
        ratio_median=statistics.median(ratios),
        ratio_ci95=_block_bootstrap_ci(ratios, seed=seed),
        pgbench_tps=summary.tps,
        observer_cpu_pct=cpu_pct,
        lockmanager_share=share,
    )
