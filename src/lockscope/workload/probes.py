"""Each top statement of the workload probed with the footprint engine, its calls split by plan-cache phase.

- Each statement is probed with the footprint engine: the generic plan (``footprint.measure_generic_plan``:
  ``EXPLAIN (GENERIC_PLAN)`` on PG 16+), and the custom plan with parameter values derived from pg_stats
  (:mod:`lockscope.workload.params`), else marked "not measured" with the reason. A cached generic plan's executor
  locks (``plancache.c AcquireExecutorLocks``: every range-table relation, i.e. the generic plan's tables and
  partitions, no indexes) are derived from the generic-build locks.
- Each probe reads pg_locks once (all 16 lock-partition LWLocks and every backend's fast-path lock): the session
  paces those reads (:meth:`lockscope.db.Session.query_rows`, 2 per second by default on a server the user
  named), so the probes here are not paced again.
- A text PostgreSQL's parser (pglast) cannot parse, or that is not one probeable statement, is skipped with the
  reason; it never reaches the server.
- A normalized text whose ``$n`` PREPARE could not type as it stands (``$2 + $3``: pg_stat_statements replaced
  constants that had types) is probed with typed stand-ins (:mod:`lockscope.workload.standins`), and its
  ``standins_note`` says so; one that cannot be typed even so is skipped with the reason.

**Main-lock-table acquisitions per second** = calls/s x spilled locks per call, where a call's spilled locks are
its phase's: a planned call (simple protocol, unnamed statement, custom plan) takes the custom plan's, a call that
reuses a cached generic plan the reuse's (derived from the generic plan). How many calls ran in each phase comes
from what the server records (:mod:`lockscope.workload.phases`): PG 19's plan counters, else ``plans`` with
``track_planning``, else pg_locks snapshots of the backends running the statement (at most one a second, during the
interval), else both bounds and the word "unknown". :func:`shape_from_plan` turns a probed plan into the
:class:`~lockscope.shapes.StatementShape` the models read.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..capacity import CapacityModel, LockRequest
from ..catalog import Catalog
from ..db import Session
from ..errors import LockscopeError, StatementParseError
from ..footprint import Footprint, measure_footprint, measure_generic_plan, scanned_indexes
from ..shapes import StatementShape, site
from ..statement import check_statement
from ..vocab import FootprintSource, LockMode, LockRole, PlanPhase
from .params import ParamBinding, derive_params
from .phases import PhaseSplit, split_phases
from .standins import standin_values, typed_standins
from .statements import OWN_QUERY, SQL_PREPARE, StatementRates

__all__ = [
    "PlanFootprint",
    "PrivilegeSummary",
    "PruneCheck",
    "StatementAudit",
    "plan_footprint",
    "privilege_summary",
    "probe_statements",
    "reuse_footprint",
    "shape_from_plan",
]


@dataclass(frozen=True)
class PlanFootprint:
    """The locks of one plan of one statement.

    :ivar phase: ``custom``, ``generic-build`` or ``generic-reuse`` (derived).
    :ivar relation_oids: locked relations in modelled acquisition order.
    :ivar roles: the role of each (``table``, ``partition``, ``index``, ...).
    :ivar modes: the lock mode of each.
    :ivar locks: relation locks (count).
    :ivar spilled: measured main-lock-table locks (count; predicted for the derived generic-reuse phase).
    :ivar predicted_spilled: the capacity model's count.
    :ivar measured: False for the derived generic-reuse phase.
    :ivar scanned_index_oids: indexes of plain tables the plan scans (:func:`lockscope.footprint.scanned_indexes`):
        the executor index locks of reusing it.
    :ivar executor_relations: relations the executor initialises and scans
        (:attr:`lockscope.explain.ExplainedPlan.scanned_relations`; count).
    :ivar source: measured, measured through the EXPLAIN helper, or derived from the catalog (the role may not
        EXPLAIN the statement: :mod:`lockscope.privileges`).
    :ivar grants: the GRANTs that would let lockscope measure it as the session's role (empty when it could).
    """

    phase: PlanPhase
    relation_oids: tuple[int, ...]
    roles: tuple[LockRole, ...]
    modes: tuple[LockMode, ...]
    locks: int
    spilled: int
    predicted_spilled: int
    measured: bool = True
    scanned_index_oids: tuple[int, ...] = ()
    executor_relations: int = 1
    source: FootprintSource = FootprintSource.MEASURED
    grants: tuple[str, ...] = ()


@dataclass(frozen=True)
class PruneCheck:
    """Plan-time pruning of one partitioned table in a statement's custom plan.

    :ivar table_oid: the partitioned table.
    :ivar partitions_locked: leaf partitions locked (count).
    :ivar partitions_total: leaf partitions it has (count).
    """

    table_oid: int
    qualified: str
    partitions_locked: int
    partitions_total: int

    @property
    def prunes(self) -> bool:
        """True when fewer partitions than all were locked (or there is at most one)."""
        return self.partitions_total <= 1 or self.partitions_locked < self.partitions_total


@dataclass(frozen=True)
class StatementAudit:
    """One pg_stat_statements entry with its footprints and rates.

    :ivar queryid: pg_stat_statements queryid.
    :ivar rolname: the role that ran it (None if the role is gone).
    :ivar calls: calls since the last reset (count).
    :ivar calls_per_s: calls per second (interval delta, or since reset).
    :ivar params: derived parameter values (text) used for the custom plan.
    :ivar custom: custom-plan footprint, or None (see ``custom_reason``).
    :ivar generic: generic-plan footprint as built (``EXPLAIN (GENERIC_PLAN)``), or None (``generic_reason``).
    :ivar generic_reuse: locks of reusing a cached generic plan (derived from ``generic``), or None.
    :ivar spilled_per_call: main-lock-table locks per call (count, calls-weighted over the phases; the upper bound
        when the phase is unknown).
    :ivar basis: where the phase split comes from (:data:`lockscope.workload.phases.BASES`), ``none`` when no plan
        was measured.
    :ivar split: the calls by plan-cache phase (:class:`lockscope.workload.phases.PhaseSplit`), None when no plan was
        measured.
    :ivar prune_checks: per partitioned table in the custom plan, whether it pruned.
    :ivar mean_exec_ms: its mean execution time over the interval (ms; pg_stat_statements, wall time in the
        backend under the load of the moment), None when unknown.
    :ivar mean_plan_ms: its mean planning time per planning (ms; with track_planning), None when unknown.
    :ivar rows_per_call: rows returned or affected per call (count), None when unknown.
    :ivar standins_note: how its text was probed with typed stand-ins for the constants pg_stat_statements
        replaced (:mod:`lockscope.workload.standins`), None when the normalized text typed as it stands.
    """

    queryid: int
    userid: int
    rolname: str | None
    query: str
    calls: int
    calls_per_s: float
    kind: str = "unknown"
    params: tuple[str, ...] = ()
    param_sources: tuple[str, ...] = ()
    custom: PlanFootprint | None = None
    custom_reason: str | None = None
    generic: PlanFootprint | None = None
    generic_reuse: PlanFootprint | None = None
    generic_reason: str | None = None
    spilled_per_call: float = 0.0
    basis: str = "none"
    prune_checks: tuple[PruneCheck, ...] = ()
    skipped_reason: str | None = None
    generic_plan_calls: int | None = None
    custom_plan_calls: int | None = None
    split: PhaseSplit | None = None
    mean_exec_ms: float | None = None
    mean_plan_ms: float | None = None
    rows_per_call: float | None = None
    standins_note: str | None = None

    @property
    def main_lock_table_per_s(self) -> float:
        """Main-lock-table acquisitions per second: calls/s x spilled locks per call (the upper bound when the
        phase is unknown; :attr:`main_lock_table_per_s_low` is the lower)."""
        return self.calls_per_s * self.spilled_per_call

    @property
    def main_lock_table_per_s_low(self) -> float:
        """The lower bound of :attr:`main_lock_table_per_s` (equal to it unless the phase is unknown)."""
        return self.split.main_table_per_s_low if self.split is not None else self.main_lock_table_per_s

    @property
    def planned(self) -> PlanFootprint | None:
        """The footprint of a call that plans: the custom plan's, else the generic plan's build (an upper bound:
        the custom plan prunes at least as much)."""
        return self.custom or self.generic

    @property
    def steady(self) -> PlanFootprint | None:
        """The footprint most calls take: the cached generic plan's reuse when most calls reuse it, else the
        planned one."""
        frac = self.split.reused_fraction if self.split is not None else None
        if frac is not None and frac > 0.5 and self.generic_reuse is not None:
            return self.generic_reuse
        return self.planned or self.generic_reuse

    def weighted_plans(self) -> list[tuple[PlanFootprint, float]]:
        """The plans the calls take, each with its share of the calls (fractions summing to 1; [] without a plan).
        With the phase unknown, the plan of the upper bound alone."""
        planned, reused = self.planned, self.generic_reuse
        frac = self.split.reused_fraction if self.split is not None else None
        if frac is not None and planned is not None and reused is not None:
            return [(p, w) for p, w in ((planned, 1.0 - frac), (reused, frac)) if w > 0] or [(planned, 1.0)]
        if planned is not None and reused is not None:
            return [(planned if planned.spilled >= reused.spilled else reused, 1.0)]
        only = planned or reused
        return [(only, 1.0)] if only is not None else []

    @property
    def generic_locks_more(self) -> bool:
        """True when building or reusing the generic plan locks more relations than the custom plan."""
        if self.custom is None or self.generic is None:
            return False
        reuse = self.generic_reuse.locks if self.generic_reuse else 0
        return max(self.generic.locks, reuse) > self.custom.locks

    @property
    def non_pruning(self) -> tuple[PruneCheck, ...]:
        """Partitioned tables the custom plan did not prune at plan time."""
        return tuple(c for c in self.prune_checks if not c.prunes)

    @property
    def short_query(self) -> str:
        """The text on one line, at most 120 characters."""
        text = " ".join(self.query.split())
        return text if len(text) <= 120 else text[:117] + "..."


def plan_footprint(fp: Footprint, phase: PlanPhase | None = None, session: Session | None = None) -> PlanFootprint:
    """The first execution of a :class:`~lockscope.footprint.Footprint` as a :class:`PlanFootprint`.

    :param session: when given, the indexes the plan scans are resolved (``scanned_index_oids``, one catalog query).
    """
    e = fp.executions[0]
    derived = fp.source is FootprintSource.DERIVED
    tables = sum(1 for lk in e.locks if lk.role in (LockRole.TABLE, LockRole.PARTITION))
    return PlanFootprint(
        phase=phase or e.phase,
        relation_oids=tuple(lk.relation_oid for lk in e.locks),
        roles=tuple(lk.role for lk in e.locks),
        modes=tuple(lk.mode for lk in e.locks),
        locks=e.lock_count,
        spilled=e.main_table_count,
        predicted_spilled=e.predicted_main_table_count,
        scanned_index_oids=scanned_indexes(session, e) if session is not None and not derived else (),
        executor_relations=max(1, tables) if derived else e.plan.scanned_relations,
        measured=not derived,
        source=fp.source,
        grants=tuple(dict.fromkeys(g.grant for g in fp.privilege_gaps)),
    )


def reuse_footprint(generic: PlanFootprint, model: CapacityModel, *,
                    executor_relations: int | None = None) -> PlanFootprint:
    """Executor locks of reusing a cached generic plan, derived from its build locks.

    ``plancache.c CheckCachedPlan -> AcquireExecutorLocks`` locks each RTE_RELATION of the PlannedStmt range table:
    the tables, views' tables and every partition not pruned at plan time; then executor start opens each index
    the plan scans (nodeIndexscan.c ``ExecInitIndexScan`` and friends; ``scanned_index_oids``, plain tables only:
    a partition's index is opened only if the partition survives initial pruning). Predicted with the model.

    :param executor_relations: relations its execution scans (the custom plan's, when measured: initial pruning
        keeps what a custom plan would), else the generic plan's.
    """
    keep = [i for i, role in enumerate(generic.roles) if not role.is_index]
    position = {oid: i for i, oid in enumerate(generic.relation_oids)}
    keep += [position[o] for o in generic.scanned_index_oids if o in position and position[o] not in keep]
    oids = tuple(generic.relation_oids[i] for i in keep)
    modes = tuple(generic.modes[i] for i in keep)
    flags = model.predict([LockRequest(o, m) for o, m in zip(oids, modes, strict=False)])
    spilled = sum(not f for f in flags)
    return PlanFootprint(PlanPhase.GENERIC_REUSE, oids, tuple(generic.roles[i] for i in keep), modes, len(oids),
                         spilled, spilled, measured=False,
                         executor_relations=executor_relations or generic.executor_relations,
                         source=generic.source, grants=generic.grants)


def _prune_checks(catalog: Catalog, plan: PlanFootprint) -> tuple[PruneCheck, ...]:
    locked = set(plan.relation_oids)
    out = []
    for oid in plan.relation_oids:
        rel = catalog.relations.get(oid)
        if rel is None or rel.relkind != "p" or rel.parent_oid is not None:
            continue
        leaves = catalog.leaves(oid)
        out.append(PruneCheck(oid, rel.qualified, sum(1 for leaf in leaves if leaf in locked), len(leaves)))
    return tuple(out)


def _custom_plan(session: Session, text: str, param_count: int,
                 binding: ParamBinding) -> tuple[PlanFootprint | None, str | None]:
    """The custom plan's footprint (with the derived parameter values), or None and why not."""
    if param_count and binding.reason is not None:
        return None, binding.reason
    try:
        # statistics only: a workload's statements are probed without reading any table (their execution locks
        # that depend on rows are labelled unknown)
        fp = measure_footprint(session, text, params=list(binding.values), read_rows=False) if param_count else \
            measure_footprint(session, text, read_rows=False)
        return plan_footprint(fp, PlanPhase.CUSTOM, session), None
    except LockscopeError as exc:
        return None, f"probe failed: {exc}"


def _generic_plan(session: Session, text: str, param_count: int, custom: PlanFootprint | None,
                  custom_reason: str | None) -> tuple[PlanFootprint | None, str | None]:
    """The generic plan's build footprint, or None and why not: without parameters, the custom plan's."""
    if param_count == 0 and custom is not None:
        return PlanFootprint(PlanPhase.GENERIC_BUILD, custom.relation_oids, custom.roles, custom.modes, custom.locks,
                             custom.spilled, custom.predicted_spilled, scanned_index_oids=custom.scanned_index_oids,
                             executor_relations=custom.executor_relations), None
    if param_count == 0:
        return None, custom_reason
    try:
        return plan_footprint(measure_generic_plan(session, text), PlanPhase.GENERIC_BUILD, session), None
    except LockscopeError as exc:
        return None, f"probe failed: {exc}"


def _probe_one(session: Session, catalog: Catalog, row: StatementRates, cache: dict[str, Any]) -> StatementAudit:
    model = session.facts.capacity
    base: dict[str, Any] = dict(
        queryid=row.queryid, userid=row.userid, rolname=row.rolname, query=row.query, calls=row.calls,
        calls_per_s=row.calls_per_s, generic_plan_calls=row.generic_plan_calls,
        custom_plan_calls=row.custom_plan_calls, mean_exec_ms=row.mean_exec_ms, mean_plan_ms=row.mean_plan_ms,
        rows_per_call=row.rows_per_call)
    text = SQL_PREPARE.sub("", row.query, count=1)
    if OWN_QUERY.search(text):
        return StatementAudit(**base, skipped_reason="lockscope's own query")
    try:
        checked = check_statement(text)
    except StatementParseError as exc:  # e.g. grammar newer than lockscope's parser: never sent to the server
        reason = str(exc).split("; nothing was sent")[0].replace("the statement does not parse", "does not parse "
                                                                 "with lockscope's parser (pglast)")
        return StatementAudit(**base, skipped_reason=reason)
    except LockscopeError as exc:
        return StatementAudit(**base, skipped_reason=str(exc).split(":")[0])
    kind = checked.kind
    standins = None
    if checked.param_count:
        try:
            standins = typed_standins(session.query_rows, checked, owner=session,
                                      server_version_num=session.facts.server_version_num)
        except LockscopeError as exc:
            return StatementAudit(**base, kind=kind, skipped_reason=f"cannot be typed, even with typed stand-ins: "
                                                                     f"{exc}")
        if standins is not None:
            checked = check_statement(standins.text)
    binding = derive_params(session, checked.text, checked.param_count, cache,
                            standin_values(standins) if standins is not None else None)
    custom, custom_reason = _custom_plan(session, checked.text, checked.param_count, binding)
    generic, generic_reason = _generic_plan(session, checked.text, checked.param_count, custom, custom_reason)
    reuse = reuse_footprint(generic, model, executor_relations=custom.executor_relations if custom else None) \
        if generic is not None else None
    planned = custom or generic
    split = None
    if planned is not None or reuse is not None:
        split = split_phases(row.calls_per_s, planned=(planned.locks, planned.spilled) if planned else None,
                             reused=(reuse.locks, reuse.spilled) if reuse else None, plans_per_s=row.plans_per_s,
                             generic_plan_calls_per_s=row.generic_plan_calls_per_s,
                             custom_plan_calls_per_s=row.custom_plan_calls_per_s, held=row.held,
                             counter_skew_per_s=row.counter_skew_per_s)
    checks = _prune_checks(catalog, custom) if custom is not None else ()
    return StatementAudit(**base, kind=kind, params=binding.values, param_sources=binding.sources, custom=custom,
                          custom_reason=custom_reason, generic=generic, generic_reuse=reuse,
                          generic_reason=generic_reason,
                          spilled_per_call=split.main_table_per_call if split is not None else 0.0,
                          basis=split.basis if split is not None else "none", prune_checks=checks, split=split,
                          standins_note=standins.note if standins is not None else None)


@dataclass(frozen=True)
class PrivilegeSummary:
    """What privileges changed in probing a workload's statements (:mod:`lockscope.privileges`).

    :ivar derived: statements whose footprint was derived from the catalog: the role may not EXPLAIN them (count).
    :ivar helper: statements measured through the EXPLAIN helper (count).
    :ivar grants: the GRANTs that would let the role measure every derived one, distinct, in order.
    """

    derived: int = 0
    helper: int = 0
    grants: tuple[str, ...] = ()

    def sentence(self) -> str:
        """One line for a report's notes, ``""`` when privileges stopped nothing."""
        parts = []
        if self.derived:
            parts.append(f"{self.derived} statement(s) derived from the catalog, not measured: this role may not "
                         f"EXPLAIN them; {' '.join(self.grants)} lets lockscope measure them (or the EXPLAIN helper, "
                         "docs/privileges.md)")
        if self.helper:
            parts.append(f"{self.helper} statement(s) measured through the EXPLAIN helper")
        return "; ".join(parts)


def privilege_summary(statements: Sequence[StatementAudit]) -> PrivilegeSummary:
    """Count the probed statements by :attr:`PlanFootprint.source` and gather the GRANTs of the derived ones."""
    derived = helper = 0
    grants: list[str] = []
    for st in statements:
        plans = [p for p in (st.custom, st.generic) if p is not None]
        if any(p.source is FootprintSource.DERIVED for p in plans):
            derived += 1
            grants.extend(g for p in plans for g in p.grants)
        elif any(p.source is FootprintSource.HELPER for p in plans):
            helper += 1
    return PrivilegeSummary(derived, helper, tuple(dict.fromkeys(grants)))


def probe_statements(session: Session, catalog: Catalog, rows: Sequence[StatementRates], *,
                     progress: Callable[[str], None] | None = None) -> tuple[StatementAudit, ...]:
    """Probe each chosen statement (custom and generic plan); the session paces their pg_locks reads
    (:meth:`lockscope.db.Session.query_rows`).

    Never raises for one statement: a failed probe becomes a "not measured" reason, a text lockscope's parser
    rejects a skipped reason.
    """
    cache: dict[str, Any] = {}
    out = []
    for n, row in enumerate(rows, 1):
        if progress is not None and n % 10 == 1:
            progress(f"probing statement {n}/{len(rows)}")
        out.append(_probe_one(session, catalog, row, cache))
    return tuple(out)


def shape_from_plan(audit: StatementAudit, plan: PlanFootprint, model: CapacityModel, database_oid: int,
                    relations: dict[int, tuple[bool, str]], *, calls: float, share: float = 1.0) -> StatementShape:
    """A pg_stat_statements entry's plan footprint (audit) with fast-path flags predicted in order.

    :param relations: :func:`lockscope.catalog.relation_facts` of the plan's OIDs.
    :param calls: the shape's weight in the workload (calls or calls/s).
    :param share: the fraction (0..1) of the statement's calls that take this plan (the phase split,
        :meth:`StatementAudit.weighted_plans`): the shape's ``calls_per_s`` is the
        statement's rate times it, so a statement's phases add up to its rate.
    """
    shared = {oid for oid, (s, _) in relations.items() if s}
    flags = model.predict([LockRequest(o, m, o in shared) for o, m in zip(plan.relation_oids, plan.modes,
                                                                           strict=True)])
    locks = tuple(site(o, relations.get(o, (False, str(o)))[1], role, m, f, o in shared, database_oid, i)
                  for i, (o, role, m, f) in enumerate(zip(plan.relation_oids, plan.roles, plan.modes, flags,
                                                          strict=True)))
    return StatementShape(name=str(audit.queryid), statement=audit.query, phase=plan.phase, locks=locks,
                          calls=calls, calls_per_s=audit.calls_per_s * share, flags="predicted",
                          measured_main_table_locks=plan.spilled if plan.measured else None,
                          executor_relations=plan.executor_relations)
