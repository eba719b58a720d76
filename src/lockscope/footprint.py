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
import functools
import itertools
import json
import os
import re
import time
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from . import acquisition, capacity, derived, execlocks, paramtypes, privileges, querytree
from .acquisition import LockStep, acquisition_order
from .capacity import CapacityModel, LockRequest
from .db import OWN_QUERY_MARKER, Session
from .errors import BadInputError, DatabaseError, StatementError
from .execlocks import ExecutionModel, ExtraLock, SpiCall, SpiQuery
from .explain import ExplainedPlan, read_explain
from .lockpart import NUM_LOCK_PARTITIONS, lock_partition
from .privileges import PrivilegeGap
from .querynodes import Query
from .rows import (
    AcquisitionFactsRow,
    DatabaseOidRow,
    ExecTargetRow,
    ExecutorIndexRow,
    FunctionVolatilityRow,
    PartitionRankRow,
    PreparedCountersRow,
    RelationInfoRow,
    RelationLockRow,
    UserFunctionRow,
)
from .statement import CheckedStatement, bind_params, check_statement, raw_statement
from .versions import PG14, PG16
from .vocab import FootprintSource, LockMode, LockRole, LockSource, PlanCacheMode, PlanPhase

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
    :ivar unknowns: why this execution's locks are not known exactly (a trigger's dynamic SQL, rows only the
        execution finds, ...), one sentence each; empty when lockscope states them exactly. A footprint with
        unknowns is a lower bound, never shown as exact.
    :ivar at_most: why this execution's locks may be fewer than stated (a derived footprint counts every partition
        whose pruning the catalog does not decide), one sentence each: the figure is then an upper bound.
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
    unknowns: tuple[str, ...] = ()
    at_most: tuple[str, ...] = ()

    @property
    def exact(self) -> bool:
        """True when lockscope states this execution's locks exactly (no :attr:`unknowns`, no :attr:`at_most`)."""
        return not self.unknowns and not self.at_most

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
    def real_fastpath_count(self) -> int:
        """Fast-path locks of a real execution (count): :attr:`real_lock_count` less :attr:`real_main_table_count`."""
        return self.real_lock_count - self.real_main_table_count

    @property
    def real_assumed_main_table_count(self) -> int | None:
        """Main-table locks of a real execution under the assumed version/setting (count), or None."""
        locks = self.real_locks
        if not locks or locks[0].assumed_fastpath is None:
            return None
        return sum(not lk.assumed_fastpath for lk in locks)

    @property
    def real_partition_load(self) -> tuple[int, ...]:
        """A real execution's main-table locks per lock partition: 16 counts (index = partition)."""
        load = [0] * NUM_LOCK_PARTITIONS
        for lock in self.real_locks:
            if not lock.fastpath:
                load[lock.lock_partition] += 1
        return tuple(load)

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
    :ivar source: measured in the session's role, measured through the EXPLAIN helper, or derived from the catalog
        (EXPLAIN denied: :mod:`lockscope.privileges`).
    :ivar privilege_gaps: the privileges the statement's EXPLAIN needs that the session's role lacks, each with the
        GRANT that lifts it (empty when it has them all).
    :ivar helper: the EXPLAIN helper's signature when it was used, else ``""``.
    :ivar helper_gaps: what the EXPLAIN helper's owner lacks, when the helper is there but could not be used.
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
    source: FootprintSource = FootprintSource.MEASURED
    privilege_gaps: tuple[PrivilegeGap, ...] = ()
    helper: str = ""
    helper_gaps: tuple[PrivilegeGap, ...] = ()

    @property
    def spilled(self) -> bool:
        """True when any execution holds a lock in the main lock table (what a real execution holds: its EXPLAIN's
        locks and those its execution adds)."""
        return any(e.real_main_table_count for e in self.executions)

    @property
    def exact(self) -> bool:
        """True when every execution's locks are stated exactly (no :attr:`Execution.unknowns`)."""
        return all(e.exact for e in self.executions)

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
        known = self.order.by_oid
        return [r for r in rows if r.relation_oid >= _FIRST_NORMAL_OID or r.relation_oid in known]

    def _steps(self, phase: PlanPhase, plan: ExplainedPlan | None, infos: dict[int, RelationInfoRow],
               oids: list[int]) -> list[LockStep]:
        if self.tree is None:
            order = acquisition_order(infos, oids, self.checked.relation_names, self.session.facts.server_version_num)
            return [LockStep(o, m, "unknown") for o in order for m in capacity.LOCK_MODES]
        ctes = plan.cte_names if plan is not None else None
        memo = self.order.steps.get((phase.value, ctes))
        if memo is None:
            facts = acquisition.catalog_facts_from_rows(self.order.rows, self.order.server_order,
                                                        self.order.volatile, ctes)
            memo = tuple(acquisition.statement_lock_steps(self.tree, facts, self.session.facts.server_version_num,
                                                          phase))
            self.order.steps[(phase.value, ctes)] = memo
        return list(memo)

    def order_rows(self, rows: Sequence[RelationLockRow], phase: PlanPhase = PlanPhase.SIMPLE,
                   plan: ExplainedPlan | None = None) -> list[tuple[RelationLockRow, str]]:
        """``rows`` in the modelled acquisition order with the rule that placed each (``unmodelled`` last, in OID
        order)."""
        oids = list(dict.fromkeys(r.relation_oid for r in rows))
        known = self.order.by_oid
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
        known = self.order.by_oid
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
    #: the lock steps derived from these facts, by (phase, materialised CTE names): a pure function of them, kept
    #: for the next probe of the statement
    steps: dict[tuple[str, frozenset[str] | None], tuple[LockStep, ...]] = field(default_factory=dict,
                                                                                  compare=False, repr=False)

    @functools.cached_property
    def by_oid(self) -> Mapping[int, AcquisitionFactsRow]:
        """:attr:`rows` by relation OID."""
        return {r.relation_oid: r for r in self.rows}


_ORDER_CACHE: weakref.WeakKeyDictionary[Session, dict[str, _OrderFacts]] = weakref.WeakKeyDictionary()
#: The simple-protocol statement texts (values bound) each session's backend has planned (:meth:`_QueryProbe.step`),
#: at most :data:`_STEPPED_MAX` (count) kept.
_STEPPED: weakref.WeakKeyDictionary[Session, set[str]] = weakref.WeakKeyDictionary()
_STEPPED_MAX = 10_000


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
    read_rows: bool = True,
    announce: Callable[[int], None] | None = None,
    helper_signature: str | None = privileges.HELPER_SIGNATURE,
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
    :param read_rows: a write's execution locks depend on the rows it reaches: True reads them by lockscope's own
        key lookups (``exec_rows.sql``, at most :data:`lockscope.execlocks.ROW_READ_LIMIT` per lookup); False reads
        no table, and an execution whose rows matter is then labelled unknown.
    :param announce: called once, before the first pg_locks read, with the most pg_locks reads the measurement
        will make (count: :meth:`_QueryProbe.read_bound` of the statement and of each query its execution runs).
    :param helper_signature: the EXPLAIN helper to go through when the role may not EXPLAIN the statement
        (:mod:`lockscope.privileges`; None: never); without it the footprint is derived from the catalog.
    :return: a :class:`Footprint`; ``source`` says whether it was measured, measured through the helper, or derived.
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
    mode = PlanCacheMode(plan_cache_mode) if protocol == "prepared" else PlanCacheMode.AUTO
    # with the simple protocol, the queries the execution runs plan under the server's own plan_cache_mode
    steps_mode = mode if protocol == "prepared" else PlanCacheMode(session.facts.plan_cache_mode)
    access = explain_access(session, checked, helper_signature)
    if access.source is FootprintSource.DERIVED:
        runs = _derive_statement(prober, protocol, params, mode, executions, access.gaps, access.helper_gaps)
    else:
        # the same for every execution, and kept for the next probes of the session like the query tree
        with access.explaining(session), \
                session.catalog_memo(execlocks.DERIVATION_CATALOG, keep_s=ORDER_FACTS_TTL_S):
            runs = _probe_statement(prober, protocol, params, param_types, steps_mode, executions,
                                    read_rows and access.source is FootprintSource.MEASURED, announce)
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
        source=access.source,
        privilege_gaps=access.gaps,
        helper=access.helper.signature if access.helper else "",
        helper_gaps=access.helper_gaps,
    )


@dataclass(frozen=True)
class ExplainAccess:
    """How a statement can be probed by the session's role (:mod:`lockscope.privileges`): measured as it is, measured
    through the EXPLAIN helper, or derived from the catalog.

    :ivar source: which.
    :ivar gaps: what the role lacks (empty when measured as it is).
    :ivar helper: the helper, when it is used.
    :ivar helper_gaps: what the helper's owner lacks, when the helper is there but falls short.
    """

    source: FootprintSource
    gaps: tuple[PrivilegeGap, ...] = ()
    helper: privileges.ExplainHelper | None = None
    helper_gaps: tuple[PrivilegeGap, ...] = ()

    @contextlib.contextmanager
    def explaining(self, session: Session) -> Iterator[None]:
        """Every EXPLAIN of the block goes through the helper when it is used (:attr:`Session.explain_helper`)."""
        if self.helper is None:
            yield
            return
        session.explain_helper = self.helper.name
        try:
            yield
        finally:
            session.explain_helper = None


def explain_access(session: Session, checked: CheckedStatement,
                   helper_signature: str | None = privileges.HELPER_SIGNATURE) -> ExplainAccess:
    """Decide how ``checked`` is probed: catalog queries only (``privilege_gaps.sql``, ``explain_helper.sql``), so
    no EXPLAIN the server would refuse (and log) is ever sent."""
    if session.explain_helper is not None:
        return ExplainAccess(FootprintSource.HELPER)
    raw = raw_statement(checked)
    gaps = privileges.privilege_gaps(session, raw)
    if not gaps:
        return ExplainAccess(FootprintSource.MEASURED)
    helper, helper_gaps = privileges.find_helper(session, raw, helper_signature) \
        if helper_signature and ";" not in checked.text else (None, ())
    if helper is not None:
        return ExplainAccess(FootprintSource.HELPER, gaps, helper)
    return ExplainAccess(FootprintSource.DERIVED, gaps, None, helper_gaps)


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
    with prober.session.probe_transaction(paced=False):
        prober.session.run_user_text(prefix + prober.checked.text, prefix_len=len(prefix))


def _statement_name() -> str:
    """A prepared statement name of lockscope's (``lockscope_<pid>_<n>``: an audit on the server skips it)."""
    return f"lockscope_{os.getpid()}_{next(_name_counter)}"


def _types_clause(param_types: Sequence[str]) -> str:
    """`` (type, ...)`` of a ``PREPARE``, or ``""``.

    :raises BadInputError: a type name that is not one (it is pasted into the PREPARE).
    """
    for t in param_types:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_ .\[\]()\"]*", t):
            raise BadInputError(f"invalid parameter type {t!r}")
    return " (" + ", ".join(param_types) + ")" if param_types else ""


# -- a query's plan cache stepped, its lock sets measured once ---------------------------------------------------

@dataclass(frozen=True)
class _Step:
    """One call of a query through its plan cache in the probe session (``plancache.c GetCachedPlan``).

    :ivar phase: the call's phase.
    :ivar plan_type: ``custom`` or ``generic`` as the counters (or, on PG 13, the plan) tell; None for the simple
        protocol.
    :ivar plan: the plan the call would run (its EXPLAIN).
    :ivar values: the parameters' values (text; None for NULL).
    :ivar also_custom: the call built the generic plan and rejected it on cost, so it planned a custom plan too
        (``GetCachedPlan``: ``choose_custom_plan`` asked again once ``generic_cost`` is known): both plans' locks.
    :ivar cost_decided: the plan cache chose between its generic plan and a custom one on their estimated costs
        (``plancache.c choose_custom_plan`` under ``auto`` after five custom plans), costs that turn on the sizes
        of the relations the plans read.
    """

    phase: PlanPhase
    plan_type: str | None
    plan: ExplainedPlan
    values: tuple[str | None, ...]
    also_custom: bool = False
    cost_decided: bool = False


class _QueryProbe:
    """One query as the backend plans it, call after call: the user's statement (simple or prepared protocol) or a
    query its execution runs through SPI (a foreign-key check or action, a trigger's statement).

    Each call is *stepped* in the probe session as the backend would run it (``EXPLAIN EXECUTE`` of a prepared
    stepper, whose plan-cache counters advance as the backend's do; ``EXPLAIN`` for the simple protocol), which
    reads no pg_locks. What each phase locks is *measured* once, in a probe transaction of its own that holds
    nothing else, by one paced pg_locks read: a custom plan per pruning signature (the relations its plan shows:
    custom plans that prune alike lock alike, ``plancat.c get_relation_info``), the generic plan's build, and its
    reuse (``plancache.c AcquireExecutorLocks``, the same range table whatever the values). Measurements use
    prepared statements of their own (a ``force_custom_plan`` one, and a ``force_generic_plan`` one built once and
    then reused), so the stepper's counters are never disturbed.

    :ivar reads: pg_locks reads this query's measurements made (count).
    """

    def __init__(self, prober: _Prober, *, prepared: bool, has_params: bool, mode: PlanCacheMode,
                 name: str | None = None, types: str = "") -> None:
        self.prober = prober
        self.session = prober.session
        self.prepared = prepared
        self.name = name
        self.types = types
        self.tracker = _PhaseTracker(mode, has_params, prober.checked.param_count > 0,
                                     _params_only_in_values(prober.checked))
        self.cache: dict[tuple[Any, ...], list[RelationLockRow]] = {}
        self.owned: list[str] = [name] if name is not None else []
        self._custom: str | None = None
        self._generic: str | None = None
        self.reads = 0

    # -- stepping (inside a probe transaction that reads no pg_locks) --------------------------------------------
    def _args(self, values: Sequence[str | None]) -> str:
        lit = self.session.literal
        return "(" + ", ".join("NULL" if v is None else lit(v) for v in values) + ")" if values else ""

    def _bound(self, values: Sequence[str | None]) -> str:
        return bind_params(self.prober.checked, [v if v is not None else "" for v in values], self.session.literal)

    def step(self, values: Sequence[str | None]) -> _Step:
        """Run one call's ``EXPLAIN`` (simple protocol) or ``EXPLAIN EXECUTE`` of the stepper, inside the caller's
        probe transaction, and tell its phase from the plan-cache counters (``pg_prepared_statement()``).

        :raises StatementError, LockBlockedError: from the server.
        """
        session = self.session
        if not self.prepared or self.name is None:
            text = self._bound(values)
            plan = _explain(session, _EXPLAIN + text, prefix_len=len(_EXPLAIN))
            stepped = _STEPPED.setdefault(session, set())
            if len(stepped) >= _STEPPED_MAX:
                stepped.clear()
            stepped.add(text)
            return _Step(PlanPhase.SIMPLE, None, plan, tuple(values))
        if session.facts.server_version_num < PG14:  # no plan counters: the plan's $n tell (VERBOSE shows them all)
            rows = session.run_user_text(f"EXPLAIN (VERBOSE, FORMAT JSON) EXECUTE {self.name}{self._args(values)}")
            plan = read_explain(str(rows[0][0]), verbose=True)
        else:
            plan = _explain(session, f"{_EXPLAIN}EXECUTE {self.name}{self._args(values)}")
        decided = self.tracker.cost_decided()
        phase, plan_type = self.tracker.step(session, self.name, plan)
        also = phase is PlanPhase.GENERIC_BUILD and plan_type == "custom"
        return _Step(phase, plan_type, plan, tuple(values), also, decided)

    # -- measuring (outside any probe transaction: each measurement is one of its own) --------------------------
    def lock_rows(self, step: _Step) -> list[RelationLockRow]:
        """The relation locks ``step``'s call takes, every one (also those an earlier call or statement already
        holds), from the cache or measured now (one paced pg_locks read): the generic plan's build, then the
        custom plan it lost to when ``also_custom``.

        :raises StatementError, LockBlockedError: from the server.
        """
        if step.phase is PlanPhase.SIMPLE:
            return self._measure(("simple", step.plan.pruning_signature), step.values, self._measure_simple)
        if step.phase is PlanPhase.CUSTOM:
            return self._measure(("custom", step.plan.pruning_signature), step.values, self._measure_custom)
        if step.phase is PlanPhase.GENERIC_BUILD:
            rows = self._measure(("build",), step.values, self._measure_build)
            if step.also_custom:  # the custom plan's locks after the build's: a lock both take is held once
                built = {(r.relation_oid, r.mode) for r in rows}
                rows = rows + [r for r in self._measure(("custom", step.plan.pruning_signature), step.values,
                                                        self._measure_custom)
                               if (r.relation_oid, r.mode) not in built]
            return rows
        return self._measure(("reuse",), step.values, self._measure_reuse)

    def stepped_before(self, values: Sequence[str | None]) -> bool:
        """Whether this session's backend already ran this simple-protocol call's ``EXPLAIN`` (:meth:`step`): what a
        backend builds once for it (a partition constraint, ``plancat.c``/``relcache.c``) is built, so a
        measurement inside the step's own transaction takes what a measurement of its own would."""
        return not self.prepared and self._bound(values) in _STEPPED.get(self.session, set())

    def measure_in_step(self, step: _Step) -> None:
        """Measure a simple-protocol ``step`` inside its own probe transaction (begun paced, holding only the
        step's ``EXPLAIN``): the same locks :meth:`_measure_simple` reads in a transaction of its own, without a
        second ``EXPLAIN``; nothing when that plan's pruning signature was measured already.

        :raises StatementError: from the server.
        """
        key = ("simple", step.plan.pruning_signature)
        if step.phase is PlanPhase.SIMPLE and key not in self.cache:
            self.cache[key] = self.prober.own(self.prober.snapshot())
            self.reads += 1

    def _measure(self, key: tuple[Any, ...], values: tuple[str | None, ...],
                 how: Callable[[tuple[str | None, ...]], list[RelationLockRow]]) -> list[RelationLockRow]:
        if key not in self.cache:
            self.cache[key] = how(values)
            self.reads += 1
        return self.cache[key]

    def _read(self, text: str, mode: PlanCacheMode | None) -> list[RelationLockRow]:
        session = self.session
        with session.probe_transaction(plan_cache_mode=(mode or self.tracker.mode).value):
            _explain(session, text, prefix_len=len(_EXPLAIN) if mode is None else 0)
            return self.prober.own(self.prober.snapshot())

    def _measure_simple(self, values: tuple[str | None, ...]) -> list[RelationLockRow]:
        return self._read(_EXPLAIN + self._bound(values), None)

    def _prepare_measurer(self) -> str:
        name = _statement_name()
        prefix = f"PREPARE {OWN_QUERY_MARKER} {name}{self.types} AS "
        with self.session.probe_transaction(paced=False):
            self.session.run_user_text(prefix + self.prober.checked.text, prefix_len=len(prefix))
        self.owned.append(name)
        return name

    def _measure_custom(self, values: tuple[str | None, ...]) -> list[RelationLockRow]:
        if self._custom is None:
            self._custom = self._prepare_measurer()
        return self._read(f"{_EXPLAIN}EXECUTE {self._custom}{self._args(values)}", PlanCacheMode.FORCE_CUSTOM_PLAN)

    def _measure_build(self, values: tuple[str | None, ...]) -> list[RelationLockRow]:
        if self.session.facts.server_version_num < PG14:
            # PG 13's executor start reads each result partition's constraint (execMain.c InitResultRelInfo), once
            # per backend: built first by a throw-away generic plan, so that the measured build holds the
            # planner's locks only (the executed plan's constraints are modelled: execlocks partqual)
            warm = self._prepare_measurer()
            with self.session.probe_transaction(paced=False, plan_cache_mode=PlanCacheMode.FORCE_GENERIC_PLAN.value):
                _explain(self.session, f"{_EXPLAIN}EXECUTE {warm}{self._args(values)}")
        self._generic = self._prepare_measurer()  # a fresh one: its first generic call builds the plan
        return self._read(f"{_EXPLAIN}EXECUTE {self._generic}{self._args(values)}", PlanCacheMode.FORCE_GENERIC_PLAN)

    def _measure_reuse(self, values: tuple[str | None, ...]) -> list[RelationLockRow]:
        if self._generic is None:  # the build was measured by no one yet (never: a build precedes every reuse)
            self._measure(("build",), values, self._measure_build)
        assert self._generic is not None
        return self._read(f"{_EXPLAIN}EXECUTE {self._generic}{self._args(values)}", PlanCacheMode.FORCE_GENERIC_PLAN)

    def close(self) -> None:
        """DEALLOCATE the stepper and the measurers."""
        for name in self.owned:
            self.session.deallocate(name)
        self.owned = []

    def read_bound(self, values: Sequence[Sequence[str | None]]) -> int:
        """At most how many pg_locks reads calls with these values make (count), before any is made: a custom (or
        simple) plan per distinct pruning (one when the query names no partitioned table, else one per distinct
        values at most), a generic plan's build and its reuse, as the plan_cache_mode allows, less the lock sets
        already measured."""
        if not values:
            return 0
        partitioned = self.prober.tree is None or any(r.relkind == "p" for r in self.prober.order.rows)
        custom = min(len(values), len({tuple(v) for v in values})) if partitioned else 1
        if not self.prepared:
            return max(0, custom - len(self.cache))
        mode = self.tracker.mode
        generic = 2 if mode is not PlanCacheMode.FORCE_CUSTOM_PLAN or not self.tracker.has_params else 0
        if mode is PlanCacheMode.FORCE_GENERIC_PLAN or not self.tracker.has_params:
            custom = 0
        elif mode is PlanCacheMode.AUTO and len(values) < CUSTOM_PLANS_BEFORE_GENERIC + 1 - self._calls_before():
            generic = 0
        return max(0, custom + generic - len(self.cache))

    def _calls_before(self) -> int:
        return self.tracker.before[0] + self.tracker.before[1]


class _PhaseTracker:
    """The plan-cache phase of each call of one prepared statement in the probe session (the user's statement, or
    the stepper of a query the execution runs inside: ``plancache.c GetCachedPlan``), from the server's counters
    (``pg_prepared_statements``, PG 14+) or, on PG 13, from the rules and the plan (a generic plan shows its
    parameters as ``$n``)."""

    def __init__(self, mode: PlanCacheMode, has_params: bool, text_params: bool = True,
                 hidden_params: bool = False) -> None:
        self.mode = mode
        self.has_params = has_params
        self.text_params = text_params
        self.hidden_params = hidden_params
        self.before = (0, 0)
        self.generic_built = False

    def cost_decided(self) -> bool:
        """The next call's plan is chosen on cost (``choose_custom_plan``: ``auto``, parameters, five custom plans
        made)."""
        return self.mode is PlanCacheMode.AUTO and self.has_params and self.before[1] >= CUSTOM_PLANS_BEFORE_GENERIC

    def step(self, session: Session, name: str, plan: ExplainedPlan) -> tuple[PlanPhase, str | None]:
        """The phase of the call just stepped, and its plan type (``custom``/``generic``).

        :raises DatabaseError: the counters' read failed.
        """
        counters = session.query_rows("prepared_counters", PreparedCountersRow, [name])[0]
        after = None if counters.generic_plans is None or counters.custom_plans is None else (
            counters.generic_plans, counters.custom_plans)
        phase, plan_type, self.generic_built = _phase(self.mode, self.has_params, self.generic_built, self.before,
                                                      after)
        if plan_type is None:  # PG 13 after five custom plans: the generic plan chosen, or rejected on cost?
            # a generic plan shows the parameters its text uses as $n (EXPLAIN VERBOSE prints every expression); a
            # text using none plans alike either way, and the generic plan, costing no planning, wins
            # (a multi-row VALUES list's parameters are not printed: its plans are alike, and the generic one wins)
            plan_type = "generic" if plan.param_refs or not self.text_params or self.hidden_params else "custom"
            if phase is PlanPhase.CUSTOM and plan_type == "generic":
                phase = PlanPhase.GENERIC_REUSE
        self.before = after if after is not None else (self.before[0] + (plan_type == "generic"),
                                                       self.before[1] + (plan_type == "custom"))
        return phase, plan_type


def _params_only_in_values(checked: CheckedStatement) -> bool:
    """The statement's ``$n`` all sit in a multi-row ``VALUES`` list of an INSERT, which ``EXPLAIN VERBOSE`` does not
    print (its Values Scan shows ``"*VALUES*".columnN``): a custom and the generic plan look and cost alike."""
    body = raw_statement(checked).get("InsertStmt")
    if body is None:
        return False
    lists = ((body.get("selectStmt") or {}).get("SelectStmt") or {}).get("valuesLists") or []
    rest = {k: v for k, v in body.items() if k != "selectStmt"}
    select = {k: v for k, v in ((body.get("selectStmt") or {}).get("SelectStmt") or {}).items() if k != "valuesLists"}
    return len(lists) > 1 and "ParamRef" not in json.dumps([rest, select])


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


# -- one statement's executions -------------------------------------------------------------------------------------

def _open_statement(prober: _Prober, protocol: str, mode: PlanCacheMode, params: Sequence[str],
                    param_types: Sequence[str] = ()) -> _QueryProbe:
    """The user's statement as a :class:`_QueryProbe`: PREPAREd (after the client-side checks) with the prepared
    protocol, else its query tree only (``EXPLAIN`` of the bound text per call).

    :raises StatementError, BadInputError: the statement or its parameter types refused.
    """
    if protocol != "prepared":
        prober.load_tree()
        return _QueryProbe(prober, prepared=False, has_params=bool(params), mode=mode)
    name = _statement_name()
    types = _types_clause(param_types)
    _prepare(prober, f"PREPARE {OWN_QUERY_MARKER} {name}{types} AS ", param_types)
    return _QueryProbe(prober, prepared=True, has_params=bool(params) or bool(param_types), mode=mode, name=name,
                       types=types)


def _probe_statement(prober: _Prober, protocol: str, params: Sequence[str], param_types: Sequence[str],
                     mode: PlanCacheMode, executions: int, read_rows: bool = True,
                     announce: Callable[[int], None] | None = None) -> tuple[Execution, ...]:
    """Executions 1..N of one statement: per execution, one probe transaction that steps the statement and the
    queries its execution runs through their plan caches (no pg_locks read), then each call's locks from its
    phase's measurement (:class:`_QueryProbe`), ordered and flagged. With the simple protocol, a statement whose
    execution runs no query of its own is probed once (every execution plans it alike)."""
    session = prober.session
    statement = _open_statement(prober, protocol, mode, params, param_types)
    exec_probe: _ExecProbe | None = None
    backend: set[str] = set()  # what the probe's twin backend built once (relcache entries: once_key)
    out: list[Execution] = []
    try:
        exec_probe = _prepare_execution(prober, params, mode, read_rows=read_rows, backend=backend)
        # the simple protocol plans every execution alike: the first one, and the later ones only when the first
        # builds what a backend keeps (a partition's constraint) or the execution runs queries of its own
        planned = executions if protocol == "prepared" or (exec_probe is not None and exec_probe.spi) else 1
        if announce is not None:
            announce(statement.read_bound([tuple(params)] * planned) + _spi_read_bound([exec_probe] * planned))
        # the simple protocol with no query of its own, planned by this backend before (what a backend builds once
        # is built): the step's transaction is the measurement's (one EXPLAIN)
        fused = protocol != "prepared" and (exec_probe is None or not exec_probe.spi) and \
            statement.stepped_before(tuple(params))
        number = 0
        while number < executions:
            number += 1
            with session.probe_transaction(paced=fused, plan_cache_mode=mode.value):
                step = statement.step(tuple(params))
                if fused:
                    statement.measure_in_step(step)
                calls = _step_spi_calls(exec_probe, number) if exec_probe is not None else []
            rows = statement.lock_rows(step)
            opens, closes = _executor_start_indexes(prober, statement, step, rows)
            once = [*_planner_quals(prober, step.phase, rows, backend),
                    *_executor_start_quals(prober, statement, step, rows, backend)]
            calls = [*once, *opens, *calls, *closes]
            locks = prober.build_locks(rows, step.phase, step.plan)
            extra = prober.executor_index_locks(locks, rows, step.plan) \
                if step.phase is PlanPhase.GENERIC_REUSE else ()
            execution = Execution(number, step.phase, step.plan_type, locks, step.plan, extra)
            out.append(_with_execution_locks(prober, execution, exec_probe, calls, rows,
                                             cost_decided=step.cost_decided, backend=backend)[0])
            first_only = any(isinstance(c, ExtraLock) and (c.once_key or c.first_execution_only) for c in calls)
            if number >= planned and not (number == 1 and first_only):
                break
    finally:
        statement.close()
        _release_execution(exec_probe)
    return tuple(out)


# -- footprints derived from the catalog, for a role that may not EXPLAIN (lockscope.privileges) ---------------------

#: Executions before the plan cache builds a generic plan under ``auto`` (``plancache.c choose_custom_plan``: five
#: custom plans first).
_CUSTOM_PLANS_FIRST = 5


def _derived_phases(protocol: str, mode: PlanCacheMode, executions: int, keeps_custom: bool) -> list[PlanPhase]:
    """The plan-cache phase of executions 1..N (``plancache.c GetCachedPlan``): the simple protocol plans once
    (every execution alike); ``auto`` plans five custom plans, builds the generic plan at the sixth, then reuses it,
    or plans custom plans again when ``keeps_custom`` (a cost choice the caller says it assumed);
    ``force_custom_plan`` plans every time; ``force_generic_plan`` builds at the first and reuses after."""
    if protocol != "prepared":
        return [PlanPhase.SIMPLE]
    out: list[PlanPhase] = []
    for n in range(1, executions + 1):
        if mode is PlanCacheMode.FORCE_CUSTOM_PLAN or (mode is PlanCacheMode.AUTO and n <= _CUSTOM_PLANS_FIRST) or \
                (mode is PlanCacheMode.AUTO and keeps_custom and n > _CUSTOM_PLANS_FIRST + 1):
            out.append(PlanPhase.CUSTOM)
        elif out and out[-1] in (PlanPhase.GENERIC_BUILD, PlanPhase.GENERIC_REUSE):
            out.append(PlanPhase.GENERIC_REUSE)
        else:
            out.append(PlanPhase.GENERIC_BUILD)
    return out


def _derive_statement(prober: _Prober, protocol: str, params: Sequence[str], mode: PlanCacheMode, executions: int,
                      gaps: Sequence[PrivilegeGap], helper_gaps: Sequence[PrivilegeGap] = ()) -> tuple[Execution, ...]:
    """Executions 1..N derived from the catalog, for a role whose EXPLAIN the server would refuse: the query tree
    built on the client and its lock steps (:func:`lockscope.acquisition.statement_lock_steps`: the relations, all
    their indexes, partitions and their indexes), less the partitions plan-time pruning removes where the catalog
    decides it (:func:`lockscope.derived.plan_time_pruning`), fast-path flags from the capacity model. Nothing is
    measured; what the catalog cannot decide is each execution's ``unknowns``.

    :param helper_gaps: what the EXPLAIN helper's owner lacks, when the helper is there but falls short (said).
    :raises StatementError: 42501, with the GRANTs, when not even the query tree can be built.
    """
    session = prober.session
    grants = privileges.grants_text(gaps)
    if helper_gaps:
        grants += f" (or, for the EXPLAIN helper's owner: {privileges.grants_text(helper_gaps)})"
    prober.load_tree()
    if prober.tree is None:
        raise StatementError(f"42501: permission denied: EXPLAIN needs {grants} (or the EXPLAIN helper, "
                             f"docs/privileges.md), and the footprint cannot be derived from the catalog either "
                             f"({prober.order_note})", sqlstate="42501")
    raw = raw_statement(prober.checked)
    common: list[str] = []
    if prober.checked.kind != "SELECT":
        common.append("what a real execution of this write adds (routed partitions, foreign-key checks and actions, "
                      f"triggers, sequences) is not derived without the privileges its EXPLAIN needs: {grants}")
    called = querytree.function_names(raw)
    if called:
        user_functions = [r.name for r in session.query_rows("user_functions", UserFunctionRow, [called])]
        if user_functions:
            common.append(f"the relations function(s) {', '.join(user_functions[:3])} lock when the planner inlines "
                          "or runs them are not derived")
    database_oid = session.query_rows("database_oid", DatabaseOidRow)[0].database_oid
    pruning = {generic: derived.plan_time_pruning(session, raw, prober.order.rows, None if generic else list(params))
               for generic in (False, True)}
    # under auto, a generic plan that keeps partitions the custom plans prune costs more than they do, and the plan
    # cache goes on planning custom plans (plancache.c choose_custom_plan compares estimated costs)
    keeps_custom = pruning[True].pruned < pruning[False].pruned
    out: list[Execution] = []
    for number, phase in enumerate(_derived_phases(protocol, mode, executions, keeps_custom), start=1):
        generic = phase in (PlanPhase.GENERIC_BUILD, PlanPhase.GENERIC_REUSE)
        cut = pruning[generic]
        steps = [st for st in prober._steps(phase, None, {}, []) if st.relation_oid not in cut.pruned]
        wanted = list(dict.fromkeys((st.relation_oid, LockMode(st.mode)) for st in steps))
        rule: dict[tuple[int, LockMode], str] = {}
        for st in steps:
            rule.setdefault((st.relation_oid, LockMode(st.mode)), st.rule)
        requests = [LockRequest(oid, m) for oid, m in wanted]
        predicted = prober.model.predict(requests)
        assumed = prober.assumed.predict(requests) if prober.assumed else [None] * len(requests)
        infos = prober._infos([oid for oid, _ in wanted])
        locks = tuple(prober._lock(oid, infos, m, pred, pred, assume, n, rule[(oid, m)], database_oid,
                                   LockRole.OTHER)
                      for n, ((oid, m), pred, assume) in enumerate(zip(wanted, predicted, assumed, strict=True)))
        unknowns = list(common)
        notes: list[str] = []
        if phase is PlanPhase.GENERIC_REUSE:
            unknowns.append("the indexes a reused generic plan's scans lock at executor start need its plan "
                            "(EXPLAIN): not counted")
        if mode is PlanCacheMode.AUTO and protocol == "prepared" and number > _CUSTOM_PLANS_FIRST + 1:
            notes.append("from execution 7 the plan cache " + (
                "plans custom plans again: the generic plan keeps partitions they prune, so it costs more"
                if keeps_custom else "reuses the generic plan") +
                " (plancache.c choose_custom_plan decides on estimated costs, which need the planner)")
        plan_type = None if phase is PlanPhase.SIMPLE else "generic" if generic else "custom"
        out.append(Execution(number, phase, plan_type, locks, notes=tuple(notes), unknowns=tuple(unknowns),
                             at_most=cut.undecided))
    return tuple(out)


# -- execution locks: what a real execution adds to what EXPLAIN locks (lockscope.execlocks) -----------------------

@dataclass
class _ExecProbe:
    """A statement's execution model (:func:`lockscope.execlocks.derive_execution`), the queries its execution
    runs, each a :class:`_QueryProbe` with its own plan-cache history, by key, and what the backend built once
    (:attr:`ExtraLock.once_key`)."""

    model: ExecutionModel
    spi: dict[str, _QueryProbe]
    backend: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class _SpiResult:
    """What one call took: its phase, its locks in modelled order (all of them: the caller skips those held), a
    reused plan's index locks."""

    call: SpiCall
    phase: PlanPhase
    ordered: list[tuple[RelationLockRow, str]]
    executor_indexes: list[tuple[int, LockMode]]
    cost_decided: bool = False


def _prepare_execution(prober: _Prober, params: Sequence[str], mode: PlanCacheMode,
                       spi: dict[str, _QueryProbe] | None = None, *, backend: set[str] | None = None,
                       overlay: execlocks.RowOverlay | None = None, read_rows: bool = True) -> _ExecProbe | None:
    """Derive the statement's execution locks (:func:`lockscope.execlocks.derive_execution`) and PREPARE the
    steppers of the queries its execution runs (outside any probe transaction: the catalog reads and key lookups
    are their own transactions, each PREPARE a rolled-back one). None when the execution adds nothing.

    :param mode: the plan_cache_mode the executions run with (it governs these queries' plans too).
    :param spi: queries already prepared by an earlier execution, by key: kept, with their plan-cache history.
    :param backend: what the backend already built once (relcache entries: :attr:`ExtraLock.once_key`), shared by
        every statement and execution of one measurement.
    :param overlay: the rows the transaction's earlier statements wrote.
    :param read_rows: False: no key lookup (rows that matter make the execution unknown).
    :raises DatabaseError: a catalog read or a key lookup failed.
    """
    tree = prober.tree
    raw = raw_statement(prober.checked)
    if tree is not None:
        target = tree.rtable[tree.result_relation - 1].relid if tree.result_relation > 0 else None
    else:  # a shape the client-side analyser does not build: the target as the parser names it
        target = execlocks.target_relation(prober.session, raw)
    model = execlocks.derive_execution(prober.session, prober.checked, params, target, raw, overlay=overlay,
                                       read_rows=read_rows)
    if target is None and not model.events and not model.unknowns:
        return None  # a SELECT whose execution adds nothing
    spi = {} if spi is None else spi
    dropped: dict[str, str] = {}
    try:
        for query in model.spi_queries:
            if query.key not in spi:
                reason = _prepare_spi(prober, query, mode, spi)
                if reason:
                    dropped[query.key] = f"{query.detail}: not probed ({reason})"
    except BaseException:
        _release_execution(_ExecProbe(model, spi))
        raise
    if dropped:  # a trigger's statement lockscope could not prepare: its locks are missing, said as unknown
        model = dataclasses.replace(
            model, events=tuple(e for e in model.events if not (isinstance(e, SpiCall) and e.query.key in dropped)),
            unknowns=model.unknowns + tuple(dropped.values()))
    return _ExecProbe(model, spi, backend if backend is not None else set())


def _prepare_spi(prober: _Prober, query: SpiQuery, mode: PlanCacheMode, spi: dict[str, _QueryProbe]) -> str:
    """PREPARE one query's stepper (after the same client-side checks as the user's statement, so that the server
    never refuses it: nothing in its log); returns why it was not, for a trigger's statement the checks refuse (""
    when prepared).

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
    if query.one_shot:  # planned at every call with its values: EXPLAIN of the text with them bound
        spi[query.key] = _QueryProbe(sub, prepared=False, has_params=bool(query.param_types), mode=mode)
        return ""
    name = _statement_name()
    types = " (" + ", ".join(query.param_types) + ")" if query.param_types else ""
    with session.probe_transaction(paced=False):
        session.run_user_text(f"PREPARE {OWN_QUERY_MARKER} {name}{types} AS {query.text}")
    spi[query.key] = _QueryProbe(sub, prepared=True, has_params=bool(query.param_types), mode=mode, name=name,
                                 types=types)
    return ""


def _release_execution(probe: _ExecProbe | None) -> None:
    """DEALLOCATE the steppers and measurers (prepared statements outlive the probe transactions)."""
    for qp in (probe.spi.values() if probe is not None else ()):
        qp.close()


def _spi_read_bound(probes: Sequence[_ExecProbe | None]) -> int:
    """At most how many pg_locks reads the queries these executions run make (count: each query's
    :meth:`_QueryProbe.read_bound` over its calls' values)."""
    calls: dict[str, list[tuple[str | None, ...]]] = {}
    spi: dict[str, _QueryProbe] = {}
    for probe in probes:
        if probe is None:
            continue
        for e in probe.model.events:
            if isinstance(e, SpiCall) and e.query.key in probe.spi:
                calls.setdefault(e.query.key, []).append(e.values)
                spi[e.query.key] = probe.spi[e.query.key]
    return sum(spi[key].read_bound(values) for key, values in calls.items())


def _qual_chain(session: Session, relation_oid: int, backend: set[str], stage: execlocks.Stage,
                after: int = 0) -> list[ExtraLock]:
    """The locks of building a partition's constraint (``partcache.c generate_partition_qual``): its parent
    ``AccessShareLock``, and the parent's own constraint first when it is a partition too; each built once per
    backend (the relcache keeps it: ``backend`` says which were)."""
    facts = session.query_rows("exec_target", ExecTargetRow, [relation_oid])[0]
    chain = [relation_oid, *facts.ancestor_oids]
    out: list[ExtraLock] = []
    for child, parent in itertools.pairwise(chain):
        key = f"partqual:{child}"
        if key not in backend:
            backend.add(key)
            out.append(ExtraLock(parent, LockMode.ACCESS_SHARE, LockSource.PARTITION_CONSTRAINT, facts.relation, stage,
                                 row=after, once_key=key))
    return out


def _planner_quals(prober: _Prober, phase: PlanPhase, rows: Sequence[RelationLockRow],
                   backend: set[str]) -> list[ExtraLock]:
    """Planning builds the partition constraint of every partitioned table that is itself a partition and survives
    pruning (``plancat.c set_relation_partition_info`` → ``set_baserel_partition_constraint`` →
    ``partcache.c RelationGetPartitionQual``): its ancestors ``AccessShareLock`` the first time in a backend. The
    probe backend has built them by the time a phase is measured (the call was stepped first), so they are modelled
    here, once per backend as the server takes them; a reused plan plans nothing."""
    if phase is PlanPhase.GENERIC_REUSE:
        return []
    infos = prober._infos([r.relation_oid for r in rows])
    out: list[ExtraLock] = []
    for oid in dict.fromkeys(r.relation_oid for r in rows):
        info = infos.get(oid)
        if info is not None and info.relkind == "p" and info.relispartition:
            out += _qual_chain(prober.session, oid, backend, execlocks.Stage.PLANNER, after=oid)
    return out


def _executor_start_indexes(prober: _Prober, query: _QueryProbe, step: _Step,
                            rows: Sequence[RelationLockRow]) -> tuple[list[ExtraLock], list[ExtraLock]]:
    """PG 13 only: an UPDATE of a partitioned table opens every index of each result partition at executor start
    (``nodeModifyTable.c ExecInitModifyTable`` → ``execIndexing.c ExecOpenIndices``, ``RowExclusiveLock``), before
    the partition's scan, and closes them at ``ExecutorEnd`` (``ExecCloseIndices`` releases them): local-lock hits
    after planning, but a reused generic plan planned nothing, so they take fast-path slots while it runs.

    :return: (the opens, in the plan's order of result partitions; their releases).
    """
    if prober.session.facts.server_version_num >= PG14 or prober.checked.kind not in ("UPDATE", "SELECT"):
        return [], []
    targets = set(execlocks.update_targets(prober.session, raw_statement(prober.checked)))
    if not targets:
        return [], []
    executed = rows
    if step.also_custom:
        executed = query.cache.get(("custom", step.plan.pruning_signature), rows)
    ordered = prober.order_rows(list(executed), step.phase, step.plan)
    infos = prober._infos([r.relation_oid for r, _ in ordered])
    opens: list[ExtraLock] = []
    for r, _ in ordered:
        info = infos.get(r.relation_oid)
        if r.mode is not LockMode.ROW_EXCLUSIVE or info is None or not info.relispartition or info.relkind != "r":
            continue
        facts = prober.session.query_rows("exec_target", ExecTargetRow, [r.relation_oid])[0]
        if targets & set(facts.ancestor_oids):
            opens += [ExtraLock(i, LockMode.ROW_EXCLUSIVE, LockSource.TARGET_INDEX, facts.relation,
                                execlocks.Stage.EXECUTOR_START) for i in facts.index_oids]
    return opens, [dataclasses.replace(o, stage=execlocks.Stage.END, release=True) for o in opens]


def _executor_start_quals(prober: _Prober, query: _QueryProbe, step: _Step, rows: Sequence[RelationLockRow],
                          backend: set[str]) -> list[ExtraLock]:
    """PG 13 only: executor start reads the partition constraint of every result relation of the plan it runs
    (``execMain.c InitResultRelInfo``: ``RelationGetPartitionQual``; removed by commit 2000b6c10a, PG 14), which
    locks each partition's parent ``AccessShareLock`` the first time in a backend (``partcache.c
    generate_partition_qual``). The result relations are the partitions the executed plan locks
    ``RowExclusiveLock``: the custom plan's when a built generic plan lost to it.
    """
    if prober.session.facts.server_version_num >= PG14 or (
            prober.checked.kind not in ("INSERT", "UPDATE", "DELETE", "MERGE")
            and not execlocks.dml_ctes(raw_statement(prober.checked))):  # a SELECT's data-modifying WITH queries
        return []
    executed = rows
    if step.also_custom:
        executed = query.cache.get(("custom", step.plan.pruning_signature), rows)
    infos = prober._infos([r.relation_oid for r in executed])
    out: list[ExtraLock] = []
    for r in executed:
        info = infos.get(r.relation_oid)
        if r.mode is LockMode.ROW_EXCLUSIVE and info is not None and info.relispartition and info.relkind == "r":
            out += _qual_chain(prober.session, r.relation_oid, backend, execlocks.Stage.EXECUTOR_START)
    return out


def _step_spi_calls(probe: _ExecProbe, number: int) -> list[ExtraLock | tuple[SpiCall, _Step]]:
    """Inside the execution's stepping transaction, after the statement's own step: each call's stepper run where
    the server would run it (its plan cache advances per call, ``ri_triggers.c ri_PerformCheck`` →
    ``SPI_execute_snapshot`` → ``GetCachedPlan``); the session's ``plan_cache_mode`` governs these queries as any
    prepared statement. The modelled locks pass through, in order."""
    out: list[ExtraLock | tuple[SpiCall, _Step]] = []
    for event in probe.model.events:
        if isinstance(event, ExtraLock):  # once-per-backend locks are judged in order when resolved
            if number == 1 or not event.first_execution_only:
                out.append(event)
            continue
        out.append((event, probe.spi[event.query.key].step(event.values)))
    return out


def _resolve_spi_calls(probe: _ExecProbe,
                       calls: Sequence[ExtraLock | tuple[SpiCall, _Step]]) -> list[ExtraLock | _SpiResult]:
    """Each stepped call's locks from its phase's measurement (measured now when first met, outside any other
    probe), in modelled order; a reused plan's index locks beside them."""
    out: list[ExtraLock | _SpiResult] = []
    for item in calls:
        if isinstance(item, ExtraLock):
            if item.once_key and item.stage not in (execlocks.Stage.PLANNER, execlocks.Stage.EXECUTOR_START):
                if item.once_key in probe.backend:  # (planning's and executor start's are judged by _qual_chain)
                    continue  # built earlier in the backend (a partition's constraint the planner built first)
                probe.backend.add(item.once_key)
            out.append(item)
            continue
        call, step = item
        qp = probe.spi[call.query.key]
        rows = qp.lock_rows(step)
        ordered = qp.prober.order_rows(rows, step.phase, step.plan)
        reuse = qp.prober.executor_index_requests(qp.prober.step_modes(step.phase, step.plan), step.plan) \
            if step.phase is PlanPhase.GENERIC_REUSE else []
        for q in reversed(_planner_quals(qp.prober, step.phase, rows, probe.backend)):  # after its table opens
            at = _after_table(qp.prober, [r.relation_oid for r, _ in ordered], q.row)
            database = next((r.database_oid for r, _ in ordered if r.database_oid), 0)
            ordered.insert(at, (RelationLockRow(q.relation_oid, q.mode, True, False, database), "planner"))
        for q in _executor_start_quals(qp.prober, qp, step, rows, probe.backend):  # PG 13: its result relations'
            database = next((r.database_oid for r, _ in ordered if r.database_oid), 0)
            ordered.append((RelationLockRow(q.relation_oid, q.mode, True, False, database), "executor start"))
        out.append(_SpiResult(call, step.phase, ordered, reuse, step.cost_decided))
    return out


def _after_table(prober: _Prober, order: Sequence[int], table: int | None) -> int:
    """Where the planner builds a sub-partitioned table's partition constraint in ``order`` (relation OIDs in
    acquisition order): after the table and the indexes it opens right after it (``plancat.c get_relation_info``:
    the index list first, ``set_relation_partition_info`` last); at the end when ``table`` is not there."""
    at = next((n + 1 for n, oid in enumerate(order) if oid == table), None)
    if at is None:
        return len(order)
    infos = prober._infos(list(order[at:]))
    while at < len(order) and (info := infos.get(order[at])) is not None and info.relkind in ("i", "I") \
            and info.parent_oid == table:
        at += 1
    return at


def _grown_unknowns(prober: _Prober, grown: set[int], what: str, insert: bool,
                    rows: Sequence[RelationLockRow], *, reuse: bool = False) -> list[str]:
    """Said when a plan was chosen on estimated costs that read the size of a relation this workload gives its
    first page (:attr:`ExecutionModel.grown`): the server's estimates see the page, the probe's do not
    (``plancat.c estimate_rel_size``): the plan cache's choice between its generic and a custom plan
    (``plancache.c choose_custom_plan``), or, for a reused generic plan (``reuse``), its shape and so the indexes
    its scans open (its executor index locks). An INSERT's target is written, not read: its size costs nothing."""
    read = [r.relation_oid for r in rows if r.relation_oid in grown
            and not (insert and r.mode is LockMode.ROW_EXCLUSIVE)]
    if not read:
        return []
    infos = prober._infos(read)
    names = ", ".join(sorted({infos[o].relation if o in infos else str(o) for o in read}))
    choice = "which indexes a reused generic plan's scans open" if reuse else \
        "whether the plan cache picks its generic or a custom plan"
    return [f"{what}: {choice} depends on estimated costs that read the size of {names}, which this workload "
            "writes into while it was empty (its first page stays after a rollback)"]


def _with_execution_locks(prober: _Prober, execution: Execution, probe: _ExecProbe | None,
                          calls: Sequence[ExtraLock | tuple[SpiCall, _Step]], rows: Sequence[RelationLockRow],
                          prior: Sequence[LockRequest] = (), *, cost_decided: bool = False,
                          backend: set[str] | None = None) -> tuple[Execution, list[LockRequest]]:
    """``execution`` with its execution locks: the calls' locks (:func:`_resolve_spi_calls`) and the modelled ones
    placed in order after the statement's locks, every predicted fast-path flag simulated after ``prior`` (the
    locks the transaction's earlier statements took and released, in order) with what the backend holds meanwhile
    (the target's indexes while rows are written: ``capacity.simulate_fast_path``); a lock already held is a
    local-lock hit (``lock.c LockAcquireExtended``) and adds nothing.

    :param rows: the statement's own relation locks as measured.
    :param cost_decided: the statement's own plan was chosen on cost (:attr:`_Step.cost_decided`).
    :param backend: what the server built or grew before this execution (``grown:<oid>`` entries: relations given
        their first page, :func:`_grown_unknowns`); this execution's growth is added.
    :return: the execution, and its lock requests (acquisitions and releases) in order, for the next statement.
    """
    def early(c: ExtraLock | tuple[SpiCall, _Step], stage: execlocks.Stage) -> bool:
        return isinstance(c, ExtraLock) and c.stage is stage and not c.release
    planning = [c for c in calls if isinstance(c, ExtraLock) and early(c, execlocks.Stage.PLANNER)]
    starting = [c for c in calls if isinstance(c, ExtraLock) and early(c, execlocks.Stage.EXECUTOR_START)]
    calls = [c for c in calls if not (early(c, execlocks.Stage.PLANNER) or early(c, execlocks.Stage.EXECUTOR_START))]
    events = _resolve_spi_calls(probe, calls) if probe is not None else \
        [c for c in calls if isinstance(c, ExtraLock)]
    own = execution.locks + execution.executor_index_locks
    own_requests = [LockRequest(lk.relation_oid, lk.mode, lk.relation_oid in _shared(rows)) for lk in own]
    # each planning constraint right after the planner opens its sub-partitioned table (``row``), what executor
    # start takes after the plan's own locks and before its scans' indexes: a tag per request
    tags: list[ExtraLock | None] = [None] * len(own_requests)
    for q in reversed(planning):
        at = _after_table(prober, [r.relation_oid for r in own_requests], q.row)
        own_requests.insert(at, LockRequest(q.relation_oid, q.mode))
        tags.insert(at, q)
    at = len(own_requests) - len(execution.executor_index_locks)
    own_requests[at:at] = [LockRequest(q.relation_oid, q.mode) for q in starting]
    tags[at:at] = starting
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
    n_locks = len(execution.locks)
    in_context: list[RelationLock] = list(own)
    planning_flags: list[tuple[LockRequest, bool, bool | None, ExtraLock]] = []
    predicted: list[bool] = []
    assumed: list[bool | None] = []
    if prior or planning or starting or items:  # else the statement's own locks alone: flagged as build_locks did
        predicted_all = prober.model.predict(requests)[len(prior):]
        assumed_all: list[bool | None] = list(prober.assumed.predict(requests)[len(prior):]) if prober.assumed \
            else [None] * (len(requests) - len(prior))
        own_at = [n for n, t in enumerate(tags) if t is None]
        planning_flags = [(own_requests[n], predicted_all[n], assumed_all[n], t) for n, t in enumerate(tags)
                          if t is not None]
        predicted = [predicted_all[n] for n in own_at] + list(predicted_all[len(own_requests):])
        assumed = [assumed_all[n] for n in own_at] + list(assumed_all[len(own_requests):])
        # a reused plan's executor index locks are modelled, not measured: their flags are the ones predicted here,
        # after what executor start took before them
        in_context = [lk if lk.predicted_fastpath == p and lk.assumed_fastpath == a and
                      (n < n_locks or lk.fastpath == p)
                      else dataclasses.replace(lk, predicted_fastpath=p, assumed_fastpath=a,
                                               fastpath=p if n >= n_locks else lk.fastpath)
                      for n, (lk, p, a) in enumerate(zip(own, predicted, assumed, strict=False))]
    seen = _held(prior) | {(lk.relation_oid, lk.mode) for lk in own}
    database_oid = next((r.database_oid for r in rows if r.database_oid), 0)
    infos = prober._infos([req.relation_oid for req, *_ in items] + [q.relation_oid for q in planning])
    locks: list[RelationLock] = []
    for req, pred, assume, q in planning_flags:
        key = (req.relation_oid, req.mode)
        if key in seen or q.source is LockSource.TARGET_INDEX:
            continue  # held already, or released at the end of the statement
        seen.add(key)
        rule = "planner" if q.stage is execlocks.Stage.PLANNER else "executor start"
        lock = prober._lock(req.relation_oid, infos, req.mode, pred, pred, assume, len(own) + len(locks), rule,
                            database_oid, LockRole.OTHER)
        locks.append(dataclasses.replace(lock, source=q.source, detail=q.detail))
    for (req, source, detail, rule), pred, assume in zip(items, predicted[len(own):], assumed[len(own):],
                                                        strict=True):
        key = (req.relation_oid, req.mode)
        if req.release or source is LockSource.TARGET_INDEX or key in seen:
            continue  # released at the end of the statement, or a lock already held (a local-lock hit)
        seen.add(key)
        lock = prober._lock(req.relation_oid, infos, req.mode, pred, pred, assume, len(own) + len(locks), rule,
                            0 if req.shared_catalog else database_oid, LockRole.OTHER)
        locks.append(dataclasses.replace(lock, source=source, detail=detail))
    model = probe.model if probe is not None else None
    unknowns = list(model.unknowns) if model is not None else []
    if backend is not None:
        grown_before = {int(k[6:]) for k in backend if k.startswith("grown:")}
        grown_now = grown_before | (set(model.grown) if model is not None else set())
        if cost_decided:
            unknowns += _grown_unknowns(prober, grown_before, "the statement", prober.checked.kind == "INSERT", rows)
        if execution.phase is PlanPhase.GENERIC_REUSE:
            unknowns += _grown_unknowns(prober, grown_before, "the statement", prober.checked.kind == "INSERT", rows,
                                        reuse=True)
        for event in events:
            if not isinstance(event, _SpiResult):
                continue
            query, ordered = event.call.query, [r for r, _ in event.ordered]
            verb = query.text.lstrip()[:6].upper()
            if event.phase is PlanPhase.GENERIC_REUSE:
                unknowns += _grown_unknowns(prober, grown_now, query.detail, verb == "INSERT", ordered, reuse=True)
                written = [r.relation_oid for r in ordered if r.mode is LockMode.ROW_EXCLUSIVE]
                if prober.session.facts.server_version_num < PG14 and verb == "UPDATE" and written \
                        and any(i.relispartition for i in prober._infos(written).values()):
                    unknowns.append(f"{query.detail}: PG 13 opens every index of each partition a reused UPDATE plan "
                                    "writes when its executor starts (nodeModifyTable.c ExecInitModifyTable); "
                                    "lockscope does not place those for a query run inside the statement, so the "
                                    "fast-path flags after it are not derived")
            if event.cost_decided:
                unknowns += _grown_unknowns(prober, grown_now, query.detail, verb == "INSERT", ordered)
        backend |= {f"grown:{oid}" for oid in grown_now}
    done = dataclasses.replace(execution, locks=tuple(in_context[:n_locks]),
                               executor_index_locks=tuple(in_context[n_locks:]), execution_locks=tuple(locks),
                               query_phases=tuple(phases), notes=model.notes if model is not None else (),
                               unknowns=tuple(dict.fromkeys(unknowns)))
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
    """One statement of a transaction being probed execution after execution (:mod:`lockscope.transaction`): the
    statement as a plan cache (prepared protocol) or a text planned each time, and the queries its execution runs,
    each with its own history, as the server keeps them per backend.

    Use :func:`open_transaction_probes`; per execution, :meth:`prepare` outside any probe transaction, :meth:`step`
    inside the execution's stepping transaction, then :meth:`run` outside it.
    """

    def __init__(self, session: Session, text: str, protocol: str, mode: PlanCacheMode,
                 assume: CapacityModel | None, read_rows: bool = True,
                 spi: dict[str, _QueryProbe] | None = None) -> None:
        self.prober = _Prober(session, check_statement(text), assume)
        self.read_rows = read_rows
        self.protocol = protocol
        self.mode = mode
        self.query: _QueryProbe | None = None
        # the queries executions run, one plan cache each per backend: shared by the transaction's statements
        self.spi: dict[str, _QueryProbe] = spi if spi is not None else {}
        self.exec_probe: _ExecProbe | None = None
        self.exec_probes: dict[int, _ExecProbe | None] = {}
        self.backend: set[str] = set()
        self._stepped: tuple[_Step, list[ExtraLock | tuple[SpiCall, _Step]]] | None = None

    def open(self, params: Sequence[str]) -> None:
        """Build the query tree (refusing an unknown relation or an untypable parameter) and, with the prepared
        protocol, PREPARE the statement.

        :raises StatementError: from the server or the client-side checks.
        """
        self.query = _open_statement(self.prober, self.protocol, self.mode, params)

    def prepare(self, number: int, params: Sequence[str], overlay: execlocks.RowOverlay | None = None,
                backend: set[str] | None = None) -> None:
        """Derive execution ``number``'s execution locks for its values (catalog reads and key lookups, outside
        any probe transaction) and PREPARE the steppers of queries first met.

        :param overlay: the rows the execution's earlier statements wrote (this one's are added).
        :param backend: what the backend built once, shared by the measurement's statements and executions.
        """
        if backend is not None:
            self.backend = backend
        self.exec_probes[number] = _prepare_execution(self.prober, params, self.mode, self.spi,
                                                      backend=self.backend, overlay=overlay,
                                                      read_rows=self.read_rows)

    def read_bound(self, params: Sequence[Sequence[str]]) -> int:
        """At most how many pg_locks reads the prepared executions make (count), ``params`` each one's values."""
        assert self.query is not None
        return self.query.read_bound([tuple(p) for p in params]) + _spi_read_bound(list(self.exec_probes.values()))

    def step(self, number: int, params: Sequence[str]) -> None:
        """Inside the execution's stepping transaction: the statement's call and its queries' calls, each through
        its plan cache (no pg_locks read)."""
        assert self.query is not None
        self.exec_probe = self.exec_probes.get(number)
        step = self.query.step(tuple(params))
        calls = _step_spi_calls(self.exec_probe, number) if self.exec_probe is not None else []
        self._stepped = (step, calls)

    def run(self, number: int, history: Sequence[LockRequest]) -> tuple[Execution, list[LockRequest]]:
        """After the stepping transaction: the stepped calls' locks (measured when first met), the statement's new
        ones (not held after ``history``, the transaction's earlier lock requests) ordered and flagged, then its
        execution locks.

        :return: the statement's execution and its lock requests in order.
        """
        assert self.query is not None and self._stepped is not None
        step, calls = self._stepped
        prober = self.prober
        rows = self.query.lock_rows(step)
        opens, closes = _executor_start_indexes(prober, self.query, step, rows)
        calls = [*_planner_quals(prober, step.phase, rows, self.backend),
                 *_executor_start_quals(prober, self.query, step, rows, self.backend), *opens, *calls, *closes]
        before = _held(history)
        new = [r for r in rows if (r.relation_oid, r.mode) not in before]
        locks = prober.build_locks(new, step.phase, step.plan)
        extra = prober.executor_index_locks(locks, rows, step.plan) if step.phase is PlanPhase.GENERIC_REUSE else ()
        return _with_execution_locks(prober, Execution(number, step.phase, step.plan_type, locks, step.plan, extra),
                                     self.exec_probe, calls, rows, history, cost_decided=step.cost_decided,
                                     backend=self.backend)

    def close(self) -> None:
        """DEALLOCATE the statement's prepared statements (the shared queries' are the caller's to release)."""
        if self.query is not None:
            self.query.close()
            self.query = None


@contextlib.contextmanager
def open_transaction_probes(session: Session, statements: Sequence[tuple[str, Sequence[str]]], *,
                            protocol: str, mode: PlanCacheMode, assume: CapacityModel | None,
                            read_rows: bool = True) -> Iterator[list[TransactionProbe]]:
    """A :class:`TransactionProbe` per statement ``(text, first execution's values)``, opened; all closed
    (deallocated) on exit.

    :raises BadInputError: an unknown protocol.
    :raises StatementError: a statement the server or the client-side checks refuse.
    """
    if protocol not in PROTOCOLS:
        raise BadInputError(f"unknown protocol {protocol!r}: use simple or prepared")
    probes: list[TransactionProbe] = []
    spi: dict[str, _QueryProbe] = {}  # one plan cache per query per backend, whichever statement runs it
    try:
        for text, params in statements:
            probe = TransactionProbe(session, text, protocol, mode, assume, read_rows, spi)
            probes.append(probe)
            probe.open(params)
        yield probes
    finally:
        for probe in probes:
            probe.close()
        _release_execution(_ExecProbe(execlocks.ExecutionModel(), spi))



def measure_generic_plan(session: Session, sql: str, *, assume: CapacityModel | None = None,
                         helper_signature: str | None = privileges.HELPER_SIGNATURE) -> Footprint:
    """The planner locks of building the statement's generic plan, without parameter values.

    For ``$1..$n`` texts such as pg_stat_statements keeps. PG 16+: ``EXPLAIN (GENERIC_PLAN) <statement>`` (commit
    3c05284d83; it bypasses the plan cache and takes the locks of building a generic plan: every partition not
    pruned by constants and every index, ``plancat.c get_relation_info``; sent with the simple query protocol,
    which leaves ``$n`` unbound, and only after pglast verified a single statement). PG 13-15: ``PREPARE``
    (parameter types
    inferred by the server) and one ``EXPLAIN EXECUTE name(NULL, ...)`` with ``plan_cache_mode =
    force_generic_plan``, which builds the generic plan (``plancache.c BuildCachedPlan``) with the same locks;
    EXPLAIN without ANALYZE never runs the statement. Both in a READ ONLY transaction that is rolled back.

    A role that may not EXPLAIN the statement goes through the EXPLAIN helper, or the footprint is derived from the
    catalog (:func:`measure_footprint`'s ``helper_signature``; ``source`` says which).

    :return: a :class:`Footprint` with ``protocol`` ``generic_plan`` and one execution of phase ``generic-build``.
    :raises UnsupportedStatementError: utility, several or no statements.
    :raises StatementError: the server rejected the statement (e.g. a parameter type it cannot infer).
    :raises LockBlockedError: another session holds a conflicting lock longer than lock_timeout.
    """
    checked = check_statement(sql)
    prober = _Prober(session, checked, assume)
    facts = session.facts
    access = explain_access(session, checked, helper_signature)
    if access.source is FootprintSource.DERIVED:
        prober.load_tree()
        _check_param_types(prober)
        executions = _derive_statement(prober, "prepared", [], PlanCacheMode.FORCE_GENERIC_PLAN, 1, access.gaps,
                                       access.helper_gaps)
        locks, plan = executions[0].locks, executions[0].plan
    else:
        with access.explaining(session):
            locks, plan = _generic_plan_locks(prober)
    return Footprint(
        statement=checked.text,
        protocol="generic_plan",
        plan_cache_mode=PlanCacheMode.FORCE_GENERIC_PLAN,
        params=(),
        server_version_num=facts.server_version_num,
        server_version=facts.server_version,
        capacity=facts.capacity,
        executions=(Execution(1, PlanPhase.GENERIC_BUILD, "generic", locks, plan,
                              at_most=executions[0].at_most if access.source is FootprintSource.DERIVED else ()),),
        assumed=assume,
        order_note=prober.order_note,
        source=access.source,
        privilege_gaps=access.gaps,
        helper=access.helper.signature if access.helper else "",
        helper_gaps=access.helper_gaps,
    )


def _generic_plan_locks(prober: _Prober) -> tuple[tuple[RelationLock, ...], ExplainedPlan]:
    """:func:`measure_generic_plan`'s probe: the generic plan's locks, measured, and its plan."""
    session, checked, facts = prober.session, prober.checked, prober.session.facts
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
    return locks, plan
