"""Execution locks: the relation locks a real execution of a statement takes that its EXPLAIN never takes.

EXPLAIN parses, rewrites and plans; a real execution also evaluates defaults, routes rows, writes indexes and
TOAST, and fires triggers. On a user's server lockscope never executes the statement: it simulates the execution
row by row as the executor runs it, from the catalog, the statement's values and the rows the statement reaches,
and it probes the queries the server would run inside the execution (foreign-key checks and actions, triggers'
statements) with ``EXPLAIN EXECUTE`` of stand-ins whose plan caches advance call by call as the backend's do
(:mod:`lockscope.footprint`). The rules, with the source each follows and the majors where it differs (checked
against statements executed on scratch servers of PostgreSQL 13-19, ``tests/test_txn_truth.py`` and the generated
shapes of ``tests/test_differential.py``):

- **the rows** a write reaches: an INSERT's from its ``VALUES``; an UPDATE's or DELETE's, and those a foreign-key
  action reaches, by lockscope's own key lookup (``exec_rows.sql``: ``col = value`` conditions lockscope builds from
  the statement's constants and the rows' keys, never the statement's own expressions), with the partition each
  row is in; the rows a transaction's earlier statements wrote, from their own simulation (:class:`RowOverlay`).
  A WHERE clause that is not a conjunction of ``column = value``, an ``INSERT ... SELECT``, a key computed only
  when the statement runs: the rows are not known, and the execution is said to be a lower bound
  (:attr:`ExecutionModel.unknowns`).
- **sequences** (:attr:`LockSource.SEQUENCE`): a column default or identity that calls ``nextval``, for an inserted
  column the statement does not give, or an explicit ``nextval('name')``: the sequence ``RowExclusiveLock``, held
  (``sequence.c nextval_internal`` → ``lock_and_open_sequence``), when the row is formed.
- **the target's indexes** (:attr:`LockSource.TARGET_INDEX`): INSERT and UPDATE open every index of each relation a
  row is written to ``RowExclusiveLock`` (``execIndexing.c ExecOpenIndices``: PG 13 at executor start, 14+ at the
  first row, commit c5b7ba4e67; a routed partition's at routing, ``execPartition.c ExecInitPartitionInfo``) and
  release them at ``ExecutorEnd``, after the statement's AFTER triggers (``ExecCloseIndices``). DELETE never opens
  them.
- **tuple routing** (:attr:`LockSource.ROUTING`): an INSERT into a partitioned table, or a row an UPDATE moves,
  locks the partition it goes to and every sub-partitioned table on the way ``RowExclusiveLock``, held
  (``execPartition.c ExecFindPartition``); the partition is found by the server's own pruning of ``SELECT 1 FROM
  parent WHERE key = value`` (its plan names it: no pg_locks read).
- **the partition constraint** (:attr:`LockSource.PARTITION_CONSTRAINT`): building a partition's constraint locks
  its parent ``AccessShareLock`` (``partcache.c generate_partition_qual``), once per partition per backend (the
  relcache keeps it): every UPDATE of a row in a partition checks it (``nodeModifyTable.c ExecUpdateAct``:
  ``ExecPartitionCheck``), and PG 13's routing too (``execMain.c InitResultRelInfo``).
- **foreign keys** (:attr:`LockSource.FK_CHECK`, :attr:`LockSource.FK_ACTION`): the relation's own foreign-key
  triggers (``exec_ri_triggers.sql``: a partition's are clones of its parent's), queued per row when their event
  needs them (``trigger.c AfterTriggerSaveEvent``: ``RI_FKey_pk_upd_check_required``,
  ``RI_FKey_fk_upd_check_required``) and fired at the end of the statement in name order; a check runs
  ``SELECT 1 FROM [ONLY] pk x WHERE ... FOR KEY SHARE OF x`` through SPI and the plan cache, an action its
  ``ri_triggers.c`` query (``ri_Check_Pk_Match``, ``ri_restrict``, ``RI_FKey_cascade_del``,
  ``RI_FKey_cascade_upd``, ``ri_set``) whose own rows' AFTER events join the current query level
  (``SPI_execute_snapshot`` with ``fire_triggers`` false: ``trigger.c AfterTriggerEndQuery`` fires them in later
  passes); the plan caches are keyed by the root constraint on PG 14+ (``ri_BuildQueryKey``, commit c3ffe34863),
  by each clone on 13. PG 19 checks a non-partitioned referenced table without SPI: the table ``RowShareLock`` and
  the constraint's index ``AccessShareLock`` (commit 2da86c1ef, ``ri_fastpath_is_applicable``).
- **user triggers** (:attr:`LockSource.TRIGGER`): the triggers of the relation each row is in (a partition's own
  and its clones of the parent's; statement triggers of the table the statement names), their functions'
  statements (:mod:`lockscope.plpgsql`) as SPI plans per trigger, DML among them simulated in a query level of its
  own (``pl_exec.c``); a cross-partition UPDATE fires DELETE triggers on the source partition and INSERT ones on
  the destination, and on PG 15+ the root's foreign-key UPDATE triggers (``ExecCrossPartitionUpdateForeignKey``).
- **TOAST** (:attr:`LockSource.TOAST`): a value written out of line locks the TOAST relation and its index
  ``RowExclusiveLock`` (``toast_internals.c toast_save_datum``); estimated from the values' sizes.

What the simulation cannot know is said in :attr:`ExecutionModel.unknowns` (the figures are then a lower bound);
what it assumed and stays exact, in :attr:`ExecutionModel.notes`.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from typing import TYPE_CHECKING, Any

import pglast.parser

from . import evaluate, plpgsql, toast
from .plpgsql import FiringTrigger, ParamOrigin, TriggerEvent, TriggerLevel, TriggerParam, TriggerProgram, TriggerTiming
from .rows import (
    ExecColumnRow,
    ExecRiTriggerRow,
    ExecRowValuesRow,
    ExecTargetRow,
    ExecTriggerRow,
    OrdinalOidRow,
    OrdinalValueRow,
    PartitionTreeRow,
    TableColumnRow,
    UniqueKeyColumnRow,
)
from .statement import CheckedStatement, bind_params, check_statement, raw_statement
from .versions import PG14, PG15, PG17, PG18, PG19
from .vocab import LockMode, LockSource

if TYPE_CHECKING:
    from .db import Session

__all__ = ["DERIVATION_CATALOG", "ROW_READ_LIMIT", "ExecutionModel", "ExtraLock", "RowOverlay", "SpiCall", "SpiQuery",
           "Stage", "derive_execution", "describe_json", "dml_ctes", "is_known", "target_relation", "update_targets",
           "where_conditions", "where_conjuncts"]

#: The catalog reads of a write's derivation: the same for every execution of one measurement
#: (``Session.catalog_memo``).
DERIVATION_CATALOG = frozenset({"exec_target", "exec_columns", "exec_ri_triggers", "exec_triggers",
                                "audit_table_columns", "exec_partition_tree", "exec_unique_keys"})

#: The most rows one key lookup reads (count): a write or an action reaching more is not simulated row by row.
ROW_READ_LIMIT = 1000
#: How deep statements run by triggers and foreign-key actions are followed (levels).
MAX_DEPTH = 12
#: The most events one statement's simulation makes (count): beyond, the rest is said as unknown.
MAX_EVENTS = 20000
#: A read value longer than this is not kept (bytes): it stands as a value only the execution knows.
_BIG_VALUE = 2048


class Stage(IntEnum):
    """When in a statement's execution a lock is taken (``execMain.c`` / ``trigger.c`` order)."""

    #: planning: the partition constraint of a sub-partitioned table, built right after the planner opens it.
    PLANNER = 0
    #: ``ExecutorStart`` (PG 13 opens the target's indexes here).
    EXECUTOR_START = 1
    #: while a row is written: defaults, the target's indexes (14+), routing, BEFORE ROW triggers, TOAST.
    ROW = 2
    #: ``AfterTriggerEndQuery``: the AFTER ROW triggers of each row, foreign-key checks and actions among them.
    AFTER_ROW = 3
    #: ``ExecutorEnd``: the target's indexes are released.
    END = 4


@dataclass(frozen=True)
class ExtraLock:
    """A lock a real execution takes that lockscope cannot take in a READ ONLY probe: the model adds it.

    :ivar relation_oid: the relation.
    :ivar mode: the lock mode.
    :ivar source: what takes it.
    :ivar detail: which sequence, partition or constraint, for the output.
    :ivar stage: when.
    :ivar row: the row (0-based) of a multi-row statement.
    :ivar release: True: this releases one earlier acquisition (the target's indexes at ``ExecutorEnd``).
    :ivar first_execution_only: taken only the first time in a backend.
    :ivar once_key: taken only the first time this key is met in a backend (a relcache entry it fills, e.g. a
        partition's constraint: ``partqual:<oid>``); empty: every time.
    """

    relation_oid: int
    mode: LockMode
    source: LockSource
    detail: str
    stage: Stage
    row: int = 0
    release: bool = False
    first_execution_only: bool = False
    once_key: str = ""


@dataclass(frozen=True)
class SpiQuery:
    """A query the server runs inside an execution through SPI and its own plan cache; lockscope PREPAREs a stepper
    of it and EXPLAIN EXECUTEs it where the server would run it, so its plan-cache phase is the server's own.

    :ivar key: the plan cache's identity (``ri_triggers.c ri_BuildQueryKey``: constraint and query kind; a trigger's
        statement: the trigger and its place in the function).
    :ivar text: the query as the server writes it, parameters ``$1..$n``.
    :ivar param_types: the parameters' types.
    :ivar source: :attr:`LockSource.FK_CHECK`, :attr:`LockSource.FK_ACTION` or :attr:`LockSource.TRIGGER`.
    :ivar detail: the constraint's or trigger's name and what the query does, for the output.
    :ivar one_shot: planned at every call with its values as constants, no plan cache (a PL/pgSQL ``EXECUTE``:
        ``spi.c SPI_execute_extended``); probed as the simple protocol is.
    """

    key: str
    text: str
    param_types: tuple[str, ...]
    source: LockSource
    detail: str
    one_shot: bool = False


@dataclass(frozen=True)
class SpiCall:
    """One call of an :class:`SpiQuery` (one row's check, action or trigger statement).

    :ivar values: the parameters' values as text (None: NULL).
    """

    query: SpiQuery
    values: tuple[str | None, ...]
    stage: Stage
    row: int = 0


@dataclass(frozen=True)
class ExecutionModel:
    """What one execution of a statement adds to what its EXPLAIN locks, in the order the server takes it.

    :ivar events: :class:`ExtraLock` and :class:`SpiCall` items in acquisition order (after the statement's own
        locks and a reused plan's executor index locks).
    :ivar notes: what the model assumed, one sentence each (said beside the figures; they stay exact).
    :ivar unknowns: what the model could not derive and that changes the locks (dynamic SQL, rows only the
        execution finds, ...), one sentence each: the figures are then a lower bound, never shown as exact.
    :ivar grown: the relations the execution gives their first page (rows written into a table that was empty at
        its last VACUUM or ANALYZE), with their partitioned ancestors: the space stays after a rollback, and the
        planner's cost estimates read it (``plancat.c estimate_rel_size``: the relation's current size).
    """

    events: tuple[ExtraLock | SpiCall, ...] = ()
    notes: tuple[str, ...] = ()
    unknowns: tuple[str, ...] = ()
    grown: frozenset[int] = frozenset()

    @property
    def spi_queries(self) -> tuple[SpiQuery, ...]:
        """The distinct SPI queries the calls use, first use first."""
        seen: dict[str, SpiQuery] = {}
        for e in self.events:
            if isinstance(e, SpiCall):
                seen.setdefault(e.query.key, e.query)
        return tuple(seen.values())


#: A value only the execution knows (computed, or read beyond what lockscope keeps).
_UNKNOWN = "\x00unknown"
#: ``DEFAULT`` in an INSERT's or UPDATE's values.
_DEFAULT = "\x00default"
Value = str | None


def _known(value: Value) -> bool:
    return value not in (_UNKNOWN, _DEFAULT)


# -- the rows -----------------------------------------------------------------------------------------------------

@dataclass
class _Row:
    """One row a write handles: its columns' values (text as the server prints them; None: NULL; :data:`_UNKNOWN`),
    the relation it is in (a partition; None when not known), whether this transaction wrote this version of it
    (inserted, or updated into place: its ``xmin`` is the transaction's), the columns whose values are stored out of
    line (``external``; ``external_unknown`` when the read could not tell), and the version the transaction wrote
    (:class:`RowOverlay`; 0 for a committed row)."""

    values: dict[str, Value]
    leaf: int | None
    inserted_here: bool = False
    external: frozenset[str] = frozenset()
    external_unknown: bool = False
    version: int = 0


@dataclass
class _Found:
    """The rows a lookup found: ``exact`` when they are the rows the execution finds (else an estimate, with the
    reason)."""

    rows: list[_Row]
    exact: bool = True
    reason: str = ""


@dataclass
class RowOverlay:
    """The rows a transaction's earlier statements wrote, as lockscope simulated them: a later statement's key
    lookup finds the rows inserted before it (its own read sees the committed data only) and not those deleted.
    Each row version the transaction writes has a number of its own, so that a version deleted later is told from
    its successor even where their known values agree.

    :ivar inserted: (partition, row) of each row version inserted or updated into place.
    :ivar deleted: (partition, values, version) of each row deleted or updated away (version 0: a committed row).
    """

    inserted: list[tuple[int | None, _Row]] = field(default_factory=list)
    deleted: list[tuple[int | None, dict[str, Value], int]] = field(default_factory=list)

    @staticmethod
    def _matches(values: Mapping[str, Value], conditions: Mapping[str, Value]) -> bool:
        return all(c in values and values[c] == v for c, v in conditions.items())

    def write(self, leaf: int | None, row: _Row) -> None:
        """``row`` written into ``leaf`` by this transaction (inserted, or a new version): numbered, kept."""
        row.version = len(self.inserted) + 1
        row.inserted_here = True
        self.inserted.append((leaf, row))

    def remove(self, leaf: int | None, row: _Row) -> None:
        """``row`` (a committed row, or a version this transaction wrote) deleted or updated away."""
        self.deleted.append((leaf, dict(row.values), row.version))

    def adjust(self, tree: frozenset[int], conditions: Mapping[str, Value], rows: list[_Row],
               ranges: Sequence[Cond] = (), types: Mapping[str, str] | None = None) -> list[_Row] | None:
        """``rows`` read from the relations ``tree`` (a table and its partitions) without those deleted by earlier
        statements and with those they inserted that meet ``conditions`` and ``ranges``; None when a range
        comparison of such a row cannot be judged here (a type compared other than as a number)."""
        gone = {version for _, _, version in self.deleted if version}
        out = [r for r in rows if not any(not version and (leaf is None or leaf == r.leaf)
                                          and _same_row(values, r.values) for leaf, values, version in self.deleted)]
        for leaf, row in self.inserted:
            values = row.values
            if (leaf is None or leaf in tree) and row.version not in gone and self._matches(values, conditions):
                meets = [_meets(values.get(r[0], _UNKNOWN), r, (types or {}).get(r[0], "")) for r in ranges]
                if any(m is None for m in meets):
                    return None
                if all(meets):
                    out.append(_Row(dict(values), leaf, True, row.external, row.external_unknown, row.version))
        return out


_NUMERIC = ("integer", "bigint", "smallint", "numeric", "real", "double precision")


def _meets(value: Value, cond: Cond, type_name: str) -> bool | None:
    """Whether a value meets a comparison, as the server would for numbers (None: not judged here)."""
    _, op, operands = cond
    if op in ("is null", "is not null"):
        return (value is None) == (op == "is null") if _known(value) else None
    if value is None:
        return False
    if not _known(value) or not type_name.startswith(_NUMERIC):
        return None
    try:
        x = float(str(value))
        ys = [float(str(v)) for v in operands]
    except ValueError:
        return None
    if op == "in":
        return x in ys
    if op == "between":
        return ys[0] <= x <= ys[1]
    return {"=": x == ys[0], "<>": x != ys[0], "<": x < ys[0], "<=": x <= ys[0], ">": x > ys[0],
            ">=": x >= ys[0]}[op]


def _range_qual(column: str, cond: Cond, type_name: str) -> str:
    """A comparison as ``exec_rows.sql``'s condition, the constants as parameters cast to the column's type."""
    _, op, values = cond
    cast = f"CAST(%s::text AS {type_name})"
    if op == "is null" or op == "is not null":
        return f"{column} {op.upper()}"
    if op == "in":
        return f"{column} IN ({', '.join(cast for _ in values)})"
    if op == "between":
        return f"{column} BETWEEN {cast} AND {cast}"
    return f"{column} {op} {cast}"


def _same_row(a: Mapping[str, Value], b: Mapping[str, Value]) -> bool:
    """Two row images agree on every column both know (and share at least one)."""
    common = [c for c in a if c in b and _known(a[c]) and _known(b[c])]
    return bool(common) and all(a[c] == b[c] for c in common)


class _Catalog:
    """The catalog facts of the relations a simulation meets, read once each (``Session.catalog_memo`` keeps them
    for a measurement)."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self._targets: dict[int, ExecTargetRow] = {}
        self._columns: dict[int, list[ExecColumnRow]] = {}
        self._ri: dict[int, list[ExecRiTriggerRow]] = {}
        self._user: dict[int, list[ExecTriggerRow]] = {}
        self._tree: dict[int, list[PartitionTreeRow]] = {}

    def target(self, oid: int) -> ExecTargetRow:
        if oid not in self._targets:
            self._targets[oid] = self.session.query_rows("exec_target", ExecTargetRow, [oid])[0]
        return self._targets[oid]

    def columns(self, oid: int) -> list[ExecColumnRow]:
        if oid not in self._columns:
            self._columns[oid] = self.session.query_rows("exec_columns", ExecColumnRow, [oid])
        return self._columns[oid]

    def ri_triggers(self, oid: int) -> list[ExecRiTriggerRow]:
        if oid not in self._ri:
            self._ri[oid] = self.session.query_rows("exec_ri_triggers", ExecRiTriggerRow, [oid, oid])
        return self._ri[oid]

    def user_triggers(self, oid: int) -> list[ExecTriggerRow]:
        if oid not in self._user:
            self._user[oid] = self.session.query_rows("exec_triggers", ExecTriggerRow, [oid])
        return self._user[oid]

    def tree(self, oid: int) -> list[PartitionTreeRow]:
        """The partition tree under ``oid`` (itself first)."""
        if oid not in self._tree:
            self._tree[oid] = self.session.query_rows("exec_partition_tree", PartitionTreeRow, [oid])
        return self._tree[oid]

    def tree_oids(self, oid: int) -> frozenset[int]:
        return frozenset(r.relation_oid for r in self.tree(oid)) | {oid}


class RowReader:
    """The rows a write reaches, by lockscope's own key lookups (``exec_rows.sql``), adjusted by the transaction's
    earlier writes (:class:`RowOverlay`).

    :param enabled: False: no table is read (every row set is an estimate, said as unknown).
    :param limit: the most rows one lookup reads (count); more make the row set an estimate.
    """

    def __init__(self, session: Session, catalog: _Catalog, overlay: RowOverlay | None = None, *,
                 enabled: bool = True, limit: int = ROW_READ_LIMIT) -> None:
        self.session = session
        self.catalog = catalog
        self.overlay = overlay if overlay is not None else RowOverlay()
        self.enabled = enabled
        self.limit = limit

    def find(self, relation_oid: int, conditions: Mapping[str, Value], *, only: bool = False,
             ranges: Sequence[Cond] = ()) -> _Found:
        """The rows of ``relation_oid`` (and its partitions unless ``only``) whose columns equal ``conditions``
        (names unquoted; a NULL condition finds nothing, as ``=`` does) and meet ``ranges`` (comparisons with
        constants, each as the server compares: the column's type and collation).

        :raises DatabaseError: the read failed (statement_timeout ...).
        """
        target = self.catalog.target(relation_oid)
        if any(not _known(v) for v in [*conditions.values(), *(v for r in ranges for v in r[2])]):
            return _Found([_Row(dict(conditions), None)], False,
                          f"{target.relation}: which rows the key reaches is known only when the statement runs")
        if any(v is None for v in conditions.values()) or any(v is None for r in ranges for v in r[2]):
            return _Found([])
        if not self.enabled:
            return _Found([_Row(dict(conditions), None)], False,
                          f"{target.relation}: the rows the key reaches are not read (row reads are off)")
        columns = self.catalog.columns(relation_oid)
        types = {c.name: c.type_name for c in columns}
        if any(c not in types for c in [*conditions, *(r[0] for r in ranges)]):
            return _Found([_Row(dict(conditions), None)], False, f"{target.relation}: a condition names no column")
        if any(r[1] == "in cte" for r in ranges):  # not resolved by the caller (_Sim._cte_ranges)
            return _Found([_Row(dict(conditions), None)], False,
                          f"{target.relation}: a condition on a WITH query's rows lockscope did not derive")
        ident = self.session.identifier
        names = [c.name for c in columns]
        toastable = {c.name for c in columns if c.toastable}
        fill = {
            "columns": ", ".join(f"CASE WHEN coalesce(pg_catalog.pg_column_size(t.{ident(n)}), 0) <= {_BIG_VALUE} "
                                 f"THEN t.{ident(n)}::text ELSE {self.session.literal(_BIG_MARK)} END" for n in names)
            or "NULL",
            "sizes": ", ".join(f"pg_catalog.pg_column_size(t.{ident(n)})" for n in names) or "NULL",
            "relation": ("ONLY " if only else "") + target.relation,
            "quals": " AND ".join([*(f"t.{ident(c)} = CAST(%s::text AS {types[c]})" for c in conditions),
                                   *(_range_qual(f"t.{ident(r[0])}", r, types[r[0]]) for r in ranges)]) or "true",
        }
        if self.session.facts.server_version_num >= PG17:
            fill["external"] = ", ".join(f"pg_catalog.pg_column_toast_chunk_id(t.{ident(n)}) IS NOT NULL"
                                         if n in toastable else "false" for n in names) or "NULL"
        values = [*conditions.values(), *(v for r in ranges for v in r[2] if v is not None)]
        read = self.session.query_rows("exec_rows", ExecRowValuesRow, [*values, self.limit + 1], fill=fill)
        rows = []
        for r in read:
            external, unknown = _out_of_line(names, toastable, r)
            rows.append(_Row({n: (_UNKNOWN if v == _BIG_MARK else v) for n, v in zip(names, r.vals, strict=True)},
                             r.leaf_oid, external=external, external_unknown=unknown))
        tree = frozenset({relation_oid}) if only else self.catalog.tree_oids(relation_oid)
        adjusted = self.overlay.adjust(tree, conditions, rows, ranges, types)
        if adjusted is None:
            return _Found(rows, False, f"{target.relation}: whether rows the transaction wrote meet the statement's "
                          "comparisons is not known")
        rows = adjusted
        if len(read) > self.limit:
            return _Found(rows, False, f"{target.relation}: more than {self.limit} rows reached")
        return _Found(rows)


#: What ``exec_rows.sql`` puts for a value too long to keep.
_BIG_MARK = "\x01big"
#: ``heaptoast.h TOAST_TUPLE_TARGET`` less a tuple header (bytes): a value stored this large cannot be in the row.
_SURELY_OUT_OF_LINE = 2032 - 24


def _out_of_line(names: Sequence[str], toastable: Iterable[str], row: ExecRowValuesRow) -> tuple[frozenset[str],
                                                                                                 bool]:
    """The columns of a read row stored out of line, and whether that is unknown: PG 17+ says
    (``pg_column_toast_chunk_id``); before, a value stored larger than a tuple may be is out of line, and a row
    whose toastable values add up to more than a tuple may be, with a value that is not, cannot be told
    (``heaptoast.c heap_toast_insert_or_update`` moved its largest values out until it fit)."""
    toastable = set(toastable)
    if row.ext is not None:
        return frozenset(n for n, e in zip(names, row.ext, strict=True) if e), False
    sizes = {n: s for n, s in zip(names, row.sizes, strict=True) if n in toastable and s is not None}
    external = frozenset(n for n, s in sizes.items() if s >= _SURELY_OUT_OF_LINE)
    rest = sum(s for n, s in sizes.items() if n not in external)
    unknown = rest > _SURELY_OUT_OF_LINE - 256 and any(s > 32 for n, s in sizes.items() if n not in external)
    return external, unknown


# -- the statement's own rows ---------------------------------------------------------------------------------------

@dataclass
class _Write:
    """A DML statement as far as its text tells.

    :ivar kind: INSERT, UPDATE, DELETE or MERGE.
    :ivar target: the relation named (its OID).
    :ivar only: ``ONLY`` was written.
    :ivar rows: an INSERT's rows (column -> value), in order.
    :ivar known_rows: an INSERT's rows are the ones it writes (not ``INSERT ... SELECT``).
    :ivar given: an INSERT's columns, or an UPDATE's SET columns.
    :ivar sets: an UPDATE's SET column -> value.
    :ivar where: ``column = value`` conditions of an UPDATE's or DELETE's WHERE.
    :ivar ranges: its other comparisons of a column with constants (:data:`Cond`).
    :ivar where_exact: the WHERE is exactly those conditions (no other conjunct, no FROM/USING).
    :ivar conflict: an INSERT's ON CONFLICT: (action ``nothing``/``update``, the inference columns, DO UPDATE's
        SET column -> value, it has a WHERE), else None.
    :ivar merge: a MERGE's source rows and clauses (:class:`_Merge`), else None.
    :ivar source: an ``INSERT ... SELECT``'s SelectStmt (its rows are read when it can be: :meth:`_Sim._select_rows`).
    :ivar columns: an ``INSERT ... SELECT``'s target columns, in order.
    :ivar params: the statement's ``$n`` values.
    :ivar set_exprs: an UPDATE's SET expressions whose value turns on the row (``v = v + 1``), evaluated on each
        row it finds (:mod:`lockscope.evaluate`).
    :ivar alias: the target's name or alias in the statement.
    :ivar row_sequences: an ``INSERT ... VALUES``'s sequences each row calls ``nextval`` (or ``currval``,
        ``setval``) on by name: evaluated as the row is formed, after the rows before it were written.
    :ivar joined: an ``UPDATE ... FROM`` / ``DELETE ... USING`` of one other table whose WHERE lockscope reads
        (:class:`_Joined`), else None.
    """

    kind: str
    target: int
    only: bool = False
    rows: tuple[dict[str, Value], ...] = ()
    known_rows: bool = True
    given: frozenset[str] = frozenset()
    sets: dict[str, Value] = field(default_factory=dict)
    where: dict[str, Value] = field(default_factory=dict)
    ranges: list[Cond] = field(default_factory=list)
    where_exact: bool = True
    conflict: tuple[str, tuple[str, ...], dict[str, Value], bool] | None = None
    merge: _Merge | None = None
    source: Mapping[str, Any] | None = None
    columns: tuple[str, ...] = ()
    params: tuple[Value, ...] = ()
    set_exprs: Mapping[str, Any] = field(default_factory=dict)
    alias: str = ""
    row_sequences: tuple[tuple[str, ...], ...] = ()
    joined: _Joined | None = None


@dataclass(frozen=True)
class _Joined:
    """``UPDATE t a SET ... FROM o b WHERE ...`` / ``DELETE FROM t a USING o b WHERE ...`` whose WHERE is made of
    comparisons of either table's columns with constants and equalities of a column of each: the other table's
    rows are read by theirs, then the target's by its own and each other row's join values.

    :ivar relation: the other table's name as written (schema-qualified when written so).
    :ivar only: ``ONLY`` was written for it.
    :ivar alias: its alias (or name).
    :ivar where: its ``column = constant`` conditions; :ivar ranges: its other comparisons.
    :ivar pairs: (target column, other column) equalities.
    """

    relation: str
    only: bool
    alias: str
    where: dict[str, Value]
    ranges: list[Cond]
    pairs: list[tuple[str, str]]


@dataclass
class _Merge:
    """A MERGE: its source rows (column -> value; None: not known), the join's ``target col = source col`` and
    ``target col = value`` pairs, whether the join is exactly those, and its WHEN clauses in order:
    (match kind ``matched``/``not_matched``/``not_matched_by_source``, command INSERT/UPDATE/DELETE/NOTHING, has a
    condition, SET or INSERT column -> value); a source ``SELECT`` with a FROM clause and its column names (its rows
    read by :meth:`_Sim._select_rows`), the two aliases, and each UPDATE clause's SET expressions and INSERT clause's
    values (evaluated on the matched row and the source row), by clause."""

    source_rows: list[dict[str, Value]] | None
    join: list[tuple[str, str | None, Value]]
    join_exact: bool
    clauses: list[tuple[str, str, bool, dict[str, Value]]]
    source_select: Mapping[str, Any] | None = None
    source_names: tuple[str, ...] = ()
    target_alias: str = ""
    source_alias: str = ""
    update_exprs: dict[int, dict[str, Any]] = field(default_factory=dict)


def _read_write(kind: str, raw: Mapping[str, Any], params: Sequence[Value], target: int,
                columns: Sequence[ExecColumnRow]) -> _Write | None:
    """The statement's rows, values and conditions from its raw parse tree (libpg_query JSON); None for anything
    but INSERT, UPDATE, DELETE and MERGE."""
    ((node_name, body),) = raw.items()
    only = not (body.get("relation") or {}).get("inh", True)
    if node_name == "InsertStmt":
        return _read_insert(body, params, target, columns, only)
    if node_name == "UpdateStmt":
        sets = {_name(t["ResTarget"]): _value(t["ResTarget"].get("val"), params)
                for t in body.get("targetList") or [] if "ResTarget" in t}
        exprs = {_name(t["ResTarget"]): t["ResTarget"].get("val") for t in body.get("targetList") or []
                 if "ResTarget" in t and sets.get(_name(t["ResTarget"])) == _UNKNOWN}
        alias = _alias(body.get("relation"))
        if body.get("fromClause"):
            joined, where, ranges = _joined(body, body["fromClause"], alias, params)
            return _Write("UPDATE", target, only, given=frozenset(sets), sets=sets, where=where, ranges=ranges,
                          where_exact=joined is not None, set_exprs=exprs, alias=alias, params=tuple(params),
                          joined=joined)
        where, ranges, exact = _conditions(body.get("whereClause"), params)
        return _Write("UPDATE", target, only, given=frozenset(sets), sets=sets, where=where, ranges=ranges,
                      where_exact=exact, set_exprs=exprs, alias=alias, params=tuple(params))
    if node_name == "DeleteStmt":
        if body.get("usingClause"):
            joined, where, ranges = _joined(body, body["usingClause"], _alias(body.get("relation")), params)
            return _Write("DELETE", target, only, where=where, ranges=ranges, where_exact=joined is not None,
                          joined=joined)
        where, ranges, exact = _conditions(body.get("whereClause"), params)
        return _Write("DELETE", target, only, where=where, ranges=ranges, where_exact=exact)
    if node_name == "MergeStmt":
        return _Write("MERGE", target, only, merge=_read_merge(body, params), params=tuple(params))
    return None


def _read_insert(body: Mapping[str, Any], params: Sequence[Value], target: int, columns: Sequence[ExecColumnRow],
                 only: bool) -> _Write:
    cols = [_name(c["ResTarget"]) for c in body.get("cols") or []]
    if not cols:  # INSERT INTO t VALUES (...): the table's columns in order (parse_target.c checkInsertTargets)
        cols = [c.name for c in sorted(columns, key=lambda c: c.attnum)]
    select = (body.get("selectStmt") or {}).get("SelectStmt")
    conflict = None
    clause = body.get("onConflictClause")
    if clause:
        infer = [str(e["IndexElem"].get("name") or "") for e in (clause.get("infer") or {}).get("indexElems") or []
                 if "IndexElem" in e]
        sets = {_name(t["ResTarget"]): _value(t["ResTarget"].get("val"), params, "excluded")
                for t in clause.get("targetList") or [] if "ResTarget" in t}
        action = "update" if clause.get("action") == "ONCONFLICT_UPDATE" else "nothing"
        conflict = (action, tuple(infer), sets, bool(clause.get("whereClause")))
    if select is None:  # DEFAULT VALUES
        return _Write("INSERT", target, only, rows=({},), given=frozenset(), conflict=conflict)
    lists = select.get("valuesLists")
    if not lists:  # INSERT ... SELECT: its rows are read, when they can be, by the simulation
        return _Write("INSERT", target, only, rows=({},), known_rows=False, given=frozenset(cols), conflict=conflict,
                      source=select, columns=tuple(cols), params=tuple(params))
    rows = tuple({c: _value(v, params) for c, v in zip(cols, _items(vl), strict=False)} for vl in lists)
    width = max(len(_items(vl)) for vl in lists)
    return _Write("INSERT", target, only, rows=rows, given=frozenset(cols[:width]), conflict=conflict,
                  row_sequences=tuple(tuple(_nextval_names(vl)) for vl in lists))


def _read_merge(body: Mapping[str, Any], params: Sequence[Value]) -> _Merge:
    """A MERGE's source rows (a ``VALUES`` list or a ``SELECT`` of constants without FROM), its join and clauses."""
    source = body.get("sourceRelation") or {}
    alias = None
    rows: list[dict[str, Value]] | None = None
    source_select: Mapping[str, Any] | None = None
    source_names: tuple[str, ...] = ()
    update_exprs: dict[int, dict[str, Any]] = {}
    sub = (source.get("RangeSubselect") or {})
    if sub:
        alias = ((sub.get("alias") or {}).get("aliasname"))
        names = [n["String"]["sval"] for n in (sub.get("alias") or {}).get("colnames") or [] if "String" in n]
        select = (sub.get("subquery") or {}).get("SelectStmt") or {}
        if select.get("valuesLists") and not select.get("fromClause"):
            rows = []
            for vl in select["valuesLists"]:
                items = _items(vl)
                cols = names or [f"column{i}" for i in range(1, len(items) + 1)]
                rows.append({c: _value(v, params) for c, v in zip(cols, items, strict=False)})
        elif select.get("targetList") and not select.get("fromClause") and not select.get("whereClause"):
            row: dict[str, Value] = {}
            for t in select["targetList"]:
                res = t.get("ResTarget") or {}
                row[str(res.get("name") or "")] = _value(res.get("val"), params)
            rows = [row]
        elif select.get("fromClause") and select.get("targetList"):
            source_select = select
            source_names = tuple(names) or tuple(
                str((t.get("ResTarget") or {}).get("name") or (_column((t.get("ResTarget") or {}).get("val"))
                                                                 or (None, ""))[1])
                for t in select["targetList"])
    target_alias = _alias(body.get("relation"))
    join, exact = _join_pairs(body.get("joinCondition"), params, target_alias, alias)
    clauses: list[tuple[str, str, bool, dict[str, Value]]] = []
    for c in body.get("mergeWhenClauses") or []:
        w = c.get("MergeWhenClause") or {}
        kind = {"MERGE_WHEN_MATCHED": "matched", "MERGE_WHEN_NOT_MATCHED_BY_SOURCE": "not_matched_by_source"}.get(
            str(w.get("matchKind")), "not_matched")
        if "matched" in w and "matchKind" not in w:  # older parse trees: a boolean
            kind = "matched" if w.get("matched") else "not_matched"
        command = str(w.get("commandType", "CMD_NOTHING"))[4:]
        values: dict[str, Value] = {}
        if command == "UPDATE":
            values = {_name(t["ResTarget"]): _value(t["ResTarget"].get("val"), params, alias)
                      for t in w.get("targetList") or [] if "ResTarget" in t}
            update_exprs[len(clauses)] = {_name(t["ResTarget"]): t["ResTarget"].get("val")
                                          for t in w.get("targetList") or [] if "ResTarget" in t}
        elif command == "INSERT":
            cols = [_name(t["ResTarget"]) for t in w.get("targetList") or [] if "ResTarget" in t]
            vals = [_value(v, params, alias) for v in w.get("values") or []]
            values = dict(zip(cols, vals, strict=False)) if cols else {f"\x00{i}": v for i, v in enumerate(vals)}
            update_exprs[len(clauses)] = dict(zip(cols or [f"\x00{i}" for i in range(len(vals))],
                                                  w.get("values") or [], strict=False))
        clauses.append((kind, command, bool(w.get("condition")), values))
    return _Merge(rows, join, exact, clauses, source_select, source_names, target_alias, str(alias or ""),
                  update_exprs)


def _alias(range_var: Mapping[str, Any] | None) -> str:
    """The name a ``RangeVar`` (a raw parse tree's table reference) is known by in its statement: its alias, else
    its relation name ("" for none)."""
    rv = range_var or {}
    return str((rv.get("alias") or {}).get("aliasname") or rv.get("relname") or "")


def _join_pairs(cond: Any, params: Sequence[Value], target_alias: str | None,
                source_alias: str | None) -> tuple[list[tuple[str, str | None, Value]], bool]:
    """A MERGE's join as ``target col = source col`` / ``target col = value`` pairs (target column, source column
    or None, value), and whether it is exactly those."""
    pairs: list[tuple[str, str | None, Value]] = []
    exact = True
    for node in _conjuncts(cond):
        expr = node.get("A_Expr") if isinstance(node, dict) else None
        if not expr or expr.get("kind") != "AEXPR_OP" or _op(expr) != "=":
            exact = False
            continue
        left, right = _column(expr.get("lexpr")), _column(expr.get("rexpr"))
        if left and right:
            (lq, lc), (rq, rc) = left, right
            if rq == target_alias and lq != target_alias:
                (lq, lc), (rq, rc) = (rq, rc), (lq, lc)
            if lq == target_alias or (lq is None and rq == source_alias):
                pairs.append((lc, rc, _UNKNOWN))
                continue
        elif left and left[0] in (target_alias, None):
            pairs.append((left[1], None, _value(expr.get("rexpr"), params)))
            continue
        exact = False
    return pairs, exact


def _column(node: Any) -> tuple[str | None, str] | None:
    """``(qualifier, column)`` of a column reference, else None."""
    if not isinstance(node, dict) or "ColumnRef" not in node:
        return None
    fields = [f.get("String", {}).get("sval") for f in node["ColumnRef"].get("fields") or []]
    if not fields or fields[-1] is None:
        return None
    return (str(fields[-2]) if len(fields) > 1 else None), str(fields[-1])


def _op(expr: Mapping[str, Any]) -> str:
    return "".join(str(n.get("String", {}).get("sval", "")) for n in expr.get("name") or [])


def _conjuncts(where: Any) -> list[Any]:
    if where is None:
        return []
    if isinstance(where, dict) and "BoolExpr" in where and where["BoolExpr"].get("boolop") == "AND_EXPR":
        return [c for a in where["BoolExpr"].get("args") or [] for c in _conjuncts(a)]
    return [where]


def _name(res_target: Mapping[str, Any]) -> str:
    """A target column's name as the parser left it (folded to lower case unless quoted)."""
    return str(res_target.get("name", ""))


def _items(node: Any) -> list[Any]:
    if isinstance(node, dict) and "List" in node:
        return list(node["List"].get("items") or [])
    return list(node or [])


def _value(node: Any, params: Sequence[Value], source_alias: str | None = None) -> Value:
    """A constant's or parameter's value as text; :data:`_UNKNOWN` for anything computed; a MERGE's source column
    as ``\\x02column``."""
    if not isinstance(node, dict):
        return _UNKNOWN
    if "SetToDefault" in node:
        return _DEFAULT
    if "TypeCast" in node:
        return _value(node["TypeCast"].get("arg"), params, source_alias)
    if "ColumnRef" in node and source_alias is not None:
        col = _column(node)
        if col and col[0] in (source_alias, None):
            return "\x02" + col[1]
    return evaluate.evaluate(node, {}, params)  # an expression of constants and parameters (or UNKNOWN)


#: A WHERE conjunct lockscope reads by: (column, operator, values): ``=``, ``<>``, ``<``, ``<=``, ``>``, ``>=`` with one
#: value, ``in`` with several, ``between`` with two, ``is null`` / ``is not null`` with none.
Cond = tuple[str, str, tuple[Value, ...]]
_COMPARISONS = frozenset({"=", "<>", "!=", "<", "<=", ">", ">="})
_FLIPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "=", "<>": "<>", "!=": "<>"}


def _conditions(where: Any, params: Sequence[Value]) -> tuple[dict[str, Value], list[Cond], bool]:
    """A WHERE clause's ``column = constant`` conjuncts (column -> value), its other comparisons of a column with
    constants (``<``, ``>``, ``<>``, ``IN``, ``BETWEEN``, ``IS [NOT] NULL``), and whether the clause is exactly those
    (a conjunct of any other form, or a value computed when it runs, makes the rows a lookup finds a superset)."""
    eq: dict[str, Value] = {}
    other: list[Cond] = []
    exact = True
    for node in _conjuncts(where):
        cond = _condition(node, params)
        if cond is None or any(not _known(v) for v in cond[2]):
            exact = False
        elif cond[1] == "=" and cond[0] not in eq:
            eq[cond[0]] = cond[2][0]
        else:
            other.append(cond)
    return eq, other, exact


def where_conditions(where: Any, params: Sequence[Value]) -> tuple[dict[str, Value], list[Cond], bool]:
    """A raw WHERE clause read as lockscope reads a write's (column names unqualified): its ``column = value``
    conjuncts (column -> value text, or an unknown marker: :func:`is_known`), its other comparisons of a column with
    values, and whether the clause is exactly those conjuncts.

    :param params: the values of ``$1..$n`` (text, None for NULL); a parameter beyond them is unknown.
    """
    return _conditions(where, params)


def where_conjuncts(where: Any, params: Sequence[Value]) -> list[tuple[Any, Cond | None]]:
    """A raw WHERE clause's AND-ed conjuncts, each with its reading as a comparison of a column with values
    (:data:`Cond`; None for a conjunct of another form)."""
    return [(node, _condition(node, params)) for node in _conjuncts(where)]


def is_known(value: Value) -> bool:
    """True for a value lockscope computed (text or None for NULL), False for one only the execution knows."""
    return _known(value)


def _condition(node: Any, params: Sequence[Value]) -> Cond | None:
    if not isinstance(node, dict):
        return None
    link = node.get("SubLink")
    if link:  # col IN (SELECT x FROM cte): the values a data-modifying WITH query returned (resolved when known)
        col = _column(link.get("testexpr"))
        sub = (link.get("subselect") or {}).get("SelectStmt") or {}
        from_ = sub.get("fromClause") or []
        targets = [t.get("ResTarget") or {} for t in sub.get("targetList") or []]
        picked = _column(targets[0].get("val")) if len(targets) == 1 else None
        if (link.get("subLinkType") == "ANY_SUBLINK" and col and picked and len(from_) == 1
                and "RangeVar" in from_[0] and not from_[0]["RangeVar"].get("schemaname")
                and not any(sub.get(k) for k in ("whereClause", "groupClause", "limitCount", "withClause"))):
            return col[1], "in cte", (str(from_[0]["RangeVar"]["relname"]), picked[1])
        return None
    if "NullTest" in node:
        col = _column(node["NullTest"].get("arg"))
        if col is None:
            return None
        return col[1], "is null" if node["NullTest"].get("nulltesttype") == "IS_NULL" else "is not null", ()
    expr = node.get("A_Expr")
    if not expr:
        return None
    kind = expr.get("kind")
    left, right = _column(expr.get("lexpr")), _column(expr.get("rexpr"))
    if kind == "AEXPR_OP" and _op(expr) in _COMPARISONS:
        op = "<>" if _op(expr) == "!=" else _op(expr)
        if left and not right:
            return left[1], op, (_value(expr.get("rexpr"), params),)
        if right and not left:
            return right[1], _FLIPPED[op], (_value(expr.get("lexpr"), params),)
        return None
    if kind == "AEXPR_IN" and left and _op(expr) == "=":
        return left[1], "in", tuple(_value(v, params) for v in _items(expr.get("rexpr")))
    if kind == "AEXPR_BETWEEN" and left:
        bounds = [_value(v, params) for v in _items(expr.get("rexpr"))]
        return (left[1], "between", tuple(bounds)) if len(bounds) == 2 else None
    return None


def _joined(body: Mapping[str, Any], tables: Sequence[Any], alias: str,
            params: Sequence[Value]) -> tuple[_Joined | None, dict[str, Value], list[Cond]]:
    """An UPDATE's FROM or a DELETE's USING of one table, its WHERE split by table (:class:`_Joined`), and the
    target's own conditions; None (the target's conditions still given, as an estimate) for anything else: more
    tables, a subquery, an unqualified column, a conjunct of another form."""
    target_eq: dict[str, Value] = {}
    target_ranges: list[Cond] = []
    if len(tables) != 1 or "RangeVar" not in tables[0]:
        return None, target_eq, target_ranges
    rv = tables[0]["RangeVar"]
    other = _alias(rv)
    name = ".".join(str(p) for p in (rv.get("schemaname"), rv.get("relname")) if p)
    other_eq: dict[str, Value] = {}
    other_ranges: list[Cond] = []
    pairs: list[tuple[str, str]] = []
    exact = bool(other) and other != alias
    for node in _conjuncts(body.get("whereClause")):
        expr = node.get("A_Expr") if isinstance(node, dict) else None
        left = _column(expr.get("lexpr")) if expr else None
        right = _column(expr.get("rexpr")) if expr else None
        if expr and expr.get("kind") == "AEXPR_OP" and _op(expr) == "=" and left and right:
            sides = {left[0]: left[1], right[0]: right[1]}
            if set(sides) == {alias, other}:
                pairs.append((sides[alias], sides[other]))
                continue
            exact = False
            continue
        cond = _condition(node, params)
        qualifier = (left or right or _column((node.get("NullTest") or {}).get("arg")) or (None, ""))[0] \
            if isinstance(node, dict) else None
        if cond is None or any(not _known(v) for v in cond[2]) or qualifier not in (alias, other):
            exact = False
            continue
        eq, ranges = (target_eq, target_ranges) if qualifier == alias else (other_eq, other_ranges)
        if cond[1] == "=" and cond[0] not in eq:
            eq[cond[0]] = cond[2][0]
        else:
            ranges.append(cond)
    if not exact or not pairs:
        return None, target_eq, target_ranges
    return _Joined(name, not rv.get("inh", True), other, other_eq, other_ranges, pairs), target_eq, target_ranges


def _equalities(where: Any, params: Sequence[Value]) -> tuple[dict[str, Value], bool]:
    """``column = constant`` conjuncts of a WHERE clause (column -> value), and whether the clause is exactly
    those."""
    eq, other, exact = _conditions(where, params)
    return eq, exact and not other


def _nextval_names(raw: Any) -> list[str]:
    """The sequence names of ``nextval``, ``currval`` and ``setval`` calls with a constant name anywhere in the
    statement (each opens the sequence ``RowExclusiveLock``: ``sequence.c init_sequence`` →
    ``lock_and_open_sequence``)."""
    found: list[str] = []
    stack: list[Any] = [raw]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            call = node.get("FuncCall")
            if isinstance(call, dict):
                name = [n.get("String", {}).get("sval") for n in call.get("funcname") or []]
                args = call.get("args") or []
                if name and name[-1] in ("nextval", "currval", "setval") and args:  # sequence.c init_sequence
                    value = _value(args[0], ())
                    if _known(value) and value is not None:
                        found.append(value)
            stack += list(node.values())
        elif isinstance(node, list):
            stack += node
    return found


def dml_ctes(raw: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The WITH clause's INSERT, UPDATE, DELETE and MERGE queries (data-modifying CTEs), in order (their raw parse
    tree nodes)."""
    ((_, body),) = raw.items()
    ctes = ((body.get("withClause") or {}).get("ctes")) or []
    out = []
    for c in ctes:
        query = (c.get("CommonTableExpr") or {}).get("ctequery") or {}
        if any(k in query for k in ("InsertStmt", "UpdateStmt", "DeleteStmt", "MergeStmt")):
            out.append(query)
    return out


def update_targets(session: Session, raw: Mapping[str, Any]) -> list[int]:
    """The OIDs of the tables a statement UPDATEs: its own target and its WITH clause's (``target_relation``)."""
    out = []
    for node in [raw, *dml_ctes(raw)]:
        if "UpdateStmt" in node and (oid := target_relation(session, node)) is not None:
            out.append(oid)
    return out


def _dml_cte_names(raw: Mapping[str, Any]) -> list[str]:
    """The names of the WITH clause's data-modifying queries, in the order :func:`dml_ctes` gives them."""
    ((_, body),) = raw.items()
    return [str((c.get("CommonTableExpr") or {}).get("ctename")) for c in (body.get("withClause") or {}).get("ctes")
            or [] if any(k in ((c.get("CommonTableExpr") or {}).get("ctequery") or {})
                         for k in ("InsertStmt", "UpdateStmt", "DeleteStmt", "MergeStmt"))]


def _plain(quoted: str) -> str:
    """A name as ``quote_ident`` printed it, unquoted."""
    return quoted[1:-1].replace('""', '"') if quoted.startswith('"') else quoted


def _key_quals(columns: Sequence[str], operators: Sequence[str] | None, first: int = 1) -> str:
    """``col1 OPERATOR(...) $n AND ...`` as ``ri_triggers.c ri_GenerateQual`` writes a key's comparison."""
    ops = operators or ["OPERATOR(pg_catalog.=)"] * len(columns)
    return " AND ".join(f"{c} {op} ${n}" for n, (c, op) in enumerate(zip(columns, ops, strict=True), first))


# -- public entry points ------------------------------------------------------------------------------------------

def derive_execution(session: Session, checked: CheckedStatement, params: Sequence[str], target_oid: int | None,
                     raw: Mapping[str, Any], *, overlay: RowOverlay | None = None,
                     read_rows: bool = True) -> ExecutionModel:
    """The execution locks of one statement (see the module docstring).

    :param checked: the statement.
    :param params: the values of ``$1..$n`` (text).
    :param target_oid: a DML statement's target relation (the query tree's result relation), None for a SELECT.
    :param raw: the statement's raw parse tree node (``statement.raw_statement``).
    :param overlay: the rows the transaction's earlier statements wrote (this statement's are added to it).
    :param read_rows: False: read no table (the rows an UPDATE, a DELETE or an action reaches are then estimates,
        said as unknown).
    :return: the events in order, the notes and the unknowns.
    :raises DatabaseError: a catalog read or a key lookup failed.
    """
    catalog = _Catalog(session)
    sim = _Sim(session, catalog, RowReader(session, catalog, overlay, enabled=read_rows))
    writes: list[_Write] = []
    for node in dml_ctes(raw):  # ModifyTable nodes of the WITH clause run in the same query (nodeModifyTable.c)
        oid = target_relation(session, node)
        cte = _read_write(next(iter(node)), node, list(params), oid, catalog.columns(oid)) if oid is not None else None
        if cte is None:
            sim.unknowns.append("a data-modifying WITH query lockscope cannot name the target of")
            continue
        writes.append(cte)
    write = _read_write(checked.kind, raw, list(params), target_oid, catalog.columns(target_oid)) \
        if target_oid is not None else None
    if write is not None:
        writes.append(write)
    first = len(sim.reader.overlay.inserted)
    sim.statement = (checked, [str(p) for p in params])
    sim.alone = overlay is None and len(writes) == 1
    events = sim.top(writes, raw)
    grown: set[int] = set()
    for leaf, _ in sim.reader.overlay.inserted[first:]:
        if leaf is not None and (facts := catalog.target(leaf)).relpages == 0:
            grown |= {leaf, *facts.ancestor_oids}
    return ExecutionModel(tuple(events), tuple(dict.fromkeys(sim.notes)), tuple(dict.fromkeys(sim.unknowns)),
                          frozenset(grown))


def target_relation(session: Session, raw: Mapping[str, Any]) -> int | None:
    """The OID of an INSERT's, UPDATE's, DELETE's or MERGE's target as the parser resolves its name under the
    session's search_path (``to_regclass``, no lock), for a statement whose query tree lockscope does not build;
    None for another statement or an unknown name."""
    ((node_name, body),) = raw.items()
    if node_name not in ("InsertStmt", "UpdateStmt", "DeleteStmt", "MergeStmt"):
        return None
    rv = body.get("relation") or {}
    name = ".".join(session.identifier(str(part)) for part in (rv.get("schemaname"), rv.get("relname")) if part)
    rows = session.query_rows("exec_relations", OrdinalOidRow, [[name]])
    return rows[0].relation_oid if rows else None


def describe_json(model: ExecutionModel) -> str:
    """The model as one JSON text (for debugging and the tests' messages)."""
    return json.dumps([{"source": str(e.query.source if isinstance(e, SpiCall) else e.source),
                        "what": e.query.text if isinstance(e, SpiCall) else e.relation_oid,
                        "release": False if isinstance(e, SpiCall) else e.release,
                        "stage": int(e.stage), "row": e.row} for e in model.events])


# -- the simulation -----------------------------------------------------------------------------------------------

_EVENT = {"INSERT": TriggerEvent.INSERT, "UPDATE": TriggerEvent.UPDATE, "DELETE": TriggerEvent.DELETE}
#: pg_trigger.h TRIGGER_TYPE_* bits.
_ROW, _BEFORE, _INSERT, _DELETE, _UPDATE = 1, 2, 4, 8, 16
_EVENT_BIT = {"INSERT": _INSERT, "UPDATE": _UPDATE, "DELETE": _DELETE}


@dataclass
class _Pending:
    """An AFTER event queued at one query level (``trigger.c AfterTriggerSaveEvent``): a trigger, the event, the row
    images (None for a statement trigger) and the relation fired on; ``cancelled`` when a later statement of the
    level queued the same statement trigger again (``trigger.c cancel_prior_stmt_triggers``)."""

    ri: ExecRiTriggerRow | None
    user: tuple[FiringTrigger, TriggerProgram] | None
    event: str
    old: _Row | None
    new: _Row | None
    relation_oid: int
    row_no: int
    cancelled: bool = False


@dataclass
class _Statement:
    """One DML statement being simulated: its indexes opened (released at ``ExecutorEnd``), the partitions its
    rows were routed to."""

    kind: str
    target: ExecTargetRow
    opened: dict[int, list[int]] = field(default_factory=dict)
    routed: set[int] = field(default_factory=set)
    hash_checked: set[int] = field(default_factory=set)


class _Sim:
    """The row-by-row simulation of one statement's execution and everything it sets off."""

    def __init__(self, session: Session, catalog: _Catalog, reader: RowReader) -> None:
        self.session = session
        self.catalog = catalog
        self.reader = reader
        self.version = session.facts.server_version_num
        self.notes: list[str] = []
        self.unknowns: list[str] = []
        self.statements = 0
        self._programs: dict[int, TriggerProgram] = {}
        self._samples: dict[tuple[int, str], Value] = {}
        # per query level (its event queue, by id; the queue kept alive): the BEFORE STATEMENT triggers fired, and
        # how far its events have fired
        self._levels: dict[int, tuple[list[_Pending], set[tuple[int, str]]]] = {}
        self._cursor: dict[int, int] = {}
        self.statement: tuple[CheckedStatement, list[str]] | None = None  # the user's statement and its values
        self.cte_rows: dict[str, list[dict[str, Value]]] = {}  # a data-modifying WITH query's rows, by its name
        self.alone = False  # the user's only write: no later statement or WITH query reads the rows it writes

    # -- the statement ----------------------------------------------------------------------------------------
    def top(self, writes: Sequence[_Write], raw: Mapping[str, Any]) -> list[ExtraLock | SpiCall]:
        """The user's statement at the top query level: its sequence calls, then each data-modifying WITH query and
        the statement's own write (their AFTER events fire together at the statement's end, ``trigger.c
        AfterTriggerEndQuery``, before its executor ends and closes their indexes)."""
        out: list[ExtraLock | SpiCall] = []
        names = _nextval_names(raw)
        for seq in (q for w in writes for row in w.row_sequences for q in row):  # placed with their VALUES rows
            if seq in names:
                names.remove(seq)
        if names:
            out += [ExtraLock(r.relation_oid, LockMode.ROW_EXCLUSIVE, LockSource.SEQUENCE, "nextval", Stage.ROW)
                    for r in self.session.query_rows("exec_relations", OrdinalOidRow, [names])
                    if r.relation_oid is not None]
        if len(writes) == 1 and writes[0].kind == "MERGE":
            return out + self._merge(writes[0], self.catalog.target(writes[0].target))
        if len(writes) == 1:
            return out + self.dml(writes[0], self.catalog.target(writes[0].target), None, 0)
        queue: list[_Pending] = []
        end: list[ExtraLock] = []
        names = _dml_cte_names(raw)
        for n, write in enumerate(writes):
            if write.kind == "MERGE":
                self.unknowns.append("a MERGE beside a data-modifying WITH query: its execution locks are not derived")
                continue
            inserted, deleted = len(self.reader.overlay.inserted), len(self.reader.overlay.deleted)
            out += self.dml(write, self.catalog.target(write.target), queue, 0, end=end)
            if n < len(names):  # what the WITH query returns: the rows it deleted, or inserted or updated to
                written = self.reader.overlay.deleted[deleted:] if write.kind == "DELETE" else \
                    [(leaf, row.values, row.version) for leaf, row in self.reader.overlay.inserted[inserted:]]
                self.cte_rows[names[n]] = [dict(values) for leaf, values, _ in written  # not its triggers' rows
                                           if leaf is not None and (leaf == write.target or write.target in
                                                                    self.catalog.target(leaf).ancestor_oids)]
        return out + self.fire(queue, 0) + end

    def dml(self, write: _Write, target: ExecTargetRow, level: list[_Pending] | None,
            depth: int, rows: _Found | None = None, end: list[ExtraLock] | None = None) -> list[ExtraLock | SpiCall]:
        """One INSERT, UPDATE or DELETE: ``level`` None runs its AFTER events at its own end (a top-level or a
        PL/pgSQL statement); a foreign-key action's query queues them at the caller's ``level``. ``end``: the
        releases of its executor's end are put there (a WITH query's: after the whole statement's triggers)."""
        if depth > MAX_DEPTH:
            self.unknowns.append(f"statements nested more than {MAX_DEPTH} deep (triggers of triggers) are not "
                                 "derived")
            return []
        self.statements += 1
        if self.statements > MAX_EVENTS // 10:
            self.unknowns.append("the execution runs more statements than lockscope follows (cascades, triggers)")
            return []
        if target.relkind not in ("r", "p"):  # a view (rewritten to its base table, or INSTEAD OF triggers)
            self.unknowns.append(f"{_article(write.kind)} {write.kind} through the view {target.relation}: the rows "
                                 "it writes and what they fire are not derived")
            return []
        st = _Statement(write.kind, target)
        queue: list[_Pending] = [] if level is None else level
        out: list[ExtraLock | SpiCall] = []
        if self.version < PG14 and (write.kind == "INSERT" or (write.kind == "UPDATE" and target.relkind != "p")):
            # PG 13 ExecInitModifyTable: ExecOpenIndices of the result relation at executor start (a partitioned
            # INSERT target's own partitioned indexes too; an UPDATE's partitions were opened by the planner); a
            # statement run inside the user's (a trigger's, a foreign-key action's) starts while its row is handled
            out += self._open_indexes(st, target.relation_oid, Stage.EXECUTOR_START if depth == 0 else Stage.ROW)
        # (an UPDATE OF column list is judged on the SET columns: trigger.c ExecBSUpdateTriggers)
        out += self._before_statement(write.kind, target, write.given if write.kind == "UPDATE" else None, depth,
                                      queue)
        upsert = write.kind == "INSERT" and write.conflict is not None and write.conflict[0] == "update"
        if upsert:  # nodeModifyTable.c fireBSTriggers: ON CONFLICT DO UPDATE fires the UPDATE ones too
            assert write.conflict is not None
            out += self._before_statement("UPDATE", target, write.conflict[2], depth, queue)
        if write.kind == "INSERT":
            out += self._insert(write, target, st, queue, depth)
        else:
            found = rows if rows is not None else _Found([]) if self._rows_add_nothing(write, target, depth) \
                else self._statement_rows(write, target)
            if write.kind == "UPDATE":
                out += self._update_rows(write, target, st, found.rows, queue, depth)
            else:
                out += self._delete_rows(target, st, found.rows, queue, depth)
        if upsert:  # fireASTriggers: the UPDATE ones first
            assert write.conflict is not None
            self._queue_after_statement("UPDATE", target, write.conflict[2], queue)
        self._queue_after_statement(write.kind, target, write.given, queue)
        if level is None:
            out += self.fire(queue, depth)
        releases = [ExtraLock(i, LockMode.ROW_EXCLUSIVE, LockSource.TARGET_INDEX, self.catalog.target(rel).relation,
                              Stage.END, release=True) for rel, indexes in st.opened.items() for i in indexes]
        if end is not None:
            end += releases
            return out
        return out + releases

    def _rows_add_nothing(self, write: _Write, target: ExecTargetRow, depth: int) -> bool:
        """Whether the rows an UPDATE finds cannot change what it locks, so that they are not read: the user's only
        write (:attr:`alone`), on a plain table without foreign keys or triggers (nothing fires per row; its indexes
        were locked by the planner), setting fixed-width columns only, with no generated column (the new version's
        variable-width values are the old ones: ``heapam.c heap_update`` does no TOAST work for them)."""
        if not self.alone or depth or write.kind != "UPDATE" or target.relkind != "r":
            return False
        oid = target.relation_oid
        if self.catalog.ri_triggers(oid) or self.catalog.user_triggers(oid):
            return False
        columns = {c.name: c for c in self.catalog.columns(oid)}
        return not any(c.generated for c in columns.values()) and \
            all(g in columns and columns[g].attlen > 0 for g in write.given)

    def _statement_rows(self, write: _Write, target: ExecTargetRow) -> _Found:
        """The rows an UPDATE or DELETE finds: read with its conditions (:meth:`RowReader.find`) when its WHERE is
        made of comparisons of columns with constants (with one joined table: :meth:`_joined_rows`); another
        WHERE is not read by (said as unknown; the rows its comparisons find stand as an estimate)."""
        if write.joined is not None:
            found = self._joined_rows(write, target)
            if found is not None:
                return found
            self.unknowns.append(f"the rows the {write.kind} on {target.relation} finds through its join are known "
                                 "only when it runs")
            return _Found([], False)
        if write.where_exact:
            ranges = self._cte_ranges(write.ranges)
            if ranges is None:
                self.unknowns.append(f"the rows the {write.kind} on {target.relation} finds are known only when it "
                                     "runs (a WITH query's rows lockscope did not derive)")
                return _Found([], False)
            found = self.reader.find(target.relation_oid, write.where, only=write.only, ranges=ranges)
            if not found.exact:
                self.unknowns.append(found.reason)
            return found
        self.unknowns.append(f"the rows the {write.kind} on {target.relation} finds are known only when it runs (its "
                             "WHERE is not made of comparisons of columns with constants)")
        ranges = self._cte_ranges(write.ranges) or [r for r in write.ranges if r[1] != "in cte"]
        found = self.reader.find(target.relation_oid, write.where, only=write.only, ranges=ranges)
        return _Found(found.rows, False)

    def _cte_ranges(self, ranges: Sequence[Cond]) -> list[Cond] | None:
        """``col IN (SELECT x FROM cte)`` conditions as ``IN`` lists of the values the WITH query returned (an
        empty list matches nothing); None when a WITH query's rows are not known."""
        out: list[Cond] = []
        for col, op, values in ranges:
            if op != "in cte":
                out.append((col, op, values))
                continue
            rows = self.cte_rows.get(str(values[0]))
            if rows is None or any(not _known(r.get(str(values[1]), _UNKNOWN)) for r in rows):
                return None
            picked = tuple(dict.fromkeys(r[str(values[1])] for r in rows if r.get(str(values[1])) is not None))
            out.append((col, "in", picked) if picked else (col, "is null", ()))  # nothing equals: no row
            if not picked:
                out.append((col, "is not null", ()))
        return out

    # -- INSERT -------------------------------------------------------------------------------------------------
    def _insert(self, write: _Write, target: ExecTargetRow, st: _Statement, queue: list[_Pending],
                depth: int) -> list[ExtraLock | SpiCall]:
        out: list[ExtraLock | SpiCall] = []
        columns = self.catalog.columns(target.relation_oid)
        rows: Sequence[Mapping[str, Value]] = write.rows
        if not write.known_rows:
            selected = self._select_rows(write.source, write.params) if write.source is not None else None
            if selected is None:
                self.unknowns.append(f"the rows an INSERT into {target.relation} writes are known only when it runs")
            else:
                rows = [dict(zip(write.columns, r, strict=False)) for r in selected]
        for row_no, given in enumerate(rows):
            if row_no < len(write.row_sequences) and write.row_sequences[row_no]:  # the VALUES row's own calls
                out += [ExtraLock(r.relation_oid, LockMode.ROW_EXCLUSIVE, LockSource.SEQUENCE, "nextval", Stage.ROW,
                                  row_no)
                        for r in self.session.query_rows("exec_relations", OrdinalOidRow,
                                                         [list(write.row_sequences[row_no])])
                        if r.relation_oid is not None]
            values, seqs = self._formed(columns, given)
            out += [ExtraLock(s, LockMode.ROW_EXCLUSIVE, LockSource.SEQUENCE, "nextval", Stage.ROW, row_no)
                    for s in seqs]
            row = _Row(values, target.relation_oid if target.relkind != "p" else None)
            out += self._insert_row(write, target, st, row, row_no, queue, depth, conflict=write.conflict)
        return out

    def _joined_rows(self, write: _Write, target: ExecTargetRow) -> _Found | None:
        """The target rows an ``UPDATE ... FROM`` / ``DELETE ... USING`` joins to: the other table's rows read by
        its conditions, then for each the target's by its own conditions and the join values; each target row
        once (``nodeModifyTable.c``: a row already updated or deleted by the statement is skipped). None when a
        read is not exact."""
        joined = write.joined
        assert joined is not None
        name = ".".join(self.session.identifier(p) for p in joined.relation.split("."))
        found_oid = self.session.query_rows("exec_relations", OrdinalOidRow, [[name]])
        oid = found_oid[0].relation_oid if found_oid else None
        if oid is None or self.catalog.target(oid).relkind not in ("r", "p"):
            return None
        others = self.reader.find(oid, joined.where, only=joined.only, ranges=joined.ranges)
        if not others.exact:
            return None
        rows: list[_Row] = []
        seen: set[tuple[int | None, tuple[tuple[str, Value], ...], int]] = set()
        for o in others.rows:
            cond = dict(write.where)
            for tcol, ocol in joined.pairs:
                value = o.values.get(ocol, _UNKNOWN)
                if value is None:
                    cond = {}
                    break
                if tcol in cond and cond[tcol] != value:
                    cond = {}
                    break
                cond[tcol] = value
            if not cond:
                continue
            found = self.reader.find(target.relation_oid, cond, only=write.only, ranges=write.ranges)
            if not found.exact:
                return None
            for r in found.rows:
                key = (r.leaf, tuple(sorted(r.values.items())), r.version)
                if key not in seen:
                    seen.add(key)
                    rows.append(r)
        return _Found(rows)

    def _select_rows(self, select: Mapping[str, Any], params: Sequence[Value]) -> list[list[Value]] | None:
        """The rows a ``SELECT`` produces, when lockscope can read them without running the statement: no FROM
        (one row), or one table whose WHERE is made of comparisons of columns with constants (read by
        :meth:`RowReader.find`), its target list evaluated on each row read (:mod:`lockscope.evaluate`: a value it
        cannot compute stays unknown); None for anything else (joins, grouping, DISTINCT, LIMIT, set operations,
        subqueries)."""
        if select.get("op", "SETOP_NONE") != "SETOP_NONE" or select.get("valuesLists") is not None:
            return None
        if any(select.get(k) for k in ("groupClause", "havingClause", "distinctClause", "windowClause",
                                         "limitCount", "limitOffset", "withClause")):
            return None
        targets = [t.get("ResTarget") or {} for t in select.get("targetList") or []]
        from_ = select.get("fromClause") or []
        if not from_:
            return [[evaluate.evaluate(t.get("val"), {}, params) for t in targets]]
        if len(from_) != 1 or "RangeVar" not in from_[0]:
            return None
        rv = from_[0]["RangeVar"]
        name = ".".join(self.session.identifier(str(p)) for p in (rv.get("schemaname"), rv.get("relname")) if p)
        found_oid = self.session.query_rows("exec_relations", OrdinalOidRow, [[name]])
        oid = found_oid[0].relation_oid if found_oid else None
        if oid is None or self.catalog.target(oid).relkind not in ("r", "p"):
            return None
        where, ranges, exact = _conditions(select.get("whereClause"), params)
        if not exact:
            return None
        found = self.reader.find(oid, where, only=not rv.get("inh", True), ranges=ranges)
        if not found.exact:
            return None
        alias = _alias(rv)
        names = [c.name for c in sorted(self.catalog.columns(oid), key=lambda c: c.attnum)]
        out: list[list[Value]] = []
        for r in found.rows:
            context = {alias.lower(): r.values, "": r.values}
            row: list[Value] = []
            for t in targets:
                if "A_Star" in str((t.get("val") or {}).get("ColumnRef", {}).get("fields", "")):
                    row += [r.values.get(n, _UNKNOWN) for n in names]
                else:
                    row.append(evaluate.evaluate(t.get("val"), context, params))
            out.append(row)
        return out

    def _formed(self, columns: Sequence[ExecColumnRow], given: Mapping[str, Value]) -> tuple[dict[str, Value],
                                                                                                list[int]]:
        """A row as the INSERT's plan forms it: given values, defaults (a sequence's ``nextval`` locks it: the
        value is then not known), generated columns (not known)."""
        values: dict[str, Value] = {}
        seqs: list[int] = []
        for col in columns:
            value = given.get(col.name, _DEFAULT)
            if col.generated:
                values[col.name] = _UNKNOWN
                continue
            if value == _DEFAULT:
                if col.sequence_oid is not None:
                    seqs.append(col.sequence_oid)
                    value = _UNKNOWN
                else:
                    value = _default_value(col)
            values[col.name] = value
        return values, list(dict.fromkeys(seqs))

    def _insert_row(self, write: _Write | None, target: ExecTargetRow, st: _Statement, row: _Row, row_no: int,
                    queue: list[_Pending], depth: int, *, conflict: tuple[str, tuple[str, ...], dict[str, Value],
                                                                      bool] | None = None,
                    moved_from: _Row | None = None) -> list[ExtraLock | SpiCall]:
        """``nodeModifyTable.c ExecInsert``: routing, the relation's indexes, BEFORE ROW triggers, ON CONFLICT,
        TOAST, the AFTER ROW events queued."""
        out: list[ExtraLock | SpiCall] = []
        leaf_oid = target.relation_oid
        if target.relkind == "p":
            path = self._route(target, row.values)
            if path is None:
                return out
            for oid in path:
                part = self.catalog.target(oid)
                if oid not in st.routed:
                    st.routed.add(oid)
                    out.append(ExtraLock(oid, LockMode.ROW_EXCLUSIVE, LockSource.ROUTING, target.relation, Stage.ROW,
                                         row_no))
                    if self.version < PG14 and part.relkind != "p":
                        out += self._partition_qual(oid, row_no)
                if part.relkind != "p":
                    out += self._open_indexes(st, oid, Stage.ROW, row_no)
                if part.default_partition and self.version >= PG14:  # ExecFindPartition checks a row routed to a
                    out += self._partition_check(st, part, None, row_no)  # default partition (bounds may change)
            leaf_oid = path[-1]
        elif self.version >= PG14:
            out += self._open_indexes(st, leaf_oid, Stage.ROW, row_no)
        row.leaf = leaf_oid
        leaf = self.catalog.target(leaf_oid)
        before = self._firing(leaf, "INSERT", TriggerTiming.BEFORE, TriggerLevel.ROW, None)
        out += self._row_triggers(leaf, "INSERT", TriggerTiming.BEFORE, None, row, row_no, queue, depth, None)
        if leaf.ancestor_oids and (target.relkind != "p" or before):  # ExecInsert: a partition's constraint is
            out += self._partition_check(st, leaf, None, row_no)       # checked unless routed without BR triggers
        if conflict is not None:
            existing = self._conflicting(target, leaf, row.values, conflict[1])
            if existing is None:
                self.unknowns.append(f"whether the INSERT into {target.relation} conflicts is known only when it "
                                     "runs")
            elif existing:
                if conflict[0] == "nothing":
                    return out
                old = existing[0]
                new = _Row({**old.values, **{c: _excluded(v, row.values) for c, v in conflict[2].items()}}, old.leaf)
                if conflict[3]:
                    self.unknowns.append(f"the ON CONFLICT DO UPDATE on {target.relation} has a WHERE: whether it "
                                         "updates is known only when it runs")
                return out + self._update_row(leaf, st, old, new, frozenset(conflict[2]), row_no, queue, depth)
        if moved_from is not None:  # a moved row's values stored out of line are stored so again (heap_insert)
            out += self._toast(leaf, {c: v for c, v in row.values.items() if c not in row.external},
                               frozenset(row.values) - row.external, row_no, certain=bool(row.external))
        else:
            out += self._toast(leaf, row.values, write.given if write is not None else frozenset(row.values), row_no,
                               into=row)
        self.reader.overlay.write(leaf_oid, row)
        out += self._queue_after(leaf, "INSERT", None, row, row_no, queue, frozenset(row.values),
                                 crosspart=moved_from is not None)
        return out

    def _conflicting(self, target: ExecTargetRow, leaf: ExecTargetRow, values: Mapping[str, Value],
                     infer: Sequence[str]) -> list[_Row] | None:
        """The existing row an ON CONFLICT insertion conflicts with (an arbiter index's key looked up: the
        inference columns, or without them every unique index of the partition), [] when none, None when not
        known."""
        if infer:
            keys: list[list[str]] = [list(infer)]
        else:
            by_index: dict[int, list[str]] = {}
            for r in self.session.query_rows("exec_unique_keys", UniqueKeyColumnRow, [leaf.relation_oid]):
                if not r.plain or not r.column_name:
                    return None
                by_index.setdefault(r.index_oid, []).append(r.column_name)
            keys = list(by_index.values())
        for key in keys:
            cond = {c: values.get(c, _UNKNOWN) for c in key}
            if any(v is None for v in cond.values()):
                continue
            found = self.reader.find(target.relation_oid, cond)
            if not found.exact:
                return None
            if found.rows:
                return found.rows
        return []

    # -- UPDATE -------------------------------------------------------------------------------------------------
    def _update_rows(self, write: _Write, target: ExecTargetRow, st: _Statement, rows: Sequence[_Row],
                     queue: list[_Pending], depth: int) -> list[ExtraLock | SpiCall]:
        out: list[ExtraLock | SpiCall] = []
        for row_no, old in enumerate(rows):
            if old.leaf is None:
                self.unknowns.append(f"the partition of a row the UPDATE on {target.relation} finds is not known")
                old.leaf = target.relation_oid if target.relkind != "p" else None
                if old.leaf is None:
                    continue
            new = _Row({**old.values, **{c: (_UNKNOWN if v == _DEFAULT else v) for c, v in write.sets.items()}},
                       old.leaf, old.inserted_here, version=old.version)
            context = {write.alias.lower(): old.values, "": old.values}
            for c, expr in write.set_exprs.items():  # computed from the row's old values
                new.values[c] = evaluate.evaluate(expr, context, write.params)
            for c, v in write.sets.items():
                if v == _DEFAULT:
                    new.values[c] = self._column_default(old.leaf, c)
            out += self._update_row(target, st, old, new, write.given, row_no, queue, depth)
        return out

    def _update_row(self, target: ExecTargetRow, st: _Statement, old: _Row, new: _Row, given: frozenset[str],
                    row_no: int, queue: list[_Pending], depth: int) -> list[ExtraLock | SpiCall]:
        """``ExecUpdate``: the partition's indexes, BEFORE ROW triggers, the partition check and a row moved to
        another partition (``ExecCrossPartitionUpdate``), else the update in place."""
        assert old.leaf is not None
        leaf = self.catalog.target(old.leaf)
        out: list[ExtraLock | SpiCall] = []
        if self.version >= PG14:
            out += self._open_indexes(st, leaf.relation_oid, Stage.ROW, row_no)
        out += self._row_triggers(leaf, "UPDATE", TriggerTiming.BEFORE, old, new, row_no, queue, depth, given)
        if leaf.ancestor_oids:  # ExecUpdateAct: ExecPartitionCheck builds the partition's constraint, evaluates it
            dest: list[int] | None = None
            if target.relkind == "p" and target.relation_oid != leaf.relation_oid:
                dest = self._route(target, new.values, quiet=True)
                if dest is None:
                    self.unknowns.append(f"whether the UPDATE moves a row of {target.relation} to another partition "
                                         "is known only when it runs")
            out += self._partition_check(st, leaf, dest, row_no)
            if dest is not None and dest[-1] != leaf.relation_oid:
                return out + self._move(target, st, old, new, dest, row_no, queue, depth)
        return out + self._update_in_place(leaf, st, old, new, given, row_no, queue, depth, open_indexes=False)

    def _update_in_place(self, leaf: ExecTargetRow, st: _Statement, old: _Row, new: _Row, given: frozenset[str],
                         row_no: int, queue: list[_Pending], depth: int, *,
                         open_indexes: bool) -> list[ExtraLock | SpiCall]:
        out: list[ExtraLock | SpiCall] = []
        if open_indexes and self.version >= PG14:
            out += self._open_indexes(st, leaf.relation_oid, Stage.ROW, row_no)
        out += self._toast(leaf, new.values, given, row_no, old=old, into=new)
        out += self._toast_delete(leaf, old, given, row_no)
        self.reader.overlay.remove(leaf.relation_oid, old)
        self.reader.overlay.write(leaf.relation_oid, new)
        out += self._queue_after(leaf, "UPDATE", old, new, row_no, queue, given)
        return out

    def _move(self, target: ExecTargetRow, st: _Statement, old: _Row, new: _Row, dest: list[int], row_no: int,
              queue: list[_Pending], depth: int) -> list[ExtraLock | SpiCall]:
        """A row moved to another partition: deleted from its partition (its BEFORE and AFTER DELETE triggers; on
        PG 15+ a cloned foreign key's action is left to the root's UPDATE event), inserted through the root
        (``ExecCrossPartitionUpdate``), then on PG 15+ the root's foreign-key UPDATE triggers
        (``ExecCrossPartitionUpdateForeignKey``)."""
        assert old.leaf is not None
        leaf = self.catalog.target(old.leaf)
        out = self._row_triggers(leaf, "DELETE", TriggerTiming.BEFORE, old, None, row_no, queue, depth, None)
        out += self._toast_delete(leaf, old, None, row_no)
        self.reader.overlay.remove(leaf.relation_oid, old)
        out += self._queue_after(leaf, "DELETE", old, None, row_no, queue, frozenset(), crosspart=True)
        moved = _Row(dict(new.values), None, new.inserted_here, old.external, old.external_unknown)
        out += self._insert_row(None, target, st, moved, row_no, queue, depth, moved_from=old)
        if self.version >= PG15:
            out += self._queue_after(target, "UPDATE", old, moved, row_no, queue, frozenset(new.values),
                                     root_crosspart=True)
        return out

    # -- DELETE -------------------------------------------------------------------------------------------------
    def _delete_rows(self, target: ExecTargetRow, st: _Statement, rows: Sequence[_Row], queue: list[_Pending],
                     depth: int) -> list[ExtraLock | SpiCall]:
        out: list[ExtraLock | SpiCall] = []
        for row_no, old in enumerate(rows):
            if old.leaf is None:
                if target.relkind == "p":
                    self.unknowns.append(f"the partition of a row the DELETE on {target.relation} finds is not known")
                    continue
                old.leaf = target.relation_oid
            leaf = self.catalog.target(old.leaf)
            out += self._row_triggers(leaf, "DELETE", TriggerTiming.BEFORE, old, None, row_no, queue, depth, None)
            out += self._toast_delete(leaf, old, None, row_no)
            self.reader.overlay.remove(leaf.relation_oid, old)
            out += self._queue_after(leaf, "DELETE", old, None, row_no, queue, frozenset())
        return out

    def _toast_delete(self, rel: ExecTargetRow, old: _Row, changed: Iterable[str] | None,
                      row_no: int) -> list[ExtraLock]:
        """A deleted row's, or an updated row's replaced, values stored out of line are deleted from the TOAST
        relation: it and its index ``RowExclusiveLock``, held (``heaptoast.c heap_toast_delete`` /
        ``toast_tuple_cleanup`` → ``toast_internals.c toast_delete_datum``)."""
        gone = old.external if changed is None else old.external & set(changed)
        if old.external_unknown:
            self.unknowns.append(f"{rel.relation}: whether a row's values are stored out of line is not known "
                                 "(TOAST: 2 more locks when one is)")
        if not gone or rel.toast_oid is None or rel.toast_index_oid is None:
            return []
        return [ExtraLock(o, LockMode.ROW_EXCLUSIVE, LockSource.TOAST, rel.relation, Stage.ROW, row_no)
                for o in (rel.toast_oid, rel.toast_index_oid)]

    # -- MERGE --------------------------------------------------------------------------------------------------
    def _merge(self, write: _Write, target: ExecTargetRow) -> list[ExtraLock | SpiCall]:
        """``nodeModifyTable.c ExecMerge``: per source row, the target row the join finds (a key lookup) and the
        first WHEN clause that applies: UPDATE, DELETE or INSERT as the statements do."""
        merge = write.merge
        assert merge is not None
        if target.relkind not in ("r", "p"):
            self.unknowns.append(f"a MERGE into the view {target.relation}: the rows it writes and what they fire "
                                 "are not derived")
            return []
        st = _Statement("MERGE", target)
        queue: list[_Pending] = []
        out: list[ExtraLock | SpiCall] = []
        kinds = {cmd for _, cmd, _, _ in merge.clauses if cmd != "NOTHING"}
        if self.version < PG14 and target.relkind != "p" and kinds & {"INSERT", "UPDATE"}:
            out += self._open_indexes(st, target.relation_oid, Stage.EXECUTOR_START)
        for kind in [k for k in ("INSERT", "UPDATE", "DELETE") if k in kinds]:  # fireBSTriggers' order
            out += self._before_statement(kind, target, None, 0, queue)
        source_rows = merge.source_rows
        if source_rows is None and merge.source_select is not None:
            selected = self._select_rows(merge.source_select, write.params)
            if selected is not None:
                source_rows = [dict(zip(merge.source_names, r, strict=False)) for r in selected]
        if source_rows is None or not merge.join_exact:
            self.unknowns.append(f"the rows the MERGE into {target.relation} matches are known only when it runs")
        columns = self.catalog.columns(target.relation_oid)
        met: list[tuple[int, dict[str, Value], _Found, dict[str, Value]]] = []
        for row_no, src in enumerate(source_rows if source_rows is not None else [{}]):
            cond: dict[str, Value] = {}
            for tcol, scol, value in merge.join:
                cond[tcol] = src.get(scol, _UNKNOWN) if scol is not None else value
            found = self.reader.find(target.relation_oid, cond, only=write.only) if cond else \
                _Found([], False, "no key")
            if not found.exact:
                self.unknowns.append(found.reason or f"the rows the MERGE into {target.relation} matches are not "
                                     "known")
            met.append((row_no, src, found, cond))
        if len(met) > 1:
            met = self._merge_order(met, target)
        for row_no, src, found, _ in met:
            matched = "matched" if found.rows else "not_matched"
            index, clause = next(((n, c) for n, c in enumerate(merge.clauses) if c[0] == matched), (-1, None))
            if clause is None:
                continue
            if clause[2]:
                self.unknowns.append(f"a WHEN clause of the MERGE into {target.relation} has a condition: which "
                                     "action runs is known only when it runs")
            values = {c: (src.get(v[1:], _UNKNOWN) if isinstance(v, str) and v.startswith("\x02") else v)
                      for c, v in clause[3].items()}
            if clause[1] == "INSERT":  # an expression of the source row's columns (s.id % 5)
                for c, expr in merge.update_exprs.get(index, {}).items():
                    if not _known(values.get(c, _UNKNOWN)):
                        values[c] = evaluate.evaluate(expr, {merge.source_alias.lower(): src}, write.params)
                if any(c.startswith("\x00") for c in values):  # INSERT VALUES (...) without a column list
                    names = [c.name for c in sorted(columns, key=lambda c: c.attnum)]
                    values = dict(zip(names, values.values(), strict=False))
                formed, seqs = self._formed(columns, values)
                out += [ExtraLock(s, LockMode.ROW_EXCLUSIVE, LockSource.SEQUENCE, "nextval", Stage.ROW, row_no)
                        for s in seqs]
                row = _Row(formed, target.relation_oid if target.relkind != "p" else None)
                out += self._insert_row(_Write("INSERT", target.relation_oid, given=frozenset(values)), target, st,
                                        row, row_no, queue, 0)
            elif clause[1] == "UPDATE":
                for old in found.rows:
                    if old.leaf is None:
                        continue
                    new = _Row({**old.values, **values}, old.leaf, old.inserted_here, version=old.version)
                    context = {merge.target_alias.lower(): old.values, merge.source_alias.lower(): src,
                               "": old.values}
                    for c, expr in merge.update_exprs.get(index, {}).items():
                        if not _known(values.get(c, _UNKNOWN)):  # computed from the matched and the source row
                            new.values[c] = evaluate.evaluate(expr, context, write.params)
                    out += self._update_row(target, st, old, new, frozenset(values), row_no, queue, 0)
            elif clause[1] == "DELETE":
                out += self._delete_rows(target, st, found.rows, queue, 0)
        for kind in [k for k in ("DELETE", "UPDATE", "INSERT") if k in kinds]:  # fireASTriggers' order
            self._queue_after_statement(kind, target, None, queue)
        out += self.fire(queue, 0)
        out += [ExtraLock(i, LockMode.ROW_EXCLUSIVE, LockSource.TARGET_INDEX, self.catalog.target(rel).relation,
                          Stage.END, release=True) for rel, indexes in st.opened.items() for i in indexes]
        return out

    def _merge_order(self, met: list[tuple[int, dict[str, Value], _Found, dict[str, Value]]],
                     target: ExecTargetRow) -> list[tuple[int, dict[str, Value], _Found, dict[str, Value]]]:
        """The order the MERGE's join meets its source rows, from the statement's own plan (``EXPLAIN``, values
        bound): a join whose outer side reads the source (a nested loop, a hash join hashing the target) meets the
        source rows in order; one whose outer side scans the target (a hash join hashing the source) meets the
        matched rows in the target's physical order and, for a right or full join, the unmatched ones last in
        hash-table order, neither of which lockscope reads (said as unknown when two rows could swap); a merge join
        meets them in key order."""
        if self.statement is None:
            return met
        checked, params = self.statement
        text = "EXPLAIN (FORMAT JSON) " + bind_params(checked, params, self.session.literal)
        with self.session.probe_transaction(paced=False):
            rows = self.session.run_user_text(text)
        doc = rows[0][0]
        plans = json.loads(doc) if isinstance(doc, str) else doc
        stack = [plans[0].get("Plan", {})] if plans else []
        join: dict[str, Any] | None = None
        while stack:
            node = stack.pop(0)
            if node.get("Node Type") in ("Nested Loop", "Hash Join", "Merge Join"):
                join = node
                break
            stack += node.get("Plans") or []
        if join is None:
            return met
        if join.get("Node Type") == "Merge Join":
            keys = [tuple(c.values()) for _, _, _, c in met]
            if all(all(isinstance(v, str) and re.fullmatch(r"-?\d+", v) for v in k) for k in keys):
                return sorted(met, key=lambda m: tuple(int(str(v)) for v in m[3].values()))
            self.unknowns.append(f"the MERGE into {target.relation} meets its rows in its merge join's key order, "
                                 "which lockscope does not derive for these keys")
            return met
        names = {r.relname for r in self.catalog.tree(target.relation_oid)} | \
            {_plain(target.relation.rsplit(".", 1)[-1])}
        outer = (join.get("Plans") or [{}])[0]
        if not _plan_scans(outer, names):
            return met  # the source is read first, in order
        matched = [m for m in met if m[2].rows]
        unmatched = [m for m in met if not m[2].rows]
        if len(matched) > 1 or len(unmatched) > 1:
            self.unknowns.append(f"the MERGE into {target.relation} meets its rows as its join scans the table "
                                 "(matched rows in the table's physical order, then the others in hash-table order): "
                                 "the order its rows' locks are taken in is not derived")
        return matched + unmatched

    # -- pieces ---------------------------------------------------------------------------------------------------
    def _open_indexes(self, st: _Statement, relation_oid: int, stage: Stage, row_no: int = 0) -> list[ExtraLock]:
        """``ExecOpenIndices`` of one result relation, once per statement: every live index ``RowExclusiveLock``,
        released at ``ExecutorEnd``."""
        if relation_oid in st.opened:
            return []
        rel = self.catalog.target(relation_oid)
        st.opened[relation_oid] = list(rel.index_oids)
        return [ExtraLock(i, LockMode.ROW_EXCLUSIVE, LockSource.TARGET_INDEX, rel.relation, stage, row_no)
                for i in rel.index_oids]

    def _partition_check(self, st: _Statement, leaf: ExecTargetRow, dest: list[int] | None,
                         row_no: int) -> list[ExtraLock]:
        """``execMain.c ExecPartitionCheck`` of a row in partition ``leaf``: its constraint built
        (:meth:`_partition_qual`, once per backend), then evaluated top level first: a HASH level's
        ``satisfies_hash_partition`` opens its partitioned table ``AccessShareLock`` at its first call in the
        statement (``partbounds.c``; held), and the evaluation stops at the first level the row fails (``dest``:
        the partitions the row goes to, when it moves)."""
        out = self._partition_qual(leaf.relation_oid, row_no)
        chain = [leaf.relation_oid, *leaf.ancestor_oids]
        path = set(dest) if dest is not None else set(chain)
        for child, parent in reversed(list(itertools.pairwise(chain))):
            if self.catalog.target(parent).partstrat == "h" and parent not in st.hash_checked:
                st.hash_checked.add(parent)
                out.append(ExtraLock(parent, LockMode.ACCESS_SHARE, LockSource.PARTITION_CONSTRAINT, leaf.relation,
                                     Stage.ROW, row_no))
            if child not in path:
                break  # the row fails this level's bound: the rest of the constraint is not evaluated
        return out

    def _partition_qual(self, relation_oid: int, row_no: int) -> list[ExtraLock]:
        """``partcache.c generate_partition_qual``: a partition's constraint locks its parent ``AccessShareLock``
        and builds the parent's own first; each is built once per backend (the relcache keeps it)."""
        rel = self.catalog.target(relation_oid)
        out: list[ExtraLock] = []
        chain = [relation_oid, *rel.ancestor_oids]
        for child, parent in itertools.pairwise(chain):
            out.append(ExtraLock(parent, LockMode.ACCESS_SHARE, LockSource.PARTITION_CONSTRAINT, rel.relation,
                                 Stage.ROW, row_no, once_key=f"partqual:{child}"))
        return out

    def _route(self, target: ExecTargetRow, values: Mapping[str, Value], *, quiet: bool = False) -> list[int] | None:
        """The partitions a row of ``target`` goes through, leaf last (sub-partitioned tables first), from the
        server's own pruning of ``EXPLAIN SELECT 1 FROM target WHERE col = value ...`` over every known column (each
        level prunes by its own key): its plan names the partition. None, with an unknown said, when a key value
        is not known."""
        keys = target.partition_key_columns
        if not keys:
            self.unknowns.append(f"{target.relation}: a partition key with an expression: the partition rows go to "
                                 "is not derived")
            return None
        if any(not _known(values.get(_plain(k), _UNKNOWN)) for k in keys):
            if not quiet:
                self.unknowns.append(f"{target.relation}: a partition key value is computed when the row is written: "
                                     "the partition it goes to is not derived")
            return None
        leaf = _surviving_leaf(self.session, self.catalog, target, values)
        if leaf is None:
            if not quiet:
                self.unknowns.append(f"{target.relation}: the partition a row goes to is not derived (a sub-partition "
                                     "key the statement does not give)")
            return None
        facts = self.catalog.target(leaf)
        between = []
        for a in facts.ancestor_oids:
            if a == target.relation_oid:
                break
            between.append(a)
        return [*reversed(between), leaf]

    def _toast(self, rel: ExecTargetRow, values: Mapping[str, Value], given: Iterable[str],
               row_no: int, *, certain: bool = False, old: _Row | None = None,
               into: _Row | None = None) -> list[ExtraLock]:
        """The row written (an INSERT's, or an UPDATE's new version: ``old`` the row it replaces) stores values out
        of line (:func:`lockscope.toast.out_of_line`, ``heaptoast.c heap_toast_insert_or_update``): the TOAST
        relation and its index ``RowExclusiveLock`` (``toast_internals.c toast_save_datum``); said as unknown when
        the decision turns on a value lockscope does not know. ``certain``: a value is known to go out of line.
        ``into``: the row version written, told which of its columns are stored out of line (for a later statement
        of the transaction that updates or deletes it)."""
        if rel.toast_oid is None or rel.toast_index_oid is None:
            return []
        locks = [ExtraLock(o, LockMode.ROW_EXCLUSIVE, LockSource.TOAST, rel.relation, Stage.ROW, row_no)
                 for o in (rel.toast_oid, rel.toast_index_oid)]
        if certain:
            return locks
        columns = self.catalog.columns(rel.relation_oid)
        changed = set(given) if old is not None else {c.name for c in columns}
        kept = (old.external - changed) if old is not None else frozenset()
        if old is not None and old.external_unknown:
            if into is not None:
                into.external_unknown = True
            return []  # said by the read's own unknown (_toast_delete)
        row: dict[str, bytes | int | None] = {}
        for col in columns:
            value = values.get(col.name, _UNKNOWN)
            if col.name in kept:
                continue
            if value is None:
                row[col.name] = None
            elif col.attlen > 0:
                row[col.name] = 0
            elif _known(value):
                stored = _stored_bytes(col.type_name, value)
                if stored is not None:
                    row[col.name] = stored
        if not kept and _far_below_threshold(columns, row):  # nothing to compress or move: no TOAST access
            if into is not None:
                into.external, into.external_unknown = frozenset(), False
            return []
        facts = [toast.ToastColumn(c.name, c.attlen, c.attalign, c.attstorage, c.attcompression, c.type_name)
                 for c in sorted(columns, key=lambda c: c.attnum)]
        default = columns[0].default_compression if columns else "pglz"
        external, unknown = toast.out_of_line(facts, row, has_toast=True, default_compression=default, kept=kept)
        if into is not None:
            into.external, into.external_unknown = frozenset(external) | kept, unknown
        if unknown:
            self.unknowns.append(f"{rel.relation}: whether a value is stored out of line turns on a value known only "
                                 "when the row is written (TOAST: 2 more locks when it is)")
        return locks if external else []

    def _column_default(self, relation_oid: int, column: str) -> Value:
        for c in self.catalog.columns(relation_oid):
            if c.name == column:
                return _UNKNOWN if c.sequence_oid is not None else _default_value(c)
        return _UNKNOWN

    # -- triggers -------------------------------------------------------------------------------------------------
    def _firing(self, rel: ExecTargetRow, kind: str, timing: TriggerTiming, level: TriggerLevel,
                given: Iterable[str] | None) -> list[tuple[FiringTrigger, TriggerProgram]]:
        rows = self.catalog.user_triggers(rel.relation_oid)
        if not rows:
            return []
        fired = plpgsql.firing_triggers(rows, _EVENT[kind], updated_columns=None if given is None else set(given))
        out = []
        for f in fired:
            if f.timing is timing and f.level is level:
                out.append((f, self._program(f)))
        return out

    def _program(self, firing: FiringTrigger) -> TriggerProgram:
        trigger = firing.trigger
        if trigger.trigger_oid not in self._programs:
            columns = self._columns_of([trigger.table_name]).get(trigger.table_name, {})
            program = plpgsql.trigger_program(trigger, columns)
            if program.type_relations:
                program = plpgsql.trigger_program(trigger, columns, self._columns_of(program.type_relations))
            self._programs[trigger.trigger_oid] = program
        return self._programs[trigger.trigger_oid]

    def _columns_of(self, names: Sequence[str]) -> dict[str, dict[str, str]]:
        out: dict[str, dict[str, str]] = {}
        for r in self.session.query_rows("audit_table_columns", TableColumnRow, [list(names)]):
            out.setdefault(r.written, {})[r.column_name] = r.type_name
        return out

    def _before_statement(self, kind: str, rel: ExecTargetRow, given: Iterable[str] | None, depth: int,
                          queue: list[_Pending]) -> list[ExtraLock | SpiCall]:
        """BEFORE STATEMENT triggers, once per relation and command in a query level (``trigger.c
        before_stmt_triggers_fired``): a foreign-key action's statements run in their caller's level (``spi.c``
        with ``fire_triggers`` false), so its second UPDATE of a table fires them no more."""
        done = self._levels.setdefault(id(queue), (queue, set()))[1]
        if (rel.relation_oid, kind) in done:
            return []
        done.add((rel.relation_oid, kind))
        out: list[ExtraLock | SpiCall] = []
        for fired in self._firing(rel, kind, TriggerTiming.BEFORE, TriggerLevel.STATEMENT, given):
            out += self._run_user(fired, kind, None, None, rel, 0, depth)
        return out

    def _queue_after_statement(self, kind: str, rel: ExecTargetRow, given: Iterable[str] | None,
                               queue: list[_Pending]) -> None:
        """AFTER STATEMENT triggers queued at the level's end; those the level queued before for the same relation
        and command and has not fired yet are cancelled (``trigger.c cancel_prior_stmt_triggers``): they fire
        once, after the row events of the latest statement."""
        start = self._cursor.get(id(queue), 0)
        for event in queue[start:]:
            if event.user is not None and event.old is None and event.new is None and event.event == kind \
                    and event.relation_oid == rel.relation_oid:
                event.cancelled = True
        for fired in self._firing(rel, kind, TriggerTiming.AFTER, TriggerLevel.STATEMENT, given):
            queue.append(_Pending(None, fired, kind, None, None, rel.relation_oid, 0))

    def _row_triggers(self, rel: ExecTargetRow, kind: str, timing: TriggerTiming, old: _Row | None, new: _Row | None,
                      row_no: int, queue: list[_Pending], depth: int,
                      given: Iterable[str] | None) -> list[ExtraLock | SpiCall]:
        """BEFORE ROW triggers, run as the row is written."""
        out: list[ExtraLock | SpiCall] = []
        for fired in self._firing(rel, kind, timing, TriggerLevel.ROW, given):
            if fired[0].conditional and not self._when(fired[0], old, new):
                continue
            out += self._run_user(fired, kind, old, new, rel, row_no, depth)
        return out

    def _when(self, firing: FiringTrigger, old: _Row | None, new: _Row | None) -> bool:
        """Whether a row trigger's ``WHEN`` condition holds for the row (``trigger.c TriggerEnabled``), evaluated on
        ``OLD`` and ``NEW`` (:mod:`lockscope.evaluate`); one lockscope cannot evaluate is counted as firing, said
        as unknown."""
        when = _when_clause(firing.trigger.triggerdef)
        holds = evaluate.truth(when, {"new": new.values if new else {}, "old": old.values if old else {}}) \
            if when is not None else None
        if holds is None:
            self.unknowns.append(f"trigger {firing.trigger.tgname} has a WHEN condition: whether it fires is known "
                                 "only when the row is written (counted as firing)")
            return True
        return holds

    def _queue_after(self, rel: ExecTargetRow, kind: str, old: _Row | None, new: _Row | None, row_no: int,
                     queue: list[_Pending], given: Iterable[str], *, crosspart: bool = False,
                     root_crosspart: bool = False) -> list[ExtraLock | SpiCall]:
        """``trigger.c AfterTriggerSaveEvent``: the relation's AFTER ROW triggers for the event, in name order,
        foreign-key ones only when the event needs them (deferred ones fire at COMMIT: never within the
        transaction lockscope measures)."""
        events: list[tuple[bytes, _Pending]] = []
        for ri in self.catalog.ri_triggers(rel.relation_oid):
            if not ri.tgtype & _ROW or ri.tgtype & _BEFORE or not ri.tgtype & _EVENT_BIT[kind] \
                    or ri.tgenabled == "D":
                continue
            if ri.initially_deferred:
                self.notes.append(f"{ri.name} is checked at COMMIT (INITIALLY DEFERRED): lockscope measures the "
                                  "transaction before it ends, without those locks")
                continue
            if not self._ri_queued(ri, kind, old, new, crosspart, root_crosspart, rel):
                continue
            events.append((ri.tgname.encode(), _Pending(ri, None, kind, old, new, rel.relation_oid, row_no)))
        if not root_crosspart:
            for fired in self._firing(rel, kind, TriggerTiming.AFTER, TriggerLevel.ROW, given):
                if fired[0].deferred:
                    self.notes.append(f"trigger {fired[0].trigger.tgname} fires at COMMIT (INITIALLY DEFERRED)")
                    continue
                if fired[0].conditional and not self._when(fired[0], old, new):
                    continue
                events.append((fired[0].trigger.tgname.encode(),
                               _Pending(None, fired, kind, old, new, rel.relation_oid, row_no)))
        queue += [p for _, p in sorted(events, key=lambda e: e[0])]
        return []

    def _ri_queued(self, ri: ExecRiTriggerRow, kind: str, old: _Row | None, new: _Row | None, crosspart: bool,
                   root_crosspart: bool, rel: ExecTargetRow) -> bool:
        """Whether an UPDATE or DELETE queues this foreign-key trigger's event (``trigger.c AfterTriggerSaveEvent``
        with ``ri_triggers.c RI_FKey_pk_upd_check_required`` / ``RI_FKey_fk_upd_check_required``)."""
        pk_side = ri.function_name not in ("RI_FKey_check_ins", "RI_FKey_check_upd")
        if kind == "INSERT":
            return True
        if pk_side:
            if crosspart and kind == "DELETE" and self.version >= PG15 and ri.constraint_oid != ri.root_constraint_oid:
                return False  # the root's UPDATE event enforces the cloned constraint
            assert old is not None
            olds = [old.values.get(_plain(c), _UNKNOWN) for c in ri.pk_columns]
            if any(v is None for v in olds):
                return False
            if kind == "DELETE" or new is None:
                return True
            news = [new.values.get(_plain(c), _UNKNOWN) for c in ri.pk_columns]
            return self._keys_differ(olds, news, ri.name)
        if rel.relkind == "p":
            return False
        assert new is not None and old is not None
        news = [new.values.get(_plain(c), _UNKNOWN) for c in ri.fk_columns]
        if all(v is None for v in news):
            return False
        if any(v is None for v in news) and ri.match_type != "f":
            return False
        if old.inserted_here:  # the old version's xmin is this transaction's: checked whatever the keys
            return True
        olds = [old.values.get(_plain(c), _UNKNOWN) for c in ri.fk_columns]
        return self._keys_differ(olds, news, ri.name)

    def _keys_differ(self, olds: Sequence[Value], news: Sequence[Value], name: str) -> bool:
        """``ri_triggers.c ri_KeysEqual`` negated: a known column that changes decides; only when every known one
        stays and some are not known is it unknown (taken as changed)."""
        if any(_known(o) and _known(n) and o != n for o, n in zip(olds, news, strict=True)):
            return True
        if any(not _known(v) for v in [*olds, *news]):
            self.unknowns.append(f"{name}: whether the UPDATE changes the key is known only when it runs")
            return True
        return False

    # -- firing ---------------------------------------------------------------------------------------------------
    def fire(self, queue: list[_Pending], depth: int) -> list[ExtraLock | SpiCall]:
        """``trigger.c AfterTriggerEndQuery``: the queued events in order; a foreign-key action's own rows' events
        join the queue and fire after the ones queued before them."""
        out: list[ExtraLock | SpiCall] = []
        i = 0
        while i < len(queue):
            event = queue[i]
            i += 1
            self._cursor[id(queue)] = i
            if event.cancelled:
                continue
            if event.ri is not None:
                out += self._fire_ri(event, queue, depth)
            elif event.user is not None:
                rel = self.catalog.target(event.relation_oid)
                out += self._run_user(event.user, event.event, event.old, event.new, rel, event.row_no, depth)
        return out

    def _fire_ri(self, event: _Pending, queue: list[_Pending], depth: int) -> list[ExtraLock | SpiCall]:
        ri = event.ri
        assert ri is not None
        fn = ri.function_name
        if fn in ("RI_FKey_check_ins", "RI_FKey_check_upd"):
            assert event.new is not None
            if event.new.version and any(event.new.version == v for _, _, v in self.reader.overlay.deleted):
                return []  # the row version was updated or deleted since: only its latest version is checked
            return self._check(ri, event.new, event.row_no)
        assert event.old is not None
        return self._action(ri, fn, event.old, event.new, event.row_no, queue, depth)

    def _query_key(self, ri: ExecRiTriggerRow, kind: str, own: bool = False) -> str:
        """``ri_BuildQueryKey``: the root constraint on PG 14+ (all clones share the plan), except the PK lookup
        from the PK side (``RI_PLAN_CHECK_LOOKUPPK_FROM_PK``) and every query on 13: the constraint itself."""
        oid = ri.root_constraint_oid if self.version >= PG14 and not own else ri.constraint_oid
        return f"ri_{oid}_{kind}"

    def _check(self, ri: ExecRiTriggerRow, row: _Row, row_no: int) -> list[ExtraLock | SpiCall]:
        """``RI_FKey_check``: skipped for a row version no longer live (updated or deleted since the event was
        queued: :meth:`_fire_ri`, ``table_tuple_satisfies_snapshot(..., SnapshotSelf)``) and for a NULL in the key
        under MATCH SIMPLE (``ri_NullCheck``); PG 19's fast path; else the SPI query on the referenced table."""
        values = [row.values.get(_plain(c), _UNKNOWN) for c in ri.fk_columns]
        if all(v is None for v in values) or (any(v is None for v in values) and ri.match_type != "f"):
            return []
        if self.version >= PG19 and ri.pk_relkind != "p" and not ri.temporal and ri.index_am == "btree":
            return [ExtraLock(ri.pk_oid, LockMode.ROW_SHARE, LockSource.FK_CHECK, ri.name, Stage.AFTER_ROW, row_no),
                    ExtraLock(ri.index_oid, LockMode.ACCESS_SHARE, LockSource.FK_CHECK, ri.name, Stage.AFTER_ROW,
                              row_no)]
        only = "" if ri.pk_relkind == "p" else "ONLY "
        query = SpiQuery(self._query_key(ri, "check"), f"SELECT 1 FROM {only}{ri.pk_relation} x WHERE "
                         f"{_key_quals(ri.pk_columns, ri.pf_operators)} FOR KEY SHARE OF x", tuple(ri.fk_types),
                         LockSource.FK_CHECK, f"{ri.name} check")
        probe_values = self._probe_values(ri.pk_oid, ri.pk_columns, values, ri.pk_relkind == "p", ri.name)
        return [SpiCall(query, probe_values, Stage.AFTER_ROW, row_no)]

    def _probe_values(self, relation_oid: int, columns: Sequence[str], values: Sequence[Value], partitioned: bool,
                      name: str) -> tuple[Value, ...]:
        """Values for a stand-in's call: a value known only when the statement runs is replaced by a typical one of
        the column (the planner's statistics), so that the probe's custom plan costs like a real one; on a
        partitioned relation, whose partitions the value picks, that is said as unknown."""
        out: list[Value] = []
        for v, col in zip(values, columns, strict=True):
            if _known(v):
                out.append(v)
                continue
            if partitioned:
                self.unknowns.append(f"{name}: a key value is known only when the statement runs, and it picks the "
                                     "partitions the query locks")
            out.append(self._sample(relation_oid, _plain(col)))
        return tuple(out)

    def _sample(self, relation_oid: int, column: str) -> Value:
        key = (relation_oid, column)
        if key not in self._samples:
            rows = self.session.query_rows("exec_column_samples", OrdinalValueRow, [[relation_oid], [column]])
            self._samples[key] = rows[0].value if rows else None
        return self._samples[key]

    def _action(self, ri: ExecRiTriggerRow, fn: str, old: _Row, new: _Row | None, row_no: int,
                queue: list[_Pending], depth: int) -> list[ExtraLock | SpiCall]:
        """What a deleted (or key-updated) referenced row runs on the referencing table (``ri_triggers.c``)."""
        olds = tuple(old.values.get(_plain(c), _UNKNOWN) for c in ri.pk_columns)
        probe_old = self._probe_values(ri.pk_oid, ri.pk_columns, olds, ri.fk_relkind == "p", ri.name)
        only_fk = "" if ri.fk_relkind == "p" else "ONLY "
        where = _key_quals(ri.fk_columns, None)
        out: list[ExtraLock | SpiCall] = []
        action = fn.removeprefix("RI_FKey_").rsplit("_", 1)[0]  # noaction, restrict, cascade, setnull, setdefault
        event = "del" if fn.endswith("_del") else "upd"
        if action in ("noaction", "restrict"):
            return self._restrict(ri, action == "noaction", probe_old, row_no)
        cond = {_plain(c): v for c, v in zip(ri.fk_columns, olds, strict=True)}
        found = self.reader.find(ri.fk_oid, cond)
        if not found.exact:
            self.unknowns.append(found.reason)
            if not all(_known(v) for v in olds):  # rows of rows not known: their own cascades are not followed
                found = _Found([], False, found.reason)
        if action == "cascade" and fn.endswith("_del"):
            text = f"DELETE FROM {only_fk}{ri.fk_relation} WHERE {where}"
            out.append(self._call(ri, "cascade_del", text, ri.pk_types, "cascade delete", probe_old, row_no))
            write = _Write("DELETE", ri.fk_oid, ri.fk_relkind != "p")
            return out + self.dml(write, self.catalog.target(ri.fk_oid), queue, depth + 1, found)
        if action == "cascade":
            assert new is not None
            news = tuple(new.values.get(_plain(c), _UNKNOWN) for c in ri.pk_columns)
            probe_new = self._probe_values(ri.pk_oid, ri.pk_columns, news, ri.fk_relkind == "p", ri.name)
            sets = ", ".join(f"{c} = ${n}" for n, c in enumerate(ri.fk_columns, len(ri.fk_columns) + 1))
            text = f"UPDATE {only_fk}{ri.fk_relation} SET {sets} WHERE {where}"
            out.append(self._call(ri, "cascade_upd", text, [*ri.pk_types, *ri.pk_types], "cascade update",
                                  probe_old + probe_new, row_no))
            values = {_plain(c): v for c, v in zip(ri.fk_columns, news, strict=True)}
        else:
            fill = "NULL" if action == "setnull" else "DEFAULT"
            sets = ", ".join(f"{c} = {fill}" for c in ri.fk_columns)
            text = f"UPDATE {only_fk}{ri.fk_relation} SET {sets} WHERE {where}"
            # ri_BuildQueryKey: one plan for ON DELETE and ON UPDATE before PG 15 (RI_PLAN_SETNULL_DOUPDATE), two
            # from 15 (RI_PLAN_SETNULL_ONDELETE / _ONUPDATE, commit d6f96ed94e)
            kind = action if self.version < PG15 else f"{action}_{event}"
            out.append(self._call(ri, kind, text, ri.pk_types, f"set {fill.lower()}", probe_old, row_no))
            values = {_plain(c): (None if fill == "NULL" else _DEFAULT) for c in ri.fk_columns}
        write = _Write("UPDATE", ri.fk_oid, ri.fk_relkind != "p", given=frozenset(values), sets=values)
        out += self.dml(write, self.catalog.target(ri.fk_oid), queue, depth + 1, found)
        if action == "setdefault":  # ri_set: a referencing row may still hold the old key (the default): NO ACTION
            out += self._restrict(ri, True, probe_old, row_no)
        return out

    def _restrict(self, ri: ExecRiTriggerRow, no_action: bool, probe_old: tuple[Value, ...],
                  row_no: int) -> list[ExtraLock | SpiCall]:
        """``ri_triggers.c ri_restrict``: NO ACTION first looks the old key up again in the relation the trigger
        fired on (``ri_Check_Pk_Match``, its plan keyed by the constraint itself), then NO ACTION and RESTRICT look
        for referencing rows; the two share one plan before PG 18 (``RI_PLAN_RESTRICT_CHECKREF`` /
        ``RI_PLAN_RESTRICT``), not from 18 (``RI_PLAN_NO_ACTION``)."""
        # ri_restrict opens the referencing table RowShareLock before either query (table_open(fk_relid)), and
        # closes it after them (table_close: the referencing-rows query's own lock stays)
        opened = ExtraLock(ri.fk_oid, LockMode.ROW_SHARE, LockSource.FK_ACTION, ri.name, Stage.AFTER_ROW, row_no)
        out: list[ExtraLock | SpiCall] = [opened]
        if no_action and not ri.temporal:
            pk = self.catalog.target(ri.pk_oid)  # the relation the trigger fired on (ri_Check_Pk_Match's pk_rel)
            only_pk = "" if pk.relkind == "p" else "ONLY "
            text = (f"SELECT 1 FROM {only_pk}{pk.relation} x WHERE {_key_quals(ri.pk_columns, ri.pf_operators)} "
                    "FOR KEY SHARE OF x")
            out.append(self._call(ri, "pk_match", text, ri.pk_types, "key still there?", probe_old, row_no,
                                  own=True))
        only_fk = "" if ri.fk_relkind == "p" else "ONLY "
        text = f"SELECT 1 FROM {only_fk}{ri.fk_relation} x WHERE {_key_quals(ri.fk_columns, None)} FOR KEY SHARE OF x"
        kind = "noaction" if no_action and self.version >= PG18 else "restrict"
        return [*out, self._call(ri, kind, text, ri.pk_types, "referencing rows?", probe_old, row_no),
                dataclasses.replace(opened, release=True)]

    def _call(self, ri: ExecRiTriggerRow, kind: str, text: str, types: Sequence[str], what: str,
              values: Sequence[Value], row_no: int, *, own: bool = False) -> SpiCall:
        query = SpiQuery(self._query_key(ri, kind, own), text, tuple(types), LockSource.FK_ACTION, f"{ri.name} {what}")
        return SpiCall(query, tuple(values), Stage.AFTER_ROW, row_no)

    def _run_user(self, fired: tuple[FiringTrigger, TriggerProgram], kind: str, old: _Row | None, new: _Row | None,
                  rel: ExecTargetRow, row_no: int, depth: int) -> list[ExtraLock | SpiCall]:
        """One firing of a user trigger: its function's statements, in the function's text order (each an SPI plan
        of its own per trigger: ``pl_exec.c exec_prepare_plan``), with its sequences and each DML statement's own
        execution (a query level of its own)."""
        firing, program = fired
        trigger = firing.trigger
        for nd in program.not_derivable:
            where = f" line {nd.line}" if nd.line else ""
            self.unknowns.append(f"trigger {trigger.tgname}{where}: {nd.reason}")
        if program.search_path is not None and program.statements:
            self.notes.append(f"trigger {trigger.tgname}: its function sets search_path={program.search_path}: its "
                              "statements are probed under the session's search_path")
        stage = Stage.ROW if firing.timing is TriggerTiming.BEFORE and firing.level is TriggerLevel.ROW \
            else Stage.AFTER_ROW
        specials = {"tg_op": kind, "tg_when": str(firing.timing), "tg_level": str(firing.level),
                    "tg_name": trigger.tgname, "tg_table_name": _plain(rel.relation.split(".", 1)[-1]),
                    "tg_table_schema": _plain(rel.relation.split(".", 1)[0])}
        out: list[ExtraLock | SpiCall] = []
        for n, st in enumerate(program.statements):
            holds = plpgsql.guards_hold(st.guards, specials)
            if holds is False:
                continue  # a branch of the function that does not run for this event (IF TG_OP = ...)
            if holds is None:
                self.unknowns.append(f"trigger {trigger.tgname} line {st.line}: runs under a condition known only "
                                     "when it runs (counted as running)")
            values = tuple(self._param_value(p, old, new, specials, rel) for p in st.params)
            if any(not _known(v) for v in values) and self._names_partitioned(st.relations):
                self.unknowns.append(f"trigger {trigger.tgname} line {st.line}: a variable known only when it runs "
                                     "picks the partitions its statement plans")
            query = SpiQuery(f"trg_{trigger.trigger_oid}_{n}", st.sql, tuple(t or "unknown" for t in st.param_types),
                             LockSource.TRIGGER, f"{trigger.tgname} line {st.line}", st.one_shot)
            out.append(SpiCall(query, self._call_values(st.params, values, rel), stage, row_no))
            if st.sequences:
                out += [ExtraLock(r.relation_oid, LockMode.ROW_EXCLUSIVE, LockSource.SEQUENCE, trigger.tgname, stage,
                                  row_no) for r in self.session.query_rows("exec_relations", OrdinalOidRow,
                                                                            [list(st.sequences)])
                        if r.relation_oid is not None]
            if st.command in ("INSERT", "UPDATE", "DELETE", "MERGE"):
                out += self._nested(st.sql, values, depth + 1)
        return out

    def _names_partitioned(self, names: Sequence[str]) -> bool:
        """Whether any of these relations (as a statement names them) is partitioned."""
        if not names:
            return False
        rows = self.session.query_rows("exec_relations", OrdinalOidRow, [list(names)])
        return any(r.relation_oid is not None and self.catalog.target(r.relation_oid).relkind == "p" for r in rows)

    def _param_value(self, param: TriggerParam, old: _Row | None, new: _Row | None, specials: Mapping[str, str],
                     rel: ExecTargetRow) -> Value:
        """A ``NEW.col`` / ``OLD.col`` parameter's value from the row, a trigger variable's (``TG_OP`` ...), else
        not known (a typical value of the column stands in for the probe)."""
        if param.constant is not None:
            return param.constant
        if param.assignments:  # the last assignment that ran before the statement (IF conditions on TG_OP ...)
            value: Value = _UNKNOWN
            for a in param.assignments:
                holds = plpgsql.guards_hold(a.guards, specials)
                if holds is None:
                    return _UNKNOWN
                if holds:
                    record, _, column = (a.column or "").partition(".")
                    row = new if record == "new" else old
                    value = a.constant if a.constant is not None else \
                        (row.values.get(column, _UNKNOWN) if row is not None else _UNKNOWN)
            return value
        if param.origin is ParamOrigin.SPECIAL:
            return specials.get(param.variable, _UNKNOWN)
        if param.origin is not ParamOrigin.ROW_COLUMN:
            return _UNKNOWN
        record, _, column = param.variable.partition(".")
        row = new if record == "new" else old
        value = row.values.get(column, _UNKNOWN) if row is not None else _UNKNOWN
        return value

    def _call_values(self, params: Sequence[TriggerParam], values: Sequence[Value],
                     rel: ExecTargetRow) -> tuple[Value, ...]:
        """A trigger statement's values for its stepper: one known only when the row is written is a typical value
        of its column (the planner's statistics), else NULL."""
        out: list[Value] = []
        for p, v in zip(params, values, strict=True):
            if _known(v):
                out.append(v)
            elif p.origin is ParamOrigin.ROW_COLUMN:
                out.append(self._sample(rel.relation_oid, p.variable.partition(".")[2]))
            else:
                out.append(None)
        return tuple(out)

    def _nested(self, text: str, values: Sequence[Value], depth: int) -> list[ExtraLock | SpiCall]:
        """A trigger's DML statement: its own execution, in a query level of its own."""
        checked = check_statement(text)
        raw = raw_statement(checked)
        target = target_relation(self.session, raw)
        if target is None:
            return []
        write = _read_write(checked.kind, raw, list(values), target, self.catalog.columns(target))
        if write is None:
            return []
        if write.kind == "MERGE":
            self.unknowns.append("a MERGE run by a trigger: its execution locks are not derived")
            return []
        return self.dml(write, self.catalog.target(target), None, depth)


def _excluded(value: Value, row: Mapping[str, Value]) -> Value:
    """A DO UPDATE value: ``EXCLUDED.col`` is the proposed row's column."""
    if isinstance(value, str) and value.startswith("\x02"):
        return row.get(value[1:], _UNKNOWN)
    return value


def _default_value(col: ExecColumnRow) -> Value:
    """The value a column's default gives when it is a constant (``pg_get_expr`` of the default), NULL without a
    default, else not known."""
    if not col.has_default:
        return None
    expr = (col.default_expr or "").strip()
    if expr.upper() == "NULL":
        return None
    if expr.startswith("'"):
        end = expr.rfind("'")
        if end > 0 and (expr[end + 1:] == "" or expr[end + 1:].startswith("::")):
            return expr[1:end].replace("''", "'")
    head = expr.split("::", 1)[0].strip("() ")
    if head and (head.lstrip("-").replace(".", "", 1).isdigit() or head in ("true", "false")):
        return head
    return _UNKNOWN


def _far_below_threshold(columns: Sequence[ExecColumnRow], row: Mapping[str, bytes | int | None]) -> bool:
    """Whether a row of known values is smaller than ``TOAST_TUPLE_THRESHOLD`` even with every value padded to 8
    bytes and given a 4-byte header (an upper bound of ``heaptuple.c heap_compute_data_size`` plus the tuple
    header and null bitmap): then ``heaptoast.c heap_toast_insert_or_update`` is never called. False when a
    variable-width value is not known (``row`` lacks it)."""
    size = 24 + (len(columns) + 7) // 8 + 8
    for col in columns:
        if col.name not in row:
            if col.attlen < 0:
                return False
            continue
        value = row[col.name]
        size += 8 + (col.attlen if col.attlen > 0 else len(value) + 4 if isinstance(value, bytes) else 0)
    return size <= toast.TOAST_TUPLE_THRESHOLD


def _stored_bytes(type_name: str, value: str) -> bytes | None:
    """The bytes a varlena of this type stores for its text input: the text itself for the text types (padded for
    ``character(n)``), None for a type whose binary form lockscope does not compute (its size is then unknown when
    the value is long enough to matter)."""
    base = type_name.split("(", 1)[0].strip()
    data = value.encode()
    if base in toast.TEXT_TYPES:
        return data
    if base == "character":
        width = int(type_name.split("(", 1)[1].rstrip(")")) if "(" in type_name else 1
        return data + b" " * max(0, width - len(value))
    return data if len(data) <= 100 else None  # short: its exact size does not decide anything


def _surviving_leaf(session: Session, catalog: _Catalog, target: ExecTargetRow,
                    values: Mapping[str, Value]) -> int | None:
    """The leaf partition the server's pruning keeps for ``SELECT 1 FROM target WHERE col = value ...`` (every
    known value), read from the plan's relation names, in a probe transaction that reads no pg_locks (the planner
    locks the table and the partition ``AccessShareLock`` until its rollback)."""
    from .explain import read_explain

    known = [(c, v) for c, v in values.items() if _known(v)]
    ident = session.identifier
    quals = " AND ".join(f"{ident(c)} IS NULL" if v is None else f"{ident(c)} = {session.literal(str(v))}"
                         for c, v in known) or "true"
    text = f"EXPLAIN (FORMAT JSON) SELECT 1 FROM {target.relation} WHERE {quals}"
    with session.probe_transaction(paced=False):
        rows = session.run_user_text(text)
    plan = read_explain(str(rows[0][0]))
    by_name = {r.relname: r for r in catalog.tree(target.relation_oid)}
    leaves = [by_name[n] for n in plan.relation_names if n in by_name and by_name[n].is_leaf]
    return leaves[0].relation_oid if len(leaves) == 1 else None


@functools.lru_cache(maxsize=256)
def _when_clause(triggerdef: str | None) -> Any:
    """The ``WHEN`` condition of a ``CREATE TRIGGER`` text (``pg_get_triggerdef``) as a libpg_query JSON node, or
    None."""
    if not triggerdef:
        return None
    try:
        doc = json.loads(pglast.parser.parse_sql_json(triggerdef))
    except pglast.parser.ParseError:
        return None
    stmts = doc.get("stmts") or []
    body = ((stmts[0].get("stmt") or {}).get("CreateTrigStmt") or {}) if stmts else {}
    return body.get("whenClause")


def _plan_scans(node: Mapping[str, Any], names: set[str]) -> bool:
    """Whether an EXPLAIN plan node or one below it scans one of these relations (``Relation Name``)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if n.get("Relation Name") in names:
            return True
        stack += n.get("Plans") or []
    return False


def _article(word: str) -> str:
    """``a`` or ``an`` before a statement's word (``an UPDATE``, ``a DELETE``)."""
    return "an" if word[:1] in "AEIOU" else "a"
