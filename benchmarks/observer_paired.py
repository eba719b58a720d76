"""The observer effect measured within ONE pgbench run (the paired method), for benchmarks/observer_effect.py
``--paired`` and benchmarks/probe_cost.py (:func:`parse_progress`); the test suite runs it once, short.

One observer (both from :mod:`lockscope.lab.observer_effect`) runs for the whole pgbench run, so its start-up is
never charged to "on" blocks: for ``watch`` the real ``lockscope watch --dsn ... --hz N --record FILE --no-live``
CLI, stopped with SIGSTOP (no sampling, no CPU) and resumed with SIGCONT; for ``blocking_pids`` the
``pg_blocking_pids`` loop thread, paused and resumed. Per-second TPS from pgbench's progress lines is assigned to
blocks by timestamp; the first ``settle_s`` seconds after each switch are discarded. Estimate: per "on" block, its
mean TPS / the mean of its adjacent "off" blocks' mean TPS (:func:`paired_ratios`), which cancels slow drift of the
machine; mean and median over blocks, 95 % interval by moving-block bootstrap. Load goes only to the scratch server
given.

Importable as ``benchmarks.observer_paired`` from the repository root (the tests; the benchmark scripts put the
root on ``sys.path``).
"""

from __future__ import annotations

import os
import random
import re
import signal
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from lockscope.demo_load import DEMO_CLIENTS, DEMO_EXTRA_INDEXES, DEMO_MLPT
from lockscope.errors import BadInputError, ScratchServerError
from lockscope.lab.observer_effect import BlockingLoop, WatchProcess, cpu_seconds, prepare_run
from lockscope.pgbench import PgbenchResult, start_pgbench
from lockscope.server import ScratchServer
from lockscope.watch.aas import achieved_hz

__all__ = [
    "PAIRED_OBSERVERS",
    "PairedBlock",
    "PairedObserverResult",
    "measure_observer_effect_paired",
    "paired_ratios",
    "parse_progress",
]

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
    server: ScratchServer, *, observer: str = "watch", hz: float = 10.0, clients: int = DEMO_CLIENTS,
    duration_s: float = 600.0, block_s: float = 10.0, settle_s: float = 2.0, extra_indexes: int = DEMO_EXTRA_INDEXES,
    mlpt: int | None = DEMO_MLPT, prepare: bool = True, warmup_s: float = 3.0, seed: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> PairedObserverResult:
    """Measure the observer's TPS cost within ONE pgbench run (``-P 1 --progress-timestamp``), toggling the
    observer in alternating blocks of ``block_s`` (first state random from ``seed``), so that slow drift of the
    machine between runs cancels.

    The method in detail: the module docstring.

    :param server: a running scratch server (load goes only there).
    :param observer: one of :data:`PAIRED_OBSERVERS`.
    :param hz: the observer's rate (Hz; e.g. 10 for watch, 100 for the loop).
    :param clients: pgbench clients (count).
    :param duration_s: pgbench run length (s, >= 4 blocks).
    :param block_s: block length (s, > settle_s + 1).
    :param settle_s: seconds discarded after each switch (s, >= 0).
    :param extra_indexes: extra indexes on pgbench_accounts (count), set up when ``prepare``.
    :param mlpt: max_locks_per_transaction to run at (server restarted if it differs), None = keep.
    :param prepare: set up the schema first (:func:`lockscope.demo_load.prepare_contended_schema`).
    :param warmup_s: a pgbench run not counted, before the measured run (s; 0 = none).
    :param seed: chooses the first block's state and the bootstrap's resamples (None = random).
    :param progress: called with short descriptions.
    :raises BadInputError: unknown observer or out-of-range argument.
    :raises ScratchServerError, DatabaseError: when pgbench, the watch CLI or the server fails.
    """
    say = progress or (lambda _: None)
    _check_paired(observer, hz=hz, duration_s=duration_s, block_s=block_s, settle_s=settle_s)
    seed = random.SystemRandom().randrange(2**31) if seed is None else seed
    version, server_mlpt = prepare_run(server, prepare=prepare, extra_indexes=extra_indexes, mlpt=mlpt,
                                       clients=clients, warmup_s=warmup_s, say=say)
    n_blocks = int(duration_s // block_s)
    seconds = round(n_blocks * block_s)
    first_on = random.Random(seed).random() < 0.5
    states = [(k % 2 == 0) == first_on for k in range(n_blocks)]
    announce = (f"pgbench {seconds} s with {observer} at {hz:g} Hz toggled every {block_s:g} s "
                f"({n_blocks} blocks, first {'on' if first_on else 'off'}, seed {seed})")
    run, achieved, share = _observed_run(server, observer, hz, states, clients=clients, seconds=seconds,
                                         block_s=block_s, announce=announce, say=say)
    blocks = run.blocks(states, settle_s)
    ratios = paired_ratios(blocks)
    if not ratios:
        raise ScratchServerError("paired observer benchmark: no on/off block pair had pgbench progress lines")
    return PairedObserverResult(
        server_version=version, observer=observer, observer_hz=float(hz), achieved_hz=achieved, clients=clients,
        duration_s=float(seconds), block_s=float(block_s), settle_s=float(settle_s), extra_indexes=extra_indexes,
        max_locks_per_transaction=server_mlpt, blocks=tuple(blocks),
        pair_ratios=tuple(ratios), ratio_mean=statistics.fmean(ratios), ratio_median=statistics.median(ratios),
        ratio_ci95=_block_bootstrap_ci(ratios, seed=seed), pgbench_tps=run.summary.tps,
        observer_cpu_pct=run.cpu_pct(states), lockmanager_share=share,
    )


def _observed_run(server: ScratchServer, observer: str, hz: float, states: Sequence[bool], *, clients: int,
                  seconds: int, block_s: float, announce: str,
                  say: Callable[[str], None]) -> tuple[_PairedRun, float, float | None]:
    """The observer started, the pgbench run with it toggled (:func:`_run_blocks`), the observer stopped.

    :return: (the run, the observer's achieved rate while on (Hz), the watch recording's LockManager share or None).
    """
    with tempfile.TemporaryDirectory(prefix="lockscope-observer-paired-") as tmp:
        toggled = _ToggledObserver(observer, server.conninfo(), hz, Path(tmp) / "watch.db", seconds)
        try:
            paths = toggled.start()
            run = _run_blocks(server, toggled, states, paths, clients=clients, seconds=seconds, block_s=block_s,
                              announce=announce, say=say)
        finally:
            toggled.stop()
        # after the watch process has exited: its recording holds every sample
        achieved, share = toggled.rate_and_share(run, states)
    return run, achieved, share


def _check_paired(observer: str, *, hz: float, duration_s: float, block_s: float, settle_s: float) -> None:
    """:raises BadInputError: unknown observer or out-of-range argument."""
    if observer not in PAIRED_OBSERVERS:
        raise BadInputError(f"unknown paired observer {observer!r} (known: {', '.join(PAIRED_OBSERVERS)})")
    if hz <= 0 or settle_s < 0 or block_s < settle_s + 1 or duration_s < 4 * block_s:
        raise BadInputError("paired observer benchmark needs hz > 0, block_s >= settle_s + 1 and at least 4 blocks")


@dataclass(frozen=True)
class _PairedRun:
    """What one paired pgbench run recorded.

    :ivar switched: Unix time (s) each block's state was switched.
    :ivar ends: Unix time (s) each block ended (the next switch, or the run's planned end).
    :ivar calls_at: the loop's query count at each switch and at the end (zeros for ``watch``).
    :ivar cpu_before: CPU seconds of the observer's process/thread and backend before the run (None: unreadable).
    :ivar cpu_after: the same after the run.
    :ivar progress_text: pgbench's output with its per-second progress lines.
    :ivar summary: pgbench's summary.
    """

    switched: list[float]
    ends: list[float]
    calls_at: list[int]
    cpu_before: list[float | None]
    cpu_after: list[float | None]
    progress_text: str
    summary: PgbenchResult

    def on_seconds(self, states: Sequence[bool]) -> float:
        """Time the observer was on (s)."""
        return sum(e - s for on, s, e in zip(states, self.switched, self.ends, strict=False) if on)

    def blocks(self, states: Sequence[bool], settle_s: float) -> list[PairedBlock]:
        """The blocks, each with the progress intervals after its first ``settle_s`` seconds."""
        rows = parse_progress(self.progress_text)
        blocks = []
        for on, start, end in zip(states, self.switched, self.ends, strict=False):
            tps = [v for t, v in rows if t - 1.0 >= start + settle_s - 1e-6 and t <= end + 0.05]
            blocks.append(PairedBlock(on=on, start_s=start, end_s=end, seconds=len(tps),
                                      mean_tps=statistics.fmean(tps) if tps else float("nan")))
        return blocks

    def cpu_pct(self, states: Sequence[bool]) -> float | None:
        """The observer's CPU while on, as % of all cores over the on time; None when a reading failed."""
        on_s = self.on_seconds(states)
        if not all(v is not None for v in self.cpu_before + self.cpu_after) or on_s <= 0:
            return None
        used = sum(v for v in self.cpu_after if v is not None) - sum(v for v in self.cpu_before if v is not None)
        return 100.0 * used / (on_s * (os.cpu_count() or 1))


class _ToggledObserver:
    """The observer of a paired run: one ``lockscope watch`` process (SIGSTOP/SIGCONT) or one ``pg_blocking_pids``
    loop thread (paused/resumed). The watch process starts when this is made; the loop in :meth:`start`."""

    def __init__(self, observer: str, conninfo: str, hz: float, record: Path, seconds: int) -> None:
        self.watch = WatchProcess(conninfo, hz, record, ("--duration", f"{seconds + 600}s")) \
            if observer == "watch" else None
        self.loop = BlockingLoop(conninfo, hz) if self.watch is None else None

    def start(self) -> list[str]:
        """Wait until the observer runs; the /proc stat files of its process or thread and of its backend."""
        if self.watch is not None:
            self.watch.wait_sampling()
            return self.watch.cpu_paths()
        assert self.loop is not None
        self.loop.start()
        return [f"/proc/{os.getpid()}/task/{self.loop.thread_id}/stat", f"/proc/{self.loop.backend_pid}/stat"]

    def switch(self, on: bool) -> None:
        """Resume (on) or stop (off) sampling."""
        if self.watch is not None:
            self.watch.proc.send_signal(signal.SIGCONT if on else signal.SIGSTOP)
        elif self.loop is not None:
            (self.loop.resume if on else self.loop.pause)()

    @property
    def calls(self) -> int:
        """Queries the loop made so far (0 for ``watch``)."""
        return self.loop.calls if self.loop is not None else 0

    def stop(self) -> None:
        """Resume and stop the observer (the watch process exits and completes its recording)."""
        if self.watch is not None:
            if self.watch.proc.poll() is None:
                self.watch.proc.send_signal(signal.SIGCONT)
            self.watch.stop()
        if self.loop is not None:
            self.loop.resume()
            self.loop.stop()

    def rate_and_share(self, run: _PairedRun, states: Sequence[bool]) -> tuple[float, float | None]:
        """Achieved rate while on (Hz) and, for ``watch``, the recording's LockManager share (after :meth:`stop`)."""
        on_s = run.on_seconds(states)
        if self.watch is not None:
            samples = self.watch.samples()
            n_on = sum(1 for t in samples
                       for on, s, e in zip(states, run.switched, run.ends, strict=False) if on and s <= t < e)
            return achieved_hz(n_on, on_s), self.watch.lockmanager_share()
        calls = sum(run.calls_at[k + 1] - run.calls_at[k] for k in range(len(states)) if states[k])
        return achieved_hz(calls, on_s), None


def _run_blocks(server: ScratchServer, toggled: _ToggledObserver, states: Sequence[bool], paths: Sequence[str], *,
                clients: int, seconds: int, block_s: float, announce: str, say: Callable[[str], None]) -> _PairedRun:
    """One pgbench run of ``seconds`` with ``-P 1 --progress-timestamp``, the observer switched to ``states[k]`` at
    the start of block ``k`` (``announce`` said just before pgbench starts); the observer is left on."""
    toggled.switch(states[0])
    time.sleep(0.2)
    cpu_before = [cpu_seconds(p) for p in paths]
    calls_at: list[int] = []
    say(announce)
    with start_pgbench(server, clients=clients, duration_s=seconds,
                       extra_args=("-P", "1", "--progress-timestamp")) as run:
        t0 = time.time()
        switched: list[float] = []
        for k, state in enumerate(states):
            delay = t0 + k * block_s - time.time()
            if delay > 0:
                time.sleep(delay)
            if k > 0:
                toggled.switch(state)
            switched.append(time.time())
            calls_at.append(toggled.calls)
            if k % 6 == 0:
                say(f"block {k + 1}/{len(states)} ({'on' if state else 'off'})")
        while run.running:
            time.sleep(0.2)
        calls_at.append(toggled.calls)
        cpu_after = [cpu_seconds(p) for p in paths]
        # pgbench's output file is read here, before wait() parses and closes it (it keeps the
        # per-second progress lines we need; wait() returns the summary only).
        run._output.seek(0)
        text = run._output.read().decode(errors="replace")
        summary = run.wait()
    toggled.switch(True)
    return _PairedRun(switched=switched, ends=[*switched[1:], t0 + seconds], calls_at=calls_at,
                      cpu_before=cpu_before, cpu_after=cpu_after, progress_text=text, summary=summary)
