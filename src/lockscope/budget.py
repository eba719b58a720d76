"""The shared lock table's budget: how many entries a transaction may take before "out of shared memory".

Pure functions and one typed row (no I/O). The table holds ``max_locks_per_transaction x (MaxBackends +
max_prepared_transactions)`` lock entries (``lock.c LockManagerShmemInit``, ``NLOCKENTS``; MaxBackends from
``postinit.c InitializeMaxBackends``, :func:`lockscope.capacity.max_backends`). One transaction that needs more
entries than are free fails with SQLSTATE 53200 "out of shared memory" (``lock.c LockAcquireExtended``, the
``hash_search_with_hash_value(..., HASH_ENTER_NULL)`` of a LOCK that returns NULL).

Per major version:

- PG 13-18: the lock hashes are sized with a 10 % safety margin of the whole shared memory estimate
  (``ipci.c CalculateShmemSize``) and may grow into spare shared memory, so the nominal size is a **floor**:
  a transaction within it always fits, one beyond it may still fit.
- PG 19: the lock hashes are fixed-size (commits e1ad034809, 3e854d2ff1): the nominal size is the **limit**.

Every entry counts, whatever its lock type: relation, object, transaction ID, tuple, advisory. Locks in a backend's
fast-path slots take no entry. Other sessions' entries are taken from the same table.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import capacity
from .versions import PG18, PG19, default_max_locks_per_transaction

__all__ = [
    "DEFAULT_AUTOVACUUM_MAX_WORKERS",
    "DEFAULT_AUTOVACUUM_WORKER_SLOTS",
    "DEFAULT_MAX_CONNECTIONS",
    "DEFAULT_MAX_WAL_SENDERS",
    "DEFAULT_MAX_WORKER_PROCESSES",
    "LockTableBudget",
    "assumed_budget",
    "budget_is_floor",
]

#: ``guc_tables.c`` defaults, every major 13-19 (count).
DEFAULT_MAX_CONNECTIONS = 100
DEFAULT_MAX_WORKER_PROCESSES = 8
DEFAULT_MAX_WAL_SENDERS = 10
#: ``autovacuum_max_workers`` default (count): what MaxBackends counts before PG 18.
DEFAULT_AUTOVACUUM_MAX_WORKERS = 3
#: ``autovacuum_worker_slots`` default from PG 18 (count): what MaxBackends counts instead of the workers.
DEFAULT_AUTOVACUUM_WORKER_SLOTS = 16


def budget_is_floor(server_version_num: int) -> bool:
    """True when the nominal lock-table size is a floor (PG 13-18: the hashes may grow into spare shared memory),
    False when it is the limit (PG 19: fixed-size hashes)."""
    return server_version_num < PG19


@dataclass(frozen=True)
class LockTableBudget:
    """The shared lock table a transaction is judged against.

    :ivar server_version_num: the major judged (e.g. 190000): chooses the MaxBackends formula and the floor rule.
    :ivar max_locks_per_transaction: count.
    :ivar max_backends: MaxBackends (count), ``postinit.c InitializeMaxBackends``.
    :ivar max_prepared_transactions: count.
    :ivar held_entries: entries other sessions already hold when the budget was read (count; 0 when not read).
    :ivar source: where the settings came from, e.g. ``assumed`` or ``server 127.0.0.1:5432``.
    """

    server_version_num: int
    max_locks_per_transaction: int
    max_backends: int
    max_prepared_transactions: int
    held_entries: int = 0
    source: str = "assumed"

    @property
    def entries(self) -> int:
        """``lock.c NLOCKENTS`` (count): ``max_locks_per_transaction x (MaxBackends + max_prepared_transactions)``."""
        return capacity.shared_lock_table_entries(self.max_locks_per_transaction, self.max_backends,
                                                  self.max_prepared_transactions)

    @property
    def free_entries(self) -> int:
        """Entries left for one more transaction (count): :attr:`entries` less :attr:`held_entries`."""
        return max(self.entries - self.held_entries, 0)

    @property
    def is_floor(self) -> bool:
        """True on PG 13-18 (the nominal size is a floor), False on PG 19 (the limit), :func:`budget_is_floor`."""
        return budget_is_floor(self.server_version_num)

    def fits(self, need_entries: int) -> bool:
        """True when a transaction needing ``need_entries`` (count) fits the free entries for certain (on 13-18 one
        beyond may still fit: the floor)."""
        return need_entries <= self.free_entries

    def smallest_mlpt(self, need_entries: int) -> int:
        """The smallest ``max_locks_per_transaction`` whose table holds ``need_entries`` plus the entries held
        (count), the other settings unchanged; never below PostgreSQL's minimum (10)."""
        slots = self.max_backends + self.max_prepared_transactions
        wanted = -(-(need_entries + self.held_entries) // slots)
        return max(wanted, capacity.MIN_MAX_LOCKS_PER_TRANSACTION)

    def describe(self) -> str:
        """E.g. ``2,176 entries (max_locks_per_transaction 16 x (MaxBackends 136 + 0 prepared); PG 19: the limit)``."""
        kind = "a floor: more may fit" if self.is_floor else "the limit"
        held = f", {self.held_entries:,} held by other sessions" if self.held_entries else ""
        return (f"{self.entries:,} entries (max_locks_per_transaction {self.max_locks_per_transaction} x "
                f"(MaxBackends {self.max_backends} + {self.max_prepared_transactions} prepared); "
                f"PG {self.server_version_num // 10000}: {kind}{held})")


def assumed_budget(
    server_version_num: int,
    *,
    max_locks_per_transaction: int | None = None,
    max_connections: int = DEFAULT_MAX_CONNECTIONS,
    max_prepared_transactions: int = 0,
    autovacuum_workers: int | None = None,
    max_worker_processes: int = DEFAULT_MAX_WORKER_PROCESSES,
    max_wal_senders: int = DEFAULT_MAX_WAL_SENDERS,
) -> LockTableBudget:
    """A budget from settings (the ``--assume-*`` options), PostgreSQL's defaults for the ones not given.

    :param server_version_num: the target major (e.g. 180000).
    :param max_locks_per_transaction: None: the major's default (64 up to 18, 128 from 19).
    :param autovacuum_workers: ``autovacuum_max_workers`` before 18, ``autovacuum_worker_slots`` from 18; None: the
        default (3, resp. 16).
    :return: the budget, ``source`` ``assumed``.
    """
    mlpt = max_locks_per_transaction or default_max_locks_per_transaction(server_version_num)
    if autovacuum_workers is None:
        autovacuum_workers = (DEFAULT_AUTOVACUUM_WORKER_SLOTS if server_version_num >= PG18
                              else DEFAULT_AUTOVACUUM_MAX_WORKERS)
    backends = capacity.max_backends(server_version_num, max_connections=max_connections,
                                     autovacuum_workers=autovacuum_workers,
                                     max_worker_processes=max_worker_processes, max_wal_senders=max_wal_senders)
    return LockTableBudget(server_version_num, mlpt, backends, max_prepared_transactions)
