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

__all__ = ["CPU", "LOCK_MANAGER", "MAX_HZ", "MIN_HZ", "WaitTotals", "aas", "achieved_hz", "share"]

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
    """Mixin for a frozen dataclass with ``ticks`` (count) and ``by_wait`` (wait label -> active-session samples,
    count): the totals derived from them (:class:`~lockscope.watch.engine.WatchSummary`,
    :class:`~lockscope.watch.recorded.RecordingSummary`)."""

    ticks: int
    by_wait: dict[str, int]

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
