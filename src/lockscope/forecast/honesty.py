"""No silent re-anchoring (issue 27): when the model's first estimate of the present is more than
:data:`lockscope.forecast.live.ANCHOR_TOLERANCE` off the measured calls/s, the headline says so, with the reasons
found, and a ``--fail-on`` gate judges nothing.

The reasons looked for, each from what was measured over the interval:

- **uncovered statements**: the statements not in the model carry more than :data:`UNCOVERED_LINE` of the calls
  or of the execution time (:class:`lockscope.workload.coverage.Coverage`);
- **unknown costs**: statements in the model whose own execution time is unknown (no pg_stat_statements time: a
  fallback stands in) carry more than :data:`UNCOVERED_LINE` of the modelled calls;
- **waits the model lacks**: more than :data:`OTHER_WAITS_LINE` of the sampled active sessions wait on events
  other than the CPU and ``LWLock:LockManager`` (I/O, heavyweight locks, other LWLocks, the client...), which the
  model has no term for.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..shapes import StatementShape
from ..workload.coverage import Coverage
from .live import ANCHOR_TOLERANCE, Anchor, LivePoint

__all__ = ["OTHER_WAITS_LINE", "UNCOVERED_LINE", "ModelCheck", "check_model", "other_waits"]

#: Uncovered calls or time, or calls of unknown cost, above this share are a reason (fraction).
UNCOVERED_LINE = 0.05
#: Active sessions waiting on anything but the CPU and LockManager above this share are a reason (fraction).
OTHER_WAITS_LINE = 0.2


@dataclass(frozen=True)
class ModelCheck:
    """The model's first estimate of the present against the measurement.

    :ivar off: first estimate / measured calls/s - 1 (fraction).
    :ivar reasons: the reasons found, in words (empty: none found).
    """

    off: float
    reasons: tuple[str, ...]

    @property
    def headline(self) -> str:
        """The first line of the verdict: ``the model does not reproduce the present: ...``."""
        why = "; ".join(self.reasons) if self.reasons else (
            "no reason found among coverage, unknown costs and unmodelled waits (calibration of another machine?)")
        return (f"the model does not reproduce the present: its first estimate is {100 * self.off:+.0f} % off the "
                f"measured calls/s (beyond {100 * ANCHOR_TOLERANCE:.0f} %); why: {why}")


def check_model(anchor: Anchor | None, live: LivePoint | None, coverage: Coverage | None,
                shapes: Sequence[StatementShape]) -> ModelCheck | None:
    """The check of the first estimate, None when it is within :data:`ANCHOR_TOLERANCE` (or nothing was measured).

    :param shapes: the modelled statement plans (their ``own_s`` None = unknown cost; ``calls`` their weights).
    """
    if anchor is None or abs(anchor.off) <= ANCHOR_TOLERANCE:
        return None
    reasons = []
    if coverage is not None and coverage.low < 1.0 - UNCOVERED_LINE:
        time = "" if coverage.time_share is None else f", {100 * (1 - coverage.time_share):.0f} % of execution time"
        reasons.append(f"statements not in the model carry {100 * (1 - coverage.calls_share):.0f} % of calls{time}")
    calls = sum(s.calls for s in shapes)
    unknown = sum(s.calls for s in shapes if s.own_s is None)
    if calls > 0 and unknown / calls > UNCOVERED_LINE:
        reasons.append(f"{100 * unknown / calls:.0f} % of the modelled calls have an unknown execution time (a "
                       "fallback cost stands in)")
    waits = other_waits(live)
    if waits is not None:
        reasons.append(waits)
    return ModelCheck(anchor.off, tuple(reasons))


def other_waits(live: LivePoint | None) -> str | None:
    """The waits the model lacks, in words, when more than :data:`OTHER_WAITS_LINE` of the sampled active
    sessions wait on events other than the CPU and ``LWLock:LockManager`` (1 - AAS on CPU / AAS - the LockManager
    share); None below that line or without active samples. Workload mode gives it as a reason of a first
    estimate off the present; statement mode as a note (its first estimate is not checked: the statement may be
    one of many the sampled sessions run)."""
    if live is None or live.aas <= 0:
        return None
    other = max(0.0, 1.0 - live.aas_cpu / live.aas - live.lockmanager_share)
    if other <= OTHER_WAITS_LINE:
        return None
    return (f"{100 * other:.0f} % of the sampled active sessions wait on events the model lacks "
            "(neither CPU nor LWLock:LockManager)")
