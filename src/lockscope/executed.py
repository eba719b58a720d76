"""Transactions run for real on lockscope's own scratch server: the measured truth of transaction footprints.

Only on a server lockscope started itself (:class:`lockscope.db.ScratchExecutor` takes a scratch server's conninfo;
the commands call this only with ``--scratch``): every execution of every transaction runs on one connection, in a
transaction that is always rolled back, and after each statement the backend's lock-table entries are read with
``pg_lock_status()`` (``sql/executed_locks.sql``: the function, so that the read takes no fast-path slot of its
own). The statements' own plan caches (prepared protocol: ``PREPARE`` once, ``EXECUTE`` per execution), the
foreign-key checks' (``ri_triggers.c``) and triggers' (PL/pgSQL) advance from one execution to the next as an
application's do. DDL runs too (a migration's lock-table needs): each statement's entries outside the fast path are
counted by lock type.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from .capacity import CapacityModel, LockRequest
from .db import ScratchExecutor
from .errors import BadInputError
from .footprint import Execution, RelationLock, relation_role
from .lockpart import lock_partition
from .rows import ExecutedLockRow, PreparedCountersRow, RelationInfoRow
from .script import Script, ScriptStatement, Transaction
from .statement import bind_params, check_statement
from .transaction import StatementStep, TransactionExecution, TransactionFootprint
from .vocab import LockMode, LockRole, LockSource, PlanCacheMode, PlanPhase

__all__ = ["execute_scripts"]


@dataclass(frozen=True)
class _Held:
    """The backend's entries after one statement: relation locks (oid, mode) -> fast-path flag, and the other
    entries outside the fast path by lock type."""

    relations: dict[tuple[int, LockMode], bool]
    database_oid: int
    shared: frozenset[int]
    entries: tuple[tuple[str, int], ...]


def execute_scripts(conninfo: str, scripts: Sequence[Script], *, protocol: str = "simple",
                    plan_cache_mode: PlanCacheMode = PlanCacheMode.AUTO, executions: int = 7,
                    assume: CapacityModel | None = None,
                    statement_timeout_ms: int = 0) -> tuple[TransactionFootprint, ...]:
    """Run a script's transactions for real, ``executions`` times, each rolled back, and measure what they hold.

    :param conninfo: a scratch server's conninfo (:meth:`lockscope.server.ScratchServer.conninfo`): statements run.
    :param scripts: the script as each execution reads it (``scripts[k - 1]`` for execution k: pgbench's random
        values are drawn per execution), all with the same statements.
    :param protocol: ``simple`` (values bound as literals) or ``prepared`` (``PREPARE`` once, ``EXECUTE`` per
        execution).
    :param plan_cache_mode: set for the connection (``SET plan_cache_mode``).
    :param executions: count, 1..100.
    :param assume: another capacity to predict flags with, or None.
    :param statement_timeout_ms: a statement taking longer fails (0: no limit).
    :return: one :class:`~lockscope.transaction.TransactionFootprint` per transaction of the script (method
        ``executed``), in script order; executions run script after script (execution k of every transaction,
        then k + 1), as an application's sessions run them.
    :raises BadInputError: bad option values.
    :raises StatementError: a statement failed (its SQLSTATE, message and text).
    :raises ConnectionFailedError: the server cannot be reached.
    """
    if protocol not in ("simple", "prepared"):
        raise BadInputError(f"unknown protocol {protocol!r}: use simple or prepared")
    if not 1 <= executions <= 100 or len(scripts) < executions:
        raise BadInputError("executions must be between 1 and 100, with a script per execution")
    shape = scripts[0].transactions
    runs: list[list[TransactionExecution]] = [[] for _ in shape]
    with ScratchExecutor(conninfo, statement_timeout_ms=statement_timeout_ms) as ex, \
            _prepared(ex, shape, protocol) as names:
        ex.run(f"SET plan_cache_mode = {plan_cache_mode.value}")
        for number in range(1, executions + 1):
            for t, txn in enumerate(scripts[number - 1].transactions):
                runs[t].append(_run_transaction(ex, txn.statements, names[t], number, assume))
        facts = ex.facts
    return tuple(TransactionFootprint(
        statements=tuple(s.text for s in txn.statements), line=txn.line, explicit=txn.explicit, method="executed",
        protocol=protocol, plan_cache_mode=plan_cache_mode, server_version_num=facts.server_version_num,
        server_version=facts.server_version, capacity=facts.capacity, executions=tuple(runs[t]), assumed=assume)
        for t, txn in enumerate(shape))


@contextlib.contextmanager
def _prepared(ex: ScratchExecutor, transactions: Sequence[Transaction],
              protocol: str) -> Iterator[list[list[str | None]]]:
    """With the prepared protocol, ``PREPARE`` every statement of every transaction once (names
    ``lockscope_x<t>_<n>``; DDL and other utility statements are run as they are); DEALLOCATE ALL on exit."""
    names: list[list[str | None]] = []
    try:
        for t, txn in enumerate(transactions):
            row: list[str | None] = []
            for n, stmt in enumerate(txn.statements):
                if protocol == "prepared" and stmt.kind in _PREPARABLE:
                    name = f"lockscope_x{t}_{n}"
                    ex.run(f"PREPARE {name} AS {stmt.text}")
                    row.append(name)
                else:
                    row.append(None)
            names.append(row)
        yield names
    finally:
        with contextlib.suppress(Exception):
            ex.run("DEALLOCATE ALL")


#: Statements ``PREPARE`` takes (``prepare.c PrepareQuery``: optimizable statements only).
_PREPARABLE = frozenset({"SelectStmt", "InsertStmt", "UpdateStmt", "DeleteStmt", "MergeStmt"})


def _run_transaction(ex: ScratchExecutor, statements: Sequence[ScriptStatement], names: Sequence[str | None],
                     number: int, assume: CapacityModel | None) -> TransactionExecution:
    """One execution: BEGIN, each statement run and the backend's entries read after it, ROLLBACK; then the
    relations named (after the rollback: the naming query's own catalog locks are not measured)."""
    held: list[_Held] = []
    phases: list[tuple[PlanPhase, str | None]] = []
    ex.begin()
    try:
        for stmt, name in zip(statements, names, strict=True):
            before = _counters(ex, name)
            if name is None:
                ex.run(_bound(ex, stmt))
            else:
                args = ", ".join("NULL" if v is None else ex.literal(v) for v in stmt.params)
                ex.run(f"EXECUTE {name}" + (f"({args})" if stmt.params else ""))
            phases.append(_phase(before, _counters(ex, name)))
            held.append(_read(ex))
    finally:
        ex.rollback()
    return _execution(ex, statements, held, phases, number, assume)


def _bound(ex: ScratchExecutor, stmt: ScriptStatement) -> str:
    """A statement's text with its ``$n`` values as literals (the simple protocol)."""
    if not stmt.params or stmt.kind not in _PREPARABLE:
        return stmt.text
    return bind_params(check_statement(stmt.text), stmt.params, ex.literal)


def _counters(ex: ScratchExecutor, name: str | None) -> tuple[int, int] | None:
    """A prepared statement's (generic_plans, custom_plans) (``pg_prepared_statement()``, PG 14+), else None."""
    if name is None:
        return None
    rows = ex.query_rows("prepared_counters", PreparedCountersRow, [name])
    if not rows or rows[0].generic_plans is None or rows[0].custom_plans is None:
        return None
    return rows[0].generic_plans, rows[0].custom_plans


def _phase(before: tuple[int, int] | None, after: tuple[int, int] | None) -> tuple[PlanPhase, str | None]:
    """The phase an execution ran in, from its prepared statement's counters (``plancache.c GetCachedPlan``: a
    generic plan's first use is its build)."""
    if before is None or after is None:
        return PlanPhase.SIMPLE, None
    if after[0] > before[0]:
        return (PlanPhase.GENERIC_BUILD, "generic") if before[0] == 0 else (PlanPhase.GENERIC_REUSE, "generic")
    return PlanPhase.CUSTOM, "custom"


def _read(ex: ScratchExecutor) -> _Held:
    rows = ex.query_rows("executed_locks", ExecutedLockRow)
    relations = {(r.relation_oid, r.mode): r.fastpath for r in rows
                 if r.locktype == "relation" and r.relation_oid is not None}
    database = next((r.database_oid for r in rows if r.locktype == "relation" and r.database_oid), 0)
    shared = frozenset(r.relation_oid for r in rows if r.locktype == "relation" and r.relation_oid is not None
                       and r.database_oid == 0)
    entries = Counter(r.locktype for r in rows if not r.fastpath)
    return _Held(relations, database or 0, shared, tuple(sorted(entries.items())))


def _execution(ex: ScratchExecutor, statements: Sequence[ScriptStatement], held: Sequence[_Held],
               phases: Sequence[tuple[PlanPhase, str | None]], number: int,
               assume: CapacityModel | None) -> TransactionExecution:
    """The measured steps: each statement's new relation locks (OID order, tables before their indexes), with the
    flags pg_lock_status() showed; the capacity model's flags beside them, simulated in that order."""
    oids = sorted({oid for h in held for oid, _ in h.relations})
    infos = {r.relation_oid: r for r in ex.query_rows("relation_info", RelationInfoRow, [oids])} if oids else {}
    model = ex.facts.capacity
    history: list[LockRequest] = []
    steps: list[StatementStep] = []
    seen: set[tuple[int, LockMode]] = set()
    for n, (stmt, h, (phase, plan_type)) in enumerate(zip(statements, held, phases, strict=True), 1):
        new = sorted((k for k in h.relations if k not in seen), key=lambda k: (_is_index(infos.get(k[0])), k[0],
                                                                               k[1].rank))
        seen |= set(new)
        requests = [LockRequest(oid, mode, oid in h.shared) for oid, mode in new]
        predicted = model.predict([*history, *requests])[len(history):]
        assumed = assume.predict([*history, *requests])[len(history):] if assume else [None] * len(new)
        history += requests
        locks = tuple(_lock(oid, mode, h.relations[(oid, mode)], pred, a, infos, model, len(history) + i, h)
                      for i, ((oid, mode), pred, a) in enumerate(zip(new, predicted, assumed, strict=True)))
        execution = Execution(number, phase, plan_type, locks)
        steps.append(StatementStep(n, stmt.text, stmt.line, execution, len(h.relations),
                                   sum(not fp for fp in h.relations.values()), h.entries))
    return TransactionExecution(number, tuple(steps))


def _is_index(info: RelationInfoRow | None) -> bool:
    return info is not None and info.relkind in ("i", "I")


def _lock(oid: int, mode: LockMode, fastpath: bool, predicted: bool, assumed: bool | None,
          infos: dict[int, RelationInfoRow], model: CapacityModel, order: int, held: _Held) -> RelationLock:
    info = infos.get(oid)
    role = relation_role(info.relkind, info.relispartition, info.parent_relkind, info.parent_relispartition) \
        if info else LockRole.OTHER
    return RelationLock(relation_oid=oid, relation=info.relation if info else str(oid), role=role, mode=mode,
                        fastpath=fastpath, predicted_fastpath=predicted, fast_path_group=model.group_of(oid),
                        order=order, assumed_fastpath=assumed, order_rule="measured",
                        lock_partition=lock_partition(0 if oid in held.shared else held.database_oid, oid),
                        source=LockSource.STATEMENT)
