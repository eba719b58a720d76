"""Which plan-cache phase each call of a statement really runs, from what the server records.

A call either **plans** (a simple-protocol or unnamed-statement call, a prepared statement's custom plan, the build
of its generic plan: the planner locks every index of every table, ``plancat.c get_relation_info``) or **reuses** a
cached generic plan (``plancache.c CheckCachedPlan`` → ``AcquireExecutorLocks``: only the range table, then the
indexes the plan scans at executor start). Most drivers prepare (pgx always, pgjdbc after 5 uses, psycopg 3 after
5, Rails by default: docs/drivers.md), so a statement's calls are mostly reuses; counting them all as planned
calls overstates the main-lock-table traffic many times.

The split, by the best source the server offers (:class:`PhaseSplit` ``basis``):

- ``plan counters`` (PG 19 ``pg_stat_statements.generic_plan_calls`` / ``custom_plan_calls``): calls that reused a
  cached generic plan, and custom-plan calls; the rest (simple protocol) planned;
- ``plans`` (PG 13-18, ``pg_stat_statements.track_planning = on``): ``plans`` counts plannings, so ``calls -
  plans`` calls reused a cached plan (``pg_stat_statements.c pgss_planner`` counts each ``planner()`` call);
- ``pg_locks snapshots`` (neither): the relation locks held by the backends running the statement, read at most
  once a second during the interval (:func:`held_locks_per_call`), give the main-table locks per call directly;
- ``unknown`` (none of these): both bounds, every call planned and every call reusing, and the word unknown.

Where pg_locks snapshots were taken, their main-table locks per call stand beside the split's as a check
(:attr:`PhaseSplit.held_main_table_per_call`).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from pglast.parser import ParseError, fingerprint

from ..rows import HeldLocksRow

__all__ = ["BASES", "HeldLocks", "PhaseSplit", "held_locks_per_call", "query_fingerprint", "split_phases"]

#: ``PhaseSplit.basis`` values, best first.
BASES = ("plan counters", "plans", "pg_locks snapshots", "unknown")


@dataclass(frozen=True)
class HeldLocks:
    """What the pg_locks snapshots saw of one statement: per (snapshot, backend running it), the relation locks it
    held in the main lock table and in all.

    A snapshot catches a call wherever it is: a planned call part-way through planning holds only the locks
    taken so far (its tables after parse analysis, then index after index). Only **complete** observations count
    (:meth:`complete`): all the locks of a planned call, or exactly those of a reuse; both phases then hold them
    for their execution, the same plan's, so the snapshots sample the two phases in proportion to their calls.

    :ivar observations: ``(main_table, total)`` relation locks per observation.
    """

    observations: tuple[tuple[int, int], ...]

    def complete(self, planned_locks: int, reused_locks: int, reused_spilled: int) -> tuple[int, int, float]:
        """(planned observations, reuse observations, mean main-table locks over both).

        :param planned_locks: relation locks of a planned call (count).
        :param reused_locks: relation locks of a reuse, executor index locks included (count).
        :param reused_spilled: main-table locks of a reuse (count).
        """
        planned = reused = 0
        main = 0
        for m, total in self.observations:
            if total >= planned_locks:
                planned += 1
                main += m
            elif reused_locks <= total <= reused_locks + 1 and m <= reused_spilled:
                reused += 1
                main += m
        n = planned + reused
        return planned, reused, main / n if n else 0.0


@dataclass(frozen=True)
class PhaseSplit:
    """A statement's calls by plan-cache phase, and the main-lock-table locks per call that follow.

    :ivar calls_per_s: all calls (calls/s).
    :ivar planned_per_s: calls that planned (calls/s), None when unknown.
    :ivar reused_per_s: calls that reused a cached generic plan (calls/s), None when unknown.
    :ivar basis: one of :data:`BASES`.
    :ivar main_table_per_call: main-lock-table locks per call (count, calls-weighted over the phases); with basis
        ``unknown`` the upper bound.
    :ivar main_table_per_call_low: the lower bound (equal to ``main_table_per_call`` unless ``unknown``).
    :ivar held_main_table_per_call: what pg_locks snapshots saw (complete observations), when any (count), else
        None.
    :ivar held_observations: complete snapshot observations behind it (count).
    """

    calls_per_s: float
    planned_per_s: float | None
    reused_per_s: float | None
    basis: str
    main_table_per_call: float
    main_table_per_call_low: float
    held_main_table_per_call: float | None = None
    held_observations: int = 0

    @property
    def reused_fraction(self) -> float | None:
        """Share of the calls that reused a cached plan (0..1), None when unknown."""
        if self.planned_per_s is None or self.reused_per_s is None:
            return None
        total = self.planned_per_s + self.reused_per_s
        return self.reused_per_s / total if total > 0 else None

    @property
    def main_table_per_s(self) -> float:
        """Main-lock-table acquisitions per second (upper bound with basis ``unknown``)."""
        return self.calls_per_s * self.main_table_per_call

    @property
    def main_table_per_s_low(self) -> float:
        """The lower bound of :attr:`main_table_per_s`."""
        return self.calls_per_s * self.main_table_per_call_low

    def describe(self) -> str:
        """E.g. ``99.99% of calls reuse a cached plan (basis: plans)`` or ``phase unknown: 0-23 per call``."""
        frac = self.reused_fraction
        if frac is None:
            return (f"phase unknown: {self.main_table_per_call_low:g}-{self.main_table_per_call:g} main-table locks "
                    "per call (every call reusing a cached plan .. every call planned)")
        return f"{100 * frac:.2f}% of calls reuse a cached plan (basis: {self.basis})"


def split_phases(calls_per_s: float, *, planned: tuple[int, int] | None, reused: tuple[int, int] | None,
                 plans_per_s: float | None = None, generic_plan_calls_per_s: float | None = None,
                 custom_plan_calls_per_s: float | None = None, held: HeldLocks | None = None,
                 counter_skew_per_s: float = 0.0) -> PhaseSplit:
    """Split a statement's calls by phase from the best source given (see the module docstring), and weight its
    main-lock-table locks per call accordingly.

    :param calls_per_s: calls in the interval (calls/s).
    :param planned: (relation locks, main-table locks) of a planned call (the custom plan's, measured), None if
        not measured.
    :param reused: (relation locks, main-table locks) of reusing the cached generic plan (derived), None if not
        measured.
    :param plans_per_s: pg_stat_statements ``plans`` in the interval (plannings/s) with ``track_planning``.
    :param generic_plan_calls_per_s: PG 19 ``generic_plan_calls`` in the interval (calls/s).
    :param custom_plan_calls_per_s: PG 19 ``custom_plan_calls`` in the interval (calls/s).
    :param held: pg_locks snapshots of the backends running it, when taken.
    :param counter_skew_per_s: calls/s by which ``calls_per_s`` and ``plans_per_s`` may differ only because calls
        were in flight at a snapshot (:attr:`lockscope.workload.statements.StatementRates.counter_skew_per_s`): a
        difference within it is no reuse.
    :return: a :class:`PhaseSplit`; a phase whose footprint was not measured takes the other's.
    """
    planned_fp = planned or reused or (0, 0)
    reused_fp = reused or planned or (0, 0)
    planned_spill, reused_spill = float(planned_fp[1]), float(reused_fp[1])
    n_planned = n_reused = 0
    held_per_call: float | None = None
    if held is not None and planned is not None and reused is not None:
        n_planned, n_reused, mean = held.complete(planned_fp[0], reused_fp[0], reused_fp[1])
        held_per_call = mean if n_planned + n_reused else None
    observations = n_planned + n_reused
    calls = max(calls_per_s, 0.0)

    def weighted(p: float, r: float, basis: str) -> PhaseSplit:
        total = p + r
        per_call = (p * planned_spill + r * reused_spill) / total if total > 0 else planned_spill
        return PhaseSplit(calls, p * calls / total if total > 0 else 0.0, r * calls / total if total > 0 else 0.0,
                          basis, per_call, per_call, held_per_call, observations)

    if generic_plan_calls_per_s is not None and custom_plan_calls_per_s is not None:
        reused_calls = min(max(generic_plan_calls_per_s, 0.0), calls)
        return weighted(calls - reused_calls, reused_calls, "plan counters")
    if plans_per_s is not None:
        planned_calls = min(max(plans_per_s, 0.0), calls)
        if calls - planned_calls <= counter_skew_per_s + 1e-9 * calls:  # (rates from counts: rounding)
            planned_calls = calls
        return weighted(planned_calls, calls - planned_calls, "plans")
    if held_per_call is not None:
        return weighted(float(n_planned), float(n_reused), "pg_locks snapshots")
    lo, hi = sorted((planned_spill, reused_spill))
    return PhaseSplit(calls, None, None, "unknown", hi, lo, None, 0)


@functools.lru_cache(maxsize=4096)
def query_fingerprint(text: str) -> str | None:
    """libpg_query's fingerprint of a statement (constants and ``$n`` alike ignored): a pg_stat_activity text
    with its literals and the pg_stat_statements text with ``$n`` fingerprint alike. None when it does not parse
    (e.g. a text pg_stat_activity cut at ``track_activity_query_size``)."""
    try:
        return str(fingerprint(text))
    except (ParseError, ValueError):
        return None


def held_locks_per_call(snapshots: Iterable[Sequence[HeldLocksRow]], queryids: Iterable[int],
                        texts: Mapping[int, str]) -> dict[int, HeldLocks]:
    """Aggregate pg_locks snapshots (``audit_held_locks.sql`` rows) per pg_stat_statements queryid.

    A backend row counts for the statement whose queryid it shows (``pg_stat_activity.query_id``, PG 14+ with
    ``compute_query_id``), else whose text fingerprints like its query text; only rows of backends running it
    (state ``active``): a backend idle in transaction holds what its transaction took so far, not one call's locks
    (:mod:`lockscope.workload.transactions` reads those).

    :param snapshots: one row list per snapshot.
    :param queryids: the statements of interest.
    :param texts: their pg_stat_statements texts by queryid (for the fingerprint match).
    :return: queryid -> :class:`HeldLocks` for the statements seen at least once.
    """
    wanted = set(queryids)
    by_print: dict[str, int] = {}
    for wanted_id, text in texts.items():
        fp = query_fingerprint(text)
        if fp is not None and wanted_id in wanted:
            by_print.setdefault(fp, wanted_id)
    acc: dict[int, list[tuple[int, int]]] = {}
    for rows in snapshots:
        for row in rows:
            if row.state not in (None, "active"):
                continue
            seen = row.query_id
            if seen is None or seen not in wanted:
                fp = query_fingerprint(str(row.query or ""))
                seen = by_print.get(fp) if fp is not None else None
            if seen is None:
                continue
            main = row.main_table_locks
            acc.setdefault(seen, []).append((main, main + row.fastpath_locks))
    return {qid: HeldLocks(tuple(obs)) for qid, obs in acc.items()}
