"""``run_diagnose``: sample the server like ``lockscope watch``, audit it like ``lockscope audit``, and say which
statements carry the LWLock:LockManager waits, what they spill where, and which fix removes the most.

Composition, no new measuring (every figure comes from another engine):

1. :func:`lockscope.audit.run_audit` with ``interval_s`` = the watch duration: its two pg_stat_statements snapshots
   bracket the watch (:class:`lockscope.watch.engine.Watcher`, started from the audit's ``during_interval`` hook,
   same sampling session and observer budget as ``lockscope watch``), so calls/s and the wait samples describe the
   same seconds. The audit then reads the catalog and probes its top statements (EXPLAIN only, paced; the custom
   plan with values from pg_stats, ``EXPLAIN (GENERIC_PLAN)`` for ``$n`` texts) after the watch has ended.
2. The watch's top statements by LockManager samples (``query_id``) are matched to the audit's statements
   (pg_stat_statements ``queryid``, the same number).
3. Each audited statement's steady footprint becomes a :class:`lockscope.shapes.StatementShape`
   (:func:`~lockscope.workload.probes.shape_from_plan`): fast-path flags predicted in acquisition order and the
   lock partition (0..15) of every main-table lock.
4. Fixes are the audit's advice (smallest droppable index set, max_locks_per_transaction, plan_cache_mode,
   partition granularity); each one's effect on main-lock-table acquisitions/s (calls/s x spilled locks per call,
   summed over the audited statements) is the forecast engine's what-if (:func:`~lockscope.shapes.
   apply_what_if`), and the forecast model (:func:`~lockscope.forecast.engine.forecast_shapes`) predicts the
   LockManager share before and after the first fix.

Nothing here prints; :func:`run_diagnose` returns a :class:`Diagnosis` whose ``verdict`` is one line.
"""

from __future__ import annotations

import datetime
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..audit import AuditOptions, run_audit
from ..capacity import CapacityModel
from ..catalog import database_facts, relation_facts
from ..errors import LockscopeError
from ..forecast.calibration import DEFAULT_CALIBRATION
from ..forecast.cpu import Deflation, KcacheWindow, OnCpu, deflation
from ..forecast.engine import connections_doing_work, forecast_live, server_clock, workload_own_cost
from ..forecast.honesty import ModelCheck, check_model
from ..forecast.live import live_from_watch
from ..lockpart import partition_rates
from ..services import set_mlpt_sql
from ..shapes import apply_what_if
from ..text import plural
from ..vocab import LockRole, PlanPhase
from ..watch.aas import sampled_error, share
from ..watch.engine import WatchConfig, Watcher, WatchSummary
from ..workload.coverage import Coverage, coverage_of
from ..workload.probes import shape_from_plan
from .fix import FIX_ORDER, Fix, short_list
from .transactions import ServerRate, TransactionFinding, server_rate, transaction_fixes

if TYPE_CHECKING:
    from ..audit.engine import AuditReport
    from ..db import Session
    from ..forecast.engine import LiveForecast
    from ..forecast.live import Anchor, LivePoint
    from ..forecast.model import Forecast
    from ..shapes import LockSite, StatementShape
    from ..workload.probes import PlanFootprint, StatementAudit

__all__ = [
    "LOCKMANAGER_AAS_MIN",
    "LOCKMANAGER_SHARE_PROBLEM",
    "RISK_MAIN_PER_S",
    "STATUSES",
    "Culprit",
    "DiagnoseOptions",
    "Diagnosis",
    "Fix",
    "PhaseFootprint",
    "SpilledRelation",
    "forecast_lines",
    "run_diagnose",
    "status_doubt",
    "status_otherwise",
    "verdict_line",
]

#: LockManager share of active-session samples (fraction) from which diagnose calls it contention ...
LOCKMANAGER_SHARE_PROBLEM = 0.10
#: ... when at least this many sessions wait on it on average (AAS; a nearly idle server's one wait is no problem).
LOCKMANAGER_AAS_MIN = 0.1
#: Main-lock-table acquisitions/s (audited statements) from which a server without contention is at ``risk``; below
#: it a few catalog queries touching shared catalogs (never fast-path) would raise an alarm for nothing.
RISK_MAIN_PER_S = 100.0
#: ``Diagnosis.status`` values: LockManager contention; spills without contention yet; nothing wrong.
STATUSES = ("contention", "risk", "healthy")
_PHASE_WORDS = {
    PlanPhase.SIMPLE: "simple",  # the audit's plans are custom, generic-build or generic-reuse
    PlanPhase.CUSTOM: "custom plan (every execution of a simple-protocol statement, executions 1-5 prepared)",
    PlanPhase.GENERIC_BUILD: "generic plan build (execution 6 of a prepared statement)",
    PlanPhase.GENERIC_REUSE: "cached generic plan reuse (executions 7+)",
}


@dataclass(frozen=True)
class DiagnoseOptions:
    """What to sample and how hard to probe.

    :ivar duration_s: seconds of sampling, also the pg_stat_statements interval for calls/s (s).
    :ivar hz: wait-event samples per second (1..100).
    :ivar source: sample source, as ``lockscope watch --source``.
    :ivar top_n: statements the audit probes, the top N by calls in the interval (count).
    :ivar unused_min_age_s: statistics age (s) from which idx_scan = 0 counts as unused.
    :ivar cores: cores of the forecast model (count).
    :ivar statement_timeout_ms: statement_timeout of the sampling session (ms).
    """

    duration_s: float = 30.0
    hz: float = 10.0
    source: str = "auto"
    top_n: int = 50
    unused_min_age_s: float = 7 * 86400
    cores: int = 1
    statement_timeout_ms: int = 500


@dataclass(frozen=True)
class PhaseFootprint:
    """One plan-cache phase of a statement.

    :ivar phase: ``custom``, ``generic-build`` or ``generic-reuse``.
    :ivar locks: relation locks (count).
    :ivar spilled: locks in the main lock table (count; measured, predicted for generic-reuse).
    :ivar partitions: the lock partitions (0..15) its main-table locks land in, sorted, distinct.
    :ivar measured: False for the derived generic-reuse phase.
    """

    phase: PlanPhase
    locks: int
    spilled: int
    partitions: tuple[int, ...]
    measured: bool

    @property
    def describe(self) -> str:
        """The phase in words (which executions take it)."""
        return _PHASE_WORDS[self.phase]


@dataclass(frozen=True)
class Culprit:
    """A statement that carried LWLock:LockManager waits during the watch.

    :ivar query_id: pg_stat_activity.query_id (= pg_stat_statements queryid), None for sessions without one.
    :ivar text: the statement (pg_stat_statements, else pg_stat_activity), "" when unknown.
    :ivar lockmanager_samples: its active-session samples waiting on LWLock:LockManager (count).
    :ivar samples: its active-session samples, any wait (count).
    :ivar lockmanager_fraction: its part of all LockManager samples (fraction 0..1).
    :ivar calls_per_s: pg_stat_statements calls/s over the watch (all roles), None when not audited.
    :ivar shape: its steady footprint with fast-path flags and lock partitions, None when not measured.
    :ivar phases: its plan-cache phases (custom, generic build, generic reuse) as measured.
    :ivar main_per_s: main-lock-table acquisitions/s: calls/s x spilled locks per call (audit's basis).
    :ivar spilled_per_call: main-lock-table locks per call (count; audit's basis, may be fractional).
    :ivar reason: why it has no footprint ("" when it has one).
    :ivar phase_split: which plan-cache phase its calls ran (:meth:`lockscope.workload.phases.PhaseSplit.describe`,
        with the basis), "" when not audited.
    """

    query_id: int | None
    text: str
    lockmanager_samples: int
    samples: int
    lockmanager_fraction: float
    calls_per_s: float | None
    shape: StatementShape | None
    phases: tuple[PhaseFootprint, ...]
    main_per_s: float
    spilled_per_call: float
    reason: str = ""
    phase_split: str = ""

    @property
    def spilled(self) -> tuple[LockSite, ...]:
        """Its steady footprint's main-table locks."""
        return self.shape.main_table_locks if self.shape is not None else ()

    @property
    def tables(self) -> tuple[str, ...]:
        """Relations it locks that are not indexes (tables, partitions), in acquisition order."""
        if self.shape is None:
            return ()
        seen: list[str] = []
        for lk in self.shape.locks:
            if not lk.role.is_index and lk.relation not in seen:
                seen.append(lk.relation)
        return tuple(seen)


@dataclass(frozen=True)
class SpilledRelation:
    """A relation whose lock the waiting statements put in the main lock table.

    :ivar relation: schema-qualified name.
    :ivar role: ``table``, ``index``, ...
    :ivar partition: its lock partition (0..15).
    :ivar acquisitions_per_s: main-lock-table acquisitions/s of its lock (calls/s of those statements).
    :ivar statements: waiting statements that spill it (count).
    """

    relation_oid: int
    relation: str
    role: LockRole
    partition: int
    acquisitions_per_s: float
    statements: int


@dataclass(frozen=True)
class Diagnosis:
    """Everything ``lockscope diagnose`` found.

    :ivar watch: the sampling summary (AAS by wait event, top statements by LockManager samples).
    :ivar audit: the audit report (None when the database could not be audited; see ``notes``).
    :ivar culprits: statements carrying LockManager waits, most samples first.
    :ivar spilled_relations: relations the culprits spill, most acquisitions/s first.
    :ivar fixes: ranked: most main-lock-table acquisitions/s removed first (each on its basis: the model for the
        audit's statement fixes, the server's figure for a transaction's), then the cheaper change.
    :ivar main_per_s: the model: main-lock-table acquisitions/s of all audited statements now (their EXPLAIN
        footprints, calls/s x spilled locks per call, each call a transaction of its own).
    :ivar partition_per_s: per lock partition (16 values): main-lock-table acquisitions/s now.
    :ivar partition_per_s_after: the same after the first fix, None without a predictable fix.
    :ivar statements_measured: audited statements with a footprint (count).
    :ivar forecast_before: the forecast model's steady state of the measured workload at the live population,
        after it reproduced the measured calls/s (None: not forecast).
    :ivar forecast_after: the same after the first fix (same population, think time and costs).
    :ivar clients: clients of the forecast (count: the connections the watch saw running statements, >= 1).
    :ivar live: the measured operating point the forecast started from (None: no calls or no sample).
    :ivar anchor: the model against that point before any what-if (None without ``live``).
    :ivar think_s: each connection's time between calls outside the server the forecast used (s).
    :ivar status: one of :data:`STATUSES`: ``contention`` (LockManager share >= :data:`LOCKMANAGER_SHARE_PROBLEM`
        with >= :data:`LOCKMANAGER_AAS_MIN` sessions waiting), ``risk`` (no contention,
        :attr:`main_lock_table_per_s` >= :data:`RISK_MAIN_PER_S`), else ``healthy``.
    :ivar server: the server's main-lock-table figure, the transactions holding main-table locks and why the
        figure differs from the model (:class:`lockscope.diagnose.transactions.ServerRate`).
    :ivar verdict: one line a human can act on; every rendering prints the :attr:`model_check` headline as the
        verdict's first line when the model's first estimate of the present is more than 25 % off.
    :ivar coverage: the share of the interval's calls and execution time the forecast models, None without a
        workload.
    :ivar model_check: the forecast's first estimate more than 25 % off, with the reasons found
        (:mod:`lockscope.forecast.honesty`), else None.
    :ivar status_otherwise: the status the samples could equally have given, when the sampled LockManager share's
        95 % interval spans :data:`LOCKMANAGER_SHARE_PROBLEM` (the seconds sampled cannot decide between the two);
        None when they decide (:func:`status_otherwise`).
    """

    server_version: str
    database: str
    database_oid: int
    capacity: CapacityModel
    watch: WatchSummary
    audit: AuditReport | None
    culprits: tuple[Culprit, ...]
    spilled_relations: tuple[SpilledRelation, ...]
    fixes: tuple[Fix, ...]
    main_per_s: float
    partition_per_s: tuple[float, ...]
    partition_per_s_after: tuple[float, ...] | None
    statements_measured: int
    forecast_before: Forecast | None
    forecast_after: Forecast | None
    clients: int
    status: str
    verdict: str
    notes: tuple[str, ...] = ()
    live: LivePoint | None = None
    anchor: Anchor | None = None
    think_s: float = 0.0
    timings_s: dict[str, float] = field(default_factory=dict)
    server: ServerRate = field(default_factory=ServerRate)
    coverage: Coverage | None = None
    model_check: ModelCheck | None = None
    status_otherwise: str | None = None

    @property
    def main_lock_table_per_s(self) -> float:
        """The main-lock-table acquisitions/s diagnose stands by: the server's figure when it gave one
        (:attr:`server`), else the model's (:attr:`main_per_s`)."""
        return self.server.main_per_s if self.server.main_per_s is not None else self.main_per_s

    @property
    def transactions(self) -> tuple[TransactionFinding, ...]:
        """The transactions the server held main-table locks for, most acquisitions/s first."""
        return self.server.transactions

    @property
    def lockmanager_share(self) -> float:
        """Fraction (0..1) of active-session samples waiting on LWLock:LockManager."""
        return self.watch.lockmanager_share

    @property
    def lockmanager_aas(self) -> float:
        """Sessions waiting on LWLock:LockManager on average (AAS)."""
        return self.watch.lockmanager_samples / self.watch.ticks if self.watch.ticks else 0.0

    @property
    def aas_by_wait(self) -> dict[str, float]:
        """Wait label -> average active sessions over the watch, largest first."""
        ticks = self.watch.ticks
        items = sorted(self.watch.by_wait.items(), key=lambda kv: -kv[1])
        return {k: v / ticks for k, v in items} if ticks else {}


# -- composition -------------------------------------------------------------------------------------------------------
def _phase(plan: PlanFootprint | None, shape: StatementShape | None) -> PhaseFootprint | None:
    if plan is None or shape is None:
        return None
    return PhaseFootprint(plan.phase, plan.locks, plan.spilled,
                          tuple(sorted({lk.partition for lk in shape.main_table_locks})), plan.measured)


def _rate(shapes: Sequence[StatementShape]) -> float:
    return sum((s.calls_per_s or 0.0) * len(s.main_table_locks) for s in shapes)


def _partition_rates(shapes: Sequence[StatementShape]) -> tuple[float, ...]:
    """Main-lock-table acquisitions/s per lock partition (16 values): the lock acquisitions of
    :func:`lockscope.lockpart.partition_rates` only, without its release passes, so that the partitions add up to
    :func:`_rate` (the figure the fixes are ranked by; the audit's partition load counts both)."""
    return partition_rates(((s.calls_per_s or 0.0), s.partition_load) for s in shapes).acquisitions_per_s


@dataclass
class _Workload:
    """The audited statements with their steady shapes (internal)."""

    audits: list[StatementAudit]
    shapes: list[StatementShape]
    by_queryid: dict[int, list[tuple[StatementAudit, StatementShape | None]]]
    relations: dict[int, tuple[bool, str]]


def _workload(session: Session, report: AuditReport, database_oid: int, deflate: Deflation) -> _Workload:
    """The audited statements' shapes, each with its own cost from pg_stat_statements (``deflate``: wall time ->
    CPU, :func:`lockscope.forecast.cpu.deflation`)."""

    audits = [a for a in report.workload.statements if not a.skipped_reason]
    oids = [o for a in audits for p in (a.custom, a.generic, a.generic_reuse) if p is not None
            for o in p.relation_oids]
    relations = relation_facts(session, oids)
    model = report.capacity
    shapes: list[StatementShape] = []
    by_queryid: dict[int, list[tuple[StatementAudit, StatementShape | None]]] = {}
    for a in audits:
        shape = None
        own = workload_own_cost(a, deflate.of(a.queryid))
        for plan, weight in a.weighted_plans():  # the phase split: planned calls and reuses of a cached plan
            phase_shape = own.apply(shape_from_plan(a, plan, model, database_oid, relations,
                                                    calls=max(a.calls_per_s, 0.0) * weight, share=weight))
            shapes.append(phase_shape)
            if plan is a.steady:
                shape = phase_shape
        by_queryid.setdefault(a.queryid, []).append((a, shape))
    return _Workload(audits, shapes, by_queryid, relations)


def _culprits(summary: WatchSummary, wl: _Workload | None, report: AuditReport | None, database_oid: int,
              notes: list[str]) -> tuple[Culprit, ...]:

    lm_total = summary.lockmanager_samples
    out = []
    without_id = 0
    for st in summary.top_statements:
        if st.lockmanager_samples <= 0:
            continue
        if st.query_id is None:
            without_id += st.lockmanager_samples
            continue
        entries = wl.by_queryid.get(st.query_id, []) if wl is not None else []
        text = st.text or (entries[0][0].query if entries else "")
        qid, lm_samples, fraction = st.query_id, st.lockmanager_samples, share(st.lockmanager_samples, lm_total)
        if not entries or report is None or wl is None:
            reason = ("pg_stat_statements was not read" if report is None or not report.workload.available else
                      "not among the audited statements (raise --top)" if text else
                      "no pg_stat_statements entry")
            out.append(Culprit(qid, text, lm_samples, st.samples, fraction, calls_per_s=None, shape=None,
                               phases=(), main_per_s=0.0, spilled_per_call=0.0, reason=reason))
            continue
        main = max(entries, key=lambda e: e[0].calls_per_s)
        a, shape = main
        calls = sum(e[0].calls_per_s for e in entries)
        phases = []
        for plan in (a.custom, a.generic, a.generic_reuse):
            if plan is None:
                continue
            ph = _phase(plan, shape_from_plan(a, plan, report.capacity, database_oid, wl.relations, calls=calls))
            if ph is not None:
                phases.append(ph)
        reason = "" if shape is not None else (a.custom_reason or a.generic_reason or "not measured")
        out.append(Culprit(qid, text, lm_samples, st.samples, fraction, calls_per_s=calls, shape=shape,
                           phases=tuple(phases), main_per_s=sum(e[0].main_lock_table_per_s for e in entries),
                           spilled_per_call=a.spilled_per_call, reason=reason,
                           phase_split=a.split.describe() if a.split is not None else ""))
    if without_id:
        notes.append(f"{without_id} LockManager samples came from sessions without a query_id "
                     "(compute_query_id off, or utility statements): their statements cannot be named")
    return tuple(out)


def _spilled_relations(culprits: Sequence[Culprit]) -> tuple[SpilledRelation, ...]:
    acc: dict[int, list[float]] = {}
    info: dict[int, LockSite] = {}
    for c in culprits:
        for lk in c.spilled:
            row = acc.setdefault(lk.relation_oid, [0.0, 0.0])
            row[0] += c.calls_per_s or 0.0
            row[1] += 1
            info[lk.relation_oid] = lk
    out = [SpilledRelation(oid, info[oid].relation, info[oid].role, info[oid].partition, rate, int(n))
           for oid, (rate, n) in acc.items()]
    out.sort(key=lambda r: (-r.acquisitions_per_s, r.partition, r.relation))
    return tuple(out)


def _culprit_spills(culprits: Sequence[Culprit], model: CapacityModel, drops: frozenset[int]) -> tuple[int, ...]:

    return tuple(len(apply_what_if(c.shape, model, drops).main_table_locks) if c.shape is not None else 0
                 for c in culprits)


@dataclass(frozen=True)
class _FixContext:
    """What every kind of fix is judged against (internal): the audit, the workload, the culprits, the
    main-lock-table acquisitions/s now and the relations the waiting statements lock."""

    report: AuditReport
    wl: _Workload
    culprits: Sequence[Culprit]
    before: float
    relevant: set[int]


def _drop_index_fixes(ctx: _FixContext) -> list[Fix]:
    """The smallest droppable index set of each spilling table the waiting statements lock."""

    report, model, out = ctx.report, ctx.report.capacity, []
    idx_by_oid = {f.index_oid: f for f in report.index_findings}
    names = report.names
    for plan in report.drop_plans:
        if not plan.index_oids or plan.table_oid not in ctx.relevant:
            continue
        drops = frozenset(plan.index_oids)
        after = _rate([apply_what_if(s, model, drops) for s in ctx.wl.shapes])
        if after >= ctx.before:
            continue
        table = names.get(plan.table_oid, str(plan.table_oid))
        kinds = sorted({idx_by_oid[o].kind for o in plan.index_oids if o in idx_by_oid})
        adjective = "/".join(kinds) if kinds else "droppable"
        index_names = [idx_by_oid[o].qualified if o in idx_by_oid else names.get(o, str(o)) for o in plan.index_oids]
        sql = tuple(s for f in report.findings if f.kind == "table-spill" and f.subject == table for s in f.sql)
        n = len(plan.index_oids)
        out.append(Fix(
            "drop-indexes", f"drop {plural(n, adjective + ' index')} on {table}",
            f"drop {'this' if n == 1 else 'these'} {plural(n, adjective + ' index')} ({short_list(index_names)})",
            f"the smallest safe set{'' if plan.exact else ' found (greedy)'} after which {table}'s planner locks "
            f"{'fit' if plan.sufficient else 'still spill ' + str(plan.after_spilled)} ({plan.before_spilled} "
            f"spilled now): {short_list(index_names, 8)}; DROP INDEX CONCURRENTLY, no restart",
            sql, False, ctx.before, after, _culprit_spills(ctx.culprits, model, drops),
            drop_index_oids=plan.index_oids))
    return out


def _mlpt_fix(ctx: _FixContext) -> list[Fix]:
    """max_locks_per_transaction (PG 18+: more fast-path groups), when the audit asks for it and the rate is a
    risk."""

    report, m = ctx.report, ctx.report.mlpt
    if not m.change_needed or m.mlpt_recommended is None or ctx.before < RISK_MAIN_PER_S:
        return []
    after_model = CapacityModel(m.target_version_num, m.mlpt_recommended)
    after = _rate([apply_what_if(s, after_model) for s in ctx.wl.shapes])
    if after >= ctx.before:
        return []
    where = " after upgrading to PostgreSQL 18" if m.upgrade else ""
    sql = tuple(s for f in report.findings if f.kind == "max-locks-per-transaction" for s in f.sql)
    shmem = ""
    if m.shmem_after_bytes is not None:
        shmem = f"; lock shared memory {m.shmem_now_bytes / 2**20:.1f} MiB -> {m.shmem_after_bytes / 2**20:.1f} MiB"
    return [Fix(
        "max-locks-per-transaction",
        f"max_locks_per_transaction = {m.mlpt_recommended}{where} ({m.groups_needed} fast-path groups)",
        f"set max_locks_per_transaction = {m.mlpt_recommended} (restart{where})",
        f"now {m.current_mlpt} ({report.capacity.describe()}); {m.groups_needed} groups fit every audited "
        f"statement's relations with their real OIDs (any value {m.mlpt_min}..{m.mlpt_recommended}){shmem}; "
        "standbys need at least the primary's value",
        sql or (set_mlpt_sql(report.managed_service, m.mlpt_recommended, standby=report.in_recovery),), True,
        ctx.before,
        after, _culprit_spills(ctx.culprits, after_model, frozenset()), capacity_after=after_model)]


def _plan_cache_fixes(ctx: _FixContext) -> list[Fix]:
    """plan_cache_mode for roles whose generic plans spill and custom plans do not."""
    out = []
    for f in ctx.report.findings:
        if f.kind != "plan-cache-mode":
            continue
        role = f.subject.removeprefix("role ")
        stmts = [a for a in ctx.wl.audits if a.rolname == role and a.custom is not None and a.generic_locks_more]
        saved = sum(a.main_lock_table_per_s - a.calls_per_s * a.custom.spilled for a in stmts if a.custom)
        ids = {a.queryid for a in stmts}
        if not any(c.query_id in ids for c in ctx.culprits) and saved <= 0:
            continue  # neither behind the waits nor saving anything measurable
        out.append(Fix("plan-cache-mode", f"plan_cache_mode = force_custom_plan for role {role}",
                       f"set plan_cache_mode = force_custom_plan for role {role}", f.evidence, f.sql, False,
                       ctx.before, max(0.0, ctx.before - max(0.0, saved)), tuple(len(c.spilled) for c in ctx.culprits),
                       subject=f"role {role}"))
    return out


def _partitioning_fixes(ctx: _FixContext) -> list[Fix]:
    """Partition granularity of the partitioned tables the waiting statements lock."""
    out = []
    for g in ctx.report.granularity:
        if g.table_oid not in ctx.relevant:
            continue
        best = next((o for o in g.options if o.fits), g.options[-1] if g.options else None)
        if best is None:
            continue
        out.append(Fix("partitioning", f"coarser partitions for {g.qualified} ({best.label})",
                       f"re-partition {g.qualified} {best.label}",
                       f"{g.partitions} partitions ({g.current_label}) lock {g.unpruned_locks} relations unpruned; "
                       f"{best.label}: {best.partitions} partitions, {best.unpruned_locks} locks unpruned, "
                       f"{best.generic_reuse_locks} per generic-plan reuse", (), False, ctx.before, None))
    return out


def _fixes(report: AuditReport, wl: _Workload, culprits: Sequence[Culprit]) -> list[Fix]:
    """Every kind of fix, ranked: fewest main-lock-table acquisitions/s after it first, then the cheaper kind."""
    culprit_oids = {lk.relation_oid for c in culprits if c.shape is not None for lk in c.shape.locks}
    relevant = culprit_oids if culprits else {lk.relation_oid for s in wl.shapes for lk in s.main_table_locks}
    ctx = _FixContext(report, wl, culprits, _rate(wl.shapes), relevant)
    return [*_drop_index_fixes(ctx), *_mlpt_fix(ctx), *_plan_cache_fixes(ctx), *_partitioning_fixes(ctx)]


def _ranked(statement_fixes: Sequence[Fix], txn_fixes: Sequence[Fix]) -> list[Fix]:
    """Both kinds of fix in one ranking: most main-lock-table acquisitions/s removed first (each on its own basis),
    then the cheaper kind; not predicted last. Of two ``max_locks_per_transaction`` fixes (the audit's for its
    statements, one for the transactions), the larger setting, which fits both; the audit's ``plan_cache_mode``
    fix for a role a transaction's fix sets it for too gives way to that one."""
    given = {(f.kind, f.subject) for f in txn_fixes if f.subject}
    fixes = [*(f for f in statement_fixes if not f.subject or (f.kind, f.subject) not in given), *txn_fixes]
    mlpt = [f for f in fixes if f.kind == "max-locks-per-transaction" and f.capacity_after is not None]
    if len(mlpt) > 1:
        keep = max(mlpt, key=lambda f: (f.capacity_after.max_locks_per_transaction if f.capacity_after else 0,
                                        f.removed_per_s))
        fixes = [f for f in fixes if f not in mlpt or f is keep]
    fixes.sort(key=lambda x: (x.main_per_s_after is None, -x.removed_per_s, FIX_ORDER.index(x.kind)))
    return fixes


def _fix_shapes(fix: Fix, report: AuditReport, wl: _Workload) -> list[StatementShape] | None:
    """The audited statements' shapes after ``fix`` (None when the fix is not a footprint what-if)."""

    if fix.drop_index_oids or fix.capacity_after is not None:
        model = fix.capacity_after or report.capacity
        return [apply_what_if(s, model, frozenset(fix.drop_index_oids)) for s in wl.shapes]
    return None


def _forecast(shapes: Sequence[StatementShape], fixed: Sequence[StatementShape] | None, fix: Fix | None,
              report: AuditReport, live: LivePoint | None, options: DiagnoseOptions,
              notes: list[str]) -> LiveForecast | None:
    """The forecast at the live operating point (the same as ``lockscope forecast``'s workload mode), and after
    the first fix."""

    weighted = [s for s in shapes if s.calls > 0]
    if not weighted:
        return None
    after = [s for s in fixed if s.calls > 0] if fixed is not None else None
    try:
        return forecast_live(weighted, after or None, live=live, rate_tps=sum(s.calls for s in weighted),
                             calibration=DEFAULT_CALIBRATION, cores=options.cores, clients=None,
                             capacity=report.capacity,
                             after_capacity=(fix.capacity_after if fix is not None else None) or report.capacity,
                             after_label="fixed", notes=notes)
    except LockscopeError as exc:
        notes.append(f"forecast skipped: {exc}")
        return None


def _reconcile(live: LivePoint | None, solved: LiveForecast | None) -> list[str]:
    """A note when the measured and the modelled LockManager shares at the same operating point disagree by more
    than 10 points, or the sampled one is too uncertain to show that they agree, saying which one the report's
    figures are."""
    if live is None or solved is None or solved.anchor is None:
        return []
    model, measured = solved.anchor.model_lockmanager_share, live.lockmanager_share
    if solved.anchor.lockmanager_reproduced:
        return []
    why = ("the sample is too short to show the model within 10 points (sample longer: --duration)"
           if solved.anchor.sampled_too_uncertain and solved.anchor.lockmanager_within else
           "the verdict and the status use the sampled share")
    return [f"LockManager share: {100 * measured:.0f}% sampled now{sampled_error(live.lockmanager_interval)}, "
            f"{100 * model:.0f}% in the model at the same {live.population} connections and "
            f"{live.rate_tps:,.0f} calls/s; {why}, and the model's LockManager shares (now, after the fix) are not "
            "printed as a forecast"]


def _unprepared_what_if(audits: Sequence[StatementAudit], main_now: float) -> list[str]:
    """A note when most calls reuse cached plans and planning them all would spill much more (what-if only)."""
    reusing = [a for a in audits if a.split is not None and (a.split.reused_fraction or 0.0) > 0.5
               and a.planned is not None and a.planned.spilled > 0]
    if not reusing:
        return []
    planned_rate = sum(a.calls_per_s * a.planned.spilled for a in reusing if a.planned is not None)
    if planned_rate < max(RISK_MAIN_PER_S, 2 * main_now):
        return []
    top = max(reusing, key=lambda a: a.calls_per_s * (a.planned.spilled if a.planned else 0))
    plan = top.planned
    assert plan is not None
    return [f"what-if, not measured now: most calls reuse cached plans; if the clients stopped preparing their "
            f"statements (every call planned: simple protocol, unnamed statements, plan_cache_mode = "
            f"force_custom_plan), the audited statements would put {planned_rate:,.0f} locks/s into the main lock "
            f"table, e.g. query {top.queryid}'s {plan.phase} plan spills {plan.spilled} of its {plan.locks} locks"]


# -- the verdict -------------------------------------------------------------------------------------------------------
def _verdict_transaction(server: ServerRate) -> TransactionFinding | None:
    """The transaction the verdict names: the first that holds more than its statements' footprints and carries at
    least half of the server's main-lock-table acquisitions/s."""
    rate = server.main_per_s or 0.0
    return next((f for f in server.transactions if f.beyond_model and rate > 0 and f.shape.main_per_s >= 0.5 * rate),
                None)


def _transaction_words(f: TransactionFinding, *, rate: bool = True) -> str:
    """``transactions of these 5 statements (on ...) hold 17 main-table locks each (67,569 main-lock-table
    acquisitions/s at 3,975 transactions/s; alone they spill 0)``; without ``rate``: ``... each at 3,975
    transactions/s (alone they spill 0)``."""
    shape = f.shape
    alone = (f"alone {'they spill' if len(shape.statements) > 1 else 'it spills'} {f.model_spilled_per_txn:g}"
             if any(x is not None for x in f.statement_spills) else "")
    if not rate:
        return (f"{f.describe()} at {shape.transactions_per_s:,.0f} transactions/s" + (f" ({alone})" if alone else ""))
    return (f"{f.describe()} ({shape.main_per_s:,.0f} main-lock-table acquisitions/s at "
            f"{shape.transactions_per_s:,.0f} transactions/s" + (f"; {alone}" if alone else "") + ")")


def _healthy_line(summary: WatchSummary, main_per_s: float, statements_measured: int, server: ServerRate) -> str:
    pct, aas = 100 * summary.lockmanager_share, summary.aas
    rate = server.main_per_s if server.main_per_s is not None else main_per_s
    who = "the server" if server.main_per_s is not None else f"the {statements_measured} audited statements"
    return (f"Nothing wrong: {pct:.1f}% of active-session samples wait on LWLock:LockManager "
            f"({summary.lockmanager_samples:,} of {summary.active_session_samples:,} active-session samples in "
            f"{summary.ticks:,} samples over {summary.duration_s:.0f} s, {aas:.2f} average active sessions) and "
            + (f"none of the {statements_measured} audited statements spills out of the fast path at a "
               "measurable rate." if statements_measured and rate == 0 else
               f"{who} put only {rate:,.1f} locks/s into the main lock table (below {RISK_MAIN_PER_S:,.0f}/s)."
               if statements_measured or server.main_per_s is not None else
               "no statement could be audited (see the notes)."))


def verdict_line(status: str, summary: WatchSummary, culprits: Sequence[Culprit], fixes: Sequence[Fix],
                 main_per_s: float, statements_measured: int, *, server: ServerRate | None = None) -> str:
    """One line a human can act on (pure). ``main_per_s`` is the model's figure; the server's (``server``), when
    it gave one, is the rate the line states, and a transaction that holds more than its statements' footprints
    and carries most of it is named."""
    server = server or ServerRate()
    pct = 100 * summary.lockmanager_share
    aas = summary.aas
    lm_aas = summary.lockmanager_samples / summary.ticks if summary.ticks else 0.0
    todo = " or ".join(f.action for f in fixes[:2])
    txn = _verdict_transaction(server)
    if status == "healthy":
        return _healthy_line(summary, main_per_s, statements_measured, server)
    if status == "risk":
        rate = server.main_per_s if server.main_per_s is not None else main_per_s
        who = "the server put" if server.main_per_s is not None else "the audited statements put"
        what = f": {_transaction_words(txn, rate=False)}" if txn is not None else ""
        return (f"No LockManager contention now ({pct:.1f}% of {aas:.2f} average active sessions), but {who} "
                f"{rate:,.0f} locks/s into the main lock table{what}" + (f" — {todo}" if todo else "") + ".")
    head = (f"{pct:.0f}% of active sessions wait on LWLock:LockManager ({lm_aas:.1f} of {aas:.1f} average active "
            "sessions)")
    if txn is not None:
        return head + "; " + _transaction_words(txn) + (f" — {todo}" if todo else "") + "."
    measured = [c for c in culprits if c.shape is not None and c.spilled]
    if not measured:
        why = culprits[0].reason if culprits else "no statement was named (no query_id)"
        return head + f"; the waiting statements could not be measured ({why})" + (f" — {todo}" if todo else "") + "."
    tables = []
    for c in measured:
        for t in c.tables[:1]:
            if t not in tables:
                tables.append(t)
    spills = sorted({len(c.spilled) for c in measured})
    many = len(measured) > 1
    count = f"{spills[0]}" if len(spills) == 1 else f"{spills[0]}-{spills[-1]}"
    each = f"{count} locks {'each ' if many else ''}per call"
    rate = sum(c.main_per_s for c in measured)
    stmt = plural(len(measured), "statement")
    return (head + f"; {stmt} on {short_list(tables, 2)} spill{'' if many else 's'} {each} to the main lock table "
            f"({rate:,.0f} acquisitions/s)"
            + (f" — {todo}" if todo else " — no fix from the audit's advice; see the findings") + ".")


def forecast_lines(d: Diagnosis) -> list[str]:
    """The model against the measured point, then the first fix's forecast effect (plain text lines)."""
    out: list[str] = []
    live, anchor, before, after = d.live, d.anchor, d.forecast_before, d.forecast_after
    if live is not None and anchor is not None:
        fit = (f"re-anchored: statement costs x {anchor.factor:.2g}" if anchor.reanchored else "within 25 %")
        out.append(f"model vs now at {live.population} connections: {anchor.measured_tps:,.0f} calls/s measured, "
                   f"{anchor.model_tps:,.0f} modelled ({fit}); LockManager {100 * live.lockmanager_share:.0f}% "
                   f"sampled{sampled_error(live.lockmanager_interval)}, {100 * anchor.model_lockmanager_share:.0f}% "
                   "modelled")
    modelled = anchor is None or anchor.lockmanager_reproduced
    if before is not None and after is not None:
        gain = after.throughput_tps / before.throughput_tps - 1.0 if before.throughput_tps else 0.0
        lm = (f"LockManager {100 * before.lockmanager_share:.0f}% -> {100 * after.lockmanager_share:.0f}%"
              if modelled else "LockManager share not forecast")
        out.append(f"first fix, forecast at {d.clients} connections: {before.throughput_tps:,.0f} -> "
                   f"{after.throughput_tps:,.0f} calls/s ({100 * gain:+.0f} %), {lm}, CPU per call "
                   f"{before.cpu_per_transaction_us:,.0f} -> {after.cpu_per_transaction_us:,.0f} µs")
    elif before is not None:
        lm = f"LockManager {100 * before.lockmanager_share:.0f}%" if modelled else "LockManager share not forecast"
        out.append(f"forecast at {d.clients} connections: {before.throughput_tps:,.0f} calls/s, {lm}, CPU per "
                   f"call {before.cpu_per_transaction_us:,.0f} µs")
    if anchor is not None and not anchor.lockmanager_reproduced:
        out.append(anchor.lockmanager_refusal() + "; the sampled share is the present's figure")
    return out


# -- entry point -------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Observed:
    """What the watch and the audit of the same interval measured (internal)."""

    report: AuditReport
    summary: WatchSummary
    since: datetime.datetime | None
    timings_s: dict[str, float]
    kcache: dict[int, OnCpu] = field(default_factory=dict)
    kcache_note: str | None = None


def _watch_and_audit(session: Session, dsn: str, options: DiagnoseOptions, say: Callable[[str], None],
                     demo: bool) -> _Observed:
    """The audit with the watch sampling during its pg_stat_statements interval (the same seconds)."""

    t0 = time.monotonic()
    config = WatchConfig(dsn=dsn, hz=options.hz, duration_s=options.duration_s, source=options.source,
                         statement_timeout_ms=options.statement_timeout_ms)
    config.validate()
    watcher = Watcher(config)
    since: list[datetime.datetime] = []
    kcache = KcacheWindow()

    def start_watch() -> None:
        since.append(server_clock(session))
        kcache.start(session)
        say(f"sampling wait events for {options.duration_s:g} s at {options.hz:g} Hz")
        watcher.start()

    def step(text: str) -> None:
        # every progress message of the audit after its interval comes after the second pg_stat_statements
        # snapshot: let the watch finish before the catalog reads and the probes
        if since and not watcher.finished:
            watcher.wait(options.duration_s + 10)
        say(text)

    audit_options = AuditOptions(interval_s=options.duration_s, top_n=options.top_n,
                                 unused_min_age_s=options.unused_min_age_s)
    try:
        report = run_audit(session, audit_options, progress=step, during_interval=start_watch, demo=demo)
    except BaseException:
        if since:
            watcher.stop("error")
        raise
    t_audit = time.monotonic()
    on_cpu = kcache.stop(session)  # the window's pg_stat_statements and pg_stat_kcache deltas, over the same calls
    if not since:  # pg_stat_statements unavailable: the audit never opened its interval
        start_watch()
    watcher.wait(options.duration_s + 10)
    summary = watcher.stop("duration")
    if watcher.error is not None:
        raise watcher.error
    return _Observed(report, summary, since[0] if since else None,
                     {"audit": t_audit - t0, "watch_end": time.monotonic() - t0}, on_cpu, kcache.note)


def _status(summary: WatchSummary, main_now: float) -> str:
    """``contention``, ``risk`` or ``healthy`` (:class:`Diagnosis`)."""
    lm_aas = summary.lockmanager_samples / summary.ticks if summary.ticks else 0.0
    if summary.lockmanager_share >= LOCKMANAGER_SHARE_PROBLEM and lm_aas >= LOCKMANAGER_AAS_MIN:
        return "contention"
    return "risk" if main_now >= RISK_MAIN_PER_S else "healthy"


def _closing_notes(summary: WatchSummary, live: LivePoint | None, solved: LiveForecast | None, server: ServerRate,
                   wl: _Workload | None, main_now: float, otherwise: str | None) -> list[str]:
    """The notes that judge the figures: the model's LockManager share against the sampled one, the server's
    main-lock-table rate against the model's, a status the samples cannot decide (``otherwise``, the other
    status: :func:`status_otherwise`), the what-if of unprepared clients, no sample taken."""
    doubt = status_doubt(summary) if otherwise is not None else None
    notes = [*_reconcile(live, solved), *([server.model_note] if server.model_note else []),
             *([doubt] if doubt else [])]
    if wl is not None:
        notes.extend(_unprepared_what_if(wl.audits, main_now))
    if summary.ticks == 0:
        notes.append("no wait-event sample was taken")
    return notes


def status_otherwise(summary: WatchSummary, main_per_s: float) -> str | None:
    """The status on the other side of the sampled LockManager share's 95 % interval
    (:func:`lockscope.watch.aas.share_interval`) when that interval spans :data:`LOCKMANAGER_SHARE_PROBLEM`:
    ``contention`` when the status is not and the interval's upper end would also put
    :data:`LOCKMANAGER_AAS_MIN` sessions on LockManager; else, for a status of ``contention``, what the
    main-lock-table rate gives (``risk`` or ``healthy``); None when the interval lies on one side (the samples
    decide).

    :param main_per_s: the main-lock-table acquisitions/s the status is judged with (per s).
    """
    interval = summary.lockmanager_interval
    if interval is None or not interval.low < LOCKMANAGER_SHARE_PROBLEM <= interval.high:
        return None
    if _status(summary, main_per_s) == "contention":
        return "risk" if main_per_s >= RISK_MAIN_PER_S else "healthy"
    return "contention" if interval.high * summary.aas >= LOCKMANAGER_AAS_MIN else None


def status_doubt(summary: WatchSummary) -> str | None:
    """Why the samples cannot decide the status, in one sentence (diagnose's note and ``--fail-on``'s reason, when
    :func:`status_otherwise` names another status): the sampled LockManager share's 95 % interval against
    :data:`LOCKMANAGER_SHARE_PROBLEM`; None without an interval."""
    interval = summary.lockmanager_interval
    if interval is None:
        return None
    return (f"the LockManager share's 95 % interval, {100 * interval.low:.0f}-{100 * interval.high:.0f}%, spans the "
            f"{100 * LOCKMANAGER_SHARE_PROBLEM:.0f}% from which the status is contention: these "
            f"{summary.duration_s:.0f} s of samples cannot tell; sample longer (--duration)")


def _live(session: Session, seen: _Observed, options: DiagnoseOptions) -> LivePoint | None:
    """The measured operating point (the audited statements' calls/s, the connections that ran statements)."""

    report = seen.report
    rate = sum(a.calls_per_s for a in report.workload.statements if not a.skipped_reason and a.weighted_plans())
    if rate <= 0:
        return None
    connections = connections_doing_work(session, seen.since) if seen.since is not None else None
    return live_from_watch(seen.summary, rate, report.database, connections)


#: The fewest transactions of a shape the pg_locks snapshots must see for its interval to be usable (count).
MIN_SEEN = 5


def _snapshots_note(server: ServerRate, report: AuditReport) -> list[str]:
    """A note when the estimate (PG 13-18) rests on too few transactions seen for a usable interval."""
    load = report.workload.transactions
    if server.counted or load is None or not load.snapshots:
        return []
    thin = [s for s in load.shapes if s.held_main_per_txn > 0 and s.transactions_seen < MIN_SEEN]
    if not thin and load.shapes:
        return []
    seen = min((s.transactions_seen for s in thin), default=0)
    return [f"the server's main-lock-table rate is an estimate from {load.snapshots} pg_locks snapshots (one a "
            f"second) that saw {seen} transaction(s) of a shape holding main-table locks: too few for a usable "
            "interval; run diagnose with a longer --duration (e.g. 30s)"]


def run_diagnose(session: Session, dsn: str, options: DiagnoseOptions = DiagnoseOptions(), *,
                 progress: Callable[[str], None] | None = None, demo: bool = False) -> Diagnosis:
    """Watch, audit and rank the fixes (see the module docstring).

    :param session: lockscope's audit session on the server (read-only use).
    :param dsn: the same server, for the watch's own sampling connection.
    :param demo: the server is lockscope's scratch demo (the audit says so).
    :raises BadInputError: bad options (from the watch config).
    :raises DatabaseError, ConnectionFailedError: the catalog or the sampling connection failed.
    """

    say = progress or (lambda _msg: None)
    t0 = time.monotonic()
    seen = _watch_and_audit(session, dsn, options, say, demo)
    report, summary, notes = seen.report, seen.summary, []
    database_oid, _ = database_facts(session)
    say("matching statements and ranking fixes")
    live = _live(session, seen, options)
    deflate = deflation(live, (), report.database, options.cores, kcache=seen.kcache)
    if seen.kcache_note:
        notes.append(seen.kcache_note)
    wl = _workload(session, report, database_oid, deflate) if report.workload.available else None
    if not report.workload.available:
        notes.append("statements not audited: " + " ".join(report.workload.notes))
    culprits = _culprits(summary, wl, report, database_oid, notes)
    shapes = wl.shapes if wl is not None else []
    main_now = _rate(shapes)
    server = server_rate(session, report, main_now) \
        if report.workload.available or report.workload.transactions is not None else ServerRate()
    notes.extend(_snapshots_note(server, report))
    fixes = _ranked(_fixes(report, wl, culprits) if wl is not None else [],
                    transaction_fixes(server, report, session))
    fixed = _fix_shapes(fixes[0], report, wl) if fixes and wl is not None else None
    solved = _forecast(shapes, fixed, fixes[0] if fixes else None, report, live, options, notes)
    judged = server.main_per_s if server.main_per_s is not None else main_now
    status, otherwise = _status(summary, judged), status_otherwise(summary, judged)
    notes.extend(_closing_notes(summary, live, solved, server, wl, main_now, otherwise))
    if status != "contention":
        # no measured contention: a restart is never the first thing to do (stable: otherwise as ranked)
        fixes.sort(key=lambda f: f.restart)
    measured = len({id(a) for a in (wl.audits if wl is not None else ()) if a.weighted_plans()})
    cover = coverage_of(report.workload, report.workload.statements, {int(s.name) for s in shapes if s.calls > 0}) \
        if wl is not None else None
    check = check_model(solved.anchor if solved is not None else None, live, cover, [s for s in shapes if s.calls > 0])
    verdict = verdict_line(status, summary, culprits, fixes, main_now, measured, server=server)
    return Diagnosis(
        server_version=report.server_version, database=report.database, database_oid=database_oid,
        capacity=report.capacity, watch=summary, audit=report, culprits=culprits,
        spilled_relations=_spilled_relations(culprits), fixes=tuple(fixes), main_per_s=main_now,
        partition_per_s=_partition_rates(shapes),
        partition_per_s_after=_partition_rates(fixed) if fixed is not None else None, statements_measured=measured,
        forecast_before=solved.measured.forecast if solved is not None else None,
        forecast_after=solved.after.forecast if solved is not None and solved.after is not None else None,
        clients=solved.clients if solved is not None else (live.population if live is not None else 1),
        status=status, verdict=verdict,
        notes=tuple(notes) + report.notes, live=live, anchor=solved.anchor if solved is not None else None,
        think_s=solved.think_s if solved is not None else 0.0,
        timings_s={**seen.timings_s, "total": time.monotonic() - t0}, server=server, coverage=cover,
        model_check=check, status_otherwise=otherwise,
    )
