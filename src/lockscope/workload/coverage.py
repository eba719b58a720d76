"""Coverage: how much of the interval's work the model holds (issue 27, "coverage before accuracy").

A forecast or a diagnosis is only as good as the statements it models. Every one states its coverage: the share
of the interval's calls and of its execution time (pg_stat_statements ``calls`` and ``total_exec_time`` deltas)
that belongs to statements in the model, and each statement carrying at least
:data:`lockscope.workload.statements.COVERAGE_FLOOR` of either that is not in it, with the reason (skipped by the
parser, not typable even with typed stand-ins, a probe the server refused, no calls in the interval). The
denominator is every visible statement that may lock a relation (lockscope's own queries and utility statements
left out, :attr:`lockscope.workload.statements.Workload.total_calls_per_s`).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..vocab import FootprintSource
from .statements import COVERAGE_FLOOR, Workload

if TYPE_CHECKING:
    from .probes import StatementAudit

__all__ = ["Coverage", "Uncovered", "coverage_of"]


@dataclass(frozen=True)
class Uncovered:
    """A statement carrying a large share of the interval that is not in the model.

    :ivar queryid: pg_stat_statements queryid.
    :ivar query: its text on one line (at most 120 characters).
    :ivar calls_share: its share of the interval's calls (0..1).
    :ivar time_share: its share of the execution time (0..1).
    :ivar reason: why it is not in the model.
    """

    queryid: int
    query: str
    calls_share: float
    time_share: float
    reason: str


@dataclass(frozen=True)
class Coverage:
    """The share of the interval the model holds.

    :ivar calls_share: modelled statements' calls / all calls (0..1).
    :ivar time_share: modelled statements' execution time / all execution time (0..1), None when
        pg_stat_statements recorded no execution time.
    :ivar statements_modelled: statements in the model (count).
    :ivar uncovered: statements not in the model with at least :data:`COVERAGE_FLOOR` of calls or time, largest
        first.
    :ivar standins: statements probed with typed stand-ins (count).
    :ivar derived: statements whose footprint was derived from the catalog, not measured: the role may not EXPLAIN
        them (count; :mod:`lockscope.privileges`).
    """

    calls_share: float
    time_share: float | None
    statements_modelled: int
    uncovered: tuple[Uncovered, ...] = ()
    standins: int = 0
    derived: int = 0

    @property
    def low(self) -> float:
        """The smaller of the two shares (0..1)."""
        return min(self.calls_share, self.calls_share if self.time_share is None else self.time_share)

    def text(self) -> str:
        """One line: ``coverage: 97 % of calls, 88 % of execution time (12 statements); not modelled: ...``."""
        time = "execution time unknown" if self.time_share is None else \
            f"{100 * self.time_share:.0f} % of execution time"
        out = (f"coverage: {100 * self.calls_share:.0f} % of calls, {time} in the model "
               f"({self.statements_modelled} statements"
               + (f", {self.standins} with typed stand-ins" if self.standins else "")
               + (f", {self.derived} derived from the catalog" if self.derived else "") + ")")
        if self.uncovered:
            out += "; not modelled: " + "; ".join(
                f"query {u.queryid} ({100 * u.calls_share:.0f} % of calls, {100 * u.time_share:.0f} % of time): "
                f"{u.reason}" for u in self.uncovered[:3])
            if len(self.uncovered) > 3:
                out += f"; {len(self.uncovered) - 3} more"
        return out


def _reason(audit: StatementAudit) -> str:
    if audit.skipped_reason:
        return audit.skipped_reason
    if not audit.weighted_plans():
        reasons = dict.fromkeys(r for r in (audit.custom_reason, audit.generic_reason) if r)
        return "; ".join(reasons) or "no plan measured"
    return "no calls in the interval"


def coverage_of(workload: Workload, audits: Sequence[StatementAudit], modelled: Collection[int]) -> Coverage | None:
    """The coverage of a model holding the statements ``modelled`` (queryids) of ``audits``.

    :param workload: what :func:`lockscope.workload.statements.read_workload` read (its totals).
    :return: None when the interval has no call (nothing to cover).
    """
    calls_total, time_total = workload.total_calls_per_s, workload.total_exec_ms_per_s
    if calls_total <= 0:
        return None
    in_model = [a for a in audits if a.queryid in modelled]
    calls = sum(a.calls_per_s for a in in_model)
    time = sum(a.calls_per_s * (a.mean_exec_ms or 0.0) for a in in_model)
    uncovered = []
    for a in audits:
        if a.queryid in modelled:
            continue
        share_c = a.calls_per_s / calls_total
        share_t = a.calls_per_s * (a.mean_exec_ms or 0.0) / time_total if time_total > 0 else 0.0
        if max(share_c, share_t) >= COVERAGE_FLOOR:
            uncovered.append(Uncovered(a.queryid, a.short_query, share_c, share_t, _reason(a)))
    uncovered.sort(key=lambda u: -max(u.calls_share, u.time_share))
    return Coverage(min(1.0, calls / calls_total), min(1.0, time / time_total) if time_total > 0 else None,
                    len({a.queryid for a in in_model}), tuple(uncovered),
                    sum(1 for a in in_model if a.standins_note),
                    sum(1 for a in in_model if any(p is not None and p.source is FootprintSource.DERIVED
                                                   for p in (a.custom, a.generic))))
