"""The sampled LockManager share's 95 % interval (issue 27): batch means over seconds of samples (pure: batches and
samples made here; the interval on a real load is checked by tests/test_diagnose.py and tests/test_forecast.py)."""

from __future__ import annotations

import pytest

from lockscope.diagnose.engine import status_otherwise
from lockscope.forecast.live import Anchor, live_point
from lockscope.watch.aas import CPU, LOCK_MANAGER, share_interval
from lockscope.watch.engine import WatchSummary
from lockscope.watch.sampler import ActiveSession, Sample


def test_steady_batches_leave_no_doubt() -> None:
    got = share_interval([(10, 5), (20, 10), (8, 4)])
    assert got is not None
    assert got.share == pytest.approx(0.5) and got.half_width == pytest.approx(0.0) and got.batches == 3


def test_a_bursty_share_is_wide() -> None:
    # four seconds of 10 active-session samples each: none, all, half, half waiting. Worked by hand: share 0.5,
    # batch residuals 25 + 25 + 0 + 0, standard error sqrt(50 / 12) / 10 = 0.2041, t(3) = 3.182
    got = share_interval([(10, 0), (10, 10), (10, 5), (10, 5)])
    assert got is not None
    assert got.share == pytest.approx(0.5)
    assert got.half_width == pytest.approx(0.6495, abs=1e-4)
    assert (got.low, got.high) == (0.0, 1.0)  # clipped to the possible shares


def test_no_wait_seen_is_not_proof_of_none() -> None:
    # four seconds without a sample in the wait: 1 - 0.05 ** (1 / 4) = 1 - 0.4729 (a burst could hide in 4 looks);
    # thirty seconds: 1 - 0.9050
    short = share_interval([(10, 0)] * 4)
    assert short is not None and short.share == 0.0 and short.half_width == pytest.approx(0.5271, abs=1e-4)
    long = share_interval([(10, 0)] * 30)
    assert long is not None and long.half_width == pytest.approx(0.0950, abs=1e-4)
    every = share_interval([(10, 10)] * 4)  # every sample in the wait: the same doubt, from above
    assert every is not None and every.half_width == pytest.approx(0.5271, abs=1e-4) and every.high == 1.0


def test_seconds_without_active_sessions_do_not_count() -> None:
    assert share_interval([(10, 1), (0, 0), (0, 0), (12, 1)]) is None  # two batches saw a session: no interval
    got = share_interval([(10, 1), (0, 0), (10, 1), (10, 1)])
    assert got is not None and got.batches == 3


def _samples(per_tick: list[tuple[int, int]], hz: float) -> list[Sample]:
    """One sample per entry: (active client backends, of which on LockManager)."""
    out = []
    for i, (active, lm) in enumerate(per_tick):
        sessions = tuple(ActiveSession(100 + k, "client backend", "active",
                                       "LWLock" if k < lm else None, "LockManager" if k < lm else None,
                                       None, "app", None, None, None, None) for k in range(active))
        out.append(Sample(1000.0 + i / hz, float(i) / hz, sessions))
    return out


def test_statement_modes_two_seconds_still_give_an_interval() -> None:
    # 2 s at 10 Hz: 20 samples, 4 half-second batches; the first second all waiting, the second none
    samples = _samples([(2, 2)] * 10 + [(2, 0)] * 10, hz=10.0)
    live = live_point(samples, 100.0, "app")
    assert live.lockmanager_share == pytest.approx(0.5)
    assert live.lockmanager_interval is not None and live.lockmanager_interval.batches == 4
    assert live.lockmanager_interval.half_width > 0.5


def test_the_guard_refuses_a_share_the_sample_cannot_judge() -> None:
    steady = share_interval([(10, 5)] * 6)
    bursty = share_interval([(10, 0), (10, 10)] * 3)
    assert steady is not None and bursty is not None
    near = Anchor(1000.0, 1000.0, 1.0, 1000.0, 0.45, 0.5, steady)
    assert near.lockmanager_reproduced and not near.sampled_too_uncertain
    unsure = Anchor(1000.0, 1000.0, 1.0, 1000.0, 0.45, 0.5, bursty)
    assert unsure.sampled_too_uncertain and not unsure.lockmanager_reproduced
    assert "too short" in unsure.lockmanager_refusal() and "+-" in unsure.lockmanager_refusal()
    far = Anchor(1000.0, 1000.0, 1.0, 1000.0, 0.05, 0.5, steady)
    assert not far.lockmanager_reproduced and "cannot reproduce it" in far.lockmanager_refusal()
    unknown = Anchor(1000.0, 1000.0, 1.0, 1000.0, 0.45, 0.5)  # no interval: the 10-point rule alone
    assert unknown.lockmanager_reproduced


def _watched(batches: list[tuple[int, int]]) -> WatchSummary:
    """A 10 Hz watch of ``len(batches)`` seconds with these (active, on LockManager) samples per second."""
    active, lm = sum(a for a, _ in batches), sum(w for _, w in batches)
    return WatchSummary(duration_s=float(len(batches)), ticks=10 * len(batches), late_ticks=0, hz=10.0,
                        by_wait={LOCK_MANAGER: lm, CPU: active - lm}, gaps=(), top_statements=(), record_path=None,
                        samples_recorded=0, end_reason="duration", server_version="18.6", query_errors=0,
                        lockmanager_batches=tuple(batches))


def test_a_status_the_samples_cannot_decide_names_the_other_one() -> None:
    # five bursty seconds, 40 % waiting (interval 0-100 %, across the 10 % contention line): contention, or what
    # the main-lock-table rate gives without it
    bursty = _watched([(20, 20), (20, 0), (20, 20), (20, 0), (20, 0)])
    assert status_otherwise(bursty, 0.0) == "healthy"
    assert status_otherwise(bursty, 5000.0) == "risk"
    # five seconds at 4 % with one burst (interval 0-15 %): healthy, or contention
    low = _watched([(20, 4), (20, 0), (20, 0), (20, 0), (20, 0)])
    assert status_otherwise(low, 0.0) == "contention"
    # 0.2 active sessions, one burst (share 10 %, interval 0-38 %): at the interval's top 0.08 sessions would wait,
    # fewer than contention needs (0.1): the samples decide healthy
    assert status_otherwise(_watched([(2, 0)] * 4 + [(2, 1)]), 0.0) is None
    # steady seconds decide: 40 % every second, or no wait in thirty seconds (interval 0-9.5 %)
    assert status_otherwise(_watched([(20, 8)] * 5), 0.0) is None
    assert status_otherwise(_watched([(20, 0)] * 30), 0.0) is None
