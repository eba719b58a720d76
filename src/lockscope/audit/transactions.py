"""Transactions in an audit: what the statements that run in one transaction hold together.

PostgreSQL keeps every relation lock until the transaction ends (``lock.c LockReleaseAll`` at commit or abort), so
the statements of one transaction share one backend's fast-path slots (``lock.c FAST_PATH_REL_GROUP``: 16 per
group) and five lookups that each fit alone can put half their locks in the main lock table together; and a
statement's execution takes locks its EXPLAIN never does (foreign-key checks and their cached plans, triggers,
sequences, tuple routing: :mod:`lockscope.execlocks`).

- ``audit --scratch --setup FILE --workload FILE``: the workload script is read into transactions as pgbench runs it
  with ``-M prepared`` (:func:`lockscope.script.read_script`; ``BEGIN ... COMMIT`` blocks, every other statement a
  transaction of its own), and every transaction is measured on the scratch server, execution after execution
  (:data:`EXECUTIONS`: the plan caches' custom plans, the generic plan's build at the 6th, its reuse): EXPLAIN only
  (:func:`lockscope.transaction.measure_transaction`, the model) and run for real, rolled back
  (:func:`lockscope.executed.execute_scripts`, the truth the findings quote). Findings: ``transaction-spill`` (its
  statements fit alone and spill together), ``execution-locks`` (a statement whose execution locks spill where its
  EXPLAIN does not) and ``fk-generic-plan`` (a foreign-key check whose cached generic plan, ``ri_triggers.c``
  through SPI and ``plancache.c``, locks every partition of the referenced table).
- pg_stat_statements only (``--dsn``, ``--demo``): statements, not transactions, are known; the report says that a
  transaction may hold more than its statements (:data:`TRANSACTION_CAVEAT`), and where the workload reader's
  pg_locks snapshots (``audit_held_locks.sql``) caught backends holding more main-table locks than their current
  statement's footprint, ``transaction-held`` says how many (:func:`held_transactions`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from ..capacity import CapacityModel, LockRequest, mlpt_range_for_groups, smallest_fitting_groups
from ..db import Session
from ..errors import BadInputError, DatabaseError, LockBlockedError, UnsupportedStatementError
from ..executed import execute_scripts
from ..footprint import Execution, RelationLock
from ..script import Script, read_script
from ..text import plural
from ..transaction import (
    STATEMENTS_ONLY_CAVEAT,
    StatementStep,
    TransactionExecution,
    TransactionFootprint,
    measure_transaction,
)
from ..versions import PG18
from ..vocab import LockRole, LockSource, PlanCacheMode, PlanPhase
from ..workload.phases import query_fingerprint
from ..workload.probes import StatementAudit
from ..workload.statements import StatementRates, Workload
from .findings import HIGH_MAIN_PER_S, Finding

__all__ = ["EXECUTIONS", "SCRIPT_PROTOCOL", "TRANSACTION_CAVEAT", "HeldStatement", "HeldTransactions",
           "ScriptWorkload", "TransactionAudit", "TransactionsSeen", "audit_transactions",
           "held_transaction_findings", "held_transactions", "measure_script_transactions", "transaction_findings"]

#: How the audit's pgbench sends the workload (``-M prepared``), and so how its transactions are measured.
SCRIPT_PROTOCOL = "prepared"
#: Executions of each transaction measured: five custom plans, the generic plan's build at the 6th, two reuses.
EXECUTIONS = 8
#: What the report says when only pg_stat_statements is known (statements, not transactions).
TRANSACTION_CAVEAT = (
    f"{STATEMENTS_ONLY_CAVEAT}; measure the application's transactions with lockscope footprint -f FILE (BEGIN ... "
    "COMMIT) or lockscope audit --scratch --setup FILE --workload FILE")


@dataclass(frozen=True)
class ScriptWorkload:
    """The ``--workload`` script of a scratch audit and the scratch server it runs on.

    :ivar text: the pgbench script.
    :ivar conninfo: the scratch server's conninfo (:meth:`lockscope.server.ScratchServer.conninfo`): its
        transactions run there for real, rolled back; never a user's server.
    :ivar where: the file name, for messages.
    :ivar statement_timeout_ms: a statement running longer fails (0: no limit).
    """

    text: str
    conninfo: str
    where: str = ""
    statement_timeout_ms: int = 0


@dataclass(frozen=True)
class TransactionAudit:
    """One transaction of the workload script, measured on the scratch server.

    :ivar model: its footprint by EXPLAIN only (what lockscope derives on a server of yours).
    :ivar truth: its footprint run for real, rolled back: the measured truth the findings quote.
    :ivar transactions_per_s: how often the workload ran it in the interval: the least pg_stat_statements
        calls/s among its statements (matched by fingerprint), None when none was found.
    """

    model: TransactionFootprint
    truth: TransactionFootprint
    transactions_per_s: float | None = None

    @property
    def peak(self) -> TransactionExecution:
        """The executed run's execution with the most main-table locks (then locks; the earliest of equals)."""
        return max(self.truth.executions, key=lambda e: (e.main_table_count, e.lock_count))

    @property
    def steady(self) -> TransactionExecution:
        """The executed run's last execution: the plan caches settled (a reused generic plan, or custom plans)."""
        return self.truth.executions[-1]

    def model_execution(self, number: int) -> TransactionExecution:
        """The model's execution ``number`` (1-based)."""
        return self.model.executions[number - 1]


@dataclass(frozen=True)
class HeldStatement:
    """A statement whose backends held more relation locks than its own footprint (the pg_locks snapshots).

    :ivar queryid: pg_stat_statements queryid.
    :ivar query: its text on one line.
    :ivar footprint_locks: the most relation locks one of its plans takes (count: custom, generic, reuse).
    :ivar footprint_main: the most main-table locks one of them takes (count).
    :ivar held_locks: relation locks its backend held then (count; the observation with the most main-table locks).
    :ivar held_main: main-table locks its backend held then (count).
    :ivar observations: snapshot observations of its backends holding more than its footprint (count).
    """

    queryid: int
    query: str
    footprint_locks: int
    footprint_main: int
    held_locks: int
    held_main: int
    observations: int


@dataclass(frozen=True)
class HeldTransactions:
    """What the workload reader's pg_locks snapshots show of transactions: backends holding more than the statement
    they run.

    :ivar statements: the statements seen in such backends, most main-table locks held first.
    :ivar snapshots: pg_locks snapshots taken during the interval (count).
    """

    statements: tuple[HeldStatement, ...]
    snapshots: int

    @property
    def most_main(self) -> int:
        """The most main-table locks a backend was seen holding (count)."""
        return max(s.held_main for s in self.statements)


# -- measuring the workload script's transactions (scratch server only) ----------------------------------------
def measure_script_transactions(session: Session, workload: ScriptWorkload, statements: Sequence[StatementAudit] = (),
                                *, executions: int = EXECUTIONS) -> tuple[tuple[TransactionAudit, ...],
                                                                          tuple[str, ...]]:
    """Every transaction of the workload script, measured on the scratch server (see the module docstring).

    :param session: a session on the scratch server (the EXPLAIN-only probes).
    :param statements: the audited pg_stat_statements statements (their calls/s give each transaction's rate).
    :param executions: executions of each transaction (count, 1..100).
    :return: (the transactions measured both ways, in script order; notes on what was not measured and why).
    :raises ConnectionFailedError: the scratch server cannot be reached.
    """
    try:
        scripts = [read_script(workload.text, protocol=SCRIPT_PROTOCOL, where=workload.where, execution=k)
                   for k in range(1, executions + 1)]
    except BadInputError as exc:
        return (), (f"transactions not measured: {exc}",)
    mode = PlanCacheMode(session.facts.plan_cache_mode)
    notes: list[str] = []
    models: list[TransactionFootprint | None] = []
    for t, txn in enumerate(scripts[0].transactions):
        try:
            models.append(measure_transaction(session, [s.transactions[t] for s in scripts], protocol=SCRIPT_PROTOCOL,
                                              plan_cache_mode=mode, executions=executions))
        except (UnsupportedStatementError, LockBlockedError, DatabaseError) as exc:
            notes.append(f"transaction at line {txn.line}: not measured ({exc})")
            models.append(None)
    truths = _executed(workload, scripts, mode, executions, notes)
    rates = _rates(statements)
    out = tuple(TransactionAudit(m, t, _rate(m, rates)) for m, t in zip(models, truths, strict=True)
                if m is not None and t is not None)
    return out, tuple(notes)


def _executed(workload: ScriptWorkload, scripts: Sequence[Script], mode: PlanCacheMode, executions: int,
              notes: list[str]) -> list[TransactionFootprint | None]:
    """The script's transactions run for real on one connection, as one backend of the application runs them
    (their statements' and foreign-key checks' plan caches shared); when a statement fails, each transaction on
    its own, the failing ones noted."""
    def run(part: Sequence[Script]) -> tuple[TransactionFootprint, ...]:
        return execute_scripts(workload.conninfo, part, protocol=SCRIPT_PROTOCOL, plan_cache_mode=mode,
                               executions=executions, statement_timeout_ms=workload.statement_timeout_ms)

    try:
        return list(run(scripts))
    except DatabaseError:
        pass
    out: list[TransactionFootprint | None] = []
    for t, txn in enumerate(scripts[0].transactions):
        try:
            out.append(run([Script((s.transactions[t],), s.pgbench) for s in scripts])[0])
        except DatabaseError as exc:
            notes.append(f"transaction at line {txn.line}: not run on the scratch server ({exc})")
            out.append(None)
    return out


def _rates(statements: Sequence[StatementAudit]) -> dict[str, float]:
    """pg_stat_statements calls/s by fingerprint (constants and ``$n`` alike ignored)."""
    out: dict[str, float] = {}
    for s in statements:
        fp = query_fingerprint(s.query) if s.query else None
        if fp is not None:
            out[fp] = out.get(fp, 0.0) + s.calls_per_s
    return out


def _rate(fp: TransactionFootprint | None, rates: dict[str, float]) -> float | None:
    """A transaction's rate: the least calls/s among its statements found in pg_stat_statements (each runs once per
    transaction; one shared with other transactions runs more often)."""
    if fp is None:
        return None
    found = [rates[p] for text in fp.statements if (p := query_fingerprint(text)) is not None and p in rates]
    return min(found) if found else None


# -- findings -----------------------------------------------------------------------------------------------------
def _short(text: str, limit: int = 70) -> str:
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 3] + "..."


def _ranges(numbers: Sequence[int]) -> str:
    """``1-6, 8`` for [1, 2, 3, 4, 5, 6, 8]."""
    out: list[str] = []
    for n in numbers:
        if out and n == int(out[-1].split("-")[-1]) + 1:
            out[-1] = f"{out[-1].split('-')[0]}-{n}"
        else:
            out.append(str(n))
    return ", ".join(out)


def _main(locks: Sequence[RelationLock]) -> int:
    return sum(not lk.fastpath for lk in locks)


def _alone_main(step: StatementStep, model: CapacityModel) -> int:
    """Main-table locks of the locks a statement added, taken alone from an empty fast-path array."""
    return sum(not f for f in model.predict([LockRequest(lk.relation_oid, lk.mode) for lk in step.locks]))


def _mlpt_fix(locks: Sequence[RelationLock], model: CapacityModel) -> str:
    """The smallest max_locks_per_transaction whose fast-path groups fit these locks' relations (PG 18+:
    ``capacity.smallest_fitting_groups`` with the real OIDs, ``postinit.c InitializeFastPathLocks``), as a fix;
    "" when even 1024 groups do not fit."""
    oids = {lk.relation_oid for lk in locks if lk.mode.weak}
    groups = smallest_fitting_groups(model.server_version_num, [oids])
    if groups is None:
        return ""
    low, high = mlpt_range_for_groups(groups)
    where = "" if model.server_version_num >= PG18 else " on PostgreSQL 18 (13-17 have 16 slots whatever the setting)"
    return (f"max_locks_per_transaction = {high}{where}: {plural(groups, 'fast-path group')} hold its relations "
            f"(the smallest setting that gives them: {low})")


def _touched(locks: Sequence[RelationLock]) -> str:
    """The tables among the locks and how many of the locks are indexes, as text."""
    tables = list(dict.fromkeys(lk.relation for lk in locks if not lk.role.is_index and lk.role is not LockRole.OTHER))
    indexes = sum(lk.role.is_index for lk in locks)
    shown = ", ".join(tables[:5]) + (f" and {len(tables) - 5} more" if len(tables) > 5 else "")
    return f"{shown}: {indexes} of its {len(locks)} locks are indexes"


def _transaction_spill(ta: TransactionAudit, model: CapacityModel) -> Finding | None:
    """``transaction-spill``: a multi-statement transaction holds more main-table locks than its statements alone."""
    peak, n, total = ta.peak, len(ta.truth.statements), len(ta.truth.executions)
    alone = [_alone_main(s, model) for s in peak.steps]
    if n < 2 or not peak.main_table_count or peak.main_table_count <= sum(alone):
        return None
    spilling = [e.number for e in ta.truth.executions if e.main_table_count]
    steady, m = ta.steady, ta.model_execution(peak.number)
    rate = (ta.transactions_per_s or 0.0) * steady.main_table_count
    title = (f"the transaction of these {n} statements holds {peak.lock_count} locks, {peak.main_table_count} in the "
             f"main lock table, from statement {peak.first_spill} on"
             + ("; each statement fits the fast path alone" if not any(alone) else ""))
    evidence = (f"run on the scratch server (rolled back), execution {peak.number} of {total}: held/main after each "
                f"statement {', '.join(f'{s.held_after}/{s.main_after}' for s in peak.steps)}; alone, its statements "
                f"put {sum(alone)} in the main lock table at {model.describe()}; executions {_ranges(spilling)} of "
                f"{total} spill; execution {steady.number} (plan caches settled): {steady.lock_count} locks, "
                f"{steady.main_table_count} main; lockscope's EXPLAIN-only model: {m.lock_count} locks, "
                f"{m.main_table_count} main; line {ta.truth.line}: {_short('; '.join(ta.truth.statements), 120)}")
    if ta.transactions_per_s is not None:
        evidence += (f"; {ta.transactions_per_s:,.1f} transactions/s in the interval x {steady.main_table_count} = "
                     f"{rate:,.0f} main-lock-table acquisitions/s")
    fix = (f"fewer statements per transaction (it spills from statement {peak.first_spill}: commit before it), or "
           f"fewer indexes on the tables it touches ({_touched(peak.locks)})")
    if (mlpt := _mlpt_fix(peak.locks, model)):
        fix += f"; or {mlpt}"
    return Finding("high" if rate >= HIGH_MAIN_PER_S else "medium", "transaction-spill",
                   f"transaction at line {ta.truth.line}", title, evidence, fix, (),
                   rate + peak.main_table_count)


def _statement_peak(ta: TransactionAudit, n: int) -> tuple[TransactionExecution, int]:
    """The executed execution where statement ``n`` (0-based) adds the most main-table locks, and how many."""
    best = max(ta.truth.executions, key=lambda e: _main(e.steps[n].locks))
    return best, _main(best.steps[n].locks)


def _generic_fk_queries(ex: Execution) -> list[str]:
    """The foreign-key checks and actions of an execution that ran a cached generic plan (its build or reuse)."""
    fk = {lk.detail for lk in ex.execution_locks if lk.source in (LockSource.FK_CHECK, LockSource.FK_ACTION)}
    return [what for what, phase in ex.query_phases
            if what in fk and phase in (PlanPhase.GENERIC_BUILD, PlanPhase.GENERIC_REUSE)]


def _execution_lock_finding(ta: TransactionAudit, n: int, model: CapacityModel) -> Finding | None:
    """``execution-locks`` or ``fk-generic-plan``: statement ``n`` (0-based) puts locks in the main lock table
    when it runs, where its EXPLAIN (in the model) does not."""
    peak, main = _statement_peak(ta, n)
    step = peak.steps[n]
    ex = ta.model_execution(peak.number).steps[n].execution
    if not main or _main(ex.locks + ex.executor_index_locks):
        return None
    per_execution = ", ".join(str(_main(e.steps[n].locks)) for e in ta.truth.executions)
    stmt = _short(ta.truth.statements[n])
    sources = Counter(str(lk.source) for lk in ex.execution_locks)
    taken = ", ".join(f"{source} x{k}" for source, k in sources.items()) or "none modelled"
    evidence = (f"run on the scratch server (rolled back), main-table locks it adds per execution 1.."
                f"{len(ta.truth.executions)}: {per_execution}; at execution {peak.number} it adds "
                f"{len(step.locks)} locks ({main} main) and the transaction holds {step.held_after}, "
                f"{step.main_after} main; its EXPLAIN takes {len(ex.locks) + len(ex.executor_index_locks)} (none in "
                f"the main lock table); what its execution also takes (lockscope's model): {taken}")
    generic = _generic_fk_queries(ex)
    lowest = min(_main(e.steps[n].locks) for e in ta.truth.executions)
    subject = f"transaction at line {ta.truth.line}, statement {n + 1}"
    if generic and main > lowest:
        title = (f"{stmt}: the {generic[0]}'s generic plan (execution {peak.number}) puts {main} locks in the main "
                 f"lock table; the transaction holds {step.held_after}, {step.main_after} main")
        evidence += (f"; ri_triggers.c plans the {generic[0]} through SPI and the plan cache (plancache.c "
                     "GetCachedPlan: five custom plans, the generic plan built at the 6th call in each backend), "
                     "and a generic plan locks every partition of a partitioned referenced table and their indexes")
        fix = ("plan_cache_mode = force_custom_plan for the application's role (it governs the foreign-key checks' "
               "cached plans too: their custom plans prune to one partition); or fewer partitions of the "
               "referenced table")
        sql = (f"-- {subject}: {title}\n-- ALTER ROLE <the application's role> IN DATABASE <its database> SET "
               "plan_cache_mode = force_custom_plan;",)
        return Finding("medium", "fk-generic-plan", subject, title, evidence, fix, sql, float(main))
    title = (f"{stmt}: its execution locks put {main} locks in the main lock table where its EXPLAIN puts none "
             f"(execution {peak.number})")
    fix = f"fewer indexes on the tables it touches ({_touched(step.locks)})"
    if (mlpt := _mlpt_fix(peak.locks, model)):
        fix += f"; or {mlpt}"
    return Finding("medium", "execution-locks", subject, title, evidence, fix, (), float(main))


def transaction_findings(transactions: Sequence[TransactionAudit], model: CapacityModel) -> list[Finding]:
    """The findings of the measured transactions (see the module docstring), in script order.

    :param model: the scratch server's fast-path capacity.
    """
    out: list[Finding] = []
    for ta in transactions:
        if (spill := _transaction_spill(ta, model)) is not None:
            out.append(spill)
        out += [f for n in range(len(ta.truth.statements)) if (f := _execution_lock_finding(ta, n, model))]
    return out


# -- pg_stat_statements only: what the pg_locks snapshots show ------------------------------------------------------
def held_transactions(rows: Sequence[StatementRates], statements: Sequence[StatementAudit],
                      snapshots: int) -> HeldTransactions | None:
    """The statements whose backends the interval's pg_locks snapshots caught holding more relation locks and more
    main-table locks than any plan of the statement takes: the rest belongs to the transaction (its earlier
    statements, or what the execution adds), held until it ends.

    :param rows: the workload's statements with their snapshot observations (``StatementRates.held``).
    :param statements: the probed statements (their footprints), by queryid.
    :param snapshots: pg_locks snapshots taken (count).
    :return: None when no backend held more than its statement.
    """
    probed = {s.queryid: s for s in statements if not s.skipped_reason}
    out: list[HeldStatement] = []
    for r in rows:
        s = probed.get(r.queryid)
        plans = [p for p in (s.custom, s.generic, s.generic_reuse) if p is not None] if s is not None else []
        if r.held is None or s is None or not plans:
            continue
        locks, main = max(p.locks for p in plans), max(p.spilled for p in plans)
        more = [(m, total) for m, total in r.held.observations if total > locks and m > main]
        if more:
            m, total = max(more)
            out.append(HeldStatement(r.queryid, s.short_query, locks, main, total, m, len(more)))
    if not out:
        return None
    out.sort(key=lambda h: (-h.held_main, -h.held_locks, h.queryid))
    return HeldTransactions(tuple(out), snapshots)


def held_transaction_findings(held: HeldTransactions | None) -> list[Finding]:
    """``transaction-held``: transactions on the server hold more main-table locks than their statements take."""
    if held is None:
        return []
    seen = "; ".join(f"queryid {h.queryid} ({_short(h.query, 60)}): held {h.held_locks} locks, {h.held_main} main, "
                     f"its own plans at most {h.footprint_locks}, {h.footprint_main} main"
                     for h in held.statements[:5])
    return [Finding(
        "medium", "transaction-held", "transactions",
        f"transactions on this server hold up to {held.most_main} main-table locks (their statements' own plans: "
        f"at most {max(h.footprint_main for h in held.statements)})",
        f"pg_locks snapshots during the interval ({held.snapshots}) caught backends holding more than the statement "
        f"they ran: {seen}; the statements of one transaction hold their locks until it ends (lock.c "
        "LockReleaseAll), and a write's execution adds its foreign-key checks', triggers' and sequences' locks",
        "fewer statements per transaction or fewer indexes on the tables they touch; measure the transactions "
        "(lockscope footprint -f FILE with BEGIN ... COMMIT, or audit --scratch --workload FILE)",
        (), float(held.most_main))]


# -- in one audit ---------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class TransactionsSeen:
    """What an audit knows of the workload's transactions.

    :ivar measured: the ``--workload`` script's transactions measured on the scratch server (empty otherwise).
    :ivar held: what the pg_locks snapshots show (:func:`held_transactions`), None when nothing.
    :ivar caveat: :data:`TRANSACTION_CAVEAT` when only pg_stat_statements is known, else None.
    :ivar notes: transactions not measured, and why.
    """

    measured: tuple[TransactionAudit, ...] = ()
    held: HeldTransactions | None = None
    caveat: str | None = None
    notes: tuple[str, ...] = ()


def audit_transactions(session: Session, workload: Workload, rows: Sequence[StatementRates],
                       script: ScriptWorkload | None) -> TransactionsSeen:
    """The transactions of an audit: the script's measured (a scratch audit with ``--workload``), else the caveat;
    and, with a pg_stat_statements workload, what its pg_locks snapshots show.

    :raises ConnectionFailedError: the scratch server cannot be reached.
    """
    measured: tuple[TransactionAudit, ...] = ()
    notes: tuple[str, ...] = ()
    if script is not None:
        measured, notes = measure_script_transactions(session, script, workload.statements)
    held = held_transactions(rows, workload.statements, workload.lock_snapshots) if workload.available else None
    caveat = TRANSACTION_CAVEAT if script is None and workload.available and workload.statements else None
    return TransactionsSeen(measured, held, caveat, notes)
