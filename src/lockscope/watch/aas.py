"""The figures of active-session sampling, defined once: AAS, shares of active-session samples, achieved rate.

Every summary of samples (:class:`~lockscope.watch.sampler.WaitSummary`, :class:`~lockscope.watch.engine.WatchSummary`,
:class:`~lockscope.watch.recorded.RecordingSummary`, :class:`~lockscope.watch.window.LiveStats`, the lab's load
figures and the observer benchmark) computes them with these functions. Terms:

- a *tick* is one sample of pg_stat_activity (one query); ``ticks`` counts them;
- an *active-session sample* is one active session seen in one tick; ``active_session_samples`` counts them over
  the ticks (a tick with 3 active sessions adds 3);
- a *wait label* is ``type:event`` from pg_stat_activity (``wait_event_type:wait_event``) or :data:`CPU` when the
  session is not waiting.

Pure functions, no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["CPU", "LOCK_MANAGER", "MAX_HZ", "MIN_BATCHES", "MIN_HZ", "ShareInterval", "WaitTotals", "aas",
           "achieved_hz", "sampled_error", "share", "share_interval"]

#: Sampling rates lockscope accepts (Hz): below 1 a sample says little; above 100 the observer costs too much
#: (BENCHMARKS.md, "watch: observer effect").
MIN_HZ = 1.0
MAX_HZ = 100.0
#: The wait event this project exists for, as ``type:event``.
LOCK_MANAGER = "LWLock:LockManager"
#: Label for an active session with no wait event (running on CPU, or waiting on something not instrumented).
CPU = "CPU"


def aas(active_session_samples: float, ticks: int) -> float:
    """Average active sessions (sessions) = active-session samples / ticks.

    :param active_session_samples: active sessions summed over the ticks (count; all of them, or those of one
        wait label for the AAS of that wait).
    :param ticks: samples taken (count).
    :return: sessions; 0.0 without ticks.
    """
    return active_session_samples / ticks if ticks else 0.0


def share(samples: float, active_session_samples: float) -> float:
    """Fraction (0..1) of active-session samples: ``samples`` (those of one wait label) / ``active_session_samples``
    (all of them); 0.0 when there are none. The *LockManager share* is ``share(samples waiting on
    LWLock:LockManager, active-session samples)``; the CPU share the same with :data:`CPU`."""
    return samples / active_session_samples if active_session_samples else 0.0


def achieved_hz(ticks: int, elapsed_s: float) -> float:
    """Achieved sampling rate (Hz) = ticks / elapsed seconds, the ticks being those taken within the elapsed time.

    The one formula for every rate lockscope reports (watch summary, live view, recording, observer benchmark);
    callers choose the interval: a watch passes all its ticks and its wall time from start to stop; the live view
    the ticks of its last complete seconds and their number; a recording, known only by its samples' timestamps,
    the ticks after the first one (``ticks - 1``) and the time from the first to the last sample.

    :return: Hz; 0.0 when ``elapsed_s`` is not positive.
    """
    return ticks / elapsed_s if elapsed_s > 0 else 0.0


class WaitTotals:
    """Mixin for a frozen dataclass with ``ticks`` (count), ``by_wait`` (wait label -> active-session samples,
    count) and ``lockmanager_batches`` (per second sampled: active-session samples, of which on LWLock:LockManager;
    counts): the totals derived from them (:class:`~lockscope.watch.engine.WatchSummary`,
    :class:`~lockscope.watch.recorded.RecordingSummary`)."""

    ticks: int
    by_wait: dict[str, int]
    lockmanager_batches: tuple[tuple[int, int], ...]

    @property
    def active_session_samples(self) -> int:
        """Active sessions summed over the ticks (count)."""
        return sum(self.by_wait.values())

    @property
    def lockmanager_samples(self) -> int:
        """Active-session samples waiting on LWLock:LockManager (count)."""
        return self.by_wait.get(LOCK_MANAGER, 0)

    @property
    def aas(self) -> float:
        """Average active sessions over the ticks (sessions), :func:`aas`."""
        return aas(self.active_session_samples, self.ticks)

    @property
    def lockmanager_interval(self) -> ShareInterval | None:
        """The LockManager share with its 95 % confidence interval over the one-second batches
        (:func:`share_interval`); None with fewer than :data:`MIN_BATCHES` seconds that saw an active session."""
        return share_interval(self.lockmanager_batches)


#: Two-sided 95 % quantiles of Student's t for 1..30 degrees of freedom (standard tables).
_T95 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
        2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)
#: Batches a share's interval needs (count): fewer say nothing about its spread.
MIN_BATCHES = 3


@dataclass(frozen=True)
class ShareInterval:
    """A sampled share with its 95 % confidence interval.

    :ivar share: the share over all batches (fraction 0..1): samples of the wait / active-session samples.
    :ivar half_width: the interval's half width (fraction; 0.12 = +-12 points).
    :ivar batches: the batches it was estimated from (count; one per second of sampling).
    """

    share: float
    half_width: float
    batches: int

    @property
    def low(self) -> float:
        """The interval's lower end, at least 0 (fraction)."""
        return max(0.0, self.share - self.half_width)

    @property
    def high(self) -> float:
        """The interval's upper end, at most 1 (fraction)."""
        return min(1.0, self.share + self.half_width)


def share_interval(batches: Sequence[tuple[int, int]]) -> ShareInterval | None:
    """The share of active-session samples in one wait, with its 95 % confidence interval from batch means.

    Active sessions sampled in the same second are not independent (a convoy puts many backends in one wait at
    once, and lasts milliseconds to seconds), so the spread comes from the batches, not from the single samples:
    the ratio estimator's standard error over the batches times Student's t with ``batches - 1`` degrees of
    freedom. Batches of one second each, so the interval is a lower bound when the load changes regime over
    longer spans (BENCHMARKS.md, "what the sampled LockManager share is worth as a judge"). When no sample is in
    the wait (or every one is), the batches cannot vary: the half width is then at least ``1 - 0.05^(1/n)`` over
    ``n`` batches (a bursty wait unseen in n looks, 95 % one-sided: 0.53 for 4 batches, 0.095 for 30), so a short
    sample that saw no wait does not vouch for a model's 0 %.

    :param batches: per batch ``(active-session samples, samples in the wait)`` (counts, the second <= the first).
    :return: the interval; None with fewer than :data:`MIN_BATCHES` batches that saw an active session.
    """
    seen = [(a, w) for a, w in batches if a > 0]
    n = len(seen)
    if n < MIN_BATCHES:
        return None
    total = sum(a for a, _ in seen)
    ratio = sum(w for _, w in seen) / total
    mean_active = total / n
    residuals = sum((w - ratio * a) ** 2 for a, w in seen)
    se = math.sqrt(residuals / (n * (n - 1))) / mean_active
    df = n - 1
    t = _T95[df - 1] if df <= len(_T95) else 1.96 + 2.4 / df  # beyond the table: within 0.003 of the quantile
    half = t * se
    if ratio in (0.0, 1.0):
        # no sample in the wait (or all of them): the batches do not vary, and the spread says nothing. A wait that
        # comes in bursts could still hold this share of the time unseen in n one-batch looks, 95 % one-sided
        half = max(half, 1.0 - 0.05 ** (1.0 / n))
    return ShareInterval(ratio, half, n)


def sampled_error(interval: ShareInterval | None) -> str:
    """`` +-N points (95 %)`` for a sampled share's interval, "" when unknown (for reports)."""
    if interval is None:
        return ""
    return f" +-{100 * interval.half_width:.0f} points (95 %)"
