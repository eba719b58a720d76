"""The order in which one backend acquires a statement's relation locks (the acquisition-order model).

The fast-path flag of a lock depends on how many slots of its group (``lock.c FAST_PATH_REL_GROUP``) were taken
before it, so the capacity model (``capacity.simulate_fast_path``) must see the lock requests in the server's order.
This module derives that order from:

- the statement's **rewritten query tree** (the tree ``postgres.c pg_rewrite_query`` produces) as the typed nodes
  of :mod:`lockscope.querynodes`, built on the client by :mod:`lockscope.querytree` from PostgreSQL's own parser
  and the catalog: range tables in parser order with relation OIDs and lock modes, views expanded as the rewriter
  does, CTEs, sublinks, join trees. (The server can print that tree with ``debug_print_rewritten``, but only into
  its log too; lockscope uses that only as the test oracle on scratch servers, ``tests/order_oracle.py``, read
  into the same nodes by :func:`lockscope.pgnodes.query_from_dump`.)
- the **catalog**: live indexes per relation in OID order (``relcache.c RelationGetIndexList``), partitions in
  partition-bound order (``partdesc.c RelationBuildPartitionDesc`` → ``partbounds.c partition_bounds_create``),
  legacy inheritance children (``pg_inherits.c find_all_inheritors``), function volatility;
- the **plan** text (``CTE name`` subplans) to know which CTEs were materialised.

Rules, each with the source it follows (``order_rule`` names in brackets):

1. ``parser``: ``analyze.c transformSelectStmt`` / ``transformUpdateStmt`` / ``transformDeleteStmt`` /
   ``transformInsertStmt`` / ``parse_merge.c transformMergeStmt``: WITH queries first, then the DML target
   (``parse_clause.c setTargetTable``), then FROM items left to right (``transformFromClauseItem``: a JOIN's left
   side, right side, then its ON clause's sublinks), then the target list, WHERE, HAVING, LIMIT sublinks (UPDATE:
   WHERE and RETURNING before the SET list). Views are locked where they are named.
2. ``rewriter``: ``rewriteHandler.c fireRIRrules`` → ``ApplyRetrieveRule`` → ``AcquireRewriteLocks``: after
   parsing, each view (range-table order, then CTEs, then sublinks) has its own range table locked, then the
   views nested in it.
3. ``plancache``: a prepared statement re-locks its query tree first on every execution
   (``plancache.c RevalidateCachedQuery`` → ``AcquirePlannerLocks`` → ``ScanQueryForLocks``): range table in
   order (a view, then its subquery, depth first), then CTEs, then sublinks (``nodeFuncs.c query_tree_walker``).
4. Planner, per query level (``planner.c subquery_planner``):
   a. ``planner-cte``-context: materialised CTEs are planned first (``subselect.c SS_process_ctes``; a CTE is
      inlined when it is a non-recursive, side-effect-free SELECT referenced once or ``NOT MATERIALIZED``;
      unreferenced SELECT CTEs are not planned);
   b. IN/ANY and EXISTS sublinks of WHERE / JOIN ON are pulled up into semi/anti joins
      (``prepjointree.c pull_up_sublinks``: ``convert_ANY_sublink_to_join``, ``convert_EXISTS_sublink_to_join``),
      simple subqueries and views are flattened into the join tree in place (``pull_up_subqueries``,
      ``is_simple_subquery``), RIGHT joins are turned into LEFT joins by swapping sides
      (``reduce_outer_joins``);
   c. sublinks left over are planned as SubPlans before the level's own relations (``preprocess_expression`` →
      ``subselect.c make_subplan``), in the order target list, RETURNING, join-tree quals, HAVING, LIMIT;
   d. ``planner-index``: every base relation in join-tree order has all its live indexes locked in OID order
      with the relation's own lock mode (``initsplan.c add_base_rels_to_query`` → ``relnode.c build_simple_rel``
      → ``plancat.c get_relation_info``): so all RowExclusiveLock index locks of an UPDATE/DELETE/MERGE target
      come before the index locks of a subquery on the same table. A partitioned table's own indexes only on
      PG 16+ (commit 3c569049b7); an inheritance parent's indexes come with its expansion;
   e. ``planner-partition`` / ``planner-inheritance``: then, in range-table order, inheritance parents are
      expanded (``initsplan.c add_other_rels_to_query`` → ``inherit.c expand_inherited_rtentry``): partitions in
      bound order, each partition locked then its indexes, sub-partitions depth first
      (``expand_partitioned_rtentry``); legacy inheritance locks all children first (``find_all_inheritors``,
      breadth first, OID order) and then indexes child by child. A UNION ALL appendrel (a top-level UNION ALL,
      ``prepjointree.c flatten_simple_union_all``, or one in FROM, ``pull_up_simple_union_all``) is expanded
      here too (``expand_appendrel_subquery``): its simple one-table leaves were pulled up, and their relations'
      indexes are locked now, leaf by leaf;
   f. subqueries in FROM that were not flattened are planned last, in range-table order
      (``allpaths.c set_base_rel_sizes`` → ``set_subquery_pathlist``), the other UNION ALL leaves among them;
   g. ``planner-arbiter``: ``INSERT ... ON CONFLICT`` with a conflict target opens every index of the target in
      OID order when the plan is made (``createplan.c make_modifytable`` → ``plancat.c
      infer_arbiter_indexes``).

   Sublinks: a convertible ``IN``/``EXISTS`` in an inner join's ON clause becomes a semi/anti join stacked above
   that join (both sides available), in a LEFT join's ON clause one inside its right side, in a RIGHT join's inside
   its left side (``pull_up_sublinks_jointree_recurse``); ``EXISTS`` keeps its pull-up despite GROUP BY, which
   ``simplify_EXISTS_query`` drops. Sublinks in range-table expressions (functions, VALUES lists) are planned
   after the level's other expressions (``subquery_planner``).
5. ``executor-rtable``: reusing a cached generic plan re-locks its final range table (``plancache.c
   CheckCachedPlan`` → ``AcquireExecutorLocks``): after the ``plancache`` locks come the partitions, in the
   order ``setrefs.c add_rtes_to_flat_rtable`` lists them (top level, then subquery levels, then subplans).
6. ``unmodelled``: a measured lock the model did not produce (appended in OID order; a visible model gap).
7. ``unknown``: the query tree could not be built on the client (a shape :mod:`lockscope.querytree` does not
   reproduce): the locks are in the catalog order of :func:`acquisition_order`.

Only the first request of a (relation, mode) takes a slot; a repeated one is a local-lock hit
(``lock.c LockAcquireExtended``), and a second mode on a relation already in a slot shares it
(``FastPathGrantRelationLock``). Both are in ``capacity.simulate_fast_path``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any, Protocol

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
    MergeMatchKind,
    Node,
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
    lock_mode_name,
    nodes_in,
    walk,
)
from .versions import PG16 as _PG16
from .versions import PG18 as _PG18

if TYPE_CHECKING:
    from .rows import AcquisitionFactsRow

__all__ = [
    "ORDER_RULES",
    "CatalogFacts",
    "CatalogRelation",
    "LockStep",
    "RelationFacts",
    "acquisition_order",
    "catalog_facts_from_rows",
    "order_partitions",
    "partition_sort_key",
    "statement_lock_steps",
    "tree_function_oids",
    "tree_relation_oids",
]

#: ``order_rule`` values, see the module docstring.
ORDER_RULES = (
    "parser", "rewriter", "plancache", "planner-index", "planner-partition", "planner-inheritance",
    "planner-arbiter", "executor-rtable", "unknown", "unmodelled",
)


@dataclass(frozen=True)
class LockStep:
    """One lock request in modelled acquisition order.

    :ivar relation_oid: the relation's OID.
    :ivar mode: pg_locks mode name.
    :ivar rule: one of :data:`ORDER_RULES`: which rule placed it.
    """

    relation_oid: int
    mode: str
    rule: str


@dataclass(frozen=True)
class RelationFacts:
    """Catalog facts of one relation.

    :ivar oid: OID.
    :ivar relkind: pg_class.relkind.
    :ivar parent_oid: pg_inherits parent, or None.
    :ivar index_oids: live indexes, OID order (``RelationGetIndexList``).
    :ivar children: partitions in bound order (partitioned table) or inheritance children in OID order.
    :ivar bound: ``FOR VALUES ...`` text of a partition, or None.
    :ivar partstrat: ``l``, ``r`` or ``h`` for a partitioned table, else None.
    """

    oid: int
    relkind: str
    parent_oid: int | None
    index_oids: tuple[int, ...] = ()
    children: tuple[int, ...] = ()
    bound: str | None = None
    partstrat: str | None = None


@dataclass(frozen=True)
class CatalogFacts:
    """What the model needs from the catalog.

    :ivar relations: by OID, for every relation of the statement and all its descendants.
    :ivar volatile_functions: OIDs of volatile functions used in the statement.
    :ivar materialized_ctes: names of CTEs the plan shows as separate subplans (``CTE name``), or None if unknown.
    """

    relations: Mapping[int, RelationFacts]
    volatile_functions: frozenset[int] = frozenset()
    materialized_ctes: frozenset[str] | None = None


# -- partition bound order --------------------------------------------------------------------------------------

_LITERAL = re.compile(r"'(?:[^']|'')*'|MINVALUE|MAXVALUE|NULL|true|false|[-+]?[0-9][0-9.eE+-]*")


def _bound_values(text: str) -> list[str]:
    return _LITERAL.findall(text)


def _py_value(token: str) -> tuple[int, Any]:
    """(flag, value): flag 0 = MINVALUE, 1 = a value, 2 = MAXVALUE (partbounds.c PartitionRangeDatumKind)."""
    if token == "MINVALUE":
        return (0, 0)
    if token == "MAXVALUE":
        return (2, 0)
    if token.startswith("'"):
        inner = token[1:-1].replace("''", "'")
        if re.fullmatch(r"-[0-9]+(\.[0-9]+)?", inner):
            return (1, Decimal(inner))
        return (1, inner)
    if token in ("true", "false"):
        return (1, token == "true")
    try:
        return (1, Decimal(token))
    except InvalidOperation:
        return (1, token)


def partition_sort_key(strategy: str | None, bound: str | None) -> tuple[Any, ...]:
    """Sort key of a partition from its bound text alone (catalog-only path; see :func:`order_partitions`).

    Follows ``partbounds.c create_list_bounds`` / ``create_range_bounds`` / ``create_hash_bounds``: hash by
    (modulus, remainder); range by lower bound (MINVALUE first); list by smallest value; NULL-only list
    partitions after those, DEFAULT last. Values compare as numbers, booleans or strings in code-point order —
    exact for numbers, dates and ISO timestamps with one UTC offset, and for text in the C collation; the
    server-side ordering (:func:`order_partitions` with a session) is exact for every type and collation.
    """
    text = bound or ""
    if text.strip().upper() == "DEFAULT":
        return (3,)
    if strategy == "h":
        nums = [int(x) for x in re.findall(r"\d+", text)]
        return (0, tuple(nums[:2]))
    values = _bound_values(text.split(" TO ")[0]) if strategy == "r" else _bound_values(text)
    parsed = [_py_value(v) for v in values if v != "NULL"]
    if strategy == "l":
        if not parsed:
            return (2,)
        return (0, min(v for _, v in parsed))
    return (0, tuple((flag, value) for flag, value in parsed))


def order_partitions(children: Sequence[RelationFacts], strategy: str | None,
                     server_order: Mapping[int, int] | None = None) -> list[int]:
    """Partitions in ``PartitionDesc`` order (``partdesc.c RelationBuildPartitionDesc``).

    :param children: the partitions of one partitioned table.
    :param strategy: ``l``, ``r``, ``h``.
    :param server_order: rank by OID computed by the server (exact), when available.
    :return: OIDs in bound order.
    """
    if server_order and all(c.oid in server_order for c in children):
        return [c.oid for c in sorted(children, key=lambda c: server_order[c.oid])]
    if strategy == "l":
        # create_list_bounds: all values sorted, each partition gets its index at its first (smallest) value.
        pairs: list[tuple[Any, int]] = []
        null_only: list[int] = []
        default: list[int] = []
        for c in children:
            if (c.bound or "").strip().upper() == "DEFAULT":
                default.append(c.oid)
                continue
            vals = [_py_value(v)[1] for v in _bound_values(c.bound or "") if v != "NULL"]
            if not vals:
                null_only.append(c.oid)
            pairs.extend((v, c.oid) for v in vals)
        try:
            pairs.sort(key=lambda p: p[0])
        except TypeError:
            pairs.sort(key=lambda p: str(p[0]))
        out = list(dict.fromkeys(oid for _, oid in pairs))
        return out + sorted(null_only) + default
    try:
        return [c.oid for c in sorted(children, key=lambda c: (partition_sort_key(strategy, c.bound), c.oid))]
    except TypeError:
        return [c.oid for c in sorted(children, key=lambda c: (str(partition_sort_key(strategy, c.bound)), c.oid))]


def catalog_facts_from_rows(rows: Iterable[AcquisitionFactsRow],
                            server_order: Mapping[int, Mapping[int, int]] | None = None,
                            volatile_functions: Iterable[int] = (),
                            materialized_ctes: Iterable[str] | None = None) -> CatalogFacts:
    """Build :class:`CatalogFacts` from ``acquisition_facts.sql`` rows.

    :param server_order: per partitioned table, the server's rank of each partition (see ``footprint``).
    """
    base = {r.relation_oid: r for r in rows if r.relkind not in ("i", "I")}  # index rows carry names only
    kids: dict[int, list[int]] = {}
    for oid, r in base.items():
        if r.parent_oid is not None and r.parent_oid in base:
            kids.setdefault(r.parent_oid, []).append(oid)
    rels: dict[int, RelationFacts] = {}

    def plain(oid: int) -> RelationFacts:
        r = base[oid]
        return RelationFacts(oid, r.relkind, r.parent_oid, tuple(r.index_oids or ()), (), r.bound, r.partstrat)

    for oid in base:
        rels[oid] = plain(oid)
    for oid, child_oids in kids.items():
        me = rels[oid]
        children = [rels[c] for c in sorted(child_oids)]
        if me.relkind == "p":
            ordered = order_partitions(children, me.partstrat, (server_order or {}).get(oid))
        else:
            ordered = [c.oid for c in children]
        rels[oid] = RelationFacts(me.oid, me.relkind, me.parent_oid, me.index_oids, tuple(ordered), me.bound,
                                  me.partstrat)
    return CatalogFacts(rels, frozenset(volatile_functions),
                        None if materialized_ctes is None else frozenset(materialized_ctes))


# -- query tree helpers -----------------------------------------------------------------------------------------

def _mode(rte: RangeTblEntry) -> str:
    return lock_mode_name(rte.rellockmode)


def _sublinks(value: object) -> list[SubLink]:
    """SubLink nodes in text order, not descending into them (nor into nested Query nodes)."""
    found: list[SubLink] = []

    def visit(node: Node) -> None:
        if isinstance(node, SubLink):
            found.append(node)
        elif not isinstance(node, Query):
            for child in children(node):
                visit(child)

    for node in nodes_in(value):
        visit(node)
    return found


def _query_sublinks(q: Query) -> list[SubLink]:
    """Sublinks of one query level in ``nodeFuncs.c query_tree_walker`` order (range-table subqueries and
    CTEs excluded, as with ``QTW_IGNORE_RC_SUBQUERIES``)."""
    out: list[SubLink] = []
    for value in (q.target_list, q.with_check_options, q.on_conflict, q.merge_action_list, q.merge_join_condition,
                  q.returning_list, q.jointree, q.set_operations, q.having_qual, q.limit_offset, q.limit_count):
        out.extend(_sublinks(value))
    for rte in q.rtable:
        out.extend(_sublinks((rte.functions, rte.tablefunc, rte.values_lists)))
    return out


def _view_oid(rte: RangeTblEntry) -> int | None:
    """OID of the view a subquery RTE was expanded from (PG 16+: ``relid`` kept on the RTE; PG 13-15: the
    rule's ``old`` entry first in the subquery's range table, ``rewriteHandler.c ApplyRetrieveRule``)."""
    if rte.rtekind != RTEKind.RTE_SUBQUERY:
        return None
    if rte.relid:
        return rte.relid
    if rte.subquery is not None:
        inner = rte.subquery.rtable
        if len(inner) >= 2 and inner[0].relkind == "v" and inner[0].rtekind == RTEKind.RTE_RELATION \
                and inner[0].relid == inner[1].relid:
            return inner[0].relid
    return None


def _vars_of_level(value: object, level: int) -> bool:
    """True when ``value`` holds a Var of query level ``level`` above it (``var.c contain_vars_of_level``)."""
    for node in nodes_in(value):
        if isinstance(node, Var):
            if node.varlevelsup == level:
                return True
            continue
        if isinstance(node, Query):
            if any(_vars_of_level(child, level + 1) for child in children(node)):
                return True
            continue
        if isinstance(node, LevelExpr) and node.levelsup == level:
            return True
        if any(_vars_of_level(child, level) for child in children(node)):
            return True
    return False


def _functions(value: object) -> set[int]:
    """Function OIDs called in an expression tree (``FunctionRef.funcid``), not descending into queries."""
    out: set[int] = set()
    for node in nodes_in(value):
        if isinstance(node, Query):
            continue
        if isinstance(node, FunctionRef) and node.funcid:
            out.add(node.funcid)
        out |= _functions(tuple(children(node)))
    return out


def tree_function_oids(tree: Query) -> set[int]:
    """Every function OID anywhere in the tree (for the volatility look-up; the client-side analyser's negative
    ids included)."""
    return {node.funcid for node in walk(tree) if isinstance(node, FunctionRef) and node.funcid}


def tree_relation_oids(tree: Query | None) -> set[int]:
    """Every ``relid`` of a range-table entry anywhere in the tree."""
    return {node.relid for node in walk(tree) if isinstance(node, RangeTblEntry) and node.relid}


# -- parser, rewriter, plancache --------------------------------------------------------------------------------

def _parser_steps(q: Query) -> list[LockStep]:
    """Parse-analysis order (rule 1)."""
    steps: list[LockStep] = []
    rt = q.rtable
    cmd = q.command_type
    result = q.result_relation

    def rel(rte: RangeTblEntry) -> None:
        view = _view_oid(rte)
        if view:
            steps.append(LockStep(view, _mode(rte), "parser"))
        elif rte.rtekind == RTEKind.RTE_RELATION:
            steps.append(LockStep(rte.relid, _mode(rte), "parser"))
        elif rte.rtekind == RTEKind.RTE_SUBQUERY and rte.subquery is not None:
            steps.extend(_parser_steps(rte.subquery))
        sub((rte.functions, rte.tablefunc, rte.values_lists))

    def sub(expr: object) -> None:
        for link in _sublinks(expr):
            steps.extend(_parser_steps(link.subselect))

    def from_item(node: JoinTreeNode) -> None:
        if isinstance(node, RangeTblRef):
            if 1 <= node.rtindex <= len(rt) and node.rtindex != result:
                rel(rt[node.rtindex - 1])
        elif isinstance(node, JoinExpr):
            from_item(node.larg)
            from_item(node.rarg)
            sub(node.quals)
        else:
            for item in node.fromlist:
                from_item(item)

    for cte in q.cte_list:
        steps.extend(_parser_steps(cte.ctequery))
    if result and cmd in _DML and result <= len(rt):
        rel(rt[result - 1])
    for item in q.jointree.fromlist:
        from_item(item)
    if q.set_operations is not None:
        for rte in rt:
            rel(rte)
    if cmd == CmdType.CMD_INSERT:
        for rte in rt:  # INSERT ... VALUES with several rows, or a SELECT not in the jointree
            if _unwalked_subquery(rte, steps):
                rel(rte)
    for clause in _PARSER_CLAUSE_ORDER.get(cmd, _PARSER_CLAUSE_ORDER_OTHER):
        sub(q.jointree.quals if clause == "WHERE" else getattr(q, clause))
    return steps


_DML = (CmdType.CMD_UPDATE, CmdType.CMD_DELETE, CmdType.CMD_INSERT, CmdType.CMD_MERGE)
#: The clauses whose sublinks parse analysis visits after the FROM list, in its order, by command type
#: (:class:`~lockscope.querynodes.Query` fields; ``WHERE`` is the join tree's quals); INSERT and the rest:
#: :data:`_PARSER_CLAUSE_ORDER_OTHER`.
_PARSER_CLAUSE_ORDER: dict[CmdType, tuple[str, ...]] = {
    CmdType.CMD_SELECT: ("target_list", "WHERE", "having_qual", "limit_offset", "limit_count"),
    CmdType.CMD_UPDATE: ("WHERE", "returning_list", "target_list"),
    CmdType.CMD_MERGE: ("WHERE", "merge_join_condition", "merge_action_list", "returning_list"),
}
_PARSER_CLAUSE_ORDER_OTHER = ("target_list", "WHERE", "on_conflict", "returning_list")


def _unwalked_subquery(rte: RangeTblEntry, steps: Sequence[LockStep]) -> bool:
    """A subquery entry (not a view) none of whose relations the steps so far locked."""
    return (rte.rtekind == RTEKind.RTE_SUBQUERY and not _view_oid(rte)
            and not any(s.relation_oid in tree_relation_oids(rte.subquery) for s in steps))


def _acquire_rewrite_locks(q: Query) -> list[LockStep]:
    """``rewriteHandler.c AcquireRewriteLocks`` on a view's stored query (nested views not yet expanded)."""
    steps: list[LockStep] = []
    for rte in q.rtable:
        view = _view_oid(rte)
        if view:
            steps.append(LockStep(view, "AccessShareLock", "rewriter"))
        elif rte.rtekind == RTEKind.RTE_RELATION:
            steps.append(LockStep(rte.relid, _mode(rte), "rewriter"))
        elif rte.rtekind == RTEKind.RTE_SUBQUERY and rte.subquery is not None:
            steps.extend(_acquire_rewrite_locks(rte.subquery))
    for cte in q.cte_list:
        steps.extend(_acquire_rewrite_locks(cte.ctequery))
    for link in _query_sublinks(q):
        steps.extend(_acquire_rewrite_locks(link.subselect))
    return steps


def _rewriter_steps(q: Query) -> list[LockStep]:
    """``rewriteHandler.c fireRIRrules``: views expanded in range-table order, then CTEs, then sublinks."""
    steps: list[LockStep] = []
    for rte in q.rtable:
        if rte.rtekind != RTEKind.RTE_SUBQUERY or rte.subquery is None:
            continue
        if _view_oid(rte):
            steps.extend(_acquire_rewrite_locks(rte.subquery))
        steps.extend(_rewriter_steps(rte.subquery))
    for cte in q.cte_list:
        steps.extend(_rewriter_steps(cte.ctequery))
    for link in _query_sublinks(q):
        steps.extend(_rewriter_steps(link.subselect))
    return steps


def _plancache_steps(q: Query) -> list[LockStep]:
    """``plancache.c ScanQueryForLocks`` (rule 3)."""
    steps: list[LockStep] = []
    for rte in q.rtable:
        if rte.rtekind == RTEKind.RTE_RELATION:
            steps.append(LockStep(rte.relid, _mode(rte), "plancache"))
        elif rte.rtekind == RTEKind.RTE_SUBQUERY and rte.subquery is not None:
            if rte.relid:
                steps.append(LockStep(rte.relid, _mode(rte), "plancache"))
            steps.extend(_plancache_steps(rte.subquery))
    for cte in q.cte_list:
        steps.extend(_plancache_steps(cte.ctequery))
    for link in _query_sublinks(q):
        steps.extend(_plancache_steps(link.subselect))
    return steps


# -- planner --------------------------------------------------------------------------------------------------

#: One query level's inlined CTEs by name (None: a CTE planned as its own subplan).
_CteFrame = dict[str, Query | None]
#: A sublink left in an expression (not pulled up), with the CTE frames it sees.
_Leftover = tuple[SubLink, list[_CteFrame]]


@dataclass
class _Level:
    """One planner query level (PlannerInfo): its range table after pull-ups, partitions it expanded."""

    rtable: list[RangeTblEntry] = field(default_factory=list)
    children: list[LockStep] = field(default_factory=list)
    from_levels: list[_Level] = field(default_factory=list)


# The planner's join tree (``initsplan.c`` reads it depth first, left to right): a base relation, a subquery
# planned on its own, a UNION ALL appendrel pulled up from FROM, a FROM list, a two-sided join.

@dataclass(frozen=True, eq=False)
class _Rel:
    """A base relation (a range-table entry of kind ``RTE_RELATION``)."""

    rte: RangeTblEntry


@dataclass(frozen=True, eq=False)
class _Subquery:
    """A subquery in FROM that was not flattened, planned after the level's own relations."""

    query: Query
    stack: list[_CteFrame]


@dataclass(frozen=True, eq=False)
class _UnionAll:
    """A UNION ALL subquery in FROM pulled up as an appendrel (``pull_up_simple_union_all``): its entry, the leaf
    entries, and the CTE frames they see."""

    rte: RangeTblEntry
    members: list[RangeTblEntry]
    stack: list[_CteFrame]


@dataclass(frozen=True, eq=False)
class _JoinList:
    """Items of a FROM list."""

    items: list[_JoinTree]


@dataclass(frozen=True, eq=False)
class _Join:
    """Two sides of a join, left first."""

    left: _JoinTree
    right: _JoinTree


_JoinTree = _Rel | _Subquery | _UnionAll | _JoinList | _Join


@dataclass(frozen=True)
class _Pullable:
    """A sublink ``pull_up_sublinks`` turns into a join: ``exists`` for an EXISTS / NOT EXISTS (its range table
    joins the parent's directly), else an ANY (``IN``) sublink (a new subquery entry)."""

    link: SubLink
    exists: bool


class _Planner:
    """Emulates the lock-taking parts of ``planner.c subquery_planner`` (rule 4) on the rewritten tree.

    Range-table entries are told apart by identity (the same entry object reached twice, e.g. a CTE body inlined
    twice, is the same entry)."""

    def __init__(self, facts: CatalogFacts, server_version_num: int):
        self.facts = facts
        self.version = server_version_num
        self.steps: list[LockStep] = []
        self.subplans: list[_Level] = []

    # planner-level entry point ---------------------------------------------------------------------------
    def plan(self, q: Query, outer_ctes: list[_CteFrame]) -> _Level:
        """One query level in ``subquery_planner`` order (steps a-g below); its locks go to ``self.steps``."""
        level = _Level()
        cte_env = dict(self._cte_frame(q))
        stack = [cte_env, *outer_ctes]
        cmd = q.command_type
        self._plan_ctes(q, cmd, cte_env, stack)
        if q.set_operations is not None:
            self._plan_set_operations(q, q.set_operations, stack, level)
            return level
        # b. build the join tree with pulled-up sublinks and subqueries
        rt = list(q.rtable)
        leftover: list[_Leftover] = []
        pulled_rtable: list[RangeTblEntry] = []
        jt = self._jointree(q.jointree, rt, stack, leftover, pulled_rtable)
        if cmd == CmdType.CMD_MERGE and q.result_relation:
            jt = _merge_join(q, _Rel(rt[q.result_relation - 1]), jt)
        self._plan_other_sublinks(q, stack, leftover)
        # d. base relations in join-tree order: get_relation_info
        baserels: list[RangeTblEntry] = []
        subqueries: list[_Subquery | _UnionAll] = []
        self._walk(jt, baserels, subqueries)
        for rte in baserels:
            self._index_locks(rte, inh_parent=self._expands(rte))
        level.rtable = [*rt, *pulled_rtable]
        union_later = self._expand_inheritance(level, baserels, subqueries)
        # f. subqueries in FROM not flattened, range-table order (set_base_rel_sizes)
        for item in subqueries:
            pending = union_later.get(id(item.rte), []) if isinstance(item, _UnionAll) else [(item.query, item.stack)]
            for sub_q, sub_stack in pending:
                level.from_levels.append(self.plan(sub_q, sub_stack))
        self._arbiter_locks(q, rt, cmd)
        return level

    def _plan_ctes(self, q: Query, cmd: CmdType, cte_env: _CteFrame, stack: list[_CteFrame]) -> None:
        """a. ``SS_process_ctes``: CTEs that are neither unreferenced SELECTs nor inlined, planned as subplans."""
        for cte in q.cte_list:
            body = cte.ctequery
            if cte.cterefcount == 0 and body.command_type == CmdType.CMD_SELECT:
                continue
            if self._inlined(cte, cmd):
                continue
            sub = self.plan(body, stack)
            self.subplans.append(sub)
            cte_env[cte.ctename] = None

    def _plan_set_operations(self, q: Query, setop: SetOperationStmt, stack: list[_CteFrame],
                             level: _Level) -> None:
        """A level with set operations: a flattened UNION ALL appendrel, else each leaf planned left to right."""
        members = _union_all_leaves(setop, q.rtable)
        if members is not None and not q.has_recursive:
            # prepjointree.c flatten_simple_union_all: an appendrel; simple one-table leaves are pulled up
            # (their indexes locked in add_other_rels_to_query), the others planned as subqueries after
            later: list[tuple[Query, list[_CteFrame]]] = []
            self._append_members(members, stack, level, later)
            for sub_q, sub_stack in later:
                level.from_levels.append(self.plan(sub_q, sub_stack))
            return
        # prepunion.c recurse_set_operations: leaves planned left to right
        for rte in q.rtable:
            if rte.rtekind == RTEKind.RTE_SUBQUERY and rte.subquery is not None:
                level.from_levels.append(self.plan(rte.subquery, stack))

    def _plan_other_sublinks(self, q: Query, stack: list[_CteFrame], leftover: list[_Leftover]) -> None:
        """c. sublinks not pulled up: planned before this level's relations (preprocess_expression)."""
        head = _sublinks((q.target_list, q.with_check_options, q.returning_list))
        tail = _sublinks((q.having_qual, q.limit_offset, q.limit_count, q.on_conflict, q.merge_action_list))
        for link in head:
            self._plan_sublink(link, stack)
        for link, link_stack in leftover:
            self._plan_sublink(link, link_stack)
        for link in tail:
            self._plan_sublink(link, stack)
        # ... and those of the range table's function, table-function and VALUES expressions, in range-table order
        # (subquery_planner preprocesses RTE expressions last)
        for rte in q.rtable:
            for link in _sublinks((rte.functions, rte.tablefunc, rte.values_lists)):
                self._plan_sublink(link, stack)

    def _expand_inheritance(self, level: _Level, baserels: list[RangeTblEntry],
                            subqueries: list[_Subquery | _UnionAll],
                            ) -> dict[int, list[tuple[Query, list[_CteFrame]]]]:
        """e. inheritance expansion in range-table order; returns the UNION ALL members to plan later, per
        pulled-up union (by ``id`` of its range-table entry)."""
        base_ids = {id(r) for r in baserels}
        unions = {id(item.rte): item for item in subqueries if isinstance(item, _UnionAll)}
        union_later: dict[int, list[tuple[Query, list[_CteFrame]]]] = {}
        for rte in level.rtable:
            if id(rte) in base_ids and self._expands(rte):
                self._expand(rte, level)
            elif id(rte) in unions:  # expand_appendrel_subquery: the pulled-up UNION ALL members
                union = unions[id(rte)]
                self._append_members(union.members, union.stack, level, union_later.setdefault(id(rte), []))
        return union_later

    def _arbiter_locks(self, q: Query, rt: list[RangeTblEntry], cmd: CmdType) -> None:
        """g. INSERT ... ON CONFLICT with a conflict target: createplan.c make_modifytable ->
        plancat.c infer_arbiter_indexes opens every index of the target, OID order, in its lock mode."""
        conflict = q.on_conflict
        has_target = conflict is not None and bool(conflict.arbiter_elems or conflict.constraint_oid)
        if cmd != CmdType.CMD_INSERT or not has_target:
            return
        result = q.result_relation
        if 1 <= result <= len(rt):
            target = rt[result - 1]
            facts = self.facts.relations.get(target.relid)
            for idx in facts.index_oids if facts is not None else ():
                self.steps.append(LockStep(idx, _mode(target), "planner-arbiter"))

    def _cte_frame(self, q: Query) -> _CteFrame:
        return {c.ctename: c.ctequery for c in q.cte_list if self._inlined(c, q.command_type)}

    def _inlined(self, cte: CommonTableExpr, cmd: CmdType) -> bool:
        """``subselect.c SS_process_ctes``: inline or plan separately."""
        mat = self.facts.materialized_ctes
        if mat is not None:
            return cte.ctename not in mat and cte.cterefcount > 0
        materialized = cte.ctematerialized
        refs = cte.cterefcount
        return bool(
            (materialized == CTEMaterialize.CTEMaterializeNever
             or (materialized == CTEMaterialize.CTEMaterializeDefault and refs == 1))
            and not cte.cterecursive
            and cmd == CmdType.CMD_SELECT
            and cte.ctequery.command_type == CmdType.CMD_SELECT
            and not (_functions(cte.ctequery) & self.facts.volatile_functions)
        )

    def _plan_sublink(self, link: SubLink, stack: list[_CteFrame]) -> None:
        self.subplans.append(self.plan(link.subselect, stack))

    # join tree -----------------------------------------------------------------------------------------------
    def _jointree(self, node: JoinTreeNode, rt: list[RangeTblEntry], stack: list[_CteFrame],
                  leftover: list[_Leftover], pulled: list[RangeTblEntry]) -> _JoinTree:
        """The planner's join tree of one level (:data:`_JoinTree`), with sublinks and subqueries pulled up."""
        if isinstance(node, RangeTblRef):
            if not 1 <= node.rtindex <= len(rt):
                return _JoinList([])
            return self._rte_leaf(rt[node.rtindex - 1], stack, leftover, pulled)
        if isinstance(node, JoinExpr):
            return self._join(node, rt, stack, leftover, pulled)
        tree: _JoinTree = _JoinList([self._jointree(item, rt, stack, leftover, pulled) for item in node.fromlist])
        kept: list[Expression] = []
        for qual in _conjuncts(node.quals):
            pull = self._pullable_sublink(qual)
            if pull is not None:
                tree = _Join(tree, self._sublink_leaf(pull, stack, leftover, pulled))
            else:
                kept.append(qual)
        for qual in kept:
            leftover.extend((s, stack) for s in _sublinks(qual))
        return tree

    def _join(self, node: JoinExpr, rt: list[RangeTblEntry], stack: list[_CteFrame], leftover: list[_Leftover],
              pulled: list[RangeTblEntry]) -> _JoinTree:
        left = self._jointree(node.larg, rt, stack, leftover, pulled)
        right = self._jointree(node.rarg, rt, stack, leftover, pulled)
        jtype = node.jointype
        kept: list[Expression] = []
        above: list[_JoinTree] = []
        larg_rels, rarg_rels = _rtindexes(node.larg), _rtindexes(node.rarg)
        # pull_up_sublinks_jointree_recurse: an inner join's convertible sublink becomes a join stacked above
        # the join (both sides available); a LEFT join's goes into its nullable right side, a RIGHT join's
        # into its left side; a FULL join's stays.
        for qual in _conjuncts(node.quals):
            pull = self._pullable_sublink(qual)
            uses = self._uses(qual) if pull is not None else set()
            if pull is not None and uses and jtype == JoinType.JOIN_INNER and uses <= larg_rels | rarg_rels:
                above.append(self._sublink_leaf(pull, stack, leftover, pulled))
            elif pull is not None and uses and jtype == JoinType.JOIN_LEFT and uses <= rarg_rels:
                right = _Join(right, self._sublink_leaf(pull, stack, leftover, pulled))
            elif pull is not None and uses and jtype == JoinType.JOIN_RIGHT and uses <= larg_rels:
                left = _Join(left, self._sublink_leaf(pull, stack, leftover, pulled))
            else:
                kept.append(qual)
        for qual in kept:
            leftover.extend((s, stack) for s in _sublinks(qual))
        if jtype == JoinType.JOIN_RIGHT:  # prepjointree.c reduce_outer_joins: RIGHT -> LEFT, sides swapped
            left, right = right, left
        tree: _JoinTree = _Join(left, right)
        for leaf in above:
            tree = _Join(tree, leaf)
        return tree

    def _rte_leaf(self, rte: RangeTblEntry, stack: list[_CteFrame], leftover: list[_Leftover],
                  pulled: list[RangeTblEntry]) -> _JoinTree:
        kind = rte.rtekind
        if kind == RTEKind.RTE_RELATION:
            return _Rel(rte)
        sub: Query | None = None
        sub_stack = stack
        if kind == RTEKind.RTE_SUBQUERY:
            sub = rte.subquery
        elif kind == RTEKind.RTE_CTE:
            up = rte.ctelevelsup
            frame = stack[up] if up < len(stack) else {}
            sub = frame.get(rte.ctename or "")
            sub_stack = stack[up:]
        if sub is None:
            return _JoinList([])
        if self._simple_subquery(sub, rte):
            return self._pull_up(sub, sub_stack, leftover, pulled)
        members = _simple_union_all(sub)
        if members is not None:  # prepjointree.c pull_up_simple_union_all
            return _UnionAll(rte, members, [self._cte_frame(sub), *sub_stack])
        return _Subquery(sub, sub_stack)

    def _append_members(self, members: Sequence[RangeTblEntry], stack: list[_CteFrame], level: _Level,
                        later: list[tuple[Query, list[_CteFrame]]]) -> None:
        """The members of a UNION ALL appendrel (``prepjointree.c pull_up_union_leaf_queries``): a simple leaf
        over one relation (``is_simple_subquery``, ``is_safe_append_member``) is pulled up, and the relation is
        built as an appendrel child in ``expand_appendrel_subquery`` (its indexes, then its own partitions); any
        other leaf stays a subquery, planned later (``set_append_rel_size``), appended to ``later``."""
        for leaf in members:
            sub = leaf.subquery
            if sub is None:
                continue
            member = _single_relation(sub) if self._simple_subquery(sub, leaf) else None
            if member is None:
                later.append((sub, stack))
                continue
            expands = self._expands(member)
            self._index_locks(member, inh_parent=expands)
            if expands:
                self._expand(member, level)

    def _pull_up(self, sub: Query, stack: list[_CteFrame], leftover: list[_Leftover],
                 pulled: list[RangeTblEntry]) -> _JoinTree:
        """``prepjointree.c pull_up_simple_subquery``: the subquery's join tree replaces its reference, its
        range table is appended to the parent's."""
        inner_stack = [self._cte_frame(sub), *stack]
        inner_rt = list(sub.rtable)
        inner_pulled: list[RangeTblEntry] = []
        jt = self._jointree(sub.jointree, inner_rt, inner_stack, leftover, inner_pulled)
        pulled.extend(inner_rt)
        pulled.extend(inner_pulled)
        leftover.extend((s, inner_stack) for s in _sublinks(sub.target_list))
        return jt

    def _simple_subquery(self, sub: Query, rte: RangeTblEntry) -> bool:
        """``prepjointree.c is_simple_subquery``."""
        if sub.command_type != CmdType.CMD_SELECT or sub.set_operations is not None:
            return False
        if sub.has_aggs or sub.has_window_funcs or sub.has_target_srfs or sub.has_for_update:
            return False
        if sub.has_group_clause or sub.has_grouping_sets or sub.having_qual is not None or sub.has_sort_clause \
                or sub.has_distinct_clause or sub.limit_offset is not None or sub.limit_count is not None \
                or sub.cte_list:
            return False
        if rte.security_barrier:
            return False
        return not (_functions(sub.target_list) & self.facts.volatile_functions)

    def _pullable_sublink(self, qual: Expression) -> _Pullable | None:
        """A top-level AND item ``x IN (subquery)`` / ``EXISTS`` / ``NOT EXISTS`` that
        ``convert_ANY_sublink_to_join`` / ``convert_EXISTS_sublink_to_join`` turns into a join, else None."""
        node: Expression | None = qual
        if isinstance(node, BoolExpr) and node.boolop == BoolExprType.NOT_EXPR:
            node = node.args[0] if len(node.args) == 1 else None
            if not (isinstance(node, SubLink) and node.sublink_type == SubLinkType.EXISTS_SUBLINK):
                return None
        if not isinstance(node, SubLink):
            return None
        sub = node.subselect
        if node.sublink_type == SubLinkType.ANY_SUBLINK:
            if self.version < _PG18 and any(_vars_of_level(c, 1) for c in children(sub)):
                return None  # PG 18+ pulls correlated ANY sublinks up as LATERAL subqueries
            test = node.testexpr
            if not _vars_of_level(test, 0) or (_functions(test) & self.facts.volatile_functions):
                return None
            return _Pullable(node, exists=False)
        if node.sublink_type == SubLinkType.EXISTS_SUBLINK:
            if sub.cte_list or sub.set_operations is not None:
                return None
            if sub.has_aggs or sub.has_window_funcs or sub.has_target_srfs:
                return None
            if sub.having_qual is not None or sub.has_grouping_sets:  # simplify_EXISTS_query drops GROUP BY
                return None
            where = sub.jointree.quals
            rest = tuple(children(sub, skip=_EXISTS_DROPPED))
            if _vars_of_level(rest, 1) or _vars_of_level(sub.jointree.fromlist, 1) or not _vars_of_level(where, 1):
                return None
            if _functions(where) & self.facts.volatile_functions:
                return None
            return _Pullable(node, exists=True)
        return None

    def _sublink_leaf(self, pull: _Pullable, stack: list[_CteFrame], leftover: list[_Leftover],
                      pulled: list[RangeTblEntry]) -> _JoinTree:
        sub = pull.link.subselect
        if pull.exists:
            # convert_EXISTS_sublink_to_join: the subquery's range table joins the parent's directly
            inner_stack = [self._cte_frame(sub), *stack]
            inner_rt = list(sub.rtable)
            inner_pulled: list[RangeTblEntry] = []
            jt = self._jointree(FromExpr(sub.jointree.fromlist), inner_rt, inner_stack, leftover, inner_pulled)
            leftover.extend((s, inner_stack) for s in _sublinks(sub.jointree.quals))
            pulled.extend(inner_rt)
            pulled.extend(inner_pulled)
            return jt
        # convert_ANY_sublink_to_join: a new subquery RTE, then pulled up if simple
        return self._rte_leaf(RangeTblEntry(RTEKind.RTE_SUBQUERY, subquery=sub), stack, leftover, pulled)

    @staticmethod
    def _uses(qual: Expression) -> set[int]:
        """Range-table indexes of the parent a convertible sublink refers to (``pull_varnos``)."""
        link = qual.args[0] if isinstance(qual, BoolExpr) else qual
        if not isinstance(link, SubLink):
            return set()
        if link.sublink_type == SubLinkType.ANY_SUBLINK:
            return _varnos(link.testexpr, 0) | _varnos(link.subselect, 0)
        return _varnos(link.subselect, 0)

    def _walk(self, tree: _JoinTree, baserels: list[RangeTblEntry], subqueries: list[_Subquery | _UnionAll]) -> None:
        """``initsplan.c add_base_rels_to_query``: join tree depth first, left to right."""
        if isinstance(tree, _Rel):
            baserels.append(tree.rte)
        elif isinstance(tree, _Subquery | _UnionAll):
            subqueries.append(tree)
        elif isinstance(tree, _JoinList):
            for item in tree.items:
                self._walk(item, baserels, subqueries)
        else:
            self._walk(tree.left, baserels, subqueries)
            self._walk(tree.right, baserels, subqueries)

    # locks -------------------------------------------------------------------------------------------------
    def _expands(self, rte: RangeTblEntry) -> bool:
        facts = self.facts.relations.get(rte.relid)
        return bool(rte.inh and facts is not None and facts.children)

    def _index_locks(self, rte: RangeTblEntry, *, inh_parent: bool) -> None:
        """``plancat.c get_relation_info``."""
        facts = self.facts.relations.get(rte.relid)
        if facts is None:
            return
        if inh_parent and (facts.relkind != "p" or self.version < _PG16):
            return
        if facts.relkind == "p" and self.version < _PG16:
            return
        mode = _mode(rte)
        for idx in facts.index_oids:
            self.steps.append(LockStep(idx, mode, "planner-index"))

    def _expand(self, rte: RangeTblEntry, level: _Level) -> None:
        """``inherit.c expand_inherited_rtentry``."""
        oid = rte.relid
        mode = _mode(rte)
        facts = self.facts.relations[oid]
        if facts.relkind == "p":
            self._expand_partitioned(oid, mode, level)
            return
        # find_all_inheritors: breadth first, OID order per parent; all locked first
        members = [oid]
        i = 0
        while i < len(members):
            for child in sorted(self.facts.relations[members[i]].children if members[i] in self.facts.relations
                                else ()):
                if child not in members:
                    members.append(child)
                    step = LockStep(child, mode, "planner-inheritance")
                    self.steps.append(step)
                    level.children.append(step)
            i += 1
        for member in members:
            member_facts = self.facts.relations.get(member)
            if member_facts is not None:
                for idx in member_facts.index_oids:
                    self.steps.append(LockStep(idx, mode, "planner-index"))

    def _expand_partitioned(self, oid: int, mode: str, level: _Level) -> None:
        """``inherit.c expand_partitioned_rtentry``: bound order, partition then its indexes, depth first."""
        for child in self.facts.relations[oid].children:
            step = LockStep(child, mode, "planner-partition")
            self.steps.append(step)
            level.children.append(step)
            child_facts = self.facts.relations.get(child)
            if child_facts is None:
                continue
            if child_facts.relkind != "p" or self.version >= _PG16:
                for idx in child_facts.index_oids:
                    self.steps.append(LockStep(idx, mode, "planner-index"))
            if child_facts.relkind == "p":
                self._expand_partitioned(child, mode, level)


#: The Query fields an EXISTS sublink's pull-up does not look into for outer Vars (``convert_EXISTS_sublink_to_join``
#: after ``simplify_EXISTS_query``: target list, LIMIT; the join tree is checked apart: FROM list and WHERE).
_EXISTS_DROPPED = frozenset({"target_list", "jointree", "limit_count", "limit_offset"})


def _single_relation(sub: Query) -> RangeTblEntry | None:
    """The one plain relation of a UNION ALL leaf whose join tree is a single range-table entry
    (``prepjointree.c is_safe_append_member``), else None."""
    node: JoinTreeNode = sub.jointree
    while isinstance(node, FromExpr):
        if len(node.fromlist) != 1:
            return None
        node = node.fromlist[0]
    if not isinstance(node, RangeTblRef):
        return None
    rt = sub.rtable
    if not 1 <= node.rtindex <= len(rt) or rt[node.rtindex - 1].rtekind != RTEKind.RTE_RELATION:
        return None
    return rt[node.rtindex - 1]


def _union_all_leaves(setop: RangeTblRef | SetOperationStmt,
                      rt: Sequence[RangeTblEntry]) -> list[RangeTblEntry] | None:
    """The leaf RTEs of a set-operation tree made only of UNION ALL (``prepjointree.c
    is_simple_union_all_recurse``; the leaves' column types are taken to agree), in order; None otherwise."""
    if isinstance(setop, RangeTblRef):
        return [rt[setop.rtindex - 1]] if 1 <= setop.rtindex <= len(rt) else None
    if setop.op != SetOperation.SETOP_UNION or not setop.all:
        return None
    left = _union_all_leaves(setop.larg, rt)
    right = _union_all_leaves(setop.rarg, rt)
    return None if left is None or right is None else [*left, *right]


def _simple_union_all(sub: Query) -> list[RangeTblEntry] | None:
    """``prepjointree.c is_simple_union_all``: a UNION ALL subquery without ORDER BY, LIMIT/OFFSET, locking or
    WITH; its leaf RTEs, else None."""
    if sub.set_operations is None or sub.command_type != CmdType.CMD_SELECT:
        return None
    if sub.has_sort_clause or sub.limit_offset is not None or sub.limit_count is not None \
            or sub.has_row_marks or sub.has_for_update or sub.cte_list:
        return None
    return _union_all_leaves(sub.set_operations, sub.rtable)


def _merge_join(q: Query, target: _JoinTree, source: _JoinTree) -> _Join:
    """``prepjointree.c transform_MERGE_to_join``: ``target <jointype> source``; WHEN NOT MATCHED [BY TARGET]
    makes it a RIGHT join, which ``reduce_outer_joins`` turns into ``source LEFT JOIN target`` (source first);
    with NOT MATCHED BY SOURCE too it is a FULL join (target first)."""
    kinds = {action.match_kind for action in q.merge_action_list}
    by_source = MergeMatchKind.MERGE_WHEN_NOT_MATCHED_BY_SOURCE in kinds
    by_target = MergeMatchKind.MERGE_WHEN_NOT_MATCHED_BY_TARGET in kinds
    if by_target and not by_source:
        return _Join(source, target)
    return _Join(target, source)


def _rtindexes(node: JoinTreeNode) -> set[int]:
    """Range-table indexes a join-tree node covers (base relations and joins)."""
    if isinstance(node, RangeTblRef):
        return {node.rtindex}
    if isinstance(node, JoinExpr):
        return {node.rtindex} | _rtindexes(node.larg) | _rtindexes(node.rarg)
    return {i for item in node.fromlist for i in _rtindexes(item)}


def _varnos(value: object, level: int) -> set[int]:
    """``varno`` of the Vars that belong to the query ``level`` levels above ``value``'s own level."""
    out: set[int] = set()
    for node in nodes_in(value):
        if isinstance(node, Var):
            if node.varlevelsup == level:
                out.add(node.varno)
            continue
        out |= _varnos(tuple(children(node)), level + 1 if isinstance(node, Query) else level)
    return out


def _conjuncts(qual: Expression | None) -> list[Expression]:
    if qual is None:
        return []
    if isinstance(qual, BoolExpr) and qual.boolop == BoolExprType.AND_EXPR:
        return [x for arg in qual.args for x in _conjuncts(arg)]
    return [qual]


def _executor_order(top: _Level, subplans: Sequence[_Level]) -> list[LockStep]:
    """``setrefs.c add_rtes_to_flat_rtable``: partitions of the top level, its FROM-subquery levels, then subplans."""
    out: list[LockStep] = []

    def level_steps(level: _Level) -> None:
        out.extend(LockStep(s.relation_oid, s.mode, "executor-rtable") for s in level.children)
        for sub in level.from_levels:
            level_steps(sub)

    level_steps(top)
    for sub in subplans:
        out.extend(LockStep(s.relation_oid, s.mode, "executor-rtable") for s in sub.children)
    return out


def statement_lock_steps(tree: Query, facts: CatalogFacts, server_version_num: int,
                         phase: str) -> list[LockStep]:
    """The statement's lock requests in acquisition order for one probe phase.

    :param tree: the rewritten Query as typed nodes: built on the client by
        :func:`lockscope.querytree.build_query_tree`, or the server's own ``debug_print_rewritten`` tree read by
        :func:`lockscope.pgnodes.query_from_dump` (the tests' oracle).
    :param facts: catalog facts (:func:`catalog_facts_from_rows`).
    :param server_version_num: the server's version (partitioned-index locking from PG 16).
    :param phase: ``simple`` (EXPLAIN / EXPLAIN (GENERIC_PLAN): parser, rewriter, planner), ``custom`` or
        ``generic-build`` (prepared: plancache, planner), ``generic-reuse`` (plancache, executor range table).
    :return: requests in order; repeats included (local-lock hits for the simulator).
    """
    planner = _Planner(facts, server_version_num)
    top = planner.plan(tree, [])
    if phase == "simple":
        head = _parser_steps(tree) + _rewriter_steps(tree)
    else:
        head = _plancache_steps(tree)
    if phase == "generic-reuse":
        return head + _executor_order(top, planner.subplans)
    return head + planner.steps


# -- catalog-only path (audit, what-ifs) -------------------------------------------------------------------------

class CatalogRelation(Protocol):
    """What the catalog-only order reads of one locked relation: a ``relation_info.sql`` or
    ``acquisition_facts.sql`` row (:class:`lockscope.rows.RelationInfoRow`), or the audit's catalog entry.

    :ivar relkind: ``pg_class.relkind``.
    :ivar relname: the bare name.
    :ivar parent_oid: the indexed table, the partitioned or inheritance parent, else None.
    :ivar bound: a partition's ``FOR VALUES`` text, else None.
    :ivar partstrat: a partitioned table's strategy (``l``, ``r``, ``h``), else None.
    """

    @property
    def relkind(self) -> str: ...

    @property
    def relname(self) -> str: ...

    @property
    def parent_oid(self) -> int | None: ...

    @property
    def bound(self) -> str | None: ...

    @property
    def partstrat(self) -> str | None: ...


def acquisition_order(infos: Mapping[int, CatalogRelation], oids: Sequence[int], relation_names: Sequence[str],
                      server_version_num: int = _PG16) -> list[int]:
    """Catalog-only order for a one-table statement (``audit``): no query tree needed.

    The named table (parser), its indexes in OID order (``get_relation_info``; a partitioned table's own
    indexes are in ``oids`` only on PG 16+), then partitions in bound order, each followed by its indexes,
    depth first (``expand_partitioned_rtentry``); a legacy inheritance parent: all children breadth first, then
    the indexes (``expand_inherited_rtentry``); anything else last in OID order (``unmodelled``).

    :param infos: by OID: ``relkind``, ``parent_oid``, ``relname``, ``bound`` (``FOR VALUES`` text, or None) and
        ``partstrat`` of the parent (``l``/``r``/``h``, or None) for bound order — without them partitions fall back
        to OID order.
    :param oids: the locked relations (distinct).
    :param relation_names: the statement's table name(s); the first named relation present is the top.
    :return: the OIDs in modelled acquisition order.
    """
    present = list(dict.fromkeys(oids))
    walk = _CatalogOrder(infos, present)
    names = list(relation_names)
    tops = [o for o in present if walk.parent_of(o) not in walk.pset and not walk.is_index(o)]
    rank = {name: n for n, name in reversed(list(enumerate(names)))}  # a name's first position
    tops.sort(key=lambda o: (rank.get(walk.relname(o) or "", len(names)), o))
    for top in tops:
        walk.add(top)
    for top in tops:
        if walk.relkind(top) != "p" and any(not walk.is_index(c) for c in walk.kids.get(top, [])):
            walk.add_inheritance(top)
            continue
        walk.indexes(top)
        walk.expand(top)
    for oid in sorted(walk.pset):
        walk.add(oid)
    _ = server_version_num
    return walk.order


class _CatalogOrder:
    """:func:`acquisition_order`'s walk: the locked relations' children by parent and the order built so far."""

    def __init__(self, infos: Mapping[int, CatalogRelation], present: Sequence[int]) -> None:
        self.infos = infos
        self.pset = set(present)
        self.kids: dict[int, list[int]] = {}
        for oid in sorted(self.pset):
            parent = self.parent_of(oid)
            if parent is not None and parent in self.pset:
                self.kids.setdefault(parent, []).append(oid)
        self.order: list[int] = []
        self.seen: set[int] = set()

    def parent_of(self, oid: int) -> int | None:
        info = self.infos.get(oid)
        return info.parent_oid if info is not None else None

    def relkind(self, oid: int) -> str | None:
        info = self.infos.get(oid)
        return info.relkind if info is not None else None

    def relname(self, oid: int) -> str | None:
        info = self.infos.get(oid)
        return info.relname if info is not None else None

    def bound(self, oid: int) -> str | None:
        info = self.infos.get(oid)
        return info.bound if info is not None else None

    def is_index(self, oid: int) -> bool:
        return self.relkind(oid) in ("i", "I")

    def partitions(self, oid: int) -> list[int]:
        """The children of ``oid`` that are not indexes: bound order under a partitioned table, else OID order."""
        rels = [c for c in self.kids.get(oid, []) if not self.is_index(c)]
        info = self.infos.get(oid)
        if info is None or info.relkind != "p":
            return sorted(rels)
        strat = info.partstrat or _guess_strategy([self.bound(c) for c in rels])
        children = [RelationFacts(c, self.relkind(c) or "r", oid, bound=self.bound(c)) for c in rels]
        return order_partitions(children, strat)

    def add(self, oid: int) -> None:
        if oid not in self.seen:
            self.seen.add(oid)
            self.order.append(oid)

    def indexes(self, oid: int) -> None:
        for c in self.kids.get(oid, []):
            if self.is_index(c):
                self.add(c)

    def expand(self, oid: int) -> None:
        """``expand_partitioned_rtentry``: partitions in bound order, each followed by its indexes, depth first."""
        for part in self.partitions(oid):
            self.add(part)
            self.indexes(part)
            self.expand(part)

    def add_inheritance(self, top: int) -> None:
        """``expand_inherited_rtentry``: a legacy inheritance parent's children breadth first, then the indexes."""
        members = [top]
        i = 0
        while i < len(members):
            for child in self.partitions(members[i]):
                if child not in members:
                    members.append(child)
                    self.add(child)
            i += 1
        for member in members:
            self.indexes(member)


def _guess_strategy(bounds: Iterable[str | None]) -> str | None:
    for b in bounds:
        text = (b or "").upper()
        if "MODULUS" in text:
            return "h"
        if " IN (" in text:
            return "l"
        if " FROM (" in text:
            return "r"
    return None
