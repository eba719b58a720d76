"""Footprint engine: the relation locks one statement takes, per plan-cache phase, measured from pg_locks.

How a probe works (never executing the statement):

- ``simple`` protocol: in one READ ONLY transaction with lock_timeout/statement_timeout, ``EXPLAIN <statement>``
  (parameters bound as literals), then one pg_locks read of this backend's relation locks, then ROLLBACK.
- ``prepared`` protocol: ``PREPARE`` once (in a rolled-back transaction; prepared statements outlive it),
  then for executions 1..N a transaction each with ``SET LOCAL plan_cache_mode`` and ``EXPLAIN EXECUTE``,
  the pg_locks read and the pg_prepared_statements counters, then ROLLBACK; finally ``DEALLOCATE``.

Beside every measured lock stands the capacity model's prediction (``capacity.simulate_fast_path``), simulated in
the modelled acquisition order (:mod:`lockscope.acquisition`, docs/footprint-model.md). The order model reads the
statement's rewritten query tree, built on the client (:mod:`lockscope.querytree`: PostgreSQL's parser through
pglast, names resolved with catalog reads, views from ``pg_rewrite``): nothing is asked of the server that would
reach its log. When the tree cannot be built, the locks are ordered by the catalog and labelled ``unknown``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import os
import re
import time
import weakref
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from . import acquisition, capacity, execlocks, paramtypes, querytree
from .acquisition import LockStep, acquisition_order
from .capacity import CapacityModel, LockRequest
from .db import OWN_QUERY_MARKER, Session
from .errors import BadInputError, DatabaseError, StatementError
from .execlocks import ExecutionModel, ExtraLock, SpiCall, SpiQuery
from .explain import ExplainedPlan, read_explain
from .lockpart import NUM_LOCK_PARTITIONS, lock_partition
from .querynodes import Query
from .rows import (
    AcquisitionFactsRow,
    ExecutorIndexRow,
    FunctionVolatilityRow,
    PartitionRankRow,
    PreparedCountersRow,
    RelationInfoRow,
    RelationLockRow,
)
from .statement import CheckedStatement, bind_params, check_statement, raw_statement
from .versions import PG16
from .vocab import LockMode, LockRole, LockSource, PlanCacheMode, PlanPhase

__all__ = [
    "PROTOCOLS",
    "Execution",
    "Footprint",
    "RelationLock",
    "TransactionProbe",
    "acquisition_order",
    "measure_all_modes",
    "measure_footprint",
    "measure_generic_plan",
    "open_transaction_probes",
    "relation_role",
    "scanned_indexes",
]

PROTOCOLS = ("simple", "prepared")
#: plancache.c choose_custom_plan: custom plans are made until num_custom_plans reaches 5.
CUSTOM_PLANS_BEFORE_GENERIC = 5
_name_counter = itertools.count(1)


@dataclass(frozen=True)
class RelationLock:
    """One relation lock the probing backend held after the statement's planning and executor start.

    :ivar relation_oid: OID.
    :ivar relation: schema-qualified, quoted name.
    :ivar role: what the relation is (table, index, partition, ...).
    :ivar mode: lock mode as pg_locks spells it.
    :ivar fastpath: measured pg_locks ``fastpath`` (True = fast-path slot, False = main lock table).
    :ivar predicted_fastpath: the capacity model's flag for the measured server.
    :ivar fast_path_group: the relation's fast-path group on the measured server (0 before PG 18).
    :ivar order: position in the modelled acquisition order (0-based).
    :ivar assumed_fastpath: the flag under ``--assume-version/--assume-mlpt``, or None.
    :ivar order_rule: the acquisition-order rule that placed this lock (``acquisition.ORDER_RULES``), or
        ``unknown`` when the statement's query tree could not be built (the lock is then placed in the catalog
        order: the count per fast-path group stays exact, which lock of a full group spills is not known).
    :ivar lock_partition: the main lock table partition (0..15) the lock's LOCKTAG hashes to
        (``lock.c LockTagHashCode`` / ``LockHashPartition``, :func:`lockscope.lockpart.lock_partition`): where it
        is, for a main-table lock; where it would land, for a fast-path one.
    :ivar source: what in the execution takes it: the statement itself (what EXPLAIN takes), or an execution lock
        (a sequence, a routed partition, a foreign-key check or action, ...: :mod:`lockscope.execlocks`).
    :ivar detail: for an execution lock, which constraint, sequence or partition (e.g. ``seg_link_fkey check``).
    """

    relation_oid: int
    relation: str
    role: LockRole
    mode: LockMode
    fastpath: bool
    predicted_fastpath: bool
    fast_path_group: int
    order: int
    assumed_fastpath: bool | None = None
    order_rule: str = ""
    lock_partition: int = 0
    source: LockSource = LockSource.STATEMENT
    detail: str = ""

    @property
    def mismatch(self) -> bool:
        """True when the measured flag differs from the model's."""
        return self.fastpath != self.predicted_fastpath


@dataclass(frozen=True)
class Execution:
    """One probed execution.

    :ivar number: 1-based execution number (always 1 for the simple protocol).
    :ivar phase: ``simple``, ``custom``, ``generic-build`` or ``generic-reuse`` (plancache.c GetCachedPlan).
    :ivar plan_type: ``custom`` or ``generic`` from pg_prepared_statements counters; ``None`` for the simple
        protocol or on PG 13 (no counters).
    :ivar locks: relation locks in modelled acquisition order, as pg_locks showed them.
    :ivar plan: the probe's ``EXPLAIN (FORMAT JSON)`` read (:class:`lockscope.explain.ExplainedPlan`: its text
        lines, the indexes it scans, ...).
    :ivar executor_index_locks: for a reused generic plan, the index locks a real execution takes after
        ``locks`` and EXPLAIN does not (``plan.index_names``): ``fastpath`` is the capacity model's prediction
        (nothing to measure); empty for every other phase, whose planning already locked every index.
    :ivar execution_locks: the locks a real execution holds at its end that EXPLAIN never takes (sequences,
        routed partitions, foreign-key checks and actions: :mod:`lockscope.execlocks`), in acquisition order;
        ``fastpath`` is the capacity model's, simulated after ``locks`` with the locks held meanwhile (the
        target's indexes while rows are written).
    :ivar query_phases: the plan-cache phase of each query the execution runs inside (a foreign-key check's,
        action's): (what it is, phase), in order.
    :ivar notes: what lockscope could not derive of this execution (values computed when it runs, ...).
    """

    number: int
    phase: PlanPhase
    plan_type: str | None
    locks: tuple[RelationLock, ...]
    plan: ExplainedPlan = field(default_factory=ExplainedPlan)
    executor_index_locks: tuple[RelationLock, ...] = ()
    execution_locks: tuple[RelationLock, ...] = ()
    query_phases: tuple[tuple[str, PlanPhase], ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def real_locks(self) -> tuple[RelationLock, ...]:
        """Every relation lock a real execution holds at its end, in acquisition order: the statement's, a reused
        plan's executor index locks, the execution locks."""
        return self.locks + self.executor_index_locks + self.execution_locks

    @property
    def real_lock_count(self) -> int:
        """Relation locks of a real execution: measured plus executor index and execution locks (count)."""
        return len(self.real_locks)

    @property
    def real_main_table_count(self) -> int:
        """Main-table locks of a real execution: measured, plus the predicted executor index and execution locks
        (count)."""
        return self.main_table_count + sum(not lk.fastpath for lk in self.executor_index_locks + self.execution_locks)

    @property
    def lock_count(self) -> int:
        """Relation locks held (count; one per relation and mode, as pg_locks rows)."""
        return len(self.locks)

    @property
    def fastpath_count(self) -> int:
        """Measured fast-path locks (count)."""
        return sum(lock.fastpath for lock in self.locks)

    @property
    def main_table_count(self) -> int:
        """Measured locks in the main lock table, i.e. spilled (count)."""
        return self.lock_count - self.fastpath_count

    @property
    def predicted_main_table_count(self) -> int:
        """Locks the model puts in the main lock table (count)."""
        return sum(not lock.predicted_fastpath for lock in self.locks)

    @property
    def assumed_main_table_count(self) -> int | None:
        """Main-table locks under the assumed version/setting (count), or None."""
        if not self.locks or self.locks[0].assumed_fastpath is None:
            return None
        return sum(not lock.assumed_fastpath for lock in self.locks)

    @property
    def partition_load(self) -> tuple[int, ...]:
        """Measured main-table locks per lock partition: 16 counts (index = partition, ``NUM_LOCK_PARTITIONS``)."""
        load = [0] * NUM_LOCK_PARTITIONS
        for lock in self.locks:
            if not lock.fastpath:
                load[lock.lock_partition] += 1
        return tuple(load)

    @property
    def mismatches(self) -> tuple[RelationLock, ...]:
        """Locks whose measured flag differs from the prediction."""
        return tuple(lock for lock in self.locks if lock.mismatch)


@dataclass(frozen=True)
class Footprint:
    """The footprint of one statement under one protocol and plan_cache_mode.

    :ivar statement: the probed statement text.
    :ivar protocol: ``simple`` or ``prepared``.
    :ivar plan_cache_mode: mode set for the executions (``auto`` for the simple protocol).
    :ivar params: parameter values as given (text).
    :ivar server_version_num: measured server's version.
    :ivar server_version: e.g. ``18.6``.
    :ivar capacity: measured server's fast-path capacity.
    :ivar assumed: the ``--assume-*`` capacity, or None.
    :ivar executions: one per execution.
    :ivar order_note: why the acquisition order is ``unknown`` (the query tree could not be built), else ``""``.
    """

    statement: str
    protocol: str
    plan_cache_mode: PlanCacheMode
    params: tuple[str, ...]
    server_version_num: int
    server_version: str
    capacity: CapacityModel
    executions: tuple[Execution, ...]
    assumed: CapacityModel | None = None
    param_types: tuple[str, ...] = field(default=())
    order_note: str = ""

    @property
    def spilled(self) -> bool:
        """True when any execution put a lock in the main lock table."""
        return any(e.main_table_count for e in self.executions)

    @property
    def mismatch_count(self) -> int:
        """Locks (over all executions) whose measured fast-path flag differs from the model (count)."""
        return sum(len(e.mismatches) for e in self.executions)


def relation_role(relkind: str, relispartition: bool, parent_relkind: str | None,
                  parent_relispartition: bool) -> LockRole:
    """The role lockscope shows for a relation, from pg_class facts: its ``relkind`` and whether it (or, for an
    index, its table) is a partition; a TOAST table's index is ``TOAST``."""
    if relkind == "r":
        return LockRole.PARTITION if relispartition else LockRole.TABLE
    if relkind == "i":
        if parent_relkind == "t":
            return LockRole.TOAST
        return LockRole.PARTITION_INDEX if parent_relispartition else LockRole.INDEX
    return _ROLE_OF_RELKIND.get(relkind, LockRole.OTHER)


#: ``pg_class.relkind`` -> role, for the kinds whose role does not depend on a partition.
_ROLE_OF_RELKIND = {"p": LockRole.PARTITIONED_TABLE, "I": LockRole.PARTITIONED_INDEX, "t": LockRole.TOAST,
                    "S": LockRole.SEQUENCE, "v": LockRole.VIEW}


def scanned_indexes(session: Session, execution: Execution) -> tuple[int, ...]:
    """OIDs of the indexes of plain tables (role ``table``) that the execution's plan scans, in plan order
    (``ExplainedPlan.index_names``): the executor index locks of reusing that plan. Indexes of partitions are left
    out: which partitions survive initial pruning depends on the parameter values.

    :raises DatabaseError: the catalog query failed.
    """
    names = execution.plan.index_names
    tables = sorted({lk.relation_oid for lk in execution.locks if lk.role is LockRole.TABLE})
    if not names or not tables:
        return ()
    first: dict[str, int] = {}
    for r in session.query_rows("executor_indexes", ExecutorIndexRow, [tables, list(names)]):
        first.setdefault(r.relname, r.index_oid)
    return tuple(dict.fromkeys(first[n] for n in names if n in first))


class _Prober:
    """Reads and models the locks of one probe; shared by both protocols."""

    def __init__(self, session: Session, checked: CheckedStatement, assumed: CapacityModel | None):
        self.session = session
        self.checked = checked
        self.model = session.facts.capacity
        self.assumed = assumed
        self.order = _OrderFacts()

    @property
    def tree(self) -> Query | None:
        """The statement's query tree, or None when it could not be built (see ``order.note``)."""
        return self.order.tree

    @property
    def order_note(self) -> str:
        """Why the acquisition order is unknown, else ``""``."""
        return self.order.note

    # -- the query tree and catalog facts the order model needs ---------------------------------------------
    def load_tree(self, *, fresh: bool = False) -> None:
        """The statement's rewritten query tree built on the client (:func:`querytree.build_query_tree`) and the
        catalog facts the order model needs: catalog queries only, nothing sent that names the statement.

        Kept per session and statement text for :data:`ORDER_FACTS_TTL_S` (a footprint's executions, an audit's
        custom and generic probes, a forecast's what-ifs read the catalog once); a measured lock on a relation the
        facts do not know reloads them (:meth:`build_locks`).

        A tree that cannot be built leaves :attr:`tree` None and says why in :attr:`order_note`.

        :raises StatementError: a relation the statement names does not exist (refused before the server sees
            the statement, so the server logs no error for it).
        """
        cache = _ORDER_CACHE.setdefault(self.session, {})
        cached = cache.get(self.checked.text)
        if not fresh and cached is not None and time.monotonic() - cached.loaded_at_s < ORDER_FACTS_TTL_S:
            self.order = cached
            return
        self.order = _read_order_facts(self.session, self.checked)
        cache.pop(self.checked.text, None)
        cache[self.checked.text] = self.order
        while len(cache) > _ORDER_CACHE_SIZE:  # oldest first (dicts keep insertion order)
            del cache[next(iter(cache))]

    def snapshot(self) -> list[RelationLockRow]:
        """This backend's relation locks (``relation_locks.sql`` reads ``pg_lock_status()``, so the read takes no
        lock of its own)."""
        return self.session.query_rows("relation_locks", RelationLockRow)

    def own(self, rows: Sequence[RelationLockRow]) -> list[RelationLockRow]:
        """``rows`` without the system catalogs this statement does not use: inside a probe transaction,
        lockscope's own catalog reads (a relation's name, an index's OID) lock catalogs until the transaction
        ends; the statement's own catalog relations (named, or inside its views) are in its facts."""
        known = {r.relation_oid for r in self.order.rows}
        return [r for r in rows if r.relation_oid >= _FIRST_NORMAL_OID or r.relation_oid in known]

    def _steps(self, phase: PlanPhase, plan: ExplainedPlan | None, infos: dict[int, RelationInfoRow],
               oids: list[int]) -> list[LockStep]:
        if self.tree is None:
            order = acquisition_order(infos, oids, self.checked.relation_names, self.session.facts.server_version_num)
            return [LockStep(o, m, "unknown") for o in order for m in capacity.LOCK_MODES]
        ctes = plan.cte_names if plan is not None else None
        facts = acquisition.catalog_facts_from_rows(self.order.rows, self.order.server_order, self.order.volatile,
                                                    ctes)
        return acquisition.statement_lock_steps(self.tree, facts, self.session.facts.server_version_num, phase)

    def order_rows(self, rows: Sequence[RelationLockRow], phase: PlanPhase = PlanPhase.SIMPLE,
                   plan: ExplainedPlan | None = None) -> list[tuple[RelationLockRow, str]]:
        """``rows`` in the modelled acquisition order with the rule that placed each (``unmodelled`` last, in OID
        order)."""
        oids = list(dict.fromkeys(r.relation_oid for r in rows))
        known = {r.relation_oid for r in self.order.rows}
        if self.tree is not None and any(oid not in known and oid >= _FIRST_NORMAL_OID for oid in oids):
            self.load_tree(fresh=True)  # the catalog changed since the facts were read (e.g. a new index)
        infos = self._infos(oids)
        by_key: dict[tuple[int, str], RelationLockRow] = {(r.relation_oid, r.mode): r for r in rows}
        ordered: list[tuple[RelationLockRow, str]] = []
        for step in self._steps(phase, plan, infos, oids):
            row = by_key.pop((step.relation_oid, step.mode), None)
            if row is not None:
                ordered.append((row, step.rule))
        for key in sorted(by_key, key=lambda k: (k[0], by_key[k].mode.rank)):
            ordered.append((by_key[key], "unmodelled"))
        return ordered

    def build_locks(self, rows: list[RelationLockRow], phase: PlanPhase = PlanPhase.SIMPLE,
                    plan: ExplainedPlan | None = None) -> tuple[RelationLock, ...]:
        ordered = self.order_rows(rows, phase, plan)
        infos = self._infos([r.relation_oid for r, _ in ordered])
        requests = [LockRequest(r.relation_oid, r.mode, r.shared_catalog) for r, _ in ordered]
        predicted = self.model.predict(requests)
        assumed = self.assumed.predict(requests) if self.assumed else [None] * len(requests)
        return tuple(self._lock(row.relation_oid, infos, row.mode, row.fastpath, pred, assume, n, rule,
                                row.database_oid, LockRole.OTHER)
                     for n, ((row, rule), pred, assume) in enumerate(zip(ordered, predicted, assumed, strict=False)))

    def _lock(self, oid: int, infos: dict[int, RelationInfoRow], mode: LockMode, fastpath: bool, predicted: bool,
              assumed: bool | None, order: int, rule: str, database_oid: int, unknown_role: LockRole) -> RelationLock:
        info = infos.get(oid)
        return RelationLock(
            relation_oid=oid,
            relation=info.relation if info else str(oid),
            role=relation_role(info.relkind, info.relispartition, info.parent_relkind,
                               info.parent_relispartition) if info else unknown_role,
            mode=mode, fastpath=fastpath, predicted_fastpath=predicted, fast_path_group=self.model.group_of(oid),
            order=order, assumed_fastpath=assumed, order_rule=rule,
            lock_partition=lock_partition(database_oid, oid))

    def executor_index_locks(self, locks: Sequence[RelationLock], rows: Sequence[RelationLockRow],
                             plan: ExplainedPlan) -> tuple[RelationLock, ...]:
        """The locks a real execution of a reused generic plan adds after ``locks``: each index the plan scans
        (``plan.index_names``, resolved among the indexes of the locked relations), in the scanned relation's
        strongest held mode, in plan order; fast-path flags predicted after the measured locks."""
        wanted = self.executor_index_requests([(lk.relation_oid, lk.mode) for lk in locks]
                                              + self.step_modes(PlanPhase.GENERIC_REUSE, plan), plan)
        if not wanted:
            return ()
        database_oid = next((r.database_oid for r in rows if r.database_oid), 0)
        shared = frozenset(r.relation_oid for r in rows if r.shared_catalog)
        before = [LockRequest(lk.relation_oid, lk.mode, lk.relation_oid in shared) for lk in locks]
        requests = before + [LockRequest(oid, mode) for oid, mode in wanted]
        predicted = self.model.predict(requests)[len(before):]
        assumed = self.assumed.predict(requests)[len(before):] if self.assumed else [None] * len(wanted)
        infos = self._infos([o for o, _ in wanted])
        return tuple(self._lock(oid, infos, mode, pred, pred, assume, len(locks) + n, "executor index", database_oid,
                                LockRole.INDEX)
                     for n, ((oid, mode), pred, assume) in enumerate(zip(wanted, predicted, assumed, strict=True)))

    def step_modes(self, phase: PlanPhase, plan: ExplainedPlan | None) -> list[tuple[int, LockMode]]:
        """The (relation, mode) requests the statement's own rules make in ``phase`` (its query tree's lock steps),
        whether or not they were new to the backend: in a transaction, a relation an earlier statement locked is
        a local-lock hit, yet this statement's scans still open its indexes in this statement's mode. Empty when
        the tree could not be built."""
        if self.tree is None:
            return []
        return [(st.relation_oid, LockMode(st.mode)) for st in self._steps(phase, plan, {}, [])]

    def executor_index_requests(self, locks: Sequence[tuple[int, LockMode]],
                                plan: ExplainedPlan) -> list[tuple[int, LockMode]]:
        """The (index, mode) locks a reused generic plan's index scans take at executor start: each index the plan
        scans (``plan.index_names``, resolved among the indexes of the locked relations), in the scanned
        relation's strongest held mode, in plan order, without those already in ``locks`` (``nodeIndexscan.c
        ExecInitIndexScan`` & co.: ``index_open(indexid, rellockmode)``)."""
        names = plan.index_names
        if not names or not locks:
            return []
        mode_of: dict[int, LockMode] = {}
        for oid, mode in locks:
            if oid not in mode_of or mode.rank > mode_of[oid].rank:
                mode_of[oid] = mode
        # the order facts name every index of the statement's relations (read before any probe transaction); the
        # catalog is asked, inside the probe, only for a name they lack (its catalog locks come after the read)
        first: dict[str, ExecutorIndexRow] = {}
        for f in sorted(self.order.rows, key=lambda f: f.relation_oid):
            if f.relkind in ("i", "I") and f.parent_oid in mode_of and f.relname in names:
                first.setdefault(f.relname, ExecutorIndexRow(f.relation_oid, f.relname, f.parent_oid))
        if any(n not in first for n in names):
            for r in self.session.query_rows("executor_indexes", ExecutorIndexRow, [sorted(mode_of), list(names)]):
                first.setdefault(r.relname, r)
        held = set(locks)
        wanted: list[tuple[int, LockMode]] = []
        for name in names:
            hit = first.get(name)
            if hit is None:
                continue
            key = (hit.index_oid, mode_of[hit.table_oid])
            if key not in held and key not in wanted:
                wanted.append(key)
        return wanted

    def _infos(self, oids: Sequence[int]) -> dict[int, RelationInfoRow]:
        """Names and roles of relations by OID (``relation_info.sql`` columns): from the facts the query tree
        brought, and one catalog query for the others (run after the pg_locks read, so its locks do not count)."""
        known = {r.relation_oid: r for r in self.order.rows}
        infos: dict[int, RelationInfoRow] = {oid: known[oid] for oid in oids if oid in known}
        missing = [oid for oid in oids if oid not in known]
        if missing:
            infos.update({i.relation_oid: i for i in self.session.query_rows("relation_info", RelationInfoRow,
                                                                               [missing])})
        return infos


#: How long a session keeps a statement's query tree and catalog facts (s).
ORDER_FACTS_TTL_S = 60.0
_ORDER_CACHE_SIZE = 256  # statements kept per session
#: transam.h FirstNormalObjectId: OIDs below are the system's own (catalogs), never in a statement's facts.
_FIRST_NORMAL_OID = 16384


@dataclass(frozen=True)
class _OrderFacts:
    """A statement's query tree and the catalog facts the order model reads, as read at ``loaded_at_s``."""

    tree: Query | None = None
    note: str = ""
    rows: tuple[AcquisitionFactsRow, ...] = ()
    volatile: frozenset[int] = frozenset()
    server_order: Mapping[int, Mapping[int, int]] = field(default_factory=dict)
    loaded_at_s: float = 0.0


_ORDER_CACHE: weakref.WeakKeyDictionary[Session, dict[str, _OrderFacts]] = weakref.WeakKeyDictionary()


def _read_order_facts(session: Session, checked: CheckedStatement) -> _OrderFacts:
    """Build the query tree and read the facts (see :meth:`_Prober.load_tree`).

    :raises StatementError: a relation the statement names does not exist.
    """
    now = time.monotonic()
    raw = raw_statement(checked)
    try:
        built = querytree.build_query_tree(
            raw, querytree.gather_lookup(session.query_rows, raw, session.facts.server_version_num))
    except querytree.UnknownRelation as exc:
        raise StatementError(f"42P01: {exc}", sqlstate="42P01") from None
    except querytree.TreeUnsupported as exc:
        return _OrderFacts(note=str(exc), loaded_at_s=now)
    if built.uncertain and querytree.has_sublinks(built.tree):
        return _OrderFacts(note=f"names not resolved by lockscope: {', '.join(built.uncertain[:3])}",
                           loaded_at_s=now)
    rel_oids = sorted(acquisition.tree_relation_oids(built.tree))
    rows = tuple(session.query_rows("acquisition_facts", AcquisitionFactsRow, [rel_oids])) if rel_oids else ()
    funcs = sorted(oid for oid in acquisition.tree_function_oids(built.tree) if oid > 0)  # inside views
    volatile = set(built.volatile_functions)
    if funcs:
        volatile |= {r.function_oid for r in session.query_rows("function_volatility", FunctionVolatilityRow, [funcs])
                     if r.provolatile == "v"}
    return _OrderFacts(built.tree, "", rows, frozenset(volatile), _server_partition_order(session, rows), now)


#: A partition bound's special values and their place before, after or among the values
#: (``partbounds.c PartitionRangeDatumKind``; NULL-only LIST partitions come after the valued ones).
_BOUND_FLAGS = {"MINVALUE": 0, "MAXVALUE": 2, "NULL": 3}


def _server_partition_order(session: Session, rows: Sequence[AcquisitionFactsRow]) -> dict[int, dict[int, int]]:
    """Rank of each partition in its parent's ``PartitionDesc`` order, computed by the server's own comparison.

    ``partbounds.c create_list_bounds`` / ``create_range_bounds`` sort bound values with the partition key's
    btree comparison and collation; here the server sorts the bound values (as ``pg_get_expr`` prints them, passed
    as text and cast to the key's type, ``sql/partition_order.sql``) with ``ORDER BY ... COLLATE``, one read-only
    query per LIST/RANGE parent with a single-column key. Hash partitions and anything else use
    ``acquisition.order_partitions`` in Python.
    """
    by_oid = {r.relation_oid: r for r in rows}
    kids: dict[int, list[AcquisitionFactsRow]] = {}
    for r in rows:
        if r.parent_oid is not None and r.parent_oid in by_oid:
            kids.setdefault(r.parent_oid, []).append(r)
    out: dict[int, dict[int, int]] = {}
    for parent, children in kids.items():
        p = by_oid[parent]
        types = list(p.key_types or [])
        colls = list(p.key_collations or [])
        if p.partstrat not in ("l", "r") or len(types) != 1 or types[0] is None:
            continue
        oids: list[int] = []
        flags: list[int] = []
        values: list[str | None] = []
        default: list[int] = []
        for c in children:
            bound = c.bound or ""
            if bound.strip().upper() == "DEFAULT":
                default.append(c.relation_oid)
                continue
            part = bound.split(" TO ")[0] if p.partstrat == "r" else bound
            for lit in acquisition._bound_values(part):
                oids.append(c.relation_oid)
                flags.append(_BOUND_FLAGS.get(lit, 1))
                values.append(None if lit in _BOUND_FLAGS else _literal_text(lit))
                if p.partstrat == "r":
                    break
        if not oids:
            continue
        fill = {"key_type": types[0], "collate": f"COLLATE {colls[0]}" if colls and colls[0] else ""}
        try:
            ranked = [r.oid for r in session.query_rows("partition_order", PartitionRankRow, [oids, flags, values],
                                                        fill=fill)]
        except DatabaseError:
            continue
        order = list(dict.fromkeys(ranked))  # NULL-only LIST partitions sort after the valued ones (flag 3)
        out[parent] = {oid: n for n, oid in enumerate([*order, *sorted(default)])}
    return out


def _literal_text(literal: str) -> str:
    """The value a bound literal of ``pg_get_expr`` stands for, as text: ``'it''s'`` -> ``it's``, ``42`` -> ``42``."""
    if literal.startswith("'") and literal.endswith("'"):
        return literal[1:-1].replace("''", "'")
    return literal


def measure_footprint(
    session: Session,
    sql: str,
    *,
    params: Sequence[str] = (),
    param_types: Sequence[str] = (),
    protocol: str = "simple",
    plan_cache_mode: PlanCacheMode = PlanCacheMode.AUTO,
    executions: int = 7,
    assume: CapacityModel | None = None,
) -> Footprint:
    """Measure the relation-lock footprint of one statement on the session's server.

    :param session: an open :class:`~lockscope.db.Session` (any database, read-only access suffices).
    :param sql: one SELECT/INSERT/UPDATE/DELETE/MERGE; ``$1..$n`` parameters allowed.
    :param params: values for ``$1..$n`` as text (typed by the server).
    :param param_types: SQL types for ``PREPARE name (types)`` (prepared protocol; needed for unused params).
    :param protocol: ``simple`` (EXPLAIN) or ``prepared`` (PREPARE + EXPLAIN EXECUTE per execution).
    :param plan_cache_mode: ``auto``, ``force_custom_plan`` or ``force_generic_plan`` (prepared protocol).
    :param executions: executions to probe with the prepared protocol (count, 1..100).
    :param assume: another capacity model to predict with (``--assume-version/--assume-mlpt``).
    :return: a :class:`Footprint`.
    :raises UnsupportedStatementError: utility, several or no statements.
    :raises BadInputError: bad option values, parameter count (simple protocol).
    :raises StatementError: the server rejected the statement or its parameters.
    :raises LockBlockedError: another session holds a conflicting lock longer than lock_timeout.
    """
    if protocol not in PROTOCOLS:
        raise BadInputError(f"unknown protocol {protocol!r}: use simple or prepared")
    if plan_cache_mode not in tuple(PlanCacheMode):
        raise BadInputError(f"unknown plan_cache_mode {plan_cache_mode!r}: use {', '.join(PlanCacheMode)}")
    if not 1 <= executions <= 100:
        raise BadInputError("executions must be between 1 and 100")
    if param_types and protocol != "prepared":
        raise BadInputError("--param-type applies to the prepared protocol only")
    checked = check_statement(sql)
    prober = _Prober(session, checked, assume)
    with session.catalog_memo(execlocks.DERIVATION_CATALOG):  # the same for every execution
        if protocol == "simple":
            runs: tuple[Execution, ...] = _probe_simple(prober, params, executions)
            mode = PlanCacheMode.AUTO
        else:
            mode = PlanCacheMode(plan_cache_mode)
            runs = _probe_prepared(prober, params, param_types, mode, executions)
    facts = session.facts
    return Footprint(
        statement=checked.text,
        protocol=protocol,
        plan_cache_mode=mode,
        params=tuple(params),
        param_types=tuple(param_types),
        server_version_num=facts.server_version_num,
        server_version=facts.server_version,
        capacity=facts.capacity,
        executions=runs,
        assumed=assume,
        order_note=prober.order_note,
    )


def measure_all_modes(session: Session, sql: str, **kwargs: Any) -> tuple[Footprint, ...]:
    """:func:`measure_footprint` with the prepared protocol in each plan_cache_mode (auto, custom, generic)."""
    kwargs["protocol"] = "prepared"
    return tuple(measure_footprint(session, sql, plan_cache_mode=m, **kwargs) for m in PlanCacheMode)


#: What every probe sends before the statement: its plan comes back as JSON fields (:mod:`lockscope.explain`).
_EXPLAIN = "EXPLAIN (FORMAT JSON) "


def _explain(session: Session, text: str, *, prefix_len: int = 0, simple: bool = False) -> ExplainedPlan:
    """Send an ``EXPLAIN (FORMAT JSON ...)`` text (inside a probe transaction) and read its plan: through the
    extended protocol, or the simple one for a text that keeps ``$n`` unbound (:meth:`Session.run_checked_text_simple`).

    :raises StatementError, LockBlockedError: from the server.
    """
    run = session.run_checked_text_simple if simple else session.run_user_text
    rows = run(text, prefix_len=prefix_len)
    return read_explain(str(rows[0][0]))


def _probe_simple(prober: _Prober, params: Sequence[str], executions: int) -> tuple[Execution, ...]:
    """The simple protocol: every execution parses and plans afresh (``postgres.c exec_simple_query``), so one
    probe shows the statement's own locks; a statement whose execution runs queries of its own (foreign-key checks,
    ...: :mod:`lockscope.execlocks`) is probed ``executions`` times, since those queries' plan caches advance."""
    text = bind_params(prober.checked, params, prober.session.literal)
    prober.load_tree()
    exec_probe = _prepare_execution(prober, params, prober.session.facts.plan_cache_mode)
    runs = executions if exec_probe is not None and exec_probe.spi else 1
    out: list[Execution] = []
    try:
        for number in range(1, runs + 1):
            with prober.session.probe_transaction():
                plan = _explain(prober.session, _EXPLAIN + text, prefix_len=len(_EXPLAIN))
                rows = prober.snapshot()
                locks = prober.build_locks(rows, PlanPhase.SIMPLE, plan)
                out.append(_with_execution_locks(prober, Execution(number, PlanPhase.SIMPLE, None, locks, plan),
                                                 exec_probe, rows)[0])
    finally:
        _release_execution(prober.session, exec_probe)
    return tuple(out)


def _check_param_types(prober: _Prober, declared: Sequence[str] = ()) -> None:
    """Refuse a statement whose ``$n`` the server could not type (so it never logs that error for lockscope):
    parse analysis modelled on the client (:func:`lockscope.paramtypes.type_params`).

    :raises StatementError: with the SQLSTATE PREPARE would fail with (42P18, 42P08, 42725 or 42804).
    """
    if len(declared) >= prober.checked.param_count:
        return
    typing = paramtypes.type_params(prober.session.query_rows, prober.checked, declared, owner=prober.session)
    if typing.sqlstate is not None:
        raise StatementError(f"{typing.sqlstate}: {typing.message} (PREPARE would fail): add a cast (e.g. "
                             "$1::int) or give --param-type", sqlstate=typing.sqlstate)


def _prepare(prober: _Prober, prefix: str, declared: Sequence[str] = ()) -> None:
    """Build the query tree (refusing an unknown relation or an untypable parameter before the server sees the
    statement), then ``PREPARE`` the statement in a READ ONLY transaction that is rolled back (the prepared
    statement outlives it; the caller deallocates it).

    :param prefix: ``PREPARE /* lockscope */ name [(types)] AS `` (marked: an audit on this server skips it).
    :param declared: the ``--param-type`` types in the prefix.
    """
    prober.load_tree()
    _check_param_types(prober, declared)
    with prober.session.probe_transaction():
        prober.session.run_user_text(prefix + prober.checked.text, prefix_len=len(prefix))


def _probe_prepared(
    prober: _Prober, params: Sequence[str], param_types: Sequence[str], mode: PlanCacheMode, executions: int
) -> tuple[Execution, ...]:
    session = prober.session
    name = _statement_name()
    types = ""
    if param_types:
        for t in param_types:
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_ .\[\]()\"]*", t):
                raise BadInputError(f"invalid parameter type {t!r}")
        types = " (" + ", ".join(param_types) + ")"
    prefix = f"PREPARE {OWN_QUERY_MARKER} {name}{types} AS "
    args = "(" + ", ".join(session.literal(p) for p in params) + ")" if params else ""
    out: list[Execution] = []
    _prepare(prober, prefix, param_types)
    exec_probe: _ExecProbe | None = None
    try:
        exec_probe = _prepare_execution(prober, params, mode)
        tracker = _PhaseTracker(mode, bool(params) or bool(param_types))
        for number in range(1, executions + 1):
            with session.probe_transaction(plan_cache_mode=mode):
                plan = _explain(session, f"{_EXPLAIN}EXECUTE {name}{args}")
                rows = prober.snapshot()
                phase, plan_type = tracker.step(session, name, plan, prober, rows)
                locks = prober.build_locks(rows, phase, plan)
                extra = prober.executor_index_locks(locks, rows, plan) if phase is PlanPhase.GENERIC_REUSE else ()
                out.append(_with_execution_locks(prober, Execution(number, phase, plan_type, locks, plan, extra),
                                                 exec_probe, rows)[0])
    finally:
        session.deallocate(name)
        _release_execution(session, exec_probe)
    return tuple(out)


def _statement_name() -> str:
    """A prepared statement name of lockscope's (``lockscope_<pid>_<n>``: an audit on the server skips it)."""
    return f"lockscope_{os.getpid()}_{next(_name_counter)}"


class _PhaseTracker:
    """The plan-cache phase of each execution of one prepared statement in the probe session (the user's
    statement, or the stand-in of a query the execution runs inside: ``plancache.c GetCachedPlan``), from the
    server's counters (``pg_prepared_statements``, PG 14+) or, on PG 13, from the rules and the locks."""

    def __init__(self, mode: PlanCacheMode, has_params: bool) -> None:
        self.mode = mode
        self.has_params = has_params
        self.before = (0, 0)
        self.generic_built = False
        self.custom_locked_indexes = False

    def step(self, session: Session, name: str, plan: ExplainedPlan, prober: _Prober,
             rows: Sequence[RelationLockRow]) -> tuple[PlanPhase, str | None]:
        """The phase of the execution just probed, and its plan type (``custom``/``generic``; None when unknown).

        :param prober: the statement's prober, and ``rows`` the locks its execution took (PG 13 tells a reused
            generic plan, which locks no index, from a custom plan, which locks them all).
        """

        def locks_indexes(phase: PlanPhase) -> bool:
            return any(lk.role.is_index for lk in prober.build_locks(list(rows), phase, plan))

        counters = session.query_rows("prepared_counters", PreparedCountersRow, [name])[0]
        after = None if counters.generic_plans is None or counters.custom_plans is None else (
            counters.generic_plans, counters.custom_plans)
        phase, plan_type, self.generic_built = _phase(self.mode, self.has_params, self.generic_built, self.before,
                                                      after)
        if after is None and plan_type is None and phase is PlanPhase.CUSTOM:
            # PG 13 (no plan counters) after the generic plan was built: reused, or a custom plan again?
            reused = not locks_indexes(PlanPhase.CUSTOM) if self.custom_locked_indexes else plan.param_refs
            phase, plan_type = (PlanPhase.GENERIC_REUSE, "generic") if reused else (PlanPhase.CUSTOM, "custom")
        if after is None and phase is PlanPhase.CUSTOM and locks_indexes(phase):
            self.custom_locked_indexes = True
        self.before = after if after is not None else (self.before[0] + (plan_type == "generic"),
                                                       self.before[1] + (plan_type == "custom"))
        return phase, plan_type


def _phase(
    mode: PlanCacheMode, has_params: bool, generic_built: bool, before: tuple[int, int],
    after: tuple[int, int] | None
) -> tuple[PlanPhase, str | None, bool]:
    """Phase of one execution, following ``plancache.c GetCachedPlan`` and ``choose_custom_plan``.

    :param before: (generic_plans, custom_plans) before this execution.
    :param after: the counters after it, or None on PG 13 (then the plan type comes from the rules).
    :return: (phase, plan type, whether a generic plan now exists).
    """
    # choose_custom_plan: no parameters -> generic; force modes; else 5 custom plans, then build a generic one.
    wants_generic = (not has_params) or mode is PlanCacheMode.FORCE_GENERIC_PLAN or (
        mode is PlanCacheMode.AUTO and before[1] >= CUSTOM_PLANS_BEFORE_GENERIC
    )
    if mode is PlanCacheMode.FORCE_CUSTOM_PLAN and has_params:
        wants_generic = False
    plan_type: str | None
    if after is not None:
        plan_type = "generic" if after[0] > before[0] else "custom"
    elif not wants_generic:
        plan_type = "custom"
    else:
        plan_type = "generic" if mode is PlanCacheMode.FORCE_GENERIC_PLAN or not has_params else None
    if wants_generic and not generic_built:
        return PlanPhase.GENERIC_BUILD, plan_type, True
    if plan_type == "generic":
        return PlanPhase.GENERIC_REUSE, plan_type, generic_built
    return PlanPhase.CUSTOM, plan_type, generic_built


# -- execution locks: what a real execution adds to what EXPLAIN locks (lockscope.execlocks) -----------------------

@dataclass
class _SpiProbe:
    """The stand-in of a query an execution runs inside (a foreign-key check, ...), prepared in the probe session
    under its own name, with its own plan-cache history, as the server keeps one per backend."""

    query: SpiQuery
    name: str
    prober: _Prober
    tracker: _PhaseTracker


@dataclass
class _ExecProbe:
    """A statement's execution model (:func:`lockscope.execlocks.derive_execution`) and its prepared stand-ins."""

    model: ExecutionModel
    spi: dict[str, _SpiProbe]


@dataclass(frozen=True)
class _SpiResult:
    """What one call's probe took: its phase, its new locks in modelled order, a reused plan's index locks."""

    call: SpiCall
    phase: PlanPhase
    ordered: list[tuple[RelationLockRow, str]]
    executor_indexes: list[tuple[int, LockMode]]


def _prepare_execution(prober: _Prober, params: Sequence[str], mode: PlanCacheMode,
                       spi: dict[str, _SpiProbe] | None = None) -> _ExecProbe | None:
    """Derive the statement's execution locks and PREPARE the queries its execution runs (outside any probe
    transaction: the catalog reads are their own transactions, each PREPARE a rolled-back one). None for a SELECT
    or a statement whose target lockscope cannot name.

    :param mode: the plan_cache_mode the executions run with (it governs these queries' plans too).
    :param spi: stand-ins already prepared by an earlier execution, by key: kept, with their plan-cache history.
    :raises DatabaseError: a catalog read failed.
    """
    tree = prober.tree
    raw = raw_statement(prober.checked)
    if tree is not None:
        target = tree.rtable[tree.result_relation - 1].relid if tree.result_relation > 0 else None
    else:  # a shape the client-side analyser does not build: the target as the parser names it
        target = execlocks.target_relation(prober.session, raw)
    if target is None:
        return None
    model = execlocks.derive_execution(prober.session, prober.checked, params, target, raw)
    spi = {} if spi is None else spi
    dropped: dict[str, str] = {}
    try:
        for query in model.spi_queries:
            if query.key not in spi:
                reason = _prepare_spi(prober, query, mode, spi)
                if reason:
                    dropped[query.key] = f"{query.detail}: not probed ({reason})"
    except BaseException:
        _release_execution(prober.session, _ExecProbe(model, spi))
        raise
    if dropped:  # a trigger's statement lockscope could not prepare: its locks are said to be missing
        model = execlocks.ExecutionModel(
            tuple(e for e in model.events if not (isinstance(e, SpiCall) and e.query.key in dropped)),
            model.notes + tuple(dropped.values()))
    return _ExecProbe(model, spi)


def _prepare_spi(prober: _Prober, query: SpiQuery, mode: PlanCacheMode, spi: dict[str, _SpiProbe]) -> str:
    """PREPARE one stand-in (after the client-side checks, so that the server never refuses it: nothing in its
    log); returns why it was not, for a trigger's statement the checks refuse ("" when prepared).

    :raises StatementError: a foreign key's query refused (lockscope wrote it: a bug to report).
    """
    session = prober.session
    sub = _Prober(session, check_statement(query.text), prober.assumed)
    try:
        sub.load_tree()
        declared = [t for t in query.param_types if t != "unknown"]
        if len(declared) == len(query.param_types):
            typing = paramtypes.type_params(session.query_rows, sub.checked, declared, owner=session)
            if typing.sqlstate is not None:
                raise StatementError(f"{typing.sqlstate}: {typing.message}", sqlstate=typing.sqlstate)
    except StatementError as exc:
        if query.source is not LockSource.TRIGGER:
            raise
        return str(exc)
    name = _statement_name()
    types = ", ".join(query.param_types)
    with session.probe_transaction():
        session.run_user_text(f"PREPARE {OWN_QUERY_MARKER} {name}" + (f" ({types})" if types else "")
                              + f" AS {query.text}")
    spi[query.key] = _SpiProbe(query, name, sub, _PhaseTracker(mode, bool(query.param_types)))
    return ""


def _release_execution(session: Session, probe: _ExecProbe | None) -> None:
    """DEALLOCATE the stand-ins (prepared statements outlive the probe transactions)."""
    for sp in (probe.spi.values() if probe is not None else ()):
        session.deallocate(sp.name)


def _run_spi_calls(prober: _Prober, probe: _ExecProbe, number: int,
                   rows: Sequence[RelationLockRow]) -> list[ExtraLock | _SpiResult]:
    """Inside the probe transaction, after the statement's own EXPLAIN: each call's stand-in EXPLAIN EXECUTEd where
    the server would run it, the backend's locks read after it (the new ones are the call's). The session's
    ``plan_cache_mode`` applies to these queries as to any prepared statement (``plancache.c
    choose_custom_plan``)."""
    session = prober.session
    held = {(r.relation_oid, r.mode) for r in rows}
    out: list[ExtraLock | _SpiResult] = []
    for event in probe.model.events:
        if isinstance(event, ExtraLock):
            if number == 1 or not event.first_execution_only:
                out.append(event)
            continue
        sp = probe.spi[event.query.key]
        args = ", ".join("NULL" if v is None else session.literal(v) for v in event.values)
        plan = _explain(session, f"{_EXPLAIN}EXECUTE {sp.name}({args})")
        now = prober.snapshot()
        new = sp.prober.own([r for r in now if (r.relation_oid, r.mode) not in held])
        held |= {(r.relation_oid, r.mode) for r in now}
        phase, _ = sp.tracker.step(session, sp.name, plan, sp.prober, new)
        reuse = sp.prober.executor_index_requests(sp.prober.step_modes(phase, plan), plan) \
            if phase is PlanPhase.GENERIC_REUSE else []
        out.append(_SpiResult(event, phase, sp.prober.order_rows(new, phase, plan), reuse))
    return out


def _with_execution_locks(prober: _Prober, execution: Execution, probe: _ExecProbe | None,
                          rows: Sequence[RelationLockRow], prior: Sequence[LockRequest] = ()
                          ) -> tuple[Execution, list[LockRequest]]:
    """``execution`` with its execution locks: the calls probed (:func:`_run_spi_calls`) and the modelled ones
    placed in order after the statement's locks, every predicted fast-path flag simulated after ``prior`` (the
    locks the transaction's earlier statements took and released, in order) with what the backend holds meanwhile
    (the target's indexes while rows are written: ``capacity.simulate_fast_path``).

    :param rows: the backend's relation locks after the statement's own EXPLAIN (all of them, earlier statements'
        too: a call's locks are the ones it adds).
    :return: the execution, and its lock requests (acquisitions and releases) in order, for the next statement.
    """
    events = _run_spi_calls(prober, probe, execution.number, rows) if probe is not None else []
    own = execution.locks + execution.executor_index_locks
    own_requests = [LockRequest(lk.relation_oid, lk.mode, lk.relation_oid in _shared(rows)) for lk in own]
    items: list[tuple[LockRequest, LockSource, str, str]] = []
    phases: list[tuple[str, PlanPhase]] = []
    for event in events:
        if isinstance(event, ExtraLock):
            items.append((LockRequest(event.relation_oid, event.mode, release=event.release), event.source,
                          event.detail, "execution"))
            continue
        phases.append((event.call.query.detail, event.phase))
        items += [(LockRequest(r.relation_oid, r.mode, r.shared_catalog), event.call.query.source,
                   event.call.query.detail, rule) for r, rule in event.ordered]
        items += [(LockRequest(oid, mode), event.call.query.source, event.call.query.detail, "executor index")
                  for oid, mode in event.executor_indexes]
    requests = [*prior, *own_requests, *(req for req, *_ in items)]
    predicted = prober.model.predict(requests)[len(prior):]
    assumed = prober.assumed.predict(requests)[len(prior):] if prober.assumed else [None] * (len(requests) - len(prior))
    in_context = [dataclasses.replace(lk, predicted_fastpath=p, assumed_fastpath=a)
                  for lk, p, a in zip(own, predicted, assumed, strict=False)]
    n_locks = len(execution.locks)
    held = {(r.relation_oid, r.mode) for r in requests[: len(prior) + len(own_requests)]}
    database_oid = next((r.database_oid for r in rows if r.database_oid), 0)
    infos = prober._infos([req.relation_oid for req, *_ in items])
    locks: list[RelationLock] = []
    for (req, source, detail, rule), pred, assume in zip(items, predicted[len(own):], assumed[len(own):],
                                                        strict=True):
        key = (req.relation_oid, req.mode)
        if req.release or source is LockSource.TARGET_INDEX or key in held:
            continue  # released at the end of the statement, or a lock already held (a local-lock hit)
        held.add(key)
        lock = prober._lock(req.relation_oid, infos, req.mode, pred, pred, assume, len(own) + len(locks), rule,
                            0 if req.shared_catalog else database_oid, LockRole.OTHER)
        locks.append(dataclasses.replace(lock, source=source, detail=detail))
    done = dataclasses.replace(execution, locks=tuple(in_context[:n_locks]),
                               executor_index_locks=tuple(in_context[n_locks:]), execution_locks=tuple(locks),
                               query_phases=tuple(phases), notes=probe.model.notes if probe is not None else ())
    return done, requests[len(prior):]


def _held(history: Sequence[LockRequest]) -> set[tuple[int, LockMode]]:
    """The (relation, mode) locks still held after ``history``'s acquisitions and releases, in order."""
    count: dict[tuple[int, LockMode], int] = {}
    for r in history:
        key = (r.relation_oid, r.mode)
        count[key] = count.get(key, 0) + (-1 if r.release else 1)
    return {k for k, n in count.items() if n > 0}


def _shared(rows: Sequence[RelationLockRow]) -> frozenset[int]:
    """The shared catalogs among the locked relations (never fast-path: ``lock.c EligibleForRelationFastPath``)."""
    return frozenset(r.relation_oid for r in rows if r.shared_catalog)


# -- a statement of a transaction (lockscope.transaction) ----------------------------------------------------------

class TransactionProbe:
    """One statement of a transaction being probed execution after execution (:mod:`lockscope.transaction`): its
    prober, its prepared statement and plan-cache history (prepared protocol), and the stand-ins of the queries its
    execution runs, each with its own history, as the server keeps them per backend.

    Use :func:`open_transaction_probes`; per execution, :meth:`prepare` outside the probe transaction, then
    :meth:`run` inside it.
    """

    def __init__(self, session: Session, text: str, protocol: str, mode: PlanCacheMode,
                 assume: CapacityModel | None) -> None:
        self.prober = _Prober(session, check_statement(text), assume)
        self.protocol = protocol
        self.mode = mode
        self.name: str | None = None
        self.tracker: _PhaseTracker | None = None
        self.spi: dict[str, _SpiProbe] = {}
        self.exec_probe: _ExecProbe | None = None

    def open(self, params: Sequence[str]) -> None:
        """Build the query tree (refusing an unknown relation or an untypable parameter) and, with the prepared
        protocol, PREPARE the statement.

        :raises StatementError: from the server or the client-side checks.
        """
        if self.protocol == "prepared":
            name = _statement_name()
            _prepare(self.prober, f"PREPARE {OWN_QUERY_MARKER} {name} AS ")
            self.name = name
            self.tracker = _PhaseTracker(self.mode, bool(params))
        else:
            self.prober.load_tree()

    def prepare(self, params: Sequence[str]) -> None:
        """Derive this execution's execution locks for its values (catalog reads, outside the probe transaction)
        and PREPARE the stand-ins of queries first met."""
        self.exec_probe = _prepare_execution(self.prober, params, self.mode, self.spi)

    def run(self, number: int, params: Sequence[str], history: Sequence[LockRequest]
            ) -> tuple[Execution, list[LockRequest]]:
        """Inside the execution's probe transaction: the statement's EXPLAIN (EXECUTE), the backend's locks read,
        the new ones ordered and flagged after ``history`` (the transaction's earlier lock requests), then its
        execution locks.

        :return: the statement's execution and its lock requests in order.
        """
        prober = self.prober
        session = prober.session
        if self.name is None:
            text = bind_params(prober.checked, params, session.literal)
            plan = _explain(session, _EXPLAIN + text, prefix_len=len(_EXPLAIN))
        else:
            args = "(" + ", ".join(session.literal(p) for p in params) + ")" if params else ""
            plan = _explain(session, f"{_EXPLAIN}EXECUTE {self.name}{args}")
        rows = prober.snapshot()
        before = _held(history)
        new = prober.own([r for r in rows if (r.relation_oid, r.mode) not in before])
        phase, plan_type = (PlanPhase.SIMPLE, None) if self.tracker is None or self.name is None else \
            self.tracker.step(session, self.name, plan, prober, new)
        locks = prober.build_locks(new, phase, plan)
        extra = prober.executor_index_locks(locks, rows, plan) if phase is PlanPhase.GENERIC_REUSE else ()
        return _with_execution_locks(prober, Execution(number, phase, plan_type, locks, plan, extra),
                                     self.exec_probe, rows, history)

    def close(self) -> None:
        """DEALLOCATE what was prepared."""
        if self.name is not None:
            self.prober.session.deallocate(self.name)
            self.name = None
        _release_execution(self.prober.session, _ExecProbe(execlocks.ExecutionModel(), self.spi))
        self.spi = {}


@contextlib.contextmanager
def open_transaction_probes(session: Session, statements: Sequence[tuple[str, Sequence[str]]], *,
                            protocol: str, mode: PlanCacheMode,
                            assume: CapacityModel | None) -> Iterator[list[TransactionProbe]]:
    """A :class:`TransactionProbe` per statement ``(text, first execution's values)``, opened; all closed
    (deallocated) on exit.

    :raises BadInputError: an unknown protocol.
    :raises StatementError: a statement the server or the client-side checks refuse.
    """
    if protocol not in PROTOCOLS:
        raise BadInputError(f"unknown protocol {protocol!r}: use simple or prepared")
    probes: list[TransactionProbe] = []
    try:
        for text, params in statements:
            probe = TransactionProbe(session, text, protocol, mode, assume)
            probes.append(probe)
            probe.open(params)
        yield probes
    finally:
        for probe in probes:
            probe.close()


def measure_generic_plan(session: Session, sql: str, *, assume: CapacityModel | None = None) -> Footprint:
    """The planner locks of building the statement's generic plan, without parameter values.

    For ``$1..$n`` texts such as pg_stat_statements keeps. PG 16+: ``EXPLAIN (GENERIC_PLAN) <statement>`` (commit
    3c05284d83; it bypasses the plan cache and takes the locks of building a generic plan: every partition not
    pruned by constants and every index, ``plancat.c get_relation_info``; sent with the simple query protocol,
    which leaves ``$n`` unbound, and only after pglast verified a single statement). PG 13-15: ``PREPARE``
    (parameter types
    inferred by the server) and one ``EXPLAIN EXECUTE name(NULL, ...)`` with ``plan_cache_mode =
    force_generic_plan``, which builds the generic plan (``plancache.c BuildCachedPlan``) with the same locks;
    EXPLAIN without ANALYZE never runs the statement. Both in a READ ONLY transaction that is rolled back.

    :return: a :class:`Footprint` with ``protocol`` ``generic_plan`` and one execution of phase ``generic-build``.
    :raises UnsupportedStatementError: utility, several or no statements.
    :raises StatementError: the server rejected the statement (e.g. a parameter type it cannot infer).
    :raises LockBlockedError: another session holds a conflicting lock longer than lock_timeout.
    """
    checked = check_statement(sql)
    prober = _Prober(session, checked, assume)
    facts = session.facts
    if facts.server_version_num >= PG16:
        prefix = "EXPLAIN (GENERIC_PLAN, FORMAT JSON) "
        prober.load_tree()
        _check_param_types(prober)
        with session.probe_transaction():
            plan = _explain(session, prefix + checked.text, prefix_len=len(prefix), simple=True)
            locks = prober.build_locks(prober.snapshot(), PlanPhase.SIMPLE, plan)
    else:
        name = f"lockscope_{os.getpid()}_{next(_name_counter)}"
        prefix = f"PREPARE {OWN_QUERY_MARKER} {name} AS "  # marked: an audit on this server skips it
        _prepare(prober, prefix)
        try:
            args = "(" + ", ".join(["NULL"] * checked.param_count) + ")" if checked.param_count else ""
            with session.probe_transaction(plan_cache_mode=PlanCacheMode.FORCE_GENERIC_PLAN):
                plan = _explain(session, f"{_EXPLAIN}EXECUTE {name}{args}")
                locks = prober.build_locks(prober.snapshot(), PlanPhase.GENERIC_BUILD, plan)
        finally:
            session.deallocate(name)
    return Footprint(
        statement=checked.text,
        protocol="generic_plan",
        plan_cache_mode=PlanCacheMode.FORCE_GENERIC_PLAN,
        params=(),
        server_version_num=facts.server_version_num,
        server_version=facts.server_version,
        capacity=facts.capacity,
        executions=(Execution(1, PlanPhase.GENERIC_BUILD, "generic", locks, plan),),
        assumed=assume,
        order_note=prober.order_note,
    )
