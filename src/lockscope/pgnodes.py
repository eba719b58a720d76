"""Reading PostgreSQL's node dumps (``outfuncs.c nodeToString`` text), then normalising a dumped Query into the
typed nodes of :mod:`lockscope.querynodes`.

lockscope reads one kind of node dump on users' servers: a view's stored query, ``pg_rewrite.ev_action`` (the
rule action the rewriter expands, :mod:`lockscope.querytree`). The tests read a second one on their own scratch
servers: the rewritten query tree the server prints with ``debug_print_rewritten`` (``print.c
elog_node_display``, ``debug_pretty_print = off``: ``format_node_dump`` only replaces blanks by line breaks, so
joining the lines with blanks restores ``nodeToString``'s text).

Two steps:

1. :func:`parse_node_dump`, the grammar (``read.c pg_strtok`` / ``readfuncs.c``): ``{NAME :field value ...}`` is a
   node, ``( ... )`` a list (``(i 1 2)``, ``(o 16384)``, ``(b 1 3)`` are integer, OID and bitmapset lists), ``<>``
   is NULL, anything else an atom; ``\\`` escapes the next character. A node becomes ``{"node": NAME, field:
   value, ...}``; a field's value is one item, or a list of items when the field holds several tokens (e.g. a datum
   ``4 [ 1 0 0 0 ]``). Atoms stay strings. Node names that changed between majors are given one spelling here.
2. :func:`query_from_dump`: a ``QUERY`` of that result as a :class:`~lockscope.querynodes.Query`. Numbers become
   ints and the headers' enums, ``true``/``false`` bools, here and only here; fields the acquisition-order model
   does not read are dropped, and shapes that differ between majors (MERGE's ``matched`` before PG 17) are read
   into one.
"""

from __future__ import annotations

import re
from typing import Any

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
)

__all__ = ["NodeDumpError", "parse_node_dump", "query_from_dump"]


class NodeDumpError(ValueError):
    """The text is not a node dump lockscope can read."""


#: Node names that changed: PG 13-14's outfuncs.c wrote a RangeTblEntry as ``RTE`` (PG 15+: ``RANGETBLENTRY``).
_NODE_NAMES = {"RTE": "RANGETBLENTRY"}
_TOKEN = re.compile(r"[(){}]|(?:\\.|[^\s(){}\\])+", re.S)
_ESCAPE = re.compile(r"\\(.)", re.S)


def _tokens(text: str) -> list[str]:
    """``read.c pg_strtok``: brackets, and runs of other characters up to a blank or bracket; a backslash
    escapes the next character (an escaped leading ``:`` keeps its backslash, so it is not read as a field)."""
    out: list[str] = []
    for raw in _TOKEN.findall(text):
        if "\\" not in raw:
            out.append(raw)
            continue
        token = _ESCAPE.sub(r"\1", raw)
        out.append("\\" + token if raw.startswith("\\:") else token)
    return out


def parse_node_dump(text: str) -> Any:
    """Parse one ``nodeToString`` dump (as ``format_node_dump`` prints it; line breaks are blanks).

    :param text: e.g. ``({QUERY :commandType 1 ...})``.
    :return: nested dicts (nodes, key ``node`` = node name), lists and atom strings; ``None`` for ``<>``.
    :raises NodeDumpError: unbalanced brackets or an empty text.
    """
    toks = _tokens(text)
    pos = 0

    def item() -> Any:
        nonlocal pos
        tok = toks[pos]
        if tok == "{":
            pos += 1
            node: dict[str, Any] = {"node": _NODE_NAMES.get(toks[pos], toks[pos])}
            pos += 1
            while toks[pos] != "}":
                field = toks[pos]
                if not field.startswith(":"):
                    raise NodeDumpError(f"expected a field name in {node['node']}, got {field!r}")
                pos += 1
                values: list[Any] = []
                while toks[pos] != "}" and not toks[pos].startswith(":"):
                    values.append(item())
                node[field[1:]] = values[0] if len(values) == 1 else (values or None)
            pos += 1
            return node
        if tok == "(":
            pos += 1
            items: list[Any] = []
            while toks[pos] != ")":
                items.append(item())
            pos += 1
            if items and items[0] in ("i", "o", "b", "x") and all(isinstance(x, str) for x in items):
                return [int(x) for x in items[1:]] if items[0] in ("i", "o", "b") else items[1:]
            return items
        pos += 1
        return None if tok == "<>" else tok

    if not toks:
        raise NodeDumpError("empty node dump")
    try:
        result = item()
    except IndexError:
        raise NodeDumpError("node dump ends early (unbalanced brackets)") from None
    return result


# -- the normaliser: node dumps -> typed query-tree nodes ----------------------------------------------------------

#: Nodes whose ``agglevelsup`` / ``phlevelsup`` places them in a query level above their own.
_LEVEL_NODES = frozenset({"AGGREF", "GROUPINGFUNC", "PLACEHOLDERVAR"})
_BOOL_OPS = {"and": BoolExprType.AND_EXPR, "or": BoolExprType.OR_EXPR, "not": BoolExprType.NOT_EXPR}


def query_from_dump(node: Any) -> Query:
    """A ``Query`` of a parsed node dump (:func:`parse_node_dump`) as typed nodes (:mod:`lockscope.querynodes`):
    numbers become ints and enums, ``true``/``false`` bools, once, here.

    Version differences the dumps carry are folded: PG 13-14's ``RTE`` (already renamed by :func:`parse_node_dump`),
    MERGE's ``matched`` (PG 15-16) read as a :class:`~lockscope.querynodes.MergeMatchKind`.

    :param node: a ``{"node": "QUERY", ...}`` dict from :func:`parse_node_dump`.
    :raises NodeDumpError: not a Query, or a field that does not hold what ``outfuncs.c`` writes there.
    """
    d = _node(node, "QUERY")
    try:
        return Query(
            command_type=CmdType(_int(d.get("commandType"))),
            result_relation=_int(d.get("resultRelation")),
            rtable=tuple(_rte(r) for r in _items(d.get("rtable"))),
            jointree=_from_expr(d.get("jointree")) if d.get("jointree") is not None else FromExpr(),
            cte_list=tuple(_cte(c) for c in _items(d.get("cteList"))),
            set_operations=None if d.get("setOperations") is None else _setop_stmt(d["setOperations"]),
            target_list=_exprs(d.get("targetList")),
            returning_list=_exprs(d.get("returningList")),
            having_qual=_expr(d.get("havingQual")),
            limit_offset=_expr(d.get("limitOffset")),
            limit_count=_expr(d.get("limitCount")),
            on_conflict=None if d.get("onConflict") is None else _on_conflict(d["onConflict"]),
            merge_action_list=tuple(_merge_action(a) for a in _items(d.get("mergeActionList"))),
            merge_join_condition=_expr(d.get("mergeJoinCondition")),
            with_check_options=_exprs(d.get("withCheckOptions")),
            has_aggs=_bool(d.get("hasAggs")),
            has_window_funcs=_bool(d.get("hasWindowFuncs")),
            has_target_srfs=_bool(d.get("hasTargetSRFs")),
            has_for_update=_bool(d.get("hasForUpdate")),
            has_recursive=_bool(d.get("hasRecursive")),
            has_group_clause=bool(d.get("groupClause")),
            has_grouping_sets=bool(d.get("groupingSets")),
            has_sort_clause=bool(d.get("sortClause")),
            has_distinct_clause=bool(d.get("distinctClause")),
            has_row_marks=bool(d.get("rowMarks")),
        )
    except NodeDumpError:
        raise
    except ValueError as exc:  # an enum value outside the header's
        raise NodeDumpError(f"unexpected value in a Query: {exc}") from None


def _node(value: Any, name: str) -> dict[str, Any]:
    if not isinstance(value, dict) or value.get("node") != name:
        raise NodeDumpError(f"expected a {name} node, got {str(value)[:60]}")
    return value


def _items(value: Any) -> list[Any]:
    """A list field's items (``<>`` is an empty list; one item may stand alone)."""
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def _int(value: Any) -> int:
    if value is None:
        return 0
    try:
        return int(value)
    except (TypeError, ValueError):
        raise NodeDumpError(f"expected a number, got {str(value)[:60]}") from None


def _bool(value: Any) -> bool:
    return isinstance(value, str) and value == "true"


def _rte(value: Any) -> RangeTblEntry:
    d = _node(value, "RANGETBLENTRY")
    eref: dict[str, Any] = d["eref"] if isinstance(d.get("eref"), dict) else {}
    relkind = d.get("relkind")
    return RangeTblEntry(
        rtekind=RTEKind(_int(d.get("rtekind"))),
        relid=_int(d.get("relid")),
        relkind=relkind if isinstance(relkind, str) else None,
        rellockmode=_int(d.get("rellockmode")),
        inh=_bool(d.get("inh")),
        eref_name=str(eref["aliasname"]) if eref.get("aliasname") is not None else None,
        colnames=tuple(str(c).strip('"') for c in _items(eref.get("colnames"))),
        subquery=None if d.get("subquery") is None else query_from_dump(d["subquery"]),
        security_barrier=_bool(d.get("security_barrier")),
        ctename=None if d.get("ctename") is None else str(d["ctename"]),
        ctelevelsup=_int(d.get("ctelevelsup")),
        functions=_exprs(d.get("functions")),
        tablefunc=_expr(d.get("tablefunc")),
        values_lists=tuple(_exprs(row) for row in _items(d.get("values_lists"))),
        joinaliasvars=_exprs(d.get("joinaliasvars")),
        tablesample=_expr(d.get("tablesample")),
        security_quals=_exprs(d.get("securityQuals")),
    )


def _cte(value: Any) -> CommonTableExpr:
    d = _node(value, "COMMONTABLEEXPR")
    return CommonTableExpr(str(d.get("ctename")), CTEMaterialize(_int(d.get("ctematerialized"))),
                           _bool(d.get("cterecursive")), _int(d.get("cterefcount")),
                           query_from_dump(d.get("ctequery")))


def _jointree_node(value: Any) -> JoinTreeNode:
    name = value.get("node") if isinstance(value, dict) else None
    if name == "RANGETBLREF":
        return RangeTblRef(_int(value.get("rtindex")))
    if name == "JOINEXPR":
        return JoinExpr(JoinType(_int(value.get("jointype"))), _jointree_node(value.get("larg")),
                        _jointree_node(value.get("rarg")), _qual(value.get("quals")), _int(value.get("rtindex")))
    return _from_expr(value)


def _from_expr(value: Any) -> FromExpr:
    d = _node(value, "FROMEXPR")
    return FromExpr(tuple(_jointree_node(item) for item in _items(d.get("fromlist"))), _qual(d.get("quals")))


def _setop(value: Any) -> RangeTblRef | SetOperationStmt:
    if isinstance(value, dict) and value.get("node") == "RANGETBLREF":
        return RangeTblRef(_int(value.get("rtindex")))
    return _setop_stmt(value)


def _setop_stmt(value: Any) -> SetOperationStmt:
    d = _node(value, "SETOPERATIONSTMT")
    return SetOperationStmt(SetOperation(_int(d.get("op"))), _bool(d.get("all")), _setop(d.get("larg")),
                            _setop(d.get("rarg")))


def _on_conflict(value: Any) -> OnConflictExpr:
    d = _node(value, "ONCONFLICTEXPR")
    return OnConflictExpr(_exprs(d.get("arbiterElems")), _expr(d.get("arbiterWhere")), _int(d.get("constraint")),
                          _exprs(d.get("onConflictSet")), _expr(d.get("onConflictWhere")))


def _merge_action(value: Any) -> MergeAction:
    d = _node(value, "MERGEACTION")
    if "matchKind" in d:  # PG 17+
        kind = MergeMatchKind(_int(d["matchKind"]))
    else:
        kind = MergeMatchKind.MERGE_WHEN_MATCHED if _bool(d.get("matched")) \
            else MergeMatchKind.MERGE_WHEN_NOT_MATCHED_BY_TARGET
    return MergeAction(kind, _expr(d.get("qual")), _exprs(d.get("targetList")))


def _qual(value: Any) -> Expression | None:
    """A qual: one expression, or an implicit-AND list of them."""
    if isinstance(value, list):
        return BoolExpr(BoolExprType.AND_EXPR, _exprs(value))
    return _expr(value)


def _exprs(value: Any) -> tuple[Expression, ...]:
    """The expressions of a list field (a ``TargetEntry`` is its expression; ``<>`` items are left out)."""
    return tuple(e for item in _items(value) if (e := _expr(item)) is not None)


def _sub_exprs(d: dict[str, Any]) -> tuple[Expression, ...]:
    """Every expression in the fields of a node, text order (lists flattened; atoms left out)."""
    out: list[Expression] = []

    def visit(value: Any) -> None:
        if isinstance(value, list):
            for item in value:
                visit(item)
        elif isinstance(value, dict):
            expr = _expr(value)
            if expr is not None:
                out.append(expr)

    for key, value in d.items():
        if key != "node":
            visit(value)
    return tuple(out)


def _expr(value: Any) -> Expression | None:
    """One expression node (None for ``<>`` and atoms; a list standing for one expression is an ``OtherExpr``
    ``LIST``)."""
    if isinstance(value, list):
        return OtherExpr("LIST", _exprs(value))
    if not isinstance(value, dict):
        return None
    name = str(value.get("node"))
    if name == "VAR":
        return Var(_int(value.get("varno")), _int(value.get("varlevelsup")))
    if name == "SUBLINK":
        return SubLink(SubLinkType(_int(value.get("subLinkType"))), _expr(value.get("testexpr")),
                       query_from_dump(value.get("subselect")))
    if name == "BOOLEXPR":
        op = _BOOL_OPS.get(str(value.get("boolop")))
        if op is None:
            raise NodeDumpError(f"unexpected boolop {value.get('boolop')!r}")
        return BoolExpr(op, _exprs(value.get("args")))
    if name == "TARGETENTRY":
        return _expr(value.get("expr"))
    if name == "QUERY":
        raise NodeDumpError("a Query outside a sublink, subquery or WITH query")
    if name in _LEVEL_NODES:
        return LevelExpr(name, _int(value.get("phlevelsup", value.get("agglevelsup"))), _sub_exprs(value))
    funcid = _int(value.get("funcid")) or _int(value.get("opfuncid"))
    if funcid:
        return FunctionRef(funcid, _sub_exprs(value))
    return OtherExpr(name, _sub_exprs(value))
