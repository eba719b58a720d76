"""pg_stat_statements over an interval: each top statement's calls/s, times and text (the workload reader).

- Two snapshots of pg_stat_statements counters (``showtext = false``, cheap even with 50,000 entries) ``interval_s``
  apart give calls/s; with ``interval_s = 0`` calls/s is calls since the last reset (``pg_stat_statements_info``,
  PG 14+; the postmaster start on PG 13). The top N statements by calls in the interval (then by total calls) are
  kept; only their texts are read. lockscope's own queries and utility statements are left out.
- During the interval, one pg_locks snapshot a second of the relation locks the database's client backends in a
  transaction hold (``audit_held_locks.sql``): the measured main-table locks per call of each statement, one of the
  sources of the plan-cache phase split (:mod:`lockscope.workload.phases`), and the main-table locks each
  transaction holds (:mod:`lockscope.workload.transactions`).
- At both snapshots, the database's transaction count (``audit_xact_counters.sql``) and, on PostgreSQL 19,
  ``pg_stat_lock.fastpath_exceeded``: transactions/s and fast-path misses/s over the same interval.

What the statements lock is :mod:`lockscope.workload.probes`' business.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ..catalog import AuditSettings
from ..db import Session
from ..errors import DatabaseError
from ..rows import (
    ColumnNameRow,
    HeldLocksRow,
    PostmasterAgeRow,
    StatementCountersRow,
    StatementTextRow,
    StatLockRow,
    StatsResetRow,
    TransactionCountRow,
)
from ..versions import PG14
from .phases import HeldLocks, held_locks_per_call, query_fingerprint
from .transactions import TransactionLoad, transaction_load

if TYPE_CHECKING:
    from .probes import StatementAudit

__all__ = ["COVERAGE_FLOOR", "HELD_LOCKS_EVERY_S", "OWN_QUERY", "SQL_PREPARE", "StatementRates", "Workload",
           "exec_ms_per_s", "read_workload"]

#: lockscope's own queries: the audit SQL carries a /* lockscope */ marker; the footprint engine's are recognised.
OWN_QUERY = re.compile(r"/\*\s*lockscope\s*\*/|^\s*(PREPARE|DEALLOCATE)\s+lockscope_|AS pg_locks_oid|toast_owner\.oid"
                       r"|pg_backend_pid\(\)\s+AND\s+locktype"
                       r"|FROM pg_catalog\.pg_prepared_statements|pg_catalog\.pg_blocking_pids", re.I)
_PROBEABLE = re.compile(r"^\s*(\(\s*)*(select|with|insert|update|delete|merge|values|table)\b", re.I)
#: The ``PREPARE name [(types)] AS`` prefix of a statement text recorded by pg_stat_statements.
SQL_PREPARE = re.compile(r"^\s*prepare\s+\w+\s*(\([^)]*\))?\s+as\s+", re.I | re.S)


@dataclass(frozen=True)
class Workload:
    """What pg_stat_statements gave.

    :ivar available: False when it could not be read (see ``notes``).
    :ivar entries: entries of this database (count; all roles visible to the user).
    :ivar hidden: entries of other roles whose texts are hidden (count; grant pg_read_all_stats).
    :ivar interval_s: measured interval (s), 0 when rates are since reset.
    :ivar since_s: seconds since the reset, for rates since reset.
    :ivar statements: the top statements, probed.
    :ivar notes: what was skipped and how to enable it.
    :ivar pg_stat_lock_fastpath_exceeded: PG 19 server counter of fast-path overflows, or None.
    :ivar fastpath_exceeded_per_s: its increase over the interval per second (PG 19, an interval), else None.
    :ivar transactions_per_s: the database's transactions (commits and rollbacks) per second over the interval,
        None without an interval or when not readable.
    :ivar transactions: the transactions the pg_locks snapshots saw (:mod:`lockscope.workload.transactions`), None
        when none were taken.
    :ivar total_calls_per_s: calls/s of every visible statement of the interval that may lock a relation
        (lockscope's own queries and the utility statements among those whose text was read left out): the
        denominator of the coverage (:mod:`lockscope.workload.coverage`).
    :ivar total_exec_ms_per_s: their execution time per second (ms/s, pg_stat_statements ``total_exec_time``).
    """

    available: bool
    entries: int = 0
    hidden: int = 0
    interval_s: float = 0.0
    since_s: float | None = None
    statements: tuple[StatementAudit, ...] = ()
    notes: tuple[str, ...] = ()
    pg_stat_lock_fastpath_exceeded: int | None = None
    probe_seconds: float = 0.0
    top_n: int = 0
    extra: dict[str, Any] = field(default_factory=dict)
    track_planning: bool = False
    lock_snapshots: int = 0
    fastpath_exceeded_per_s: float | None = None
    transactions_per_s: float | None = None
    transactions: TransactionLoad | None = None
    total_calls_per_s: float = 0.0
    total_exec_ms_per_s: float = 0.0


@dataclass(frozen=True)
class StatementRates:
    """One pg_stat_statements entry over the interval (or since the reset), as :func:`read_workload` chooses it
    for probing: its counters' rates and mean times, its text, and the pg_locks snapshots' view of it.

    :ivar queryid: pg_stat_statements queryid.
    :ivar userid: the role's OID.
    :ivar calls: calls since the last reset (count).
    :ivar calls_per_s: calls per second (interval delta, or since reset).
    :ivar generic_plan_calls: calls that reused a cached generic plan (count, over the interval when it has a first
        snapshot; PG 19), else None.
    :ivar custom_plan_calls: calls with a custom plan (count, likewise), else None.
    :ivar generic_plan_calls_per_s: their rate (calls/s), else None.
    :ivar custom_plan_calls_per_s: their rate (calls/s), else None.
    :ivar plans_per_s: plannings per second (with track_planning), else None.
    :ivar mean_exec_ms: mean execution time (ms), None when unknown.
    :ivar mean_plan_ms: mean planning time per planning (ms), None when unknown.
    :ivar rows_per_call: rows returned or affected per call (count), None when unknown.
    :ivar query: the text ("" when not read or hidden).
    :ivar rolname: the role's name, None when not read or the role is gone.
    :ivar held: what the pg_locks snapshots saw of it (:class:`lockscope.workload.phases.HeldLocks`), or None.
    :ivar counter_skew_per_s: how far ``calls_per_s`` and ``plans_per_s`` may differ only because a call was in
        flight at a snapshot (calls/s): pg_stat_statements counts a planning when it ends and a call when its
        execution ends (``pg_stat_statements.c pgss_planner`` / ``pgss_ExecutorEnd``), so each snapshot can split
        up to the calls then in flight, ``calls/s x time per call`` by Little's law, rounded up; 0 when unknown.
    """

    queryid: int
    userid: int
    calls: int
    calls_per_s: float
    generic_plan_calls: int | None = None
    custom_plan_calls: int | None = None
    generic_plan_calls_per_s: float | None = None
    custom_plan_calls_per_s: float | None = None
    plans_per_s: float | None = None
    mean_exec_ms: float | None = None
    mean_plan_ms: float | None = None
    rows_per_call: float | None = None
    query: str = ""
    rolname: str | None = None
    held: HeldLocks | None = None
    counter_skew_per_s: float = 0.0


_Snapshot = dict[tuple[int, int], StatementCountersRow]


def _snapshot(session: Session, schema_sql: str, extra: str) -> _Snapshot:
    """One read of the pg_stat_statements counters, by (queryid, userid); a statement's toplevel and nested entries
    summed; an entry of another role whose details are hidden under its own key (0, -n)."""
    out: _Snapshot = {}
    for row in session.query_rows("audit_pgss_snapshot", StatementCountersRow,
                                  fill={"schema": schema_sql, "extra": extra}):
        if row.queryid is None:
            key = (0, -len(out) - 1)  # hidden entry of another role: counted, never probed
        else:
            key = (row.queryid, int(row.userid or 0))
        if key in out and row.queryid is not None:  # toplevel and nested entries of the same statement
            out[key] = out[key].plus(row)
        else:
            out[key] = row
    return out


def _snapshot_columns(session: Session, schema_sql: str, settings: AuditSettings) -> str:
    """The optional columns the snapshots read (``@extra@`` of ``audit_pgss_snapshot.sql``): PG 19's plan counters,
    ``plans`` with track_planning, the statements' own times (ms) and rows, as far as this extension version has
    them.

    :raises DatabaseError: the view's columns cannot be read.
    """
    columns = {r.name for r in session.query_rows("audit_pgss_columns", ColumnNameRow,
                                                  [f"{schema_sql}.pg_stat_statements"])}
    wanted = ["generic_plan_calls", "custom_plan_calls"] + (["plans"] if settings.track_planning else [])
    extra = "".join(f", s.{c}::int8 AS {c}" for c in wanted if c in columns)
    # the statements' own times (ms): pg_stat_statements 1.8+ (PG 13+) total_exec_time / total_plan_time
    times = ["total_exec_time"] + (["total_plan_time"] if settings.track_planning else [])
    extra += "".join(f", s.{c}::float8 AS {c}" for c in times if c in columns)
    return extra + (", s.rows::int8 AS rows" if "rows" in columns else "")


@dataclass(frozen=True)
class _Interval:
    """The two snapshots and what lies between them.

    :ivar elapsed_s: between the snapshots (s; 0 for rates since the reset).
    :ivar since_s: since the reset (s), for rates since the reset; else None.
    :ivar held: the pg_locks snapshots taken in between, one row list each.
    :ivar counters: the server's (transactions, fastpath_exceeded) at the first and at the second snapshot, each
        None when not read.
    """

    first: _Snapshot
    second: _Snapshot
    elapsed_s: float
    since_s: float | None
    held: list[list[HeldLocksRow]]
    counters: tuple[tuple[int | None, int | None], tuple[int | None, int | None]] = ((None, None), (None, None))

    def per_s(self, which: int) -> float | None:
        """The increase of counter ``which`` (0 transactions, 1 fastpath_exceeded) per second over the interval;
        None without both reads (or an interval), or when it went down (a reset)."""
        before, after = self.counters[0][which], self.counters[1][which]
        if before is None or after is None or self.elapsed_s <= 0 or self.since_s is not None or after < before:
            return None
        return (after - before) / self.elapsed_s


def _take_snapshots(session: Session, settings: AuditSettings, schema_sql: str, *, interval_s: float,
                    sleep: Callable[[float], None], during_interval: Callable[[], None] | None,
                    lock_snapshots: bool) -> _Interval:
    """The first snapshot, the interval (with its pg_locks snapshots), the second snapshot; or, with
    ``interval_s`` 0, one snapshot and the time since the reset.

    :raises DatabaseError: pg_stat_statements cannot be read.
    """
    extra = _snapshot_columns(session, schema_sql, settings)
    first = _snapshot(session, schema_sql, extra)
    if interval_s <= 0:
        if during_interval is not None:
            during_interval()
        return _Interval(first, first, 0.0, _since_reset_s(session, schema_sql, settings), [])
    seconds: list[_Snapshot] = []
    span = _held_span(session, settings, interval_s=interval_s, sleep=sleep, during_interval=during_interval,
                      lock_snapshots=lock_snapshots,
                      at_end=lambda: seconds.append(_snapshot(session, schema_sql, extra)))
    return replace(span, first=first, second=seconds[0])


def _held_span(session: Session, settings: AuditSettings, *, interval_s: float, sleep: Callable[[float], None],
               during_interval: Callable[[], None] | None, lock_snapshots: bool = True,
               at_end: Callable[[], None] | None = None) -> _Interval:
    """The interval: the database's counters at both ends (pg_stat_database, and PG 19's pg_stat_lock) and, with
    ``lock_snapshots``, the pg_locks snapshots in between; ``at_end`` runs before the last counters are read (the
    second pg_stat_statements snapshot). Its pg_stat_statements snapshots are empty: the caller's."""
    t0 = time.monotonic()
    before = _counters(session, settings)
    if during_interval is not None:
        during_interval()
    held: list[list[HeldLocksRow]] = []
    _hold_interval(session, t0, interval_s, sleep, held if lock_snapshots else None)
    if at_end is not None:
        at_end()
    after = _counters(session, settings)
    return _Interval({}, {}, max(time.monotonic() - t0, 1e-6), None, held, (before, after))


def _counters(session: Session, settings: AuditSettings) -> tuple[int | None, int | None]:
    """The database's transactions so far and PG 19's ``fastpath_exceeded`` (relation locks), each None when it
    cannot be read."""
    try:
        transactions: int | None = session.query_rows("audit_xact_counters", TransactionCountRow)[0].transactions
    except (DatabaseError, IndexError):
        transactions = None
    return transactions, _fastpath_exceeded(session, settings, [])


def _rates(span: _Interval, interval_s: float) -> list[StatementRates]:
    """Each visible entry's rates over the interval (or since the reset), busiest first."""
    out = [_statement_rates(key, row, span.first.get(key), span, interval_s)
           for key, row in span.second.items() if key[0] != 0]
    out.sort(key=lambda r: (-r.calls_per_s, -r.calls, r.queryid))
    return out


def _statement_rates(key: tuple[int, int], row: StatementCountersRow, before: StatementCountersRow | None,
                     span: _Interval, interval_s: float) -> StatementRates:
    """One entry's rates: deltas from ``before`` (its first snapshot, None when new) over the interval, else its
    counters since the reset."""
    if interval_s > 0:
        rate = max(row.calls - (before.calls if before else 0), 0) / span.elapsed_s
    else:
        rate = row.calls / span.since_s if span.since_s else 0.0
    gp, cp = row.generic_plan_calls, row.custom_plan_calls
    if interval_s > 0 and gp is not None and before is not None:
        gp = gp - int(before.generic_plan_calls or 0)
        cp = int(cp or 0) - int(before.custom_plan_calls or 0)
    first = before if interval_s > 0 else None
    seen = before is not None
    mean_exec = _mean(row.total_exec_time_ms, row.calls, first.total_exec_time_ms if first else None,
                      first.calls if first else None)
    mean_plan = _mean(row.total_plan_time_ms, row.plans, first.total_plan_time_ms if first else None,
                      first.plans if first else None)
    return StatementRates(
        queryid=key[0], userid=key[1], calls=row.calls, calls_per_s=rate, generic_plan_calls=gp,
        custom_plan_calls=cp,
        generic_plan_calls_per_s=_per_s(row.generic_plan_calls, before.generic_plan_calls if before else None, seen,
                                        interval_s, span.elapsed_s, span.since_s),
        custom_plan_calls_per_s=_per_s(row.custom_plan_calls, before.custom_plan_calls if before else None, seen,
                                       interval_s, span.elapsed_s, span.since_s),
        plans_per_s=_per_s(row.plans, before.plans if before else None, seen, interval_s, span.elapsed_s,
                           span.since_s),
        mean_exec_ms=mean_exec, mean_plan_ms=mean_plan,
        rows_per_call=_mean(row.rows, row.calls, first.rows if first else None, first.calls if first else None),
        counter_skew_per_s=_counter_skew_per_s(rate, mean_exec, mean_plan, 2 if seen and interval_s > 0 else 1,
                                               span.elapsed_s if interval_s > 0 else span.since_s))


def _with_texts(session: Session, schema_sql: str, candidates: list[StatementRates],
                held: list[list[HeldLocksRow]]) -> list[StatementRates]:
    """The candidates with their texts and roles (one query) and what the pg_locks snapshots saw of each."""
    if not candidates:
        return []
    texts = {(r.queryid, r.userid): r for r in session.query_rows("audit_pgss_texts", StatementTextRow,
                                                                   [[c.queryid for c in candidates]],
                                                                   fill={"schema": schema_sql})}
    out = []
    for c in candidates:
        t = texts.get((c.queryid, c.userid))
        out.append(replace(c, query=(t.query if t else None) or "", rolname=t.rolname if t else None))
    seen = held_locks_per_call(held, [c.queryid for c in out], {c.queryid: c.query for c in out})
    return [replace(c, held=seen.get(c.queryid)) for c in out]


def _choose(rows: list[StatementRates], candidates: list[StatementRates], top_n: int,
            notes: list[str], calls_total: float = 0.0, time_total: float = 0.0) -> list[StatementRates]:
    """The top ``top_n`` candidates that lock tables, and beyond them every one carrying at least
    :data:`COVERAGE_FLOOR` of the calls or execution time: lockscope's own queries and utility statements left out
    (each kind noted)."""
    own = [r for r in candidates if OWN_QUERY.search(r.query)]
    utility = [r for r in candidates if r not in own and not _PROBEABLE.match(SQL_PREPARE.sub("", r.query, 1))]
    kept = [r for r in candidates if r not in own and r not in utility]
    if utility:
        notes.append(f"{len(utility)} utility statements among the top ones (e.g. "
                     f"{' '.join(utility[0].query.split())[:40]}) take no table locks worth auditing: skipped.")
    if len(rows) > len(own) + len(utility) + top_n:
        notes.append(f"{len(rows)} statements in pg_stat_statements: the top {top_n} by calls are audited "
                     f"(--top N to change), and any other carrying at least {COVERAGE_FLOOR:.0%} of the calls or "
                     "execution time.")
    forced = [r for r in kept[top_n:] if _share(r, calls_total, time_total) >= COVERAGE_FLOOR]
    return kept[:top_n] + forced


def _fastpath_exceeded(session: Session, settings: AuditSettings, notes: list[str]) -> int | None:
    """PG 19's server counter of fast-path overflows (``pg_stat_lock``), None without the view or access."""
    if not settings.has_pg_stat_lock:
        return None
    try:
        return sum(int(r.fastpath_exceeded or 0) for r in session.query_rows("audit_pg_stat_lock", StatLockRow))
    except DatabaseError as exc:
        notes.append(f"pg_stat_lock could not be read ({exc}).")
        return None


def read_workload(session: Session, settings: AuditSettings, *, interval_s: float, top_n: int,
                  sleep: Callable[[float], None] = time.sleep,
                  during_interval: Callable[[], None] | None = None,
                  lock_snapshots: bool = True) -> tuple[Workload, list[StatementRates]]:
    """Take the pg_stat_statements snapshots and read the top statements' texts.

    During the interval, unless ``lock_snapshots`` is False, one pg_locks snapshot a second of the relation locks
    the database's active client backends hold (``audit_held_locks.sql``, through the session's paced
    :meth:`~lockscope.db.Session.query_rows`): the measured main-table locks per call of each statement.

    :param interval_s: seconds between the two snapshots; 0 = rates since the last reset (no lock snapshot).
    :param top_n: statements kept (count).
    :param during_interval: called right after the first snapshot (the demo starts its workload there).
    :param lock_snapshots: take the pg_locks snapshots during the interval.
    :return: the :class:`Workload` (without probes) and the chosen statements (:class:`StatementRates`).
    """
    if settings.pgss_schema is None:
        enable = ("Enable with shared_preload_libraries = 'pg_stat_statements' (restart) and CREATE EXTENSION "
                  "pg_stat_statements;")
        if interval_s <= 0 or not lock_snapshots:
            return Workload(False, notes=(
                "pg_stat_statements is not installed in this database: statement footprints and main-lock-table "
                f"rates skipped. {enable}",)), []
        span = _held_span(session, settings, interval_s=interval_s, sleep=sleep, during_interval=during_interval)
        load = transaction_load(span.held, transactions_per_s=span.per_s(0), calls_per_s={}, texts={})
        return Workload(False, interval_s=span.elapsed_s, lock_snapshots=len(span.held),
                        fastpath_exceeded_per_s=span.per_s(1), transactions_per_s=span.per_s(0), transactions=load,
                        notes=(f"pg_stat_statements is not installed in this database: statement footprints skipped; "
                               f"the server's main-lock-table rate comes from {len(span.held)} pg_locks snapshots "
                               f"and pg_stat_database's transactions. {enable}",)), []
    schema_sql = session.identifier(settings.pgss_schema)
    try:
        span = _take_snapshots(session, settings, schema_sql, interval_s=interval_s, sleep=sleep,
                               during_interval=during_interval, lock_snapshots=lock_snapshots)
    except DatabaseError as exc:
        grant = "" if settings.read_all_stats else " (GRANT pg_read_all_stats TO " + settings.current_user + ")"
        return Workload(False, notes=(
            f"pg_stat_statements could not be read ({exc}): statement footprints skipped. It must be in "
            f"shared_preload_libraries and readable by {settings.current_user}{grant}.",)), []
    notes: list[str] = []
    hidden = sum(1 for key in span.second if key[0] == 0)
    if hidden:
        notes.append(f"{hidden} pg_stat_statements entries of other roles are hidden from "
                     f"{settings.current_user}: GRANT pg_read_all_stats TO {settings.current_user} to audit them.")
    rows = _rates(span, interval_s)
    # texts for a few more than N, so utility statements (BEGIN, SET, ...) and lockscope's own queries do not
    # take the places of the statements that lock tables
    calls_total, time_total = _totals(rows)
    heavy = [r for r in rows[top_n * 2 + 20:] if _share(r, calls_total, time_total) >= COVERAGE_FLOOR]
    candidates = _with_texts(session, schema_sql, rows[: top_n * 2 + 20] + heavy, span.held)
    chosen = _choose(rows, candidates, top_n, notes, calls_total, time_total)
    left_out = {r.queryid for r in candidates if OWN_QUERY.search(r.query) or
                not _PROBEABLE.match(SQL_PREPARE.sub("", r.query, 1))}
    calls_total, time_total = _totals([r for r in rows if r.queryid not in left_out])
    fastpath_exceeded = span.counters[1][1]
    if fastpath_exceeded is None:
        fastpath_exceeded = _fastpath_exceeded(session, settings, notes)
    if not settings.track_planning and not any(r.generic_plan_calls is not None for r in chosen):
        notes.append("pg_stat_statements.track_planning is off: calls are split into planned ones and reuses of a "
                     "cached plan from pg_locks snapshots" + (" taken during the interval" if span.held else
                     " — none were taken (an interval of 0 s): the phase is unknown, both bounds are shown") +
                     ". SET pg_stat_statements.track_planning = on (no restart) records the split exactly.")
    workload = Workload(True, entries=len(span.second), hidden=hidden, interval_s=span.elapsed_s,
                        since_s=span.since_s, notes=tuple(notes), pg_stat_lock_fastpath_exceeded=fastpath_exceeded,
                        top_n=top_n, track_planning=settings.track_planning, lock_snapshots=len(span.held),
                        fastpath_exceeded_per_s=span.per_s(1), transactions_per_s=span.per_s(0),
                        transactions=_transactions(span, rows, candidates), total_calls_per_s=calls_total,
                        total_exec_ms_per_s=time_total)
    return workload, chosen


#: A statement carrying at least this share of the interval's calls or execution time is always audited, beyond
#: ``--top`` if need be (issue 27: every such statement is in the model).
COVERAGE_FLOOR = 0.01


def exec_ms_per_s(row: StatementRates) -> float:
    """A statement's execution time per second of the interval (ms/s): calls/s x mean execution time; 0 unknown."""
    return row.calls_per_s * (row.mean_exec_ms or 0.0)


def _totals(rows: list[StatementRates]) -> tuple[float, float]:
    """(calls/s, execution ms/s) of ``rows``."""
    return sum(r.calls_per_s for r in rows), sum(exec_ms_per_s(r) for r in rows)


def _share(row: StatementRates, calls_total: float, time_total: float) -> float:
    """The larger of the statement's share of the calls and of the execution time (0..1)."""
    return max(row.calls_per_s / calls_total if calls_total > 0 else 0.0,
               exec_ms_per_s(row) / time_total if time_total > 0 else 0.0)


def _transactions(span: _Interval, rows: list[StatementRates], texts: list[StatementRates]) -> TransactionLoad | None:
    """The transactions the interval's pg_locks snapshots saw, with the statements' calls/s and texts by
    :func:`~lockscope.workload.transactions.statement_key` (``q<queryid>``, and ``f<fingerprint>`` of the texts
    read); None when no snapshot was taken."""
    if not span.held:
        return None
    calls: dict[str, float] = {}
    by_text: dict[str, str] = {}
    for r in rows:
        calls[f"q{r.queryid}"] = calls.get(f"q{r.queryid}", 0.0) + r.calls_per_s
    for r in texts:
        by_text[f"q{r.queryid}"] = r.query
        fp = query_fingerprint(r.query) if r.query else None
        if fp is not None:
            calls[f"f{fp}"] = calls.get(f"f{fp}", 0.0) + r.calls_per_s
            by_text.setdefault(f"f{fp}", r.query)
    return transaction_load(span.held, transactions_per_s=span.per_s(0), calls_per_s=calls, texts=by_text)


#: Seconds between two pg_locks snapshots during the interval (``audit_held_locks.sql``).
HELD_LOCKS_EVERY_S = 1.0


def _hold_interval(session: Session, t0: float, interval_s: float, sleep: Callable[[float], None],
                   snapshots: list[list[HeldLocksRow]] | None) -> None:
    """Wait out the interval; with ``snapshots``, read the held relation locks every :data:`HELD_LOCKS_EVERY_S`
    (paced again by the session) and append each snapshot's rows."""
    end = t0 + interval_s
    while (now := time.monotonic()) < end:
        if snapshots is not None:
            try:
                snapshots.append(session.query_rows("audit_held_locks", HeldLocksRow))
            except DatabaseError:
                snapshots = None  # e.g. no access: the split falls back to the next basis
        now = time.monotonic()
        sleep(max(0.0, min(HELD_LOCKS_EVERY_S, end - now)))


def _mean(total: float | None, count: int | None, first_total: float | None,
          first_count: int | None) -> float | None:
    """A total's mean over its count (e.g. ms per call), over the interval (``first_*`` = the first snapshot's,
    None for since the reset); None without the counters or without a count."""
    if total is None or count is None:
        return None
    t = float(total) - float(first_total or 0.0)
    n = int(count) - int(first_count or 0)
    return t / n if n > 0 else None


def _counter_skew_per_s(calls_per_s: float, mean_exec_ms: float | None, mean_plan_ms: float | None,
                        snapshots: int, span_s: float | None) -> float:
    """:attr:`StatementRates.counter_skew_per_s`: at each of ``snapshots`` reads, the calls in flight (Little's law:
    rate x (planning + execution time), rounded up), spread over the span (calls/s); 0 when a figure is missing."""
    if mean_exec_ms is None or not span_s or span_s <= 0:
        return 0.0
    in_flight = math.ceil(calls_per_s * (mean_exec_ms + (mean_plan_ms or 0.0)) / 1000.0)
    return snapshots * in_flight / span_s


def _per_s(now: int | None, then: int | None, had_first: bool, interval_s: float, elapsed: float,
           since_s: float | None) -> float | None:
    """A counter's rate: its delta over the interval (``then`` = its value in the first snapshot, which had the
    entry when ``had_first``), or its value since the reset; None without the counter."""
    if now is None:
        return None
    if interval_s > 0:
        if not had_first:
            return max(int(now), 0) / elapsed
        return max(int(now) - int(then or 0), 0) / elapsed
    return int(now) / since_s if since_s else 0.0


def _since_reset_s(session: Session, schema_sql: str, settings: AuditSettings) -> float | None:
    if session.facts.server_version_num >= PG14:
        try:
            reset = session.query_rows("audit_pgss_reset", StatsResetRow, fill={"schema": schema_sql})[0].stats_reset
            if reset is not None:
                return max((settings.now - reset).total_seconds(), 1e-6)
        except DatabaseError:
            pass
    # PG 13 has no pg_stat_statements_info: the postmaster start bounds the counters' age
    row = session.query_rows("audit_postmaster_age", PostmasterAgeRow)[0]
    return max(float(row.age_s), 1e-6)
