"""Advice computed from footprints: max_locks_per_transaction, the shared lock table, partition granularity.

- ``max_locks_per_transaction`` (PG 18+): the smallest fast-path group count at which every top statement's relations
  (and every table's pruned footprint) fit, hash-aware with the real OIDs (``lock.c FAST_PATH_REL_GROUP``,
  ``capacity.smallest_fitting_groups``), the setting range that gives it (``postinit.c InitializeFastPathLocks``)
  and its shared-memory cost (``lock.c LockManagerShmemSize``, ``proc.c FastPathLockShmemSize``). On PG 13-17: what
  PostgreSQL 18 with that setting would change, assuming ``pg_upgrade`` (which keeps relation OIDs).
- Shared lock table (``lock.c NLOCKENTS`` = max_locks_per_transaction x (MaxBackends + max_prepared_transactions)):
  the largest footprints x max_connections sessions against it; SQLSTATE 53200 "out of shared memory" when exceeded.
- Partition granularity: for a partitioned table whose unpruned footprint spills, the footprints at coarser
  partition bounds (e.g. daily -> weekly), counted from its partitions and indexes per partition.
"""

from __future__ import annotations

import datetime as _dt
import math
import re
from dataclasses import dataclass

from ..capacity import (
    CapacityModel,
    LockRequest,
    lock_shmem_bytes,
    mlpt_range_for_groups,
    smallest_fitting_groups,
)
from ..catalog import Catalog
from ..versions import PG18 as _PG18
from ..vocab import LockMode
from ..workload.probes import StatementAudit
from .tables import PG16, TableFootprint

__all__ = [
    "GranularityAdvice",
    "GranularityOption",
    "MlptAdvice",
    "SharedLockRisk",
    "granularity_advice",
    "mlpt_advice",
    "shared_lock_risk",
]


@dataclass(frozen=True)
class MlptAdvice:
    """The smallest max_locks_per_transaction whose fast-path groups fit the workload.

    :ivar target_version_num: the version the advice is for (this server's, or 180000 for an upgrade).
    :ivar current_mlpt: the current setting (count).
    :ivar groups_needed: fast-path groups needed (count), None when even 1024 groups do not fit.
    :ivar mlpt_min: the smallest setting giving those groups (count).
    :ivar mlpt_recommended: the power-of-two setting giving those groups (count; 16 x groups), never below the
        current setting.
    :ivar shmem_now_bytes: lock table + fast-path shared memory at the current setting (bytes).
    :ivar shmem_after_bytes: at the recommended setting (bytes).
    :ivar sets: relation sets considered (count).
    :ivar spilling_now: statements that spill now (count).
    :ivar spilling_after: statements that would still spill (count).
    :ivar main_per_s_now: main-lock-table acquisitions/s now.
    :ivar main_per_s_after: predicted after the change.
    :ivar change_needed: True when the recommended setting differs from the current one (or an upgrade helps).
    """

    target_version_num: int
    current_mlpt: int
    groups_needed: int | None
    mlpt_min: int | None
    mlpt_recommended: int | None
    shmem_now_bytes: int
    shmem_after_bytes: int | None
    sets: int
    spilling_now: int
    spilling_after: int
    main_per_s_now: float
    main_per_s_after: float
    tables_spilling_now: int
    tables_spilling_after: int
    change_needed: bool
    upgrade: bool


@dataclass(frozen=True)
class SharedLockRisk:
    """Largest footprints x sessions against the shared lock table.

    :ivar entries: lock-table entries the server is sized for (count, ``NLOCKENTS``).
    :ivar sessions: max_connections (count).
    :ivar largest_locks: the largest statement/table footprint (count) and ``largest_subject`` its name.
    :ivar largest_spilled: the largest main-lock-table footprint per statement (count).
    :ivar need_all: largest_locks x sessions (count): if every fast-path lock moved to the main table (a strong
        lock on the relations transfers them, ``lock.c FastPathTransferRelationLocks``).
    :ivar need_spilled: largest_spilled x sessions (count).
    """

    entries: int
    sessions: int
    largest_locks: int
    largest_subject: str
    largest_spilled: int
    spilled_subject: str
    need_all: int
    need_spilled: int
    severity: str


@dataclass(frozen=True)
class GranularityOption:
    """One coarser partitioning.

    :ivar label: e.g. ``weekly``.
    :ivar partitions: partitions at that granularity (count).
    :ivar unpruned_locks: locks of an unpruned statement (count).
    :ivar generic_reuse_locks: locks of reusing a cached generic plan: parent + partitions (count).
    :ivar fits: unpruned_locks <= fast-path slots (a count estimate; new OIDs decide the PG 18 groups).
    """

    label: str
    partitions: int
    unpruned_locks: int
    generic_reuse_locks: int
    fits: bool


@dataclass(frozen=True)
class GranularityAdvice:
    """Partition granularity options for one partitioned table.

    :ivar current_label: detected granularity (``daily``, ``monthly``, ``N partitions``...).
    """

    table_oid: int
    qualified: str
    current_label: str
    partitions: int
    indexes_per_partition: float
    unpruned_locks: int
    options: tuple[GranularityOption, ...]


def _replay(model: CapacityModel, oids: tuple[int, ...], modes: tuple[LockMode, ...]) -> int:
    return sum(not f for f in model.predict([LockRequest(o, m) for o, m in zip(oids, modes, strict=False)]))


def mlpt_advice(catalog: Catalog, model: CapacityModel, max_backends: int, max_prepared: int,
                tables: list[TableFootprint], statements: tuple[StatementAudit, ...]) -> MlptAdvice:
    """The smallest max_locks_per_transaction whose PG 18+ groups fit the statements and tables (see module doc).

    Relation sets: each measured statement's steady footprint (custom plan, else cached generic plan) and each
    table's pruned footprint. Before PG 18 the advice is for an upgrade to PG 18 with the same OIDs.
    """
    version = model.server_version_num
    target = version if version >= _PG18 else _PG18
    steady = [(s, fp) for s in statements if (fp := s.steady) is not None]  # (statement, its steady plan)
    sets = [fp.relation_oids for _, fp in steady] + [t.pruned.relation_oids for t in tables]
    groups = smallest_fitting_groups(target, sets)
    now_shmem = lock_shmem_bytes(version, model.max_locks_per_transaction, max_backends, max_prepared)
    spilling_now = sum(1 for _, fp in steady if fp.spilled)
    main_now = sum(s.main_lock_table_per_s for s, _ in steady)
    tables_now = sum(1 for t in tables if t.pruned.spilled)
    if groups is None:
        return MlptAdvice(target, model.max_locks_per_transaction, None, None, None, now_shmem, None, len(sets),
                          spilling_now, spilling_now, main_now, main_now, tables_now, tables_now, False,
                          version < _PG18)
    low, high = mlpt_range_for_groups(groups)
    current_groups = model.groups if version >= _PG18 else None
    recommended = max(high, model.max_locks_per_transaction)
    if version >= _PG18 and current_groups is not None and current_groups >= groups:
        recommended = model.max_locks_per_transaction
    after_model = CapacityModel(target, recommended)
    after_spilling = 0
    main_after = 0.0
    for s, fp in steady:
        spilled = _replay(after_model, fp.relation_oids, fp.modes)
        after_spilling += spilled > 0
        main_after += s.calls_per_s * spilled
    tables_after = sum(1 for t in tables if _replay(after_model, t.pruned.relation_oids,
                                                    (LockMode.ACCESS_SHARE,) * t.pruned.locks))
    after_shmem = lock_shmem_bytes(target, recommended, max_backends, max_prepared)
    change = recommended != model.max_locks_per_transaction or version < _PG18
    return MlptAdvice(target, model.max_locks_per_transaction, groups, low, recommended, now_shmem, after_shmem,
                      len(sets), spilling_now, after_spilling, main_now, main_after, tables_now, tables_after,
                      change and (spilling_now > 0 or tables_now > 0), version < _PG18)


def shared_lock_risk(entries: int, max_connections: int, tables: list[TableFootprint],
                     statements: tuple[StatementAudit, ...]) -> SharedLockRisk:
    """Largest footprints x max_connections against ``NLOCKENTS`` (see :class:`SharedLockRisk`).

    Severity: ``high`` when the spilled locks alone of the largest statement times max_connections exceed the
    table (53200 "out of shared memory" is reachable with the fast path working), ``medium`` when all its locks do
    (reachable once a strong lock moves fast-path locks to the main table), else ``ok``.
    """
    largest, subject = 0, "-"
    spilled_max, spilled_subject = 0, "-"
    for s in statements:
        for fp in (s.custom, s.generic):
            if fp is not None and fp.locks > largest:
                largest, subject = fp.locks, f"statement {s.queryid}"
            if fp is not None and fp.spilled > spilled_max:
                spilled_max, spilled_subject = fp.spilled, f"statement {s.queryid}"
    for t in tables:
        if t.pruned.locks > largest:
            largest, subject = t.pruned.locks, t.qualified
        if t.pruned.spilled > spilled_max:
            spilled_max, spilled_subject = t.pruned.spilled, t.qualified
    need_all, need_spilled = largest * max_connections, spilled_max * max_connections
    severity = "high" if need_spilled > entries else "medium" if need_all > entries else "ok"
    return SharedLockRisk(entries, max_connections, largest, subject, spilled_max, spilled_subject, need_all,
                          need_spilled, severity)


_BOUND = re.compile(r"FROM \('([^']*)'\) TO \('([^']*)'\)")
_STEPS = (("daily", 1), ("weekly", 7), ("monthly", 30.4), ("quarterly", 91.3), ("yearly", 365.25))


def _span_days(bound: str | None) -> float | None:
    match = _BOUND.search(bound or "")
    if not match:
        return None
    try:
        lo = _dt.datetime.fromisoformat(match.group(1).replace(" ", "T", 1))
        hi = _dt.datetime.fromisoformat(match.group(2).replace(" ", "T", 1))
    except ValueError:
        return None
    return (hi - lo).total_seconds() / 86400


def granularity_advice(catalog: Catalog, model: CapacityModel, table: TableFootprint) -> GranularityAdvice | None:
    """Footprints at coarser partitioning for one partitioned table whose unpruned case spills, else None.

    Time-range partitions are labelled by their median span (daily ... yearly) and offered the coarser steps;
    other strategies get 1/2, 1/4 and 1/10 of the partitions.
    """
    if table.unpruned is None or table.unpruned.fits or table.kind != "partitioned table":
        return None
    leaves = catalog.leaves(table.oid)
    if len(leaves) < 2:
        return None
    per_part = sum(len(catalog.indexes_of.get(leaf, ())) for leaf in leaves) / len(leaves)
    parent_locks = 1 + (len(catalog.indexes_of.get(table.oid, ())) if model.server_version_num >= PG16 else 0)
    spans = sorted(s for s in (_span_days(catalog.relations[leaf].partition_bound) for leaf in leaves) if s)
    options: list[tuple[str, int]] = []
    if spans and len(spans) >= len(leaves) // 2:
        span = spans[len(spans) // 2]
        current = min(_STEPS, key=lambda s: abs(math.log(s[1] / span)))
        label = current[0]
        for name, days in _STEPS:
            if days > span * 1.5:
                options.append((name, max(1, math.ceil(len(leaves) * span / days))))
    else:
        strategy = catalog.relations[table.oid].partition_strategy
        label = {"r": "range", "l": "list", "h": "hash"}.get(strategy or "", "partitions")
        options = [(f"{max(1, len(leaves) // f)} partitions", max(1, len(leaves) // f)) for f in (2, 4, 10)]
    out = []
    for name, parts in options:
        locks = parent_locks + round(parts * (1 + per_part))
        out.append(GranularityOption(name, parts, locks, 1 + parts, locks <= model.slots))
    return GranularityAdvice(table.oid, table.qualified, label, len(leaves), per_part, table.unpruned.locks,
                             tuple(out))

