"""Which of the 16 lock partitions a relation lock lives in, computed exactly as the server does (pure).

A relation lock that does not fit in the fast path lives in the main (shared) lock table, which PostgreSQL
splits into ``NUM_LOCK_PARTITIONS`` = 16 partitions (lwlock.h ``LOG2_NUM_LOCK_PARTITIONS 4``, unchanged
13..master), each guarded by one LWLock of the ``LockManager`` tranche. The partition of a lock is
``LockTagHashCode(&locktag) % 16`` (lock.h ``LockHashPartition``, used by lock.c ``LockAcquireExtended``).
``LockTagHashCode`` (lock.c) is ``get_hash_value(LockMethodLockHash, locktag)``; the lock hash is created with
``HASH_BLOBS`` and a 16-byte key, so dynahash hashes it with ``tag_hash`` = ``hash_bytes(key, 16)``
(common/hashfn.c: Bob Jenkins' lookup3 hash, 2006 version, as adapted for PostgreSQL).

The LOCKTAG of a relation lock (lock.h ``SET_LOCKTAG_RELATION``, filled by lmgr.c ``SetLocktagRelationOid``):

=======  ======  ============================================================================
offset   type    value
=======  ======  ============================================================================
0        uint32  ``locktag_field1`` = database OID (0 = InvalidOid for a shared catalog)
4        uint32  ``locktag_field2`` = relation OID
8        uint32  ``locktag_field3`` = 0
12       uint16  ``locktag_field4`` = 0
14       uint8   ``locktag_type`` = ``LOCKTAG_RELATION`` (0)
15       uint8   ``locktag_lockmethodid`` = ``DEFAULT_LOCKMETHOD`` (1)
=======  ======  ============================================================================

The server reads the key as native words (the LOCKTAG is 4-byte aligned, so hash_bytes takes its aligned
word-at-a-time path); on little-endian machines (x86-64, arm64 as PostgreSQL builds them) that equals the byte
layout above read as little-endian words, which is what this module computes. Verified against the server's own
``LockTagHashCode`` (a test-only C function, tests/c/) on PostgreSQL 18 and 15: see tests/test_lockpart.py.

Per transaction (lock.c): every main-table lock acquisition (``LockAcquireExtended`` past the fast path, one per
relation and lock mode not yet held) takes its partition LWLock exclusive once; fast-path locks take none. At
transaction end ``LockReleaseAll`` walks the 16 partitions and takes each partition LWLock that holds any of this
backend's main-table locks exactly once (exclusive), releasing all of them under it.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass

#: lwlock.h ``NUM_LOCK_PARTITIONS`` (``1 << LOG2_NUM_LOCK_PARTITIONS``, 4), every version 13..master.
NUM_LOCK_PARTITIONS = 16
#: lock.h ``LockTagType``: ``LOCKTAG_RELATION`` is the first member (0) in every version.
LOCKTAG_RELATION = 0
#: lock.h ``DEFAULT_LOCKMETHOD``.
DEFAULT_LOCKMETHOD = 1
#: hashfn.c ``hash_bytes``: initial value of the three state words is ``0x9e3779b9 + length + 3923095``.
_GOLDEN = 0x9E3779B9
_SEED = 3923095
_MASK = 0xFFFFFFFF
_OID_MAX = 0xFFFFFFFF


def _rot(x: int, k: int) -> int:
    """32-bit rotate left (hashfn.c ``rot`` = port/pg_bitutils.h ``pg_rotate_left32``)."""
    return ((x << k) | (x >> (32 - k))) & _MASK


def _mix(a: int, b: int, c: int) -> tuple[int, int, int]:
    """lookup3 ``mix``: six rounds, each ``x -= z; x ^= rot(z, k); z += y`` on a rotating triple, with
    rotations 4, 6, 8, 16, 19, 4 (hashfn.c ``mix``)."""
    a = ((a - c) & _MASK) ^ _rot(c, 4)
    c = (c + b) & _MASK
    b = ((b - a) & _MASK) ^ _rot(a, 6)
    a = (a + c) & _MASK
    c = ((c - b) & _MASK) ^ _rot(b, 8)
    b = (b + a) & _MASK
    a = ((a - c) & _MASK) ^ _rot(c, 16)
    c = (c + b) & _MASK
    b = ((b - a) & _MASK) ^ _rot(a, 19)
    a = (a + c) & _MASK
    c = ((c - b) & _MASK) ^ _rot(b, 4)
    b = (b + a) & _MASK
    return a, b, c


def _final(a: int, b: int, c: int) -> int:
    """lookup3 ``final``: seven steps ``z ^= y; z -= rot(y, k)`` cycling c, a, b, ... with rotations
    14, 11, 25, 16, 4, 14, 24; the result is c (hashfn.c ``final``)."""
    c = ((c ^ b) - _rot(b, 14)) & _MASK
    a = ((a ^ c) - _rot(c, 11)) & _MASK
    b = ((b ^ a) - _rot(a, 25)) & _MASK
    c = ((c ^ b) - _rot(b, 16)) & _MASK
    a = ((a ^ c) - _rot(c, 4)) & _MASK
    b = ((b ^ a) - _rot(a, 14)) & _MASK
    c = ((c ^ b) - _rot(b, 24)) & _MASK
    return c


def hash_bytes(key: bytes) -> int:
    """PostgreSQL's ``hash_bytes(key, len(key))`` (common/hashfn.c) as computed on a little-endian server.

    The state words a, b, c start at ``0x9e3779b9 + len + 3923095``; each whole 12-byte block adds its three
    little-endian words to a, b, c and runs ``mix``; the last 0..11 bytes are added without a mix: bytes 0-3 and
    4-7 of the tail as little-endian words (zero-padded) to a and b, bytes 8-10 to c shifted left by 8 bits (the
    lowest byte of c is "reserved for the length"; on little-endian the aligned word path and the byte-wise tail
    agree); then ``final``, whose c is the hash. ``final`` runs for every length, 0 included (unlike Jenkins'
    original). A relation LOCKTAG (16 bytes) is one block plus a 4-byte tail, which goes to a.

    :param key: the bytes hashed (any length).
    :returns: the hash, an unsigned 32-bit int (0 .. 2**32 - 1). SQL ``hashtext(s)`` of a deterministic
        collation is this value of ``s``'s bytes as a signed int4.
    """
    length = len(key)
    a = b = c = (_GOLDEN + length + _SEED) & _MASK
    whole = length - length % 12
    for pos in range(0, whole, 12):
        a = (a + int.from_bytes(key[pos:pos + 4], "little")) & _MASK
        b = (b + int.from_bytes(key[pos + 4:pos + 8], "little")) & _MASK
        c = (c + int.from_bytes(key[pos + 8:pos + 12], "little")) & _MASK
        a, b, c = _mix(a, b, c)
    if whole < length:
        tail = key[whole:].ljust(12, b"\0")
        a = (a + int.from_bytes(tail[0:4], "little")) & _MASK
        b = (b + int.from_bytes(tail[4:8], "little")) & _MASK
        c = (c + (int.from_bytes(tail[8:11], "little") << 8)) & _MASK  # c's lowest byte: "reserved for the length"
    return _final(a, b, c)


def _check_oid(value: int, what: str) -> None:
    if not 0 <= value <= _OID_MAX:
        raise ValueError(f"{what} must be an OID (0 .. 4294967295), got {value}")


def relation_locktag(database_oid: int, relation_oid: int) -> bytes:
    """The 16 bytes of a relation lock's LOCKTAG (lock.h ``SET_LOCKTAG_RELATION``), little-endian.

    :param database_oid: the database's OID; 0 for a shared catalog (lmgr.c ``SetLocktagRelationOid`` uses
        InvalidOid for ``IsSharedRelation``), which is how pg_locks shows it (``database = 0``).
    :param relation_oid: the relation's OID.
    :raises ValueError: an argument outside 0 .. 2**32 - 1.
    """
    _check_oid(database_oid, "database_oid")
    _check_oid(relation_oid, "relation_oid")
    return (database_oid.to_bytes(4, "little") + relation_oid.to_bytes(4, "little") + bytes(4)
            + bytes(2) + bytes((LOCKTAG_RELATION, DEFAULT_LOCKMETHOD)))


@functools.lru_cache(maxsize=65536)
def relation_lock_hashcode(database_oid: int, relation_oid: int) -> int:
    """``LockTagHashCode`` (lock.c) of a relation lock: ``hash_bytes`` of its 16-byte LOCKTAG.

    :returns: an unsigned 32-bit int. ``% 16`` is the lock partition; ``% 1024`` is the fast-path
        strong-lock counter (lock.c ``FastPathStrongLockHashPartition``).
    :raises ValueError: an OID outside 0 .. 2**32 - 1.
    """
    return hash_bytes(relation_locktag(database_oid, relation_oid))


def lock_partition(database_oid: int, relation_oid: int) -> int:
    """The main-lock-table partition (0..15) of a relation lock: ``LockHashPartition(LockTagHashCode(tag))``
    = hash code % ``NUM_LOCK_PARTITIONS`` (lock.h), the same for every lock mode on the relation.

    :raises ValueError: an OID outside 0 .. 2**32 - 1.
    """
    return relation_lock_hashcode(database_oid, relation_oid) % NUM_LOCK_PARTITIONS


def partition_load(locks: Iterable[tuple[int, int]]) -> tuple[int, ...]:
    """Main-table lock acquisitions per lock partition.

    :param locks: one ``(database_oid, relation_oid)`` pair per main-table relation lock acquired (one per
        relation and mode not already held, as pg_locks rows with ``fastpath = false``); database 0 for shared
        catalogs. Fast-path locks must not be passed: they touch no partition LWLock.
    :returns: 16 counts, index = partition.
    :raises ValueError: an OID outside 0 .. 2**32 - 1.
    """
    counts = [0] * NUM_LOCK_PARTITIONS
    for database_oid, relation_oid in locks:
        counts[lock_partition(database_oid, relation_oid)] += 1
    return tuple(counts)


@dataclass(frozen=True)
class PartitionTraffic:
    """Exclusive partition-LWLock acquisitions one transaction makes (lock.c).

    :ivar acquisitions: per partition (16 counts): main-table lock acquisitions (``LockAcquireExtended``).
    :ivar release_passes: per partition (16 counts, each 0 or 1): ``LockReleaseAll`` takes a partition's LWLock
        once at transaction end when this backend holds any main-table lock there.
    """

    acquisitions: tuple[int, ...]
    release_passes: tuple[int, ...]

    @property
    def per_partition(self) -> tuple[int, ...]:
        """Total exclusive acquisitions per partition (16 counts): ``n_p + (1 if n_p > 0 else 0)``."""
        return tuple(n + r for n, r in zip(self.acquisitions, self.release_passes, strict=True))

    @property
    def total(self) -> int:
        """Exclusive partition-LWLock acquisitions of the whole transaction (count)."""
        return sum(self.per_partition)

    @property
    def partitions_touched(self) -> int:
        """Partitions whose LWLock the transaction takes at all (count, 0..16)."""
        return sum(self.release_passes)

    @property
    def hottest_partition(self) -> int | None:
        """The partition with the most acquisitions (lowest index on a tie), or None when none is touched."""
        per = self.per_partition
        top = max(per)
        return per.index(top) if top > 0 else None


def transaction_traffic(load: Iterable[int]) -> PartitionTraffic:
    """Partition-LWLock acquisitions of one transaction from its :func:`partition_load`.

    ``n_p`` acquisitions (one per main-table lock in partition p, lock.c ``LockAcquireExtended``) plus one
    release pass per partition with ``n_p > 0`` (lock.c ``LockReleaseAll``, which skips partitions whose
    ``myProcLocks`` list is empty). Not counted: a lock released before transaction end (``LockRelease``, one
    more acquisition, e.g. a transient catalog lock) and the transaction-ID lock of a transaction that writes
    (``LOCKTAG_TRANSACTION``, one main-table lock in the partition of its xid).

    :param load: 16 counts (index = partition), each >= 0.
    :raises ValueError: not 16 counts, or a negative count.
    """
    counts = tuple(int(n) for n in load)
    if len(counts) != NUM_LOCK_PARTITIONS or any(n < 0 for n in counts):
        raise ValueError(f"a partition load is {NUM_LOCK_PARTITIONS} counts >= 0, got {counts}")
    return PartitionTraffic(acquisitions=counts, release_passes=tuple(int(n > 0) for n in counts))


@dataclass(frozen=True)
class PartitionRates:
    """Exclusive partition-LWLock acquisitions per second of transactions that repeat at known rates.

    :ivar acquisitions_per_s: per partition (16 values): main-table lock acquisitions/s, ``sum r x n_p``
        (lock.c ``LockAcquireExtended``).
    :ivar release_passes_per_s: per partition (16 values): ``LockReleaseAll`` passes/s, ``sum r x [n_p > 0]``.
    """

    acquisitions_per_s: tuple[float, ...]
    release_passes_per_s: tuple[float, ...]

    @property
    def lwlock_per_s(self) -> tuple[float, ...]:
        """Exclusive LWLock acquisitions/s per partition: lock acquisitions + release passes (16 values)."""
        return tuple(a + r for a, r in zip(self.acquisitions_per_s, self.release_passes_per_s, strict=True))


def partition_rates(transactions: Iterable[tuple[float, Iterable[int]]]) -> PartitionRates:
    """:func:`transaction_traffic` of each transaction times its rate, summed per partition.

    :param transactions: ``(rate, load)`` pairs: transactions/s (calls/s, each call its own transaction) and the
        transaction's :func:`partition_load` (16 counts).
    :raises ValueError: a load that is not 16 counts >= 0.
    """
    acquisitions = [0.0] * NUM_LOCK_PARTITIONS
    releases = [0.0] * NUM_LOCK_PARTITIONS
    for rate, load in transactions:
        traffic = transaction_traffic(load)
        for p in range(NUM_LOCK_PARTITIONS):
            acquisitions[p] += rate * traffic.acquisitions[p]
            releases[p] += rate if traffic.release_passes[p] else 0.0
    return PartitionRates(tuple(acquisitions), tuple(releases))
