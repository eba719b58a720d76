"""PostgreSQL's query-tree nodes as the acquisition-order model reads them: the enums and one frozen dataclass per node.

A rewritten ``Query`` (the tree ``postgres.c pg_rewrite_query`` hands to the planner) reaches lockscope from two
sources, and both are normalised into these nodes where they enter, so every number is an ``int`` or an
:class:`~enum.IntEnum` member and every flag a ``bool`` from there on:

- the **client-side analyser**, :mod:`lockscope.querytree`, builds them directly from PostgreSQL's own parse tree
  (pglast) and the catalog;
- the **server's node dumps** (``outfuncs.c nodeToString`` text: a view's ``pg_rewrite.ev_action``, the tests'
  ``debug_print_rewritten`` oracle) are read by :func:`lockscope.pgnodes.query_from_dump`.

The model (:mod:`lockscope.acquisition`) reads the nodes named below; fields it never reads are left out (a
``Query``'s window clauses, row marks' contents, permission info; a ``RangeTblEntry``'s column types, aliases beyond
the reference name). Expressions keep what the model inspects (:class:`Var` with ``varno``/``varlevelsup``,
:class:`FunctionRef` with the function called, :class:`SubLink` with its subquery, :class:`BoolExpr`, the query
level of an aggregate, :class:`LevelExpr`); every other expression node is an :class:`OtherExpr` (its name and its
sub-expressions in text order), which the model only walks through. A ``TargetEntry`` is its expression.

The enums are the headers' (member names as in the C sources), for the values every major 13-19 shares.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, TypeVar

from .capacity import LOCK_MODES

__all__ = [
    "BoolExpr",
    "BoolExprType",
    "CTEMaterialize",
    "CmdType",
    "CommonTableExpr",
    "Expression",
    "FromExpr",
    "FunctionRef",
    "JoinExpr",
    "JoinTreeNode",
    "JoinType",
    "LevelExpr",
    "MergeAction",
    "MergeMatchKind",
    "Node",
    "OnConflictExpr",
    "OtherExpr",
    "Query",
    "RTEKind",
    "RangeTblEntry",
    "RangeTblRef",
    "SetOperation",
    "SetOperationStmt",
    "SubLink",
    "SubLinkType",
    "Var",
    "children",
    "lock_mode_name",
    "lock_mode_number",
    "map_level_sublinks",
    "nodes_in",
    "walk",
]


# -- the enums ----------------------------------------------------------------------------------------------------

class CmdType(IntEnum):
    """``nodes.h CmdType``: the statement kinds the model orders (0-5 in every major 13-19; ``CMD_MERGE`` from
    PG 15; ``CMD_UTILITY`` and ``CMD_NOTHING``, which follow and moved when MERGE came, never reach a tree lockscope
    reads)."""

    CMD_UNKNOWN = 0
    CMD_SELECT = 1
    CMD_UPDATE = 2
    CMD_INSERT = 3
    CMD_DELETE = 4
    CMD_MERGE = 5


class RTEKind(IntEnum):
    """``parsenodes.h RTEKind``: what a range-table entry stands for (``RTE_GROUP`` from PG 18)."""

    RTE_RELATION = 0
    RTE_SUBQUERY = 1
    RTE_JOIN = 2
    RTE_FUNCTION = 3
    RTE_TABLEFUNC = 4
    RTE_VALUES = 5
    RTE_CTE = 6
    RTE_NAMEDTUPLESTORE = 7
    RTE_RESULT = 8
    RTE_GROUP = 9


class JoinType(IntEnum):
    """``nodes.h JoinType``: the values every major 13-19 shares (the parser makes the first four; the planner's
    later kinds were renumbered in PG 16 and 18 and never appear in a rewritten tree)."""

    JOIN_INNER = 0
    JOIN_LEFT = 1
    JOIN_FULL = 2
    JOIN_RIGHT = 3
    JOIN_SEMI = 4
    JOIN_ANTI = 5


class SubLinkType(IntEnum):
    """``primnodes.h SubLinkType``."""

    EXISTS_SUBLINK = 0
    ALL_SUBLINK = 1
    ANY_SUBLINK = 2
    ROWCOMPARE_SUBLINK = 3
    EXPR_SUBLINK = 4
    MULTIEXPR_SUBLINK = 5
    ARRAY_SUBLINK = 6
    CTE_SUBLINK = 7


class CTEMaterialize(IntEnum):
    """``parsenodes.h CTEMaterialize``: ``[NOT] MATERIALIZED`` as written (PG 12+)."""

    CTEMaterializeDefault = 0
    CTEMaterializeAlways = 1
    CTEMaterializeNever = 2


class SetOperation(IntEnum):
    """``nodes.h SetOperation`` (``parsenodes.h`` before PG 16)."""

    SETOP_NONE = 0
    SETOP_UNION = 1
    SETOP_INTERSECT = 2
    SETOP_EXCEPT = 3


class BoolExprType(IntEnum):
    """``primnodes.h BoolExprType`` (``outfuncs.c _outBoolExpr`` writes it as ``and``, ``or``, ``not``)."""

    AND_EXPR = 0
    OR_EXPR = 1
    NOT_EXPR = 2


class MergeMatchKind(IntEnum):
    """``primnodes.h MergeMatchKind`` (PG 17+; before, ``MergeAction.matched`` true or false: MATCHED or NOT
    MATCHED [BY TARGET])."""

    MERGE_WHEN_MATCHED = 0
    MERGE_WHEN_NOT_MATCHED_BY_SOURCE = 1
    MERGE_WHEN_NOT_MATCHED_BY_TARGET = 2


def lock_mode_number(name: str) -> int:
    """``lockdefs.h``: the LOCKMODE number of a pg_locks mode name (``AccessShareLock`` 1 ... ``AccessExclusiveLock``
    8), as ``RangeTblEntry.rellockmode`` holds it.

    :raises ValueError: not a relation lock mode.
    """
    return LOCK_MODES.index(name) + 1


def lock_mode_name(number: int, default: str = "AccessShareLock") -> str:
    """The pg_locks name of a LOCKMODE number (``lockdefs.h``); ``default`` for 0 (``NoLock``) or a number that
    is no lock mode."""
    return LOCK_MODES[number - 1] if 1 <= number <= len(LOCK_MODES) else default


# -- expressions --------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Var:
    """``primnodes.h Var``: a column of range-table entry ``varno`` of the query ``varlevelsup`` levels up (0: this
    level); a whole-row reference has the same two fields."""

    varno: int
    varlevelsup: int = 0


@dataclass(frozen=True)
class FunctionRef:
    """A call of one function: ``primnodes.h FuncExpr`` (``funcid``) or an operator node that names its function
    (``OpExpr``, ``DistinctExpr``, ``NullIfExpr``, ``ScalarArrayOpExpr``: ``opfuncid``).

    :ivar funcid: the function's OID (0: not known yet; the client-side analyser gives the statement's own calls
        negative ids, one per function name, see :class:`lockscope.querytree.QueryTree`).
    :ivar args: the sub-expressions, text order.
    """

    funcid: int
    args: tuple[Expression, ...] = ()


@dataclass(frozen=True)
class LevelExpr:
    """An expression that belongs to a query level above its own: ``Aggref`` and ``GroupingFunc``
    (``agglevelsup``), ``PlaceHolderVar`` (``phlevelsup``).

    :ivar name: the node's name as ``outfuncs.c`` writes it (``AGGREF``, ``GROUPINGFUNC``, ``PLACEHOLDERVAR``).
    :ivar levelsup: how many query levels up it is evaluated.
    :ivar args: the sub-expressions, text order.
    """

    name: str
    levelsup: int
    args: tuple[Expression, ...] = ()


@dataclass(frozen=True)
class BoolExpr:
    """``primnodes.h BoolExpr``: AND, OR or NOT of ``args`` (an implicit-AND qual list is read as AND)."""

    boolop: BoolExprType
    args: tuple[Expression, ...] = ()


@dataclass(frozen=True)
class SubLink:
    """``primnodes.h SubLink``: a subquery in an expression.

    :ivar sublink_type: EXISTS, ANY (``IN``), EXPR (scalar) ...
    :ivar testexpr: the left-hand comparison of ANY/ALL/ROWCOMPARE, else None.
    :ivar subselect: the subquery, one level down.
    """

    sublink_type: SubLinkType
    testexpr: Expression | None
    subselect: Query


@dataclass(frozen=True)
class OtherExpr:
    """Any other expression node, which the model walks through: its name (``OPEXPR`` without a function,
    ``CONST``, ``RANGETBLFUNCTION``, ``CASEEXPR`` ...; ``LIST`` for a list standing where one expression is) and its
    sub-expressions in text order."""

    name: str
    args: tuple[Expression, ...] = ()


#: An expression node.
Expression = Var | FunctionRef | LevelExpr | BoolExpr | SubLink | OtherExpr


# -- the join tree and set operations --------------------------------------------------------------------------

@dataclass(frozen=True)
class RangeTblRef:
    """``primnodes.h RangeTblRef``: range-table entry ``rtindex`` (1-based) in a join tree or set-operation tree."""

    rtindex: int


@dataclass(frozen=True)
class JoinExpr:
    """``primnodes.h JoinExpr``: ``larg <jointype> JOIN rarg ON quals``; ``rtindex`` is the join's own entry."""

    jointype: JoinType
    larg: JoinTreeNode
    rarg: JoinTreeNode
    quals: Expression | None = None
    rtindex: int = 0


@dataclass(frozen=True)
class FromExpr:
    """``primnodes.h FromExpr``: a FROM list (its items joined) and the WHERE qual."""

    fromlist: tuple[JoinTreeNode, ...] = ()
    quals: Expression | None = None


#: A join-tree node.
JoinTreeNode = RangeTblRef | JoinExpr | FromExpr


@dataclass(frozen=True)
class SetOperationStmt:
    """``parsenodes.h SetOperationStmt``: ``larg <op> [ALL] rarg``; the leaves are :class:`RangeTblRef` to
    subquery entries."""

    op: SetOperation
    all: bool
    larg: RangeTblRef | SetOperationStmt
    rarg: RangeTblRef | SetOperationStmt


# -- statement parts ------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class OnConflictExpr:
    """``primnodes.h OnConflictExpr``: INSERT's ON CONFLICT clause.

    :ivar arbiter_elems: the conflict target's index elements (``InferenceElem``), empty without one.
    :ivar arbiter_where: the conflict target's index predicate.
    :ivar constraint_oid: ``ON CONFLICT ON CONSTRAINT``'s constraint (0: none).
    :ivar on_conflict_set: DO UPDATE's SET expressions.
    :ivar on_conflict_where: DO UPDATE's WHERE.
    """

    arbiter_elems: tuple[Expression, ...] = ()
    arbiter_where: Expression | None = None
    constraint_oid: int = 0
    on_conflict_set: tuple[Expression, ...] = ()
    on_conflict_where: Expression | None = None


@dataclass(frozen=True)
class MergeAction:
    """``primnodes.h MergeAction``: one WHEN clause of MERGE (its condition and its UPDATE/INSERT expressions)."""

    match_kind: MergeMatchKind
    qual: Expression | None = None
    target_list: tuple[Expression, ...] = ()


@dataclass(frozen=True)
class CommonTableExpr:
    """``parsenodes.h CommonTableExpr``: one WITH query.

    :ivar ctename: its name.
    :ivar ctematerialized: ``[NOT] MATERIALIZED`` as written.
    :ivar cterecursive: it references itself (WITH RECURSIVE).
    :ivar cterefcount: references to it, the recursive self-reference not counted.
    :ivar ctequery: the analysed query.
    """

    ctename: str
    ctematerialized: CTEMaterialize
    cterecursive: bool
    cterefcount: int
    ctequery: Query


@dataclass(frozen=True)
class RangeTblEntry:
    """``parsenodes.h RangeTblEntry``: one entry of a range table (fields of other kinds are zero/empty).

    :ivar rtekind: what it stands for.
    :ivar relid: the relation's OID (relations; PG 16+ also on a view's subquery entry, ``rewriteHandler.c
        ApplyRetrieveRule``), else 0.
    :ivar relkind: ``pg_class.relkind`` of ``relid``, else None.
    :ivar rellockmode: the lock the query takes on it, a ``lockdefs.h`` number (:func:`lock_mode_name`; 0 none).
    :ivar inh: inheritance children / partitions are included (no ``ONLY``).
    :ivar eref_name: the reference name (``eref.aliasname``).
    :ivar colnames: the column names (``eref.colnames``), attnum order.
    :ivar subquery: the subquery (``RTE_SUBQUERY``).
    :ivar security_barrier: a subquery from a ``security_barrier`` view.
    :ivar ctename: the CTE referenced (``RTE_CTE``).
    :ivar ctelevelsup: how many query levels up that CTE is defined.
    :ivar functions: ``RangeTblFunction`` items (``RTE_FUNCTION``).
    :ivar tablefunc: the ``TableFunc`` (``RTE_TABLEFUNC``).
    :ivar values_lists: the rows of a VALUES list (``RTE_VALUES``).
    :ivar joinaliasvars: a join entry's output columns as expressions (``RTE_JOIN``).
    :ivar tablesample: the TABLESAMPLE clause.
    :ivar security_quals: quals the rewriter added (row-level security).
    """

    rtekind: RTEKind
    relid: int = 0
    relkind: str | None = None
    rellockmode: int = 0
    inh: bool = False
    eref_name: str | None = None
    colnames: tuple[str, ...] = ()
    subquery: Query | None = None
    security_barrier: bool = False
    ctename: str | None = None
    ctelevelsup: int = 0
    functions: tuple[Expression, ...] = ()
    tablefunc: Expression | None = None
    values_lists: tuple[tuple[Expression, ...], ...] = ()
    joinaliasvars: tuple[Expression, ...] = ()
    tablesample: Expression | None = None
    security_quals: tuple[Expression, ...] = ()


@dataclass(frozen=True)
class Query:
    """``parsenodes.h Query``: one query level of a rewritten statement.

    :ivar command_type: SELECT, UPDATE, INSERT, DELETE or MERGE.
    :ivar result_relation: the DML target's range-table index (1-based), 0 for SELECT.
    :ivar rtable: the range table, parser order.
    :ivar jointree: FROM and WHERE.
    :ivar cte_list: the WITH queries of this level.
    :ivar set_operations: the UNION/INTERSECT/EXCEPT tree of a set-operation query, else None.
    :ivar target_list: the output (or SET / VALUES) expressions.
    :ivar returning_list: RETURNING expressions.
    :ivar having_qual: HAVING.
    :ivar limit_offset: OFFSET.
    :ivar limit_count: LIMIT.
    :ivar on_conflict: INSERT's ON CONFLICT clause.
    :ivar merge_action_list: MERGE's WHEN clauses.
    :ivar merge_join_condition: MERGE's ON condition (PG 17+; before, it is the join tree's quals).
    :ivar with_check_options: the rewriter's WITH CHECK OPTION quals.
    :ivar has_aggs: ``hasAggs``.
    :ivar has_window_funcs: ``hasWindowFuncs``.
    :ivar has_target_srfs: ``hasTargetSRFs``.
    :ivar has_for_update: ``hasForUpdate`` (FOR UPDATE/SHARE).
    :ivar has_recursive: ``hasRecursive`` (WITH RECURSIVE).
    :ivar has_group_clause: GROUP BY.
    :ivar has_grouping_sets: GROUPING SETS / ROLLUP / CUBE.
    :ivar has_sort_clause: ORDER BY.
    :ivar has_distinct_clause: DISTINCT [ON].
    :ivar has_row_marks: row marks (FOR UPDATE/SHARE of some entry).
    """

    command_type: CmdType
    result_relation: int = 0
    rtable: tuple[RangeTblEntry, ...] = ()
    jointree: FromExpr = FromExpr()
    cte_list: tuple[CommonTableExpr, ...] = ()
    set_operations: SetOperationStmt | None = None
    target_list: tuple[Expression, ...] = ()
    returning_list: tuple[Expression, ...] = ()
    having_qual: Expression | None = None
    limit_offset: Expression | None = None
    limit_count: Expression | None = None
    on_conflict: OnConflictExpr | None = None
    merge_action_list: tuple[MergeAction, ...] = ()
    merge_join_condition: Expression | None = None
    with_check_options: tuple[Expression, ...] = ()
    has_aggs: bool = False
    has_window_funcs: bool = False
    has_target_srfs: bool = False
    has_for_update: bool = False
    has_recursive: bool = False
    has_group_clause: bool = False
    has_grouping_sets: bool = False
    has_sort_clause: bool = False
    has_distinct_clause: bool = False
    has_row_marks: bool = False


#: Any node of a query tree.
Node = (Expression | JoinTreeNode | SetOperationStmt | OnConflictExpr | MergeAction | CommonTableExpr
        | RangeTblEntry | Query)
_NODE_TYPES = (Var, FunctionRef, LevelExpr, BoolExpr, SubLink, OtherExpr, RangeTblRef, JoinExpr, FromExpr,
               SetOperationStmt, OnConflictExpr, MergeAction, CommonTableExpr, RangeTblEntry, Query)


# -- walking -------------------------------------------------------------------------------------------------------

def nodes_in(value: object) -> Iterator[Node]:
    """The nodes a field's value holds: the node itself, or a tuple's nodes (nested tuples flattened), in order;
    nothing for None and other values."""
    if isinstance(value, _NODE_TYPES):
        yield value
    elif isinstance(value, tuple):
        for item in value:
            yield from nodes_in(item)


def children(node: Node, *, skip: frozenset[str] = frozenset()) -> Iterator[Node]:
    """The nodes directly below ``node``, in field order (text order within a field), leaving out the fields
    named in ``skip`` (dataclass field names, e.g. ``{"rtable"}``)."""
    for f in dataclasses.fields(node):
        if f.name not in skip:
            yield from nodes_in(getattr(node, f.name))


def walk(node: Node | None) -> Iterator[Node]:
    """``node`` and every node below it, depth first in text order (into subqueries and sublinks too)."""
    if node is None:
        return
    stack: list[Node] = [node]
    while stack:
        item = stack.pop()
        yield item
        stack.extend(reversed(list(children(item))))


_N = TypeVar("_N", bound=Node)


def _map_sublinks(node: _N, fn: Callable[[Query], Query]) -> _N:
    """``node`` with every sublink below it, not inside a nested query, given ``fn(subselect)`` as its subquery
    (sublinks inside a sublink's test expression too)."""
    if isinstance(node, Query):
        return node
    if isinstance(node, SubLink):
        test = None if node.testexpr is None else _map_sublinks(node.testexpr, fn)
        return dataclasses.replace(node, testexpr=test, subselect=fn(node.subselect))
    changes = {f.name: _map_value(getattr(node, f.name), fn) for f in dataclasses.fields(node)}
    return dataclasses.replace(node, **changes)


def _map_value(value: Any, fn: Callable[[Query], Query]) -> Any:
    if isinstance(value, _NODE_TYPES):
        return _map_sublinks(value, fn)
    if isinstance(value, tuple):
        return tuple(_map_value(item, fn) for item in value)
    return value


def map_level_sublinks(query: Query, fn: Callable[[Query], Query]) -> Query:
    """``query`` with ``fn`` applied to the subquery of every sublink of this query level: in its expressions and in
    its range table's function and VALUES lists (not in CTEs or FROM subqueries, nor inside the subqueries
    themselves: ``fn`` decides about those)."""
    changes = {f.name: _map_value(getattr(query, f.name), fn) for f in dataclasses.fields(query)
               if f.name not in ("rtable", "cte_list")}
    rtable = tuple(dataclasses.replace(rte, functions=_map_value(rte.functions, fn),
                                       values_lists=_map_value(rte.values_lists, fn)) for rte in query.rtable)
    return dataclasses.replace(query, rtable=rtable, **changes)
