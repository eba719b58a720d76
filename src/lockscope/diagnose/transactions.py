"""The main-lock-table rate ``lockscope diagnose`` stands by: what the server holds, per transaction, beside the
model of the audited statements' footprints.

- **The server's figure** (:class:`ServerRate`): on PostgreSQL 19 the increase of ``pg_stat_lock.fastpath_exceeded``
  over the audit's interval per second (``lock.c LockAcquireExtended`` counts every fast-path-eligible relation lock
  that found its group full: held ones, those released within the transaction, catalog lookups); on 13-18 the
  pg_locks snapshots of the backends in a transaction: held main-table locks per transaction x transactions/s
  (:mod:`lockscope.workload.transactions`; held locks only: a lock taken and released between two snapshots is
  invisible to pg_locks).
- **The model**: the audited statements' EXPLAIN footprints, calls/s x spilled locks per call, each call taken as
  a transaction of its own (:attr:`lockscope.diagnose.engine.Diagnosis.main_per_s`).
- **Transactions** (:class:`TransactionFinding`): each transaction shape the snapshots saw holding main-table locks,
  named by its statements and tables, with the model's spills of its statements alone, the foreign keys whose
  checks' relations it holds in the main lock table (``ri_triggers.c RI_FKey_check``: an SPI plan per constraint
  and backend, generic from its 6th call), and why it holds more than its statements' footprints.
- **Their fixes** (:func:`transaction_fixes`): indexes or statements fewer per transaction, the smallest
  ``max_locks_per_transaction`` whose fast-path groups fit every such transaction's relations with their real OIDs
  (``capacity.smallest_fitting_groups``, ``postinit.c InitializeFastPathLocks``), ``plan_cache_mode`` when the
  held locks are a referenced table's partitions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..capacity import CapacityModel, mlpt_range_for_groups, smallest_fitting_groups
from ..rows import ClassRow, ForeignKeyRow
from ..services import set_mlpt_sql
from ..text import plural
from ..versions import PG18
from ..workload.phases import query_fingerprint
from .fix import Fix, short_list

if TYPE_CHECKING:
    from ..audit.engine import AuditReport
    from ..db import Session
    from ..workload.probes import StatementAudit
    from ..workload.transactions import TransactionLoad, TransactionShape

__all__ = ["BASES", "MODEL_TOLERANCE", "ForeignKeyCheck", "ServerRate", "TransactionFinding", "server_rate",
           "transaction_fixes"]

#: How far (fraction) the server's figure and the model may differ before diagnose says why.
MODEL_TOLERANCE = 0.25
#: :attr:`ServerRate.basis` values.
BASES = ("pg_stat_lock.fastpath_exceeded", "pg_locks snapshots: held main-table locks per transaction x "
         "transactions/s")
#: Transactions shown (most main-lock-table acquisitions/s first).
MAX_TRANSACTIONS = 10


@dataclass(frozen=True)
class ForeignKeyCheck:
    """A foreign key whose check's relations a transaction held in the main lock table.

    :ivar constraint: its name.
    :ivar table: the referencing table (qualified name).
    :ivar referenced: the referenced table (qualified name).
    :ivar partitioned: the referenced table is partitioned (a generic plan of the check locks every partition).
    :ivar main_locks: the transaction's main-table relations among those the check can lock (count).
    """

    constraint: str
    table: str
    referenced: str
    partitioned: bool
    main_locks: int


@dataclass(frozen=True)
class TransactionFinding:
    """A transaction shape the server held main-table locks for.

    :ivar shape: what the pg_locks snapshots saw (:class:`lockscope.workload.transactions.TransactionShape`).
    :ivar tables: the tables and partitions it holds (qualified names; its statements' order where the audit knows
        them).
    :ivar main_relations: the relations it holds in the main lock table (qualified names).
    :ivar statement_spills: the model's main-table locks per call of each statement alone (count; None when the
        audit did not measure it), in :attr:`shape` statement order.
    :ivar foreign_keys: foreign keys whose checks' relations it holds in the main lock table.
    :ivar unexplained: its main-table relations that none of its measured statements' footprints locks (count).
    :ivar cause: why it holds more main-table locks than its statements' footprints ("" when it does not).
    :ivar fill_together: its statements' own relations (their footprints') spill together more than alone.
    """

    shape: TransactionShape
    tables: tuple[str, ...]
    main_relations: tuple[str, ...]
    statement_spills: tuple[float | None, ...]
    foreign_keys: tuple[ForeignKeyCheck, ...]
    unexplained: int
    cause: str
    fill_together: bool = False

    @property
    def model_spilled_per_txn(self) -> float:
        """The model's main-table locks of its measured statements, each alone (count per transaction)."""
        return sum(s for s in self.statement_spills if s is not None)

    @property
    def beyond_model(self) -> bool:
        """It holds at least one main-table lock per transaction more than its statements' footprints say."""
        return self.shape.held_main_per_txn >= self.model_spilled_per_txn + 1.0

    def describe(self) -> str:
        """E.g. ``transactions of these 5 statements (on public.a, public.b, public.c and 2 more) hold 17
        main-table locks each``."""
        shape, where = self.shape, f" (on {short_list(self.tables)})" if self.tables else ""
        held = f"{shape.held_main_per_txn:.0f}"
        if shape.single_statement or len(shape.statements) == 1:
            return f"1 statement{where} holds {held} main-table locks per transaction"
        return f"transactions of these {len(shape.statements)} statements{where} hold {held} main-table locks each"


@dataclass(frozen=True)
class ServerRate:
    """The server's main-lock-table figures over the audit's interval.

    :ivar main_per_s: main-lock-table acquisitions/s on :attr:`basis`, None when the server gave none (no
        pg_stat_statements interval, no snapshot).
    :ivar basis: one of :data:`BASES`, "" without a figure.
    :ivar held_main_per_s: held main-table locks per transaction x transactions/s, summed over the transactions
        seen (every major), None without snapshots.
    :ivar transactions_per_s: the database's transactions per second (pg_stat_database), None when not read.
    :ivar snapshots: pg_locks snapshots taken (count).
    :ivar transactions_seen: backend transactions they saw (count).
    :ivar transactions: the transactions holding main-table locks, most acquisitions/s first.
    :ivar model_note: why the server's figure and the model differ by more than :data:`MODEL_TOLERANCE`, else "".
    :ivar low_per_s: the figure's 95 % interval, low end (acquisitions/s): the estimate's
        (:attr:`lockscope.workload.transactions.TransactionLoad.held_main_per_s_interval`), the count itself on 19.
    :ivar high_per_s: its high end.
    :ivar completed: transaction shapes whose whole the statements' footprints gave (:func:`_estimate`; count).
    """

    main_per_s: float | None = None
    basis: str = ""
    held_main_per_s: float | None = None
    transactions_per_s: float | None = None
    snapshots: int = 0
    transactions_seen: int = 0
    transactions: tuple[TransactionFinding, ...] = ()
    model_note: str = ""
    low_per_s: float | None = None
    high_per_s: float | None = None
    completed: int = 0

    @property
    def counted(self) -> bool:
        """True when the figure is the server's own count (PG 19 ``pg_stat_lock.fastpath_exceeded``), False for
        the estimate from pg_locks snapshots (PG 13-18)."""
        return self.basis == BASES[0]

    def describe(self) -> str:
        """``counted (pg_stat_lock.fastpath_exceeded)`` or ``estimate from pg_locks snapshots, 95 % 1,200-1,450/s``;
        ``""`` without a figure."""
        if self.main_per_s is None:
            return ""
        if self.counted:
            return "counted (pg_stat_lock.fastpath_exceeded)"
        interval = (f", 95 % {self.low_per_s:,.0f}-{self.high_per_s:,.0f}/s"
                    if self.low_per_s is not None and self.high_per_s is not None else "")
        completed = (f", {self.completed} statement(s) seen part-way through planning completed by their footprints"
                     if self.completed else "")
        return f"estimate from {self.snapshots} pg_locks snapshots{interval}{completed}"


# -- the findings ------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Model:
    """The audited statements by :func:`lockscope.workload.transactions.statement_key` (internal): main-table locks
    per call, the relations the plans their calls take lock (:meth:`StatementAudit.weighted_plans`), the role that
    ran them."""

    spilled: dict[str, float]
    relations: dict[str, tuple[int, ...]]
    roles: dict[str, str]


def _model(audits: Sequence[StatementAudit]) -> _Model:
    spilled: dict[str, float] = {}
    relations: dict[str, tuple[int, ...]] = {}
    roles: dict[str, str] = {}
    for a in audits:
        plans = [p for p, _ in a.weighted_plans()]
        if a.skipped_reason or not plans:
            continue
        fp = query_fingerprint(a.query)
        oids = tuple(dict.fromkeys(o for p in plans for o in p.relation_oids))
        for key in (f"q{a.queryid}", *([f"f{fp}"] if fp else [])):
            spilled[key] = max(spilled.get(key, 0.0), a.spilled_per_call)
            relations[key] = tuple(dict.fromkeys((*relations.get(key, ()), *oids)))
            if a.rolname:
                roles.setdefault(key, a.rolname)
    return _Model(spilled, relations, roles)


def _foreign_keys(shape: TransactionShape, fks: Sequence[ForeignKeyRow], names: Mapping[int, ClassRow],
                  explained: set[int]) -> tuple[ForeignKeyCheck, ...]:
    """The foreign keys of its tables whose check can lock main-table relations of it that none of its statements'
    footprints locks (``explained``)."""
    held, main = set(shape.relation_oids), set(shape.main_relation_oids) - explained
    out = []
    for fk in fks:
        covered = len(main & set(fk.check_relations))
        if fk.table_oid in held and covered:
            out.append(ForeignKeyCheck(fk.constraint_name, _name(names, fk.table_oid), _name(names, fk.referenced_oid),
                                       fk.referenced_partitioned, covered))
    out.sort(key=lambda f: (-f.main_locks, f.constraint))
    return tuple(out)


def _name(names: Mapping[int, ClassRow], oid: int) -> str:
    row = names.get(oid)
    return row.qualified if row is not None else f"oid {oid}"


def _fill_together(shape: TransactionShape, spills: Sequence[float | None], explained: set[int]) -> bool:
    """Its statements' own relations (their footprints') are more of its main-table locks than they spill alone."""
    known = sum(s for s in spills if s is not None)
    own = len(set(shape.main_relation_oids) & explained)
    return len(shape.statements) > 1 and own >= known + 1.0


def _cause(shape: TransactionShape, spills: Sequence[float | None], fks: Sequence[ForeignKeyCheck],
           unexplained: Sequence[str], together: bool) -> str:
    """Why the transaction holds more main-table locks than its statements' footprints (see the module doc)."""
    known = sum(s for s in spills if s is not None)
    if shape.held_main_per_txn < known + 1.0:
        return ""
    parts = []
    if together:
        parts.append(f"its {len(shape.statements)} statements fill the fast path together (alone they spill "
                     f"{known:g} per transaction: every statement keeps its locks until the transaction ends)")
    for fk in fks[:2]:
        parts.append(f"the foreign-key check {fk.constraint} ({fk.table} -> {fk.referenced}) holds {fk.main_locks} "
                     "of them" + (", a partitioned table: a generic plan of the check locks every partition"
                                  if fk.partitioned else ""))
    rest = len(unexplained) - sum(f.main_locks for f in fks)
    if rest > 0:
        parts.append(f"{plural(rest, 'main-table lock')} on relations its statements' EXPLAIN never locks "
                     f"(triggers, sequences, routed partitions: {short_list(list(unexplained))})")
    return "; ".join(parts) or ("locks its statements' footprints do not show (statements not audited, or "
                                "execution locks: triggers, foreign-key checks, sequences, routed partitions)")


def _finding(shape: TransactionShape, model: _Model, names: Mapping[int, ClassRow],
             fks: Sequence[ForeignKeyRow]) -> TransactionFinding:
    spills = tuple(model.spilled.get(k) for k in shape.statements)
    ordered = [o for k in shape.statements for o in model.relations.get(k, ())]
    ordered += [o for o in shape.relation_oids if o not in ordered]
    tables = [names[o].qualified for o in dict.fromkeys(ordered)
              if o in names and o in set(shape.relation_oids) and names[o].relkind not in ("i", "I")]
    explained = {o for k in shape.statements for o in model.relations.get(k, ())}
    unexplained = [_name(names, o) for o in shape.main_relation_oids if o not in explained]
    checks = _foreign_keys(shape, fks, names, explained)
    together = _fill_together(shape, spills, explained)
    return TransactionFinding(shape, tuple(tables), tuple(sorted(_name(names, o) for o in shape.main_relation_oids)),
                              spills, checks, len(unexplained), _cause(shape, spills, checks, unexplained, together),
                              together)


def server_rate(session: Session, report: AuditReport, model_main_per_s: float) -> ServerRate:
    """The server's main-lock-table figure over the audit's interval, its transactions and why it differs from the
    model (see the module docstring). Reads the names of the relations held and, when a transaction held
    main-table locks, the foreign keys of its tables (``forecast_relations.sql``, ``diagnose_foreign_keys.sql``:
    catalog only).

    :param model_main_per_s: the audited statements' main-lock-table acquisitions/s (the model).
    :raises DatabaseError: a catalog read failed.
    """
    w = report.workload
    load = w.transactions
    held = load.held_main_per_s if load is not None else None
    model = _model(w.statements)
    completed = 0
    if w.fastpath_exceeded_per_s is not None:
        figure, basis = w.fastpath_exceeded_per_s, BASES[0]
        low, high = figure, figure
    elif load is not None and load.transactions_seen:
        figure, low, high, completed = _estimate(load, model)
        basis = BASES[1]
    else:
        # no snapshot saw a transaction in the database (short ones between two snapshots): no figure
        return ServerRate(snapshots=load.snapshots if load is not None else 0,
                          transactions_per_s=w.transactions_per_s)
    shapes = [s for s in (load.shapes if load is not None else ()) if s.held_main_per_txn > 0 and s.main_per_s > 0]
    shapes = shapes[:MAX_TRANSACTIONS]
    oids = sorted({o for s in shapes for o in (*s.relation_oids, *s.main_relation_oids)})
    names = {r.oid: r for r in session.query_rows("forecast_relations", ClassRow, [oids])} if oids else {}
    tables = sorted({o for o in oids if o in names and names[o].relkind in ("r", "p")})
    fks = session.query_rows("diagnose_foreign_keys", ForeignKeyRow, [tables]) if tables else []
    fk_names = sorted({o for fk in fks for o in (fk.table_oid, fk.referenced_oid) if o not in names})
    if fk_names:
        names.update({r.oid: r for r in session.query_rows("forecast_relations", ClassRow, [fk_names])})
    findings = tuple(_finding(s, model, names, fks) for s in shapes)
    return ServerRate(figure, basis, held, w.transactions_per_s, load.snapshots if load else 0,
                      load.transactions_seen if load else 0, findings,
                      _model_note(figure, basis, held, model_main_per_s, findings, (low, high), load, model),
                      low, high, completed)


def _estimate(load: TransactionLoad, model: _Model) -> tuple[float, float, float, int]:
    """The held estimate (acquisitions/s), its 95 % interval and how many shapes the footprints completed.

    A statement planned at every call (``TransactionShape.whole_basis`` ``most held``) whose backends the snapshots
    only saw holding relations of its footprint, fewer main-table locks than it spills, was caught part-way through
    its planning each time: its whole is its footprint (the same planning, measured by EXPLAIN in lockscope's own
    backend), and its interval is the footprint's x the transactions' spread. Every other shape keeps its own
    estimate and interval (:attr:`TransactionLoad.held_main_per_s_interval`)."""
    figure = low = high = 0.0
    completed = 0
    spread = load.tps_spread
    for s in load.shapes:
        main, lo, hi = s.held_main_per_txn, s.held_main_low, s.held_main_high
        key = s.last[0] if len(s.last) == 1 else None
        footprint = model.spilled.get(key) if key is not None else None
        if (s.whole_basis == "most held" and key is not None and footprint is not None and footprint > main
                and set(s.relation_oids) <= set(model.relations.get(key, ()))):
            main = lo = hi = footprint
            completed += 1
        figure += main * s.transactions_per_s
        low += lo * s.transactions_per_s * (1.0 - spread)
        high += hi * s.transactions_per_s * (1.0 + spread)
    return figure, low, high, completed


def _model_note(server: float, basis: str, held: float | None, model: float,
                findings: Sequence[TransactionFinding], interval: tuple[float | None, float | None] = (None, None),
                load: TransactionLoad | None = None, audited: _Model | None = None) -> str:
    """Why the server's figure and the model differ by more than :data:`MODEL_TOLERANCE` (and 1/s), and beyond the
    figure's 95 % interval, else ""; which of the two the evidence favours, and why."""
    high, low = max(server, model), min(server, model)
    if high - low < 1.0 or high <= (1 + MODEL_TOLERANCE) * low:
        return ""
    if interval[0] is not None and interval[1] is not None and interval[0] <= model <= interval[1]:
        return ""  # within the estimate's interval: they agree
    head = (f"main-lock-table acquisitions: the server's {server:,.0f}/s ({basis}) against the model's "
            f"{model:,.0f}/s (the audited statements' footprints, each call a transaction of its own): ")
    if server < model:
        if load is not None and audited is not None and _partial_views(load, audited):
            return head + ("the evidence favours the model: every lock the snapshots saw those transactions hold is "
                           "in their statements' footprints, and none was seen holding all of them (a snapshot "
                           "catches a statement part-way through its planning); the estimate is a lower bound: run "
                           "diagnose longer for more snapshots")
        return head + ("the server holds fewer than the footprints predict: calls that reuse cached generic plans, "
                       "or statements that did not run during the snapshots")
    reasons = [f"{f.describe()}: {f.cause}" for f in findings if f.cause][:2]
    if basis == BASES[0] and held is not None and server > (1 + MODEL_TOLERANCE) * held:
        reasons.append(f"pg_stat_lock.fastpath_exceeded also counts locks taken and released within a transaction "
                       f"(an INSERT's indexes while its triggers run) and the catalog lookups of new sessions; the "
                       f"locks held make {held:,.0f}/s")
    return head + ("; ".join(reasons) if reasons else
                   "locks EXPLAIN does not take (triggers, foreign-key checks, sequences, routed partitions) or "
                   "statements that fill the fast path together")


def _partial_views(load: TransactionLoad, audited: _Model) -> bool:
    """True when every transaction shape holding fewer main-table locks than its statements' footprints predict
    held only relations of those footprints (partial views of them), and at least one such shape was seen."""
    short = [s for s in load.shapes
             if sum(audited.spilled.get(k) or 0.0 for k in s.statements) > s.held_main_per_txn]
    return bool(short) and all(
        set(s.relation_oids) <= {o for k in s.statements for o in audited.relations.get(k, ())} for s in short)


# -- the fixes ---------------------------------------------------------------------------------------------------------
def transaction_fixes(rate: ServerRate, report: AuditReport, session: Session) -> list[Fix]:
    """The fixes of the transactions that hold more than their statements' footprints (the audit's statement fixes
    cover the others), each judged on the server's figure: ``main_per_s_before`` = :attr:`ServerRate.main_per_s`.

    :param session: for quoting a role's or the database's name in the SQL it suggests.
    """
    if rate.main_per_s is None:
        return []
    before = rate.main_per_s
    out: list[Fix] = []
    beyond = [(i, f) for i, f in enumerate(rate.transactions) if f.beyond_model]
    for i, f in beyond:
        out.extend(_drop_index_fix(i, f, report, before))
        out.extend(_fewer_statements_fix(i, f, report, before))
        out.extend(_fk_plan_cache_fix(i, f, report, session, before))
    out.extend(_txn_mlpt_fix(beyond, report, before))
    return out


def _drop_index_fix(i: int, f: TransactionFinding, report: AuditReport, before: float) -> list[Fix]:
    """The droppable indexes among the relations it holds, when without them they fit the fast path."""
    droppable = [x for x in report.index_findings if x.droppable and x.index_oid in set(f.shape.relation_oids)]
    if not droppable or len(f.shape.statements) < 2:
        return []
    rest = set(f.shape.relation_oids) - {x.index_oid for x in droppable}
    if not report.capacity.fits(rest):
        return []
    n, kinds = len(droppable), "/".join(sorted({x.kind for x in droppable}))
    index_names = [x.qualified for x in droppable]
    return [Fix("drop-indexes", f"drop {plural(n, kinds + ' index')} the transaction plans",
                f"drop {'this' if n == 1 else 'these'} {plural(n, kinds + ' index')} ({short_list(index_names)})",
                f"{f.describe()}; without {short_list(index_names, 8)} its {len(rest)} relations fit the "
                f"{report.capacity.describe()}; DROP INDEX CONCURRENTLY, no restart",
                tuple(f"DROP INDEX CONCURRENTLY {name};" for name in index_names), False, before,
                max(0.0, before - f.shape.main_per_s), drop_index_oids=tuple(x.index_oid for x in droppable),
                transaction=i)]


def _fewer_statements_fix(i: int, f: TransactionFinding, report: AuditReport, before: float) -> list[Fix]:
    shape = f.shape
    n = len(shape.statements)
    if n < 2 or not f.fill_together:
        return []
    after = max(0.0, before - shape.main_per_s + shape.transactions_per_s * f.model_spilled_per_txn)
    alone = ", ".join("?" if s is None else f"{s:g}" for s in f.statement_spills)
    spilled = short_list(list(f.main_relations))
    return [Fix("fewer-statements", f"fewer statements per transaction: {n} statements hold "
                f"{shape.held_locks_per_txn:.0f} relation locks together ({report.capacity.describe()})",
                f"run these {n} statements in fewer per transaction",
                f"{f.describe()} at {shape.transactions_per_s:,.0f} transactions/s; alone they spill {alone} "
                f"(their EXPLAIN footprints); every statement keeps its locks until the transaction ends (lock.c "
                f"LockReleaseAll), so the later ones find the fast-path slots taken ({spilled} in the main lock "
                "table). Commit between them, or read outside the transaction what needs no "
                "snapshot shared with the writes; fewer indexes on its tables also frees slots",
                (), False, before, after, transaction=i)]


def _fk_plan_cache_fix(i: int, f: TransactionFinding, report: AuditReport, session: Session,
                       before: float) -> list[Fix]:
    fk = next((x for x in f.foreign_keys if x.partitioned and x.main_locks >= 2), None)
    if fk is None:
        return []
    role = next((report_role for report_role in _roles(report, f) if report_role), None)
    database = session.identifier(report.database)
    target = f"ROLE {session.identifier(role)} IN DATABASE {database}" if role else f"DATABASE {database}"
    return [Fix("plan-cache-mode", f"plan_cache_mode = force_custom_plan for the foreign-key check {fk.constraint}",
                f"set plan_cache_mode = force_custom_plan for the sessions that write {fk.table}",
                f"{f.describe()}, {fk.main_locks} of them on {fk.referenced} and its partitions: the check "
                f"({fk.table} -> {fk.referenced}, ri_triggers.c RI_FKey_check) is an SPI plan per constraint and "
                "backend whose generic plan, built at its 6th call, locks every partition and index; custom plans "
                "lock the partition the key prunes to. plan_cache_mode governs it as any prepared statement's",
                (f"ALTER {target} SET plan_cache_mode = force_custom_plan;",), False, before,
                max(0.0, before - f.shape.transactions_per_s * fk.main_locks), transaction=i,
                subject=f"role {role}" if role else f"database {report.database}")]


def _roles(report: AuditReport, f: TransactionFinding) -> list[str]:
    ids = {q for q in f.shape.query_ids if q is not None}
    return [a.rolname for a in report.workload.statements if a.queryid in ids and a.rolname]


def _txn_mlpt_fix(beyond: Sequence[tuple[int, TransactionFinding]], report: AuditReport, before: float) -> list[Fix]:
    """The smallest max_locks_per_transaction whose fast-path groups fit every such transaction's relations."""
    if not beyond:
        return []
    version = report.capacity.server_version_num
    target = max(version, PG18)
    sets = [f.shape.relation_oids for _, f in beyond]
    groups = smallest_fitting_groups(target, sets)
    if groups is None or (version >= PG18 and report.capacity.groups >= groups):
        return []  # beyond 1024 groups, or they fit already: their main-table locks are not for want of slots
    low, high = mlpt_range_for_groups(groups)
    recommended = max(high, report.capacity.max_locks_per_transaction)
    where = "" if version >= PG18 else " after upgrading to PostgreSQL 18"
    removed = sum(f.shape.main_per_s for _, f in beyond)
    first = beyond[0][1]
    return [Fix("max-locks-per-transaction",
                f"max_locks_per_transaction = {recommended}{where} ({groups} fast-path groups)",
                f"set max_locks_per_transaction = {recommended} (restart{where})",
                f"now {report.capacity.max_locks_per_transaction} ({report.capacity.describe()}); {groups} groups fit "
                f"the relations of every transaction holding main-table locks with their real OIDs (any value "
                f"{low}..{recommended}), e.g. {first.describe()} with {len(first.shape.relation_oids)} relations; "
                "standbys need at least the primary's value",
                (set_mlpt_sql(report.managed_service, recommended, standby=report.in_recovery),), True, before,
                max(0.0, before - removed), capacity_after=CapacityModel(target, recommended),
                transaction=beyond[0][0])]
