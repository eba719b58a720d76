"""Migrations measured on lockscope's own scratch server: the shared lock-table entries each transaction needs.

A migration file runs as psql runs it (:func:`lockscope.script.read_script`): a ``BEGIN ... COMMIT`` block is one
transaction, every other statement one of its own. On a scratch server lockscope started itself
(:class:`lockscope.db.ScratchExecutor`), each transaction runs for real and COMMITs (the next ones see its objects).
The backend's entries outside the fast path (one per locked object, whatever its modes, as the shared table holds
them, ``lock.c`` ``LOCK`` keyed by ``LOCKTAG``) are read where the figures need them (:func:`read_points`): after
every statement outside a run of repetitions, after the first :data:`SAMPLED_REPETITIONS` repetitions of each
repeated shape and after its last, counted on the server (``sql/migration_lock_count.sql``); after the last
statement, before the COMMIT, in full (``sql/migration_locks.sql``). Each read costs the server a copy of every
backend's locks (``lockfuncs.c pg_lock_status``), so a read after each of 1,000 statements would cost more than the
statements. A transaction keeps every lock to its end (``lock.c LockReleaseAll``), so its entries only grow (the
transient catalog locks a statement takes while it runs aside: :data:`lockscope.migration_fit.HEADROOM_ENTRIES`):
the peak is the count after its last statement.

Per transaction this module derives:

- the peak by lock type (relation, object, transactionid, ...);
- its strong locks (``ShareUpdateExclusiveLock`` and stronger) on relations that existed before it: while one is
  held, every other backend's weak lock on that relation takes the main lock table (``lock.c
  FastPathStrongRelationLocks``, counted per hash partition of the relation's LOCKTAG);
- the growth per repeated statement: statements of the same shape (:func:`statement_shape`: literals and numbers
  masked, e.g. ``CREATE TABLE ... PARTITION OF events`` x 150), the entries each repetition adds (the difference
  between the totals after consecutive repetitions among the first ones read) and the fixed part; the step is
  constant when the first ones agree AND the total after the last repetition equals the first's plus
  ``(count - 1) x step``;
- the transaction's own growth per repetition, with the statements that follow the repetitions (an index on the
  parent adds one index per partition): measured by running the transaction cut to :func:`cut_size` repetitions
  first (rolled back, its entries read once at its end), :attr:`Repetition.transaction_per_repetition`.

A statement that cannot run in a transaction block (``CREATE INDEX CONCURRENTLY``, ``VACUUM``) runs on its own and
is not measured (its own transactions are internal): :attr:`MigrationTransaction.measured` is False.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from itertools import pairwise

from .db import ScratchExecutor
from .errors import StatementError
from .rows import MigrationEntriesRow, MigrationLockRow, OidListRow, RelationInfoRow, TableIndexesRow
from .script import Script, ScriptStatement, Transaction
from .vocab import LockMode

__all__ = [
    "MigrationTransaction",
    "PartitionSpread",
    "Repetition",
    "StrongLock",
    "cut_size",
    "cut_statements",
    "measure_migration",
    "read_points",
    "repeated_groups",
    "run_statements",
    "statement_shape",
    "touched_nothing",
]

#: SQLSTATE 25001 active_sql_transaction: the statement cannot run inside a transaction block.
_IN_BLOCK = "25001"
_LITERAL = re.compile(r"'(?:[^']|'')*'")
_NUMBER = re.compile(r"\d+")
_PARTITION_OF = re.compile(r"\bpartition\s+of\s+((?:\"[^\"]+\"|[\w$.])+)", re.I)
_MODES = frozenset(m.value for m in LockMode)
#: Statements (libpg_query node names) that write rows: one of them over many partitions can be split by the
#: partition key.
WRITE_KINDS = frozenset({"InsertStmt", "UpdateStmt", "DeleteStmt", "MergeStmt", "CopyStmt"})
#: Writes whose reach is the rows they route to partitions, not a WHERE.
ROUTING_KINDS = frozenset({"InsertStmt", "MergeStmt", "CopyStmt"})
#: Fewest repetitions measured as a growth (two differences to check constant).
MIN_REPETITIONS = 3
#: Repetitions of each repeated shape whose entries are read from its start (count: three steps to compare); the
#: last repetition is read too, and checked against the first plus (count - 1) x step.
SAMPLED_REPETITIONS = 4
#: The run cut for the whole transaction's growth keeps at least this many repetitions (count), and a tenth of them.
MIN_CUT_REPETITIONS = 4


@dataclass(frozen=True)
class StrongLock:
    """A strong relation lock a migration's transaction holds (``ShareUpdateExclusiveLock`` and stronger).

    :ivar relation_oid: the relation.
    :ivar relation: its quoted ``schema.name`` (the OID as text when it was dropped since).
    :ivar mode: the strongest mode held.
    :ivar existing: True when the relation existed before the transaction (other sessions can lock it: their weak
        locks on it take the main lock table while this is held, ``lock.c FastPathStrongRelationLocks``).
    """

    relation_oid: int
    relation: str
    mode: LockMode
    existing: bool


@dataclass(frozen=True)
class Repetition:
    """Statements of one shape repeated in a transaction, and what each repetition adds to the lock table.

    :ivar shape: the statements' shape (:func:`statement_shape`).
    :ivar label: for people, e.g. ``CREATE TABLE ... PARTITION OF events``.
    :ivar noun: what one repetition makes, plural (``partitions``, ``tables``, ``indexes``, ``repetitions``).
    :ivar positions: the statements' 0-based positions in the transaction.
    :ivar per_repetition: entries one repetition adds (count): the largest difference between the totals after
        consecutive repetitions read (the first :data:`SAMPLED_REPETITIONS`); when not constant, the mean over
        the repetitions not read (rounded up) if larger.
    :ivar constant: the differences read are the same AND the total after the last repetition is the first's
        plus ``(count - 1) x`` that difference.
    :ivar fixed: the transaction's peak less ``count x per_repetition`` (count).
    :ivar transaction_per_repetition: entries the whole transaction grows by per repetition, its later statements
        included (count, may be fractional): from a run cut to :func:`cut_size` repetitions; None when not
        measured.
    """

    shape: str
    label: str
    noun: str
    positions: tuple[int, ...]
    per_repetition: int
    constant: bool
    fixed: int
    transaction_per_repetition: float | None = None

    @property
    def count(self) -> int:
        """Repetitions (count)."""
        return len(self.positions)

    @property
    def growth(self) -> float:
        """Entries per repetition the transaction grows by: :attr:`transaction_per_repetition` when measured, else
        :attr:`per_repetition`."""
        return self.per_repetition if self.transaction_per_repetition is None else self.transaction_per_repetition


@dataclass(frozen=True)
class PartitionSpread:
    """The partitions of one partitioned table a transaction holds locks on, and the entries they take: a job that
    reaches many partitions in one statement (an UPDATE or DELETE without the partition key, an INSERT routed to
    every partition: ``execPartition.c ExecInitPartitionInfo`` opens each partition and its indexes), which a
    smaller batch would split by the partition key.

    :ivar parent: the partitioned table, quoted ``schema.name``.
    :ivar partitions: its partitions locked at the peak (count).
    :ivar entries: the lock-table entries on those partitions and their indexes and TOAST tables, held at the peak
        or taken while a statement runs (:attr:`MigrationTransaction.transient`) (count).
    """

    parent: str
    partitions: int
    entries: int

    @property
    def per_partition(self) -> float:
        """Entries per partition (count, may be fractional: the first weak locks take the fast path)."""
        return self.entries / self.partitions if self.partitions else 0.0


@dataclass(frozen=True)
class MigrationTransaction:
    """One transaction of a migration, run on a scratch server.

    :ivar number: 1-based place in the file.
    :ivar line: the line it starts at (1-based).
    :ivar explicit: a ``BEGIN ... COMMIT`` block (False: one statement in autocommit).
    :ivar statements: the statements' texts.
    :ivar statement_lines: their lines.
    :ivar entries_after: the entries outside the fast path after each statement (count each; None where not read,
        :func:`read_points`; the last statement's is always read: the peak).
    :ivar peak_by_type: the entries at the peak by pg_locks ``locktype``, sorted by type.
    :ivar strong_locks: strong relation locks held at the end, by relation OID.
    :ivar repetitions: repeated statement shapes, the most entries first.
    :ivar measured: False when the statement ran outside a transaction block and was not measured.
    :ivar kinds: the statements' kinds (libpg_query node names, :attr:`lockscope.script.ScriptStatement.kind`).
    :ivar empty_lines: the lines of its INSERT, UPDATE, DELETE, MERGE and COPY statements that touched no row, and
        of the SELECTs that returned none: their locks are those of no data (``--setup`` loads a sample).
    :ivar spread: the partitioned table whose partitions take the most entries (:class:`PartitionSpread`), None
        when no partition is locked outside the fast path.
    :ivar transient: entries its statements take while they run and release at their end (count): the indexes of
        each table it writes that it does not hold at its end (an INSERT's target, the partitions rows were routed
        to: ``execIndexing.c ExecOpenIndices`` then ``ExecCloseIndices``, RowExclusiveLock), all counted as if one
        statement wrote them all (an upper bound for several statements).
    """

    number: int
    line: int
    explicit: bool
    statements: tuple[str, ...]
    statement_lines: tuple[int, ...]
    entries_after: tuple[int | None, ...]
    peak_by_type: tuple[tuple[str, int], ...]
    strong_locks: tuple[StrongLock, ...]
    repetitions: tuple[Repetition, ...]
    measured: bool = True
    kinds: tuple[str, ...] = ()
    empty_lines: tuple[int, ...] = ()
    spread: PartitionSpread | None = None
    transient: int = 0

    @property
    def peak(self) -> int:
        """Entries at the peak (count): the transaction's need from the shared lock table."""
        return sum(n for _, n in self.peak_by_type)

    @property
    def fast_path_lost(self) -> tuple[str, ...]:
        """Relations that existed before the transaction and that it holds a strong lock on: while it runs, other
        sessions' weak locks on them take the main lock table."""
        return tuple(s.relation for s in self.strong_locks if s.existing)

    @property
    def writes_rows(self) -> bool:
        """Whether every statement of it is DML (:data:`WRITE_KINDS`, also under WITH): a statement of it over many
        partitions can be split by the partition key (a function call cannot)."""
        return all(k in WRITE_KINDS for k in self.kinds)

    @property
    def routes_rows(self) -> bool:
        """Whether a statement of it routes rows (:data:`ROUTING_KINDS`): its reach is its rows, not a WHERE."""
        return any(k in ROUTING_KINDS for k in self.kinds)

    @property
    def dominant(self) -> Repetition | None:
        """The repeated statement that adds the most entries, or None."""
        return self.repetitions[0] if self.repetitions else None


def statement_shape(text: str) -> str:
    """A statement's shape: blanks collapsed, lower case, string literals as ``?`` and digit runs as ``#`` (so
    ``CREATE TABLE events_2026_01_02 PARTITION OF events FOR VALUES FROM ('2026-01-02') ...`` and the next day's
    have one shape)."""
    flat = " ".join(text.split()).rstrip(";").lower()
    return _NUMBER.sub("#", _LITERAL.sub("?", flat))


def _label(text: str, shape: str) -> tuple[str, str]:
    """(label, noun) of a repeated statement."""
    parent = _PARTITION_OF.search(text)
    if shape.startswith("create table") and parent:
        return f"CREATE TABLE ... PARTITION OF {parent.group(1)}", "partitions"
    if "attach partition" in shape:
        return shape, "partitions attached"
    for prefix, noun in (("create table", "tables"), ("create index", "indexes"), ("create unique index", "indexes"),
                         ("alter table", "ALTER TABLE statements")):
        if shape.startswith(prefix):
            return shape if len(shape) <= 70 else shape[:67] + "...", noun
    return shape if len(shape) <= 70 else shape[:67] + "...", "repetitions"


def repeated_groups(statements: Sequence[ScriptStatement]) -> list[tuple[str, tuple[int, ...]]]:
    """Shapes repeated at least :data:`MIN_REPETITIONS` times: (shape, 0-based positions), most repeated first."""
    positions: dict[str, list[int]] = {}
    for n, stmt in enumerate(statements):
        positions.setdefault(statement_shape(stmt.text), []).append(n)
    groups = [(shape, tuple(p)) for shape, p in positions.items() if len(p) >= MIN_REPETITIONS]
    return sorted(groups, key=lambda g: -len(g[1]))


def read_points(count: int, groups: Sequence[tuple[str, tuple[int, ...]]]) -> frozenset[int]:
    """The 0-based positions of a transaction's ``count`` statements after which its entries are read: every
    statement outside the repeated ``groups`` (:func:`repeated_groups`), the first :data:`SAMPLED_REPETITIONS` and
    the last of each group, and the last statement (the peak)."""
    repeated = {p for _, positions in groups for p in positions}
    points = {p for p in range(count) if p not in repeated}
    for _, positions in groups:
        points.update(positions[:SAMPLED_REPETITIONS])
        points.add(positions[-1])
    if count:
        points.add(count - 1)
    return frozenset(points)


def cut_size(count: int) -> int:
    """Repetitions kept in the run cut for the whole transaction's growth (count): a tenth of ``count``, at least
    :data:`MIN_CUT_REPETITIONS`; the growth is the difference between the two runs' peaks over the difference
    between their repetitions."""
    return max(MIN_CUT_REPETITIONS, count // 10)


def cut_statements(statements: Sequence[ScriptStatement], positions: Sequence[int],
                   keep: int) -> tuple[ScriptStatement, ...]:
    """The transaction cut to its first ``keep`` repetitions (the repetitions at ``positions``; every other
    statement kept, in order)."""
    dropped = set(positions[keep:])
    return tuple(s for n, s in enumerate(statements) if n not in dropped)


def measure_migration(conninfo: str, script: Script) -> tuple[MigrationTransaction, ...]:
    """Run a migration on a scratch server, transaction after transaction, each committed, and measure what each
    needs from the shared lock table (see the module docstring).

    :param conninfo: a scratch server's conninfo (never a user's server: the statements run and commit).
    :return: one :class:`MigrationTransaction` per transaction, in file order.
    :raises StatementError: a statement failed (its SQLSTATE, its line and the server's message); 53200 "out of
        shared memory" included (the scratch server's own table was too small).
    :raises ConnectionFailedError: the server cannot be reached.
    """
    out: list[MigrationTransaction] = []
    with ScratchExecutor(conninfo) as ex:
        for number, txn in enumerate(script.transactions, 1):
            existing = set(ex.query_rows("migration_relation_oids", OidListRow)[0].oids)
            groups = repeated_groups(txn.statements)
            cut_peak = None
            if groups and len(groups[0][1]) >= 2 * MIN_REPETITIONS:
                keep = cut_size(len(groups[0][1]))
                cut = cut_statements(txn.statements, groups[0][1], keep)
                total = run_statements(ex, cut, commit=False, read_at={len(cut) - 1})[0][-1]
                cut_peak = (keep, total) if total is not None else None
            empty: list[int] = []
            totals, rows, measured = run_statements(ex, txn.statements, commit=True,
                                                    read_at=read_points(len(txn.statements), groups), rows=True,
                                                    empty=empty)
            done = _transaction(ex, number, txn, totals, rows, measured, existing, groups, cut_peak)
            transient, spread = _spread(ex, rows)
            out.append(dataclasses.replace(done, empty_lines=tuple(empty), spread=spread, transient=transient))
    return tuple(out)


def run_statements(ex: ScratchExecutor, statements: Sequence[ScriptStatement], *, commit: bool,
                   read_at: Collection[int] = frozenset(), rows: bool = False,
                   empty: list[int] | None = None) -> tuple[list[int | None], list[MigrationLockRow], bool]:
    """BEGIN, each statement run, COMMIT (or ROLLBACK). After the statements at the 0-based positions ``read_at``,
    the entries are counted (``migration_lock_count.sql``); with ``rows``, after the last one they are read in
    full (``migration_locks.sql``).

    :return: (the totals after each statement, None where not read; the rows after the last statement, empty
        without ``rows``; measured); one statement refused inside a block (25001) runs on its own, unmeasured.
    :param empty: when given, the lines of the statements that touched or returned no row are appended
        (:func:`touched_nothing`).
    :raises StatementError: a statement failed (``line N:`` and the server's message, its SQLSTATE); the
        transaction is rolled back.
    """
    totals: list[int | None] = []
    held: list[MigrationLockRow] = []
    ex.begin()
    try:
        for n, stmt in enumerate(statements):
            tag = _exec(ex, stmt)
            if empty is not None and touched_nothing(tag):
                empty.append(stmt.line)
            if rows and n == len(statements) - 1:
                held = ex.query_rows("migration_locks", MigrationLockRow)
                totals.append(len(held))
            elif n in read_at:
                totals.append(ex.query_rows("migration_lock_count", MigrationEntriesRow)[0].entries)
            else:
                totals.append(None)
    except StatementError as exc:
        ex.rollback()
        if exc.sqlstate != _IN_BLOCK or len(statements) != 1:
            raise
        _exec(ex, statements[0])
        return [None], [], False
    (ex.commit if commit else ex.rollback)()
    return totals, held, True


#: Command tags whose count is the rows the statement touched (``INSERT oid count`` ends with it too) or returned.
_ROW_TAGS = ("INSERT", "UPDATE", "DELETE", "MERGE", "COPY", "SELECT")


def touched_nothing(tag: str) -> bool:
    """Whether a statement's command tag (``UPDATE 0``, ``INSERT 0 0``, ``SELECT 0``) says it touched or returned no
    row; False for a tag without a row count (``CREATE TABLE``, ``DO``, ``CALL``)."""
    words = tag.split()
    return len(words) >= 2 and words[0] in _ROW_TAGS and words[-1] == "0"


def _exec(ex: ScratchExecutor, stmt: ScriptStatement) -> str:
    try:
        return ex.run(stmt.text)
    except StatementError as exc:
        raise StatementError(f"line {stmt.line}: {exc}", sqlstate=exc.sqlstate) from None


def _transaction(ex: ScratchExecutor, number: int, txn: Transaction, totals: list[int | None],
                 rows: list[MigrationLockRow], measured: bool, existing: set[int],
                 groups: list[tuple[str, tuple[int, ...]]], cut_peak: tuple[int, int] | None) -> MigrationTransaction:
    """The measured transaction: peak by type, strong locks named (after the COMMIT: the naming query's own locks
    are not measured), repetitions."""
    peak = Counter(r.locktype for r in rows)
    strong: dict[int, LockMode] = {}
    for r in rows:
        modes = [LockMode(m) for m in r.modes if m in _MODES]
        top = max(modes, key=lambda m: m.rank, default=None)
        if r.locktype == "relation" and r.relation_oid is not None and top is not None and not top.weak:
            strong[r.relation_oid] = top
    names = {i.relation_oid: i.relation for i in ex.query_rows("relation_info", RelationInfoRow, [sorted(strong)])} \
        if strong else {}
    locks = tuple(StrongLock(oid, names.get(oid, f"{oid} (dropped)"), mode, oid in existing)
                  for oid, mode in sorted(strong.items()))
    reps = [_repetition(txn.statements, shape, pos, totals, cut_peak if k == 0 else None)
            for k, (shape, pos) in enumerate(groups)] if measured else []
    reps.sort(key=lambda r: -(r.count * r.per_repetition))
    return MigrationTransaction(
        number=number, line=txn.line, explicit=txn.explicit, statements=tuple(s.text for s in txn.statements),
        kinds=tuple(s.kind for s in txn.statements),
        statement_lines=tuple(s.line for s in txn.statements), entries_after=tuple(totals),
        peak_by_type=tuple(sorted(peak.items())), strong_locks=locks, repetitions=tuple(reps), measured=measured)


def _repetition(statements: Sequence[ScriptStatement], shape: str, positions: tuple[int, ...],
                totals: list[int | None], cut_peak: tuple[int, int] | None) -> Repetition:
    """A repeated shape's growth: the differences between the totals after its first repetitions (read), checked
    against the total after its last; the peak is the total after the transaction's last statement (read)."""
    after = [totals[p] for p in positions]
    sampled = [a for a in after[:SAMPLED_REPETITIONS] if a is not None]
    first, last, peak = sampled[0], after[-1], totals[-1]
    assert last is not None and peak is not None and len(sampled) == min(len(after), SAMPLED_REPETITIONS)
    steps = [b - a for a, b in pairwise(sampled)]
    constant = len(set(steps)) == 1 and last == first + (len(after) - 1) * steps[0]
    per = max(steps)
    if not constant and len(after) > len(sampled):  # the repetitions not read: their mean step, rounded up
        per = max(per, math.ceil((last - sampled[-1]) / (len(after) - len(sampled))))
    label, noun = _label(statements[positions[0]].text, shape)
    whole = None
    if cut_peak is not None:
        keep, peak_cut = cut_peak
        whole = (peak - peak_cut) / (len(positions) - keep)
    return Repetition(shape=shape, label=label, noun=noun, positions=positions, per_repetition=per,
                      constant=constant, fixed=peak - len(positions) * per, transaction_per_repetition=whole)


def _spread(ex: ScratchExecutor, rows: Sequence[MigrationLockRow]) -> tuple[int, PartitionSpread | None]:
    """(:attr:`MigrationTransaction.transient`, the partitioned table whose partitions, with their indexes and TOAST
    tables, take the most of the peak's entries and of the transient ones); read after the COMMIT (relations the
    transaction dropped are not named, so not counted)."""
    oids = sorted({r.relation_oid for r in rows if r.locktype == "relation" and r.relation_oid is not None})
    if not oids:
        return 0, None
    written = sorted({r.relation_oid for r in rows if r.locktype == "relation" and r.relation_oid is not None
                      and LockMode.ROW_EXCLUSIVE.value in r.modes})
    released = {row.relation_oid: [i for i in row.oids if i not in set(oids)]
                for row in ex.query_rows("migration_table_indexes", TableIndexesRow, [written])} if written else {}
    infos = {i.relation_oid: i for i in ex.query_rows("relation_info", RelationInfoRow, [oids])}

    def partition_of(oid: int) -> int | None:
        """The partition ``oid`` is, or belongs to (its index or TOAST table)."""
        info = infos.get(oid)
        if info is None:
            return None
        if info.relispartition and info.relkind in ("r", "p"):
            return oid
        if info.relkind in ("i", "t") and info.parent_oid is not None:
            owner = infos.get(info.parent_oid)
            return info.parent_oid if owner is not None and owner.relispartition else None
        return None

    entries: Counter[int] = Counter()
    for oid in oids:
        part = partition_of(oid)
        if part is not None:
            entries[part] += 1 + (len(released.get(oid, ())) if part == oid else 0)
    transient = sum(len(v) for v in released.values())
    by_parent: dict[int, list[int]] = {}
    for part in entries:
        parent = infos[part].parent_oid
        if parent is not None:
            by_parent.setdefault(parent, []).append(part)
    if not by_parent:
        return transient, None
    parent, parts = max(by_parent.items(), key=lambda kv: sum(entries[p] for p in kv[1]))
    names = {i.relation_oid: i.relation for i in ex.query_rows("relation_info", RelationInfoRow, [[parent]])}
    return transient, PartitionSpread(names.get(parent, str(parent)), len(parts), sum(entries[p] for p in parts))
