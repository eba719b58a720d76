"""The statement's rewritten query tree, built on the client from PostgreSQL's own parser and the catalog.

The acquisition-order model (:mod:`lockscope.acquisition`) reads a rewritten ``Query``: range tables in parser
order with relation OIDs and lock modes, views expanded, CTEs with reference counts, sublinks with the variables
they use, join trees. The server can print that tree (``debug_print_rewritten``), but only into its log as well
(a LOG message is written to the server log at every default ``log_min_messages``), with the statement's
literals in it — so lockscope never asks for it on a user's server. This module builds the same tree here:

- the **raw parse tree** from libpg_query (pglast): the grammar of the server (``gram.y``), no server involved;
- **parse analysis** re-done for what the order model reads (``parser/analyze.c transformSelectStmt``,
  ``transformInsertStmt``, ``transformUpdateStmt``, ``transformDeleteStmt``, ``parse_merge.c transformMergeStmt``,
  ``parse_clause.c transformFromClauseItem``, ``parse_cte.c transformWithClause``, ``parse_relation.c
  colNameToVar`` / ``refnameNamespaceItem`` for column references, ``parse_func.c`` for aggregates, window and
  set-returning functions): names are resolved with the server's own ``to_regclass`` under the session's
  ``search_path`` (no lock taken: ``regclass.c to_regclass`` passes ``NoLock``);
- the **rewriter's view expansion** (``rewriteHandler.c fireRIRrules`` → ``ApplyRetrieveRule``): a view's stored
  query comes from ``pg_rewrite.ev_action`` (the same node text the server expands, read into typed nodes by
  :func:`lockscope.pgnodes.query_from_dump`), views nested in it too.

The result is made of the typed nodes of :mod:`lockscope.querynodes` (the analyser builds them directly: the raw
parse tree's enum names become the headers' enums here, once), the same nodes the server's own tree is normalised
into, so one model serves both. What this module cannot reproduce raises :class:`TreeUnsupported` (the footprint
then orders by the catalog and labels every lock ``order_rule: unknown``): row-level security, DML on a view or on
a table with rules, locking clauses pushed into subqueries, table functions the grammar leaves to the server.

The tree is checked against the server's own (``debug_print_rewritten`` on scratch servers only) in
``tests/test_acquisition_order.py``: same lock steps for every statement of the order corpus, PG 13 to 19.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from .pgnodes import NodeDumpError, parse_node_dump, query_from_dump
from .querynodes import (
    BoolExpr,
    BoolExprType,
    CmdType,
    CommonTableExpr,
    CTEMaterialize,
    Expression,
    FromExpr,
    FunctionRef,
    JoinExpr,
    JoinTreeNode,
    JoinType,
    LevelExpr,
    MergeAction,
    MergeMatchKind,
    Node,
    OnConflictExpr,
    OtherExpr,
    Query,
    RangeTblEntry,
    RangeTblRef,
    RTEKind,
    SetOperation,
    SetOperationStmt,
    SubLink,
    SubLinkType,
    Var,
    children,
    lock_mode_number,
    map_level_sublinks,
    nodes_in,
    walk,
)
from .rows import OrderFunctionRow, OrderRelationRow, RowT, ViewRuleRow
from .versions import PG16, PG17

__all__ = [
    "CatalogLookup",
    "FunctionInfo",
    "NamedRelation",
    "QueryRunner",
    "QueryTree",
    "TreeUnsupported",
    "UnknownRelation",
    "build_query_tree",
    "function_names",
    "gather_lookup",
    "has_sublinks",
    "relation_names",
    "view_query_from_ev_action",
]

# lockdefs.h: the lock modes parse analysis gives range-table entries (parse_relation.c addRangeTableEntry).
_ACCESS_SHARE = lock_mode_number("AccessShareLock")
_ROW_SHARE = lock_mode_number("RowShareLock")
_ROW_EXCLUSIVE = lock_mode_number("RowExclusiveLock")
#: The join types the grammar makes (``gram.y join_type``).
_PARSER_JOIN_TYPES = frozenset({JoinType.JOIN_INNER, JoinType.JOIN_LEFT, JoinType.JOIN_FULL, JoinType.JOIN_RIGHT})
#: Columns every table has (``heap.c SystemAttributeByName``).
_SYSTEM_COLUMNS = frozenset({"ctid", "xmin", "xmax", "cmin", "cmax", "tableoid"})


class TreeUnsupported(Exception):
    """The statement uses something whose parse analysis lockscope does not reproduce (the reason is the text)."""


class UnknownRelation(TreeUnsupported):
    """A relation the statement names does not exist under the session's ``search_path`` (and is no CTE name):
    the server would refuse the statement (SQLSTATE 42P01); ``name`` is the name as written."""

    def __init__(self, name: str):
        super().__init__(f'relation "{name}" does not exist')
        self.name = name


@dataclass(frozen=True)
class NamedRelation:
    """A relation a statement names, as its name resolved in the catalog: what parse analysis needs of it.

    :ivar oid: pg_class OID.
    :ivar relkind: pg_class.relkind.
    :ivar columns: attribute names in attnum order (dropped columns left out).
    :ivar security_barrier: a view with ``security_barrier`` (``RelationIsSecurityView``).
    :ivar row_security: ``relrowsecurity``: policies may add quals (and their sublinks) in the rewriter.
    :ivar has_rules: rules other than a view's ``_RETURN`` rule (``relhasrules`` on a table).
    """

    oid: int
    relkind: str
    columns: tuple[str, ...] = ()
    security_barrier: bool = False
    row_security: bool = False
    has_rules: bool = False


@dataclass(frozen=True)
class FunctionInfo:
    """What parse analysis needs of a function name (all visible candidates of that name together).

    :ivar volatile: True when a candidate is volatile (``provolatile = 'v'``): decides pull-ups and inlining.
    :ivar aggregate: a candidate is an aggregate (``prokind = 'a'``): the query level gets ``hasAggs``.
    :ivar window: a candidate is a window function (``prokind = 'w'``).
    :ivar returns_set: a candidate returns a set (``proretset``): ``hasTargetSRFs`` in a target list.
    """

    volatile: bool = False
    aggregate: bool = False
    window: bool = False
    returns_set: bool = False


@dataclass(frozen=True)
class CatalogLookup:
    """The catalog answers parse analysis needs, gathered before the tree is built (:func:`gather_lookup`).

    :ivar relations: by ``(schema or None, name)`` as written (identifiers already case-folded by the grammar);
        None for a name that does not resolve.
    :ivar functions: by lower-case function name (schema ignored: the facts of all visible candidates).
    :ivar views: view OID → its stored query (``pg_rewrite.ev_action``, as typed nodes).
    :ivar server_version_num: shapes that changed between majors (PG 16 view entries, PG 17 MERGE fields).
    :ivar view_security_barrier: OIDs of the views with ``security_barrier``.
    """

    relations: Mapping[tuple[str | None, str], NamedRelation | None]
    functions: Mapping[str, FunctionInfo]
    views: Mapping[int, Query]
    server_version_num: int
    view_security_barrier: frozenset[int] = frozenset()


# -- collecting the names to resolve --------------------------------------------------------------------------

def _walk_raw(node: Any, visit: Callable[[str, dict[str, Any]], None]) -> None:
    """Every raw node (``{"TypeName": {...}}`` form) of a libpg_query JSON tree, depth first."""
    stack: list[Any] = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, value in item.items():
                if isinstance(value, dict) and key[:1].isupper():
                    visit(key, value)
                elif key == "relation" and isinstance(value, dict) and "relname" in value:
                    visit("RangeVar", value)  # a DML target: a RangeVar pointer, not a wrapped node
                stack.append(value)
        elif isinstance(item, list):
            stack.extend(item)


def relation_names(raw: Mapping[str, Any]) -> list[tuple[str | None, str]]:
    """Every ``RangeVar`` of the raw tree as ``(schema or None, name)``, distinct (CTE names included: they are
    told apart during analysis)."""
    found: list[tuple[str | None, str]] = []

    def visit(kind: str, body: dict[str, Any]) -> None:
        if kind == "RangeVar" and "relname" in body:
            found.append((body.get("schemaname"), str(body["relname"])))

    _walk_raw(raw, visit)
    return list(dict.fromkeys(found))


def function_names(raw: Mapping[str, Any]) -> list[str]:
    """Every called function's name (last element of ``FuncCall.funcname``), lower-case, distinct."""
    found: list[str] = []

    def visit(kind: str, body: dict[str, Any]) -> None:
        if kind == "FuncCall":
            names = [_sval(n) for n in body.get("funcname", [])]
            if names:
                found.append(names[-1].lower())

    _walk_raw(raw, visit)
    return list(dict.fromkeys(found))


@functools.lru_cache(maxsize=256)
def view_query_from_ev_action(text: str) -> Query:
    """The stored query of a view: ``pg_rewrite.ev_action`` of its ``_RETURN`` rule (a one-element list of Query),
    as typed nodes. Cached by text (the nodes are immutable).

    :raises TreeUnsupported: the text is not a node dump holding a Query lockscope can read.
    """
    try:
        tree = parse_node_dump(text)
        queries = [q for q in (tree if isinstance(tree, list) else [tree]) if isinstance(q, dict)]
        if not queries or queries[0].get("node") != "QUERY":
            raise TreeUnsupported("a view's stored query is not a Query")
        return query_from_dump(queries[0])
    except NodeDumpError as exc:
        raise TreeUnsupported(f"a view's stored query cannot be read: {exc}") from None


def _sval(node: Any) -> str:
    if isinstance(node, dict):
        inner = node.get("String")
        if isinstance(inner, dict):
            return str(inner.get("sval", ""))
    return ""


def _one(node: Any) -> tuple[str, dict[str, Any]]:
    """``{"Kind": {...}}`` → ("Kind", {...})."""
    if isinstance(node, dict) and len(node) == 1:
        ((kind, body),) = node.items()
        if isinstance(body, dict):
            return kind, body
    raise TreeUnsupported(f"unexpected raw node {str(node)[:60]}")


# -- parse state ----------------------------------------------------------------------------------------------

@dataclass
class _NSItem:
    """A namespace item (``ParseNamespaceItem``): a range-table entry as names see it.

    ``columns`` maps a visible column name to the varno a reference to it gets (``p_nscolumns``: a join's columns
    point at the base relations' entries, a merged USING column of a FULL join at the join itself).
    """

    refname: str | None
    rtindex: int
    columns: list[tuple[str, int]]
    rel_visible: bool = True
    cols_visible: bool = True
    lateral_only: bool = False
    schema: str | None = None


@dataclass
class _CTE:
    """A WITH query while its level is analysed (``CommonTableExpr``): references are counted as they are met."""

    name: str
    materialized: CTEMaterialize
    columns: list[str] = field(default_factory=list)
    recursive_self: bool = False
    refcount: int = 0
    query: Query | None = None

    def node(self) -> CommonTableExpr:
        if self.query is None:
            raise TreeUnsupported(f'WITH query "{self.name}" used before it is analysed')
        return CommonTableExpr(self.name, self.materialized, self.recursive_self, self.refcount, self.query)


@dataclass
class _State:
    """One query level being analysed (``ParseState``)."""

    parent: _State | None
    rtable: list[RangeTblEntry] = field(default_factory=list)
    namespace: list[_NSItem] = field(default_factory=list)
    ctes: dict[str, _CTE] = field(default_factory=dict)
    lateral_active: bool = False
    locked_all: bool = False
    locked_names: frozenset[str] = frozenset()
    locked_from_parent: bool = False
    has_aggs: bool = False
    has_window: bool = False
    has_target_srfs: bool = False
    has_recursive: bool = False
    in_target_list: bool = False
    recursive_cte: str | None = None
    joinlist: list[JoinTreeNode] = field(default_factory=list)


# -- the analyzer -------------------------------------------------------------------------------------------------

class _Analyzer:
    def __init__(self, lookup: CatalogLookup):
        self.lookup = lookup
        self.version = lookup.server_version_num
        self.uncertain: list[str] = []
        self._fake_funcids: dict[str, int] = {}

    # statements ---------------------------------------------------------------------------------------------
    def statement(self, kind: str, body: dict[str, Any], parent: _State | None) -> Query:
        if kind == "SelectStmt":
            return self.select(body, parent)
        if kind == "InsertStmt":
            return self.insert(body, parent)
        if kind == "UpdateStmt":
            return self.update(body, parent)
        if kind == "DeleteStmt":
            return self.delete(body, parent)
        if kind == "MergeStmt":
            return self.merge(body, parent)
        raise TreeUnsupported(f"{kind} is not a statement lockscope orders")

    @staticmethod
    def _query(state: _State, cmd: CmdType, **fields: Any) -> Query:
        """The analysed level: its range table, WITH queries and ``has*`` flags from ``state``, the rest from
        ``fields`` (:class:`~lockscope.querynodes.Query` field names)."""
        return Query(command_type=cmd, rtable=tuple(state.rtable),
                     cte_list=tuple(c.node() for c in state.ctes.values()), has_aggs=state.has_aggs,
                     has_window_funcs=state.has_window, has_target_srfs=state.has_target_srfs,
                     has_recursive=state.has_recursive, **fields)

    def select(self, body: dict[str, Any], parent: _State | None, *, locked_from_parent: bool = False,
               cte_state: _State | None = None) -> Query:
        state = cte_state or _State(parent)
        state.locked_from_parent = locked_from_parent
        if body.get("withClause") and cte_state is None:
            self.with_clause(body["withClause"], state)
        if body.get("op", "SETOP_NONE") != "SETOP_NONE":
            return self.set_operation(body, state)
        if body.get("valuesLists"):
            return self.values_select(body, state)
        if body.get("intoClause"):
            raise TreeUnsupported("SELECT INTO")
        self._locking(body.get("lockingClause"), state)
        self.from_clause(body.get("fromClause") or [], state)
        state.in_target_list = True
        target = self.target_list(body.get("targetList") or [], state)
        state.in_target_list = False
        where = self.expr(body.get("whereClause"), state)
        having = self.expr(body.get("havingClause"), state)
        # ORDER BY / GROUP BY / DISTINCT ON expressions become resjunk target entries (parse_clause.c
        # findTargetlistEntrySQL99); only what they add to the tree matters here.
        extra: list[Expression] = []
        for key in ("sortClause", "groupClause", "distinctClause", "windowClause"):
            for item in body.get(key) or []:
                if _raw_has(item, "SubLink"):
                    extra.extend(self.exprs([item], state))
        limit_offset = self.expr(body.get("limitOffset"), state)
        limit_count = self.expr(body.get("limitCount"), state)
        return self._query(
            state, CmdType.CMD_SELECT, jointree=FromExpr(tuple(state.joinlist), where),
            target_list=(*target, *extra), having_qual=having, limit_offset=limit_offset, limit_count=limit_count,
            has_group_clause=bool(body.get("groupClause")), has_sort_clause=bool(body.get("sortClause")),
            has_distinct_clause=bool(body.get("distinctClause")), has_for_update=bool(body.get("lockingClause")))

    def values_select(self, body: dict[str, Any], state: _State) -> Query:
        """``VALUES (...), (...)`` as a statement: one RTE_VALUES (``transformValuesClause``)."""
        rows = tuple(self.exprs(_list_items(row), state) for row in body["valuesLists"])
        width = len(_list_items(body["valuesLists"][0]))
        state.rtable.append(RangeTblEntry(RTEKind.RTE_VALUES, values_lists=rows))
        idx = len(state.rtable)
        limit_offset = self.expr(body.get("limitOffset"), state)
        limit_count = self.expr(body.get("limitCount"), state)
        return self._query(state, CmdType.CMD_SELECT, jointree=FromExpr((RangeTblRef(idx),)),
                           target_list=tuple(Var(idx) for _ in range(width)), limit_offset=limit_offset,
                           limit_count=limit_count, has_sort_clause=bool(body.get("sortClause")))

    def set_operation(self, body: dict[str, Any], state: _State) -> Query:
        """``transformSetOperationStmt``: the leaves become subquery RTEs, left to right."""
        self._locking(body.get("lockingClause"), state)
        if body.get("lockingClause"):
            raise TreeUnsupported("a locking clause on a set operation")

        def leaf(node: dict[str, Any]) -> RangeTblRef | SetOperationStmt:
            # transformSetOperationTree: a set operation with its own WITH/ORDER BY/LIMIT/locking is a leaf
            if node.get("op", "SETOP_NONE") != "SETOP_NONE" and not node.get("withClause") and \
                    not node.get("sortClause") and not node.get("limitCount") and not node.get("limitOffset") \
                    and not node.get("lockingClause"):
                return SetOperationStmt(SetOperation[str(node["op"])], bool(node.get("all")), leaf(node["larg"]),
                                        leaf(node["rarg"]))
            sub = self.select(node, state)
            n = len(state.rtable) + 1
            state.rtable.append(RangeTblEntry(RTEKind.RTE_SUBQUERY, subquery=sub, eref_name=f"*SELECT* {n}"))
            return RangeTblRef(n)

        tree = SetOperationStmt(SetOperation[str(body["op"])], bool(body.get("all")), leaf(body["larg"]),
                                leaf(body["rarg"]))
        limit_offset = self.expr(body.get("limitOffset"), state)
        limit_count = self.expr(body.get("limitCount"), state)
        return self._query(state, CmdType.CMD_SELECT, set_operations=tree, limit_offset=limit_offset,
                           limit_count=limit_count, has_sort_clause=bool(body.get("sortClause")))

    def _target_relation(self, rv: dict[str, Any], state: _State, *, inh: bool, source: bool) -> int:
        """``parse_clause.c setTargetTable``: the DML target, RowExclusiveLock, first in the range table."""
        info = self._relation(rv)
        if info.relkind == "v":
            raise TreeUnsupported("DML on a view (rewriteHandler.c rewriteTargetView)")
        if info.has_rules:
            raise TreeUnsupported("DML on a table with rules (rewriteHandler.c RewriteQuery)")
        if info.row_security:
            raise TreeUnsupported("row-level security on a target table")
        alias = rv.get("alias", {}).get("aliasname") if rv.get("alias") else None
        refname = alias or rv["relname"]
        state.rtable.append(self._relation_rte(info, _ROW_EXCLUSIVE, inh, refname))
        idx = len(state.rtable)
        if source:
            state.namespace.append(_NSItem(refname, idx, [(c, idx) for c in info.columns],
                                           schema=None if alias else rv.get("schemaname")))
            state.joinlist.append(RangeTblRef(idx))
        return idx

    def insert(self, body: dict[str, Any], parent: _State | None) -> Query:
        """``analyze.c transformInsertStmt``."""
        state = _State(parent)
        if body.get("withClause"):
            self.with_clause(body["withClause"], state)
        rv = body["relation"]
        result = self._target_relation(rv, state, inh=False, source=False)
        target, joinlist = self._insert_source(body.get("selectStmt"), state)
        on_conflict = None
        if body.get("onConflictClause"):
            on_conflict = self.on_conflict(body["onConflictClause"], state, result)
        info = self._relation(rv)
        alias = rv.get("alias", {}).get("aliasname") if rv.get("alias") else None
        state.namespace = [_NSItem(alias or rv["relname"], result, [(c, result) for c in info.columns])]
        returning = self.target_list(_returning(body), state)
        return self._query(state, CmdType.CMD_INSERT, result_relation=result, jointree=FromExpr(tuple(joinlist)),
                           target_list=target, on_conflict=on_conflict, returning_list=returning)

    def _insert_source(self, select: Any, state: _State) -> tuple[tuple[Expression, ...], list[JoinTreeNode]]:
        """INSERT's rows (``transformInsertStmt``): one VALUES row is the target list itself; several rows are an
        RTE_VALUES, a query an RTE_SUBQUERY (both in the join list). Returns the target list and the join list."""
        if select is None:
            return (), []
        sel = select["SelectStmt"]
        rows = sel.get("valuesLists")
        plain = not sel.get("withClause") and not sel.get("sortClause") and not sel.get("limitCount") \
            and not sel.get("limitOffset")
        if rows and len(rows) == 1 and plain:
            return self.exprs(_list_items(rows[0]), state), []
        if rows and plain:
            values = tuple(self.exprs(_list_items(row), state) for row in rows)
            state.rtable.append(RangeTblEntry(RTEKind.RTE_VALUES, values_lists=values))
            idx = len(state.rtable)
            return tuple(Var(idx) for _ in _list_items(rows[0])), [RangeTblRef(idx)]
        sub = self.select(sel, state)
        state.rtable.append(RangeTblEntry(RTEKind.RTE_SUBQUERY, subquery=sub))
        idx = len(state.rtable)
        return (Var(idx),), [RangeTblRef(idx)]

    def on_conflict(self, body: dict[str, Any], state: _State, result: int) -> OnConflictExpr:
        """``transformOnConflictClause``: DO UPDATE adds the ``excluded`` pseudo-relation to the range table.

        A named constraint (``ON CONSTRAINT``) is not looked up: its ``constraint_oid`` is -1."""
        arbiter_elems: tuple[Expression, ...] = ()
        arbiter_where = None
        constraint = 0
        infer = body.get("infer")
        if infer:  # transformOnConflictArbiter: the conflict target (index elements or a constraint)
            arbiter_elems = tuple(OtherExpr("INFERENCEELEM") for _ in infer.get("indexElems") or [])
            constraint = -1 if infer.get("conname") else 0
            arbiter_where = self.expr(infer.get("whereClause"), state)
        on_set: tuple[Expression, ...] = ()
        on_where = None
        if body.get("action") == "ONCONFLICT_UPDATE":
            target_rte = state.rtable[result - 1]
            state.rtable.append(dataclasses.replace(target_rte, rellockmode=_ROW_EXCLUSIVE, inh=False,
                                                    eref_name="excluded"))
            ex_idx = len(state.rtable)
            cols = target_rte.colnames
            saved = state.namespace
            state.namespace = [_NSItem(target_rte.eref_name, result, [(c, result) for c in cols]),
                               _NSItem("excluded", ex_idx, [(c, ex_idx) for c in cols])]
            on_set = self.target_list(body.get("targetList") or [], state, set_list=True)
            on_where = self.expr(body.get("whereClause"), state)
            state.namespace = saved
        return OnConflictExpr(arbiter_elems, arbiter_where, constraint, on_set, on_where)

    def update(self, body: dict[str, Any], parent: _State | None) -> Query:
        """``analyze.c transformUpdateStmt``: target, FROM, WHERE, RETURNING, then the SET list."""
        state = _State(parent)
        if body.get("withClause"):
            self.with_clause(body["withClause"], state)
        rv = body["relation"]
        result = self._target_relation(rv, state, inh=bool(rv.get("inh")), source=True)
        self.from_clause(body.get("fromClause") or [], state)
        where = self.expr(body.get("whereClause"), state)
        returning = self.target_list(_returning(body), state)
        target = self.target_list(body.get("targetList") or [], state, set_list=True)
        return self._query(state, CmdType.CMD_UPDATE, result_relation=result,
                           jointree=FromExpr(tuple(state.joinlist), where), target_list=target,
                           returning_list=returning)

    def delete(self, body: dict[str, Any], parent: _State | None) -> Query:
        """``analyze.c transformDeleteStmt``: target, USING, WHERE, RETURNING."""
        state = _State(parent)
        if body.get("withClause"):
            self.with_clause(body["withClause"], state)
        rv = body["relation"]
        result = self._target_relation(rv, state, inh=bool(rv.get("inh")), source=True)
        self.from_clause(body.get("usingClause") or [], state)
        where = self.expr(body.get("whereClause"), state)
        returning = self.target_list(_returning(body), state)
        return self._query(state, CmdType.CMD_DELETE, result_relation=result,
                           jointree=FromExpr(tuple(state.joinlist), where), returning_list=returning)

    def merge(self, body: dict[str, Any], parent: _State | None) -> Query:
        """``parse_merge.c transformMergeStmt``: target (not in the join list), source, join condition, actions.

        The join of target and source is made by the planner (``prepjointree.c transform_MERGE_to_join``); the
        join condition is ``mergeJoinCondition`` from PG 17 on, the join tree's quals before.
        """
        state = _State(parent)
        if body.get("withClause"):
            self.with_clause(body["withClause"], state)
        rv = body["relation"]
        result = self._target_relation(rv, state, inh=bool(rv.get("inh")), source=False)
        self.from_clause([body["sourceRelation"]], state)
        info = self._relation(rv)
        alias = rv.get("alias", {}).get("aliasname") if rv.get("alias") else None
        state.namespace.append(_NSItem(alias or rv["relname"], result, [(c, result) for c in info.columns]))
        condition = self.expr(body.get("joinCondition"), state)
        actions = tuple(self._merge_action(_one(clause)[1], state) for clause in body.get("mergeWhenClauses") or [])
        returning = self.target_list(_returning(body), state)
        if self.version >= PG17:
            return self._query(state, CmdType.CMD_MERGE, result_relation=result,
                               jointree=FromExpr(tuple(state.joinlist)), returning_list=returning,
                               merge_action_list=actions, merge_join_condition=condition)
        return self._query(state, CmdType.CMD_MERGE, result_relation=result,
                           jointree=FromExpr(tuple(state.joinlist), condition), returning_list=returning,
                           merge_action_list=actions)

    def _merge_action(self, mw: dict[str, Any], state: _State) -> MergeAction:
        """One WHEN clause (``transformMergeStmt``): its condition, then its VALUES, then its SET list. PG 15-16
        tell only MATCHED from NOT MATCHED (``MergeAction.matched``)."""
        kind = MergeMatchKind.__members__.get(str(mw.get("matchKind")), MergeMatchKind.MERGE_WHEN_MATCHED)
        if self.version < PG17 and kind != MergeMatchKind.MERGE_WHEN_MATCHED:
            kind = MergeMatchKind.MERGE_WHEN_NOT_MATCHED_BY_TARGET
        qual = self.expr(mw.get("condition"), state)
        values = self.exprs(mw.get("values") or [], state)
        return MergeAction(kind, qual, (*self.target_list(mw.get("targetList") or [], state, set_list=True), *values))

    # WITH ----------------------------------------------------------------------------------------------------
    def with_clause(self, body: dict[str, Any], state: _State) -> None:
        """``parse_cte.c transformWithClause``: each CTE analysed in order (earlier ones visible; all of them in
        WITH RECURSIVE, where a self-reference does not count in ``cterefcount``)."""
        recursive = bool(body.get("recursive"))
        state.has_recursive = recursive
        items = [_one(c)[1] for c in body.get("ctes") or []]
        if recursive:
            for cte in items:
                state.ctes[cte["ctename"]] = self._cte_record(cte)
        for cte in items:
            name = cte["ctename"]
            record = state.ctes.get(name) or self._cte_record(cte)
            kind, query = _one(cte["ctequery"])
            sub_state = _State(state)
            if recursive:
                sub_state.recursive_cte = name
            analysed = self.statement(kind, query, state) if kind != "SelectStmt" else \
                self.select(query, state, cte_state=self._cte_state(sub_state, query))
            record.query = analysed
            if not record.columns and kind != "SelectStmt":  # a data-modifying WITH query: its RETURNING list
                returning = query.get("returningList") or (query.get("returningClause") or {}).get("exprs") or []
                record.columns = self._raw_target_names({"targetList": returning}, analysed)
            if not record.columns:
                record.columns = self._output_columns(analysed, query)
            state.ctes[name] = record

    def _cte_state(self, sub_state: _State, query: dict[str, Any]) -> _State:
        if query.get("withClause"):
            self.with_clause(query["withClause"], sub_state)
        return sub_state

    @staticmethod
    def _cte_record(cte: dict[str, Any]) -> _CTE:
        materialized = CTEMaterialize.__members__.get(str(cte.get("ctematerialized")),
                                                      CTEMaterialize.CTEMaterializeDefault)
        return _CTE(cte["ctename"], materialized, [_sval(c) for c in cte.get("aliascolnames") or []])

    # FROM ----------------------------------------------------------------------------------------------------
    def from_clause(self, items: Sequence[Any], state: _State) -> None:
        """``parse_clause.c transformFromClause``: items left to right; each visible to LATERAL items after it,
        all visible to the rest of the statement once the FROM list is done."""
        for item in items:
            node, ns = self.from_item(item, state)
            for n in ns:
                n.lateral_only = True
            state.namespace.extend(ns)
            state.joinlist.append(node)
        for n in state.namespace:
            n.lateral_only = False

    def from_item(self, item: Any, state: _State) -> tuple[JoinTreeNode, list[_NSItem]]:
        """``transformFromClauseItem``: a join-tree node and the namespace items it brings."""
        kind, body = _one(item)
        if kind == "RangeVar":
            return self.range_var(body, state)
        if kind == "RangeSubselect":
            return self.range_subselect(body, state)
        if kind == "RangeFunction":
            return self.range_function(body, state)
        if kind == "JoinExpr":
            return self.join(body, state)
        if kind == "RangeTableSample":
            node, ns = self.from_item(body["relation"], state)
            return node, ns
        raise TreeUnsupported(f"FROM item {kind}")

    def range_var(self, rv: dict[str, Any], state: _State) -> tuple[JoinTreeNode, list[_NSItem]]:
        alias = rv.get("alias", {}).get("aliasname") if rv.get("alias") else None
        alias_cols = [_sval(c) for c in (rv.get("alias") or {}).get("colnames") or []]
        name = str(rv["relname"])
        if not rv.get("schemaname"):
            found = self._find_cte(name, state)
            if found is not None:
                cte, levels = found
                return self._cte_rte(cte, levels, alias or name, alias_cols, state)
        info = self._relation(rv)
        refname = alias or name
        locked = self._is_locked(refname, state)
        mode = _ROW_SHARE if locked else _ACCESS_SHARE
        if info.row_security:
            raise TreeUnsupported(f"row-level security on {name} (policies add quals in the rewriter)")
        if locked and info.relkind == "v":
            raise TreeUnsupported("FOR UPDATE/SHARE through a view")
        # JSON leaves false out: ONLY
        state.rtable.append(self._relation_rte(info, mode, bool(rv.get("inh")), refname,
                                               security_barrier=info.relkind == "v" and info.security_barrier))
        idx = len(state.rtable)
        cols = self._renamed(list(info.columns), alias_cols)
        return RangeTblRef(idx), [_NSItem(refname, idx, [(c, idx) for c in cols],
                                          schema=None if alias else rv.get("schemaname"))]

    def _cte_rte(self, cte: _CTE, levels: int, refname: str, alias_cols: list[str],
                 state: _State) -> tuple[JoinTreeNode, list[_NSItem]]:
        """``parse_relation.c addRangeTableEntryForCTE``: a reference counts unless it is the recursive one."""
        if self._is_self_reference(cte.name, state, levels):
            cte.recursive_self = True
        else:
            cte.refcount += 1
        if self._is_locked(refname, state):
            raise TreeUnsupported("FOR UPDATE/SHARE of a CTE")
        state.rtable.append(RangeTblEntry(RTEKind.RTE_CTE, ctename=cte.name, ctelevelsup=levels, eref_name=refname))
        idx = len(state.rtable)
        cols = self._renamed(list(cte.columns), alias_cols)
        return RangeTblRef(idx), [_NSItem(refname, idx, [(c, idx) for c in cols])]

    @staticmethod
    def _is_self_reference(name: str, state: _State, levels: int) -> bool:
        s: _State | None = state
        for _ in range(levels):
            if s is None:
                return False
            if s.recursive_cte == name:
                return True
            s = s.parent
        return False

    def range_subselect(self, body: dict[str, Any], state: _State) -> tuple[JoinTreeNode, list[_NSItem]]:
        """``transformRangeSubselect``: the subquery sees this level's earlier FROM items only if LATERAL."""
        alias = (body.get("alias") or {}).get("aliasname")
        alias_cols = [_sval(c) for c in (body.get("alias") or {}).get("colnames") or []]
        kind, query = _one(body["subquery"])
        if kind != "SelectStmt":
            raise TreeUnsupported(f"{kind} in FROM")
        state.lateral_active = bool(body.get("lateral"))
        sub = self.select(query, state, locked_from_parent=self._is_locked(alias, state) if alias else False)
        state.lateral_active = False
        state.rtable.append(RangeTblEntry(RTEKind.RTE_SUBQUERY, subquery=sub,
                                          eref_name=alias or "unnamed_subquery"))
        idx = len(state.rtable)
        cols = self._renamed(self._output_columns(sub, query), alias_cols)
        return RangeTblRef(idx), [_NSItem(alias, idx, [(c, idx) for c in cols])]

    def range_function(self, body: dict[str, Any], state: _State) -> tuple[JoinTreeNode, list[_NSItem]]:
        """``transformRangeFunction``: function calls in FROM (their arguments see earlier items if LATERAL)."""
        state.lateral_active = bool(body.get("lateral"))
        functions: list[Expression] = []
        names: list[str] = []
        for pair in body.get("functions") or []:
            items = _list_items(pair)
            call = items[0] if items else None
            functions.append(OtherExpr("RANGETBLFUNCTION", self.exprs([call], state)))
            if isinstance(call, dict) and "FuncCall" in call:
                names.append(_sval(call["FuncCall"]["funcname"][-1]))
        state.lateral_active = False
        alias = (body.get("alias") or {}).get("aliasname")
        alias_cols = [_sval(c) for c in (body.get("alias") or {}).get("colnames") or []]
        for coldef in body.get("coldeflist") or []:
            _k, cd = _one(coldef)
            alias_cols.append(str(cd.get("colname")))
        refname = alias or (names[0] if names else None)
        state.rtable.append(RangeTblEntry(RTEKind.RTE_FUNCTION, functions=tuple(functions), eref_name=refname))
        idx = len(state.rtable)
        cols = alias_cols or ([refname] if refname else [])
        if body.get("ordinality"):
            cols.append("ordinality")
        if not alias_cols:
            self.uncertain.append("columns of a function in FROM")
        return RangeTblRef(idx), [_NSItem(refname, idx, [(c, idx) for c in cols])]

    def join(self, body: dict[str, Any], state: _State) -> tuple[JoinTreeNode, list[_NSItem]]:
        """A JOIN: left side, right side, the ON clause (seeing both sides), then the join's own RTE."""
        larg, lns = self.from_item(body["larg"], state)
        for n in lns:
            n.lateral_only = True
        state.namespace.extend(lns)
        rarg, rns = self.from_item(body["rarg"], state)
        for n in lns:
            state.namespace.remove(n)
        jtype = JoinType.__members__.get(str(body.get("jointype", "JOIN_INNER")))
        if jtype not in _PARSER_JOIN_TYPES:
            raise TreeUnsupported(f"join type {body.get('jointype')}")
        using = [_sval(c) for c in body.get("usingClause") or []]
        if body.get("isNatural"):
            left_names = {c for n in lns if n.cols_visible for c, _ in n.columns}
            using = [c for n in rns if n.cols_visible for c, _ in n.columns if c in left_names]
            using = list(dict.fromkeys(using))
        saved = state.namespace
        for n in (*lns, *rns):
            n.lateral_only = False
        state.namespace = [*saved, *lns, *rns]
        quals = self.expr(body.get("quals"), state)
        state.namespace = saved
        state.rtable.append(RangeTblEntry(RTEKind.RTE_JOIN))
        idx = len(state.rtable)
        node = JoinExpr(jtype, larg, rarg, quals, idx)
        left_cols = [(c, v) for n in lns if n.cols_visible for c, v in n.columns]
        right_cols = [(c, v) for n in rns if n.cols_visible for c, v in n.columns]
        merged: list[tuple[str, int]] = []
        for name in using:
            lv = next((v for c, v in left_cols if c == name), idx)
            rv = next((v for c, v in right_cols if c == name), idx)
            merged.append((name, {JoinType.JOIN_INNER: lv, JoinType.JOIN_LEFT: lv, JoinType.JOIN_RIGHT: rv}
                           .get(jtype, idx)))
        rest = [(c, v) for c, v in left_cols if c not in using] + [(c, v) for c, v in right_cols if c not in using]
        alias = (body.get("alias") or {}).get("aliasname")
        join_item = _NSItem(alias, idx, merged + (rest if alias else []), rel_visible=alias is not None)
        if alias:
            return node, [join_item]
        for n in (*lns, *rns):
            if using:
                n.columns = [(c, v) for c, v in n.columns if c not in using]
        return node, [*lns, *rns, join_item]

    # target lists ----------------------------------------------------------------------------------------------
    def target_list(self, items: Sequence[Any], state: _State, *, set_list: bool = False) -> tuple[Expression, ...]:
        """The expressions of a target list (``transformTargetList``; ``*`` expanded to whole-row Vars)."""
        out: list[Expression] = []
        for item in items:
            kind, body = _one(item)
            if kind != "ResTarget":
                raise TreeUnsupported(f"target {kind}")
            value = body.get("val")
            if value is None:
                continue
            vkind, vbody = _one(value) if isinstance(value, dict) else ("", {})
            if vkind == "ColumnRef" and any("A_Star" in f for f in vbody.get("fields", [])):
                out.extend(self._star(vbody, state))
            elif vkind == "MultiAssignRef":
                if vbody.get("colno") == 1:
                    out.extend(self.exprs([vbody.get("source")], state))
            else:
                out.extend(self.exprs([value], state))
        return tuple(out)

    def _star(self, ref: dict[str, Any], state: _State) -> list[Var]:
        fields = [_sval(f) for f in ref["fields"] if "String" in f]
        if not fields:
            return [Var(n.rtindex) for n in state.namespace if n.cols_visible and not n.lateral_only]
        found = self._refname(fields[-1], state, schema=fields[0] if len(fields) > 1 else None)
        if found is None:
            self.uncertain.append(f"{'.'.join(fields)}.*")
            return []
        item, levels = found
        return [Var(item.rtindex, levels)]

    # expressions -----------------------------------------------------------------------------------------------
    def exprs(self, nodes: Iterable[Any], state: _State) -> tuple[Expression, ...]:
        """:meth:`expr` of each raw node, in order (those that are no expression left out)."""
        return tuple(e for node in nodes if (e := self.expr(node, state)) is not None)

    def expr(self, node: Any, state: _State) -> Expression | None:
        """A raw expression as the order model reads it: sublinks (with their analysed query), Vars (level and
        range-table index), function calls (volatility), boolean structure; everything else as an
        :class:`~lockscope.querynodes.OtherExpr` keeping its children in text order. None for no expression."""
        if node is None:
            return None
        if isinstance(node, list):
            return OtherExpr("LIST", self.exprs(node, state))
        if not isinstance(node, dict):
            return None
        if len(node) != 1 or not next(iter(node))[:1].isupper():
            return OtherExpr("EXPR", self.exprs([v for v in node.values() if isinstance(v, (dict, list))], state))
        kind, body = next(iter(node.items()))
        if not isinstance(body, dict):
            return None
        if kind == "ColumnRef":
            return self.column_ref(body, state)
        if kind == "SubLink":
            return self.sublink(body, state)
        if kind == "BoolExpr":
            return BoolExpr(BoolExprType[str(body.get("boolop"))], self.exprs(body.get("args") or [], state))
        if kind == "FuncCall":
            return self.func_call(body, state)
        if kind == "A_Expr":
            return self.a_expr(body, state)
        if kind in ("A_Const", "ParamRef", "SQLValueFunction", "A_Star", "String", "Integer", "Float",
                    "Boolean", "BitString", "TypeName", "SetToDefault"):
            return OtherExpr("CONST")
        if kind == "RangeSubselect" or kind.endswith("Stmt"):
            raise TreeUnsupported(f"{kind} inside an expression")
        return OtherExpr("EXPR", self.exprs([v for k, v in body.items()
                                             if isinstance(v, (dict, list)) and k not in ("typeName", "name")], state))

    def a_expr(self, body: dict[str, Any], state: _State) -> OtherExpr:
        args = self.exprs([body.get("lexpr"), body.get("rexpr")], state)
        if body.get("kind") == "AEXPR_NOT_DISTINCT" or body.get("kind") == "AEXPR_DISTINCT":
            return OtherExpr("EXPR", args)
        return OtherExpr("OPEXPR", args)

    def func_call(self, body: dict[str, Any], state: _State) -> Expression:
        """A function call: a window function, an aggregate (its query level from its arguments' Vars), or a
        plain call whose ``funcid`` stands for its name (negative, one per name: the name's catalog facts decide
        volatility, :attr:`QueryTree.volatile_functions`)."""
        names = [_sval(n) for n in body.get("funcname") or []]
        name = names[-1].lower() if names else ""
        info = self.lookup.functions.get(name, FunctionInfo())
        args = self.exprs(body.get("args") or [], state)
        order = self.exprs([_one(s)[1].get("node") for s in body.get("agg_order") or []], state)
        agg_filter = self.exprs([body.get("agg_filter")], state)
        funcid = self._fake_funcids.setdefault(name, -(len(self._fake_funcids) + 1))
        if body.get("over") is not None:
            state.has_window = True
            return OtherExpr("WINDOWFUNC", (*args, *agg_filter))
        if info.aggregate or body.get("agg_star") or body.get("agg_within_group"):
            levels = _min_levelsup((*args, *order, *agg_filter))
            target = state
            for _ in range(levels):
                target = target.parent if target.parent is not None else target
            target.has_aggs = True
            return LevelExpr("AGGREF", levels, (*args, *order, *agg_filter))
        if info.returns_set and state.in_target_list:
            state.has_target_srfs = True
        return FunctionRef(funcid, args)

    def sublink(self, body: dict[str, Any], state: _State) -> SubLink:
        """``parse_expr.c transformSubLink``: the subquery analysed one level down, then the test expression."""
        kind = SubLinkType[str(body.get("subLinkType"))]
        qkind, query = _one(body["subselect"])
        saved_target = state.in_target_list
        state.in_target_list = False
        sub = self.statement(qkind, query, state)
        state.in_target_list = saved_target
        return SubLink(kind, self.expr(body.get("testexpr"), state), sub)

    def column_ref(self, body: dict[str, Any], state: _State) -> Expression:
        """``parse_expr.c transformColumnRef``: a column of the nearest level that has it, or a whole row."""
        fields = [_sval(f) for f in body.get("fields") or [] if "String" in f]
        if any("A_Star" in f for f in body.get("fields") or []):
            return OtherExpr("EXPR", tuple(self._star(body, state)))
        if len(fields) == 1:
            hit = self._column(fields[0], state) or self._whole_row(fields[0], state)
        elif len(fields) == 2:
            hit = self._qualified(fields[0], fields[1], state) or self._column(fields[0], state)
        else:
            hit = self._qualified(fields[-2], fields[-1], state, schema=fields[-3]) or \
                  self._qualified(fields[0], fields[1], state)
        if hit is None:
            self.uncertain.append(".".join(fields))
            return Var(0)
        varno, levels = hit
        return Var(varno, levels)

    # name resolution -------------------------------------------------------------------------------------------
    @staticmethod
    def _visible(state: _State, levels: int) -> list[_NSItem]:
        return [n for n in state.namespace if not n.lateral_only or state.lateral_active]

    def _levels(self, state: _State) -> Iterable[tuple[_State, int]]:
        s: _State | None = state
        levels = 0
        while s is not None:
            yield s, levels
            s = s.parent
            levels += 1

    def _column(self, name: str, state: _State) -> tuple[int, int] | None:
        for s, levels in self._levels(state):
            for item in self._visible(s, levels):
                if not item.cols_visible:
                    continue
                for col, varno in item.columns:
                    if col == name:
                        return varno, levels
            if name in _SYSTEM_COLUMNS:
                rels = [n for n in self._visible(s, levels) if n.rel_visible]
                if len(rels) == 1:
                    return rels[0].rtindex, levels
        return None

    def _whole_row(self, name: str, state: _State) -> tuple[int, int] | None:
        found = self._refname(name, state)
        return (found[0].rtindex, found[1]) if found else None

    def _refname(self, name: str, state: _State, schema: str | None = None) -> tuple[_NSItem, int] | None:
        for s, levels in self._levels(state):
            for item in self._visible(s, levels):
                if item.rel_visible and item.refname == name and (schema is None or item.schema in (None, schema)):
                    return item, levels
        return None

    def _qualified(self, table: str, column: str, state: _State,
                   schema: str | None = None) -> tuple[int, int] | None:
        found = self._refname(table, state, schema)
        if found is None:
            return None
        item, levels = found
        for col, varno in item.columns:
            if col == column:
                return varno, levels
        if column in _SYSTEM_COLUMNS or not item.columns:
            return item.rtindex, levels
        self.uncertain.append(f"{table}.{column}")
        return item.rtindex, levels

    def _find_cte(self, name: str, state: _State) -> tuple[_CTE, int] | None:
        for s, levels in self._levels(state):
            if name in s.ctes:
                return s.ctes[name], levels
        return None

    # locking clauses -------------------------------------------------------------------------------------------
    def _locking(self, clauses: Any, state: _State) -> None:
        """``transformSelectStmt`` sets ``p_locking_clause`` before FROM: ``parse_relation.c isLockedRefname``."""
        names: set[str] = set()
        for clause in clauses or []:
            _k, body = _one(clause)
            rels = body.get("lockedRels") or []
            if not rels:
                state.locked_all = True
            for rv in rels:
                _rk, rb = _one(rv)
                names.add(str(rb.get("relname")))
        state.locked_names = frozenset(names)

    @staticmethod
    def _is_locked(refname: str | None, state: _State) -> bool:
        if state.locked_from_parent or state.locked_all:
            return True
        return refname is not None and refname in state.locked_names

    # helpers -------------------------------------------------------------------------------------------------
    def _relation(self, rv: dict[str, Any]) -> NamedRelation:
        key = (rv.get("schemaname"), str(rv["relname"]))
        info = self.lookup.relations.get(key)
        if info is None:
            shown = f"{key[0]}.{key[1]}" if key[0] else key[1]
            raise _MissingRelation(shown)
        return info

    @staticmethod
    def _relation_rte(info: NamedRelation, mode: int, inh: bool, refname: str, *,
                      security_barrier: bool = False) -> RangeTblEntry:
        return RangeTblEntry(RTEKind.RTE_RELATION, relid=info.oid, relkind=info.relkind, rellockmode=mode, inh=inh,
                             eref_name=refname, colnames=info.columns, security_barrier=security_barrier)

    @staticmethod
    def _renamed(columns: list[str], alias_cols: list[str]) -> list[str]:
        return [*alias_cols, *columns[len(alias_cols):]]

    def _output_columns(self, query: Query, raw: Mapping[str, Any]) -> list[str]:
        """``FigureColname`` of each output column of an analysed SELECT (names only)."""
        if raw.get("op", "SETOP_NONE") != "SETOP_NONE":
            left = raw.get("larg", {})
            while left.get("op", "SETOP_NONE") != "SETOP_NONE":
                left = left.get("larg", {})
            first = query.rtable[0].subquery if query.rtable else None
            return self._raw_target_names(left, first)
        if raw.get("valuesLists"):
            return [f"column{i + 1}" for i in range(len(_list_items(raw["valuesLists"][0])))]
        return self._raw_target_names(raw, query)

    def _raw_target_names(self, raw: Mapping[str, Any], query: Query | None) -> list[str]:
        names: list[str] = []
        rtable = query.rtable if query is not None else ()
        for item in raw.get("targetList") or []:
            _k, rt = _one(item)
            if rt.get("name"):
                names.append(str(rt["name"]))
                continue
            value = rt.get("val") or {}
            vkind, vbody = _one(value) if value else ("", {})
            if vkind == "ColumnRef":
                fields = vbody.get("fields") or []
                if any("A_Star" in f for f in fields):
                    quals = [_sval(f) for f in fields if "String" in f]
                    for rte in rtable:
                        if rte.rtekind == RTEKind.RTE_RELATION and (not quals or quals[-1] == rte.eref_name):
                            names.extend(rte.colnames)
                    if not rtable or any(r.rtekind != RTEKind.RTE_RELATION for r in rtable
                                         if r.rtekind != RTEKind.RTE_JOIN):
                        self.uncertain.append("* over a subquery")
                    continue
                names.append(_sval(fields[-1]) if fields else "?column?")
            else:
                names.append(_figure_colname(value))
        return names


class _MissingRelation(Exception):
    pass


def _figure_colname(value: Any) -> str:
    """``parse_target.c FigureColnameInternal`` for the common node kinds."""
    if not isinstance(value, dict) or not value:
        return "?column?"
    kind, body = next(iter(value.items()))
    if not isinstance(body, dict):
        return "?column?"
    if kind == "FuncCall":
        names = body.get("funcname") or []
        return _sval(names[-1]) if names else "?column?"
    if kind == "TypeCast":
        inner = _figure_colname(body.get("arg"))
        if inner != "?column?":
            return inner
        names = (body.get("typeName") or {}).get("names") or []
        return _sval(names[-1]) if names else "?column?"
    if kind == "ColumnRef":
        fields = body.get("fields") or []
        return _sval(fields[-1]) if fields else "?column?"
    if kind == "CaseExpr":
        return "case"
    if kind == "CoalesceExpr":
        return "coalesce"
    if kind == "SubLink":
        if body.get("subLinkType") == "EXISTS_SUBLINK":
            return "exists"
        if body.get("subLinkType") == "ARRAY_SUBLINK":
            return "array"
        try:
            _k, sub = _one(body.get("subselect"))
            targets = sub.get("targetList") or []
            if targets:
                _t, rt = _one(targets[0])
                return str(rt.get("name") or _figure_colname(rt.get("val")))
        except TreeUnsupported:
            pass
    return "?column?"


def _returning(body: Mapping[str, Any]) -> list[Any]:
    """RETURNING items: ``returningList`` (PG 13-17 grammar) or ``returningClause.exprs`` (PG 18+)."""
    clause = body.get("returningClause")
    if isinstance(clause, dict):
        return list(clause.get("exprs") or [])
    return list(body.get("returningList") or [])


def _list_items(node: Any) -> list[Any]:
    if isinstance(node, dict) and "List" in node:
        return list(node["List"].get("items") or [])
    if isinstance(node, list):
        return node
    return [node]








def _raw_has(value: Any, kind: str) -> bool:
    """True when a raw (libpg_query JSON) tree holds a node of ``kind``."""
    if isinstance(value, dict):
        return kind in value or any(_raw_has(v, kind) for v in value.values())
    if isinstance(value, list):
        return any(_raw_has(v, kind) for v in value)
    return False


def _min_levelsup(values: Sequence[Expression]) -> int:
    """``parse_agg.c check_agg_arguments``: an aggregate belongs to the lowest level of the Vars in its arguments
    (sublinks not entered); 0 when it has none."""
    levels: list[int] = []

    def visit(node: Node, depth: int) -> None:
        if isinstance(node, Var):
            levels.append(node.varlevelsup - depth)
            return
        if isinstance(node, Query):
            depth += 1
        for child in children(node):
            visit(child, depth)

    for value in values:
        visit(value, 0)
    positive = [lvl for lvl in levels if lvl >= 0]
    return min(positive) if positive else 0


# -- the rewriter ------------------------------------------------------------------------------------------------

def _expand_views(query: Query, lookup: CatalogLookup, depth: int = 0) -> Query:
    """``rewriteHandler.c fireRIRrules``: every view used in a range table becomes a subquery holding the view's
    stored query (itself expanded), in range tables, CTEs and sublinks at any depth (``ApplyRetrieveRule``).

    PG 16+ keeps the view's OID, relkind and lock mode on the entry (commit 47bb9db75); before, they are cleared
    and the stored query begins with the ``*OLD*``/``*NEW*`` entries that the acquisition model reads the view from.
    Unused entries (a stored view's own ``*OLD*``/``*NEW*``) are not expanded (``rangeTableEntry_used``).

    Every range-table entry of the result is a new object, so two uses of one view share none (the acquisition
    model's planner tells entries apart by identity).
    """
    if depth > 32:
        raise TreeUnsupported("views nested more than 32 deep")
    used = _used_rtindexes(query)
    rtable = tuple(_expand_entry(rte, n in used, lookup, depth) for n, rte in enumerate(query.rtable, start=1))
    ctes = tuple(dataclasses.replace(c, ctequery=_expand_views(c.ctequery, lookup, depth)) for c in query.cte_list)
    expanded = dataclasses.replace(query, rtable=rtable, cte_list=ctes)
    return map_level_sublinks(expanded, lambda sub: _expand_views(sub, lookup, depth))


def _expand_entry(rte: RangeTblEntry, used: bool, lookup: CatalogLookup, depth: int) -> RangeTblEntry:
    """One range-table entry of :func:`_expand_views`: a used view becomes its stored query (``ApplyRetrieveRule``),
    a subquery has its views expanded, any other entry is copied."""
    if rte.rtekind == RTEKind.RTE_RELATION and rte.relkind == "v" and used:
        stored = lookup.views.get(rte.relid)
        if stored is None:
            raise TreeUnsupported(f"no stored query for view {rte.relid}")
        view = dataclasses.replace(
            rte, rtekind=RTEKind.RTE_SUBQUERY, subquery=_expand_views(stored, lookup, depth + 1), inh=False,
            security_barrier=rte.relid in lookup.view_security_barrier or rte.security_barrier)
        if lookup.server_version_num < PG16:
            return dataclasses.replace(view, relid=0, relkind=None, rellockmode=0)
        return view
    if rte.rtekind == RTEKind.RTE_SUBQUERY and rte.subquery is not None:
        return dataclasses.replace(rte, subquery=_expand_views(rte.subquery, lookup, depth))
    return dataclasses.replace(rte)


def _used_rtindexes(query: Query) -> set[int]:
    """Range-table indexes referenced by the join tree or by a Var of this level (``rangeTableEntry_used``)."""
    used: set[int] = set()
    if query.result_relation:
        used.add(query.result_relation)

    def visit(node: Node, depth: int) -> None:
        if isinstance(node, RangeTblRef | JoinExpr) and depth == 0:
            used.add(node.rtindex)
        elif isinstance(node, Var) and node.varlevelsup == depth:
            used.add(node.varno)
        if isinstance(node, Query):
            depth += 1
        for child in children(node):
            visit(child, depth)

    for node in children(query, skip=frozenset({"rtable"})):
        visit(node, 0)
    for rte in query.rtable:
        for node in nodes_in((rte.subquery, rte.functions, rte.values_lists, rte.joinaliasvars)):
            visit(node, 0)
    return used


def has_sublinks(tree: Query) -> bool:
    """True when a (built) query tree holds a sublink anywhere: only then can an unresolved name change the
    order (pull-up decisions read the Vars of sublinks)."""
    return any(isinstance(node, SubLink) for node in walk(tree))


def _cte_names(raw: Mapping[str, Any]) -> set[str]:
    """Every CTE name defined anywhere in a raw tree."""
    names: set[str] = set()

    def visit(kind: str, body: dict[str, Any]) -> None:
        if kind == "CommonTableExpr":
            names.add(str(body.get("ctename")))

    _walk_raw(raw, visit)
    return names


# -- entry point ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class QueryTree:
    """A client-built rewritten query tree.

    :ivar tree: the Query (:mod:`lockscope.querynodes`).
    :ivar volatile_functions: the tree's function ids that stand for volatile functions (name-resolved
        functions of the statement get negative ids; functions inside views keep their real OIDs and are looked up
        by the caller).
    :ivar uncertain: names the analysis could not resolve (they matter only for sublink pull-up decisions).
    """

    tree: Query
    volatile_functions: frozenset[int]
    uncertain: tuple[str, ...]


def build_query_tree(raw: Mapping[str, Any], lookup: CatalogLookup) -> QueryTree:
    """The rewritten Query of one raw statement (``{"SelectStmt": {...}}``, a libpg_query JSON ``stmt``).

    :param raw: the statement node of the raw parse tree.
    :param lookup: catalog answers for every name in it (:func:`relation_names`, :func:`function_names`) and the
        stored queries of the views it reaches.
    :return: a :class:`QueryTree`.
    :raises TreeUnsupported: a construct this module does not reproduce, or a relation that does not exist (the
        reason names it).
    """
    kind, body = _one(raw)
    analyzer = _Analyzer(lookup)
    try:
        tree = analyzer.statement(kind, body, None)
    except _MissingRelation as exc:
        if _cte_names(raw) & {str(exc).rsplit(".", 1)[-1]}:
            raise TreeUnsupported(f'"{exc}" is a CTE name lockscope could not place') from None
        raise UnknownRelation(str(exc)) from None
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise TreeUnsupported(f"parse analysis failed on this shape ({type(exc).__name__}: {exc})") from None
    volatile = frozenset(fid for name, fid in analyzer._fake_funcids.items()
                         if lookup.functions.get(name, FunctionInfo()).volatile)
    return QueryTree(_expand_views(tree, lookup), volatile, tuple(dict.fromkeys(analyzer.uncertain)))


class QueryRunner(Protocol):
    """``Session.query_rows``-shaped: run the named lockscope SQL file with parameters, rows as ``row_type``."""

    def __call__(self, name: str, row_type: type[RowT], params: Sequence[Any] | None = None, /) -> list[RowT]:
        ...


def gather_lookup(run: QueryRunner, raw: Mapping[str, Any], server_version_num: int) -> CatalogLookup:
    """Read what :func:`build_query_tree` needs from the catalog: 1 query for the relations named, 1 for the
    functions called (when any), 1 per level of view nesting (when views are reached).

    :param run: runs a lockscope SQL file (``Session.query_rows``): ``order_relations``, ``order_functions``,
        ``order_views``; catalog reads only, no lock on any user relation.
    :param raw: the statement node of the raw parse tree.
    :raises DatabaseError: a catalog query failed (from ``run``).
    :raises TreeUnsupported: a view's stored query cannot be read.
    """
    names = relation_names(raw)
    relations: dict[tuple[str | None, str], NamedRelation | None] = {}
    if names:
        rows = run("order_relations", OrderRelationRow, [[s for s, _ in names], [n for _, n in names]])
        for (schema, name), row in zip(names, rows, strict=True):
            relations[(schema, name)] = None if row.oid is None else NamedRelation(
                row.oid, str(row.relkind), tuple(row.columns or ()), bool(row.security_barrier),
                bool(row.row_security), bool(row.has_rules))
    functions: dict[str, FunctionInfo] = {}
    called = function_names(raw)
    if called:
        for frow in run("order_functions", OrderFunctionRow, [called]):
            functions[str(frow.name)] = FunctionInfo(bool(frow.is_volatile), bool(frow.is_aggregate),
                                                     bool(frow.is_window), bool(frow.returns_set))
    views: dict[int, Query] = {}
    barrier: set[int] = set()
    wanted = {info.oid for info in relations.values() if info is not None and info.relkind == "v"}
    while wanted:
        for vrow in run("order_views", ViewRuleRow, [sorted(wanted)]):
            views[vrow.view_oid] = view_query_from_ev_action(str(vrow.ev_action))
            if vrow.security_barrier:
                barrier.add(vrow.view_oid)
        nested = {node.relid for oid in wanted if oid in views for node in walk(views[oid])
                  if isinstance(node, RangeTblEntry) and node.rtekind == RTEKind.RTE_RELATION and node.relkind == "v"}
        wanted = nested - set(views)
    return CatalogLookup(relations, functions, views, server_version_num, frozenset(barrier))
