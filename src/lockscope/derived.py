"""Plan-time partition pruning decided from the catalog, for footprints derived without EXPLAIN.

A role that may not EXPLAIN a statement (:mod:`lockscope.privileges`) can still read the catalog. The planner
locks, for every partitioned table it expands, only the partitions plan-time pruning keeps, each with its indexes
(``inherit.c expand_partitioned_rtentry`` locks the partitions ``partprune.c prune_append_rel_partitions`` leaves;
PG 12+). Plan-time pruning uses the restriction clauses on the partition key whose values are known when planning
(constants, and a custom plan's parameter values; a generic plan knows no parameter and prunes by constants only).

This module decides it where the catalog can: a one-table statement (SELECT from one relation, UPDATE or DELETE
without FROM/USING) whose WHERE is a conjunction, or a SELECT of relations joined by inner joins (each relation's own
conjuncts, every column qualified with its alias; a join that carries a value over from another relation is not
derived), with ``key = value``, ``key IN (values)``, ``<``, ``<=``, ``>``, ``>=`` and ``BETWEEN`` on a single-column
LIST or RANGE key, equalities on a HASH key; a comparison with a value the planner does not know (a parameter of a
generic plan, ``now()``, ``CURRENT_DATE``, a subquery) prunes nothing when planning. The partitions holding a value
are found by the server's own comparison of the key's type and collation (``partition_match.sql``,
``partition_range_match.sql``) or its partition hash (``satisfies_hash_partition``), the values passed in: no table
read, no EXPLAIN. A value no LIST/RANGE partition holds goes to the DEFAULT partition
(``partbounds.c get_partition_for_tuple``). What it cannot decide (``<>``, ``OR``, a key computed by an expression,
several key columns, a comparison with a DEFAULT partition, partitioned tables inside outer joins, subqueries and
views) keeps every partition and is said, one sentence each: the figure is then at most what the planner locks.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from . import execlocks
from .rows import AcquisitionFactsRow, FunctionImmutabilityRow, PartitionKeyRow, PartitionMatchRow

if TYPE_CHECKING:
    from .db import Session

__all__ = ["Pruning", "plan_time_pruning"]


@dataclass(frozen=True)
class Pruning:
    """What plan-time pruning removes, as far as the catalog decides.

    :ivar pruned: OIDs of the partitions the planner never opens, with every relation under them (sub-partitions,
        indexes).
    :ivar undecided: one sentence per partitioned table whose pruning is not decided here (all its partitions kept).
    """

    pruned: frozenset[int] = frozenset()
    undecided: tuple[str, ...] = ()


_HASH_BOUND = re.compile(r"modulus (\d+), remainder (\d+)", re.IGNORECASE)


class _Tree:
    """The statement's relations from the order facts: children by parent."""

    def __init__(self, rows: Sequence[AcquisitionFactsRow]) -> None:
        self.by_oid = {r.relation_oid: r for r in rows}
        self.kids: dict[int, list[AcquisitionFactsRow]] = {}
        for r in rows:
            if r.parent_oid is not None and r.relkind not in ("i", "I"):
                self.kids.setdefault(r.parent_oid, []).append(r)
        self.under: dict[int, list[int]] = {}
        for r in rows:
            if r.parent_oid is not None:
                self.under.setdefault(r.parent_oid, []).append(r.relation_oid)

    def subtree(self, oid: int) -> set[int]:
        """``oid`` and every relation under it (partitions, indexes), depth first."""
        out = {oid}
        stack = [oid]
        while stack:
            for child in self.under.get(stack.pop(), []):
                if child not in out:
                    out.add(child)
                    stack.append(child)
        return out


def _one_table(raw: Mapping[str, Any]) -> tuple[Mapping[str, Any] | None, Any]:
    """The single relation (a RangeVar) a one-table statement reads or writes, and its WHERE; (None, None) for any
    other shape."""
    kind, body = next(iter(raw.items()))
    if body.get("withClause"):
        return None, None
    if kind == "SelectStmt":
        items = body.get("fromClause") or []
        if len(items) == 1 and "RangeVar" in items[0] and body.get("op", "SETOP_NONE") == "SETOP_NONE":
            return items[0]["RangeVar"], body.get("whereClause")
        return None, None
    if kind in ("UpdateStmt", "DeleteStmt") and not body.get("fromClause") and not body.get("usingClause"):
        return body.get("relation"), body.get("whereClause")
    return None, None


def _joined_tables(raw: Mapping[str, Any]) -> list[tuple[Mapping[str, Any], Any]] | None:
    """For a SELECT over relations joined by inner joins (and commas): each relation (RangeVar) with the conjuncts of
    WHERE and the joins' ON clauses that refer to it alone (every column qualified with its alias), as one AND; None
    for another shape (an outer join, a subquery or function in FROM, WITH, set operations), or when a join
    condition equates a relation's column with another relation's column that a conjunct compares with a value (the
    planner would carry the value over: ``equivclass.c``, and prune by it)."""
    kind, body = next(iter(raw.items()))
    if kind != "SelectStmt" or body.get("withClause") or body.get("op", "SETOP_NONE") != "SETOP_NONE":
        return None
    rels: list[Mapping[str, Any]] = []
    quals: list[Any] = list(execlocks.where_conjuncts(body.get("whereClause"), []))
    conjuncts = [node for node, _ in quals]

    def item(node: Any) -> bool:
        if "RangeVar" in node:
            rels.append(node["RangeVar"])
            return True
        join = node.get("JoinExpr")
        if not join or join.get("jointype") != "JOIN_INNER" or join.get("usingClause") or join.get("isNatural"):
            return False
        conjuncts.extend(n for n, _ in execlocks.where_conjuncts(join.get("quals"), []))
        return item(join["larg"]) and item(join["rarg"])

    if not all(item(node) for node in body.get("fromClause") or []) or len(rels) < 2:
        return None
    aliases = [(rv.get("alias") or {}).get("aliasname") or rv.get("relname") for rv in rels]
    refs = [_qualified_refs(c) for c in conjuncts]
    valued = {ref for r, c in zip(refs, conjuncts, strict=True) if len({a for a, _ in r}) == 1
              and _compares_with_value(c) for ref in r}
    joins = [r for r in refs if len({a for a, _ in r}) > 1]
    grown = True
    while grown:  # equalities chain: a = b, b = c, c = 5 carries 5 to a
        grown = False
        for r in joins:
            if r & valued and not r <= valued:
                valued |= r
                grown = True
    out: list[tuple[Mapping[str, Any], Any]] = []
    for rv, alias in zip(rels, aliases, strict=True):
        own = [c for r, c in zip(refs, conjuncts, strict=True) if r and {a for a, _ in r} == {alias}]
        for r in refs:
            if len({a for a, _ in r}) > 1 and any(a == alias for a, _ in r) and any(x in valued for x in r):
                return None  # a join equating it with a column compared with a value: carried over, not derived
        out.append((rv, {"BoolExpr": {"boolop": "AND_EXPR", "args": own}} if own else None))
    return out


def _qualified_refs(node: Any) -> set[tuple[str | None, str]]:
    """Every column reference of a raw subtree as (qualifier or None, column)."""
    out: set[tuple[str | None, str]] = set()
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, Mapping):
            ref = item.get("ColumnRef")
            fields = ref.get("fields") or [] if isinstance(ref, Mapping) else []
            if fields and "String" in fields[-1]:  # a column, not t.*
                qualifier = fields[-2].get("String", {}).get("sval") if len(fields) >= 2 else None
                out.add((None if qualifier is None else str(qualifier), str(fields[-1]["String"].get("sval"))))
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return out


def _compares_with_value(node: Any) -> bool:
    """True for a comparison whose one side is a column and the other no column (a value)."""
    expr = node.get("A_Expr") if isinstance(node, Mapping) else None
    if not expr:
        return False
    sides = [_qualified_refs(expr.get("lexpr")), _qualified_refs(expr.get("rexpr"))]
    return bool(sides[0]) != bool(sides[1])


def _column_names(node: Any) -> set[str]:
    """Every column name a raw subtree refers to (the last field of each ColumnRef)."""
    return {column for _, column in _qualified_refs(node)}


@dataclass(frozen=True)
class _Restriction:
    """What plan-time pruning knows of one key column: the values it equals (``=``, ``IN``; None: no such
    condition) and its comparisons with known values (``<``, ``<=``, ``>``, ``>=``; ``BETWEEN`` as two)."""

    values: tuple[str | None, ...] | None = None
    ranges: tuple[tuple[str, str], ...] = ()

    @property
    def prunes(self) -> bool:
        """True when it restricts the key at all."""
        return self.values is not None or bool(self.ranges)


_RANGE_OPS = ("<", "<=", ">", ">=")


def _key_restriction(where: Any, column: str, params: Sequence[str | None] | None,
                     planned_value: Callable[[Any], bool | None]) -> tuple[_Restriction, bool]:
    """What plan-time pruning knows of ``column``: (restriction, decided). decided False: a restriction lockscope
    does not evaluate (every partition is then kept, an upper bound).

    Plan-time pruning (``partprune.c gen_partprune_steps``, ``match_clause_to_partition_key``) uses the key's
    comparisons with values known when planning: constants and immutable expressions of them, and a custom plan's
    parameters. A generic plan's ``$n``, and a stable expression (``now()``, ``CURRENT_DATE``), leave the pruning to
    execution (``make_partition_pruneinfo``: initial pruning), after the planner locked every partition.

    :param params: the parameters' values, or None for a generic plan (parameters unknown when planning).
    :param planned_value: for a value node lockscope could not compute, whether the planner can (True: immutable),
        cannot (False: a stable or volatile function, ``CURRENT_*``), or None when lockscope cannot tell.
    """
    values: list[str | None] | None = None
    ranges: list[tuple[str, str]] = []
    decided = True
    for node, cond in execlocks.where_conjuncts(where, params or []):
        if cond is None or cond[0] != column:
            if column in _column_names(node):
                decided = False  # OR, a function of the key, ...: it may prune
            continue
        _, op, given = cond
        if params is None and _all_params(node):
            continue  # a generic plan: pruned at execution, not when planning
        if not all(execlocks.is_known(v) for v in given):
            if planned_value(node) is False:
                continue  # a stable expression: no plan-time pruning by it
            decided = False
            continue
        if op in ("=", "in"):
            found = list(given)
            values = found if values is None else [v for v in values if v in found]
        elif op in _RANGE_OPS and given[0] is not None:
            ranges.append((op, given[0]))
        elif op == "between" and None not in given:
            ranges += [(">=", str(given[0])), ("<=", str(given[1]))]
        else:
            decided = False  # <>, IS [NOT] NULL, a comparison with NULL
    if values is not None and not values:
        decided = False  # contradictory equalities: the planner's constant-false handling differs by shape
    return _Restriction(None if values is None else tuple(values), tuple(ranges)), decided


def _all_params(node: Any) -> bool:
    """True when every value a comparison compares with is a ``$n`` parameter (possibly cast)."""
    expr = node.get("A_Expr") if isinstance(node, Mapping) else None
    if not expr:
        return False
    sides = [expr.get("lexpr"), expr.get("rexpr")]
    operands: list[Any] = []
    for side in sides:
        if isinstance(side, Mapping) and "ColumnRef" in side:
            continue
        operands.extend(side["List"].get("items") or [] if isinstance(side, Mapping) and "List" in side
                        else side if isinstance(side, list) else [side])
    while any(isinstance(o, Mapping) and "TypeCast" in o for o in operands):
        operands = [o["TypeCast"].get("arg") if isinstance(o, Mapping) and "TypeCast" in o else o for o in operands]
    return bool(operands) and all(isinstance(o, Mapping) and "ParamRef" in o for o in operands)


def plan_time_pruning(session: Session, raw: Mapping[str, Any], rows: Sequence[AcquisitionFactsRow],
                      params: Sequence[str | None] | None) -> Pruning:
    """The partitions plan-time pruning removes from the statement's plan, as far as the catalog decides.

    :param session: for the catalog (``partition_keys.sql``) and the server's comparisons (``partition_match.sql``,
        ``partition_hash_match.sql``): read-only queries on values lockscope passes, no table read.
    :param raw: the statement node of the raw parse tree.
    :param rows: the statement's order facts (``acquisition_facts.sql``): its relations, their partitions and indexes.
    :param params: the parameters' values (simple protocol, custom plans), or None for a generic plan.
    :raises DatabaseError: a catalog query failed.
    """
    tree = _Tree(rows)
    partitioned = sorted(r.relation_oid for r in rows if r.relkind == "p")
    if not partitioned:
        return Pruning()
    keys = {k.relation_oid: k for k in session.query_rows("partition_keys", PartitionKeyRow, [partitioned])}
    range_var, where = _one_table(raw)
    tables = [(range_var, where)] if range_var is not None else _joined_tables(raw) or []
    # each partitioned table's scans in the statement: the quals each one is restricted by
    scans: dict[int, list[Any]] = {}
    for rv, quals in tables:
        named = [r for r in rows if r.parent_oid is None and r.relkind in ("p", "r") and
                 r.relname == rv.get("relname")]
        if len(named) == 1 and rv.get("inh", True) and named[0].relkind == "p":
            scans.setdefault(named[0].relation_oid, []).append(quals)
    pruned: set[int] = set()
    undecided: list[str] = []
    seen_views = any(r.relkind == "v" for r in rows)
    mentioned = _column_names(raw)
    for oid in partitioned:
        parent = tree.by_oid[oid]
        if parent.relispartition and parent.parent_oid in tree.by_oid:
            continue  # reached from its parent
        if oid in scans:  # a partition is locked when any scan of the table keeps it
            cuts: list[set[int]] = []
            for quals in scans[oid]:
                cut: set[int] = set()
                _prune(session, tree, keys, oid, quals, params, cut, undecided)
                cuts.append(cut)
            pruned |= set.intersection(*cuts)
            continue
        key = keys.get(oid)
        key_cols = set(key.key_columns) - {None} if key else set()
        if seen_views or (key is not None and (None in key.key_columns or key_cols & mentioned)):
            undecided.append(f"pruning of {parent.relation}'s {len(tree.kids.get(oid, []))} partitions is not "
                             "derived in this statement's shape: all are counted (at most)")
    return Pruning(frozenset(pruned), tuple(undecided))


def _prune(session: Session, tree: _Tree, keys: Mapping[int, PartitionKeyRow], oid: int, where: Any,
           params: Sequence[str | None] | None, pruned: set[int], undecided: list[str]) -> None:
    """Prune ``oid``'s partitions by ``where`` (recursing into the partitions kept that are partitioned)."""
    parent = tree.by_oid[oid]
    children = tree.kids.get(oid, [])
    key = keys.get(oid)
    kept: list[AcquisitionFactsRow] = children
    if key is None or len(key.key_columns) != 1 or key.key_columns[0] is None or key.key_types[0] is None:
        if where is not None:
            undecided.append(f"pruning of {parent.relation}'s {len(children)} partitions by an expression or "
                             "multi-column key is not derived: all are counted (at most)")
    else:
        restriction, decided = _key_restriction(where, key.key_columns[0], params,
                                                lambda node: _planned_value(session, node))
        if not decided:
            undecided.append(f"pruning of {parent.relation}'s {len(children)} partitions by this condition on "
                             f"{key.key_columns[0]} is not derived: all are counted (at most)")
        elif restriction.prunes:
            holding = _holding(session, key, oid, children, restriction)
            if holding is None:
                undecided.append(f"pruning of {parent.relation}'s {len(children)} partitions by a range of "
                                 f"{key.key_columns[0]} (with a DEFAULT partition, or bounds lockscope does not "
                                 "read) is not derived: all are counted (at most)")
            else:
                kept = [c for c in children if c.relation_oid in holding]
                for c in children:
                    if c.relation_oid not in holding:
                        pruned.update(tree.subtree(c.relation_oid))
    for child in kept:
        if child.relkind == "p":
            _prune(session, tree, keys, child.relation_oid, where, params, pruned, undecided)


def _planned_value(session: Session, node: Any) -> bool | None:
    """Whether the planner knows the value a comparison compares the key with (see :func:`_key_restriction`): False
    for ``CURRENT_DATE`` and the like, a subquery (an initplan's value is known when it runs), or a call of a function
    with no immutable overload (stable or volatile: no plan-time pruning by it), True when every function called is
    immutable in every overload, None otherwise."""
    names: list[str] = []
    stack = [node]
    stable = False
    while stack:
        item = stack.pop()
        if isinstance(item, Mapping):
            if "SQLValueFunction" in item or "SubLink" in item:  # CURRENT_DATE ...; a subquery's value (an initplan)
                stable = True
            call = item.get("FuncCall")
            if isinstance(call, Mapping):
                parts = [str(n.get("String", {}).get("sval", "")) for n in call.get("funcname") or []]
                if parts:
                    names.append(parts[-1].lower())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    if stable:
        return False
    if not names:
        return None
    rows = {r.name: r for r in session.query_rows("function_immutability", FunctionImmutabilityRow,
                                                 [sorted(set(names))])}
    if any(n in rows and not rows[n].some_immutable for n in names):
        return False
    if all(n in rows and rows[n].all_immutable for n in names):
        return True
    return None


def _holding(session: Session, key: PartitionKeyRow, parent_oid: int, children: Sequence[AcquisitionFactsRow],
             restriction: _Restriction) -> set[int] | None:
    """The partitions that may hold a key meeting ``restriction``: those holding any of its values (a NULL value is
    held by none: ``key = NULL`` is never true; the DEFAULT partition when some value has no other) and meeting
    its comparisons (a HASH key is not pruned by comparisons); None when not decided here (a comparison with a
    DEFAULT partition, a bound not understood)."""
    fill = {"key_type": str(key.key_types[0])}
    if key.partstrat != "h":
        fill["collate"] = f"COLLATE {key.key_collations[0]}" if key.key_collations and key.key_collations[0] else ""
    default = [c.relation_oid for c in children if (c.bound or "").strip().upper() == "DEFAULT"]
    holding = {c.relation_oid for c in children}
    if restriction.values is not None:
        values = list(restriction.values)
        if key.partstrat == "h":
            hashed = _hash_items(children)
            if hashed is None:
                return None
            found = session.query_rows("partition_hash_match", PartitionMatchRow, [*hashed, values, parent_oid],
                                       fill=fill)
        else:
            items = _bound_items(key.partstrat, [c for c in children if c.relation_oid not in default])
            if items is None:
                return None
            found = session.query_rows("partition_match", PartitionMatchRow, [*items, values], fill=fill)
        holding = {r.partition_oid for r in found}
        matched = {r.value_index for r in found}
        if default and any(v is not None and n not in matched for n, v in enumerate(values, start=1)):
            holding.update(default)
    if restriction.ranges and key.partstrat != "h":
        items = _bound_items(key.partstrat, [c for c in children if c.relation_oid not in default])
        if items is None or default:
            return None
        found = session.query_rows("partition_range_match", PartitionMatchRow,
                                   [*items, [op for op, _ in restriction.ranges], [v for _, v in restriction.ranges]],
                                   fill=fill)
        holding &= {r.partition_oid for r in found}
    return holding


def _hash_items(children: Sequence[AcquisitionFactsRow]) -> list[list[int]] | None:
    """``partition_hash_match.sql``'s bound arrays (OIDs, moduli, remainders), or None for a bound not understood."""
    oids: list[int] = []
    moduli: list[int] = []
    remainders: list[int] = []
    for c in children:
        m = _HASH_BOUND.search(c.bound or "")
        if m is None:
            return None
        oids.append(c.relation_oid)
        moduli.append(int(m.group(1)))
        remainders.append(int(m.group(2)))
    return [oids, moduli, remainders]


def _bound_items(strategy: str, children: Sequence[AcquisitionFactsRow]) -> list[list[Any]] | None:
    """``partition_match.sql``'s four bound arrays (OIDs, kinds, flags, values) from the ``FOR VALUES`` texts, or None
    for a bound lockscope does not read (a multi-column RANGE bound)."""
    oids: list[int] = []
    kinds: list[str] = []
    flags: list[int] = []
    values: list[str | None] = []
    for c in children:
        bound = c.bound or ""
        if strategy == "l":
            literals = [("in", lit) for lit in _literals(bound)]
        else:
            parts = bound.split(" TO ")
            if len(parts) != 2:
                return None
            lo, hi = _literals(parts[0]), _literals(parts[1])
            if len(lo) != 1 or len(hi) != 1:
                return None
            literals = [("lo", lo[0]), ("hi", hi[0])]
        for kind, lit in literals:
            oids.append(c.relation_oid)
            kinds.append(kind)
            flag = {"MINVALUE": 0, "MAXVALUE": 2, "NULL": 3}.get(lit, 1)
            flags.append(flag)
            values.append(_literal_text(lit) if flag == 1 else None)
    return [oids, kinds, flags, values]


_LITERAL = re.compile(r"'(?:[^']|'')*'|MINVALUE|MAXVALUE|NULL|true|false|[-+]?[0-9][0-9.eE+-]*")


def _literals(text: str) -> list[str]:
    """The literals of a ``FOR VALUES`` text, in order (``IN ('a', 'b')`` → ``'a'``, ``'b'``)."""
    body = text.split("(", 1)[1] if "(" in text else text
    return _LITERAL.findall(body)


def _literal_text(literal: str) -> str:
    """The value a bound literal stands for, as text: ``'it''s'`` → ``it's``, ``42`` → ``42``."""
    if literal.startswith("'") and literal.endswith("'"):
        return literal[1:-1].replace("''", "'")
    return literal
