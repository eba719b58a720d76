"""The order in which one backend acquires a statement's relation locks (the acquisition-order model).

The fast-path flag of a lock depends on how many slots of its group (``lock.c FAST_PATH_REL_GROUP``) were taken
before it, so the capacity model (``capacity.simulate_fast_path``) must see the lock requests in the server's order.
This module derives that order from:

- the statement's **rewritten query tree** (the node shape ``postgres.c pg_rewrite_query`` produces), built on the
  client by :mod:`lockscope.querytree` from PostgreSQL's own parser and the catalog: range tables in parser order
  with relation OIDs and lock modes, views expanded as the rewriter does, CTEs, sublinks, join trees. (The server
  can print that tree with ``debug_print_rewritten``, but only into its log too; lockscope uses that only as the
  test oracle on scratch servers, ``tests/order_oracle.py``.)
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

from .capacity import LOCK_MODES
from .pgnodes import walk_nodes
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
]

#: ``order_rule`` values, see the module docstring.
ORDER_RULES = (
    "parser", "rewriter", "plancache", "planner-index", "planner-partition", "planner-inheritance",
    "planner-arbiter", "executor-rtable", "unknown", "unmodelled",
)
#: lockdefs.h: LOCKMODE numbers as the node dump prints ``rellockmode``.
_MODE_BY_NUMBER = {n + 1: name for n, name in enumerate(LOCK_MODES)}
# nodes.h CmdType (stable for these values in 13..19), parsenodes.h RTEKind, JoinType, SubLinkType, CTEMaterialize.
_CMD_SELECT, _CMD_UPDATE, _CMD_INSERT, _CMD_DELETE, _CMD_MERGE = 1, 2, 3, 4, 5
_RTE_RELATION, _RTE_SUBQUERY, _RTE_CTE = 0, 1, 6
_JOIN_INNER, _JOIN_LEFT, _JOIN_RIGHT = 0, 1, 3
_EXISTS_SUBLINK, _ANY_SUBLINK = 0, 2
_CTE_MATERIALIZE_DEFAULT, _CTE_MATERIALIZE_NEVER = 0, 2
_SETOP_UNION = 1  # nodes.h SetOperation


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

def _int(value: Any, default: int = 0) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def _rtable(q: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [r for r in _list(q.get("rtable")) if isinstance(r, dict)]


def _ctes(q: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [c for c in _list(q.get("cteList")) if isinstance(c, dict)]


def _mode(rte: Mapping[str, Any]) -> str:
    return _MODE_BY_NUMBER.get(_int(rte.get("rellockmode")), "AccessShareLock")


def _sublinks(value: Any) -> list[dict[str, Any]]:
    """SubLink nodes in text order, not descending into them (nor into nested Query nodes)."""
    return walk_nodes(value, "SUBLINK", skip=("QUERY",))


def _query_sublinks(q: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Sublinks of one query level in ``nodeFuncs.c query_tree_walker`` order (range-table subqueries and
    CTEs excluded, as with ``QTW_IGNORE_RC_SUBQUERIES``)."""
    out: list[dict[str, Any]] = []
    for key in ("targetList", "withCheckOptions", "onConflict", "mergeActionList", "mergeJoinCondition",
                "returningList", "jointree", "setOperations", "havingQual", "limitOffset", "limitCount"):
        out.extend(_sublinks(q.get(key)))
    for rte in _rtable(q):
        for key in ("functions", "tablefunc", "values_lists"):
            out.extend(_sublinks(rte.get(key)))
    return out


def _view_oid(rte: Mapping[str, Any]) -> int | None:
    """OID of the view a subquery RTE was expanded from (PG 16+: ``relid`` kept on the RTE; PG 13-15: the
    rule's ``old`` entry first in the subquery's range table, ``rewriteHandler.c ApplyRetrieveRule``)."""
    if _int(rte.get("rtekind"), -1) != _RTE_SUBQUERY:
        return None
    relid = _int(rte.get("relid"))
    if relid:
        return relid
    sub = rte.get("subquery")
    if isinstance(sub, dict):
        inner = _rtable(sub)
        if len(inner) >= 2 and inner[0].get("relkind") == "v" and _int(inner[0].get("rtekind"), -1) == 0 \
                and inner[0].get("relid") == inner[1].get("relid"):
            return _int(inner[0].get("relid"))
    return None


def _vars_of_level(value: Any, level: int) -> bool:
    """True when ``value`` holds a Var of query level ``level`` above it (``var.c contain_vars_of_level``)."""
    if isinstance(value, dict):
        name = value.get("node")
        if name == "VAR":
            return _int(value.get("varlevelsup")) == level
        if name == "QUERY":
            return any(_vars_of_level(v, level + 1) for k, v in value.items() if k != "node")
        if name in ("PLACEHOLDERVAR", "AGGREF", "GROUPINGFUNC") and _int(
                value.get("phlevelsup", value.get("agglevelsup"))) == level:
            return True
        return any(_vars_of_level(v, level) for k, v in value.items() if k != "node")
    if isinstance(value, list):
        return any(_vars_of_level(v, level) for v in value)
    return False


def _functions(value: Any) -> set[int]:
    """Function OIDs called in an expression tree (funcid, opfuncid), not descending into queries."""
    out: set[int] = set()
    if isinstance(value, dict):
        if value.get("node") == "QUERY":
            return out
        for key in ("funcid", "opfuncid"):
            if key in value and _int(value[key]):
                out.add(_int(value[key]))
        for k, v in value.items():
            if k != "node":
                out |= _functions(v)
    elif isinstance(value, list):
        for v in value:
            out |= _functions(v)
    return out


def tree_function_oids(tree: Any) -> set[int]:
    """Every function OID anywhere in the tree (for the volatility look-up)."""
    out: set[int] = set()
    if isinstance(tree, dict):
        for key in ("funcid", "opfuncid"):
            if key in tree and _int(tree[key]):
                out.add(_int(tree[key]))
        for k, v in tree.items():
            if k != "node":
                out |= tree_function_oids(v)
    elif isinstance(tree, list):
        for v in tree:
            out |= tree_function_oids(v)
    return out


def tree_relation_oids(tree: Any) -> set[int]:
    """Every ``relid`` of a range-table entry anywhere in the tree."""
    out: set[int] = set()
    if isinstance(tree, dict):
        if tree.get("node") == "RANGETBLENTRY" and _int(tree.get("relid")):
            out.add(_int(tree["relid"]))
        for k, v in tree.items():
            if k != "node":
                out |= tree_relation_oids(v)
    elif isinstance(tree, list):
        for v in tree:
            out |= tree_relation_oids(v)
    return out


# -- parser, rewriter, plancache --------------------------------------------------------------------------------

def _parser_steps(q: Mapping[str, Any]) -> list[LockStep]:
    """Parse-analysis order (rule 1)."""
    steps: list[LockStep] = []
    rt = _rtable(q)
    cmd = _int(q.get("commandType"))
    result = _int(q.get("resultRelation"))

    def rel(rte: Mapping[str, Any]) -> None:
        view = _view_oid(rte)
        if view:
            steps.append(LockStep(view, _mode(rte) if _int(rte.get("rellockmode")) else "AccessShareLock",
                                  "parser"))
        elif _int(rte.get("rtekind"), -1) == _RTE_RELATION:
            steps.append(LockStep(_int(rte["relid"]), _mode(rte), "parser"))
        elif _int(rte.get("rtekind"), -1) == _RTE_SUBQUERY and isinstance(rte.get("subquery"), dict):
            steps.extend(_parser_steps(rte["subquery"]))
        for key in ("functions", "tablefunc", "values_lists"):
            sub(rte.get(key))

    def sub(expr: Any) -> None:
        for link in _sublinks(expr):
            if isinstance(link.get("subselect"), dict):
                steps.extend(_parser_steps(link["subselect"]))

    def from_item(node: Any) -> None:
        if not isinstance(node, dict):
            return
        name = node.get("node")
        if name == "RANGETBLREF":
            idx = _int(node.get("rtindex"))
            if 1 <= idx <= len(rt) and idx != result:
                rel(rt[idx - 1])
        elif name == "JOINEXPR":
            from_item(node.get("larg"))
            from_item(node.get("rarg"))
            sub(node.get("quals"))
        elif name == "FROMEXPR":
            for item in _list(node.get("fromlist")):
                from_item(item)

    for cte in _ctes(q):
        if isinstance(cte.get("ctequery"), dict):
            steps.extend(_parser_steps(cte["ctequery"]))
    if result and cmd in (_CMD_UPDATE, _CMD_DELETE, _CMD_INSERT, _CMD_MERGE) and result <= len(rt):
        rel(rt[result - 1])
    jointree = _dict(q.get("jointree"))
    for item in _list(jointree.get("fromlist")):
        from_item(item)
    if q.get("setOperations") is not None:
        for rte in rt:
            rel(rte)
    if cmd == _CMD_INSERT:
        for rte in rt:  # INSERT ... VALUES with several rows, or a SELECT not in the jointree
            if _unwalked_subquery(rte, steps):
                rel(rte)
    for key in _PARSER_CLAUSE_ORDER.get(cmd, _PARSER_CLAUSE_ORDER_OTHER):
        sub(jointree.get("quals") if key == "WHERE" else q.get(key))
    return steps


#: The clauses whose sublinks parse analysis visits after the FROM list, in its order, by command type
#: (``WHERE`` is the join tree's quals); INSERT and the rest: :data:`_PARSER_CLAUSE_ORDER_OTHER`.
_PARSER_CLAUSE_ORDER: dict[int, tuple[str, ...]] = {
    _CMD_SELECT: ("targetList", "WHERE", "havingQual", "limitOffset", "limitCount"),
    _CMD_UPDATE: ("WHERE", "returningList", "targetList"),
    _CMD_MERGE: ("WHERE", "mergeJoinCondition", "mergeActionList", "returningList"),
}
_PARSER_CLAUSE_ORDER_OTHER = ("targetList", "WHERE", "onConflict", "returningList")


def _unwalked_subquery(rte: Mapping[str, Any], steps: Sequence[LockStep]) -> bool:
    """A subquery entry (not a view) none of whose relations the steps so far locked."""
    return (_int(rte.get("rtekind"), -1) == _RTE_SUBQUERY and not _view_oid(rte)
            and not any(s.relation_oid in tree_relation_oids(rte.get("subquery")) for s in steps))


def _acquire_rewrite_locks(q: Mapping[str, Any]) -> list[LockStep]:
    """``rewriteHandler.c AcquireRewriteLocks`` on a view's stored query (nested views not yet expanded)."""
    steps: list[LockStep] = []
    for rte in _rtable(q):
        view = _view_oid(rte)
        if view:
            steps.append(LockStep(view, "AccessShareLock", "rewriter"))
        elif _int(rte.get("rtekind"), -1) == _RTE_RELATION:
            steps.append(LockStep(_int(rte["relid"]), _mode(rte), "rewriter"))
        elif _int(rte.get("rtekind"), -1) == _RTE_SUBQUERY and isinstance(rte.get("subquery"), dict):
            steps.extend(_acquire_rewrite_locks(rte["subquery"]))
    for cte in _ctes(q):
        if isinstance(cte.get("ctequery"), dict):
            steps.extend(_acquire_rewrite_locks(cte["ctequery"]))
    for link in _query_sublinks(q):
        if isinstance(link.get("subselect"), dict):
            steps.extend(_acquire_rewrite_locks(link["subselect"]))
    return steps


def _rewriter_steps(q: Mapping[str, Any]) -> list[LockStep]:
    """``rewriteHandler.c fireRIRrules``: views expanded in range-table order, then CTEs, then sublinks."""
    steps: list[LockStep] = []
    for rte in _rtable(q):
        if _int(rte.get("rtekind"), -1) != _RTE_SUBQUERY or not isinstance(rte.get("subquery"), dict):
            continue
        if _view_oid(rte):
            steps.extend(_acquire_rewrite_locks(rte["subquery"]))
        steps.extend(_rewriter_steps(rte["subquery"]))
    for cte in _ctes(q):
        if isinstance(cte.get("ctequery"), dict):
            steps.extend(_rewriter_steps(cte["ctequery"]))
    for link in _query_sublinks(q):
        if isinstance(link.get("subselect"), dict):
            steps.extend(_rewriter_steps(link["subselect"]))
    return steps


def _plancache_steps(q: Mapping[str, Any]) -> list[LockStep]:
    """``plancache.c ScanQueryForLocks`` (rule 3)."""
    steps: list[LockStep] = []
    for rte in _rtable(q):
        kind = _int(rte.get("rtekind"), -1)
        if kind == _RTE_RELATION:
            steps.append(LockStep(_int(rte["relid"]), _mode(rte), "plancache"))
        elif kind == _RTE_SUBQUERY and isinstance(rte.get("subquery"), dict):
            if _int(rte.get("relid")):
                steps.append(LockStep(_int(rte["relid"]), _mode(rte), "plancache"))
            steps.extend(_plancache_steps(rte["subquery"]))
    for cte in _ctes(q):
        if isinstance(cte.get("ctequery"), dict):
            steps.extend(_plancache_steps(cte["ctequery"]))
    for link in _query_sublinks(q):
        if isinstance(link.get("subselect"), dict):
            steps.extend(_plancache_steps(link["subselect"]))
    return steps


# -- planner --------------------------------------------------------------------------------------------------

@dataclass
class _Level:
    """One planner query level (PlannerInfo): its range table after pull-ups, partitions it expanded."""

    rtable: list[dict[str, Any]] = field(default_factory=list)
    children: list[LockStep] = field(default_factory=list)
    from_levels: list[_Level] = field(default_factory=list)


class _Planner:
    """Emulates the lock-taking parts of ``planner.c subquery_planner`` (rule 4) on the rewritten tree."""

    def __init__(self, facts: CatalogFacts, server_version_num: int):
        self.facts = facts
        self.version = server_version_num
        self.steps: list[LockStep] = []
        self.subplans: list[_Level] = []

    # planner-level entry point ---------------------------------------------------------------------------
    def plan(self, q: Mapping[str, Any], outer_ctes: list[dict[str, Any]]) -> _Level:
        """One query level in ``subquery_planner`` order (steps a-g below); its locks go to ``self.steps``."""
        level = _Level()
        cte_env = dict(self._cte_frame(q))
        stack = [cte_env, *outer_ctes]
        cmd = _int(q.get("commandType"))
        self._plan_ctes(q, cmd, cte_env, stack)
        if q.get("setOperations") is not None:
            self._plan_set_operations(q, stack, level)
            return level
        # b. build the join tree with pulled-up sublinks and subqueries
        rt = _rtable(q)
        jointree = _dict(q.get("jointree")) or {"node": "FROMEXPR"}
        leftover: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
        pulled_rtable: list[dict[str, Any]] = []
        jt = self._jointree(jointree, q, rt, stack, leftover, pulled_rtable)
        if cmd == _CMD_MERGE and _int(q.get("resultRelation")):
            jt = _merge_join(q, ("rel", rt[_int(q["resultRelation"]) - 1]), jt)
        self._plan_other_sublinks(q, rt, stack, leftover)
        # d. base relations in join-tree order: get_relation_info
        baserels: list[dict[str, Any]] = []
        subqueries: list[Any] = []
        self._walk(jt, baserels, subqueries)
        for rte in baserels:
            self._index_locks(rte, inh_parent=self._expands(rte))
        level.rtable = [*rt, *pulled_rtable]
        union_later = self._expand_inheritance(level, baserels, subqueries)
        # f. subqueries in FROM not flattened, range-table order (set_base_rel_sizes)
        for item in subqueries:
            pending = union_later.get(id(item[1]), []) if item[0] == "union" else [item[1:]]
            for sub_q, sub_stack in pending:
                level.from_levels.append(self.plan(sub_q, sub_stack))
        self._arbiter_locks(q, rt, cmd)
        return level

    def _plan_ctes(self, q: Mapping[str, Any], cmd: int, cte_env: dict[str, Any],
                   stack: list[dict[str, Any]]) -> None:
        """a. ``SS_process_ctes``: CTEs that are neither unreferenced SELECTs nor inlined, planned as subplans."""
        for cte in _ctes(q):
            body = cte.get("ctequery")
            if not isinstance(body, dict):
                continue
            name = str(cte.get("ctename"))
            if _int(cte.get("cterefcount")) == 0 and _int(body.get("commandType")) == _CMD_SELECT:
                continue
            if self._inlined(cte, cmd):
                continue
            sub = self.plan(body, stack)
            self.subplans.append(sub)
            cte_env[name] = None

    def _plan_set_operations(self, q: Mapping[str, Any], stack: list[dict[str, Any]], level: _Level) -> None:
        """A level with set operations: a flattened UNION ALL appendrel, else each leaf planned left to right."""
        members = _union_all_leaves(q["setOperations"], _rtable(q))
        if members is not None and q.get("hasRecursive") != "true":
            # prepjointree.c flatten_simple_union_all: an appendrel; simple one-table leaves are pulled up
            # (their indexes locked in add_other_rels_to_query), the others planned as subqueries after
            later: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
            self._append_members(members, stack, level, later)
            for sub_q, sub_stack in later:
                level.from_levels.append(self.plan(sub_q, sub_stack))
            return
        # prepunion.c recurse_set_operations: leaves planned left to right
        for rte in _rtable(q):
            if _int(rte.get("rtekind"), -1) == _RTE_SUBQUERY and isinstance(rte.get("subquery"), dict):
                level.from_levels.append(self.plan(rte["subquery"], stack))

    def _plan_other_sublinks(self, q: Mapping[str, Any], rt: list[dict[str, Any]], stack: list[dict[str, Any]],
                             leftover: list[tuple[dict[str, Any], list[dict[str, Any]]]]) -> None:
        """c. sublinks not pulled up: planned before this level's relations (preprocess_expression)."""
        head = [s for key in ("targetList", "withCheckOptions", "returningList") for s in _sublinks(q.get(key))]
        tail = [s for key in ("havingQual", "limitOffset", "limitCount", "onConflict", "mergeActionList")
                for s in _sublinks(q.get(key))]
        for link in head:
            self._plan_sublink(link, stack)
        for link, link_stack in leftover:
            self._plan_sublink(link, link_stack)
        for link in tail:
            self._plan_sublink(link, stack)
        # ... and those of the range table's function, table-function and VALUES expressions, in range-table order
        # (subquery_planner preprocesses RTE expressions last)
        for rte in rt:
            for key in ("functions", "tablefunc", "values_lists"):
                for link in _sublinks(rte.get(key)):
                    self._plan_sublink(link, stack)

    def _expand_inheritance(self, level: _Level, baserels: list[dict[str, Any]], subqueries: list[Any],
                            ) -> dict[int, list[tuple[dict[str, Any], list[dict[str, Any]]]]]:
        """e. inheritance expansion in range-table order; returns the UNION ALL members to plan later, per
        pulled-up union (by ``id`` of its range-table entry)."""
        base_ids = {id(r) for r in baserels}
        unions = {id(item[1]): item for item in subqueries if item[0] == "union"}
        union_later: dict[int, list[tuple[dict[str, Any], list[dict[str, Any]]]]] = {}
        for rte in level.rtable:
            if id(rte) in base_ids and self._expands(rte):
                self._expand(rte, level)
            elif id(rte) in unions:  # expand_appendrel_subquery: the pulled-up UNION ALL members
                _, _, members, member_stack = unions[id(rte)]
                self._append_members(members, member_stack, level, union_later.setdefault(id(rte), []))
        return union_later

    def _arbiter_locks(self, q: Mapping[str, Any], rt: list[dict[str, Any]], cmd: int) -> None:
        """g. INSERT ... ON CONFLICT with a conflict target: createplan.c make_modifytable ->
        plancat.c infer_arbiter_indexes opens every index of the target, OID order, in its lock mode."""
        conflict = _dict(q.get("onConflict"))
        has_target = bool(_list(conflict.get("arbiterElems")) or _int(conflict.get("constraint")))
        if cmd != _CMD_INSERT or not has_target:
            return
        result = _int(q.get("resultRelation"))
        if 1 <= result <= len(rt):
            target = rt[result - 1]
            facts = self.facts.relations.get(_int(target.get("relid")))
            for idx in facts.index_oids if facts is not None else ():
                self.steps.append(LockStep(idx, _mode(target), "planner-arbiter"))

    def _cte_frame(self, q: Mapping[str, Any]) -> dict[str, Any]:
        return {str(c.get("ctename")): c.get("ctequery") for c in _ctes(q)
                if self._inlined(c, _int(q.get("commandType")))}

    def _inlined(self, cte: Mapping[str, Any], cmd: int) -> bool:
        """``subselect.c SS_process_ctes``: inline or plan separately."""
        body = cte.get("ctequery")
        if not isinstance(body, dict):
            return False
        mat = self.facts.materialized_ctes
        if mat is not None:
            return str(cte.get("ctename")) not in mat and _int(cte.get("cterefcount")) > 0
        materialized = _int(cte.get("ctematerialized"))
        refs = _int(cte.get("cterefcount"))
        return bool(
            (materialized == _CTE_MATERIALIZE_NEVER or (materialized == _CTE_MATERIALIZE_DEFAULT and refs == 1))
            and cte.get("cterecursive") != "true"
            and cmd == _CMD_SELECT
            and _int(body.get("commandType")) == _CMD_SELECT
            and not (_functions(body) & self.facts.volatile_functions)
        )

    def _plan_sublink(self, link: Mapping[str, Any], stack: list[dict[str, Any]]) -> None:
        sub = link.get("subselect")
        if isinstance(sub, dict):
            self.subplans.append(self.plan(sub, stack))

    # join tree -----------------------------------------------------------------------------------------------
    def _jointree(self, node: Mapping[str, Any], q: Mapping[str, Any], rt: list[dict[str, Any]],
                  stack: list[dict[str, Any]], leftover: list[tuple[dict[str, Any], list[dict[str, Any]]]],
                  pulled: list[dict[str, Any]]) -> Any:
        """Our join tree: ``("rel", rte)``, ``("subq", query, stack)``, ``("list", [..])``, ``("join", l, r)``."""
        name = node.get("node")
        if name == "RANGETBLREF":
            idx = _int(node.get("rtindex"))
            if not 1 <= idx <= len(rt):
                return ("list", [])
            return self._rte_leaf(rt[idx - 1], stack, leftover, pulled)
        if name == "JOINEXPR":
            left = self._jointree(node.get("larg") or {}, q, rt, stack, leftover, pulled)
            right = self._jointree(node.get("rarg") or {}, q, rt, stack, leftover, pulled)
            jtype = _int(node.get("jointype"))
            quals = _conjuncts(node.get("quals"))
            kept: list[Any] = []
            above: list[Any] = []
            larg_rels, rarg_rels = _rtindexes(node.get("larg")), _rtindexes(node.get("rarg"))
            # pull_up_sublinks_jointree_recurse: an inner join's convertible sublink becomes a join stacked above
            # the join (both sides available); a LEFT join's goes into its nullable right side, a RIGHT join's
            # into its left side; a FULL join's stays.
            for qual in quals:
                pull = self._pullable_sublink(qual, stack)
                uses = self._uses(qual) if pull is not None else set()
                if pull is not None and uses and jtype == _JOIN_INNER and uses <= larg_rels | rarg_rels:
                    above.append(self._sublink_leaf(pull, stack, leftover, pulled))
                elif pull is not None and uses and jtype == _JOIN_LEFT and uses <= rarg_rels:
                    right = ("join", right, self._sublink_leaf(pull, stack, leftover, pulled))
                elif pull is not None and uses and jtype == _JOIN_RIGHT and uses <= larg_rels:
                    left = ("join", left, self._sublink_leaf(pull, stack, leftover, pulled))
                else:
                    kept.append(qual)
            for qual in kept:
                leftover.extend((s, stack) for s in _sublinks(qual))
            if jtype == _JOIN_RIGHT:  # prepjointree.c reduce_outer_joins: RIGHT -> LEFT, sides swapped
                left, right = right, left
            tree: Any = ("join", left, right)
            for leaf in above:
                tree = ("join", tree, leaf)
            return tree
        if name == "FROMEXPR":
            items = [self._jointree(item, q, rt, stack, leftover, pulled) for item in _list(node.get("fromlist"))
                     if isinstance(item, dict)]
            tree = ("list", items)
            kept = []
            for qual in _conjuncts(node.get("quals")):
                pull = self._pullable_sublink(qual, stack)
                if pull is not None:
                    tree = ("join", tree, self._sublink_leaf(pull, stack, leftover, pulled))
                else:
                    kept.append(qual)
            for qual in kept:
                leftover.extend((s, stack) for s in _sublinks(qual))
            return tree
        return ("list", [])

    def _rte_leaf(self, rte: dict[str, Any], stack: list[dict[str, Any]],
                  leftover: list[tuple[dict[str, Any], list[dict[str, Any]]]], pulled: list[dict[str, Any]]) -> Any:
        kind = _int(rte.get("rtekind"), -1)
        if kind == _RTE_RELATION:
            return ("rel", rte)
        sub: Any = None
        sub_stack = stack
        if kind == _RTE_SUBQUERY:
            sub = rte.get("subquery")
        elif kind == _RTE_CTE:
            up = _int(rte.get("ctelevelsup"))
            frame = stack[up] if up < len(stack) else {}
            sub = frame.get(str(rte.get("ctename")))
            sub_stack = stack[up:]
        if not isinstance(sub, dict):
            return ("list", [])
        if self._simple_subquery(sub, rte):
            return self._pull_up(sub, sub_stack, leftover, pulled)
        members = _simple_union_all(sub)
        if members is not None:  # prepjointree.c pull_up_simple_union_all
            return ("union", rte, members, [self._cte_frame(sub), *sub_stack])
        return ("subq", sub, sub_stack)

    def _append_members(self, members: Sequence[dict[str, Any]], stack: list[dict[str, Any]], level: _Level,
                        later: list[tuple[dict[str, Any], list[dict[str, Any]]]]) -> None:
        """The members of a UNION ALL appendrel (``prepjointree.c pull_up_union_leaf_queries``): a simple leaf
        over one relation (``is_simple_subquery``, ``is_safe_append_member``) is pulled up, and the relation is
        built as an appendrel child in ``expand_appendrel_subquery`` (its indexes, then its own partitions); any
        other leaf stays a subquery, planned later (``set_append_rel_size``), appended to ``later``."""
        for leaf in members:
            sub = leaf.get("subquery")
            if not isinstance(sub, dict):
                continue
            member = self._single_relation(sub) if self._simple_subquery(sub, leaf) else None
            if member is None:
                later.append((sub, stack))
                continue
            expands = self._expands(member)
            self._index_locks(member, inh_parent=expands)
            if expands:
                self._expand(member, level)

    @staticmethod
    def _single_relation(sub: Mapping[str, Any]) -> dict[str, Any] | None:
        """The one plain relation of a leaf whose join tree is a single range-table entry and that has no
        sublinks (``is_safe_append_member``), else None."""
        node: Any = sub.get("jointree")
        while isinstance(node, dict) and node.get("node") == "FROMEXPR":
            items = _list(node.get("fromlist"))
            if len(items) != 1:
                return None
            node = items[0]
        if not (isinstance(node, dict) and node.get("node") == "RANGETBLREF"):
            return None
        rt = _rtable(sub)
        idx = _int(node.get("rtindex"))
        if not 1 <= idx <= len(rt) or _int(rt[idx - 1].get("rtekind"), -1) != _RTE_RELATION:
            return None
        if walk_nodes({k: v for k, v in sub.items() if k != "rtable"}, "SUBLINK", skip=("QUERY",)):
            return None
        return rt[idx - 1]

    def _pull_up(self, sub: Mapping[str, Any], stack: list[dict[str, Any]],
                 leftover: list[tuple[dict[str, Any], list[dict[str, Any]]]], pulled: list[dict[str, Any]]) -> Any:
        """``prepjointree.c pull_up_simple_subquery``: the subquery's join tree replaces its reference, its
        range table is appended to the parent's."""
        inner_stack = [self._cte_frame(sub), *stack]
        inner_rt = _rtable(sub)
        inner_pulled: list[dict[str, Any]] = []
        jointree = _dict(sub.get("jointree")) or {"node": "FROMEXPR"}
        jt = self._jointree(jointree, sub, inner_rt, inner_stack, leftover, inner_pulled)
        pulled.extend(inner_rt)
        pulled.extend(inner_pulled)
        leftover.extend((s, inner_stack) for key in ("targetList",) for s in _sublinks(sub.get(key)))
        return jt

    def _simple_subquery(self, sub: Mapping[str, Any], rte: Mapping[str, Any]) -> bool:
        """``prepjointree.c is_simple_subquery``."""
        if _int(sub.get("commandType")) != _CMD_SELECT or sub.get("setOperations") is not None:
            return False
        for key in ("hasAggs", "hasWindowFuncs", "hasTargetSRFs", "hasForUpdate"):
            if sub.get(key) == "true":
                return False
        for key in ("groupClause", "groupingSets", "havingQual", "sortClause", "distinctClause", "limitOffset",
                    "limitCount", "cteList"):
            if sub.get(key):
                return False
        if rte.get("security_barrier") == "true":
            return False
        return not (_functions(sub.get("targetList")) & self.facts.volatile_functions)

    def _pullable_sublink(self, qual: Any, stack: list[dict[str, Any]]) -> dict[str, Any] | None:
        """A top-level AND item ``x IN (subquery)`` / ``EXISTS`` / ``NOT EXISTS`` that
        ``convert_ANY_sublink_to_join`` / ``convert_EXISTS_sublink_to_join`` turns into a join, else None."""
        node = qual
        if isinstance(node, dict) and node.get("node") == "BOOLEXPR" and node.get("boolop") == "not":
            args = _list(node.get("args"))
            node = args[0] if len(args) == 1 else None
            if not (isinstance(node, dict) and node.get("node") == "SUBLINK"
                    and _int(node.get("subLinkType")) == _EXISTS_SUBLINK):
                return None
        if not (isinstance(node, dict) and node.get("node") == "SUBLINK"):
            return None
        sub = node.get("subselect")
        if not isinstance(sub, dict):
            return None
        kind = _int(node.get("subLinkType"))
        if kind == _ANY_SUBLINK:
            if self.version < _PG18 and _vars_of_level({k: v for k, v in sub.items() if k != "node"}, 1):
                return None  # PG 18+ pulls correlated ANY sublinks up as LATERAL subqueries
            test = node.get("testexpr")
            if not _vars_of_level(test, 0) or (_functions(test) & self.facts.volatile_functions):
                return None
            return node
        if kind == _EXISTS_SUBLINK:
            if sub.get("cteList") or sub.get("setOperations") is not None:
                return None
            for key in ("hasAggs", "hasWindowFuncs", "hasTargetSRFs"):
                if sub.get(key) == "true":
                    return None
            if sub.get("havingQual") or sub.get("groupingSets"):  # simplify_EXISTS_query drops GROUP BY
                return None
            jointree = _dict(sub.get("jointree"))
            where = jointree.get("quals")
            rest = {k: v for k, v in sub.items() if k not in ("node", "targetList", "jointree", "limitCount",
                                                              "limitOffset", "sortClause", "distinctClause")}
            rest_jt = {k: v for k, v in jointree.items() if k not in ("node", "quals")}
            if _vars_of_level(rest, 1) or _vars_of_level(rest_jt, 1) or not _vars_of_level(where, 1):
                return None
            if _functions(where) & self.facts.volatile_functions:
                return None
            return {**node, "_exists": True}
        return None

    def _sublink_leaf(self, link: Mapping[str, Any], stack: list[dict[str, Any]],
                      leftover: list[tuple[dict[str, Any], list[dict[str, Any]]]], pulled: list[dict[str, Any]]) -> Any:
        sub = link["subselect"]
        if link.get("_exists"):
            # convert_EXISTS_sublink_to_join: the subquery's range table joins the parent's directly
            inner_stack = [self._cte_frame(sub), *stack]
            inner_rt = _rtable(sub)
            inner_pulled: list[dict[str, Any]] = []
            jointree = {k: v for k, v in (sub.get("jointree") or {}).items() if k != "quals"}
            jointree.setdefault("node", "FROMEXPR")
            jt = self._jointree(jointree, sub, inner_rt, inner_stack, leftover, inner_pulled)
            leftover.extend((s, inner_stack) for s in _sublinks((sub.get("jointree") or {}).get("quals")))
            pulled.extend(inner_rt)
            pulled.extend(inner_pulled)
            return jt
        # convert_ANY_sublink_to_join: a new subquery RTE, then pulled up if simple
        fake_rte = {"node": "RANGETBLENTRY", "rtekind": str(_RTE_SUBQUERY), "subquery": sub}
        return self._rte_leaf(fake_rte, stack, leftover, pulled)

    @staticmethod
    def _uses(qual: Any) -> set[int]:
        """Range-table indexes of the parent a convertible sublink refers to (``pull_varnos``)."""
        link = qual
        if isinstance(link, dict) and link.get("node") == "BOOLEXPR":
            link = _list(link.get("args"))[0]
        if not isinstance(link, dict):
            return set()
        if _int(link.get("subLinkType")) == _ANY_SUBLINK:
            return _varnos(link.get("testexpr"), 0) | _varnos(link.get("subselect"), 0)
        return _varnos(link.get("subselect"), 0)

    def _walk(self, tree: Any, baserels: list[dict[str, Any]], subqueries: list[Any]) -> None:
        """``initsplan.c add_base_rels_to_query``: join tree depth first, left to right (``subqueries`` gets
        ``("subq", query, stack)`` and ``("union", rte, members, stack)`` items)."""
        kind = tree[0]
        if kind == "rel":
            baserels.append(tree[1])
        elif kind in ("subq", "union"):
            subqueries.append(tree)
        elif kind == "list":
            for item in tree[1]:
                self._walk(item, baserels, subqueries)
        elif kind == "join":
            self._walk(tree[1], baserels, subqueries)
            self._walk(tree[2], baserels, subqueries)

    # locks -------------------------------------------------------------------------------------------------
    def _expands(self, rte: Mapping[str, Any]) -> bool:
        facts = self.facts.relations.get(_int(rte.get("relid")))
        return bool(rte.get("inh") == "true" and facts is not None and facts.children)

    def _index_locks(self, rte: Mapping[str, Any], *, inh_parent: bool) -> None:
        """``plancat.c get_relation_info``."""
        oid = _int(rte.get("relid"))
        facts = self.facts.relations.get(oid)
        if facts is None:
            return
        if inh_parent and (facts.relkind != "p" or self.version < _PG16):
            return
        if facts.relkind == "p" and self.version < _PG16:
            return
        mode = _mode(rte)
        for idx in facts.index_oids:
            self.steps.append(LockStep(idx, mode, "planner-index"))

    def _expand(self, rte: Mapping[str, Any], level: _Level) -> None:
        """``inherit.c expand_inherited_rtentry``."""
        oid = _int(rte.get("relid"))
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


def _union_all_leaves(setop: Any, rt: Sequence[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """The leaf RTEs of a set-operation tree made only of UNION ALL (``prepjointree.c
    is_simple_union_all_recurse``; the leaves' column types are taken to agree), in order; None otherwise."""
    if not isinstance(setop, dict):
        return None
    if setop.get("node") == "RANGETBLREF":
        idx = _int(setop.get("rtindex"))
        return [rt[idx - 1]] if 1 <= idx <= len(rt) else None
    if setop.get("node") != "SETOPERATIONSTMT" or _int(setop.get("op")) != _SETOP_UNION or setop.get("all") != "true":
        return None
    left = _union_all_leaves(setop.get("larg"), rt)
    right = _union_all_leaves(setop.get("rarg"), rt)
    return None if left is None or right is None else [*left, *right]


def _simple_union_all(sub: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """``prepjointree.c is_simple_union_all``: a UNION ALL subquery without ORDER BY, LIMIT/OFFSET, locking or
    WITH; its leaf RTEs, else None."""
    if sub.get("setOperations") is None or _int(sub.get("commandType")) != _CMD_SELECT:
        return None
    if sub.get("sortClause") or sub.get("limitOffset") is not None or sub.get("limitCount") is not None \
            or sub.get("rowMarks") or sub.get("hasForUpdate") == "true" or sub.get("cteList"):
        return None
    return _union_all_leaves(sub["setOperations"], _rtable(sub))


def _merge_join(q: Mapping[str, Any], target: Any, source: Any) -> Any:
    """``prepjointree.c transform_MERGE_to_join``: ``target <jointype> source``; WHEN NOT MATCHED [BY TARGET]
    makes it a RIGHT join, which ``reduce_outer_joins`` turns into ``source LEFT JOIN target`` (source first);
    with NOT MATCHED BY SOURCE too it is a FULL join (target first)."""
    by_target = by_source = False
    for action in _list(q.get("mergeActionList")):
        if not isinstance(action, dict):
            continue
        if "matchKind" in action:  # PG 17+: 0 MATCHED, 1 NOT MATCHED BY SOURCE, 2 NOT MATCHED BY TARGET
            by_source |= _int(action["matchKind"]) == 1
            by_target |= _int(action["matchKind"]) == 2
        else:
            by_target |= action.get("matched") == "false"
    if by_target and not by_source:
        return ("join", source, target)
    return ("join", target, source)


def _rtindexes(node: Any) -> set[int]:
    """Range-table indexes a join-tree node covers (base relations and joins)."""
    if not isinstance(node, dict):
        return set()
    name = node.get("node")
    if name == "RANGETBLREF":
        return {_int(node.get("rtindex"))}
    if name == "JOINEXPR":
        return {_int(node.get("rtindex"))} | _rtindexes(node.get("larg")) | _rtindexes(node.get("rarg"))
    if name == "FROMEXPR":
        return {i for item in _list(node.get("fromlist")) for i in _rtindexes(item)}
    return set()


def _varnos(value: Any, level: int) -> set[int]:
    """``varno`` of the Vars that belong to the query ``level`` levels above ``value``'s own level."""
    out: set[int] = set()
    if isinstance(value, dict):
        name = value.get("node")
        if name == "VAR":
            if _int(value.get("varlevelsup")) == level:
                out.add(_int(value.get("varno")))
            return out
        if name == "QUERY":
            level += 1
        for k, v in value.items():
            if k != "node":
                out |= _varnos(v, level)
    elif isinstance(value, list):
        for v in value:
            out |= _varnos(v, level)
    return out


def _conjuncts(qual: Any) -> list[Any]:
    if qual is None:
        return []
    if isinstance(qual, dict) and qual.get("node") == "BOOLEXPR" and qual.get("boolop") == "and":
        return [x for arg in _list(qual.get("args")) for x in _conjuncts(arg)]
    if isinstance(qual, list):
        return [x for arg in qual for x in _conjuncts(arg)]
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


def statement_lock_steps(tree: Mapping[str, Any], facts: CatalogFacts, server_version_num: int,
                         phase: str) -> list[LockStep]:
    """The statement's lock requests in acquisition order for one probe phase.

    :param tree: the rewritten Query (:func:`lockscope.querytree.build_query_tree`; the server's own
        ``debug_print_rewritten`` tree read by :func:`lockscope.pgnodes.parse_node_dump` has the same shape).
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
