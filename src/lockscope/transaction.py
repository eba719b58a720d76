"""Transaction footprints: the relation locks a transaction holds, statement after statement, execution after
execution.

PostgreSQL keeps every relation lock until the transaction ends (``lock.c LockReleaseAll`` at commit or abort), and
a backend's fast-path slots (``lock.c FAST_PATH_REL_GROUP``: 16 per group) and the shared lock table fill with the
union of the transaction's statements: five lookups that each fit the fast path alone can hold 50 relation locks
together, 34 in the main lock table. And an application runs its transaction many times per backend, so its
prepared statements, its foreign-key checks' and triggers' queries go through their plan caches' phases (custom
plans, the generic plan's build at the 6th call, its reuse).

On a user's server (:func:`measure_transaction`) lockscope never executes a statement: each execution of the
transaction is one READ ONLY probe transaction, rolled back, in which every statement is EXPLAINed (or, prepared,
EXPLAIN EXECUTEd) in turn, so that the server takes each statement's locks in order and keeps them, as it would for
real; after each statement the backend's locks are read (``pg_lock_status()``, paced as every pg_locks read), and
what a real execution adds to its EXPLAIN (:mod:`lockscope.execlocks`) is probed or modelled in place. The
fast-path flags are the capacity model's (``capacity.simulate_fast_path``), simulated over the whole
transaction's lock requests in order, the locks the probe cannot take (sequences, the target's indexes while rows
are written) included.

On lockscope's own scratch server (:mod:`lockscope.executed`) the transaction runs for real, rolled back: the
measured truth, with the same result type.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .capacity import WEAK_LOCK_MODES, CapacityModel, LockRequest
from .db import Session
from .errors import BadInputError, StatementError, UnsupportedStatementError
from .execlocks import DERIVATION_CATALOG, RowOverlay
from .footprint import (
    Execution,
    ExplainAccess,
    RelationLock,
    TransactionProbe,
    explain_access,
    open_transaction_probes,
)
from .lockpart import NUM_LOCK_PARTITIONS
from .script import Transaction
from .statement import check_statement
from .vocab import FootprintSource, PlanCacheMode

__all__ = ["STATEMENTS_ONLY_CAVEAT", "StatementStep", "TransactionExecution", "TransactionFootprint",
           "measure_transaction"]

#: What a view of statements alone (pg_stat_statements) misses, in the words audit and forecast use when it is all
#: they have (each adds how to measure the transactions instead).
STATEMENTS_ONLY_CAVEAT = (
    "a transaction may hold more than its statements: the statements of one transaction accumulate their relation "
    "locks until it ends (lock.c LockReleaseAll), and a write's execution takes locks its EXPLAIN does not "
    "(foreign-key checks, triggers, sequences, partition routing), so per-statement figures are lower bounds of "
    "what a transaction holds")


@dataclass(frozen=True)
class StatementStep:
    """One statement of one execution of a transaction.

    :ivar number: the statement's place in the transaction (1-based).
    :ivar statement: its text as sent (pgbench variables as ``$n``).
    :ivar line: its line in the script (1-based; 0 when not from a file).
    :ivar execution: what the statement took: its own locks, a reused plan's executor index locks and its
        execution locks (:class:`lockscope.footprint.Execution`). Each lock's ``fastpath`` is the transaction's
        answer: measured for an executed run, the capacity model's simulation over the transaction so far for a
        probed one (the probe's own backend lacks the locks it cannot take); ``predicted_fastpath`` is always the
        simulation.
    :ivar held_after: relation locks the transaction holds after this statement (count).
    :ivar main_after: of which in the main lock table (count).
    :ivar lock_entries: executed runs only: the lock-table entries the backend holds outside the fast path after
        this statement, by pg_locks ``locktype`` (relation, object, transactionid, ...; count each).
    """

    number: int
    statement: str
    line: int
    execution: Execution
    held_after: int
    main_after: int
    lock_entries: tuple[tuple[str, int], ...] = ()

    @property
    def locks(self) -> tuple[RelationLock, ...]:
        """The relation locks this statement added, in acquisition order."""
        return self.execution.real_locks


@dataclass(frozen=True)
class TransactionExecution:
    """One execution of a transaction (the k-th in the backend).

    :ivar number: 1-based.
    :ivar steps: one per statement, in order.
    """

    number: int
    steps: tuple[StatementStep, ...]

    @property
    def locks(self) -> tuple[RelationLock, ...]:
        """Every relation lock the transaction holds at its end, in acquisition order."""
        return tuple(lk for step in self.steps for lk in step.locks)

    @property
    def lock_count(self) -> int:
        """Relation locks held at the end (count)."""
        return len(self.locks)

    @property
    def main_table_count(self) -> int:
        """Of which in the main lock table (count; the flags of :attr:`StatementStep.execution`'s locks)."""
        return sum(not lk.fastpath for lk in self.locks)

    @property
    def unknowns(self) -> tuple[str, ...]:
        """Why the transaction's locks in this execution are not known exactly (every statement's
        :attr:`~lockscope.footprint.Execution.unknowns`, once each); empty when they are."""
        return tuple(dict.fromkeys(u for step in self.steps for u in step.execution.unknowns))

    @property
    def exact(self) -> bool:
        """True when lockscope states the transaction's locks in this execution exactly."""
        return not self.unknowns

    @property
    def first_spill(self) -> int | None:
        """The statement (1-based) at which the first lock goes to the main lock table, None when none does."""
        return next((s.number for s in self.steps if any(not lk.fastpath for lk in s.locks)), None)

    @property
    def partition_load(self) -> tuple[int, ...]:
        """Main-table locks per lock partition: 16 counts (``lock.c LockHashPartition``)."""
        load = [0] * NUM_LOCK_PARTITIONS
        for lk in self.locks:
            if not lk.fastpath:
                load[lk.lock_partition] += 1
        return tuple(load)


@dataclass(frozen=True)
class TransactionFootprint:
    """The footprint of one transaction of a script.

    :ivar statements: the statements' texts, in order.
    :ivar line: the script line it starts at (1-based).
    :ivar explicit: True for a ``BEGIN ... COMMIT`` block, False for a statement in autocommit.
    :ivar method: ``explain`` (probed on any server, never executed) or ``executed`` (run for real on a scratch
        server, rolled back).
    :ivar protocol: ``simple`` or ``prepared``.
    :ivar plan_cache_mode: the setting every execution ran with.
    :ivar server_version_num: the server's version.
    :ivar server_version: e.g. ``18.6``.
    :ivar capacity: the server's fast-path capacity.
    :ivar assumed: the ``--assume-*`` capacity, or None.
    :ivar executions: one per execution.
    :ivar notes: what lockscope could not derive (from every statement, once each).
    """

    statements: tuple[str, ...]
    line: int
    explicit: bool
    method: str
    protocol: str
    plan_cache_mode: PlanCacheMode
    server_version_num: int
    server_version: str
    capacity: CapacityModel
    executions: tuple[TransactionExecution, ...]
    assumed: CapacityModel | None = None
    notes: tuple[str, ...] = ()

    @property
    def spilled(self) -> bool:
        """True when an execution holds a lock in the main lock table."""
        return any(e.main_table_count for e in self.executions)

    @property
    def unknowns(self) -> tuple[str, ...]:
        """Why some execution's locks are not known exactly (every execution's, once each); empty when every
        execution is exact."""
        return tuple(dict.fromkeys(u for e in self.executions for u in e.unknowns))

    @property
    def exact(self) -> bool:
        """True when lockscope states every execution's locks exactly."""
        return not self.unknowns


def measure_transaction(session: Session, transactions: Sequence[Transaction], *, protocol: str = "simple",
                        plan_cache_mode: PlanCacheMode = PlanCacheMode.AUTO, executions: int = 7,
                        assume: CapacityModel | None = None, read_rows: bool = True,
                        announce: Callable[[int], None] | None = None) -> TransactionFootprint:
    """The footprint of one transaction on the session's server, EXPLAIN only (see the module docstring).

    :param transactions: the transaction as each execution sends it (``transactions[k - 1]`` for execution k: a
        pgbench script draws its random values per execution), all with the same statements.
    :param protocol: ``simple`` (the statements' values bound as literals, planned every time) or ``prepared``
        (each statement PREPAREd once, EXPLAIN EXECUTEd per execution).
    :param plan_cache_mode: set in each probe transaction (it governs the foreign-key checks' plans too).
    :param executions: the transaction's executions to probe (count, 1..100).
    :param read_rows: read the rows the writes reach by lockscope's own key lookups (False: none; an execution
        whose rows matter is then labelled unknown).
    :param announce: called once, before the first pg_locks read, with the most reads the measurement will make
        (count; every execution is derived first).
    :return: a :class:`TransactionFootprint` with method ``explain``.
    :raises BadInputError: bad option values.
    :raises UnsupportedStatementError: a statement lockscope does not probe (DDL, COPY, SET, ...).
    :raises StatementError: the server rejected a statement.
    :raises LockBlockedError: another session holds a conflicting lock longer than lock_timeout.
    """
    if not 1 <= executions <= 100:
        raise BadInputError("executions must be between 1 and 100")
    if not transactions or len(transactions) < executions:
        raise BadInputError("a transaction per execution is needed")
    first = transactions[0]
    for stmt in first.statements:
        if stmt.kind not in ("SelectStmt", "InsertStmt", "UpdateStmt", "DeleteStmt", "MergeStmt"):
            word = stmt.original.split(None, 1)[0].upper() if stmt.original else stmt.kind
            raise UnsupportedStatementError(
                f"line {stmt.line}: {word} is not probed on a server of yours (lockscope never runs it there): "
                "measure a migration on a scratch server (--scratch --setup)")
    facts = session.facts
    runs: list[TransactionExecution] = []
    notes: list[str] = []
    statements = [(s.text, s.params) for s in first.statements]
    mode = plan_cache_mode if protocol == "prepared" else PlanCacheMode(facts.plan_cache_mode)
    backend: set[str] = set()  # what the probe backend built once (a partition's constraint, ...)
    access = _transaction_access(session, first)
    with session.catalog_memo(DERIVATION_CATALOG), access.explaining(session), \
            open_transaction_probes(session, statements, protocol=protocol, mode=mode, assume=assume,
                                    read_rows=read_rows and access.helper is None) as probes:
        for number in range(1, executions + 1):  # derived first (catalog reads, key lookups), so the reads are known
            overlay = RowOverlay()  # the rows each statement writes, for the next ones' key lookups
            for probe, stmt in zip(probes, transactions[number - 1].statements, strict=True):
                probe.prepare(number, stmt.params, overlay, backend)
        if announce is not None:
            announce(sum(p.read_bound([t.statements[n].params for t in transactions[:executions]])
                         for n, p in enumerate(probes)))
        for number in range(1, executions + 1):
            steps = _probe_execution(session, probes, transactions[number - 1], number, mode)
            runs.append(TransactionExecution(number, steps))
            notes += [n for s in steps for n in s.execution.notes]
    return TransactionFootprint(
        statements=tuple(s.text for s in first.statements), line=first.line, explicit=first.explicit,
        method="explain", protocol=protocol, plan_cache_mode=mode,
        server_version_num=facts.server_version_num, server_version=facts.server_version, capacity=facts.capacity,
        executions=tuple(runs), assumed=assume, notes=tuple(dict.fromkeys(notes)))


def _transaction_access(session: Session, transaction: Transaction) -> ExplainAccess:
    """How the transaction's statements are probed (:func:`lockscope.footprint.explain_access`, catalog reads
    only): as they are, or all through the EXPLAIN helper when the role may not EXPLAIN some of them.

    :raises StatementError: 42501 when some statement could only be derived (a transaction's footprint is
        measured: its statements' locks accumulate in one backend), with the GRANTs that lift it; nothing is sent.
    """
    accesses = [(stmt, explain_access(session, check_statement(stmt.text))) for stmt in transaction.statements]
    denied = [(stmt, a) for stmt, a in accesses if a.source is FootprintSource.DERIVED]
    if denied:
        grants = " ".join(dict.fromkeys(g.grant for _, a in denied for g in a.gaps))
        lines = ", ".join(str(stmt.line) for stmt, _ in denied)
        raise StatementError(f"42501: this role may not EXPLAIN the statement(s) on line(s) {lines}, and a "
                             f"transaction's footprint is measured, never derived: {grants} (or the EXPLAIN helper, "
                             "docs/privileges.md; lockscope footprint derives one statement's)", sqlstate="42501")
    return next((a for _, a in accesses if a.helper is not None), ExplainAccess(FootprintSource.MEASURED))


def _probe_execution(session: Session, probes: Sequence[TransactionProbe], transaction: Transaction, number: int,
                     mode: PlanCacheMode) -> tuple[StatementStep, ...]:
    """One execution: the statements and the queries their executions run stepped through their plan caches in one
    probe transaction (no pg_locks read), then each statement's locks from its phases' measurements, accumulated."""
    history: list[LockRequest] = []
    steps: list[StatementStep] = []
    held = main = 0
    with session.probe_transaction(paced=False, plan_cache_mode=mode):
        for probe, stmt in zip(probes, transaction.statements, strict=True):
            probe.step(number, stmt.params)
    for n, (probe, stmt) in enumerate(zip(probes, transaction.statements, strict=True), 1):
        execution, requests = probe.run(number, history)
        execution = _as_modelled(execution)
        history += requests
        held += execution.real_lock_count
        main += sum(not lk.fastpath for lk in execution.real_locks)
        steps.append(StatementStep(n, stmt.text, stmt.line, execution, held, main))
    return tuple(steps)


def _as_modelled(execution: Execution) -> Execution:
    """The execution with every lock's ``fastpath`` the simulated one: in a probe, the backend lacks the locks it
    cannot take (a sequence's, the target's indexes while rows are written), so its own flags are not the
    transaction's."""
    def modelled(locks: tuple[RelationLock, ...]) -> tuple[RelationLock, ...]:
        return tuple(dataclasses.replace(lk, fastpath=lk.predicted_fastpath) for lk in locks)

    unknowns = execution.unknowns
    weak = [lk for lk in execution.locks if lk.mode in WEAK_LOCK_MODES]
    guessed = [lk for lk in execution.locks if lk.order_rule in ("unknown", "unmodelled")]
    if guessed and any(lk.predicted_fastpath for lk in weak) and any(not lk.predicted_fastpath for lk in weak):
        # the fast path fills up within the statement's own locks, in an order lockscope guessed
        unknowns = (*unknowns, "the order the statement takes its locks in is not modelled (no query tree): which "
                    "of them the fast path still holds is an estimate")
    return dataclasses.replace(execution, locks=modelled(execution.locks),
                               executor_index_locks=modelled(execution.executor_index_locks),
                               execution_locks=modelled(execution.execution_locks), unknowns=unknowns)
