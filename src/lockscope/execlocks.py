"""Execution locks: the relation locks a real execution of a statement takes that its EXPLAIN never takes.

EXPLAIN parses, rewrites and plans; a real execution also evaluates defaults, routes rows, writes indexes and
TOAST, and fires triggers. On a user's server lockscope never executes the statement, so it derives these locks
from the catalog and the statement's values, and probes the queries the server would run inside the execution
(foreign-key checks and actions) with ``EXPLAIN EXECUTE`` in the same READ ONLY probe, so that the server itself
takes their planner or executor locks in the plan-cache phase they are in. The rules, with the source each follows
and the majors where it differs (checked against statements executed on scratch servers of PostgreSQL 13-19,
``tests/test_txn_truth.py`` and ``tests/test_txn_model.py``):

- **sequences** (:attr:`LockSource.SEQUENCE`): a column default or identity that calls ``nextval``, for an inserted
  column the statement does not give, or an explicit ``nextval('name')``: the sequence ``RowExclusiveLock``, held
  (``sequence.c nextval_internal`` → ``lock_and_open_sequence``), when the row is formed.
- **the target's indexes** (:attr:`LockSource.TARGET_INDEX`): INSERT and UPDATE open every index of the target (and
  of each partition a row is routed to) ``RowExclusiveLock`` (``execIndexing.c ExecOpenIndices``: PG 13 at executor
  start, 14+ at the first row, commit c5b7ba4e67) and release them at the end of the statement, after its AFTER
  triggers (``ExecCloseIndices``): they hold fast-path slots while foreign-key checks run. DELETE never opens them.
- **tuple routing** (:attr:`LockSource.ROUTING`): an INSERT into a partitioned table locks the partition each row
  goes to, and every sub-partitioned table on the way, ``RowExclusiveLock``, held (``execPartition.c
  ExecFindPartition`` → ``ExecInitPartitionDispatchInfo`` / ``ExecInitPartitionInfo``); the partition is found by
  the server's own pruning of ``SELECT 1 FROM parent WHERE key = value`` (a separate probe).
- **the partition constraint** (:attr:`LockSource.PARTITION_CONSTRAINT`): PG 13's routing reads the leaf's
  partition constraint, which locks each ancestor ``AccessShareLock`` (``partcache.c generate_partition_qual``,
  once per backend: the first execution); a row an UPDATE moves to another partition does the same on every major.
- **foreign-key checks** (:attr:`LockSource.FK_CHECK`): per row inserted (or updated with changed key columns), per
  constraint, unless a key column is NULL (MATCH SIMPLE): ``SELECT 1 FROM [ONLY] pk x WHERE ... FOR KEY SHARE OF
  x`` through SPI and the plan cache, counted per row per backend (``ri_triggers.c RI_FKey_check``,
  ``ri_PlanCheck``): probed. PG 19 skips SPI when the referenced table is not partitioned, the key not temporal and
  the index a btree: the table ``RowShareLock`` and the constraint's index ``AccessShareLock`` (commit 2da86c1ef,
  ``ri_fastpath_is_applicable``).
- **foreign-key actions** (:attr:`LockSource.FK_ACTION`): per row deleted from (or key updated in) a referenced
  table, per constraint: NO ACTION looks the key up again in the referenced table and then in the referencing one
  (``ri_Check_Pk_Match``, ``ri_restrict``); RESTRICT the referencing one; CASCADE, SET NULL and SET DEFAULT run a
  DELETE or UPDATE on it (``RI_FKey_cascade_del``, ``RI_FKey_cascade_upd``, ``ri_set``): probed.
- **TOAST** (:attr:`LockSource.TOAST`): a value written out of line locks the TOAST relation and its index
  ``RowExclusiveLock`` (``toast_internals.c toast_save_datum``); estimated from the values' sizes.

What cannot be derived without running the statement is said in :attr:`ExecutionModel.notes`: values the
statement computes, rows an ``INSERT ... SELECT`` or a DELETE without a key produces, the rows a cascade reaches
and their own triggers, deferred constraints (checked at COMMIT).
"""

from __future__ import annotations

import dataclasses
import itertools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import TYPE_CHECKING, Any

from . import plpgsql
from .plpgsql import FiringTrigger, ParamOrigin, TriggerEvent, TriggerLevel, TriggerParam, TriggerProgram, TriggerTiming
from .rows import (
    ExecColumnRow,
    ExecForeignKeyRow,
    ExecTargetRow,
    ExecTriggerRow,
    OrdinalOidRow,
    OrdinalValueRow,
    RelationLockRow,
    RowsPerValueRow,
    TableColumnRow,
)
from .statement import CheckedStatement, check_statement, raw_statement
from .versions import PG14, PG19
from .vocab import LockMode, LockSource

if TYPE_CHECKING:
    from .db import Session

__all__ = ["DERIVATION_CATALOG", "ExecutionModel", "ExtraLock", "SpiCall", "SpiQuery", "Stage", "derive_execution",
           "route_row", "target_relation"]

#: The catalog reads of a write's derivation (its target, columns, foreign keys, triggers and their row types): the
#: same for every execution of one measurement (``Session.catalog_memo``).
DERIVATION_CATALOG = frozenset({"exec_target", "exec_columns", "exec_foreign_keys", "exec_triggers",
                                "audit_table_columns"})

#: The most referencing rows one key's action is taken to reach (each fires its own check: beyond a few, the check's
#: plan cache phase no longer changes).
MAX_ROWS_PER_KEY = 1000
#: ``toast_internals.h TOAST_TUPLE_THRESHOLD`` on 8 kB pages (bytes): a row over it has values stored out of line.
TOAST_TUPLE_THRESHOLD = 2032


class Stage(IntEnum):
    """When in a statement's execution a lock is taken (``execMain.c`` / ``trigger.c`` order)."""

    #: ``ExecutorStart`` (PG 13 opens the target's indexes here).
    EXECUTOR_START = 1
    #: while a row is written: defaults, the target's indexes (14+), routing, TOAST.
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
    :ivar first_execution_only: taken only the first time in a backend (a relcache entry it fills).
    """

    relation_oid: int
    mode: LockMode
    source: LockSource
    detail: str
    stage: Stage
    row: int = 0
    release: bool = False
    first_execution_only: bool = False


@dataclass(frozen=True)
class SpiQuery:
    """A query the server runs inside an execution through SPI and its own plan cache; lockscope PREPAREs it once
    and EXPLAIN EXECUTEs it where the server would run it, so its planner (or reused plan's) locks are the
    server's own.

    :ivar key: the plan cache's identity (``ri_triggers.c ri_BuildQueryKey``: constraint and query kind).
    :ivar text: the query as ``ri_triggers.c`` writes it, parameters ``$1..$n``.
    :ivar param_types: the parameters' types.
    :ivar source: :attr:`LockSource.FK_CHECK` or :attr:`LockSource.FK_ACTION`.
    :ivar detail: the constraint's name and what the query does, for the output.
    """

    key: str
    text: str
    param_types: tuple[str, ...]
    source: LockSource
    detail: str


@dataclass(frozen=True)
class SpiCall:
    """One call of an :class:`SpiQuery` (one row's check or action).

    :ivar values: the parameters' values as text (None: NULL or not known).
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
    :ivar notes: what could not be derived, one sentence each.
    """

    events: tuple[ExtraLock | SpiCall, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def spi_queries(self) -> tuple[SpiQuery, ...]:
        """The distinct SPI queries the calls use, first use first."""
        seen: dict[str, SpiQuery] = {}
        for e in self.events:
            if isinstance(e, SpiCall):
                seen.setdefault(e.query.key, e.query)
        return tuple(seen.values())


@dataclass(frozen=True)
class _Write:
    """The rows a DML statement writes, as far as its text tells: per row, column -> value text (None: NULL),
    :data:`_UNKNOWN` for a value only the execution knows."""

    kind: str
    target: int
    rows: tuple[Mapping[str, str | None], ...]
    given: frozenset[str]
    known_rows: bool
    where: Mapping[str, str | None]


_UNKNOWN = "\x00unknown"


def derive_execution(session: Session, checked: CheckedStatement, params: Sequence[str], target_oid: int,
                     raw: Mapping[str, Any]) -> ExecutionModel:
    """The execution locks of one INSERT, UPDATE or DELETE on ``target_oid`` (see the module docstring).

    :param checked: the statement.
    :param params: the values of ``$1..$n`` (text).
    :param target_oid: the target relation (the query tree's result relation).
    :param raw: the statement's raw parse tree node (``statement.raw_statement``).
    :return: the events in order and the notes; empty for a SELECT.
    :raises DatabaseError: a catalog read failed.
    """
    write = _read_write(checked.kind, raw, params, target_oid)
    if write is None:
        return ExecutionModel()
    deriver = _Deriver(session, write, raw)
    return ExecutionModel(tuple(deriver.events()), tuple(dict.fromkeys(deriver.notes)))


def target_relation(session: Session, raw: Mapping[str, Any]) -> int | None:
    """The OID of an INSERT's, UPDATE's or DELETE's target as the parser resolves its name under the session's
    search_path (``to_regclass``, no lock), for a statement whose query tree lockscope does not build; None for
    another statement or an unknown name."""
    ((node_name, body),) = raw.items()
    if node_name not in ("InsertStmt", "UpdateStmt", "DeleteStmt"):
        return None
    rv = body.get("relation") or {}
    name = ".".join(session.identifier(str(part)) for part in (rv.get("schemaname"), rv.get("relname")) if part)
    rows = session.query_rows("exec_relations", OrdinalOidRow, [[name]])
    return rows[0].relation_oid if rows else None


# -- the rows a statement writes ---------------------------------------------------------------------------------

def _read_write(kind: str, raw: Mapping[str, Any], params: Sequence[str], target: int) -> _Write | None:
    """The statement's rows and key values from its raw parse tree (libpg_query JSON), None for a SELECT."""
    ((node_name, body),) = raw.items()
    if node_name == "InsertStmt":
        cols = [_name(c["ResTarget"]) for c in body.get("cols") or []]
        select = (body.get("selectStmt") or {}).get("SelectStmt") or {}
        lists = select.get("valuesLists")
        if not lists:
            return _Write("INSERT", target, ({},), frozenset(cols), False, {})
        rows = tuple({c: _value(v, params) for c, v in zip(cols, _items(vl), strict=False)} for vl in lists)
        return _Write("INSERT", target, rows, frozenset(cols), True, {})
    if node_name == "UpdateStmt":
        sets = {_name(t["ResTarget"]): _value(t["ResTarget"].get("val"), params)
                for t in body.get("targetList") or [] if "ResTarget" in t}
        return _Write("UPDATE", target, (sets,), frozenset(sets), True, _equalities(body.get("whereClause"), params))
    if node_name == "DeleteStmt":
        return _Write("DELETE", target, ({},), frozenset(), True, _equalities(body.get("whereClause"), params))
    return None


def _name(res_target: Mapping[str, Any]) -> str:
    """A target column's name as the parser left it (folded to lower case unless quoted)."""
    return str(res_target.get("name", ""))


def _items(node: Any) -> list[Any]:
    if isinstance(node, dict) and "List" in node:
        return list(node["List"].get("items") or [])
    return list(node or [])


def _value(node: Any, params: Sequence[str]) -> str | None:
    """A constant's or parameter's value as text; :data:`_UNKNOWN` for anything computed."""
    if not isinstance(node, dict):
        return _UNKNOWN
    if "SetToDefault" in node:
        return _DEFAULT
    if "TypeCast" in node:
        return _value(node["TypeCast"].get("arg"), params)
    if "ParamRef" in node:
        n = int(node["ParamRef"].get("number", 0))
        return params[n - 1] if 0 < n <= len(params) else _UNKNOWN
    if "A_Const" in node:
        const = node["A_Const"]
        if const.get("isnull"):
            return None
        for key, field in (("ival", "ival"), ("fval", "fval"), ("sval", "sval"), ("boolval", "boolval")):
            if key in const:
                inner = const[key]
                value = inner.get(field, 0 if key == "ival" else False if key == "boolval" else "")
                return ("true" if value else "false") if key == "boolval" else str(value)
        return "0"  # libpg_query leaves out an ival of 0
    return _UNKNOWN


def _equalities(where: Any, params: Sequence[str]) -> dict[str, str | None]:
    """``column = constant`` conjuncts of a WHERE clause: column -> value."""
    out: dict[str, str | None] = {}
    stack = [where]
    while stack:
        node = stack.pop()
        if not isinstance(node, dict):
            continue
        if "BoolExpr" in node and node["BoolExpr"].get("boolop") == "AND_EXPR":
            stack += node["BoolExpr"].get("args") or []
        elif "A_Expr" in node and node["A_Expr"].get("kind") == "AEXPR_OP":
            expr = node["A_Expr"]
            op = [n.get("String", {}).get("sval") for n in expr.get("name") or []]
            left, right = expr.get("lexpr", {}), expr.get("rexpr", {})
            if op == ["="] and "ColumnRef" in left:
                fields = left["ColumnRef"].get("fields") or []
                if fields and "String" in fields[-1]:
                    out[str(fields[-1]["String"]["sval"])] = _value(right, params)
    return out


# -- sequences, routing, TOAST -----------------------------------------------------------------------------------

def _sequence_locks(session: Session, write: _Write, columns: Sequence[ExecColumnRow], row: Mapping[str, str | None],
                    row_no: int, raw: Mapping[str, Any]) -> list[ExtraLock]:
    """``nextval`` of defaults of the columns an INSERT does not give (or gives as DEFAULT), and of explicit
    ``nextval('name')`` calls, per row (a sequence locked once per transaction: the local-lock hit does the rest)."""
    oids: list[int] = []
    if write.kind == "INSERT":
        for col in columns:
            if col.sequence_oid is not None and not col.generated and (col.name not in write.given
                                                                        or row.get(col.name) == _DEFAULT):
                oids.append(col.sequence_oid)
    if row_no == 0:
        names = _nextval_names(raw)
        if names:
            oids += [r.relation_oid for r in session.query_rows("exec_relations", OrdinalOidRow, [names])
                     if r.relation_oid is not None]
    return [ExtraLock(oid, LockMode.ROW_EXCLUSIVE, LockSource.SEQUENCE, "nextval", Stage.ROW, row_no)
            for oid in dict.fromkeys(oids)]


_DEFAULT = "\x00default"


def _nextval_names(raw: Mapping[str, Any]) -> list[str]:
    """The sequence names of ``nextval('name')`` calls with a constant argument anywhere in the statement."""
    found: list[str] = []
    stack: list[Any] = [raw]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            call = node.get("FuncCall")
            if isinstance(call, dict):
                name = [n.get("String", {}).get("sval") for n in call.get("funcname") or []]
                args = call.get("args") or []
                if name and name[-1] == "nextval" and len(args) == 1:
                    value = _value(args[0], ())
                    if value not in (None, _UNKNOWN):
                        found.append(str(value))
            stack += list(node.values())
        elif isinstance(node, list):
            stack += node
    return found


def route_row(session: Session, target: ExecTargetRow, row: Mapping[str, str | None], notes: list[str]) -> list[int]:
    """The partitions a row inserted into partitioned ``target`` goes through, leaf last (sub-partitioned tables
    first), from the server's own partition pruning: ``EXPLAIN SELECT 1 FROM target WHERE column = value ...`` over
    every column whose value the statement gives (each level of a sub-partitioned table prunes by its own key), in a
    probe transaction of its own (read only, rolled back), whose locks name the surviving partitions. Empty, with a
    note, when a key value or the key itself (an expression) is not known.

    :raises DatabaseError: the probe failed.
    """
    keys = target.partition_key_columns
    if not keys:
        notes.append(f"{target.relation}: a partition key with an expression: the partition rows go to is not "
                     "derived")
        return []
    if any(row.get(_plain(k), _UNKNOWN) in (_UNKNOWN, _DEFAULT) for k in keys):
        notes.append(f"{target.relation}: a partition key value is computed when the row is written: the "
                     "partition it goes to is not derived")
        return []
    known = [(c, v) for c, v in row.items() if v not in (_UNKNOWN, _DEFAULT)]
    quals = " AND ".join(f"{session.identifier(c)} IS NULL" if v is None else
                         f"{session.identifier(c)} = {session.literal(str(v))}" for c, v in known)
    path = _surviving_partitions(session, target, quals)
    if not path:
        notes.append(f"{target.relation}: the partition a row goes to is decided by a sub-partition key the "
                     "statement does not give: not derived")
    return path


def _surviving_partitions(session: Session, target: ExecTargetRow, quals: str) -> list[int]:
    with session.probe_transaction():
        session.run_user_text(f"EXPLAIN (FORMAT JSON) SELECT 1 FROM {target.relation} WHERE {quals}")
        rows = session.query_rows("relation_locks", RelationLockRow)
    locked = [r.relation_oid for r in rows if r.relation_oid != target.relation_oid]
    if not locked:
        return []
    facts = {r.relation_oid: r for r in (session.query_rows("exec_target", ExecTargetRow, [oid])[0]
                                          for oid in locked)}
    leaves = [f for f in facts.values() if f.relkind in ("r", "f") and target.relation_oid in f.ancestor_oids]
    if len(leaves) != 1:
        return []
    leaf = leaves[0]
    between = list(itertools.takewhile(lambda a: a != target.relation_oid, leaf.ancestor_oids))
    return [*reversed(between), leaf.relation_oid]  # the sub-partitioned tables from the top, the leaf last


def _toast_locks(target: ExecTargetRow, row: Mapping[str, str | None], row_no: int) -> list[ExtraLock]:
    """A row whose values add up to more than ``TOAST_TUPLE_THRESHOLD`` bytes has some stored out of line (an
    estimate: compression may keep them in the row)."""
    if target.toast_oid is None or target.toast_index_oid is None:
        return []
    size = sum(len(v.encode()) for v in row.values() if v is not None and v not in (_UNKNOWN, _DEFAULT))
    if size <= TOAST_TUPLE_THRESHOLD:
        return []
    return [ExtraLock(o, LockMode.ROW_EXCLUSIVE, LockSource.TOAST, target.relation, Stage.ROW, row_no)
            for o in (target.toast_oid, target.toast_index_oid)]


# -- foreign keys ------------------------------------------------------------------------------------------------

def _plain(quoted: str) -> str:
    """A name as ``quote_ident`` printed it, unquoted."""
    return quoted[1:-1].replace('""', '"') if quoted.startswith('"') else quoted


def _key_quals(columns: Sequence[str], operators: Sequence[str] | None, first: int = 1) -> str:
    """``col1 OPERATOR(...) $n AND ...`` as ``ri_triggers.c ri_GenerateQual`` writes a key's comparison."""
    ops = operators or ["OPERATOR(pg_catalog.=)"] * len(columns)
    return " AND ".join(f"{c} {op} ${n}" for n, (c, op) in enumerate(zip(columns, ops, strict=True), first))


class _ForeignKeys:
    """The foreign-key checks and actions of a write (``ri_triggers.c``), mixed into :class:`_Deriver`."""

    session: Session
    write: _Write
    version: int
    fkeys: Sequence[ExecForeignKeyRow]
    notes: list[str]

    def sample(self, relation_oid: int, column: str) -> str | None:
        raise NotImplementedError

    def rows_per_key(self, relation_oid: int, column: str) -> int:
        """How many referencing rows one key reaches: the planner's estimate (``exec_rows_per_key.sql``), rounded,
        1 to :data:`MAX_ROWS_PER_KEY`; 1 without statistics."""
        rows = self.session.query_rows("exec_rows_per_key", RowsPerValueRow, [column, relation_oid])
        estimate = rows[0].rows_per_value if rows and rows[0].rows_per_value is not None else 1.0
        return max(1, min(MAX_ROWS_PER_KEY, round(estimate)))

    def nested(self, text: str, values: Sequence[str | None], rows: int = 1) -> list[ExtraLock | SpiCall]:
        raise NotImplementedError

    def _foreign_key(self, fk: ExecForeignKeyRow, row: Mapping[str, str | None],
                     row_no: int) -> list[ExtraLock | SpiCall]:
        """The check or action one row fires for one constraint (both when it references its own table)."""
        if fk.deferred:
            self.notes.append(f"{fk.name} is checked at COMMIT (INITIALLY DEFERRED): its locks come after the last "
                              "statement")
            return []
        out: list[ExtraLock | SpiCall] = []
        if fk.fk_oid == self.write.target and self.write.kind in ("INSERT", "UPDATE"):
            out += self._check(fk, row, row_no)
        if fk.pk_oid == self.write.target and self.write.kind in ("DELETE", "UPDATE"):
            out += self._action(fk, row, row_no)
        return out

    def _values(self, fk: ExecForeignKeyRow, values: Sequence[str | None]) -> tuple[str | None, ...]:
        """Key values for a probe: a value known only when the statement runs is replaced by a typical one of the
        referenced column (the planner's statistics), so that the probe's custom plan costs like a real one."""
        return tuple(self.sample(fk.pk_oid, _plain(col)) if v in (_UNKNOWN, _DEFAULT) else v
                     for v, col in zip(values, fk.pk_columns, strict=True))

    def _check(self, fk: ExecForeignKeyRow, row: Mapping[str, str | None], row_no: int) -> list[ExtraLock | SpiCall]:
        """``RI_FKey_check``: skipped for an UPDATE that leaves the key as it is (``trigger.c
        AfterTriggerSaveEvent`` → ``RI_FKey_fk_upd_check_required``) and for a key with a NULL under MATCH SIMPLE
        (``ri_NullCheck``); PG 19's fast path (``ri_fastpath_is_applicable``); else the SPI query."""
        names = [_plain(c) for c in fk.fk_columns]
        if self.write.kind == "UPDATE" and not set(names) & self.write.given:
            return []
        values = [row.get(n, _UNKNOWN) for n in names]
        if fk.match_type != "f" and any(v is None for v in values):
            return []
        return self._check_query(fk, values, row_no)

    def _check_query(self, fk: ExecForeignKeyRow, values: Sequence[str | None],
                     row_no: int) -> list[ExtraLock | SpiCall]:
        if self.version >= PG19 and fk.pk_relkind != "p" and not fk.temporal and fk.index_am == "btree":
            return [ExtraLock(fk.pk_oid, LockMode.ROW_SHARE, LockSource.FK_CHECK, fk.name, Stage.AFTER_ROW, row_no),
                    ExtraLock(fk.index_oid, LockMode.ACCESS_SHARE, LockSource.FK_CHECK, fk.name, Stage.AFTER_ROW,
                              row_no)]
        only = "" if fk.pk_relkind == "p" else "ONLY "
        query = SpiQuery(f"ri_{fk.constraint_oid}_check", f"SELECT 1 FROM {only}{fk.pk_relation} x WHERE "
                         f"{_key_quals(fk.pk_columns, fk.pf_operators)} FOR KEY SHARE OF x", tuple(fk.fk_types),
                         LockSource.FK_CHECK, f"{fk.name} check")
        return [SpiCall(query, self._values(fk, values), Stage.AFTER_ROW, row_no)]

    def _action(self, fk: ExecForeignKeyRow, row: Mapping[str, str | None], row_no: int) -> list[ExtraLock | SpiCall]:
        """What a deleted (or key-updated) referenced row runs on the referencing table: NO ACTION first looks the
        key up again in the referenced table (``ri_Check_Pk_Match``), NO ACTION and RESTRICT then look for
        referencing rows (``ri_restrict``), CASCADE deletes or updates them (``RI_FKey_cascade_del``,
        ``RI_FKey_cascade_upd``), SET NULL / SET DEFAULT update them (``ri_set``); an UPDATE that leaves the key as
        it is runs nothing (``RI_FKey_pk_upd_check_required``)."""
        pk_names = [_plain(c) for c in fk.pk_columns]
        write = self.write
        if write.kind == "UPDATE" and not set(pk_names) & write.given:
            return []
        action = fk.on_delete if write.kind == "DELETE" else fk.on_update
        old = self._values(fk, [write.where.get(n, _UNKNOWN) for n in pk_names])
        if any(write.where.get(n, _UNKNOWN) == _UNKNOWN for n in pk_names):
            self.notes.append(f"{fk.name}: which referenced rows the {write.kind} touches is known only when it "
                              "runs: one is assumed, with a typical key")
        only_fk = "" if fk.fk_relkind == "p" else "ONLY "
        out: list[ExtraLock | SpiCall] = []
        if action == "a":
            only_pk = "" if fk.pk_relkind == "p" else "ONLY "
            text = (f"SELECT 1 FROM {only_pk}{fk.pk_relation} x WHERE {_key_quals(fk.pk_columns, fk.pf_operators)} "
                    "FOR KEY SHARE OF x")
            out.append(self._call(fk, "pk_match", text, fk.pk_types, "key still there?", old, row_no))
        where = _key_quals(fk.fk_columns, None)
        if action in ("a", "r"):
            text = f"SELECT 1 FROM {only_fk}{fk.fk_relation} x WHERE {where} FOR KEY SHARE OF x"
            return [*out, self._call(fk, "restrict", text, fk.pk_types, "referencing rows?", old, row_no)]
        if action == "c" and write.kind == "DELETE":
            text = f"DELETE FROM {only_fk}{fk.fk_relation} WHERE {where}"
            out.append(self._call(fk, "cascade_del", text, fk.pk_types, "cascade delete", old, row_no))
            out += self.nested(text, old, self.rows_per_key(fk.fk_oid, _plain(fk.fk_columns[0])))
        elif action == "c":
            new = self._values(fk, [row.get(n, _UNKNOWN) for n in pk_names])
            sets = ", ".join(f"{c} = ${n}" for n, c in enumerate(fk.fk_columns, len(fk.fk_columns) + 1))
            text = f"UPDATE {only_fk}{fk.fk_relation} SET {sets} WHERE {where}"
            out.append(self._call(fk, "cascade_upd", text, [*fk.pk_types, *fk.pk_types], "cascade update",
                                  old + new, row_no))
            for _ in range(self.rows_per_key(fk.fk_oid, _plain(fk.fk_columns[0]))):
                out += self._check_query(fk, new, row_no)  # each moved referencing row's check (RI_FKey_check_upd)
        else:
            fill = "NULL" if action == "n" else "DEFAULT"
            sets = ", ".join(f"{c} = {fill}" for c in fk.fk_columns)
            text = f"UPDATE {only_fk}{fk.fk_relation} SET {sets} WHERE {where}"
            out.append(self._call(fk, f"set_{fill.lower()}", text, fk.pk_types, f"set {fill.lower()}", old, row_no))
        self.notes.append(f"{fk.name}: the referencing rows the action reaches are known only when it runs (the "
                          "planner's estimate is taken)")
        return out

    @staticmethod
    def _call(fk: ExecForeignKeyRow, kind: str, text: str, types: Sequence[str], what: str,
              values: Sequence[str | None], row_no: int) -> SpiCall:
        query = SpiQuery(f"ri_{fk.constraint_oid}_{kind}", text, tuple(types), LockSource.FK_ACTION,
                         f"{fk.name} {what}")
        return SpiCall(query, tuple(values), Stage.AFTER_ROW, row_no)


# -- user triggers -----------------------------------------------------------------------------------------------

#: How deep statements run by triggers and foreign-key actions are followed (a trigger's INSERT firing its table's
#: triggers, ...).
MAX_DEPTH = 3
_EVENT = {"INSERT": TriggerEvent.INSERT, "UPDATE": TriggerEvent.UPDATE, "DELETE": TriggerEvent.DELETE}


class _Triggers:
    """The user triggers of a write (``trigger.c``; their functions' statements: :mod:`lockscope.plpgsql`), mixed
    into :class:`_Deriver`."""

    session: Session
    write: _Write
    target: ExecTargetRow
    notes: list[str]
    triggers: list[tuple[FiringTrigger, TriggerProgram]]

    def nested(self, text: str, values: Sequence[str | None], rows: int = 1) -> list[ExtraLock | SpiCall]:
        raise NotImplementedError

    def sample(self, relation_oid: int, column: str) -> str | None:
        raise NotImplementedError

    def _read_triggers(self) -> list[tuple[FiringTrigger, TriggerProgram]]:
        """The triggers that fire for this write, each with its function's statements (``exec_triggers.sql``, the
        table's and the functions' row types' columns: ``audit_table_columns.sql``)."""
        rows = self.session.query_rows("exec_triggers", ExecTriggerRow, [self.write.target])
        if not rows:
            return []
        updated = self.write.given if self.write.kind == "UPDATE" else None
        firing = plpgsql.firing_triggers(rows, _EVENT[self.write.kind], updated_columns=updated)
        out: list[tuple[FiringTrigger, TriggerProgram]] = []
        for f in firing:
            columns = self._columns_of([f.trigger.table_name]).get(f.trigger.table_name, {})
            program = plpgsql.trigger_program(f.trigger, columns)
            if program.type_relations:
                program = plpgsql.trigger_program(f.trigger, columns, self._columns_of(program.type_relations))
            out.append((f, program))
            self._trigger_notes(f, program)
        return out

    def _columns_of(self, names: Sequence[str]) -> dict[str, dict[str, str]]:
        out: dict[str, dict[str, str]] = {}
        for r in self.session.query_rows("audit_table_columns", TableColumnRow, [list(names)]):
            out.setdefault(r.written, {})[r.column_name] = r.type_name
        return out

    def _trigger_notes(self, firing: FiringTrigger, program: TriggerProgram) -> None:
        name = firing.trigger.tgname
        for nd in program.not_derivable:
            where = f" line {nd.line}" if nd.line else ""
            self.notes.append(f"trigger {name}{where}: {nd.reason}")
        if firing.conditional:
            self.notes.append(f"trigger {name} has a WHEN condition: counted as if it fires for every row")
        if firing.deferred:
            self.notes.append(f"trigger {name} fires at COMMIT (INITIALLY DEFERRED): its locks come last")
        if program.search_path is not None and program.statements:
            self.notes.append(f"trigger {name}: its function sets search_path={program.search_path}: its statements "
                              "are probed under the session's search_path")

    def _trigger_events(self, timing: TriggerTiming, level: TriggerLevel, row: Mapping[str, str | None],
                        row_no: int) -> list[ExtraLock | SpiCall]:
        out: list[ExtraLock | SpiCall] = []
        for firing, program in self.triggers:
            if firing.timing is timing and firing.level is level and not firing.deferred:
                out += self._calls(firing, program, row, row_no)
        return out

    def _calls(self, firing: FiringTrigger, program: TriggerProgram, row: Mapping[str, str | None],
               row_no: int) -> list[ExtraLock | SpiCall]:
        """One firing's statements, in the function's text order (each an SPI plan of its own per trigger:
        ``pl_exec.c exec_prepare_plan``), with its sequences and each DML statement's own execution locks."""
        trigger = firing.trigger
        stage = Stage.ROW if firing.timing is TriggerTiming.BEFORE and firing.level is TriggerLevel.ROW \
            else Stage.AFTER_ROW
        out: list[ExtraLock | SpiCall] = []
        specials = {"tg_op": self.write.kind, "tg_when": str(firing.timing), "tg_level": str(firing.level),
                    "tg_name": trigger.tgname, "tg_table_name": _plain(self.target.relation.split(".", 1)[-1]),
                    "tg_table_schema": _plain(self.target.relation.split(".", 1)[0])}
        for n, st in enumerate(program.statements):
            if plpgsql.guards_hold(st.guards, specials) is False:
                continue  # a branch of the function that does not run for this event (IF TG_OP = ...)
            values = tuple(self._param_value(p, row, specials) for p in st.params)
            query = SpiQuery(f"trg_{trigger.trigger_oid}_{n}", st.sql, tuple(t or "unknown" for t in st.param_types),
                             LockSource.TRIGGER, f"{trigger.tgname} line {st.line}")
            out.append(SpiCall(query, values, stage, row_no))
            if st.sequences:
                out += [ExtraLock(r.relation_oid, LockMode.ROW_EXCLUSIVE, LockSource.SEQUENCE, trigger.tgname, stage,
                                  row_no) for r in self.session.query_rows("exec_relations", OrdinalOidRow,
                                                                            [list(st.sequences)])
                        if r.relation_oid is not None]
            if st.command in ("INSERT", "UPDATE", "DELETE"):
                out += self.nested(st.sql, values)
        return out

    def _param_value(self, param: TriggerParam, row: Mapping[str, str | None],
                     specials: Mapping[str, str]) -> str | None:
        """A ``NEW.col`` / ``OLD.col`` parameter's value from the row (or the key the statement looks up), a
        trigger variable's (``TG_OP`` ...), else None (unknown: NULL)."""
        if param.origin is ParamOrigin.SPECIAL:
            return specials.get(param.variable)
        if param.origin is not ParamOrigin.ROW_COLUMN:
            return None
        record, _, column = param.variable.partition(".")
        value = row.get(column, _UNKNOWN) if record == "new" else self.write.where.get(column, _UNKNOWN)
        if value in (_UNKNOWN, _DEFAULT):  # a typical value of the column: the probe then costs like a real one
            return self.sample(self.target.relation_oid, column)
        return value


class _Deriver(_ForeignKeys, _Triggers):
    """The catalog facts of one write and the events they give (:func:`derive_execution`); a statement a trigger or
    a foreign-key action runs is derived by a nested one (``depth`` + 1, at most :data:`MAX_DEPTH`)."""

    def __init__(self, session: Session, write: _Write, raw: Mapping[str, Any], depth: int = 0) -> None:
        self.session = session
        self.write = write
        self.raw = raw
        self.depth = depth
        self.version = session.facts.server_version_num
        self.target = session.query_rows("exec_target", ExecTargetRow, [write.target])[0]
        self.columns = session.query_rows("exec_columns", ExecColumnRow, [write.target])
        self.fkeys = session.query_rows("exec_foreign_keys", ExecForeignKeyRow, [write.target] * 3)
        self.notes: list[str] = []
        self._samples: dict[tuple[int, str], str | None] = {}
        if write.kind == "INSERT":  # a column the INSERT does not give takes its default: NULL without one
            defaults = {c.name: _UNKNOWN if c.has_default or c.generated else None for c in self.columns}
            self.write = dataclasses.replace(write, rows=tuple({**defaults, **row} for row in write.rows))
        self.triggers = self._read_triggers()

    def events(self) -> list[ExtraLock | SpiCall]:
        """Every event in acquisition order: BEFORE STATEMENT triggers; per row the row's locks (sequences, the
        target's indexes at the first row, BEFORE ROW triggers, routing, TOAST); then per row its AFTER ROW
        triggers, foreign-key checks and actions among them, in name order; AFTER STATEMENT triggers; then the
        release of the target's indexes (``execMain.c standard_ExecutorEnd`` after ``AfterTriggerEndQuery``)."""
        write, target = self.write, self.target
        if not write.known_rows:
            self.notes.append(f"the rows an {write.kind} produces are known only when it runs: one row is assumed")
        opened = write.kind in ("INSERT", "UPDATE") and target.relkind != "p"
        indexes = [ExtraLock(i, LockMode.ROW_EXCLUSIVE, LockSource.TARGET_INDEX, target.relation,
                             Stage.EXECUTOR_START if self.version < PG14 else Stage.ROW) for i in target.index_oids]
        out: list[ExtraLock | SpiCall] = list(indexes) if opened and self.version < PG14 else []
        out += self._trigger_events(TriggerTiming.BEFORE, TriggerLevel.STATEMENT, {}, 0)
        for row_no, row in enumerate(write.rows):
            out += _sequence_locks(self.session, write, self.columns, row, row_no, self.raw)
            if opened and self.version >= PG14 and row_no == 0:
                out += indexes  # nodeModifyTable.c: ExecOpenIndices at the first row (PG 14+, c5b7ba4e67)
            out += self._trigger_events(TriggerTiming.BEFORE, TriggerLevel.ROW, row, row_no)
            if target.relkind == "p" and write.kind in ("INSERT", "UPDATE"):
                out += self._routing(row, row_no)
            out += self._toast(row, row_no)
        for row_no, row in enumerate(write.rows):
            out += self._after_row(row, row_no)
        out += self._trigger_events(TriggerTiming.AFTER, TriggerLevel.STATEMENT, {}, 0)
        if opened:
            out += [ExtraLock(i, LockMode.ROW_EXCLUSIVE, LockSource.TARGET_INDEX, target.relation, Stage.END,
                              release=True) for i in target.index_oids]
        return out

    def _after_row(self, row: Mapping[str, str | None], row_no: int) -> list[ExtraLock | SpiCall]:
        """One row's AFTER ROW triggers in name order (``trigger.c`` fires a table's triggers sorted by name): the
        foreign-key triggers are named ``RI_ConstraintTrigger_a_<oid>`` (actions) and ``_c_<oid>`` (checks)."""
        named: list[tuple[tuple[str, int], list[ExtraLock | SpiCall]]] = []
        for fk in self.fkeys:
            events = self._foreign_key(fk, row, row_no)
            if events:
                prefix = "RI_ConstraintTrigger_a_" if fk.pk_oid == self.write.target else "RI_ConstraintTrigger_c_"
                named.append(((prefix, fk.constraint_oid), events))
        for firing, program in self.triggers:
            if firing.timing is TriggerTiming.AFTER and firing.level is TriggerLevel.ROW:
                named.append(((firing.trigger.tgname, 0), self._calls(firing, program, row, row_no)))
        return [e for _, events in sorted(named, key=lambda n: n[0]) for e in events]

    def nested(self, text: str, values: Sequence[str | None], rows: int = 1) -> list[ExtraLock | SpiCall]:
        """The execution locks of a statement a trigger or an action runs (its own triggers, foreign keys,
        sequences: a nested derivation), ``rows`` times; nothing past :data:`MAX_DEPTH` (said in a note)."""
        if self.depth >= MAX_DEPTH:
            self.notes.append(f"statements nested more than {MAX_DEPTH} deep (triggers of triggers) are not derived")
            return []
        checked = check_statement(text)
        raw = raw_statement(checked)
        target = target_relation(self.session, raw)
        write = _read_write(checked.kind, raw, [_UNKNOWN if v is None else v for v in values],
                            target) if target is not None else None
        if write is None:
            return []
        child = _Deriver(self.session, write, raw, self.depth + 1)
        events = child.events() * max(1, rows)
        self.notes += child.notes
        return events

    def sample(self, relation_oid: int, column: str) -> str | None:
        """A typical value of a column from the planner's statistics (``exec_column_samples.sql``), None without."""
        key = (relation_oid, column)
        if key not in self._samples:
            rows = self.session.query_rows("exec_column_samples", OrdinalValueRow, [[relation_oid], [column]])
            self._samples[key] = rows[0].value if rows else None
        return self._samples[key]

    def _routing(self, row: Mapping[str, str | None], row_no: int) -> list[ExtraLock]:
        """An INSERT's row: the partition it is routed to and the sub-partitioned tables on the way
        (``execPartition.c ExecFindPartition``), and on PG 13 the ancestors its partition constraint is read from.
        An UPDATE's row that its new key moves to another partition (``nodeModifyTable.c
        ExecCrossPartitionUpdate``): that partition, and the source partition's ancestors (the constraint check,
        every major), unless the partition is one of the plan's result relations (:func:`_moved_row_locks`)."""
        target, write = self.target, self.write
        if write.kind == "UPDATE":
            keys = {_plain(k) for k in target.partition_key_columns or []}
            if not keys & write.given:
                return []
            row = {**write.where, **row}
        path = route_row(self.session, target, row, self.notes)
        if not path:
            return []
        source = LockSource.ROUTING
        out = [ExtraLock(oid, LockMode.ROW_EXCLUSIVE, source, target.relation, Stage.ROW, row_no) for oid in path]
        ancestors = [target.relation_oid, *path[:-1]]
        if write.kind == "UPDATE" or self.version < PG14:
            out += [ExtraLock(oid, LockMode.ACCESS_SHARE, LockSource.PARTITION_CONSTRAINT, target.relation,
                              Stage.ROW, row_no, first_execution_only=True) for oid in ancestors]
        leaf = self.session.query_rows("exec_target", ExecTargetRow, [path[-1]])[0]
        out += [ExtraLock(i, LockMode.ROW_EXCLUSIVE, LockSource.TARGET_INDEX, leaf.relation, Stage.ROW, row_no)
                for i in leaf.index_oids]
        out += [ExtraLock(i, LockMode.ROW_EXCLUSIVE, LockSource.TARGET_INDEX, leaf.relation, Stage.END, row_no,
                          release=True) for i in leaf.index_oids]
        return out

    def _toast(self, row: Mapping[str, str | None], row_no: int) -> list[ExtraLock]:
        if self.target.toast_oid is not None and any(v == _UNKNOWN for c, v in row.items()
                                                     if c in self.write.given):
            self.notes.append(f"{self.target.relation}: a value computed when the row is written may be stored out "
                              "of line (TOAST: 2 more locks): not derived")
        return _toast_locks(self.target, row, row_no)


def describe_json(model: ExecutionModel) -> str:
    """The model as one JSON text (for debugging and the tests' messages)."""
    return json.dumps([{"source": str(e.query.source if isinstance(e, SpiCall) else e.source),
                        "what": e.query.text if isinstance(e, SpiCall) else e.relation_oid,
                        "stage": int(e.stage), "row": e.row} for e in model.events])
