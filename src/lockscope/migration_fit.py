"""A migration's transactions against a lock-table budget, and the two fixes verified on a scratch server.

A transaction whose need (:attr:`lockscope.migration.MigrationTransaction.peak`, plus :data:`HEADROOM_ENTRIES`)
exceeds the budget's free entries (:class:`lockscope.budget.LockTableBudget`) fails with SQLSTATE 53200 "out of
shared memory" (on PG 19 for certain; on 13-18 it may still fit: the nominal size is a floor). Two fixes:

- the largest batch that fits: the transaction cut to its first k repetitions of its dominant repeated statement
  (:func:`lockscope.migration.cut_statements`), k from its growth per repetition, the fixed part kept;
- the smallest ``max_locks_per_transaction`` that fits (:meth:`LockTableBudget.smallest_mlpt`, a restart).

Both are verified before they are printed (:func:`verify_fixes`): a scratch server of the budget's major starts
with the budget's settings (autovacuum off, so that no worker takes entries in the middle of a trial), runs the
set-up and the migration's earlier transactions (committed), holds the entries other sessions hold on the live
server with advisory locks (one entry each, never in the fast path), then runs the transaction cut to the batch
(must succeed) and cut to batch + 1 (on 19 must fail with 53200), each rolled back; when a trial disagrees, the true
boundary is searched (doubling, then bisection on the batch count: at most ``2 x ceil(log2(count + 1)) + 2`` trials,
:func:`largest_true`). A trial needs only success or failure: it reads no lock-table entries. Then the server
restarts with the smallest ``max_locks_per_transaction`` and the whole transaction must succeed (else the setting
grows until it does: doubling steps, then bisection, :func:`_verify_mlpt`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .budget import LockTableBudget, assumed_budget
from .db import ScratchExecutor, run_script
from .errors import DatabaseError, StatementError
from .migration import MigrationTransaction, cut_statements, run_statements
from .rows import LeafPartitionRow
from .script import Transaction
from .server import ScratchServer, ScratchSettings
from .versions import PG18

__all__ = ["HEADROOM_ENTRIES", "BudgetSettings", "Fit", "judge", "ran_out", "verify_fixes"]

#: Entries a statement needs beyond those it keeps (count): the catalog scans it runs while holding its new lock
#: take a catalog and its index (``genam.c systable_beginscan``: ``AccessShareLock`` on both until the scan ends),
#: in the main lock table when the fast path cannot take them (its slots full, or a strong lock's hash partition
#: in ``lock.c FastPathStrongRelationLocks``) and, for DDL, the objects it locks while it runs. Measured on PG 19:
#: a SELECT fails when 2 more entries do not fit, a CREATE TABLE ... PARTITION OF when 3 do not; the verification
#: finds the exact boundary.
HEADROOM_ENTRIES = 3
#: A trial's lock_timeout (ms): nothing else runs on the verifying server, so a wait is a job waiting for itself.
TRIAL_LOCK_TIMEOUT_MS = 60_000
#: The first key of the advisory locks that stand for a live server's held entries in a trial ('lcks').
HOLDER_ADVISORY_KEY = 0x6C636B73
#: SQLSTATE 53200 out_of_memory: "out of shared memory" from the lock table (``lock.c LockAcquireExtended``).
OUT_OF_SHARED_MEMORY = "53200"
#: The lock-table entries (count) the set-up script may hold in one transaction on the verifying server: it runs
#: before the server restarts with the budget's settings (a set-up creating 1,000 partitions in a DO block).
SETUP_ENTRIES = 60_000
#: Doubling steps tried when the smallest max_locks_per_transaction does not hold the transaction (count: up to
#: 255 above it), each a restart; the bisection after them takes as many more at most.
_MLPT_TRIES = 8


def ran_out(exc: StatementError) -> bool:
    """Whether a statement failed because the lock table was full: SQLSTATE 53200, or a function that caught it and
    raised it again with its message (pg_partman's ``run_maintenance`` re-raises every error as P0001)."""
    return exc.sqlstate == OUT_OF_SHARED_MEMORY or "out of shared memory" in str(exc)


@dataclass(frozen=True)
class BudgetSettings:
    """The settings a lock-table budget comes from, to compute it and to start a scratch server with them.

    :ivar max_locks_per_transaction: count, None: the major's default.
    :ivar max_connections: count.
    :ivar max_prepared_transactions: count.
    :ivar autovacuum_workers: ``autovacuum_max_workers`` before 18, ``autovacuum_worker_slots`` from 18; None:
        the default.
    :ivar max_worker_processes: count.
    :ivar max_wal_senders: count.
    """

    max_locks_per_transaction: int | None = None
    max_connections: int = 100
    max_prepared_transactions: int = 0
    autovacuum_workers: int | None = None
    max_worker_processes: int = 8
    max_wal_senders: int = 10

    def budget(self, server_version_num: int, *, held_entries: int = 0, source: str = "assumed") -> LockTableBudget:
        """The budget on ``server_version_num`` (:func:`lockscope.budget.assumed_budget`)."""
        b = assumed_budget(server_version_num, max_locks_per_transaction=self.max_locks_per_transaction,
                           max_connections=self.max_connections,
                           max_prepared_transactions=self.max_prepared_transactions,
                           autovacuum_workers=self.autovacuum_workers,
                           max_worker_processes=self.max_worker_processes, max_wal_senders=self.max_wal_senders)
        return LockTableBudget(b.server_version_num, b.max_locks_per_transaction, b.max_backends,
                               b.max_prepared_transactions, held_entries, source)

    def scratch(self, budget: LockTableBudget) -> ScratchSettings:
        """Scratch-server settings with the budget's lock table (autovacuum off)."""
        extra = {"max_prepared_transactions": str(self.max_prepared_transactions),
                 "max_worker_processes": str(self.max_worker_processes),
                 "max_wal_senders": str(self.max_wal_senders), "autovacuum": "off"}
        if self.autovacuum_workers is not None:
            name = "autovacuum_worker_slots" if budget.server_version_num >= PG18 else "autovacuum_max_workers"
            extra[name] = str(self.autovacuum_workers)
        return ScratchSettings(max_locks_per_transaction=budget.max_locks_per_transaction,
                               max_connections=self.max_connections, extra=extra)


@dataclass(frozen=True)
class Fit:
    """One transaction against the budget.

    :ivar transaction: the measured transaction.
    :ivar budget: the budget.
    :ivar batch: the largest batch of the dominant repetition that fits by the figures (count), None without one.
    :ivar smallest_mlpt: the smallest max_locks_per_transaction that fits by the figures (count).
    :ivar verified_batch: the largest batch that ran on the scratch server (count; -1: not even the fixed part),
        None when not verified.
    :ivar boundary_checked: one more repetition failed with 53200 on the scratch server.
    :ivar verified_mlpt: the smallest max_locks_per_transaction that ran the whole transaction, None when not
        verified.
    :ivar verified_on: e.g. ``PG 19.0 scratch``, None when not verified.
    :ivar partitions_batch: without a repeated statement, the most partitions of the transaction's
        :attr:`~lockscope.migration.MigrationTransaction.spread` one transaction can reach by the figures (count;
        the statement split by its partition key), None without a spread.
    :ivar verified_partitions: for a job of UPDATE and DELETE statements, the most leaf partitions (the first ones,
        in OID order) it ran with on the scratch server, the others detached as if its WHERE pruned them (count; -1:
        not even none), None when not verified (an INSERT routes rows: lockscope cannot split its rows).
    :ivar partitions_boundary_checked: one more leaf partition failed with out of shared memory.
    :ivar leaf_partitions: the spread's table's leaf partitions (count), None when not verified.
    """

    transaction: MigrationTransaction
    budget: LockTableBudget
    batch: int | None
    smallest_mlpt: int
    verified_batch: int | None = None
    boundary_checked: bool = False
    verified_mlpt: int | None = None
    verified_on: str | None = None
    partitions_batch: int | None = None
    verified_partitions: int | None = None
    partitions_boundary_checked: bool = False
    leaf_partitions: int | None = None

    @property
    def need(self) -> int:
        """Entries the transaction needs (count): its peak, the entries its statements take while they run
        (:attr:`~lockscope.migration.MigrationTransaction.transient`) and :data:`HEADROOM_ENTRIES`."""
        return self.transaction.peak + self.transaction.transient + HEADROOM_ENTRIES

    @property
    def exhausted(self) -> bool:
        """True when the need exceeds the free entries."""
        return not self.budget.fits(self.need)


def judge(txn: MigrationTransaction, budget: LockTableBudget) -> Fit:
    """The transaction against ``budget``, with the two fixes by the figures (not yet verified)."""
    rep = txn.dominant
    batch = None
    if rep is not None and rep.growth > 0:
        fixed = txn.peak + txn.transient + HEADROOM_ENTRIES - rep.growth * rep.count
        batch = max(math.floor((budget.free_entries - fixed) / rep.growth), 0)
        batch = min(batch, rep.count)
    spread = txn.spread
    partitions = None
    if batch is None and spread is not None and spread.per_partition > 0 and txn.writes_rows:
        fixed = txn.peak + txn.transient + HEADROOM_ENTRIES - spread.entries
        partitions = min(max(math.floor((budget.free_entries - fixed) / spread.per_partition), 0), spread.partitions)
    need = txn.peak + txn.transient + HEADROOM_ENTRIES
    return Fit(txn, budget, batch, budget.smallest_mlpt(need), partitions_batch=partitions)


def verify_fixes(fit: Fit, *, bin_dir: Path | None, settings: BudgetSettings, setup_sql: str | None,
                 before: Sequence[Transaction], txn: Transaction) -> Fit:
    """Both fixes run on a scratch server with the budget's settings (see the module docstring).

    :param bin_dir: binaries of the budget's major (None: the embedded PG 18).
    :param before: the migration's earlier transactions (committed first).
    :param txn: the transaction judged (as read from the file).
    :return: ``fit`` with the verified figures.
    :raises ScratchServerError: the server could not start.
    :raises StatementError: a statement failed with another error than 53200.
    """
    budgeted = settings.scratch(fit.budget)
    # the set-up is not the job: it runs with a lock table as large as the measuring server's, then the server
    # restarts with the budget's settings
    roomy = budgeted.replace(max_prepared_transactions=math.ceil(SETUP_ENTRIES / fit.budget.max_locks_per_transaction))\
        if setup_sql else budgeted
    with ScratchServer(bin_dir, roomy) as srv:
        if setup_sql:
            run_script(srv.conninfo(), setup_sql)
            srv.configure(budgeted)
        with ScratchExecutor(srv.conninfo()) as ex:
            version = f"PG {ex.facts.server_version} scratch"
            try:
                for t in before:
                    run_statements(ex, t.statements, commit=True)
            except StatementError as exc:
                if not ran_out(exc):
                    raise
                return fit  # an earlier transaction does not fit these settings: nothing to verify after it
            exact = not fit.budget.is_floor
        batch, checked = _verify_batch(srv, fit, txn) if fit.batch is not None else (None, False)
        parts: tuple[int | None, bool, int | None] = (None, False, None)
        if fit.partitions_batch is not None and fit.transaction.spread is not None and \
                set(fit.transaction.kinds) <= _DETACHABLE_KINDS:
            parts = _verify_partitions(srv, fit, txn, routed=fit.transaction.routes_rows)
        mlpt = _verify_mlpt(srv, fit, txn)
    return Fit(fit.transaction, fit.budget, fit.batch, fit.smallest_mlpt, batch, checked and exact, mlpt, version,
               fit.partitions_batch, parts[0], parts[1] and exact, parts[2])


#: A statement whose reach over a partitioned table is its WHERE's (verified by detaching partitions).
#: Statements whose reach over a partitioned table is verified by detaching partitions: its WHERE's (UPDATE,
#: DELETE), or the rows it routes (INSERT: a default partition takes the others' rows).
_DETACHABLE_KINDS = frozenset({"UpdateStmt", "DeleteStmt", "InsertStmt"})
#: The default partition lockscope adds on its verifying server for a routed job's trials.
_TRIAL_DEFAULT = "lockscope_trial_default"


def _verify_partitions(srv: ScratchServer, fit: Fit, txn: Transaction, *,
                       routed: bool = False) -> tuple[int | None, bool, int | None]:
    """The most leaf partitions of the spread's table the transaction runs with, the others detached (committed,
    one ``ALTER TABLE ... DETACH PARTITION`` each, on lockscope's own server) as if its WHERE pruned them, then
    attached again: (the largest that ran, one more failed, the leaf partitions); searched from the figures' number
    (:func:`largest_true`). (None, False, None) when a partition cannot be detached or attached again.

    :param routed: an INSERT routes rows: the detached partitions' rows go to a default partition (the table's, or
        one lockscope adds for the trials, its rows rolled back with them), so the job reaches one more partition
        than those kept: the number found runs (on PG 19 one or two more partitions may too: no boundary is
        claimed); only when every leaf is a partition of the table itself."""
    spread = fit.transaction.spread
    assert spread is not None and fit.partitions_batch is not None
    conninfo, held = srv.conninfo(), fit.budget.held_entries
    with ScratchExecutor(conninfo) as ex:
        try:
            leaves = ex.query_rows("migration_leaf_partitions", LeafPartitionRow, [spread.parent])
        except DatabaseError:
            return None, False, None
        default = next((leaf for leaf in leaves if leaf.bound == "DEFAULT"), None)
        leaves = [leaf for leaf in leaves if leaf.bound != "DEFAULT"]
        if routed and (any(leaf.parent != spread.parent for leaf in leaves) or not leaves):
            return None, False, None
        added = routed and default is None
        if added:
            schema = spread.parent.rsplit(".", 1)[0]
            ex.run(f"CREATE TABLE {schema}.{_TRIAL_DEFAULT} PARTITION OF {spread.parent} DEFAULT")
    try:
        found, boundary, count = _search_partitions(conninfo, held, fit, txn, leaves)
        # routed: the default partition's extra work makes the found number safe, not the boundary
        return found, boundary and not routed, count
    finally:
        if added:
            with ScratchExecutor(conninfo) as ex:
                ex.run(f"DROP TABLE {schema}.{_TRIAL_DEFAULT}")


def _search_partitions(conninfo: str, held: int, fit: Fit, txn: Transaction,
                       leaves: Sequence[LeafPartitionRow]) -> tuple[int | None, bool, int | None]:
    """:func:`_verify_partitions`' search over ``leaves`` (detached after the first k)."""
    assert fit.partitions_batch is not None
    tried: dict[int, bool] = {}

    def ok(k: int) -> bool:
        if k not in tried:
            with ScratchExecutor(conninfo) as ex:
                detached: list[LeafPartitionRow] = []
                try:
                    for leaf in leaves[k:]:
                        ex.run(f"ALTER TABLE {leaf.parent} DETACH PARTITION {leaf.relation}")
                        detached.append(leaf)
                    tried[k] = _trial(conninfo, held, txn.statements)
                finally:
                    for leaf in detached:
                        ex.run(f"ALTER TABLE {leaf.parent} ATTACH PARTITION {leaf.relation} {leaf.bound}")
        return tried[k]

    try:
        found = largest_true(ok, fit.partitions_batch, len(leaves))
    except StatementError:
        return None, False, None
    return found, found + 1 in tried and not tried[found + 1], len(leaves)


def _trial(conninfo: str, held: int, statements: Sequence[object]) -> bool:
    """Run the statements in one transaction, rolled back: True when they ran, False on 53200."""
    with ScratchExecutor(conninfo) as ex, ScratchExecutor(conninfo) as holder:
        ex.run(f"SET lock_timeout = {TRIAL_LOCK_TIMEOUT_MS}")  # a trial never waits forever (55P03 is an error)
        if held:
            # the two-int4 key space, first key lockscope's own: never the key of a job's advisory lock (a bigint
            # key is another LOCKTAG, advisory.c), which would wait for the holder forever
            holder.run(f"SELECT count(pg_catalog.pg_advisory_lock({HOLDER_ADVISORY_KEY}, k)) "
                       f"FROM generate_series(1, {int(held)}) AS k")
        try:
            run_statements(ex, statements, commit=False)  # type: ignore[arg-type]
        except StatementError as exc:
            if not ran_out(exc):
                raise
            return False
    return True


def _verify_batch(srv: ScratchServer, fit: Fit, txn: Transaction) -> tuple[int, bool]:
    """The largest batch that runs, searched from the figures' batch; True when the one after it failed."""
    rep = fit.transaction.dominant
    assert rep is not None and fit.batch is not None
    conninfo, held = srv.conninfo(), fit.budget.held_entries
    tried: dict[int, bool] = {}

    def ok(k: int) -> bool:
        if k not in tried:
            tried[k] = _trial(conninfo, held, cut_statements(txn.statements, rep.positions, k))
        return tried[k]

    found = largest_true(ok, fit.batch, rep.count)
    return found, found + 1 in tried and not tried[found + 1]


def largest_true(ok: Callable[[int], bool], guess: int, cap: int) -> int:
    """The largest k in 0..cap with ``ok(k)`` (``ok`` true up to a point, false after), starting at ``guess``:
    its neighbour first, then doubling steps, then bisection. -1 when ``ok(0)`` is false. At most
    ``2 x ceil(log2(cap + 1)) + 2`` distinct k are tried (``ok`` may be asked a k twice: memoize it)."""
    guess = min(max(guess, 0), cap)
    step = 1
    if ok(guess):
        lo, hi = guess, -1
        while hi < 0:
            nxt = min(lo + step, cap)
            if nxt == lo:
                return lo
            if ok(nxt):
                lo, step = nxt, step * 2
            else:
                hi = nxt
    else:
        lo, hi = -1, guess
        while lo < 0:
            nxt = max(hi - step, 0)
            if ok(nxt):
                lo = nxt
            elif nxt == 0:
                return -1
            else:
                hi, step = nxt, step * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if ok(mid) else (lo, mid)
    return lo


def _verify_mlpt(srv: ScratchServer, fit: Fit, txn: Transaction) -> int | None:
    """The smallest max_locks_per_transaction, from the figures' one up, that runs the whole transaction: the
    figures' first, then steps doubling from 1 (at most :data:`_MLPT_TRIES` restarts), then bisection between the
    last that failed and the first that ran. None when none ran."""
    tried: dict[int, bool] = {}

    def ok(mlpt: int) -> bool:
        if mlpt not in tried:
            srv.reconfigure(max_locks_per_transaction=mlpt)
            tried[mlpt] = _trial(srv.conninfo(), fit.budget.held_entries, txn.statements)
        return tried[mlpt]

    failed = good = fit.smallest_mlpt
    if ok(good):
        return good
    step = 1
    for _ in range(_MLPT_TRIES):
        failed, good = good, good + step
        if ok(good):
            break
        step *= 2
    else:
        return None
    while good - failed > 1:
        mid = (failed + good) // 2
        failed, good = (failed, mid) if ok(mid) else (mid, good)
    return good
