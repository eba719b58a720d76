"""The workload side of ``lockscope audit``: pg_stat_statements snapshots and each top statement's footprints.

- Two snapshots of pg_stat_statements counters (``showtext = false``, cheap even with 50,000 entries) ``interval_s``
  apart give calls/s; with ``interval_s = 0`` calls/s is calls since the last reset (``pg_stat_statements_info``,
  PG 14+; the postmaster start on PG 13). The top N statements by calls in the interval (then by total calls) are
  kept; only their texts are read.
- Each statement is probed with the footprint engine: the generic plan (``footprint.measure_generic_plan``:
  ``EXPLAIN (GENERIC_PLAN)`` on PG 16+), and the custom plan with parameter values derived from pg_stats
  (:mod:`lockscope.audit.params`), else marked "not measured" with the reason. A cached generic plan's executor
  locks (``plancache.c AcquireExecutorLocks``: every range-table relation, i.e. the generic plan's tables and
  partitions, no indexes) are derived from the generic-build locks.
- Each probe reads pg_locks once (all 16 lock-partition LWLocks and every backend's fast-path lock): the session
  paces those reads (:meth:`lockscope.db.Session.query_rows`, 2 per second by default on a server the user
  named), so the probes here are not paced again.
- A text PostgreSQL's parser (pglast) cannot parse, or that is not one probeable statement, is skipped with the
  reason; it never reaches the server.

**Main-lock-table acquisitions per second** = calls/s x spilled locks per call, where a call's spilled locks are
its phase's: a planned call (simple protocol, unnamed statement, custom plan) takes the custom plan's, a call that
reuses a cached generic plan the reuse's (derived from the generic plan). How many calls ran in each phase comes
from what the server records (:mod:`lockscope.audit.phases`): PG 19's plan counters, else ``plans`` with
``track_planning``, else pg_locks snapshots of the backends running the statement (at most one a second, during the
interval), else both bounds and the word "unknown".
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..capacity import CapacityModel, LockRequest
from ..db import Session
from ..errors import DatabaseError, LockscopeError, StatementParseError
from ..footprint import Footprint, measure_footprint, measure_generic_plan, scanned_indexes
from ..rows import (
    ColumnNameRow,
    HeldLocksRow,
    PostmasterAgeRow,
    StatementCountersRow,
    StatementTextRow,
    StatLockRow,
    StatsResetRow,
)
from ..statement import check_statement
from ..versions import PG14
from ..vocab import LockMode, LockRole, PlanPhase
from .catalog import AuditSettings, Catalog
from .params import ParamBinding, derive_params
from .phases import HeldLocks, PhaseSplit, held_locks_per_call, split_phases

__all__ = [
    "PlanFootprint",
    "PruneCheck",
    "StatementAudit",
    "StatementRates",
    "Workload",
    "plan_footprint",
    "probe_statements",
    "read_workload",
]

#: lockscope's own queries: the audit SQL carries a /* lockscope */ marker; the footprint engine's are recognised.
_OWN_QUERY = re.compile(r"/\*\s*lockscope\s*\*/|^\s*(PREPARE|DEALLOCATE)\s+lockscope_|AS pg_locks_oid|toast_owner\.oid"
                        r"|pg_backend_pid\(\)\s+AND\s+locktype"
                        r"|FROM pg_catalog\.pg_prepared_statements|pg_catalog\.pg_blocking_pids", re.I)
_PROBEABLE = re.compile(r"^\s*(\(\s*)*(select|with|insert|update|delete|merge|values|table)\b", re.I)
_SQL_PREPARE = re.compile(r"^\s*prepare\s+\w+\s*(\([^)]*\))?\s+as\s+", re.I | re.S)


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
    :ivar basis: where the phase split comes from (:data:`lockscope.audit.phases.BASES`), ``none`` when no plan
        was measured.
    :ivar split: the calls by plan-cache phase (:class:`lockscope.audit.phases.PhaseSplit`), None when no plan was
        measured.
    :ivar prune_checks: per partitioned table in the custom plan, whether it pruned.
    :ivar mean_exec_ms: its mean execution time over the interval (ms; pg_stat_statements, wall time in the
        backend under the load of the moment), None when unknown.
    :ivar mean_plan_ms: its mean planning time per planning (ms; with track_planning), None when unknown.
    :ivar rows_per_call: rows returned or affected per call (count), None when unknown.
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


@dataclass(frozen=True)
class Workload:
    """What pg_stat_statements gave.

    :ivar available: False when it could not be read (see ``notes``).
    :ivar entries: entries of this database (count; all roles visible to the user).
    :ivar hidden: entries of other roles whose texts are hidden (count; grant pg_read_all_stats).
    :ivar interval_s: measured interval (s), 0 when rates are since reset.
    :ivar since_s: seconds since the reset, for rates since reset.
    :ivar statements: the top statements, probed.
    :ivar notes: what was skipped and how to enable it.
    :ivar pg_stat_lock_fastpath_exceeded: PG 19 server counter of fast-path overflows, or None.
    """

    available: bool
    entries: int = 0
    hidden: int = 0
    interval_s: float = 0.0
    since_s: float | None = None
    statements: tuple[StatementAudit, ...] = ()
    notes: tuple[str, ...] = ()
    pg_stat_lock_fastpath_exceeded: int | None = None
    probe_seconds: float = 0.0
    top_n: int = 0
    extra: dict[str, Any] = field(default_factory=dict)
    track_planning: bool = False
    lock_snapshots: int = 0


def plan_footprint(fp: Footprint, phase: PlanPhase | None = None, session: Session | None = None) -> PlanFootprint:
    """The first execution of a :class:`~lockscope.footprint.Footprint` as a :class:`PlanFootprint`.

    :param session: when given, the indexes the plan scans are resolved (``scanned_index_oids``, one catalog query).
    """
    e = fp.executions[0]
    return PlanFootprint(
        phase=phase or e.phase,
        relation_oids=tuple(lk.relation_oid for lk in e.locks),
        roles=tuple(lk.role for lk in e.locks),
        modes=tuple(lk.mode for lk in e.locks),
        locks=e.lock_count,
        spilled=e.main_table_count,
        predicted_spilled=e.predicted_main_table_count,
        scanned_index_oids=scanned_indexes(session, e) if session is not None else (),
        executor_relations=e.plan.scanned_relations,
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
                         executor_relations=executor_relations or generic.executor_relations)


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


@dataclass(frozen=True)
class StatementRates:
    """One pg_stat_statements entry over the interval (or since the reset), as :func:`read_workload` chooses it
    for probing: its counters' rates and mean times, its text, and the pg_locks snapshots' view of it.

    :ivar queryid: pg_stat_statements queryid.
    :ivar userid: the role's OID.
    :ivar calls: calls since the last reset (count).
    :ivar calls_per_s: calls per second (interval delta, or since reset).
    :ivar generic_plan_calls: calls that reused a cached generic plan (count, over the interval when it has a first
        snapshot; PG 19), else None.
    :ivar custom_plan_calls: calls with a custom plan (count, likewise), else None.
    :ivar generic_plan_calls_per_s: their rate (calls/s), else None.
    :ivar custom_plan_calls_per_s: their rate (calls/s), else None.
    :ivar plans_per_s: plannings per second (with track_planning), else None.
    :ivar mean_exec_ms: mean execution time (ms), None when unknown.
    :ivar mean_plan_ms: mean planning time per planning (ms), None when unknown.
    :ivar rows_per_call: rows returned or affected per call (count), None when unknown.
    :ivar query: the text ("" when not read or hidden).
    :ivar rolname: the role's name, None when not read or the role is gone.
    :ivar held: what the pg_locks snapshots saw of it (:class:`lockscope.audit.phases.HeldLocks`), or None.
    """

    queryid: int
    userid: int
    calls: int
    calls_per_s: float
    generic_plan_calls: int | None = None
    custom_plan_calls: int | None = None
    generic_plan_calls_per_s: float | None = None
    custom_plan_calls_per_s: float | None = None
    plans_per_s: float | None = None
    mean_exec_ms: float | None = None
    mean_plan_ms: float | None = None
    rows_per_call: float | None = None
    query: str = ""
    rolname: str | None = None
    held: HeldLocks | None = None


_Snapshot = dict[tuple[int, int], StatementCountersRow]


def _snapshot(session: Session, schema_sql: str, extra: str) -> _Snapshot:
    """One read of the pg_stat_statements counters, by (queryid, userid); a statement's toplevel and nested entries
    summed; an entry of another role whose details are hidden under its own key (0, -n)."""
    out: _Snapshot = {}
    for row in session.query_rows("audit_pgss_snapshot", StatementCountersRow,
                                  fill={"schema": schema_sql, "extra": extra}):
        if row.queryid is None:
            key = (0, -len(out) - 1)  # hidden entry of another role: counted, never probed
        else:
            key = (row.queryid, int(row.userid or 0))
        if key in out and row.queryid is not None:  # toplevel and nested entries of the same statement
            out[key] = out[key].plus(row)
        else:
            out[key] = row
    return out


def _snapshot_columns(session: Session, schema_sql: str, settings: AuditSettings) -> str:
    """The optional columns the snapshots read (``@extra@`` of ``audit_pgss_snapshot.sql``): PG 19's plan counters,
    ``plans`` with track_planning, the statements' own times (ms) and rows, as far as this extension version has
    them.

    :raises DatabaseError: the view's columns cannot be read.
    """
    columns = {r.name for r in session.query_rows("audit_pgss_columns", ColumnNameRow,
                                                  [f"{schema_sql}.pg_stat_statements"])}
    wanted = ["generic_plan_calls", "custom_plan_calls"] + (["plans"] if settings.track_planning else [])
    extra = "".join(f", s.{c}::int8 AS {c}" for c in wanted if c in columns)
    # the statements' own times (ms): pg_stat_statements 1.8+ (PG 13+) total_exec_time / total_plan_time
    times = ["total_exec_time"] + (["total_plan_time"] if settings.track_planning else [])
    extra += "".join(f", s.{c}::float8 AS {c}" for c in times if c in columns)
    return extra + (", s.rows::int8 AS rows" if "rows" in columns else "")


@dataclass(frozen=True)
class _Interval:
    """The two snapshots and what lies between them.

    :ivar elapsed_s: between the snapshots (s; 0 for rates since the reset).
    :ivar since_s: since the reset (s), for rates since the reset; else None.
    :ivar held: the pg_locks snapshots taken in between, one row list each.
    """

    first: _Snapshot
    second: _Snapshot
    elapsed_s: float
    since_s: float | None
    held: list[list[HeldLocksRow]]


def _take_snapshots(session: Session, settings: AuditSettings, schema_sql: str, *, interval_s: float,
                    sleep: Callable[[float], None], during_interval: Callable[[], None] | None,
                    lock_snapshots: bool) -> _Interval:
    """The first snapshot, the interval (with its pg_locks snapshots), the second snapshot; or, with
    ``interval_s`` 0, one snapshot and the time since the reset.

    :raises DatabaseError: pg_stat_statements cannot be read.
    """
    extra = _snapshot_columns(session, schema_sql, settings)
    first = _snapshot(session, schema_sql, extra)
    t0 = time.monotonic()
    if during_interval is not None:
        during_interval()
    held: list[list[HeldLocksRow]] = []
    if interval_s <= 0:
        return _Interval(first, first, 0.0, _since_reset_s(session, schema_sql, settings), held)
    _hold_interval(session, t0, interval_s, sleep, held if lock_snapshots else None)
    second = _snapshot(session, schema_sql, extra)
    return _Interval(first, second, max(time.monotonic() - t0, 1e-6), None, held)


def _rates(span: _Interval, interval_s: float) -> list[StatementRates]:
    """Each visible entry's rates over the interval (or since the reset), busiest first."""
    out = [_statement_rates(key, row, span.first.get(key), span, interval_s)
           for key, row in span.second.items() if key[0] != 0]
    out.sort(key=lambda r: (-r.calls_per_s, -r.calls, r.queryid))
    return out


def _statement_rates(key: tuple[int, int], row: StatementCountersRow, before: StatementCountersRow | None,
                     span: _Interval, interval_s: float) -> StatementRates:
    """One entry's rates: deltas from ``before`` (its first snapshot, None when new) over the interval, else its
    counters since the reset."""
    if interval_s > 0:
        rate = max(row.calls - (before.calls if before else 0), 0) / span.elapsed_s
    else:
        rate = row.calls / span.since_s if span.since_s else 0.0
    gp, cp = row.generic_plan_calls, row.custom_plan_calls
    if interval_s > 0 and gp is not None and before is not None:
        gp = gp - int(before.generic_plan_calls or 0)
        cp = int(cp or 0) - int(before.custom_plan_calls or 0)
    first = before if interval_s > 0 else None
    seen = before is not None
    return StatementRates(
        queryid=key[0], userid=key[1], calls=row.calls, calls_per_s=rate, generic_plan_calls=gp,
        custom_plan_calls=cp,
        generic_plan_calls_per_s=_per_s(row.generic_plan_calls, before.generic_plan_calls if before else None, seen,
                                        interval_s, span.elapsed_s, span.since_s),
        custom_plan_calls_per_s=_per_s(row.custom_plan_calls, before.custom_plan_calls if before else None, seen,
                                       interval_s, span.elapsed_s, span.since_s),
        plans_per_s=_per_s(row.plans, before.plans if before else None, seen, interval_s, span.elapsed_s,
                           span.since_s),
        mean_exec_ms=_mean(row.total_exec_time_ms, row.calls, first.total_exec_time_ms if first else None,
                           first.calls if first else None),
        mean_plan_ms=_mean(row.total_plan_time_ms, row.plans, first.total_plan_time_ms if first else None,
                           first.plans if first else None),
        rows_per_call=_mean(row.rows, row.calls, first.rows if first else None, first.calls if first else None))


def _with_texts(session: Session, schema_sql: str, candidates: list[StatementRates],
                held: list[list[HeldLocksRow]]) -> list[StatementRates]:
    """The candidates with their texts and roles (one query) and what the pg_locks snapshots saw of each."""
    if not candidates:
        return []
    texts = {(r.queryid, r.userid): r for r in session.query_rows("audit_pgss_texts", StatementTextRow,
                                                                   [[c.queryid for c in candidates]],
                                                                   fill={"schema": schema_sql})}
    out = []
    for c in candidates:
        t = texts.get((c.queryid, c.userid))
        out.append(replace(c, query=(t.query if t else None) or "", rolname=t.rolname if t else None))
    seen = held_locks_per_call(held, [c.queryid for c in out], {c.queryid: c.query for c in out})
    return [replace(c, held=seen.get(c.queryid)) for c in out]


def _choose(rows: list[StatementRates], candidates: list[StatementRates], top_n: int,
            notes: list[str]) -> list[StatementRates]:
    """The top ``top_n`` candidates that lock tables: lockscope's own queries and utility statements left out
    (each kind noted)."""
    own = [r for r in candidates if _OWN_QUERY.search(r.query)]
    utility = [r for r in candidates if r not in own and not _PROBEABLE.match(_SQL_PREPARE.sub("", r.query, 1))]
    kept = [r for r in candidates if r not in own and r not in utility]
    if utility:
        notes.append(f"{len(utility)} utility statements among the top ones (e.g. "
                     f"{' '.join(utility[0].query.split())[:40]}) take no table locks worth auditing: skipped.")
    if len(rows) > len(own) + len(utility) + top_n:
        notes.append(f"{len(rows)} statements in pg_stat_statements: the top {top_n} by calls are audited "
                     f"(--top N to change).")
    return kept[:top_n]


def _fastpath_exceeded(session: Session, settings: AuditSettings, notes: list[str]) -> int | None:
    """PG 19's server counter of fast-path overflows (``pg_stat_lock``), None without the view or access."""
    if not settings.has_pg_stat_lock:
        return None
    try:
        return sum(int(r.fastpath_exceeded or 0) for r in session.query_rows("audit_pg_stat_lock", StatLockRow))
    except DatabaseError as exc:
        notes.append(f"pg_stat_lock could not be read ({exc}).")
        return None


def read_workload(session: Session, settings: AuditSettings, *, interval_s: float, top_n: int,
                  sleep: Callable[[float], None] = time.sleep,
                  during_interval: Callable[[], None] | None = None,
                  lock_snapshots: bool = True) -> tuple[Workload, list[StatementRates]]:
    """Take the pg_stat_statements snapshots and read the top statements' texts.

    During the interval, unless ``lock_snapshots`` is False, one pg_locks snapshot a second of the relation locks
    the database's active client backends hold (``audit_held_locks.sql``, through the session's paced
    :meth:`~lockscope.db.Session.query_rows`): the measured main-table locks per call of each statement.

    :param interval_s: seconds between the two snapshots; 0 = rates since the last reset (no lock snapshot).
    :param top_n: statements kept (count).
    :param during_interval: called right after the first snapshot (the demo starts its workload there).
    :param lock_snapshots: take the pg_locks snapshots during the interval.
    :return: the :class:`Workload` (without probes) and the chosen statements (:class:`StatementRates`).
    """
    if settings.pgss_schema is None:
        return Workload(False, notes=(
            "pg_stat_statements is not installed in this database: statement footprints and main-lock-table "
            "rates skipped. Enable with shared_preload_libraries = 'pg_stat_statements' (restart) and "
            "CREATE EXTENSION pg_stat_statements;",)), []
    schema_sql = session.identifier(settings.pgss_schema)
    try:
        span = _take_snapshots(session, settings, schema_sql, interval_s=interval_s, sleep=sleep,
                               during_interval=during_interval, lock_snapshots=lock_snapshots)
    except DatabaseError as exc:
        grant = "" if settings.read_all_stats else " (GRANT pg_read_all_stats TO " + settings.current_user + ")"
        return Workload(False, notes=(
            f"pg_stat_statements could not be read ({exc}): statement footprints skipped. It must be in "
            f"shared_preload_libraries and readable by {settings.current_user}{grant}.",)), []
    notes: list[str] = []
    hidden = sum(1 for key in span.second if key[0] == 0)
    if hidden:
        notes.append(f"{hidden} pg_stat_statements entries of other roles are hidden from "
                     f"{settings.current_user}: GRANT pg_read_all_stats TO {settings.current_user} to audit them.")
    rows = _rates(span, interval_s)
    # texts for a few more than N, so utility statements (BEGIN, SET, ...) and lockscope's own queries do not
    # take the places of the statements that lock tables
    candidates = _with_texts(session, schema_sql, rows[: top_n * 2 + 20], span.held)
    chosen = _choose(rows, candidates, top_n, notes)
    fastpath_exceeded = _fastpath_exceeded(session, settings, notes)
    if not settings.track_planning and not any(r.generic_plan_calls is not None for r in chosen):
        notes.append("pg_stat_statements.track_planning is off: calls are split into planned ones and reuses of a "
                     "cached plan from pg_locks snapshots" + (" taken during the interval" if span.held else
                     " — none were taken (an interval of 0 s): the phase is unknown, both bounds are shown") +
                     ". SET pg_stat_statements.track_planning = on (no restart) records the split exactly.")
    workload = Workload(True, entries=len(span.second), hidden=hidden, interval_s=span.elapsed_s,
                        since_s=span.since_s, notes=tuple(notes), pg_stat_lock_fastpath_exceeded=fastpath_exceeded,
                        top_n=top_n, track_planning=settings.track_planning, lock_snapshots=len(span.held))
    return workload, chosen


#: Seconds between two pg_locks snapshots during the interval (``audit_held_locks.sql``).
HELD_LOCKS_EVERY_S = 1.0


def _hold_interval(session: Session, t0: float, interval_s: float, sleep: Callable[[float], None],
                   snapshots: list[list[HeldLocksRow]] | None) -> None:
    """Wait out the interval; with ``snapshots``, read the held relation locks every :data:`HELD_LOCKS_EVERY_S`
    (paced again by the session) and append each snapshot's rows."""
    end = t0 + interval_s
    while (now := time.monotonic()) < end:
        if snapshots is not None:
            try:
                snapshots.append(session.query_rows("audit_held_locks", HeldLocksRow))
            except DatabaseError:
                snapshots = None  # e.g. no access: the split falls back to the next basis
        now = time.monotonic()
        sleep(max(0.0, min(HELD_LOCKS_EVERY_S, end - now)))


def _mean(total: float | None, count: int | None, first_total: float | None,
          first_count: int | None) -> float | None:
    """A total's mean over its count (e.g. ms per call), over the interval (``first_*`` = the first snapshot's,
    None for since the reset); None without the counters or without a count."""
    if total is None or count is None:
        return None
    t = float(total) - float(first_total or 0.0)
    n = int(count) - int(first_count or 0)
    return t / n if n > 0 else None


def _per_s(now: int | None, then: int | None, had_first: bool, interval_s: float, elapsed: float,
           since_s: float | None) -> float | None:
    """A counter's rate: its delta over the interval (``then`` = its value in the first snapshot, which had the
    entry when ``had_first``), or its value since the reset; None without the counter."""
    if now is None:
        return None
    if interval_s > 0:
        if not had_first:
            return max(int(now), 0) / elapsed
        return max(int(now) - int(then or 0), 0) / elapsed
    return int(now) / since_s if since_s else 0.0


def _since_reset_s(session: Session, schema_sql: str, settings: AuditSettings) -> float | None:
    if session.facts.server_version_num >= PG14:
        try:
            reset = session.query_rows("audit_pgss_reset", StatsResetRow, fill={"schema": schema_sql})[0].stats_reset
            if reset is not None:
                return max((settings.now - reset).total_seconds(), 1e-6)
        except DatabaseError:
            pass
    # PG 13 has no pg_stat_statements_info: the postmaster start bounds the counters' age
    row = session.query_rows("audit_postmaster_age", PostmasterAgeRow)[0]
    return max(float(row.age_s), 1e-6)


def _custom_plan(session: Session, text: str, param_count: int,
                 binding: ParamBinding) -> tuple[PlanFootprint | None, str | None]:
    """The custom plan's footprint (with the derived parameter values), or None and why not."""
    if param_count and binding.reason is not None:
        return None, binding.reason
    try:
        fp = measure_footprint(session, text, params=list(binding.values)) if param_count else \
            measure_footprint(session, text)
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
    text = _SQL_PREPARE.sub("", row.query, count=1)
    if _OWN_QUERY.search(text):
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
    binding = derive_params(session, checked.text, checked.param_count, cache)
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
                             custom_plan_calls_per_s=row.custom_plan_calls_per_s, held=row.held)
    checks = _prune_checks(catalog, custom) if custom is not None else ()
    return StatementAudit(**base, kind=kind, params=binding.values, param_sources=binding.sources, custom=custom,
                          custom_reason=custom_reason, generic=generic, generic_reuse=reuse,
                          generic_reason=generic_reason,
                          spilled_per_call=split.main_table_per_call if split is not None else 0.0,
                          basis=split.basis if split is not None else "none", prune_checks=checks, split=split)


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
