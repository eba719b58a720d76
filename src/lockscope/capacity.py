"""PostgreSQL's fast-path and shared-lock-table rules as pure functions (no I/O).

This is the capacity model lockscope puts beside every measurement. It follows, per major version:

- ``proc.h FP_LOCK_SLOTS_PER_BACKEND`` (PG 13-17): one array of 16 fast-path slots per backend.
- ``postinit.c InitializeFastPathLocks`` (PG 18+): groups of ``FP_LOCK_SLOTS_PER_GROUP`` = 16 slots,
  ``groups = Max(Min(pg_nextpower2_32(max_locks_per_transaction) / 16, 1024), 1)``.
- ``lock.c FAST_PATH_REL_GROUP`` (PG 18+): a relation's group is ``(oid * 49157) & (groups - 1)``.
- ``lock.c EligibleForRelationFastPath``: relation locks weaker than ShareUpdateExclusiveLock on relations of the
  current database only.
- ``lock.c LockAcquireExtended``: the fast path is tried only while the relation's group has fewer than 16 used
  slots; a second weak mode on a relation already in a slot shares that slot (``FastPathGrantRelationLock``),
  but is still refused when the group is full.
- ``lock.c LockManagerShmemInit`` / ``NLOCKENTS``: shared lock table entries =
  ``max_locks_per_transaction * (MaxBackends + max_prepared_transactions)``.
- ``postinit.c InitializeMaxBackends``: MaxBackends per version.

What the model cannot see: another session's strong lock on a relation hashing to the same of the 1024
strong-lock partitions (``FastPathStrongLockHashPartition``) sends weak locks to the main table too. The
measurement shows it; the model assumes no concurrent strong locks.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .versions import PG13 as _PG13
from .versions import PG18 as _PG18
from .versions import PG19 as _PG19
from .vocab import LockMode

__all__ = [
    "FP_LOCK_GROUPS_PER_BACKEND_MAX",
    "FP_LOCK_SLOTS_PER_GROUP",
    "LOCK_MODES",
    "MIN_MAX_LOCKS_PER_TRANSACTION",
    "WEAK_LOCK_MODES",
    "CapacityModel",
    "LockRequest",
    "fast_path_groups",
    "fast_path_rel_group",
    "fast_path_shmem_bytes",
    "groups_overflow",
    "lock_shmem_bytes",
    "lock_table_shmem_bytes",
    "max_backends",
    "mlpt_range_for_groups",
    "shared_lock_table_entries",
    "simulate_fast_path",
    "smallest_fitting_groups",
]

#: ``proc.h`` / ``lock.h``: fast-path slots per group (and the whole array before PG 18).
FP_LOCK_SLOTS_PER_GROUP = 16
#: ``proc.h FP_LOCK_GROUPS_PER_BACKEND_MAX`` (PG 18+).
FP_LOCK_GROUPS_PER_BACKEND_MAX = 1024
#: The smallest ``max_locks_per_transaction`` PostgreSQL accepts (``guc_tables.c``, every version 13..19).
MIN_MAX_LOCKS_PER_TRANSACTION = 10
#: ``lockdefs.h``: the relation lock modes, weakest first, as pg_locks spells them (:class:`~lockscope.vocab.LockMode`).
LOCK_MODES = tuple(LockMode)
#: Modes below ShareUpdateExclusiveLock: the only ones eligible for the fast path.
WEAK_LOCK_MODES = frozenset(m for m in LockMode if m.weak)


def _next_power_of_2(value: int) -> int:
    """``pg_bitutils.h pg_nextpower2_32``: smallest power of two >= value (value >= 1)."""
    return 1 << (max(value, 1) - 1).bit_length()


def fast_path_groups(server_version_num: int, max_locks_per_transaction: int) -> int:
    """Number of 16-slot fast-path groups a backend has.

    Follows ``postinit.c InitializeFastPathLocks`` for PG 18+; PG 13-17 have one array of 16 slots
    (``proc.h FP_LOCK_SLOTS_PER_BACKEND``), modelled as a single group.

    :param server_version_num: e.g. 180006 for 18.6.
    :param max_locks_per_transaction: the setting (count, >= 10 on a real server).
    :return: groups (count), 1..1024.
    :raises ValueError: for a version below 13 or a non-positive setting.
    """
    if server_version_num < _PG13:
        raise ValueError(f"PostgreSQL {server_version_num // 10000} is not modelled (13 or later)")
    if max_locks_per_transaction < 1:
        raise ValueError("max_locks_per_transaction must be positive")
    if server_version_num < _PG18:
        return 1
    groups = _next_power_of_2(max_locks_per_transaction) // FP_LOCK_SLOTS_PER_GROUP
    return max(min(groups, FP_LOCK_GROUPS_PER_BACKEND_MAX), 1)


def fast_path_rel_group(relation_oid: int, groups: int) -> int:
    """Group a relation's fast-path lock goes to: ``lock.c FAST_PATH_REL_GROUP``.

    :param relation_oid: the relation's OID (uint32).
    :param groups: groups per backend (a power of two), from :func:`fast_path_groups`.
    :return: group index in ``0 .. groups-1`` (always 0 with one group).
    """
    return ((relation_oid * 49157) & 0xFFFFFFFFFFFFFFFF) & (groups - 1)


@dataclass(frozen=True)
class LockRequest:
    """One relation lock request, in the order the backend acquires it.

    :ivar relation_oid: OID of the locked relation.
    :ivar mode: pg_locks mode name, e.g. ``AccessShareLock``.
    :ivar shared_catalog: True for shared catalogs (pg_locks ``database = 0``), never fast-path.
    :ivar release: True: this event releases one earlier acquisition of (relation, mode) instead of acquiring
        (a lock held only for a while, e.g. an INSERT's target indexes, ``execIndexing.c ExecCloseIndices``).
    """

    relation_oid: int
    mode: LockMode
    shared_catalog: bool = False
    release: bool = False


@dataclass(frozen=True)
class CapacityModel:
    """The fast-path capacity of one backend on one server version and setting.

    :ivar server_version_num: e.g. 180006.
    :ivar max_locks_per_transaction: the setting (count).
    """

    server_version_num: int
    max_locks_per_transaction: int

    def __post_init__(self) -> None:
        fast_path_groups(self.server_version_num, self.max_locks_per_transaction)  # validates

    @functools.cached_property
    def groups(self) -> int:
        """Fast-path groups per backend (count); 1 before PG 18."""
        return fast_path_groups(self.server_version_num, self.max_locks_per_transaction)

    @property
    def slots(self) -> int:
        """Fast-path slots per backend (count): groups x 16."""
        return self.groups * FP_LOCK_SLOTS_PER_GROUP

    @property
    def hashed(self) -> bool:
        """True when relations are spread over groups by OID hash (PG 18+)."""
        return self.server_version_num >= _PG18

    def group_of(self, relation_oid: int) -> int:
        """Fast-path group of a relation (``lock.c FAST_PATH_REL_GROUP``); 0 before PG 18."""
        return fast_path_rel_group(relation_oid, self.groups)

    def describe(self) -> str:
        """Short human description, e.g. ``64 slots (4 groups x 16)`` or ``16 slots``."""
        if not self.hashed:
            return f"{self.slots} slots"
        return (f"{self.slots} slots ({self.groups} group{'s' if self.groups > 1 else ''} x "
                f"{FP_LOCK_SLOTS_PER_GROUP})")

    def short(self) -> str:
        """Compact form for table cells: ``64=4x16`` (PG 18+) or ``16``."""
        return f"{self.slots}={self.groups}x{FP_LOCK_SLOTS_PER_GROUP}" if self.hashed else str(self.slots)

    def predict(self, requests: Sequence[LockRequest]) -> tuple[bool, ...]:
        """Predicted ``fastpath`` flag of each request; see :func:`simulate_fast_path`."""
        return simulate_fast_path(self, requests)

    def fits(self, relation_oids: Iterable[int]) -> bool:
        """True when weak locks on all these (distinct, non-shared) relations fit in the fast path."""
        used: dict[int, int] = {}
        for oid in set(relation_oids):
            group = self.group_of(oid)
            used[group] = used.get(group, 0) + 1
        return all(n <= FP_LOCK_SLOTS_PER_GROUP for n in used.values())


def simulate_fast_path(model: CapacityModel, requests: Sequence[LockRequest]) -> tuple[bool, ...]:
    """Simulate one backend taking ``requests`` in order from an empty fast-path array.

    Follows ``lock.c LockAcquireExtended`` and ``FastPathGrantRelationLock``: a request for a (relation, mode)
    already held is a local-lock hit and returns the earlier outcome; an eligible request
    (``EligibleForRelationFastPath``) goes to the fast path while its group (``FAST_PATH_REL_GROUP``) has fewer than
    16 used slots, reusing the relation's slot when it already has one; everything else goes to the main lock table,
    where it stays until released. A release (:attr:`LockRequest.release`) undoes one acquisition of its (relation,
    mode); the last one frees the mode, and a slot whose relation holds no mode any more is free again
    (``FastPathUnGrantRelationLock``).

    :param model: the backend's capacity.
    :param requests: lock requests (and releases) in the order the backend makes them.
    :return: one fast-path flag per request (True = fast-path slot, False = main lock table); a release gets the
        flag of the lock it releases.
    """
    used_per_group: dict[int, int] = {}
    slot_modes: dict[int, set[LockMode]] = {}
    held: dict[tuple[int, LockMode], list[int | bool]] = {}  # (relation, mode) -> [acquisitions, fast]
    flags: list[bool] = []
    for req in requests:
        key = (req.relation_oid, req.mode)
        if req.release:
            flags.append(_release(model, key, held, slot_modes, used_per_group))
            continue
        if key in held:
            held[key][0] = int(held[key][0]) + 1
            flags.append(bool(held[key][1]))
            continue
        eligible = req.mode in WEAK_LOCK_MODES and not req.shared_catalog
        group = model.group_of(req.relation_oid)
        fast = eligible and used_per_group.get(group, 0) < FP_LOCK_SLOTS_PER_GROUP
        if fast:
            if req.relation_oid not in slot_modes:
                used_per_group[group] = used_per_group.get(group, 0) + 1
            slot_modes.setdefault(req.relation_oid, set()).add(req.mode)
        held[key] = [1, fast]
        flags.append(fast)
    return tuple(flags)


def _release(model: CapacityModel, key: tuple[int, LockMode], held: dict[tuple[int, LockMode], list[int | bool]],
             slot_modes: dict[int, set[LockMode]], used_per_group: dict[int, int]) -> bool:
    """One release of ``key`` in :func:`simulate_fast_path`'s state; returns the released lock's fast-path flag.

    :raises ValueError: ``key`` is not held.
    """
    entry = held.get(key)
    if entry is None:
        raise ValueError(f"release of a lock not held: relation {key[0]} {key[1]}")
    fast = bool(entry[1])
    entry[0] = int(entry[0]) - 1
    if int(entry[0]) > 0:
        return fast
    del held[key]
    if fast:
        modes = slot_modes[key[0]]
        modes.discard(key[1])
        if not modes:
            del slot_modes[key[0]]
            used_per_group[model.group_of(key[0])] -= 1
    return fast


def max_backends(
    server_version_num: int,
    *,
    max_connections: int,
    autovacuum_workers: int,
    max_worker_processes: int,
    max_wal_senders: int,
) -> int:
    """``postinit.c InitializeMaxBackends``: the backends that get a PGPROC and lock-table share.

    PG 13-17: ``max_connections + autovacuum_max_workers + 1 + max_worker_processes + max_wal_senders``.
    PG 18+: ``max_connections + autovacuum_worker_slots + max_worker_processes + max_wal_senders + 2``.

    :param autovacuum_workers: ``autovacuum_max_workers`` before PG 18, ``autovacuum_worker_slots`` from 18.
    :return: MaxBackends (count).
    """
    base = max_connections + autovacuum_workers + max_worker_processes + max_wal_senders
    return base + (2 if server_version_num >= _PG18 else 1)


def shared_lock_table_entries(
    max_locks_per_transaction: int, max_backends_count: int, max_prepared_transactions: int
) -> int:
    """``lock.c NLOCKENTS``: lock entries the shared lock table is sized for (count).

    Exceeding it raises SQLSTATE 53200 "out of shared memory" (PG 13-18 may borrow spare shared memory first).
    """
    return max_locks_per_transaction * (max_backends_count + max_prepared_transactions)


# -- additions for lockscope audit (pure functions) ------------------------------------------------------------------
#: ``lock.h``: sizeof(LOCK) and sizeof(PROCLOCK) on 64-bit builds (bytes), PG 13-19.
_SIZEOF_LOCK = 152
_SIZEOF_PROCLOCK = 64
#: ``hsearch.h``: MAXALIGN(sizeof(HASHELEMENT)) on 64-bit builds (bytes).
_SIZEOF_HASHELEMENT = 16
#: ``proc.h NUM_AUXILIARY_PROCS`` (approximately; it varies by a few between versions).
_NUM_AUXILIARY_PROCS = 6


def _hash_estimate_bytes(num_entries: int, entry_size: int) -> int:
    """``dynahash.c hash_estimate_size`` simplified: bucket pointers plus one element per entry (bytes)."""
    buckets = _next_power_of_2(max(num_entries, 1))
    return buckets * 8 + num_entries * (_SIZEOF_HASHELEMENT + entry_size)


def lock_table_shmem_bytes(server_version_num: int, lock_entries: int) -> int:
    """Shared memory the main lock table is sized for (bytes), ``lock.c LockManagerShmemSize``.

    One ``LOCK`` hash of ``lock_entries`` elements and a ``PROCLOCK`` hash of twice as many, each estimated as in
    ``dynahash.c hash_estimate_size``; PG 13-18 add a 10 % safety margin (``size / 10``), PG 19 sizes the table
    exactly. An estimate within a few per cent on 64-bit builds.

    :param lock_entries: ``NLOCKENTS`` (count), see :func:`shared_lock_table_entries`.
    """
    size = _hash_estimate_bytes(lock_entries, _SIZEOF_LOCK)
    size += _hash_estimate_bytes(2 * lock_entries, _SIZEOF_PROCLOCK)
    if server_version_num < _PG19:
        size += size // 10
    return size


def fast_path_shmem_bytes(server_version_num: int, max_locks_per_transaction: int, procs: int) -> int:
    """Shared memory of all backends' fast-path arrays (bytes), ``proc.c FastPathLockShmemSize`` (PG 18+).

    Per PGPROC: a uint64 of lock bits per group and an Oid per slot. Before PG 18 the 16 slots live inside PGPROC
    (constant, reported as 0 here).

    :param procs: PGPROCs (count): MaxBackends + max_prepared_transactions + auxiliary processes.
    """
    if server_version_num < _PG18:
        return 0
    groups = fast_path_groups(server_version_num, max_locks_per_transaction)
    per_proc = groups * 8 + ((groups * FP_LOCK_SLOTS_PER_GROUP * 4 + 7) // 8) * 8
    return procs * per_proc


def lock_shmem_bytes(server_version_num: int, max_locks_per_transaction: int, max_backends_count: int,
                     max_prepared_transactions: int) -> int:
    """Main lock table plus fast-path arrays for a setting (bytes): what ``max_locks_per_transaction`` costs.

    See :func:`lock_table_shmem_bytes` and :func:`fast_path_shmem_bytes`.
    """
    entries = shared_lock_table_entries(max_locks_per_transaction, max_backends_count, max_prepared_transactions)
    procs = max_backends_count + max_prepared_transactions + _NUM_AUXILIARY_PROCS
    return (lock_table_shmem_bytes(server_version_num, entries)
            + fast_path_shmem_bytes(server_version_num, max_locks_per_transaction, procs))


def groups_overflow(model: CapacityModel, relation_oids: Iterable[int]) -> dict[int, int]:
    """Fast-path groups holding more than 16 of these relations: ``{group: relations}`` (counts).

    Follows ``lock.c FAST_PATH_REL_GROUP``; before PG 18 the single group overflows beyond 16 relations.
    """
    used: dict[int, int] = {}
    for oid in set(relation_oids):
        group = model.group_of(oid)
        used[group] = used.get(group, 0) + 1
    return {g: n for g, n in sorted(used.items()) if n > FP_LOCK_SLOTS_PER_GROUP}


def smallest_fitting_groups(server_version_num: int, relation_sets: Iterable[Iterable[int]]) -> int | None:
    """Smallest fast-path group count (a power of two, 1..1024) at which every set of relations fits (PG 18+ hash).

    Each set is one statement's relations; a set fits when no group (``lock.c FAST_PATH_REL_GROUP`` with the real
    OIDs) holds more than 16 of them. Evaluated with the PG 18 rules whatever ``server_version_num`` is below 18
    (what an upgrade with ``pg_upgrade``, which keeps relation OIDs, would do).

    :return: groups (count), or None when even 1024 groups (16384 slots) do not fit some set.
    """
    version = max(server_version_num, _PG18)
    sets = [frozenset(s) for s in relation_sets]
    groups = 1
    while groups <= FP_LOCK_GROUPS_PER_BACKEND_MAX:
        model = CapacityModel(version, groups * FP_LOCK_SLOTS_PER_GROUP)
        if all(model.fits(s) for s in sets):
            return groups
        groups *= 2
    return None


def mlpt_range_for_groups(groups: int) -> tuple[int, int]:
    """The ``max_locks_per_transaction`` values that give ``groups`` fast-path groups on PG 18+ (inclusive).

    Inverse of ``postinit.c InitializeFastPathLocks``: 1 group for 10..16 (10 is the minimum), G >= 2 groups
    for 8G+1 .. 16G; 1024 groups from 8193 up (reported as 8193..16384).
    """
    if groups <= 1:
        return (MIN_MAX_LOCKS_PER_TRANSACTION, FP_LOCK_SLOTS_PER_GROUP)
    return (FP_LOCK_SLOTS_PER_GROUP // 2 * groups + 1, FP_LOCK_SLOTS_PER_GROUP * groups)
