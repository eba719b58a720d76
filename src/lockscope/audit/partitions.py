"""Lock-partition load of an audited workload: main-lock-table acquisitions/s on each of the 16 lock partitions.

Each audited statement's plans (:class:`~lockscope.workload.probes.StatementAudit`) become steady-state shapes
(:func:`~lockscope.workload.probes.shape_from_plan`: the measured locks in acquisition order, fast-path flags from
the capacity model, the lock partition of each main-table lock from ``(database OID, relation OID)``, database 0
for a shared catalog, lmgr.c ``SetLocktagRelationOid``). A call takes the plan its ``basis`` names (the custom
plan, the cached generic plan, or on PG 19 both weighted by ``custom_plan_calls`` / ``generic_plan_calls``), the
same rule as :attr:`~lockscope.workload.probes.StatementAudit.main_lock_table_per_s`.

Per partition p, with calls/s ``r`` and ``n_p`` main-table locks per call in p:

- lock acquisitions/s = ``sum r x n_p``: each takes the partition's ``LWLock:LockManager`` exclusively (lock.c
  ``LockAcquireExtended``);
- release passes/s = ``sum r x [n_p > 0]``: ``LockReleaseAll`` takes each partition holding any of the backend's
  main-table locks once at transaction end (each call taken as its own transaction).

Both come from :func:`lockscope.lockpart.partition_rates` (one transaction's traffic:
:func:`lockscope.lockpart.transaction_traffic`).

:func:`load_from_shapes` is pure; :func:`lock_partition_load` reads the relation facts it needs (one catalog
query) and builds the shapes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..catalog import relation_facts
from ..lockpart import NUM_LOCK_PARTITIONS, PartitionRates, partition_rates
from ..shapes import LockSite, StatementShape
from ..vocab import LockRole
from ..workload.probes import shape_from_plan

if TYPE_CHECKING:
    from ..capacity import CapacityModel
    from ..db import Session
    from ..workload.probes import PlanFootprint, StatementAudit

__all__ = [
    "LockPartitionLoad",
    "PartitionRelation",
    "PartitionStatement",
    "WeightedShape",
    "load_from_shapes",
    "lock_partition_load",
    "shape_from_plan",
    "weighted_plans",
]


@dataclass(frozen=True)
class WeightedShape:
    """One plan of one audited statement as the model sees it, with the fraction of its calls that take it.

    :ivar audit: the statement.
    :ivar shape: the plan's steady-state shape (locks in order, fast-path flags, lock partitions).
    :ivar weight: fraction of the statement's calls that take this plan (0..1).
    """

    audit: StatementAudit
    shape: StatementShape
    weight: float

    @property
    def calls_per_s(self) -> float:
        """Calls/s taking this plan: the statement's calls/s x weight."""
        return max(self.audit.calls_per_s, 0.0) * self.weight


@dataclass(frozen=True)
class PartitionStatement:
    """A statement that puts main-table locks in one lock partition.

    :ivar queryid: pg_stat_statements queryid.
    :ivar query: the statement text (pg_stat_statements' normalised text).
    :ivar calls_per_s: the statement's calls/s (all plans).
    :ivar locks_per_call: its main-table locks in this partition per call (count; fractional when weighted).
    :ivar acquisitions_per_s: lock acquisitions/s it puts on this partition.
    :ivar share: acquisitions_per_s / the partition's lock acquisitions/s (fraction 0..1).
    """

    queryid: int
    query: str
    calls_per_s: float
    locks_per_call: float
    acquisitions_per_s: float
    share: float


@dataclass(frozen=True)
class PartitionRelation:
    """A relation whose main-table lock lands in one lock partition.

    :ivar relation_oid: pg_class OID.
    :ivar relation: schema-qualified name.
    :ivar role: ``table``, ``index``, ``partition``, ... (:class:`lockscope.vocab.LockRole`).
    :ivar database_oid: the LOCKTAG's database (0 for a shared catalog).
    :ivar acquisitions_per_s: lock acquisitions/s of this relation in the partition (all statements).
    :ivar statements: statements locking it in the main table (count).
    """

    relation_oid: int
    relation: str
    role: LockRole
    database_oid: int
    acquisitions_per_s: float
    statements: int


@dataclass(frozen=True)
class LockPartitionLoad:
    """The workload's demand on the 16 lock-partition LWLocks (``LWLock:LockManager``).

    :ivar database_oid: the audited database's OID (the LOCKTAG's field1).
    :ivar acquisitions_per_s: main-table lock acquisitions/s per partition (16 values, index = partition).
    :ivar release_passes_per_s: ``LockReleaseAll`` passes/s per partition (16 values).
    :ivar statements_measured: audited statements with a measured plan (count).
    :ivar hottest_partition: the partition with the most LWLock acquisitions/s (locks + release passes; lowest on
        a tie), None when no statement puts a lock in the main table.
    :ivar statements: statements loading the hottest partition, most acquisitions/s first.
    :ivar relations: relations in the hottest partition, most acquisitions/s first.
    """

    database_oid: int
    acquisitions_per_s: tuple[float, ...]
    release_passes_per_s: tuple[float, ...]
    statements_measured: int
    hottest_partition: int | None
    statements: tuple[PartitionStatement, ...]
    relations: tuple[PartitionRelation, ...]

    @property
    def lwlock_acquisitions_per_s(self) -> tuple[float, ...]:
        """Exclusive LWLock acquisitions/s per partition: lock acquisitions + release passes (16 values)."""
        return PartitionRates(self.acquisitions_per_s, self.release_passes_per_s).lwlock_per_s

    @property
    def total_per_s(self) -> float:
        """Main-table lock acquisitions/s over all partitions."""
        return sum(self.acquisitions_per_s)

    @property
    def hottest_per_s(self) -> float:
        """LWLock acquisitions/s of the hottest partition (0 when none)."""
        if self.hottest_partition is None:
            return 0.0
        return self.lwlock_acquisitions_per_s[self.hottest_partition]

    @property
    def verdict(self) -> str:
        """One line on how the load is spread: a hot partition (imbalance >= 2) or an even spread."""
        if self.hottest_partition is None:
            return "nothing in the main lock table"
        if self.imbalance >= 2:
            return (f"partition {self.hottest_partition} is hot ({self.imbalance:.1f} x the mean): every backend "
                    "running the statements below queues on its LWLock")
        return (f"spread over the partitions ({self.imbalance:.1f} x the mean at most): the total rate, not one "
                "partition, is the load")

    @property
    def imbalance(self) -> float:
        """Hottest partition's LWLock acquisitions/s over the mean of the 16 (1 = even spread, 16 = all in one;
        0 when nothing is in the main table)."""
        total = sum(self.lwlock_acquisitions_per_s)
        return self.hottest_per_s * NUM_LOCK_PARTITIONS / total if total > 0 else 0.0


def weighted_plans(audit: StatementAudit) -> list[tuple[PlanFootprint, float]]:
    """The plans a call of ``audit`` takes with their weights (fractions summing to 1; [] without a plan):
    :meth:`~lockscope.workload.probes.StatementAudit.weighted_plans`, the phase split behind ``spilled_per_call``."""
    return audit.weighted_plans()


def load_from_shapes(database_oid: int, shapes: Sequence[WeightedShape]) -> LockPartitionLoad:
    """Per-partition acquisitions/s, the hottest partition, and the statements and relations loading it.

    :param database_oid: the audited database's OID (reported as is).
    :param shapes: each measured plan with its weight (:func:`weighted_plans`).
    """
    rates = partition_rates((ws.calls_per_s, ws.shape.partition_load) for ws in shapes)
    acquisitions, releases = rates.acquisitions_per_s, rates.release_passes_per_s
    lwlock = rates.lwlock_per_s
    top = max(lwlock)
    hottest = lwlock.index(top) if top > 0 else None
    statements: list[PartitionStatement] = []
    relations: list[PartitionRelation] = []
    if hottest is not None:
        per_query: dict[int, tuple[str, float, float, float]] = {}  # queryid -> text, calls/s, per call, rate
        sites: dict[int, LockSite] = {}
        rel_rate: dict[int, float] = {}
        rel_queries: dict[int, set[int]] = {}
        for ws in shapes:
            n = ws.shape.partition_load[hottest]
            if not n:
                continue
            qid = ws.audit.queryid
            _, _, per_call, rate = per_query.get(qid, ("", 0.0, 0.0, 0.0))
            per_query[qid] = (ws.audit.query, max(ws.audit.calls_per_s, 0.0), per_call + ws.weight * n,
                              rate + ws.calls_per_s * n)
            for lk in ws.shape.main_table_locks:
                if lk.partition == hottest:
                    sites[lk.relation_oid] = lk
                    rel_rate[lk.relation_oid] = rel_rate.get(lk.relation_oid, 0.0) + ws.calls_per_s
                    rel_queries.setdefault(lk.relation_oid, set()).add(qid)
        part_total = acquisitions[hottest]
        statements = sorted((PartitionStatement(qid, text, calls, per_call, rate,
                                                rate / part_total if part_total else 0.0)
                             for qid, (text, calls, per_call, rate) in per_query.items()),
                            key=lambda s: (-s.acquisitions_per_s, s.queryid))
        relations = sorted((PartitionRelation(oid, lk.relation, lk.role, lk.database_oid, rel_rate[oid],
                                              len(rel_queries[oid])) for oid, lk in sites.items()),
                           key=lambda r: (-r.acquisitions_per_s, r.relation))
    return LockPartitionLoad(database_oid, acquisitions, releases,
                             len({ws.audit.queryid for ws in shapes}), hottest, tuple(statements), tuple(relations))


def steady_shapes(session: Session, statements: Sequence[StatementAudit], capacity: CapacityModel,
                  database_oid: int) -> list[WeightedShape]:
    """Each audited statement's plans as weighted shapes (one catalog query for the relations' names and
    ``relisshared``; statements skipped or without a measured plan are left out).

    :raises DatabaseError: the catalog query failed.
    """

    audits = [a for a in statements if not a.skipped_reason]
    plans = [(a, weighted_plans(a)) for a in audits]
    relations = relation_facts(session, [o for _, ps in plans for p, _ in ps for o in p.relation_oids])
    return [WeightedShape(a, shape_from_plan(a, p, capacity, database_oid, relations, calls=max(a.calls_per_s, 0.0)), w)
            for a, ps in plans for p, w in ps if w > 0]


def lock_partition_load(session: Session, statements: Sequence[StatementAudit], capacity: CapacityModel,
                        database_oid: int) -> LockPartitionLoad:
    """The lock-partition load of the audited statements on the session's database (see the module docstring).

    :raises DatabaseError: the catalog query failed.
    """
    return load_from_shapes(database_oid, steady_shapes(session, statements, capacity, database_oid))
