"""Values for the ``$n`` parameters of a pg_stat_statements text, so its custom plan can be probed.

pg_stat_statements replaces constants with ``$1..$n``. A custom plan is planned with the values bound, so its
planner locks (plan-time partition pruning above all) depend on them. lockscope derives a realistic value for each
parameter from the statistics of the column it is compared with (pglast finds ``column op $n``, ``$n op column``,
``column IN ($n, ...)``, ``column BETWEEN $n AND $m``, ``column LIKE $n``, ``INSERT (cols) VALUES ($n, ...)``,
``UPDATE ... SET column = $n``; ``LIMIT $n`` gets 1 and ``OFFSET $n`` gets 0): the column's first most common value
(``pg_stats.most_common_vals``), else the middle histogram bound. When any parameter has no such column or the
column has no statistics, the custom plan is "not measured", with the reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pglast import ast, parse_sql
from pglast.parser import ParseError

from ..db import Session
from ..errors import DatabaseError
from ..rows import ColumnStatsRow, TableColumnRow

__all__ = ["ParamBinding", "derive_params", "param_columns"]


@dataclass(frozen=True)
class ParamBinding:
    """Derived values for one statement.

    :ivar values: one value per ``$1..$n`` as text, or empty when not derivable.
    :ivar sources: where each value came from, e.g. ``orders.customer_id most common value``.
    :ivar reason: why the values could not be derived, or None.
    """

    values: tuple[str, ...]
    sources: tuple[str, ...]
    reason: str | None = None


def _param_number(node: Any) -> int | None:
    while isinstance(node, ast.TypeCast):
        node = node.arg
    if isinstance(node, ast.ParamRef) and node.number is not None:
        return node.number
    return None


def _column(node: Any) -> tuple[str | None, str] | None:
    while isinstance(node, ast.TypeCast):
        node = node.arg
    if isinstance(node, ast.ColumnRef):
        fields = [f.sval for f in node.fields or () if isinstance(f, ast.String) and f.sval is not None]
        if not fields:
            return None
        return (fields[-2] if len(fields) >= 2 else None, fields[-1])
    return None


class _Collector:
    """Walks a parsed statement, recording ``$n -> (qualifier, column)`` and the relations with their aliases."""

    def __init__(self) -> None:
        self.columns: dict[int, tuple[str | None, str]] = {}
        self.constants: dict[int, str] = {}
        self.relations: dict[str, str] = {}  # alias or name -> name as written (schema-qualified if written so)
        self.order: list[str] = []

    def visit(self, node: Any) -> None:
        if isinstance(node, ast.Node):
            self.node(node)
            for name in node:  # pglast nodes iterate over their attribute names
                self.visit(getattr(node, name))
        elif isinstance(node, (tuple, list)):
            for item in node:
                self.visit(item)

    def bind(self, param: Any, col: Any) -> None:
        while isinstance(param, ast.TypeCast):
            param = param.arg
        if isinstance(param, ast.A_Expr) and param.name and getattr(param.name[-1], "sval", None) in ("+", "-"):
            param = param.lexpr  # ``col = $2 + $3`` (a typed stand-in's sum): $2 takes the column's value
        number, column = _param_number(param), _column(col)
        if number is not None and column is not None:
            self.columns.setdefault(number, column)

    def node(self, node: ast.Node) -> None:
        if isinstance(node, ast.RangeVar) and node.relname is not None:
            written = f"{node.schemaname}.{node.relname}" if node.schemaname else node.relname
            alias = node.alias.aliasname if node.alias is not None else None
            self.relations[alias or node.relname] = written
            self.relations.setdefault(node.relname, written)
            self.order.append(written)
        elif isinstance(node, ast.A_Expr):
            lhs, rhs = node.lexpr, node.rexpr
            if isinstance(rhs, ast.A_ArrayExpr):  # ``col = ANY(ARRAY[$3, $4])``: each element takes col's values
                rhs = rhs.elements or ()
            if isinstance(rhs, (tuple, list)):
                for item in rhs:
                    self.bind(item, lhs)
            else:
                self.bind(rhs, lhs)
                self.bind(lhs, rhs)
        elif isinstance(node, ast.SelectStmt):
            for clause, value in ((node.limitCount, "1"), (node.limitOffset, "0")):
                number = _param_number(clause)
                if number is not None:
                    self.constants[number] = value
        elif (isinstance(node, ast.InsertStmt) and node.cols and node.relation is not None
              and isinstance(node.selectStmt, ast.SelectStmt)):
            target = node.relation.relname
            names = [c.name for c in node.cols]
            for row in node.selectStmt.valuesLists or ():
                for name, value in zip(names, row, strict=False):
                    number = _param_number(value)
                    if number is not None:
                        self.columns.setdefault(number, (target, name))
        elif isinstance(node, ast.UpdateStmt) and node.relation is not None:
            relation = node.relation
            target = relation.alias.aliasname if relation.alias is not None else relation.relname
            for res in node.targetList or ():
                number = _param_number(res.val)
                if number is not None and res.name:
                    self.columns.setdefault(number, (target, res.name))


def param_columns(sql: str) -> tuple[dict[int, tuple[str | None, str]], dict[int, str], dict[str, str], list[str]]:
    """Parse ``sql`` and find, per parameter number, the column it is compared with.

    :return: (``$n -> (qualifier or None, column)``, ``$n -> fixed value`` for LIMIT/OFFSET,
        ``alias/name -> relation name as written``, relation names in text order).
    :raises ValueError: when pglast cannot parse the text.
    """
    try:
        stmts = parse_sql(sql)
    except ParseError as exc:
        raise ValueError(f"cannot parse: {exc}") from None
    collector = _Collector()
    collector.visit(stmts)
    return collector.columns, collector.constants, collector.relations, list(dict.fromkeys(collector.order))


def _resolve_tables(session: Session, order: list[str], cache: dict[str, Any]) -> str | None:
    """Fill ``cache["tables"]``: relation name as written -> (table OID, its column names), None when not found.

    :return: None, or why the tables cannot be resolved.
    """
    written = [name for name in order if name not in cache.setdefault("tables", {})]
    if written:
        try:
            rows = session.query_rows("audit_table_columns", TableColumnRow, [written])
        except DatabaseError as exc:
            return f"cannot resolve tables: {exc}"
        for name in written:
            cache["tables"][name] = None
        for row in rows:
            entry: tuple[int, set[str]] = cache["tables"].get(row.written) or (row.table_oid, set())
            entry[1].add(row.column_name)
            cache["tables"][row.written] = entry
    return None


def derive_params(session: Session, sql: str, param_count: int,
                  cache: dict[str, Any] | None = None, fallback: Mapping[int, str] | None = None) -> ParamBinding:
    """Derive a value for each of ``$1..$param_count`` from pg_stats (see the module docstring).

    :param cache: a dict shared between calls of one audit (table columns and statistics by table).
    :param fallback: ``$n -> value`` for a parameter no column gives a value to (a typed stand-in's neutral value,
        :func:`lockscope.workload.standins.standin_values`).
    :return: the values, or a :class:`ParamBinding` with a ``reason`` when not derivable.
    """
    if param_count == 0:
        return ParamBinding((), ())
    cache = cache if cache is not None else {}
    try:
        columns, constants, relations, order = param_columns(sql)
    except ValueError as exc:
        return ParamBinding((), (), str(exc))
    fallback = fallback or {}
    constants = {n: fallback[n] for n in fallback if n not in columns} | constants
    needed = [n for n in range(1, param_count + 1) if n not in constants]
    missing = [n for n in needed if n not in columns]
    if missing:
        return ParamBinding((), (), f"${missing[0]} is not compared with a column")
    unresolved = _resolve_tables(session, order, cache)
    if unresolved is not None:
        return ParamBinding((), (), unresolved)
    stats = cache.setdefault("stats", {})
    values: list[str] = []
    sources: list[str] = []
    for n in range(1, param_count + 1):
        if n in constants:
            values.append(constants[n])
            sources.append("typed stand-in's neutral value" if n in fallback and n not in columns else "LIMIT/OFFSET")
            continue
        qualifier, column = columns[n]
        candidates = [relations[qualifier]] if qualifier and qualifier in relations else order
        table = next((cache["tables"].get(name) for name in candidates
                      if cache["tables"].get(name) and column in cache["tables"][name][1]), None)
        if table is None:
            return ParamBinding((), (), f"${n}: column {column} not found in {', '.join(candidates) or 'no table'}")
        oid = table[0]
        if oid not in stats:
            try:
                found = session.query_rows("audit_column_stats", ColumnStatsRow, [[oid]])
            except DatabaseError as exc:
                return ParamBinding((), (), f"cannot read pg_stats: {exc}")
            stats[oid] = {r.column_name: r for r in found}
        row_stats: ColumnStatsRow | None = stats[oid].get(column)
        value = None
        if row_stats is not None and row_stats.mcv is not None:
            value, source = row_stats.mcv, "most common value"
        elif row_stats is not None and row_stats.histogram:
            hist = row_stats.histogram
            value, source = hist[len(hist) // 2], "histogram bound"
        if value is None:
            return ParamBinding((), (), f"${n}: no statistics for column {column} (ANALYZE not run, or no "
                                        "SELECT privilege on it)")
        values.append(str(value))
        sources.append(f"{column} {source}")
    return ParamBinding(tuple(values), tuple(sources))
