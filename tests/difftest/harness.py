"""Run a drawn case on a scratch server, compare lockscope's model with the executed truth, classify differences.

One case = one schema (``CREATE SCHEMA gN``, its DDL and data, ``VACUUM ANALYZE``) and its workloads, each run in
turn on fresh connections whose ``search_path`` is the case's schema:

1. the model first (:func:`lockscope.footprint.measure_footprint` for a single statement,
   :func:`lockscope.transaction.measure_transaction` for a transaction): EXPLAIN only, read-only, rolled back;
2. then the truth (:func:`lockscope.executed.execute_scripts`): the statements executed, each execution rolled
   back, ``pg_lock_status()`` read after every statement;
3. ``VACUUM`` of the case's tables (the truth's rolled-back writes leave dead tuples that would change the next
   workload's plans), and at the end ``DROP SCHEMA ... CASCADE``.

Per execution 1..8 the two sets of (relation OID, mode, fast-path flag) are compared: equal = exact match; else the
locks only the truth holds (missing from the model), only the model holds (extra), and those both hold with a
different flag (flag-only when that is the whole difference). ``exact`` is lockscope's own label
(``Execution.exact`` / ``TransactionExecution.exact``): an execution that differs while labelled exact is the
failure the test looks for (:attr:`ExecutionResult.wrong_and_exact`).
"""

from __future__ import annotations

import contextlib
import itertools
import signal
import threading
import time
import traceback
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from lockscope.db import connect, run_script
from lockscope.errors import BadInputError, DatabaseError, LockBlockedError, LockscopeError
from lockscope.executed import execute_scripts
from lockscope.footprint import RelationLock, measure_footprint
from lockscope.script import Script, ScriptStatement, Transaction
from lockscope.server import ScratchServer, ScratchSettings
from lockscope.transaction import measure_transaction
from lockscope.vocab import PlanCacheMode

from .render import Case, Schema, Workload, schema_sql, shape_of, statement_sql, workload_text

__all__ = ["EXECUTIONS", "SETTINGS", "CaseRunner", "ExecutionResult", "LockDiff", "WorkloadResult", "census",
           "summarize"]

#: The executions compared per workload (custom plans 1-5, the generic build at 6, its reuse at 7-8).
EXECUTIONS = 8
#: Every differential server: 16 fast-path slots on every major, no autovacuum (plans stay as ANALYZE left them).
SETTINGS = ScratchSettings(max_locks_per_transaction=16, extra={"autovacuum": "off"})
_MODE_ABBR = {"AccessShareLock": "AS", "RowShareLock": "RS", "RowExclusiveLock": "RE",
              "ShareUpdateExclusiveLock": "SUE", "ShareLock": "S", "ShareRowExclusiveLock": "SRE",
              "ExclusiveLock": "E", "AccessExclusiveLock": "AE"}


@dataclass(frozen=True)
class LockDiff:
    """One differing lock: ``truth`` / ``model`` are the fast-path flags each side has (None: that side lacks the
    (relation, mode))."""

    relation: str
    role: str
    mode: str
    truth: bool | None
    model: bool | None

    def text(self) -> str:
        where = {True: "fast", False: "main", None: "-"}
        return f"{self.relation}:{_MODE_ABBR.get(self.mode, self.mode)} ({self.role}) " \
               f"truth {where[self.truth]}, model {where[self.model]}"


@dataclass(frozen=True)
class ExecutionResult:
    """One execution compared.

    :ivar statement: the first statement (1-based) after which the held sets differ (1 when they never do).
    """

    number: int
    match: bool
    exact: bool
    unknowns: tuple[str, ...]
    missing: tuple[LockDiff, ...]
    extra: tuple[LockDiff, ...]
    flags: tuple[LockDiff, ...]
    truth_locks: int
    truth_main: int
    model_locks: int
    model_main: int
    statement: int = 1
    model_phase: str = ""
    truth_phase: str = ""

    @property
    def wrong_and_exact(self) -> bool:
        return not self.match and self.exact

    @property
    def flag_only(self) -> bool:
        return not self.match and not self.missing and not self.extra

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"n": self.number, "match": self.match, "exact": self.exact,
                               "locks": [self.truth_locks, self.truth_main, self.model_locks, self.model_main],
                               "phase": [self.model_phase, self.truth_phase]}
        if self.unknowns:
            out["unknowns"] = list(self.unknowns)
        if not self.match:
            out["statement"] = self.statement
            out["missing"] = [d.text() for d in self.missing]
            out["extra"] = [d.text() for d in self.extra]
            out["flags"] = [d.text() for d in self.flags]
        return out


@dataclass
class WorkloadResult:
    """One workload of a case on one server.

    :ivar status: ``compared``; ``invalid`` (the truth run failed: the statement is not valid there); ``refused``
        (lockscope declined the statement as unsupported, ``BadInputError``); ``model-error`` (lockscope failed
        with another error of its own on a statement the server ran); ``crash`` (lockscope raised something that
        is not a lockscope error); ``model-hang`` (lockscope's own work outlived ``model_timeout_s``: a loop that
        does not end; statement_timeout bounds only the server's); ``timeout`` (statement_timeout, either side);
        ``schema-error`` (the drawn schema did not load: a generator bug, or the server is gone);
        ``harness-error`` (the executed truth failed with something else than the server's error).
    """

    major: int
    schema: Schema
    workload: Workload
    status: str
    error: str = ""
    executions: list[ExecutionResult] = field(default_factory=list)
    model_reads: int = 0
    model_s: float = 0.0
    truth_s: float = 0.0
    case_id: str = ""

    @property
    def schema_sql(self) -> str:
        return schema_sql(self.schema)

    @property
    def text(self) -> str:
        return workload_text(self.schema, self.workload)

    @property
    def mismatched(self) -> list[ExecutionResult]:
        return [e for e in self.executions if not e.match]

    def report(self) -> str:
        """Everything a reader needs to reproduce and judge the case."""
        lines = [f"== case {self.case_id} on PostgreSQL {self.major}: {self.status} {self.error}".rstrip(),
                 "-- schema", self.schema_sql.rstrip(), "-- workload", self.text]
        for e in self.executions:
            if e.match:
                continue
            label = "labelled EXACT" if e.exact else f"labelled unknown ({'; '.join(e.unknowns)[:200]})"
            lines.append(f"execution {e.number} ({e.model_phase}/{e.truth_phase}), statement {e.statement}, "
                         f"{label}: truth {e.truth_locks} locks ({e.truth_main} main), model {e.model_locks} "
                         f"({e.model_main} main)")
            lines += [f"   only truth: {d.text()}" for d in e.missing]
            lines += [f"   only model: {d.text()}" for d in e.extra]
            lines += [f"   flag:       {d.text()}" for d in e.flags]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "case": self.case_id, "major": self.major, "status": self.status,
            "protocol": self.workload.protocol, "mode": self.workload.mode, "api": self.workload.api,
            "statements": [dict(zip(("text", "params"), statement_sql(self.schema, s), strict=True))
                           | {"op": s.op, "tags": list(s.tags)} for s in self.workload.statements],
            "model_reads": self.model_reads, "model_s": round(self.model_s, 3), "truth_s": round(self.truth_s, 3),
            "executions": [e.to_dict() for e in self.executions]}
        if self.error:
            out["error"] = self.error
        return out


def _script_statement(schema: Schema, index: int, stmt: Any) -> ScriptStatement:
    text, params = statement_sql(schema, stmt)
    return ScriptStatement(text, params, text, index, stmt.kind)


def _key(lk: RelationLock) -> tuple[int, str]:
    return lk.relation_oid, str(lk.mode)


def _compare(number: int, truth: Sequence[RelationLock], model: Sequence[RelationLock], exact: bool,
             unknowns: tuple[str, ...], statement: int, phases: tuple[str, str]) -> ExecutionResult:
    t = {_key(lk): lk for lk in truth}
    m = {_key(lk): lk for lk in model}
    missing = tuple(_diff(t[k], t[k].fastpath, None) for k in sorted(t.keys() - m.keys()))
    extra = tuple(_diff(m[k], None, m[k].fastpath) for k in sorted(m.keys() - t.keys()))
    flags = tuple(_diff(t[k], t[k].fastpath, m[k].fastpath) for k in sorted(t.keys() & m.keys())
                  if t[k].fastpath != m[k].fastpath)
    return ExecutionResult(number, not (missing or extra or flags), exact, unknowns, missing, extra, flags,
                           len(truth), sum(not lk.fastpath for lk in truth), len(model),
                           sum(not lk.fastpath for lk in model), statement, *phases)


def _diff(lk: RelationLock, truth: bool | None, model: bool | None) -> LockDiff:
    name = lk.relation.rsplit(".", 1)[-1].strip('"')
    return LockDiff(name, str(lk.role), str(lk.mode), truth, model)


def _held(locks: Iterable[RelationLock]) -> set[tuple[int, str, bool]]:
    return {(lk.relation_oid, str(lk.mode), lk.fastpath) for lk in locks}


def _first_statement(truth_steps: Sequence[Sequence[RelationLock]], model_steps: Sequence[Sequence[RelationLock]]
                     ) -> int:
    """The first statement after which the accumulated held sets differ (1-based)."""
    t: set[tuple[int, str, bool]] = set()
    m: set[tuple[int, str, bool]] = set()
    for n, (ts, ms) in enumerate(zip(truth_steps, model_steps, strict=False), 1):
        t |= _held(ts)
        m |= _held(ms)
        if t != m:
            return n
    return 1


_case_numbers = itertools.count(1)


class Hang(BaseException):
    """Raised in the main thread when the model's own (Python) work outlives its time (:func:`time_limit`); a
    BaseException, so that no ``except Exception`` of the code under test swallows it."""


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise :class:`Hang` in the block after ``seconds`` (SIGALRM: only in the main thread, else no limit). A timer
    already set (pytest-timeout's) is put back afterwards, less the time spent."""
    if seconds <= 0 or threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: Any) -> None:
        raise Hang(f"no answer in {seconds:g} s")

    started = time.monotonic()
    previous = signal.signal(signal.SIGALRM, interrupt)
    # then again every second: a Hang raised where the interpreter ignores exceptions (a gc callback) comes back
    remaining, interval = signal.setitimer(signal.ITIMER_REAL, seconds, 1.0)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if remaining > 0:
            signal.setitimer(signal.ITIMER_REAL, max(0.001, remaining - (time.monotonic() - started)), interval)


class CaseRunner:
    """Runs cases on one running scratch server (its major's)."""

    def __init__(self, server: ScratchServer, *, statement_timeout_ms: int = 10000, model_timeout_s: float = 60.0):
        self.server = server
        self.major = server.major
        self.statement_timeout_ms = statement_timeout_ms
        self.model_timeout_s = model_timeout_s

    def run(self, case: Case, case_id: str = "") -> list[WorkloadResult]:
        """Every workload of ``case`` (see the module docstring); never raises for a case's own failures."""
        name = f"g{next(_case_numbers)}"
        case_id = case_id or name
        base = self.server.conninfo()
        try:
            run_script(base, f"create schema {name};\nset search_path = {name};\n{schema_sql(case.schema)}")
            tables = ", ".join(f"{name}.{t}" for t in self._tables(case.schema))
            run_script(base, f"vacuum analyze {tables}")
        except DatabaseError as exc:
            self._drop(name)
            return [WorkloadResult(self.major, case.schema, w, "schema-error", str(exc), case_id=case_id)
                    for w in case.workloads]
        out = []
        try:
            for n, workload in enumerate(case.workloads, 1):
                out.append(self.run_workload(name, case.schema, workload, f"{case_id}.{n}"))
                with contextlib.suppress(DatabaseError):  # a server gone: the next case says so
                    run_script(base, f"vacuum {tables}")
        finally:
            self._drop(name)
        return out

    @staticmethod
    def _tables(schema: Schema) -> list[str]:
        return [t.name for t in schema.tables] + (["audit", "counters"] if schema.has_aux else [])

    def _drop(self, name: str) -> None:
        with contextlib.suppress(DatabaseError):
            run_script(self.server.conninfo(), f"drop schema if exists {name} cascade")

    def conninfo(self, namespace: str, workload: Workload) -> str:
        options = f"-c search_path={namespace}"
        if workload.protocol == "simple" and workload.mode != "auto":
            options += f" -c plan_cache_mode={workload.mode}"  # the RI checks' and triggers' plans follow it
        return f"{self.server.conninfo()} options='{options}'"

    def run_workload(self, namespace: str, schema: Schema, workload: Workload, case_id: str) -> WorkloadResult:
        """Model first, then truth, then the comparison (see the module docstring)."""
        conninfo = self.conninfo(namespace, workload)
        statements = tuple(_script_statement(schema, i, s) for i, s in enumerate(workload.statements, 1))
        txn = Transaction(statements, len(statements) > 1, 1)
        mode = PlanCacheMode(workload.mode)
        result = WorkloadResult(self.major, schema, workload, "compared", case_id=case_id)
        model: Any = None
        model_error: tuple[str, str] | None = None
        t0 = time.monotonic()
        try:
            with time_limit(self.model_timeout_s), \
                    connect(conninfo, statement_timeout_ms=self.statement_timeout_ms, pg_locks_rate_hz=0) as session:
                try:
                    if workload.api == "footprint":
                        stmt = statements[0]
                        model = measure_footprint(session, stmt.text, params=list(stmt.params),
                                                  protocol=workload.protocol,
                                                  plan_cache_mode=mode if workload.protocol == "prepared"
                                                  else PlanCacheMode.AUTO, executions=EXECUTIONS)
                    else:
                        model = measure_transaction(session, [txn] * EXECUTIONS, protocol=workload.protocol,
                                                    plan_cache_mode=mode, executions=EXECUTIONS)
                finally:
                    result.model_reads = session.probe_cost.pg_locks_reads
        except LockscopeError as exc:
            if isinstance(exc, BadInputError):  # a declared limitation (UnsupportedStatementError among them)
                model_error = ("refused", f"model: {type(exc).__name__}: {exc}")
            elif isinstance(exc, LockBlockedError) or getattr(exc, "sqlstate", None) == "57014":
                model_error = ("timeout", f"model: {type(exc).__name__}: {exc}")
            else:  # the server runs the statement (the truth says whether it does): lockscope should measure it
                model_error = ("model-error", f"model: {type(exc).__name__}: {exc}")
        except Exception as exc:  # a bug in lockscope: reported with its traceback
            model_error = ("crash", "model: " + "".join(traceback.format_exception(exc))[-3000:])
        except Hang as exc:  # lockscope's own work did not end (statement_timeout bounds only the server's)
            where = "".join(traceback.format_tb(exc.__traceback__)[-4:])
            model_error = ("model-hang", f"model: {exc}, in:\n{where}")
        result.model_s = time.monotonic() - t0
        t0 = time.monotonic()
        try:
            (truth,) = execute_scripts(conninfo, [Script((txn,), False)] * EXECUTIONS, protocol=workload.protocol,
                                       plan_cache_mode=mode, executions=EXECUTIONS,
                                       statement_timeout_ms=self.statement_timeout_ms)
        except DatabaseError as exc:
            result.truth_s = time.monotonic() - t0
            result.status = "timeout" if exc.sqlstate == "57014" else "invalid"
            result.error = f"truth: {exc}"
            return result
        except Exception as exc:  # the oracle itself failed: not the model's doing
            result.truth_s = time.monotonic() - t0
            result.status = "harness-error"
            result.error = "truth: " + "".join(traceback.format_exception(exc))[-3000:]
            return result
        result.truth_s = time.monotonic() - t0
        if model_error is not None:
            result.status, result.error = model_error
            return result
        for k in range(1, EXECUTIONS + 1):
            real = truth.executions[k - 1]
            truth_steps = [step.locks for step in real.steps]
            if workload.api == "footprint":
                e = model.executions[min(k, len(model.executions)) - 1]
                model_locks, exact, unknowns, phase = e.real_locks, e.exact, e.unknowns, str(e.phase)
                model_steps = [model_locks]
            else:
                e = model.executions[k - 1]
                model_locks, exact, unknowns = e.locks, e.exact, e.unknowns
                phase = ",".join(str(s.execution.phase) for s in e.steps)
                model_steps = [step.locks for step in e.steps]
            truth_phase = ",".join(str(s.execution.phase) for s in real.steps)
            stmt = _first_statement(truth_steps, model_steps) if len(truth_steps) > 1 else 1
            result.executions.append(_compare(k, real.locks, model_locks, exact, tuple(unknowns), stmt,
                                              (phase, truth_phase)))
        return result


# --- the census --------------------------------------------------------------------------------------------------

def _roles(diffs: Iterable[LockDiff]) -> str:
    return ",".join(sorted({f"{d.role}:{_MODE_ABBR.get(d.mode, d.mode)}" for d in diffs}))


def _span(numbers: Sequence[int]) -> str:
    """1,2,3,6 -> ``1-3,6``."""
    out: list[str] = []
    for _, grp in itertools.groupby(enumerate(numbers), lambda p: p[1] - p[0]):
        run = [n for _, n in grp]
        out.append(str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}")
    return ",".join(out)


def signature(result: WorkloadResult) -> tuple[str, str, str]:
    """(statement, difference, protocol/mode) of a mismatching workload: the op and its target's shape (plain,
    partitioned, subpartitioned, view, sequence) of the first statement after which the held sets differ, and
    whether it ran in a transaction of several statements; which side
    has extra or missing locks and the relation kinds (role:mode) involved, or the flag-only direction; the
    protocol and plan_cache_mode."""
    bad = result.mismatched
    stmt = result.workload.statements[bad[0].statement - 1]
    names = {t.name for t in result.schema.tables}
    if stmt.table in names:
        shape = shape_of(result.schema.table(stmt.table))
    else:
        shape = "sequence" if stmt.op == "select_nextval" else "view"
    txn = " (in a transaction)" if len(result.workload.statements) > 1 else ""
    missing = [d for e in bad for d in e.missing]
    extra = [d for e in bad for d in e.extra]
    if not missing and not extra:
        flags = [d for e in bad for d in e.flags]
        way = sorted({"model fast, truth main" if d.model else "model main, truth fast" for d in flags})
        diff = f"flags only: {' & '.join(way)} [{_roles(flags)}]"
    else:
        diff = " ".join(p for p in (f"missing [{_roles(missing)}]" if missing else "",
                                    f"extra [{_roles(extra)}]" if extra else "") if p)
    return f"{stmt.op} on {shape}{txn}", diff, f"{result.workload.protocol}/{result.workload.mode}"


def census(results: Sequence[WorkloadResult]) -> list[dict[str, Any]]:
    """Mismatching workloads grouped by :func:`signature`, largest class first, each with the feature tags of the
    statement that differs (counted over the class), the executions that differ, how many were labelled exact,
    and the smallest example (schema + workload + its differences)."""
    classes: dict[tuple[str, str, str], list[WorkloadResult]] = {}
    for r in results:
        if r.status == "compared" and r.mismatched:
            classes.setdefault(signature(r), []).append(r)
    out = []
    for (stmt, diff, proto), members in sorted(classes.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        tags: Counter[str] = Counter()
        execs: Counter[str] = Counter()
        for r in members:
            tags.update(r.workload.statements[r.mismatched[0].statement - 1].tags)
            execs[_span([e.number for e in r.mismatched])] += 1
        smallest = min(members, key=lambda r: len(r.schema_sql) + len(r.text))
        out.append({
            "statement": stmt, "difference": diff, "protocol": proto, "workloads": len(members),
            "executions": sum(len(r.mismatched) for r in members),
            "labelled_exact": sum(e.wrong_and_exact for r in members for e in r.executions),
            "majors": sorted({r.major for r in members}),
            "differing_executions": "; ".join(f"{span} ({n})" for span, n in execs.most_common()),
            "features": dict(tags.most_common()),
            "example": {"case": smallest.case_id, "major": smallest.major, "report": smallest.report()},
        })
    return out


def summarize(results: Sequence[WorkloadResult]) -> dict[str, Any]:
    """The figures of a run: workloads by status, executions compared, the exact-match share (overall and per
    execution number), the labelled-unknown share, wrong-and-labelled-exact, set vs flag-only differences, pg_locks
    reads and time, and a census of feature tags (workloads with the tag, of which mismatching)."""
    status = Counter(r.status for r in results)
    compared = [r for r in results if r.status == "compared"]
    execs = [e for r in compared for e in r.executions]
    n = len(execs) or 1
    per_exec = {}
    for k in range(1, EXECUTIONS + 1):
        ek = [e for e in execs if e.number == k]
        per_exec[k] = round(sum(e.match for e in ek) / len(ek), 4) if ek else None
    wrong = [e for e in execs if not e.match]
    features: dict[str, list[int]] = {}
    for r in compared:
        for tag in {t for s in r.workload.statements for t in s.tags}:
            entry = features.setdefault(tag, [0, 0])
            entry[0] += 1
            entry[1] += bool(r.mismatched)
    ops: dict[str, list[int]] = {}
    for r in compared:
        for op in {s.op for s in r.workload.statements}:
            entry = ops.setdefault(op, [0, 0])
            entry[0] += 1
            entry[1] += bool(r.mismatched)
    return {
        "workloads": len(results), "by_status": dict(status.most_common()),
        "invalid_share": round(status["invalid"] / (len(results) or 1), 4),
        "workloads_compared": len(compared),
        "workloads_exact": sum(not r.mismatched for r in compared),
        "executions_compared": len(execs),
        "exact_share": round(sum(e.match for e in execs) / n, 4),
        # per lock: of the (relation, mode) locks either side holds after an execution, the share both hold with
        # the same fast-path flag
        "lock_share": round(sum(e.truth_locks - len(e.missing) - len(e.flags) for e in execs)
                            / (sum(e.truth_locks + len(e.extra) for e in execs) or 1), 5),
        "exact_share_per_execution": per_exec,
        "labelled_unknown_share": round(sum(not e.exact for e in execs) / n, 4),
        "wrong_and_labelled_exact": sum(e.wrong_and_exact for e in execs),
        "wrong_and_labelled_unknown": sum(not e.match and not e.exact for e in execs),
        "right_but_labelled_unknown": sum(e.match and not e.exact for e in execs),
        "set_differences": sum(not e.flag_only for e in wrong),
        "flag_only_differences": sum(e.flag_only for e in wrong),
        "model_pg_locks_reads": sum(r.model_reads for r in compared),
        "model_s": round(sum(r.model_s for r in results), 1),
        "truth_s": round(sum(r.truth_s for r in results), 1),
        "features": {t: {"workloads": v[0], "mismatching": v[1]} for t, v in sorted(features.items())},
        "ops": {t: {"workloads": v[0], "mismatching": v[1]} for t, v in sorted(ops.items())},
    }
