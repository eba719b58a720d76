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
  query comes from ``pg_rewrite.ev_action`` (the same node text the server expands), views nested in it too.

The result has the node shape of :func:`lockscope.pgnodes.parse_node_dump` (``{"node": "QUERY", ...}``) for the
fields the order model reads, so one model serves both. What this module cannot reproduce raises
:class:`TreeUnsupported` (the footprint then orders by the catalog and labels every lock ``order_rule: unknown``):
row-level security, DML on a view or on a table with rules, locking clauses pushed into subqueries, table functions
the grammar leaves to the server.

The tree is checked against the server's own (``debug_print_rewritten`` on scratch servers only) in
``tests/test_acquisition_order.py``: same lock steps for every statement of the order corpus, PG 15 and 18.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from .pgnodes import NodeDumpError, parse_node_dump
from .rows import OrderFunctionRow, OrderRelationRow, RowT, ViewRuleRow
from .versions import PG16, PG17

__all__ = [
    "CatalogLookup",
    "FunctionInfo",
    "QueryRunner",
    "QueryTree",
    "RelationInfo",
    "TreeUnsupported",
    "UnknownRelation",
    "build_query_tree",
    "function_names",
    "gather_lookup",
    "has_sublinks",
    "relation_names",
    "view_query_from_ev_action",
]

# lockdefs.h lock modes, as rellockmode numbers.
_ACCESS_SHARE, _ROW_SHARE, _ROW_EXCLUSIVE = 1, 2, 3
# nodes.h CmdType; parsenodes.h RTEKind, SubLinkType (primnodes.h), JoinType (nodes.h), CTEMaterialize.
_CMD = {"SelectStmt": 1, "UpdateStmt": 2, "InsertStmt": 3, "DeleteStmt": 4, "MergeStmt": 5}
_RTE_RELATION, _RTE_SUBQUERY, _RTE_JOIN, _RTE_FUNCTION, _RTE_TABLEFUNC, _RTE_VALUES, _RTE_CTE = 0, 1, 2, 3, 4, 5, 6
_SUBLINK_TYPES = {"EXISTS_SUBLINK": 0, "ALL_SUBLINK": 1, "ANY_SUBLINK": 2, "ROWCOMPARE_SUBLINK": 3,
                  "EXPR_SUBLINK": 4, "MULTIEXPR_SUBLINK": 5, "ARRAY_SUBLINK": 6, "CTE_SUBLINK": 7}
_JOIN_TYPES = {"JOIN_INNER": 0, "JOIN_LEFT": 1, "JOIN_FULL": 2, "JOIN_RIGHT": 3}
_SETOPS = {"SETOP_UNION": 1, "SETOP_INTERSECT": 2, "SETOP_EXCEPT": 3}
_CTE_MATERIALIZE = {"CTEMaterializeDefault": 0, "CTEMaterializeAlways": 1, "CTEMaterializeNever": 2}
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
class RelationInfo:
    """What parse analysis needs of one relation named in the statement.

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
    """The catalog answers parse analysis needs, gathered before the tree is built (see :mod:`lockscope.order`).

    :ivar relations: by ``(schema or None, name)`` as written (identifiers already case-folded by the grammar);
        None for a name that does not resolve.
    :ivar functions: by lower-case function name (schema ignored: the facts of all visible candidates).
    :ivar views: view OID → its stored query (``pg_rewrite.ev_action``, parsed).
    :ivar view_relkinds: relkind of every relation inside the stored view queries, by OID.
    :ivar server_version_num: shapes that changed between majors (PG 16 view entries, PG 17 MERGE fields).
    """

    relations: Mapping[tuple[str | None, str], RelationInfo | None]
    functions: Mapping[str, FunctionInfo]
    views: Mapping[int, dict[str, Any]]
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
def view_query_from_ev_action(text: str) -> dict[str, Any]:
    """The stored query of a view: ``pg_rewrite.ev_action`` of its ``_RETURN`` rule (a one-element list of Query).
    Cached by text: the same tree object for the same text, which callers copy before changing.

    :raises TreeUnsupported: the text is not a node dump holding a Query.
    """
    try:
        tree = parse_node_dump(text)
    except NodeDumpError as exc:
        raise TreeUnsupported(f"a view's stored query cannot be read: {exc}") from None
    queries = [q for q in (tree if isinstance(tree, list) else [tree]) if isinstance(q, dict)]
    if not queries or queries[0].get("node") != "QUERY":
        raise TreeUnsupported("a view's stored query is not a Query")
    return queries[0]


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
    name: str
    node: dict[str, Any]
    columns: list[str] = field(default_factory=list)
    recursive_self: bool = False


@dataclass
class _State:
    """One query level being analysed (``ParseState``)."""

    parent: _State | None
    rtable: list[dict[str, Any]] = field(default_factory=list)
    namespace: list[_NSItem] = field(default_factory=list)
    ctes: dict[str, _CTE] = field(default_factory=dict)
    lateral_active: bool = False
    locked_all: bool = False
    locked_names: frozenset[str] = frozenset()
    locked_from_parent: bool = False
    has_aggs: bool = False
    has_window: bool = False
    has_target_srfs: bool = False
    has_sublinks: bool = False
    in_target_list: bool = False
    recursive_cte: str | None = None
    joinlist: list[Any] = field(default_factory=list)


# -- the analyzer -------------------------------------------------------------------------------------------------

class _Analyzer:
    def __init__(self, lookup: CatalogLookup):
        self.lookup = lookup
        self.version = lookup.server_version_num
        self.uncertain: list[str] = []
        self._fake_funcids: dict[str, int] = {}

    # statements ---------------------------------------------------------------------------------------------
    def statement(self, kind: str, body: dict[str, Any], parent: _State | None) -> dict[str, Any]:
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

    def _query(self, state: _State, cmd: int, **fields: Any) -> dict[str, Any]:
        q: dict[str, Any] = {"node": "QUERY", "commandType": cmd, "resultRelation": 0}
        q.update(fields)
        q["rtable"] = state.rtable
        q["hasAggs"] = _tf(state.has_aggs)
        q["hasWindowFuncs"] = _tf(state.has_window)
        q["hasTargetSRFs"] = _tf(state.has_target_srfs)
        q["hasSubLinks"] = _tf(state.has_sublinks)
        q.setdefault("hasForUpdate", "false")
        q["cteList"] = [c.node for c in state.ctes.values()] or None
        return q

    def select(self, body: dict[str, Any], parent: _State | None, *, locked_from_parent: bool = False,
               cte_state: _State | None = None) -> dict[str, Any]:
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
        extra: list[Any] = []
        for key in ("sortClause", "groupClause", "distinctClause", "windowClause"):
            for item in body.get(key) or []:
                if _raw_has(item, "SubLink"):
                    extra.append(self.expr(item, state))
        limit_offset = self.expr(body.get("limitOffset"), state)
        limit_count = self.expr(body.get("limitCount"), state)
        jointree = {"node": "FROMEXPR", "fromlist": state.joinlist, "quals": where}
        return self._query(
            state, 1, jointree=jointree, targetList=[*target, *extra],
            havingQual=having, limitOffset=limit_offset, limitCount=limit_count,
            groupClause=_marker(body.get("groupClause")), groupingSets=None,
            sortClause=_marker(body.get("sortClause")),
            distinctClause=_marker(body.get("distinctClause")),
            hasForUpdate=_tf(bool(body.get("lockingClause"))), setOperations=None)

    def values_select(self, body: dict[str, Any], state: _State) -> dict[str, Any]:
        """``VALUES (...), (...)`` as a statement: one RTE_VALUES (``transformValuesClause``)."""
        rows = [[self.expr(v, state) for v in _list_items(row)] for row in body["valuesLists"]]
        width = len(rows[0]) if rows else 0
        rte = {"node": "RANGETBLENTRY", "rtekind": _RTE_VALUES, "values_lists": rows, "inh": "false",
               "lateral": "false"}
        state.rtable.append(rte)
        idx = len(state.rtable)
        target = [{"node": "VAR", "varno": idx, "varlevelsup": 0} for _ in range(width)]
        limit_offset = self.expr(body.get("limitOffset"), state)
        limit_count = self.expr(body.get("limitCount"), state)
        return self._query(state, 1, jointree={"node": "FROMEXPR", "fromlist": [_ref(idx)], "quals": None},
                           targetList=target, limitOffset=limit_offset, limitCount=limit_count,
                           sortClause=_marker(body.get("sortClause")), setOperations=None)

    def set_operation(self, body: dict[str, Any], state: _State) -> dict[str, Any]:
        """``transformSetOperationStmt``: the leaves become subquery RTEs, left to right."""
        self._locking(body.get("lockingClause"), state)
        if body.get("lockingClause"):
            raise TreeUnsupported("a locking clause on a set operation")

        def leaf(node: dict[str, Any]) -> dict[str, Any]:
            # transformSetOperationTree: a set operation with its own WITH/ORDER BY/LIMIT/locking is a leaf
            if node.get("op", "SETOP_NONE") != "SETOP_NONE" and not node.get("withClause") and \
                    not node.get("sortClause") and not node.get("limitCount") and not node.get("limitOffset") \
                    and not node.get("lockingClause"):
                return {"node": "SETOPERATIONSTMT", "op": _SETOPS[str(node["op"])], "all": _tf(bool(node.get("all"))),
                        "larg": leaf(node["larg"]), "rarg": leaf(node["rarg"])}
            sub = self.select(node, state)
            n = len(state.rtable) + 1
            state.rtable.append({"node": "RANGETBLENTRY", "rtekind": _RTE_SUBQUERY, "subquery": sub,
                                 "inh": "false", "lateral": "false", "security_barrier": "false",
                                 "eref": {"aliasname": f"*SELECT* {n}"}})
            return _ref(n)

        tree = {"node": "SETOPERATIONSTMT", "op": _SETOPS[str(body["op"])], "all": _tf(bool(body.get("all"))),
                "larg": leaf(body["larg"]), "rarg": leaf(body["rarg"])}
        limit_offset = self.expr(body.get("limitOffset"), state)
        limit_count = self.expr(body.get("limitCount"), state)
        return self._query(state, 1, jointree={"node": "FROMEXPR", "fromlist": [], "quals": None},
                           targetList=[], setOperations=tree, limitOffset=limit_offset, limitCount=limit_count,
                           sortClause=_marker(body.get("sortClause")))

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
        rte = self._relation_rte(info, _ROW_EXCLUSIVE, inh, refname)
        state.rtable.append(rte)
        idx = len(state.rtable)
        if source:
            state.namespace.append(_NSItem(refname, idx, [(c, idx) for c in info.columns],
                                           schema=None if alias else rv.get("schemaname")))
            state.joinlist.append(_ref(idx))
        return idx

    def insert(self, body: dict[str, Any], parent: _State | None) -> dict[str, Any]:
        """``analyze.c transformInsertStmt``."""
        state = _State(parent)
        if body.get("withClause"):
            self.with_clause(body["withClause"], state)
        rv = body["relation"]
        result = self._target_relation(rv, state, inh=False, source=False)
        select = body.get("selectStmt")
        target: list[Any] = []
        joinlist: list[Any] = []
        if select is not None:
            sel = select["SelectStmt"]
            rows = sel.get("valuesLists")
            if rows and len(rows) == 1 and not sel.get("withClause") and not sel.get("sortClause") \
                    and not sel.get("limitCount") and not sel.get("limitOffset"):
                target = [self.expr(v, state) for v in _list_items(rows[0])]
            elif rows and not sel.get("withClause") and not sel.get("sortClause") and not sel.get("limitCount") \
                    and not sel.get("limitOffset"):
                values = [[self.expr(v, state) for v in _list_items(row)] for row in rows]
                state.rtable.append({"node": "RANGETBLENTRY", "rtekind": _RTE_VALUES, "values_lists": values,
                                     "inh": "false", "lateral": "false"})
                idx = len(state.rtable)
                joinlist.append(_ref(idx))
                target = [{"node": "VAR", "varno": idx, "varlevelsup": 0} for _ in _list_items(rows[0])]
            else:
                sub = self.select(sel, state)
                state.rtable.append({"node": "RANGETBLENTRY", "rtekind": _RTE_SUBQUERY, "subquery": sub,
                                     "inh": "false", "lateral": "false", "security_barrier": "false"})
                idx = len(state.rtable)
                joinlist.append(_ref(idx))
                target = [{"node": "VAR", "varno": idx, "varlevelsup": 0}]
        on_conflict = None
        if body.get("onConflictClause"):
            on_conflict = self.on_conflict(body["onConflictClause"], state, result)
        info = self._relation(rv)
        alias = rv.get("alias", {}).get("aliasname") if rv.get("alias") else None
        state.namespace = [_NSItem(alias or rv["relname"], result, [(c, result) for c in info.columns])]
        returning = self.target_list(_returning(body), state)
        return self._query(state, 3, resultRelation=result,
                           jointree={"node": "FROMEXPR", "fromlist": joinlist, "quals": None},
                           targetList=target, onConflict=on_conflict, returningList=returning or None,
                           setOperations=None)

    def on_conflict(self, clause: dict[str, Any], state: _State, result: int) -> dict[str, Any]:
        """``transformOnConflictClause``: DO UPDATE adds the ``excluded`` pseudo-relation to the range table."""
        body = clause
        action = body.get("action")
        out: dict[str, Any] = {"node": "ONCONFLICTEXPR", "action": action}
        infer = body.get("infer")
        if infer:  # transformOnConflictArbiter: the conflict target (index elements or a constraint)
            out["arbiterElems"] = [{"node": "INFERENCEELEM"} for _ in infer.get("indexElems") or []] or None
            out["constraint"] = 1 if infer.get("conname") else 0
            out["arbiterWhere"] = self.expr(infer.get("whereClause"), state)
        if action == "ONCONFLICT_UPDATE":
            target_rte = state.rtable[result - 1]
            excluded = {**target_rte, "rellockmode": _ROW_EXCLUSIVE, "inh": "false",
                        "eref": {"aliasname": "excluded"}}
            state.rtable.append(excluded)
            ex_idx = len(state.rtable)
            cols = [c for c, _ in self._columns_of_rte(target_rte)]
            rv_name = target_rte.get("eref", {}).get("aliasname")
            saved = state.namespace
            state.namespace = [_NSItem(rv_name, result, [(c, result) for c in cols]),
                               _NSItem("excluded", ex_idx, [(c, ex_idx) for c in cols])]
            out["onConflictSet"] = self.target_list(body.get("targetList") or [], state, set_list=True)
            out["onConflictWhere"] = self.expr(body.get("whereClause"), state)
            state.namespace = saved
        return out

    def update(self, body: dict[str, Any], parent: _State | None) -> dict[str, Any]:
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
        jointree = {"node": "FROMEXPR", "fromlist": state.joinlist, "quals": where}
        return self._query(state, 2, resultRelation=result, jointree=jointree, targetList=target,
                           returningList=returning or None, setOperations=None)

    def delete(self, body: dict[str, Any], parent: _State | None) -> dict[str, Any]:
        """``analyze.c transformDeleteStmt``: target, USING, WHERE, RETURNING."""
        state = _State(parent)
        if body.get("withClause"):
            self.with_clause(body["withClause"], state)
        rv = body["relation"]
        result = self._target_relation(rv, state, inh=bool(rv.get("inh")), source=True)
        self.from_clause(body.get("usingClause") or [], state)
        where = self.expr(body.get("whereClause"), state)
        returning = self.target_list(_returning(body), state)
        jointree = {"node": "FROMEXPR", "fromlist": state.joinlist, "quals": where}
        return self._query(state, 4, resultRelation=result, jointree=jointree, targetList=[],
                           returningList=returning or None, setOperations=None)

    def merge(self, body: dict[str, Any], parent: _State | None) -> dict[str, Any]:
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
        actions: list[dict[str, Any]] = []
        for clause in body.get("mergeWhenClauses") or []:
            _k, mw = _one(clause)
            match = mw.get("matchKind", "MERGE_WHEN_MATCHED")
            action: dict[str, Any] = {"node": "MERGEACTION"}
            if self.version >= PG17:
                action["matchKind"] = {"MERGE_WHEN_MATCHED": 0, "MERGE_WHEN_NOT_MATCHED_BY_SOURCE": 1,
                                       "MERGE_WHEN_NOT_MATCHED_BY_TARGET": 2}.get(match, 0)
            else:
                action["matched"] = _tf(match == "MERGE_WHEN_MATCHED")
            action["qual"] = self.expr(mw.get("condition"), state)
            values = [self.expr(v, state) for v in mw.get("values") or []]
            action["targetList"] = self.target_list(mw.get("targetList") or [], state, set_list=True) + values
            actions.append(action)
        returning = self.target_list(_returning(body), state)
        fields: dict[str, Any] = {"mergeActionList": actions}
        jointree: dict[str, Any] = {"node": "FROMEXPR", "fromlist": state.joinlist, "quals": None}
        if self.version >= PG17:
            fields["mergeJoinCondition"] = condition
        else:
            jointree["quals"] = condition
        return self._query(state, 5, resultRelation=result, jointree=jointree, targetList=[],
                           returningList=returning or None, setOperations=None, **fields)

    # WITH ----------------------------------------------------------------------------------------------------
    def with_clause(self, clause: dict[str, Any], state: _State) -> None:
        """``parse_cte.c transformWithClause``: each CTE analysed in order (earlier ones visible; all of them in
        WITH RECURSIVE, where a self-reference does not count in ``cterefcount``)."""
        body = clause
        recursive = bool(body.get("recursive"))
        items = [_one(c)[1] for c in body.get("ctes") or []]
        if recursive:
            for cte in items:
                state.ctes[cte["ctename"]] = _CTE(cte["ctename"], self._cte_node(cte), self._cte_alias_cols(cte))
        for cte in items:
            name = cte["ctename"]
            record = state.ctes.get(name) or _CTE(name, self._cte_node(cte), self._cte_alias_cols(cte))
            kind, query = _one(cte["ctequery"])
            sub_state = _State(state)
            if recursive:
                sub_state.recursive_cte = name
            analysed = self.statement(kind, query, state) if kind != "SelectStmt" else \
                self.select(query, state, cte_state=self._cte_state(sub_state, query))
            record.node["ctequery"] = analysed
            if not record.columns:
                record.columns = self._output_columns(analysed, query)
            if record.recursive_self:
                record.node["cterecursive"] = "true"
            state.ctes[name] = record

    def _cte_state(self, sub_state: _State, query: dict[str, Any]) -> _State:
        if query.get("withClause"):
            self.with_clause(query["withClause"], sub_state)
        return sub_state

    @staticmethod
    def _cte_node(cte: dict[str, Any]) -> dict[str, Any]:
        return {"node": "COMMONTABLEEXPR", "ctename": cte["ctename"],
                "ctematerialized": _CTE_MATERIALIZE.get(str(cte.get("ctematerialized")), 0),
                "cterecursive": "false", "cterefcount": 0, "ctequery": None}

    @staticmethod
    def _cte_alias_cols(cte: dict[str, Any]) -> list[str]:
        return [_sval(c) for c in cte.get("aliascolnames") or []]

    # FROM ----------------------------------------------------------------------------------------------------
    def from_clause(self, items: Sequence[Any], state: _State) -> None:
        """``parse_clause.c transformFromClause``: items left to right; each visible to LATERAL items after it,
        all visible to the rest of the statement once the FROM list is done."""
        added: list[_NSItem] = []
        for item in items:
            node, ns = self.from_item(item, state)
            for n in ns:
                n.lateral_only = True
            state.namespace.extend(ns)
            added.extend(ns)
            state.joinlist.append(node)
        for n in state.namespace:
            n.lateral_only = False

    def from_item(self, item: Any, state: _State) -> tuple[dict[str, Any], list[_NSItem]]:
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

    def range_var(self, rv: dict[str, Any], state: _State) -> tuple[dict[str, Any], list[_NSItem]]:
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
        rte = self._relation_rte(info, mode, bool(rv.get("inh")), refname)  # JSON leaves false out: ONLY
        if info.relkind == "v":
            rte["security_barrier"] = _tf(info.security_barrier)
        state.rtable.append(rte)
        idx = len(state.rtable)
        cols = self._renamed(list(info.columns), alias_cols)
        return _ref(idx), [_NSItem(refname, idx, [(c, idx) for c in cols],
                                   schema=None if alias else rv.get("schemaname"))]

    def _cte_rte(self, cte: _CTE, levels: int, refname: str, alias_cols: list[str],
                 state: _State) -> tuple[dict[str, Any], list[_NSItem]]:
        """``parse_relation.c addRangeTableEntryForCTE``: a reference counts unless it is the recursive one."""
        self_ref = self._is_self_reference(cte.name, state, levels)
        if self_ref:
            cte.recursive_self = True
        else:
            cte.node["cterefcount"] = int(cte.node["cterefcount"]) + 1
        if self._is_locked(refname, state):
            raise TreeUnsupported("FOR UPDATE/SHARE of a CTE")
        rte = {"node": "RANGETBLENTRY", "rtekind": _RTE_CTE, "ctename": cte.name, "ctelevelsup": levels,
               "self_reference": _tf(self_ref), "inh": "false", "lateral": "false",
               "eref": {"aliasname": refname}}
        state.rtable.append(rte)
        idx = len(state.rtable)
        cols = self._renamed(list(cte.columns), alias_cols)
        return _ref(idx), [_NSItem(refname, idx, [(c, idx) for c in cols])]

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

    def range_subselect(self, body: dict[str, Any], state: _State) -> tuple[dict[str, Any], list[_NSItem]]:
        """``transformRangeSubselect``: the subquery sees this level's earlier FROM items only if LATERAL."""
        alias = (body.get("alias") or {}).get("aliasname")
        alias_cols = [_sval(c) for c in (body.get("alias") or {}).get("colnames") or []]
        lateral = bool(body.get("lateral"))
        kind, query = _one(body["subquery"])
        if kind != "SelectStmt":
            raise TreeUnsupported(f"{kind} in FROM")
        state.lateral_active = lateral
        sub = self.select(query, state, locked_from_parent=self._is_locked(alias, state) if alias else False)
        state.lateral_active = False
        rte = {"node": "RANGETBLENTRY", "rtekind": _RTE_SUBQUERY, "subquery": sub, "inh": "false",
               "lateral": _tf(lateral), "security_barrier": "false", "eref": {"aliasname": alias or "unnamed_subquery"}}
        state.rtable.append(rte)
        idx = len(state.rtable)
        cols = self._renamed(self._output_columns(sub, query), alias_cols)
        return _ref(idx), [_NSItem(alias, idx, [(c, idx) for c in cols])]

    def range_function(self, body: dict[str, Any], state: _State) -> tuple[dict[str, Any], list[_NSItem]]:
        """``transformRangeFunction``: function calls in FROM (their arguments see earlier items if LATERAL)."""
        if body.get("is_rowsfrom") and len(body.get("functions") or []) > 1:
            pass
        state.lateral_active = bool(body.get("lateral"))
        functions: list[Any] = []
        names: list[str] = []
        for pair in body.get("functions") or []:
            items = _list_items(pair)
            call = items[0] if items else None
            functions.append({"node": "RANGETBLFUNCTION", "funcexpr": self.expr(call, state)})
            if isinstance(call, dict) and "FuncCall" in call:
                names.append(_sval(call["FuncCall"]["funcname"][-1]))
        state.lateral_active = False
        alias = (body.get("alias") or {}).get("aliasname")
        alias_cols = [_sval(c) for c in (body.get("alias") or {}).get("colnames") or []]
        for coldef in body.get("coldeflist") or []:
            _k, cd = _one(coldef)
            alias_cols.append(str(cd.get("colname")))
        refname = alias or (names[0] if names else None)
        rte = {"node": "RANGETBLENTRY", "rtekind": _RTE_FUNCTION, "functions": functions, "inh": "false",
               "lateral": _tf(bool(body.get("lateral"))), "eref": {"aliasname": refname}}
        state.rtable.append(rte)
        idx = len(state.rtable)
        cols = alias_cols or ([refname] if refname else [])
        if body.get("ordinality"):
            cols.append("ordinality")
        if not alias_cols:
            self.uncertain.append("columns of a function in FROM")
        return _ref(idx), [_NSItem(refname, idx, [(c, idx) for c in cols])]

    def join(self, body: dict[str, Any], state: _State) -> tuple[dict[str, Any], list[_NSItem]]:
        """A JOIN: left side, right side, the ON clause (seeing both sides), then the join's own RTE."""
        larg, lns = self.from_item(body["larg"], state)
        for n in lns:
            n.lateral_only = True
        state.namespace.extend(lns)
        rarg, rns = self.from_item(body["rarg"], state)
        for n in lns:
            state.namespace.remove(n)
        jtype = _JOIN_TYPES.get(str(body.get("jointype", "JOIN_INNER")))
        if jtype is None:
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
        state.rtable.append({"node": "RANGETBLENTRY", "rtekind": _RTE_JOIN, "jointype": jtype, "inh": "false",
                             "lateral": "false"})
        idx = len(state.rtable)
        node = {"node": "JOINEXPR", "jointype": jtype, "larg": larg, "rarg": rarg, "quals": quals, "rtindex": idx}
        left_cols = [(c, v) for n in lns if n.cols_visible for c, v in n.columns]
        right_cols = [(c, v) for n in rns if n.cols_visible for c, v in n.columns]
        merged: list[tuple[str, int]] = []
        for name in using:
            lv = next((v for c, v in left_cols if c == name), idx)
            rv = next((v for c, v in right_cols if c == name), idx)
            merged.append((name, {0: lv, 1: lv, 3: rv}.get(jtype, idx)))
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
    def target_list(self, items: Sequence[Any], state: _State, *, set_list: bool = False) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for item in items:
            kind, body = _one(item)
            if kind != "ResTarget":
                raise TreeUnsupported(f"target {kind}")
            value = body.get("val")
            if value is None:
                continue
            vkind, vbody = _one(value) if isinstance(value, dict) else ("", {})
            if vkind == "ColumnRef" and any("A_Star" in f for f in vbody.get("fields", [])):
                out.extend({"node": "TARGETENTRY", "expr": v} for v in self._star(vbody, state))
                continue
            if vkind == "MultiAssignRef":
                expr = self.expr(vbody.get("source"), state) if vbody.get("colno") == 1 else None
                if expr is not None:
                    out.append({"node": "TARGETENTRY", "expr": expr})
                continue
            out.append({"node": "TARGETENTRY", "expr": self.expr(value, state)})
        return out

    def _star(self, ref: dict[str, Any], state: _State) -> list[dict[str, Any]]:
        fields = [_sval(f) for f in ref["fields"] if "String" in f]
        if not fields:
            return [{"node": "VAR", "varno": n.rtindex, "varlevelsup": 0}
                    for n in state.namespace if n.cols_visible and not n.lateral_only]
        found = self._refname(fields[-1], state, schema=fields[0] if len(fields) > 1 else None)
        if found is None:
            self.uncertain.append(f"{'.'.join(fields)}.*")
            return []
        item, levels = found
        return [{"node": "VAR", "varno": item.rtindex, "varlevelsup": levels}]

    # expressions -----------------------------------------------------------------------------------------------
    def expr(self, node: Any, state: _State) -> Any:
        """A raw expression as the order model reads it: sublinks (with their analysed query), Vars (level and
        range-table index), function calls (volatility), boolean structure; everything else as a generic node
        keeping its children in text order."""
        if node is None:
            return None
        if isinstance(node, list):
            return [self.expr(x, state) for x in node]
        if not isinstance(node, dict):
            return node
        if len(node) != 1 or not next(iter(node))[:1].isupper():
            return {"node": "EXPR", "args": [self.expr(v, state) for v in node.values() if isinstance(v, (dict, list))]}
        kind, body = next(iter(node.items()))
        if not isinstance(body, dict):
            return None
        if kind == "ColumnRef":
            return self.column_ref(body, state)
        if kind == "SubLink":
            return self.sublink(body, state)
        if kind == "BoolExpr":
            op = {"AND_EXPR": "and", "OR_EXPR": "or", "NOT_EXPR": "not"}[str(body.get("boolop"))]
            return {"node": "BOOLEXPR", "boolop": op, "args": [self.expr(a, state) for a in body.get("args") or []]}
        if kind == "FuncCall":
            return self.func_call(body, state)
        if kind == "A_Expr":
            return self.a_expr(body, state)
        if kind in ("A_Const", "ParamRef", "SQLValueFunction", "A_Star", "String", "Integer", "Float",
                    "Boolean", "BitString", "TypeName", "SetToDefault"):
            return {"node": "CONST"}
        if kind == "RangeSubselect" or kind.endswith("Stmt"):
            raise TreeUnsupported(f"{kind} inside an expression")
        return {"node": "EXPR", "args": [self.expr(v, state) for k, v in body.items()
                                          if isinstance(v, (dict, list)) and k not in ("typeName", "name")]}

    def a_expr(self, body: dict[str, Any], state: _State) -> dict[str, Any]:
        args = [self.expr(body.get("lexpr"), state), self.expr(body.get("rexpr"), state)]
        if body.get("kind") == "AEXPR_NOT_DISTINCT" or body.get("kind") == "AEXPR_DISTINCT":
            return {"node": "EXPR", "args": args}
        return {"node": "OPEXPR", "args": [a for a in args if a is not None]}

    def func_call(self, body: dict[str, Any], state: _State) -> dict[str, Any]:
        names = [_sval(n) for n in body.get("funcname") or []]
        name = names[-1].lower() if names else ""
        info = self.lookup.functions.get(name, FunctionInfo())
        args = [self.expr(a, state) for a in body.get("args") or []]
        order = [self.expr(_one(s)[1].get("node"), state) for s in body.get("agg_order") or []]
        agg_filter = self.expr(body.get("agg_filter"), state)
        funcid = self._fake_funcids.setdefault(name, -(len(self._fake_funcids) + 1))
        if body.get("over") is not None:
            state.has_window = True
            return {"node": "WINDOWFUNC", "winfnoid": funcid, "args": [*args, agg_filter]}
        if info.aggregate or body.get("agg_star") or body.get("agg_within_group"):
            levels = _min_levelsup([*args, *order, agg_filter])
            target = state
            for _ in range(levels):
                target = target.parent if target.parent is not None else target
            target.has_aggs = True
            return {"node": "AGGREF", "aggfnoid": funcid, "agglevelsup": levels, "args": [*args, *order, agg_filter]}
        if info.returns_set and state.in_target_list:
            state.has_target_srfs = True
        return {"node": "FUNCEXPR", "funcid": funcid, "args": args}

    def sublink(self, body: dict[str, Any], state: _State) -> dict[str, Any]:
        """``parse_expr.c transformSubLink``: the subquery analysed one level down, then the test expression."""
        kind = _SUBLINK_TYPES[str(body.get("subLinkType"))]
        state.has_sublinks = True
        qkind, query = _one(body["subselect"])
        saved_target = state.in_target_list
        state.in_target_list = False
        sub = self.statement(qkind, query, state)
        state.in_target_list = saved_target
        test = self.expr(body.get("testexpr"), state)
        return {"node": "SUBLINK", "subLinkType": kind, "testexpr": test, "subselect": sub}

    def column_ref(self, body: dict[str, Any], state: _State) -> dict[str, Any]:
        """``parse_expr.c transformColumnRef``: a column of the nearest level that has it, or a whole row."""
        fields = [_sval(f) for f in body.get("fields") or [] if "String" in f]
        if any("A_Star" in f for f in body.get("fields") or []):
            vars_ = self._star(body, state)
            return {"node": "EXPR", "args": vars_}
        if len(fields) == 1:
            hit = self._column(fields[0], state) or self._whole_row(fields[0], state)
        elif len(fields) == 2:
            hit = self._qualified(fields[0], fields[1], state) or self._column(fields[0], state)
        else:
            hit = self._qualified(fields[-2], fields[-1], state, schema=fields[-3]) or \
                  self._qualified(fields[0], fields[1], state)
        if hit is None:
            self.uncertain.append(".".join(fields))
            return {"node": "VAR", "varno": 0, "varlevelsup": 0}
        varno, levels = hit
        return {"node": "VAR", "varno": varno, "varlevelsup": levels}

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
    def _relation(self, rv: dict[str, Any]) -> RelationInfo:
        key = (rv.get("schemaname"), str(rv["relname"]))
        info = self.lookup.relations.get(key)
        if info is None:
            shown = f"{key[0]}.{key[1]}" if key[0] else key[1]
            raise _MissingRelation(shown)
        return info

    @staticmethod
    def _relation_rte(info: RelationInfo, mode: int, inh: bool, refname: str) -> dict[str, Any]:
        return {"node": "RANGETBLENTRY", "rtekind": _RTE_RELATION, "relid": info.oid, "relkind": info.relkind,
                "rellockmode": mode, "inh": _tf(inh), "lateral": "false", "eref": {"aliasname": refname},
                "_columns": info.columns}

    @staticmethod
    def _columns_of_rte(rte: Mapping[str, Any]) -> list[tuple[str, int]]:
        return [(c, 0) for c in rte.get("_columns") or ()]

    @staticmethod
    def _renamed(columns: list[str], alias_cols: list[str]) -> list[str]:
        return [*alias_cols, *columns[len(alias_cols):]]

    def _output_columns(self, query: Mapping[str, Any], raw: Mapping[str, Any]) -> list[str]:
        """``FigureColname`` of each output column of an analysed SELECT (names only)."""
        if raw.get("op", "SETOP_NONE") != "SETOP_NONE":
            left = raw.get("larg", {})
            while left.get("op", "SETOP_NONE") != "SETOP_NONE":
                left = left.get("larg", {})
            first = (query.get("rtable") or [{}])[0].get("subquery") or {}
            return self._raw_target_names(left, first)
        if raw.get("valuesLists"):
            return [f"column{i + 1}" for i in range(len(_list_items(raw["valuesLists"][0])))]
        return self._raw_target_names(raw, query)

    def _raw_target_names(self, raw: Mapping[str, Any], query: Mapping[str, Any]) -> list[str]:
        names: list[str] = []
        rtable = query.get("rtable") or []
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
                        alias = (rte.get("eref") or {}).get("aliasname")
                        if rte.get("rtekind") in (_RTE_RELATION,) and (not quals or quals[-1] == alias):
                            names.extend(rte.get("_columns") or ())
                    if not rtable or any(r.get("rtekind") != _RTE_RELATION for r in rtable
                                         if r.get("rtekind") != _RTE_JOIN):
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


def _ref(index: int) -> dict[str, Any]:
    return {"node": "RANGETBLREF", "rtindex": index}


def _tf(value: bool) -> str:
    return "true" if value else "false"


def _marker(value: Any) -> list[Any] | None:
    return [{"node": "SORTGROUPCLAUSE"}] * len(value) if value else None


def _raw_has(value: Any, kind: str) -> bool:
    """True when a raw (libpg_query JSON) tree holds a node of ``kind``."""
    if isinstance(value, dict):
        return kind in value or any(_raw_has(v, kind) for v in value.values())
    if isinstance(value, list):
        return any(_raw_has(v, kind) for v in value)
    return False


def _min_levelsup(values: Sequence[Any]) -> int:
    """``parse_agg.c check_agg_arguments``: an aggregate belongs to the lowest level of the Vars in its arguments
    (sublinks not entered); 0 when it has none."""
    levels: list[int] = []

    def visit(v: Any, depth: int) -> None:
        if isinstance(v, dict):
            if v.get("node") == "VAR":
                levels.append(int(v.get("varlevelsup", 0)) - depth)
                return
            if v.get("node") == "QUERY":
                depth += 1
            for key, sub in v.items():
                if key != "node":
                    visit(sub, depth)
        elif isinstance(v, list):
            for sub in v:
                visit(sub, depth)

    visit(list(values), 0)
    positive = [lvl for lvl in levels if lvl >= 0]
    return min(positive) if positive else 0


# -- the rewriter ------------------------------------------------------------------------------------------------

def _expand_views(query: dict[str, Any], lookup: CatalogLookup, depth: int = 0) -> None:
    """``rewriteHandler.c fireRIRrules``: every view used in a range table becomes a subquery holding the view's
    stored query (itself expanded), in range tables, CTEs and sublinks at any depth (``ApplyRetrieveRule``).

    PG 16+ keeps the view's OID, relkind and lock mode on the entry (commit 47bb9db75); before, they are cleared
    and the stored query begins with the ``*OLD*``/``*NEW*`` entries that the acquisition model reads the view from.
    Unused entries (a stored view's own ``*OLD*``/``*NEW*``) are not expanded (``rangeTableEntry_used``).
    """
    if depth > 32:
        raise TreeUnsupported("views nested more than 32 deep")
    rtable = query.get("rtable") or []
    used = _used_rtindexes(query)
    for n, rte in enumerate(rtable, start=1):
        if not isinstance(rte, dict):
            continue
        kind = int(rte.get("rtekind", -1))
        if kind == _RTE_RELATION and rte.get("relkind") == "v" and n in used:
            oid = int(rte["relid"])
            stored = lookup.views.get(oid)
            if stored is None:
                raise TreeUnsupported(f"no stored query for view {oid}")
            body = json.loads(json.dumps(stored))
            _expand_views(body, lookup, depth + 1)
            rte["rtekind"] = _RTE_SUBQUERY
            rte["subquery"] = body
            rte["security_barrier"] = _tf(oid in lookup.view_security_barrier or
                                          rte.get("security_barrier") == "true")
            rte["inh"] = "false"
            if lookup.server_version_num < PG16:
                rte["relid"] = 0
                rte["relkind"] = None
                rte["rellockmode"] = 0
        elif kind == _RTE_SUBQUERY and isinstance(rte.get("subquery"), dict):
            _expand_views(rte["subquery"], lookup, depth)
    for cte in query.get("cteList") or []:
        if isinstance(cte, dict) and isinstance(cte.get("ctequery"), dict):
            _expand_views(cte["ctequery"], lookup, depth)
    for link in _sublink_queries(query):
        _expand_views(link, lookup, depth)


def _used_rtindexes(query: Mapping[str, Any]) -> set[int]:
    """Range-table indexes referenced by the join tree or by a Var of this level (``rangeTableEntry_used``)."""
    used: set[int] = set()
    result = int(query.get("resultRelation") or 0)
    if result:
        used.add(result)

    def visit(v: Any, depth: int) -> None:
        if isinstance(v, dict):
            name = v.get("node")
            if name in ("RANGETBLREF", "JOINEXPR") and depth == 0:
                used.add(int(v.get("rtindex", 0)))
            elif name == "VAR" and int(v.get("varlevelsup", 0)) == depth:
                used.add(int(v.get("varno", 0)))
            if name == "QUERY":
                depth += 1
            for key, sub in v.items():
                if key != "node":
                    visit(sub, depth)
        elif isinstance(v, list):
            for sub in v:
                visit(sub, depth)

    for key, value in query.items():
        if key not in ("node", "rtable"):
            visit(value, 0)
    for rte in query.get("rtable") or []:
        if isinstance(rte, dict):
            for key in ("subquery", "functions", "values_lists", "joinaliasvars"):
                visit(rte.get(key), 0)
    return used


def _sublink_queries(value: Any) -> list[dict[str, Any]]:
    """Queries of the sublinks of one level (not descending into nested queries' own levels)."""
    out: list[dict[str, Any]] = []

    def visit(v: Any, top: bool) -> None:
        if isinstance(v, dict):
            if v.get("node") == "QUERY" and not top:
                return
            if v.get("node") == "SUBLINK":
                if isinstance(v.get("subselect"), dict):
                    out.append(v["subselect"])
                visit(v.get("testexpr"), False)
                return
            for key, sub in v.items():
                if key == "node" or (top and key in ("rtable", "cteList")):
                    continue
                visit(sub, False)
        elif isinstance(v, list):
            for sub in v:
                visit(sub, False)

    visit(value, True)
    for rte in value.get("rtable") or []:
        if isinstance(rte, dict):
            for key in ("functions", "values_lists"):
                visit(rte.get(key), False)
    return out


def has_sublinks(tree: Any) -> bool:
    """True when a (built) query tree holds a sublink anywhere: only then can an unresolved name change the
    order (pull-up decisions read the Vars of sublinks)."""
    if isinstance(tree, dict):
        return tree.get("node") == "SUBLINK" or any(has_sublinks(v) for v in tree.values())
    if isinstance(tree, list):
        return any(has_sublinks(v) for v in tree)
    return False


def _cte_names(raw: Mapping[str, Any]) -> set[str]:
    """Every CTE name defined anywhere in a raw tree."""
    names: set[str] = set()

    def visit(kind: str, body: dict[str, Any]) -> None:
        if kind == "CommonTableExpr":
            names.add(str(body.get("ctename")))

    _walk_raw(raw, visit)
    return names


def _strip_private(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_private(v) for k, v in value.items() if not k.startswith("_")}
    if isinstance(value, list):
        return [_strip_private(v) for v in value]
    return value


# -- entry point ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class QueryTree:
    """A client-built rewritten query tree.

    :ivar tree: the Query (node shape of :func:`lockscope.pgnodes.parse_node_dump`).
    :ivar volatile_functions: the tree's function ids that stand for volatile functions (name-resolved
        functions of the statement get negative ids; functions inside views keep their real OIDs and are looked up
        by the caller).
    :ivar uncertain: names the analysis could not resolve (they matter only for sublink pull-up decisions).
    """

    tree: dict[str, Any]
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
    _expand_views(tree, lookup)
    volatile = frozenset(fid for name, fid in analyzer._fake_funcids.items()
                         if lookup.functions.get(name, FunctionInfo()).volatile)
    return QueryTree(_strip_private(tree), volatile, tuple(dict.fromkeys(analyzer.uncertain)))


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
    relations: dict[tuple[str | None, str], RelationInfo | None] = {}
    if names:
        rows = run("order_relations", OrderRelationRow, [[s for s, _ in names], [n for _, n in names]])
        for (schema, name), row in zip(names, rows, strict=True):
            relations[(schema, name)] = None if row.oid is None else RelationInfo(
                row.oid, str(row.relkind), tuple(row.columns or ()), bool(row.security_barrier),
                bool(row.row_security), bool(row.has_rules))
    functions: dict[str, FunctionInfo] = {}
    called = function_names(raw)
    if called:
        for frow in run("order_functions", OrderFunctionRow, [called]):
            functions[str(frow.name)] = FunctionInfo(bool(frow.is_volatile), bool(frow.is_aggregate),
                                                     bool(frow.is_window), bool(frow.returns_set))
    views: dict[int, dict[str, Any]] = {}
    barrier: set[int] = set()
    wanted = {info.oid for info in relations.values() if info is not None and info.relkind == "v"}
    while wanted:
        for vrow in run("order_views", ViewRuleRow, [sorted(wanted)]):
            oid = vrow.view_oid
            views[oid] = view_query_from_ev_action(str(vrow.ev_action))
            if vrow.security_barrier:
                barrier.add(oid)
        nested: set[int] = set()
        for oid in wanted:
            for rte in _all_rtes(views.get(oid, {})):
                if rte.get("relkind") == "v" and int(rte.get("rtekind", -1)) == _RTE_RELATION:
                    nested.add(int(rte["relid"]))
        wanted = nested - set(views)
    return CatalogLookup(relations, functions, views, server_version_num, frozenset(barrier))


def _all_rtes(value: Any) -> list[dict[str, Any]]:
    """Every range-table entry anywhere in a stored query."""
    out: list[dict[str, Any]] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if item.get("node") == "RANGETBLENTRY":
                out.append(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return out
