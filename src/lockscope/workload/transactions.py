"""Transactions as the server holds them: main-lock-table locks per transaction from paced pg_locks snapshots.

PostgreSQL fills a backend's fast-path slots per **transaction**, not per statement: a relation lock stays held
until the transaction ends (``lock.c LockReleaseAll`` at commit or abort), so the statements of one transaction
share the 16 slots of a group (``lock.c FastPathGrantRelationLock``, ``FAST_PATH_REL_GROUP``), and five lookups
that each fit alone can put half their locks in the main lock table together. A lock that went to the main lock
table stays there until the transaction ends. This module turns the workload reader's pg_locks snapshots
(``audit_held_locks.sql``: per backend in a transaction, its ``xact_start``, the statement it runs or last ran, the
relations it holds and which of them are in the main lock table) into:

1. **observations**: one per backend transaction, ``(pid, xact_start)``, the snapshot where it held the most
   relation locks (the most seen of it), with every statement seen in it across snapshots;
2. **statement positions**: the observations grouped by the statement the backend was at. A snapshot catches a
   transaction anywhere: part-way through a statement's planning it holds fewer locks. The *complete* observations
   of a position are those holding at least the most common lock count among its upper half (the median and
   above); their mean main-table count is the position's, their common relations its *core*;
3. **transaction shapes**: a position whose core is contained in another's is an earlier statement of the same
   shape; the positions no other contains end a shape (positions with the same core end the same shape). A
   statement that is its own transaction (``xact_start = query_start``: autocommit, ``xact.c StartTransaction``)
   is a shape alone. A shape's **held main-table locks per transaction** are those of its last position;
4. **transactions per second** of a shape: the pg_stat_statements calls/s of its last statement (it runs once per
   transaction), else the database's transactions/s (``pg_stat_database`` xact_commit + xact_rollback, counted at
   each transaction's end and flushed by each backend at most once a second: ``pgstat_database.c``,
   ``pgstat.c pgstat_report_stat``) times the shape's share of the observed transactions; never more than the
   database's;
5. **main-lock-table acquisitions per second** = held main-table locks per transaction x transactions/s.

What it estimates: locks **held** at the moment of a snapshot. Locks taken and released inside the transaction
(an INSERT's target indexes, released at ExecutorEnd after its AFTER triggers; catalog locks of cache misses) are
invisible to pg_locks; PostgreSQL 19's ``pg_stat_lock.fastpath_exceeded`` counts those misses too (``lock.c
LockAcquireExtended``), so on 19 that counter is the server's figure and this the attribution. A snapshot a second
sees a short transaction at most once; the estimate needs transactions of the same shape to be seen at their last
statement, and takes statements that end transactions of different shapes for their earlier statements.
"""

from __future__ import annotations

import datetime
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from ..rows import HeldLocksRow
from .phases import query_fingerprint

__all__ = ["Observation", "TransactionLoad", "TransactionShape", "observe", "plans_every_call", "statement_key",
           "transaction_load"]

#: Statements that take relation locks worth attributing (BEGIN, COMMIT, SET ... are left out).
_LOCKING = re.compile(r"^\s*(\(\s*)*(select|with|insert|update|delete|merge|values|table|execute|call|copy)\b", re.I)
#: ``TransactionShape.tps_basis`` values.
TPS_BASES = ("calls of its last statement", "share of the database's transactions", "unknown")


def statement_key(query_id: int | None, text: str) -> str:
    """The key a statement is known by here: ``q<query_id>`` when the server gave one, else ``f<fingerprint>`` of
    its text (constants and ``$n`` alike ignored, :func:`lockscope.workload.phases.query_fingerprint`), else its
    text on one line."""
    if query_id:
        return f"q{query_id}"
    fp = query_fingerprint(text)
    return f"f{fp}" if fp is not None else "t" + " ".join(text.split())


@dataclass(frozen=True)
class Observation:
    """One backend transaction as the snapshots saw it, at the snapshot where it held the most relation locks.

    :ivar pid: the backend.
    :ivar xact_start: its transaction's start.
    :ivar statement: :func:`statement_key` of the statement it ran (or had last run) then.
    :ivar query_id: pg_stat_activity.query_id, None when not computed.
    :ivar text: the statement's text as pg_stat_activity showed it.
    :ivar starts_transaction: that statement began the transaction (autocommit).
    :ivar locks: relation locks held (count; pg_locks rows, a relation x mode each).
    :ivar main_locks: of them in the main lock table (count).
    :ivar relations: the relations held (OIDs).
    :ivar main_relations: the relations with a lock in the main lock table (OIDs).
    :ivar statements_seen: keys of every statement seen in this transaction across snapshots, first seen first.
    """

    pid: int
    xact_start: datetime.datetime
    statement: str
    query_id: int | None
    text: str
    starts_transaction: bool
    locks: int
    main_locks: int
    relations: frozenset[int]
    main_relations: frozenset[int]
    statements_seen: tuple[str, ...]


def observe(snapshots: Iterable[Sequence[HeldLocksRow]]) -> list[Observation]:
    """One :class:`Observation` per backend transaction ``(pid, xact_start)`` of locking statements (rows of
    utility statements such as BEGIN or COMMIT, and rows without ``xact_start``, left out).

    :param snapshots: ``audit_held_locks.sql`` row lists, in the order taken.
    """
    best: dict[tuple[int, datetime.datetime], Observation] = {}
    seen: dict[tuple[int, datetime.datetime], list[str]] = {}
    for rows in snapshots:
        for row in rows:
            text = str(row.query or "")
            if row.xact_start is None or not _LOCKING.match(text):
                continue
            key = (row.pid, row.xact_start)
            stmt = statement_key(row.query_id, text)
            order = seen.setdefault(key, [])
            if stmt not in order:
                order.append(stmt)
            locks = row.main_table_locks + row.fastpath_locks
            if key in best and best[key].locks >= locks:
                continue
            best[key] = Observation(row.pid, row.xact_start, stmt, row.query_id, text,
                                    bool(row.starts_transaction), locks, row.main_table_locks,
                                    frozenset(row.relations or ()), frozenset(row.main_relations or ()), ())
    return [replace(o, statements_seen=tuple(seen[k])) for k, o in best.items()]


@dataclass(frozen=True)
class TransactionShape:
    """Transactions of one shape: the statements that make them and what they hold at the end.

    :ivar statements: keys (:func:`statement_key`) of its statements, earliest first (by the relations each
        position holds), the last ones those it ends with.
    :ivar texts: their texts (pg_stat_statements' when known, else pg_stat_activity's), in the same order.
    :ivar query_ids: their query ids (None when unknown), in the same order.
    :ivar last: keys of the statements it ends with (one, or several that lock nothing new).
    :ivar single_statement: a statement that is its own transaction (autocommit).
    :ivar held_locks_per_txn: relation locks held at its end (count, mean of the complete observations).
    :ivar held_main_per_txn: of them in the main lock table (count, mean).
    :ivar relation_oids: the relations every complete observation held at its end (OIDs, sorted).
    :ivar main_relation_oids: those in the main lock table in at least half of them (OIDs, sorted).
    :ivar observations: complete observations behind the means (count).
    :ivar transactions_seen: backend transactions observed at any of its statements (count).
    :ivar transactions_per_s: its transactions per second.
    :ivar tps_basis: one of :data:`TPS_BASES`.
    :ivar held_main_low: the 95 % interval's low end of :attr:`held_main_per_txn` (count; :func:`_interval`).
    :ivar held_main_high: its high end (count).
    :ivar whole_basis: which observations count as seen whole: ``most held`` (a statement planned at every call:
        the most locks seen) or ``complete`` (the most common count among the upper half).
    """

    statements: tuple[str, ...]
    texts: tuple[str, ...]
    query_ids: tuple[int | None, ...]
    last: tuple[str, ...]
    single_statement: bool
    held_locks_per_txn: float
    held_main_per_txn: float
    relation_oids: tuple[int, ...]
    main_relation_oids: tuple[int, ...]
    observations: int
    transactions_seen: int
    transactions_per_s: float
    tps_basis: str
    held_main_low: float = 0.0
    held_main_high: float = 0.0
    whole_basis: str = ""

    @property
    def main_per_s(self) -> float:
        """Main-lock-table acquisitions per second: held main-table locks per transaction x transactions/s."""
        return self.held_main_per_txn * self.transactions_per_s


@dataclass(frozen=True)
class TransactionLoad:
    """What the pg_locks snapshots of an interval say about its transactions.

    :ivar shapes: the transaction shapes seen, most main-lock-table acquisitions/s first.
    :ivar snapshots: pg_locks snapshots taken (count).
    :ivar transactions_seen: backend transactions observed (count).
    :ivar transactions_per_s: the database's transactions per second over the interval, None when not read.
    """

    shapes: tuple[TransactionShape, ...]
    snapshots: int
    transactions_seen: int
    transactions_per_s: float | None

    @property
    def held_main_per_s(self) -> float:
        """Main-lock-table acquisitions per second of every shape (held locks only)."""
        return sum(s.main_per_s for s in self.shapes)

    @property
    def held_main_per_s_interval(self) -> tuple[float, float]:
        """The 95 % interval of :attr:`held_main_per_s` (acquisitions/s): each shape's held main-table locks per
        transaction interval (:func:`_interval`) x its transactions/s widened by :attr:`tps_spread`."""
        low = high = 0.0
        spread = self.tps_spread
        for s in self.shapes:
            low += s.held_main_low * s.transactions_per_s * (1.0 - spread)
            high += s.held_main_high * s.transactions_per_s * (1.0 + spread)
        return low, high

    @property
    def tps_spread(self) -> float:
        """The relative uncertainty of a shape's transactions/s (0..1): one second of transactions at either end
        of an interval of one second per snapshot (the counters and the snapshots are not read at the same
        instants, and ``pgstat_report_stat`` flushes a backend's transaction counts at most once a second)."""
        return 1.0 / self.snapshots if self.snapshots else 1.0


@dataclass(frozen=True)
class _Position:
    """The observations of backends at one statement (internal)."""

    statement: str
    single: bool
    observations: tuple[Observation, ...]
    complete: tuple[Observation, ...]
    core: frozenset[int]


#: A statement text with ``$n`` parameters (sent with the extended protocol: it may reuse a cached plan), or an
#: ``EXECUTE`` of a prepared statement.
_MAY_REUSE = re.compile(r"\$\d|^\s*execute\b", re.I)


def plans_every_call(text: str) -> bool:
    """True when a statement's text says it is planned at every call: sent with its values as literals (the simple
    protocol; ``postgres.c exec_simple_query`` plans every statement it receives), not ``$n`` parameters or an
    ``EXECUTE`` (a prepared statement may reuse its cached plan: ``plancache.c GetCachedPlan``)."""
    return not _MAY_REUSE.search(text)


def _complete(observations: Sequence[Observation], single: bool = False) -> tuple[Observation, ...]:
    """The observations that saw their transaction whole.

    A statement that is its own transaction and is planned at every call (:func:`plans_every_call`) holds, at its
    end, every lock its planning takes: locks are only added until the transaction ends (``lock.c``: released by
    ``LockReleaseAll`` at commit), so a snapshot sees a prefix of them while it plans, and the most seen is the
    closest to the whole. Under contention a snapshot rarely sees one whole (its own read holds every
    lock-partition LWLock, ``lockfuncs.c GetLockStatusData``, so the backends acquiring main-table locks queue at
    the same point): these are the observations holding the most locks.

    Otherwise (statements of a multi-statement transaction, seen between statements when idle in transaction; a
    prepared statement reusing its plan): those holding at least the most common lock count among the median and
    above (ties: the larger count): a snapshot part-way through the statement's planning holds fewer, a spike (a
    generic plan's build) more, and both are real transactions of this position."""
    if single and all(plans_every_call(o.text) for o in observations):
        top = max(o.locks for o in observations)
        return tuple(o for o in observations if o.locks == top)
    counts = sorted(o.locks for o in observations)
    median = counts[(len(counts) - 1) // 2]
    common = Counter(c for c in counts if c >= median)
    threshold = max(common.items(), key=lambda kv: (kv[1], kv[0]))[0]
    return tuple(o for o in observations if o.locks >= threshold)


#: Student's t at 95 % (two-sided) by degrees of freedom; 1.96 beyond.
_T95 = {1: 12.71, 2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45, 7: 2.36, 8: 2.31, 9: 2.26, 10: 2.23, 15: 2.13,
        20: 2.09, 30: 2.04}


def _t95(df: int) -> float:
    return next((t for d, t in sorted(_T95.items()) if df <= d), 1.96)


def _interval(complete: Sequence[Observation], seen: int, most_held: bool) -> tuple[float, float]:
    """The 95 % interval of held main-table locks per transaction (counts).

    ``most_held`` (:func:`_complete`): the whole is at least the most seen; if the ``seen`` snapshots of the
    statement caught its transactions at uniformly random points of their lock acquisition, the most seen falls
    short of the whole by more than a factor ``0.05 ** (1 / seen)`` with probability 5 %: the high end. Otherwise
    the complete observations' mean +- t x standard error (a single one: itself)."""
    mains = [o.main_locks for o in complete]
    mean = sum(mains) / len(mains)
    if most_held:
        return mean, mean / (0.05 ** (1.0 / max(seen, 1)))
    if len(mains) < 2:
        return mean, mean
    sd = (sum((m - mean) ** 2 for m in mains) / (len(mains) - 1)) ** 0.5
    half = _t95(len(mains) - 1) * sd / len(mains) ** 0.5
    return max(0.0, mean - half), mean + half


def _positions(observations: Sequence[Observation]) -> list[_Position]:
    groups: dict[tuple[str, bool], list[Observation]] = {}
    for o in observations:
        groups.setdefault((o.statement, o.starts_transaction), []).append(o)
    out = []
    for (stmt, single), obs in sorted(groups.items()):
        complete = _complete(obs, single)
        core = frozenset.intersection(*(o.relations for o in complete))
        out.append(_Position(stmt, single, tuple(obs), complete, core))
    return out


def _most_held(position: _Position) -> int:
    """The most relations one of the position's complete observations held (count)."""
    return max(len(o.relations) for o in position.complete)


def _shape_groups(positions: Sequence[_Position]) -> list[tuple[list[_Position], list[_Position]]]:
    """(last positions, earlier positions) per shape: autocommit statements alone; in multi-statement transactions
    the positions whose core no other position's core strictly contains end a shape (equal cores: the same shape),
    and the positions with a strictly smaller core come before, smaller cores first. Equal cores are told apart by
    the most relations one of their backends held (:func:`_most_held`): a statement seen only before it locked
    anything of its own has its predecessor's core; of the positions that end a shape, those whose backends held
    fewer than the most come before the others."""
    multi = [p for p in positions if not p.single and p.core]
    out: list[tuple[list[_Position], list[_Position]]] = [([p], []) for p in positions if p.single]
    ends: dict[frozenset[int], list[_Position]] = {}
    for p in multi:
        if not any(p.core < q.core for q in multi):
            ends.setdefault(p.core, []).append(p)
    for core, tied in ends.items():
        top = max(_most_held(p) for p in tied)
        last = [p for p in tied if _most_held(p) == top]
        earlier = sorted([*(p for p in multi if p.core < core), *(p for p in tied if _most_held(p) < top)],
                         key=lambda p: (len(p.core), _most_held(p), p.statement))
        out.append((last, earlier))
    return out


def _seen_order(order: Sequence[str], seen: Sequence[Sequence[str]]) -> list[str]:
    """``order`` with each statement moved before the first one that a backend's transaction was seen running
    after it (and never before it): what one backend ran in sequence outranks the order of the relations they
    hold (a first statement missed by the snapshots while it ran is otherwise placed after the one they saw)."""
    after = {(a, b) for run in seen for i, a in enumerate(run) for b in run[i + 1:]}
    out: list[str] = []
    for k in order:
        at = next((i for i, t in enumerate(out) if (k, t) in after and (t, k) not in after), len(out))
        out.insert(at, k)
    return out


def _shape(last: Sequence[_Position], earlier: Sequence[_Position], total_seen: int,
           transactions_per_s: float | None, calls_per_s: Mapping[str, float],
           texts: Mapping[str, str]) -> TransactionShape:
    complete = [o for p in last for o in p.complete]
    order: list[str] = [p.statement for p in earlier]
    for o in (o for p in last for o in p.observations):  # statements seen in its transactions by later snapshots
        order.extend(s for s in o.statements_seen if s not in order and s not in {p.statement for p in last})
    order.extend(p.statement for p in last if p.statement not in order)
    order = _seen_order(order, [o.statements_seen for p in (*earlier, *last) for o in p.observations])
    sample = {o.statement: o for p in (*earlier, *last) for o in p.observations}
    main_count = Counter(r for o in complete for r in o.main_relations)
    seen = sum(len(p.observations) for p in (*earlier, *last))
    known = [calls_per_s[p.statement] for p in last if p.statement in calls_per_s]
    if known:
        tps, basis = min(known), TPS_BASES[0]
    elif transactions_per_s is not None and total_seen:
        tps, basis = transactions_per_s * seen / total_seen, TPS_BASES[1]
    else:
        tps, basis = 0.0, TPS_BASES[2]
    if transactions_per_s is not None:
        tps = min(tps, transactions_per_s)
    most_held = all(p.single and all(plans_every_call(o.text) for o in p.observations) for p in last)
    low, high = _interval(complete, sum(len(p.observations) for p in last), most_held)
    return TransactionShape(
        statements=tuple(order),
        texts=tuple(texts.get(k) or (sample[k].text if k in sample else "") for k in order),
        query_ids=tuple(sample[k].query_id if k in sample else None for k in order),
        last=tuple(p.statement for p in last), single_statement=all(p.single for p in last),
        held_locks_per_txn=sum(o.locks for o in complete) / len(complete),
        held_main_per_txn=sum(o.main_locks for o in complete) / len(complete),
        relation_oids=tuple(sorted(frozenset.intersection(*(o.relations for o in complete)))),
        main_relation_oids=tuple(sorted(r for r, n in main_count.items() if 2 * n >= len(complete))),
        observations=len(complete), transactions_seen=seen, transactions_per_s=tps, tps_basis=basis,
        held_main_low=low, held_main_high=high, whole_basis="most held" if most_held else "complete")


def _canonical(observations: list[Observation], texts: Mapping[str, str]) -> list[Observation]:
    """Observations keyed by query id wherever one is known for their text: a backend that has just started a
    statement shows no query_id until parse analysis (``backend_status.c pgstat_report_activity`` clears it), so
    the same statement appears under its ``q`` and its ``f`` key; the ``f`` key becomes the ``q`` key of the
    pg_stat_statements entry or of another observation with the same fingerprint."""
    alias: dict[str, str] = {}
    for key, text in texts.items():
        fp = query_fingerprint(text) if key.startswith("q") else None
        if fp is not None:
            alias.setdefault(f"f{fp}", key)
    for o in observations:
        fp = query_fingerprint(o.text) if o.statement.startswith("q") else None
        if fp is not None:
            alias.setdefault(f"f{fp}", o.statement)
    if not alias:
        return observations
    out = []
    for o in observations:
        seen = tuple(dict.fromkeys(alias.get(k, k) for k in o.statements_seen))
        out.append(replace(o, statement=alias.get(o.statement, o.statement), statements_seen=seen))
    return out


def transaction_load(snapshots: Sequence[Sequence[HeldLocksRow]], *, transactions_per_s: float | None,
                     calls_per_s: Mapping[str, float], texts: Mapping[str, str]) -> TransactionLoad:
    """The transaction shapes of an interval and their main-lock-table acquisitions/s (see the module docstring).

    :param snapshots: the interval's ``audit_held_locks.sql`` snapshots, one row list each.
    :param transactions_per_s: the database's transactions per second over the interval, None when not read.
    :param calls_per_s: pg_stat_statements calls/s by :func:`statement_key` (a statement under its ``q`` key and
        its ``f`` key alike).
    :param texts: pg_stat_statements texts by the same keys.
    :return: a :class:`TransactionLoad` (no shape when no backend was seen in a transaction).
    """
    observations = _canonical(observe(snapshots), texts)
    total = len(observations)
    shapes = [_shape(last, earlier, total, transactions_per_s, calls_per_s, texts)
              for last, earlier in _shape_groups(_positions(observations))]
    shapes.sort(key=lambda s: (-s.main_per_s, -s.transactions_per_s, s.statements))
    return TransactionLoad(tuple(shapes), len(snapshots), total, transactions_per_s)
