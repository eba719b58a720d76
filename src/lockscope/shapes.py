"""Statement shapes: a statement's relation locks as the models see them (used by audit, forecast and diagnose).

A :class:`StatementShape` is one statement's steady-state transaction: its relation locks in acquisition order,
each a :class:`LockSite` with its fast-path flag and, for main-table locks, its lock partition
(:func:`lockscope.lockpart.lock_partition` of ``(database OID, relation OID)``; database 0 for a shared catalog,
``pg_class.relisshared``, as lmgr.c ``SetLocktagRelationOid`` builds the tag), how often it runs, and its own
planning and execution cost when known. Shapes come from a measured footprint (:func:`shape_from_footprint`), a
transaction's footprint (:func:`shape_from_transaction`: one shape whose locks accumulate) or an audited plan
(:func:`lockscope.workload.probes.shape_from_plan`); :func:`apply_what_if` changes them (dropped indexes, another
fast-path capacity: the flags predicted again in order, lock.c ``LockAcquireExtended``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from .capacity import CapacityModel, LockRequest
from .lockpart import NUM_LOCK_PARTITIONS, lock_partition
from .vocab import LockMode, LockRole, PlanPhase

if TYPE_CHECKING:
    from .footprint import Footprint
    from .transaction import TransactionFootprint

__all__ = [
    "LockSite",
    "StatementShape",
    "apply_what_if",
    "shape_from_footprint",
    "shape_from_transaction",
    "site",
]

#: Relations of the base statement the calibration's base CPU already plans (a table and its primary key).
BASE_PLANNED_RELATIONS = 2


@dataclass(frozen=True)
class LockSite:
    """One relation lock of a statement's steady-state transaction.

    :ivar relation_oid: pg_class OID.
    :ivar relation: schema-qualified name (or the OID as text when unknown).
    :ivar role: ``table``, ``index``, ... (:class:`lockscope.vocab.LockRole`).
    :ivar mode: lock mode as pg_locks spells it.
    :ivar fastpath: True = fast-path slot, False = main lock table.
    :ivar database_oid: the LOCKTAG's database: the current database's OID, 0 for a shared catalog.
    :ivar partition: the lock partition of the LOCKTAG (0..15; used only for main-table locks).
    :ivar order: position in the acquisition order (0-based).
    """

    relation_oid: int
    relation: str
    role: LockRole
    mode: LockMode
    fastpath: bool
    database_oid: int
    partition: int
    order: int


@dataclass(frozen=True)
class StatementShape:
    """A statement as the model sees it: its steady-state locks and how often it runs.

    :ivar name: short label (query id, or ``statement``).
    :ivar statement: the SQL text.
    :ivar phase: the plan-cache phase of the steady state (``simple``, ``custom``, ``generic-reuse``, ...).
    :ivar locks: relation locks in acquisition order.
    :ivar calls: weight in the workload (calls; 1 for one statement).
    :ivar calls_per_s: the measured rate of the calls taking this shape (calls/s: the statement's rate times its
        plan-cache phase's share), None for a probed statement.
    :ivar flags: ``measured`` (pg_locks) or ``predicted`` (capacity model over the measured locks in order).
    :ivar measured_main_table_locks: main-table locks pg_locks showed for this plan (count), when known.
    :ivar executor_relations: relations its execution initialises and scans (count).
    :ivar own_s: the statement's own planning and execution time per call (s; CPU), None when unknown.
    :ivar own_source: where ``own_s`` comes from, in words (every cost says its source).
    :ivar own_at: the footprint ``own_s`` was measured with (:attr:`TransactionClass.own_at`).
    :ivar own_under_load: ``own_s`` is pg_stat_statements' mean over calls of the running load (deflated to CPU),
        not a call timed alone.
    """

    name: str
    statement: str
    phase: PlanPhase
    locks: tuple[LockSite, ...]
    calls: float = 1.0
    calls_per_s: float | None = None
    flags: str = "measured"
    measured_main_table_locks: int | None = None
    executor_relations: int = 1
    own_s: float | None = None
    own_source: str = "unknown: the base statement's (pgbench -S) cost stands in, a lower bound"
    own_at: tuple[int, int, int, int] | None = None
    own_under_load: bool = False

    def with_own_cost(self, own_s: float | None, source: str, *, under_load: bool = False) -> StatementShape:
        """This shape with its own cost measured now (on its current footprint), or marked unknown;
        ``under_load``: measured over calls of the running load (:attr:`own_under_load`)."""
        if own_s is None:
            return replace(self, own_s=None, own_source=source, own_at=None, own_under_load=False)
        at = (len(self.locks), self.planned_relations, len(self.main_table_locks), self.executor_relations)
        return replace(self, own_s=max(0.0, own_s), own_source=source, own_at=at, own_under_load=under_load)

    @property
    def plans(self) -> bool:
        """False when the steady state reuses a cached generic plan (no planning: plancache.c CheckCachedPlan)."""
        return self.phase.plans

    @property
    def main_table_locks(self) -> tuple[LockSite, ...]:
        """The locks in the main lock table."""
        return tuple(lk for lk in self.locks if not lk.fastpath)

    @property
    def fast_path_count(self) -> int:
        """Fast-path locks (count)."""
        return sum(lk.fastpath for lk in self.locks)

    @property
    def partition_load(self) -> tuple[int, ...]:
        """Main-table locks per lock partition (16 counts)."""
        counts = [0] * NUM_LOCK_PARTITIONS
        for lk in self.main_table_locks:
            counts[lk.partition] += 1
        return tuple(counts)

    @property
    def planned_relations(self) -> int:
        """Relations planned beyond the base statement's two (count; 0 for a reused generic plan)."""
        return max(0, len(self.locks) - BASE_PLANNED_RELATIONS) if self.plans else 0


def site(oid: int, relation: str, role: LockRole, mode: LockMode, fastpath: bool, shared: bool, database_oid: int,
          order: int) -> LockSite:
    """One relation lock as a :class:`LockSite`: a shared catalog's LOCKTAG has database 0 (lmgr.c
    ``SetLocktagRelationOid``), and the lock partition follows from the tag (lockpart.py)."""
    db = 0 if shared else database_oid
    return LockSite(oid, relation, role, mode, fastpath, db, lock_partition(db, oid), order)


def shape_from_footprint(fp: Footprint, database_oid: int, shared: frozenset[int] = frozenset(), *,
                         name: str = "statement", calls: float = 1.0) -> StatementShape:
    """The steady state (last execution) of a measured footprint, with measured fast-path flags, plus the index
    locks a real execution of a reused generic plan takes at executor start (predicted flags,
    ``Execution.executor_index_locks``).

    :param database_oid: the current database's OID.
    :param shared: OIDs of shared catalogs among the locks (locked with database 0).
    """
    e = fp.executions[-1]
    ordered = [*sorted(e.locks, key=lambda lk: lk.order), *e.executor_index_locks]
    locks = tuple(site(lk.relation_oid, lk.relation, lk.role, lk.mode, lk.fastpath, lk.relation_oid in shared,
                        database_oid, i)
                  for i, lk in enumerate(ordered))
    return StatementShape(name=name, statement=fp.statement, phase=e.phase, locks=locks, calls=calls,
                          measured_main_table_locks=e.main_table_count,
                          executor_relations=e.plan.scanned_relations)


def shape_from_transaction(fp: TransactionFootprint, database_oid: int, shared: frozenset[int] = frozenset(), *,
                           name: str = "transaction", calls: float = 1.0) -> StatementShape:
    """A transaction as one shape whose locks accumulate: the steady state (its last execution, once the plan caches
    have settled, as :func:`shape_from_footprint` takes a statement's) with every relation lock the transaction
    holds at its end (``lock.c LockReleaseAll`` releases them only then), in acquisition order, each with the
    transaction's fast-path flag: its main-table locks per lock partition are the transaction's
    (:attr:`lockscope.transaction.TransactionExecution.partition_load`), not the sum of its statements' alone.

    :param fp: a transaction footprint (:func:`lockscope.transaction.measure_transaction`, whose flags are the
        capacity model's simulation over the whole transaction: ``flags`` ``predicted``; or an executed run:
        ``measured``).
    :param database_oid: the current database's OID.
    :param shared: OIDs of shared catalogs among the locks (locked with database 0).
    :return: a shape whose ``phase`` is the first planning statement's (a transaction plans when any of its
        statements does), ``generic-reuse`` when every statement reuses a cached plan; ``executor_relations`` the
        statements' together.
    """
    e = fp.executions[-1]
    locks = tuple(site(lk.relation_oid, lk.relation, lk.role, lk.mode, lk.fastpath, lk.relation_oid in shared,
                       database_oid, i)
                  for i, lk in enumerate(e.locks))
    phase = next((s.execution.phase for s in e.steps if s.execution.phase.plans), PlanPhase.GENERIC_REUSE)
    measured = fp.method == "executed"
    return StatementShape(name=name, statement="; ".join(fp.statements), phase=phase, locks=locks, calls=calls,
                          flags="measured" if measured else "predicted",
                          measured_main_table_locks=e.main_table_count if measured else None,
                          executor_relations=max(1, sum(s.execution.plan.scanned_relations for s in e.steps)))


def apply_what_if(shape: StatementShape, model: CapacityModel, drop_oids: frozenset[int] = frozenset(),
                  *, repredict: bool = True) -> StatementShape:
    """The shape with the dropped indexes' locks removed and the flags predicted again in order with ``model``.

    :param repredict: False keeps the flags (nothing changed but the dropped locks' removal is not asked either).
    """
    kept = [lk for lk in shape.locks if lk.relation_oid not in drop_oids]
    if not repredict:
        return replace(shape, locks=tuple(kept))
    flags = model.predict([LockRequest(lk.relation_oid, lk.mode, lk.database_oid == 0) for lk in kept])
    locks = tuple(replace(lk, fastpath=f, order=i) for i, (lk, f) in enumerate(zip(kept, flags, strict=True)))
    return replace(shape, locks=locks, flags="predicted", measured_main_table_locks=None)


# -- shapes ------------------------------------------------------------------------------------------------------------
