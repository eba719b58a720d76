"""``run_audit``: catalog + workload + capacity model -> ranked findings, each with evidence and a fix.

Read-only and on one connection: three catalog queries, two pg_stat_statements snapshots, the top statements' texts,
and paced EXPLAIN probes (READ ONLY transactions, always rolled back). Works on a standby.

Severity (documented in docs/audit.md):

- **high**: a table whose every statement spills (pruned/plain footprint over the fast-path capacity) and that is
  read; a statement with >= 1000 main-lock-table acquisitions/s; the shared lock table exhausted by spilled locks
  alone at max_connections sessions.
- **medium**: a spilling statement with any rate; an unread table that spills; a partitioned table whose unpruned
  footprint spills; a statement that does not prune and spills; a generic plan that spills where the custom plan
  does not; the shared lock table exhausted if fast-path locks move to it; a settings change that removes spills.
- **low**: near the limit (2 or fewer free slots in the fullest group), non-pruning or generic > custom without spill,
  invalid / duplicate / redundant indexes, partition granularity options.
- **info**: unused or protected indexes, skipped inputs, server counters.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..budget import LockTableBudget
from ..capacity import FP_LOCK_SLOTS_PER_GROUP, CapacityModel, fast_path_groups
from ..catalog import AuditSettings, Catalog, database_facts, read_catalog, read_settings
from ..db import Session
from ..rows import DumpLockRow
from ..services import SERVICE_NAMES, set_mlpt_sql
from ..text import plural
from ..versions import PG19, default_max_locks_per_transaction
from ..workload.probes import PrivilegeSummary, StatementAudit, privilege_summary, probe_statements
from ..workload.statements import StatementRates, Workload, read_workload
from .advice import (
    GranularityAdvice,
    MlptAdvice,
    SharedLockRisk,
    granularity_advice,
    mlpt_advice,
    shared_lock_risk,
)
from .findings import HIGH_MAIN_PER_S, SEVERITIES, Finding
from .indexes import DropPlan, IndexFinding, index_findings, smallest_drop_set
from .lockbudget import LockBudgetAudit, lock_budget_audit, lock_budget_findings
from .partitions import LockPartitionLoad, lock_partition_load
from .tables import TableFootprint, headroom, table_footprints
from .transactions import (
    ScriptWorkload,
    TransactionsSeen,
    audit_transactions,
    held_transaction_findings,
    transaction_findings,
)

__all__ = [
    "HIGH_MAIN_PER_S",
    "SEVERITIES",
    "AuditOptions",
    "AuditReport",
    "Finding",
    "FindingsContext",
    "build_findings",
    "run_audit",
]

#: Main-lock-table acquisitions/s below which a measured workload gets no restart advice (a few statements planned
#: per new connection stay below it on any server).
QUIET_MAIN_PER_S = 100.0


@dataclass(frozen=True)
class AuditOptions:
    """What to read and how hard.

    :ivar interval_s: seconds between the two pg_stat_statements snapshots (0 = rates since the last reset).
    :ivar top_n: statements audited (count, top by calls).
    :ivar unused_min_age_s: statistics age (s) from which idx_scan = 0 counts as unused.
    :ivar statements: False skips pg_stat_statements entirely.
    """

    interval_s: float = 10.0
    top_n: int = 200
    unused_min_age_s: float = 7 * 86400
    statements: bool = True


@dataclass(frozen=True)
class AuditReport:
    """Everything ``lockscope audit`` found.

    :ivar capacity: the server's fast-path capacity.
    :ivar tables: per top-level table footprints, ranked.
    :ivar workload: pg_stat_statements results with probed statements.
    :ivar index_findings: invalid / duplicate / redundant / unused indexes.
    :ivar drop_plans: per table over capacity, the smallest droppable set.
    :ivar findings: ranked (severity, then score).
    :ivar names: OID -> qualified name for every relation and index.
    :ivar database_oid: the audited database's OID (the LOCKTAG's database), None when not read.
    :ivar partition_load: main-lock-table acquisitions/s per lock partition of the audited statements, the hottest
        partition and what loads it (:mod:`.partitions`); None without a pg_stat_statements workload.
    :ivar timings_s: seconds per phase (catalog, footprints, workload, probes, total).
    :ivar transactions: the workload's transactions: measured (``--scratch --workload``), or the caveat that a
        transaction may hold more than its statements, and what the pg_locks snapshots show
        (:class:`lockscope.audit.transactions.TransactionsSeen`).
    :ivar lock_budget: what pg_dump, DDL on each partitioned table and max_connections sessions need from the
        shared lock table (:mod:`.lockbudget`); None in reports built without it.
    :ivar privileges: the statements derived from the catalog or measured through the EXPLAIN helper because the
        role may not EXPLAIN them, and the GRANTs that would let it (:mod:`lockscope.privileges`).
    :ivar managed_service: the managed service the server is (``ServerFacts.managed_service``; ``""``: none known).
    """

    server_version: str
    server_version_num: int
    database: str
    in_recovery: bool
    capacity: CapacityModel
    max_connections: int
    max_backends: int
    max_prepared_transactions: int
    plan_cache_mode: str
    enable_partition_pruning: bool
    shared_lock_table_entries: int
    stats_age_s: float
    stats_since_source: str
    relations: int
    indexes: int
    tables: tuple[TableFootprint, ...]
    workload: Workload
    index_findings: tuple[IndexFinding, ...]
    drop_plans: tuple[DropPlan, ...]
    mlpt: MlptAdvice
    shared_lock: SharedLockRisk
    granularity: tuple[GranularityAdvice, ...]
    findings: tuple[Finding, ...]
    names: dict[int, str] = field(default_factory=dict)
    database_oid: int | None = None
    partition_load: LockPartitionLoad | None = None
    notes: tuple[str, ...] = ()
    timings_s: dict[str, float] = field(default_factory=dict)
    demo: bool = False
    transactions: TransactionsSeen = field(default_factory=TransactionsSeen)
    lock_budget: LockBudgetAudit | None = None
    privileges: PrivilegeSummary = field(default_factory=PrivilegeSummary)
    managed_service: str = ""

    def count(self, severity: str) -> int:
        """Findings at this severity (count)."""
        return sum(1 for f in self.findings if f.severity == severity)

    def at_or_above(self, severity: str) -> int:
        """Findings at this severity or worse (count)."""
        limit = SEVERITIES.index(severity)
        return sum(1 for f in self.findings if SEVERITIES.index(f.severity) <= limit)


def _groups_text(groups: dict[int, int]) -> str:
    return ", ".join(f"group {g}: {n}" for g, n in groups.items())


def _plan_calls_text(s: StatementAudit) -> str:
    """PG 19 pg_stat_statements ``generic_plan_calls`` / ``custom_plan_calls`` as evidence, or ""."""
    if s.generic_plan_calls is None:
        return ""
    gp, cp = s.generic_plan_calls, s.custom_plan_calls or 0
    return f"; pg_stat_statements: {gp:,} of {gp + cp:,} calls ran the generic plan (generic_plan_calls)"


def _default_text(server_version_num: int, current_mlpt: int, groups_needed: int | None) -> str:
    """Whether the current setting is PostgreSQL's default (64 up to 18, 128 = 8 groups from 19,
    ``versions.default_max_locks_per_transaction``), and whether PG 19's default would fit, as evidence text."""
    default = default_max_locks_per_transaction(server_version_num)
    text = f" (this server's default, {default})" if current_mlpt == default else ""
    pg19_default = default_max_locks_per_transaction(PG19)
    if server_version_num < PG19 and groups_needed is not None:
        fits = groups_needed <= fast_path_groups(PG19, pg19_default)
        text += (f"; PostgreSQL 19's default {pg19_default} ({fast_path_groups(PG19, pg19_default)} groups) "
                 + ("would fit them" if fits else "would not be enough"))
    return text


def _quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _drop_sql(ix: IndexFinding) -> str:
    if ix.partitioned:
        # DROP INDEX CONCURRENTLY is refused for partitioned indexes; this takes ACCESS EXCLUSIVE on the tree.
        return f"DROP INDEX {ix.qualified};  -- partitioned index: no CONCURRENTLY; locks {ix.table} exclusively"
    return f"DROP INDEX CONCURRENTLY {ix.qualified};"


@dataclass(frozen=True)
class FindingsContext:
    """What :func:`build_findings` turns into findings: the catalog, the capacity model and every analysis result.

    :ivar tables: per top-level table footprints.
    :ivar indexes: invalid / duplicate / redundant / unused indexes.
    :ivar plans: per table over capacity, the smallest droppable set.
    :ivar granularity: partition granularity options per partitioned table.
    :ivar database: the audited database's name (for ``ALTER ROLE ... IN DATABASE``).
    :ivar max_connections: the server's max_connections (sessions for the shared-lock-table finding).
    :ivar transactions: what the audit knows of the workload's transactions.
    :ivar lock_budget: the database's own lock budget, None when not computed.
    :ivar managed_service: the managed service the server is (``ServerFacts.managed_service``), its fixes its way.
    :ivar standby: the server is a hot standby (its fixes say what a setting change means there).
    """

    catalog: Catalog
    model: CapacityModel
    tables: Sequence[TableFootprint]
    indexes: Sequence[IndexFinding]
    plans: Sequence[DropPlan]
    workload: Workload
    mlpt: MlptAdvice
    risk: SharedLockRisk
    granularity: Sequence[GranularityAdvice]
    database: str
    max_connections: int
    transactions: TransactionsSeen = field(default_factory=TransactionsSeen)
    lock_budget: LockBudgetAudit | None = None
    managed_service: str = ""
    standby: bool = False

    @property
    def cap(self) -> str:
        """The fast-path capacity as evidence text."""
        return self.model.describe()

    @property
    def mlpt_fix(self) -> str:
        """The max_locks_per_transaction change as a fix, or "" when none is needed."""
        if self.mlpt.mlpt_recommended is None or not self.mlpt.change_needed:
            return ""
        return (f"max_locks_per_transaction = {self.mlpt.mlpt_recommended}"
                + (" on PostgreSQL 18" if self.mlpt.upgrade else ""))

    def plan_of(self, table: TableFootprint) -> DropPlan | None:
        """The table's drop plan (made for tables over capacity only), or None."""
        return {p.table_oid: p for p in self.plans}.get(table.oid)

    def sufficient_plan(self, table: TableFootprint) -> DropPlan | None:
        """The table's drop plan when the table spills and dropping its droppable indexes suffices, else None."""
        plan = self.plan_of(table)
        if table.pruned.spilled and plan is not None and plan.index_oids and plan.sufficient:
            return plan
        return None


def _table_spill_finding(ctx: FindingsContext, t: TableFootprint, used_tables: set[int]) -> Finding:
    """``table-spill``: the pruned (or plain) footprint of a table spills."""
    rel = ctx.catalog.relations[t.oid]
    p = t.pruned
    idx_by_oid = {f.index_oid: f for f in ctx.indexes}
    plan = ctx.plan_of(t)
    fixes = []
    drop_sql: list[str] = []
    if plan is not None and ctx.sufficient_plan(t) is not None:
        names = ", ".join(idx_by_oid[o].qualified for o in plan.index_oids)
        fixes.append(f"drop {plural(len(plan.index_oids), 'index')} ({names}): the smallest safe set "
                     f"that fits{'' if plan.exact else ' found (greedy)'}")
        for o in plan.index_oids:
            f = idx_by_oid[o]
            drop_sql.append(f"-- {t.qualified}: {p.locks} planner locks, {p.spilled} spill at {ctx.cap}; "
                            f"{f.qualified} is {f.kind} ({f.evidence})\n{_drop_sql(f)}")
    elif plan is not None:
        fixes.append(f"no safe index set suffices ({plural(plan.short_by, 'more lock')} over after "
                     "dropping every droppable index)")
    if ctx.mlpt_fix:
        fixes.append(ctx.mlpt_fix)
    read = rel.scans > 0 or t.oid in used_tables
    case = {"plain": "a statement on it", "pruned": "a statement pruned to one partition",
            "inheritance": "a statement on it (all children)"}[p.case]
    overflow = ""
    if p.overflowing_groups and p.locks <= ctx.model.slots:
        overflow = (f"; fast-path group overflow below the slot count ({_groups_text(p.overflowing_groups)}"
                    f" of {FP_LOCK_SLOTS_PER_GROUP}, lock.c FAST_PATH_REL_GROUP)")
    return Finding(
        "high" if read else "medium", "table-spill", t.qualified,
        f"{t.qualified}: {case} spills {plural(p.spilled, 'lock')} to the main lock table",
        f"{p.locks} planner locks "
        f"({'1 table + ' + str(t.indexes) + ' indexes' if p.case == 'plain' else p.case}) "
        f"vs {ctx.cap}: {p.spilled} spilled{overflow}; table scans since stats reset: {rel.scans}",
        "; or ".join(fixes) or "fewer indexes or a larger max_locks_per_transaction (PG 18+)",
        tuple(drop_sql), float(p.spilled))


def _table_unpruned_spill_finding(ctx: FindingsContext, t: TableFootprint) -> Finding:
    """``table-unpruned-spill``: a partitioned table fits when pruned, spills when not."""
    u = t.unpruned
    assert u is not None
    return Finding(
        "medium", "table-unpruned-spill", t.qualified,
        f"{t.qualified}: a statement that does not prune locks {u.locks} relations, {u.spilled} spill",
        f"{t.partitions} partitions, {t.all_relations} relations in the tree; pruned to one partition: "
        f"{t.pruned.locks} locks (fits {ctx.cap}); unpruned: {u.locks} locks, {u.spilled} spilled",
        "make every statement prune at plan time (constant partition-key clause; plan_cache_mode = "
        "force_custom_plan for prepared statements), or coarser partitions",
        (), float(u.spilled) / 100)


def _table_near_limit_finding(ctx: FindingsContext, t: TableFootprint) -> Finding | None:
    """``table-near-limit``: 2 or fewer free slots left in the fullest fast-path group, or None."""
    p = t.pruned
    room = headroom(p, ctx.model)
    if not (0 <= room <= 2 and p.locks >= FP_LOCK_SLOTS_PER_GROUP - 2):
        return None
    return Finding(
        "low", "table-near-limit", t.qualified,
        f"{t.qualified}: {plural(room, 'free fast-path slot')} left in its fullest group",
        f"{p.locks} planner locks vs {ctx.cap}; a join with another table or {room + 1} more indexes spills",
        "avoid adding indexes; drop unused ones", (), float(p.locks) / 100)


def _table_findings(ctx: FindingsContext) -> list[Finding]:
    """One finding per table at most: it spills, spills when not pruned, or is near the limit."""
    used_tables: set[int] = set()
    for s in ctx.workload.statements:
        if s.steady is not None:
            used_tables.update(ctx.catalog.top_of(o) for o in s.steady.relation_oids if o in ctx.catalog.relations)
    out: list[Finding] = []
    for t in ctx.tables:
        if t.pruned.spilled:
            out.append(_table_spill_finding(ctx, t, used_tables))
        elif t.unpruned is not None and t.unpruned.spilled and t.kind == "partitioned table":
            out.append(_table_unpruned_spill_finding(ctx, t))
        elif (near := _table_near_limit_finding(ctx, t)) is not None:
            out.append(near)
    return out


def _probed(ctx: FindingsContext) -> list[StatementAudit]:
    """The statements that were probed (not skipped, with a steady-state footprint)."""
    return [s for s in ctx.workload.statements if not s.skipped_reason and s.steady is not None]


def _statement_spill_findings(ctx: FindingsContext) -> list[Finding]:
    """``statement-spill``: a statement whose calls put locks in the main lock table, ranked by acquisitions/s."""
    out: list[Finding] = []
    for s in _probed(ctx):
        steady = s.steady
        assert steady is not None
        if s.spilled_per_call <= 0:
            continue
        rate = s.main_lock_table_per_s
        sev = "high" if rate >= HIGH_MAIN_PER_S else "medium" if s.calls_per_s > 0 else "low"
        phase = s.split.describe() if s.split is not None else "phase not measured"
        rate_low = s.main_lock_table_per_s_low
        shown = f"{rate_low:,.0f}-{rate:,.0f}" if s.basis == "unknown" and rate_low < rate else f"{rate:,.0f}"
        out.append(Finding(
            sev, "statement-spill", f"queryid {s.queryid}",
            f"{shown} main-lock-table acquisitions/s: {s.short_query}",
            f"{s.calls_per_s:,.1f} calls/s x {s.spilled_per_call:.3g} spilled locks per call ({phase}; the "
            f"{steady.phase} plan: {steady.locks} locks at {ctx.cap}); role {s.rolname}",
            ctx.mlpt_fix or "see the table findings for its tables", (), rate + s.spilled_per_call))
    return out


def _non_pruning_findings(ctx: FindingsContext) -> list[Finding]:
    """``non-pruning``: a statement whose custom plan locks every partition of a partitioned table."""
    out: list[Finding] = []
    for s in _probed(ctx):
        for check in s.non_pruning:
            spills = s.custom is not None and s.custom.spilled > 0
            out.append(Finding(
                "medium" if spills else "low", "non-pruning", f"queryid {s.queryid}",
                f"does not prune {check.qualified} at plan time: {s.short_query}",
                f"custom plan locks {check.partitions_locked}/{check.partitions_total} partitions, "
                f"{s.custom.locks if s.custom else 0} locks in all; {s.calls_per_s:,.1f} calls/s",
                "compare the partition key with a constant or parameter directly (not a subquery, a stable "
                "function or an expression on the key), or keep enable_partition_pruning on", (),
                s.calls_per_s))
    return out


def _generic_over_custom_findings(ctx: FindingsContext) -> list[Finding]:
    """``generic-over-custom``: a statement whose generic plan (built at execution 6, then reused) locks more."""
    out: list[Finding] = []
    for s in _probed(ctx):
        if not s.generic_locks_more or s.custom is None or s.generic is None:
            continue
        reuse = s.generic_reuse
        spills = (s.generic.spilled > 0 or (reuse is not None and reuse.spilled > 0))
        sev = "medium" if spills and not s.custom.spilled else "low"
        out.append(Finding(
            sev, "generic-over-custom", f"queryid {s.queryid}",
            f"its generic plan locks more than its custom plan: {s.short_query}",
            f"custom plan {s.custom.locks} locks ({s.custom.spilled} spilled); building the generic plan "
            f"(execution 6 of a prepared statement) {s.generic.locks} ({s.generic.spilled} spilled); reusing it "
            f"{reuse.locks if reuse else '-'} per execution ({reuse.spilled if reuse else '-'} spilled)"
            + _plan_calls_text(s),
            f"plan_cache_mode = force_custom_plan for role {s.rolname}" if s.rolname else
            "plan_cache_mode = force_custom_plan for the application's role", (), s.calls_per_s))
    return out


def _shared_lock_findings(ctx: FindingsContext) -> list[Finding]:
    """``shared-lock-table``: max_connections sessions of the largest footprints exhaust the shared lock table."""
    risk, conns = ctx.risk, ctx.max_connections
    if risk.severity == "ok":
        return []
    return [Finding(
        risk.severity, "shared-lock-table", "max_locks_per_transaction",
        f"shared lock table: {conns} sessions running the largest statement need "
        f"{max(risk.need_spilled, risk.need_all) if risk.severity == 'medium' else risk.need_spilled:,} of "
        f"{risk.entries:,} entries",
        f"capacity max_locks_per_transaction x (MaxBackends + max_prepared_transactions) = {risk.entries:,}; "
        f"largest footprint {risk.largest_locks} locks ({risk.largest_subject}) x {conns} = "
        f"{risk.need_all:,}; largest spilled {risk.largest_spilled} ({risk.spilled_subject}) x "
        f"{conns} = {risk.need_spilled:,}; beyond it: ERROR 53200 out of shared memory",
        "raise max_locks_per_transaction, lower max_connections (a pooler), or shrink the footprints", (),
        float(risk.need_spilled))]


def _index_findings(ctx: FindingsContext) -> list[Finding]:
    """``index-<kind>``: every index finding not already in a table's drop set (those are in ``table-spill``)."""
    in_plans = {o for t in ctx.tables if (plan := ctx.sufficient_plan(t)) is not None for o in plan.index_oids}
    out: list[Finding] = []
    for f in ctx.indexes:
        if f.index_oid in in_plans:
            continue
        index_sql: tuple[str, ...] = ()
        if f.droppable and f.kind in ("invalid", "duplicate"):
            index_sql = (f"-- {f.qualified} on {f.table} is {f.kind}: {f.evidence}; every statement on {f.table} "
                         f"locks it at planning\n{_drop_sql(f)}",)
        sev = "low" if f.kind in ("invalid", "duplicate", "redundant") and f.droppable else "info"
        protected = f" (kept: {f.protected_reason})" if f.protected_reason else ""
        out.append(Finding(
            sev, f"index-{f.kind}", f.qualified, f"{f.kind} index {f.qualified} on {f.table}{protected}",
            f"{f.evidence}; idx_scan {f.idx_scan}; {f.size_bytes / 2**20:.1f} MiB",
            "drop it (no plan can use it)" if f.kind in ("invalid", "duplicate") and f.droppable else
            "drop it if no query needs it" if f.droppable else f"keep it ({f.protected_reason})",
            index_sql, float(f.idx_scan == 0)))
    return out


def _mlpt_sql(mlpt: MlptAdvice, shmem: str, service: str = "", standby: bool = False) -> tuple[str, ...]:
    """The ``--sql`` script lines of the max_locks_per_transaction finding (none when an upgrade is needed)."""
    if mlpt.upgrade or mlpt.mlpt_recommended is None:
        return ()
    return (f"-- {mlpt.groups_needed} fast-path groups fit every audited statement and table "
            f"(hash-aware, real OIDs); any value {mlpt.mlpt_min}..{mlpt.mlpt_recommended} gives them{shmem}. "
            f"Needs a restart; set it on standbys first (they need >= the primary's value).\n"
            + set_mlpt_sql(service, mlpt.mlpt_recommended, standby=standby),)


def _mlpt_findings(ctx: FindingsContext) -> list[Finding]:
    """``max-locks-per-transaction``: the setting that fits every audited statement and table in the fast path."""
    mlpt = ctx.mlpt
    if not mlpt.change_needed or mlpt.mlpt_recommended is None:
        return []
    target = "PostgreSQL 18" if mlpt.upgrade else "this server"
    high = mlpt.mlpt_recommended
    sev = "medium" if mlpt.spilling_now or mlpt.tables_spilling_now else "low"
    # a measured workload that puts (next to) nothing in the main lock table gets no restart advice: its calls
    # reuse cached plans (workload/phases.py); what planning them would cost stays a what-if
    measured = [x for x in ctx.workload.statements
                if x.split is not None and x.basis != "unknown" and x.calls_per_s > 0]
    quiet = bool(measured) and mlpt.main_per_s_now < QUIET_MAIN_PER_S
    if quiet:
        sev = "info"
    shmem = ""
    if mlpt.shmem_after_bytes is not None:
        shmem = (f"; lock table + fast-path shared memory {mlpt.shmem_now_bytes / 2**20:.1f} MiB -> "
                 f"{mlpt.shmem_after_bytes / 2**20:.1f} MiB")
    title = (f"on {target}, max_locks_per_transaction = {high} ({mlpt.groups_needed} fast-path groups) removes "
             f"{mlpt.spilling_now - mlpt.spilling_after} of {mlpt.spilling_now} spilling statements")
    if not measured and mlpt.spilling_now == 0:  # no statement footprint to count: say what it does for tables
        title = (f"on {target}, max_locks_per_transaction = {high} ({mlpt.groups_needed} fast-path groups) keeps "
                 f"{mlpt.tables_spilling_now} spilling tables' planner locks in the fast path (no statement "
                 "footprint measured)")
    if quiet:
        title = (f"not needed for the measured workload ({mlpt.main_per_s_now:,.1f} main-lock-table "
                 f"acquisitions/s: its calls reuse cached plans); if they planned, max_locks_per_transaction = "
                 f"{high} on {target} would keep {mlpt.tables_spilling_now} spilling tables' planner locks in "
                 "the fast path")
    return [Finding(
        sev, "max-locks-per-transaction", "max_locks_per_transaction", title,
        f"main-lock-table acquisitions/s {mlpt.main_per_s_now:,.0f} -> {mlpt.main_per_s_after:,.0f}; tables "
        f"spilling {mlpt.tables_spilling_now} -> {mlpt.tables_spilling_after}; now "
        f"{mlpt.current_mlpt}{_default_text(ctx.model.server_version_num, mlpt.current_mlpt, mlpt.groups_needed)}"
        f"{shmem}",
        (f"ALTER SYSTEM SET max_locks_per_transaction = {high} (restart)" if not ctx.managed_service else
         f"max_locks_per_transaction = {high} in the {SERVICE_NAMES[ctx.managed_service]} parameters (restart)")
        + (" after upgrading to PostgreSQL 18" if mlpt.upgrade else ""),
        _mlpt_sql(mlpt, shmem, ctx.managed_service, ctx.standby), mlpt.main_per_s_now)]


def _plan_cache_mode_findings(ctx: FindingsContext) -> list[Finding]:
    """``plan-cache-mode``: per role, the statements whose generic plans spill and custom plans do not."""
    roles: dict[str, list[StatementAudit]] = {}
    for s in ctx.workload.statements:
        if (s.generic_locks_more and s.rolname and s.generic is not None and s.custom is not None
                and not s.custom.spilled
                and (s.generic.spilled or (s.generic_reuse is not None and s.generic_reuse.spilled))):
            roles.setdefault(s.rolname, []).append(s)
    out: list[Finding] = []
    for role, stmts in sorted(roles.items()):
        ids = ", ".join(str(s.queryid) for s in stmts[:5])
        alter = (f"ALTER ROLE {_quote_ident(role)} IN DATABASE {_quote_ident(ctx.database)} "
                 "SET plan_cache_mode = force_custom_plan")
        out.append(Finding(
            "medium", "plan-cache-mode", f"role {role}",
            f"role {role}: {plural(len(stmts), 'statement')} lock more with a generic plan",
            f"queryids {ids}: generic plans spill, custom plans do not",
            alter,
            (f"-- role {role}: queryids {ids} spill to the main lock table with a generic plan "
             f"(execution 6 builds it: every partition and index; each reuse locks every partition), not with "
             f"a custom plan\n{alter};",),
            sum(s.calls_per_s for s in stmts)))
    return out


def _granularity_findings(ctx: FindingsContext) -> list[Finding]:
    """``partition-granularity``: coarser partitionings of a partitioned table and their unpruned footprints."""
    out: list[Finding] = []
    for g in ctx.granularity:
        opts = "; ".join(f"{o.label}: {o.partitions} partitions, {o.unpruned_locks} locks unpruned, "
                         f"{o.generic_reuse_locks} per generic-plan reuse{' (fits)' if o.fits else ''}"
                         for o in g.options)
        out.append(Finding(
            "low", "partition-granularity", g.qualified,
            f"{g.qualified}: {g.partitions} partitions ({g.current_label}) lock {g.unpruned_locks} relations "
            "when not pruned",
            f"{g.indexes_per_partition:g} indexes per partition; coarser: {opts}",
            "coarser partitions when statements cannot prune (generic plans, no key in WHERE)", (), 0.0))
    return out


def _pg_stat_lock_findings(ctx: FindingsContext) -> list[Finding]:
    """``pg-stat-lock``: the server's own fast-path overflow counter (PG 19 pg_stat_lock), when read."""
    exceeded = ctx.workload.pg_stat_lock_fastpath_exceeded
    if exceeded is None:
        return []
    return [Finding(
        "info", "pg-stat-lock", "pg_stat_lock",
        f"the server counted {exceeded:,} fast-path overflows (pg_stat_lock)",
        "pg_stat_lock.fastpath_exceeded for locktype relation since its stats_reset", "-", (), 0.0)]


def _transaction_findings(ctx: FindingsContext) -> list[Finding]:
    """``transaction-spill``, ``execution-locks``, ``fk-generic-plan`` (the script's measured transactions) and
    ``transaction-held`` (the pg_locks snapshots): :mod:`.transactions`."""
    return (transaction_findings(ctx.transactions.measured, ctx.model)
            + held_transaction_findings(ctx.transactions.held))


def _lock_budget_findings(ctx: FindingsContext) -> list[Finding]:
    """``lock-budget-*``: pg_dump, DDL on a partitioned table, max_connections sessions: :mod:`.lockbudget`."""
    return lock_budget_findings(ctx.lock_budget) if ctx.lock_budget is not None else []


#: One function per kind of finding (each returns its findings in input order; the sort below ranks them all).
_FINDING_KINDS: tuple[Callable[[FindingsContext], list[Finding]], ...] = (
    _table_findings, _statement_spill_findings, _non_pruning_findings, _generic_over_custom_findings,
    _shared_lock_findings, _index_findings, _mlpt_findings, _plan_cache_mode_findings, _granularity_findings,
    _pg_stat_lock_findings, _transaction_findings, _lock_budget_findings,
)


def build_findings(ctx: FindingsContext) -> list[Finding]:
    """Turn footprints and advice into ranked :class:`Finding` objects (pure; see the module docstring).

    Ranked by severity, then score (higher first), then kind and subject.
    """
    out = [f for kind in _FINDING_KINDS for f in kind(ctx)]
    out.sort(key=lambda f: (SEVERITIES.index(f.severity), -f.score, f.kind, f.subject))
    return out


def _read_statements(session: Session, settings: AuditSettings, options: AuditOptions, say: Callable[[str], None],
                     during_interval: Callable[[], None] | None) -> tuple[Workload, list[StatementRates]]:
    """The pg_stat_statements workload and its rows (none when ``options.statements`` is off)."""
    if not options.statements:
        return Workload(False, notes=("statement audit skipped (--no-statements)",)), []
    say("reading pg_stat_statements" + (f" ({options.interval_s:g} s interval)" if options.interval_s else ""))
    return read_workload(session, settings, interval_s=options.interval_s, top_n=options.top_n,
                         during_interval=during_interval)


def _names(catalog: Catalog) -> dict[int, str]:
    """OID -> qualified name for every relation and index of the catalog."""
    names = {oid: r.qualified for oid, r in catalog.relations.items()}
    names.update({oid: i.qualified for oid, i in catalog.indexes.items()})
    return names


def _probe(session: Session, options: AuditOptions, catalog: Catalog, workload: Workload,
           rows: list[StatementRates], say: Callable[[str], None]) -> tuple[Workload, LockPartitionLoad | None, int]:
    """The workload's statements probed, the lock-partition load they make, and the database's OID."""
    t0 = time.monotonic()
    if options.statements and workload.available:
        probed = probe_statements(session, catalog, rows, progress=say)
        workload = Workload(**{**workload.__dict__, "statements": probed, "probe_seconds": time.monotonic() - t0})
    database_oid = database_facts(session)[0]
    load = (lock_partition_load(session, workload.statements, session.facts.capacity, database_oid)
            if options.statements and workload.available else None)
    return workload, load, database_oid


def _lock_budget(session: Session, catalog: Catalog, risk: SharedLockRisk,
                 txns: TransactionsSeen) -> LockBudgetAudit:
    """The database's own lock budget: one read-only query (``audit_dump_locks.sql``) and the catalog."""
    facts = session.facts
    budget = LockTableBudget(facts.server_version_num, facts.max_locks_per_transaction, facts.max_backends,
                             facts.max_prepared_transactions, source="server")
    rows = session.query_rows("audit_dump_locks", DumpLockRow)
    return lock_budget_audit(budget, facts.capacity, rows, catalog, risk, txns.measured,
                             managed_service=facts.managed_service)


def run_audit(session: Session, options: AuditOptions = AuditOptions(), *,
              progress: Callable[[str], None] | None = None,
              during_interval: Callable[[], None] | None = None,
              demo: bool = False, script: ScriptWorkload | None = None) -> AuditReport:
    """Audit the session's database (read-only; see the module docstring).

    :param progress: called with short status texts.
    :param during_interval: called between the two pg_stat_statements snapshots (the demo runs its workload).
    :param script: a scratch audit's ``--workload`` script: its transactions are measured on the scratch server
        (:mod:`.transactions`; statements run there for real, rolled back). Never for a user's server.
    :raises DatabaseError: when the catalog cannot be read; pg_stat_statements problems become notes.
    """
    say = progress or (lambda _msg: None)
    facts = session.facts
    model = facts.capacity
    t0 = time.monotonic()
    notes: list[str] = []
    if facts.in_recovery:
        notes.append("standby: audited read-only; idx_scan and pg_stat_statements count this standby's queries only")
    settings = read_settings(session)
    # the workload interval first, so the catalog's scan counters include it
    workload, rows = _read_statements(session, settings, options, say, during_interval)
    t_workload = time.monotonic()
    say("reading the catalog")
    catalog = read_catalog(session)
    t_catalog = time.monotonic()
    tables = table_footprints(catalog, model)
    idx = index_findings(catalog, unused_min_age_s=options.unused_min_age_s)
    plans = [smallest_drop_set(catalog, model, t, idx) for t in tables if t.pruned.spilled]
    t_footprints = time.monotonic()
    workload, load, database_oid = _probe(session, options, catalog, workload, rows, say)
    privileges = privilege_summary(workload.statements)
    if privileges.sentence():
        notes.append(privileges.sentence())
    if script is not None:
        say("measuring the workload's transactions")
    txns = audit_transactions(session, workload, rows, script)
    t_probes = time.monotonic()
    mlpt = mlpt_advice(catalog, model, facts.max_backends, facts.max_prepared_transactions, tables,
                       workload.statements)
    risk = shared_lock_risk(facts.shared_lock_table_entries, facts.max_connections, tables, workload.statements)
    gran = [g for g in (granularity_advice(catalog, model, t) for t in tables) if g is not None]
    lock_budget = _lock_budget(session, catalog, risk, txns)
    findings = build_findings(FindingsContext(catalog, model, tables, idx, plans, workload, mlpt, risk, gran,
                                              facts.database, facts.max_connections, txns, lock_budget,
                                              facts.managed_service, facts.in_recovery))
    if not catalog.settings.enable_partition_pruning:
        notes.append("enable_partition_pruning is off: every statement on a partitioned table locks all partitions")
    end = time.monotonic()
    return AuditReport(
        server_version=facts.server_version, server_version_num=facts.server_version_num, database=facts.database,
        in_recovery=facts.in_recovery, capacity=model, max_connections=facts.max_connections,
        max_backends=facts.max_backends, max_prepared_transactions=facts.max_prepared_transactions,
        plan_cache_mode=facts.plan_cache_mode, enable_partition_pruning=catalog.settings.enable_partition_pruning,
        shared_lock_table_entries=facts.shared_lock_table_entries, stats_age_s=catalog.settings.stats_age_s,
        stats_since_source=catalog.settings.stats_since_source, relations=len(catalog.relations),
        indexes=len(catalog.indexes), tables=tuple(tables), workload=workload, index_findings=tuple(idx),
        drop_plans=tuple(plans), mlpt=mlpt, shared_lock=risk, granularity=tuple(gran), findings=tuple(findings),
        names=_names(catalog), database_oid=database_oid, partition_load=load,
        notes=tuple(notes + list(workload.notes) + list(txns.notes) + ([txns.caveat] if txns.caveat else [])),
        timings_s={"workload": t_workload - t0, "catalog": t_catalog - t_workload,
                   "footprints": t_footprints - t_catalog, "probes": t_probes - t_footprints, "total": end - t0},
        demo=demo, transactions=txns, lock_budget=lock_budget, privileges=privileges,
        managed_service=facts.managed_service,
    )
