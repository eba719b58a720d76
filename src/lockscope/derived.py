"""Plan-time partition pruning decided from the catalog, for footprints derived without EXPLAIN.

A role that may not EXPLAIN a statement (:mod:`lockscope.privileges`) can still read the catalog. The planner
locks, for every partitioned table it expands, only the partitions plan-time pruning keeps, each with its indexes
(``inherit.c expand_partitioned_rtentry`` locks the partitions ``partprune.c prune_append_rel_partitions`` leaves;
PG 12+). Plan-time pruning uses the restriction clauses on the partition key whose values are known when planning
(constants, and a custom plan's parameter values; a generic plan knows no parameter and prunes by constants only).

This module decides it where the catalog can: a one-table statement (SELECT from one relation, UPDATE or DELETE
without FROM/USING) whose WHERE is a conjunction, with ``key = value`` or ``key IN (values)`` on a single-column LIST,
RANGE or HASH key. The partition holding a value is found by the server's own comparison of the key's type and
collation (``partition_match.sql``) or its partition hash (``satisfies_hash_partition``), the values passed in: no
table read, no EXPLAIN. A value no LIST/RANGE partition holds goes to the DEFAULT partition
(``partbounds.c get_partition_for_tuple``). What it cannot decide (other operators on the key, a key computed by an
expression, several key columns, partitioned tables inside joins, subqueries and views) keeps every partition and is
said, one sentence each: the figure is then at most what the planner locks.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from . import execlocks
from .rows import AcquisitionFactsRow, PartitionKeyRow, PartitionMatchRow

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


def _column_names(node: Any) -> set[str]:
    """Every column name a raw subtree refers to (the last field of each ColumnRef)."""
    names: set[str] = set()
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, Mapping):
            ref = item.get("ColumnRef")
            if isinstance(ref, Mapping):
                fields = ref.get("fields") or []
                if fields and "String" in fields[-1]:
                    names.add(str(fields[-1]["String"].get("sval")))
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return names


def _key_values(where: Any, column: str, params: Sequence[str | None] | None) -> tuple[list[str | None] | None, bool]:
    """The values plan-time pruning knows for ``column``: (values, decided). (None, True): no restriction the planner
    prunes by (every partition). (None, False): a restriction lockscope does not evaluate.

    Plan-time pruning (``partprune.c gen_partprune_steps`` with ``PARTCLAUSE_MATCH_*``) uses a key's comparisons
    with values known when planning: constants, and a custom plan's parameters; a generic plan's ``$n`` leaves the
    pruning to execution (``make_partition_pruneinfo``), after the planner locked every partition.

    :param params: the parameters' values, or None for a generic plan (parameters unknown when planning).
    """
    values: list[str | None] | None = None
    decided = True
    for node, cond in execlocks.where_conjuncts(where, params or []):
        if cond is None or cond[0] != column:
            if column in _column_names(node):
                decided = False  # OR, a function of the key, ...: it may prune
            continue
        _, op, given = cond
        if params is None and _all_params(node):
            continue  # a generic plan: pruned at execution, not when planning
        if op not in ("=", "in") or not all(execlocks.is_known(v) for v in given):
            decided = False
            continue
        found = list(given)
        values = found if values is None else [v for v in values if v in found]
    return (values, True) if decided else (None, False)


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
    top: int | None = None
    if range_var is not None:
        named = [r for r in rows if r.parent_oid is None and r.relkind in ("p", "r") and
                 r.relname == range_var.get("relname")]
        top = named[0].relation_oid if len(named) == 1 and range_var.get("inh", True) else None
    pruned: set[int] = set()
    undecided: list[str] = []
    seen_views = any(r.relkind == "v" for r in rows)
    mentioned = _column_names(raw)
    for oid in partitioned:
        parent = tree.by_oid[oid]
        if parent.relispartition and parent.parent_oid in tree.by_oid:
            continue  # reached from its parent
        if oid == top:
            _prune(session, tree, keys, oid, where, params, pruned, undecided)
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
        values, decided = _key_values(where, key.key_columns[0], params)
        if not decided:
            undecided.append(f"pruning of {parent.relation}'s {len(children)} partitions by this condition on "
                             f"{key.key_columns[0]} is not derived: all are counted (at most)")
        elif values is not None:
            holding = _holding(session, key, oid, children, values)
            if holding is None:
                undecided.append(f"pruning of {parent.relation}'s partitions: its bounds could not be compared; "
                                 "all are counted (at most)")
            else:
                kept = [c for c in children if c.relation_oid in holding]
                for c in children:
                    if c.relation_oid not in holding:
                        pruned.update(tree.subtree(c.relation_oid))
    for child in kept:
        if child.relkind == "p":
            _prune(session, tree, keys, child.relation_oid, where, params, pruned, undecided)


def _holding(session: Session, key: PartitionKeyRow, parent_oid: int, children: Sequence[AcquisitionFactsRow],
             values: Sequence[str | None]) -> set[int] | None:
    """The partitions that hold any of ``values`` (a NULL value is held by none: ``key = NULL`` is never true), the
    DEFAULT partition when some value has no other; None when a bound is not understood."""
    fill = {"key_type": str(key.key_types[0])}
    if key.partstrat != "h":
        fill["collate"] = f"COLLATE {key.key_collations[0]}" if key.key_collations and key.key_collations[0] else ""
    default = [c.relation_oid for c in children if (c.bound or "").strip().upper() == "DEFAULT"]
    if key.partstrat == "h":
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
        found = session.query_rows("partition_hash_match", PartitionMatchRow,
                                   [oids, moduli, remainders, list(values), parent_oid], fill=fill)
    else:
        items = _bound_items(key.partstrat, [c for c in children if c.relation_oid not in default])
        if items is None:
            return None
        found = session.query_rows("partition_match", PartitionMatchRow, [*items, list(values)], fill=fill)
    holding = {r.partition_oid for r in found}
    matched = {r.value_index for r in found}
    if default and any(v is not None and n not in matched for n, v in enumerate(values, start=1)):
        holding.update(default)
    return holding


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
