"""Typing statements as PostgreSQL's parse analysis does (``src/backend/parser/analyze.c``, ``parse_clause.c``,
``parse_target.c``, ``parse_cte.c``), in the server's order, over pglast's raw parse tree.

Followed: ``transformSelectStmt`` (WITH, FROM, select list, WHERE, HAVING, ORDER BY, GROUP BY, DISTINCT, OFFSET,
LIMIT, window clauses, then ``resolveTargetListUnknowns``: unknown outputs become text),
``transformValuesClause`` and ``transformSetOperationTree`` (common column types, unknown literals and parameters
coerced to them), ``transformInsertStmt`` (VALUES rows and sub-SELECT outputs assigned to the target columns,
ON CONFLICT, RETURNING), ``transformUpdateStmt`` (FROM, WHERE, RETURNING, then the SET list),
``transformDeleteStmt``, ``parse_merge.c transformMergeStmt``, ``transformFromClauseItem`` (relations, CTEs,
sub-selects, functions, joins),
``findTargetlistEntrySQL92`` / ``addTargetToSortList`` (an unknown sort or group item becomes text) and
``transformLimitClause`` (bigint).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .catalog import INT4, INT8, OPAQUE, RECORD, TEXT, UNKNOWN, Catalog
from .coerce import select_common_type
from .exprs import ExprAnalyzer, node_of, strings
from .failures import OtherServerError
from .nodes import Expr, Level, Params, RangeItem, Target

__all__ = ["StatementAnalyzer"]

_SETOP_WORDS = {"SETOP_UNION": "UNION", "SETOP_INTERSECT": "INTERSECT", "SETOP_EXCEPT": "EXCEPT"}
#: parsenodes.h FRAMEOPTION_ROWS, FRAMEOPTION_GROUPS.
_FRAME_ROWS, _FRAME_GROUPS = 0x4, 0x8
_LEAF_KEYS = ("sortClause", "limitOffset", "limitCount", "lockingClause", "withClause")
Columns = list[tuple[str, int]]


def _renamed(columns: Columns | None, alias: dict[str, Any] | None) -> Columns | None:
    """Columns under an alias's column names (the first ones renamed)."""
    if columns is None:
        return None
    names = strings((alias or {}).get("colnames"))
    return [(names[i] if i < len(names) else n, t) for i, (n, t) in enumerate(columns)]


def _columns_of(targets: list[Target] | None) -> Columns | None:
    return None if targets is None else [(t.name, t.expr.type) for t in targets]


class StatementAnalyzer(ExprAnalyzer):
    """Types one statement's parameters (see the module docstring); expressions by :class:`ExprAnalyzer`."""

    def __init__(self, cat: Catalog, params: Params) -> None:
        super().__init__(cat, params)

    # -- entry points ----------------------------------------------------------------------------------------------
    def statement(self, raw: Any) -> list[Target] | None:
        """``transformStmt``: one SELECT, VALUES, INSERT, UPDATE, DELETE or MERGE.

        :return: the output columns (a SELECT's, a RETURNING list's), None when not known.
        """
        kind, body = node_of(raw)
        if kind == "SelectStmt":
            return self.select_stmt(body, True)
        handler: Callable[[dict[str, Any]], list[Target] | None] | None = {
            "InsertStmt": self.insert, "UpdateStmt": self.update, "DeleteStmt": self.delete,
            "MergeStmt": self.merge}.get(kind)
        if handler is None:
            self.opaque(raw)
            return None
        return handler(body)

    def subquery(self, raw: Any, resolve_unknowns: bool) -> list[Target] | None:
        """``parse_sub_analyze``: a SELECT one level down (outer columns visible)."""
        return self.in_level(Level(self.level), lambda: self.select_stmt(node_of(raw)[1], resolve_unknowns))

    def in_level(self, level: Level, work: Callable[[], list[Target] | None]) -> list[Target] | None:
        """Run ``work`` with ``level`` as the current query level."""
        saved = self.level
        self.level = level
        try:
            return work()
        finally:
            self.level = saved

    def select_stmt(self, body: dict[str, Any], resolve_unknowns: bool) -> list[Target] | None:
        """A SelectStmt: VALUES, a set operation or a plain SELECT."""
        if body.get("valuesLists"):
            return self.values(body)
        if body.get("op", "SETOP_NONE") != "SETOP_NONE":
            return self.set_operation(body)
        return self.select(body, resolve_unknowns)

    # -- SELECT ----------------------------------------------------------------------------------------------------
    def select(self, body: dict[str, Any], resolve_unknowns: bool) -> list[Target] | None:
        """``analyze.c transformSelectStmt``, clause by clause in its order."""
        self.with_clause(body.get("withClause"))
        for item in body.get("fromClause") or []:
            self.from_item(item)
        targets = self.target_list(body.get("targetList") or [])
        if body.get("whereClause") is not None:
            self.coerce_bool(self.expr(body["whereClause"]), "WHERE")
        if body.get("havingClause") is not None:
            self.coerce_bool(self.expr(body["havingClause"]), "HAVING")
        rows = targets or []
        for sort in body.get("sortClause") or []:
            self.sort_item(node_of(sort)[1].get("node"), rows, group=False)
        for group in body.get("groupClause") or []:
            if isinstance(group, dict) and "GroupingSet" in group:
                self.opaque(group)
            else:
                self.sort_item(group, rows, group=True)
        self.distinct(body.get("distinctClause"), rows)
        self.limits(body)
        self.window_clauses(body.get("windowClause") or [])
        if resolve_unknowns:
            self.resolve_unknowns(rows)
        return targets

    def limits(self, body: dict[str, Any]) -> None:
        """``transformLimitClause``: OFFSET, then LIMIT, each a bigint."""
        for key, word in (("limitOffset", "OFFSET"), ("limitCount", "LIMIT")):
            if body.get(key) is not None:
                self.coerce_to_target(self.expr(body[key]), INT8, "a", f"argument of {word}")

    def resolve_unknowns(self, targets: list[Target]) -> None:
        """``parse_target.c resolveTargetListUnknowns``: unknown-type outputs become text."""
        for t in targets:
            if t.expr.type == UNKNOWN:
                t.expr = self.coerce(t.expr, TEXT)

    def target_list(self, items: list[Any]) -> list[Target] | None:
        """``transformTargetList``: each item, ``*`` expanded; None when an expansion's columns are unknown (then
        the unknown-type items are undecided)."""
        out: list[Target] = []
        exact = True
        for item in items:
            body = node_of(item)[1]
            val = body.get("val")
            if isinstance(val, dict) and "ColumnRef" in val and strings(val["ColumnRef"].get("fields"))[-1] == "*":
                columns = self.star(strings(val["ColumnRef"].get("fields"))[:-1])
                if columns is None:
                    exact = False
                else:
                    out += [Target(n, Expr(t, "var", has_vars=True, label=n)) for n, t in columns]
                continue
            e = self.expr(val)
            out.append(Target(str(body.get("name") or e.label), e))
        if not exact:
            for t in out:
                if t.expr.type == UNKNOWN:
                    self.undecide(t.expr)
            return None
        return out

    def star(self, qualifier: list[str]) -> Columns | None:
        """The columns ``*`` or ``alias.*`` expands to (None when one of them is unknown)."""
        out: Columns = []
        items = [i for i in self.level.items if (not qualifier and not i.qualified_only)
                 or (qualifier and i.alias == qualifier[-1])]
        if not items:
            raise OtherServerError("42P01", "missing FROM-clause entry for the * expansion")
        for item in items:
            if item.columns is None:
                return None
            out += item.columns
        return out

    def sort_item(self, raw: Any, targets: list[Target], *, group: bool, sql92: bool = True) -> None:
        """An ORDER BY / GROUP BY / DISTINCT ON item: a select-list item by name or position
        (``findTargetlistEntrySQL92``; not for window clauses, which follow SQL99 rules), else an expression; an
        unknown one becomes text (``addTargetToSortList`` / ``addTargetToGroupList``)."""
        target = self.sql92_target(raw, targets, group=group) if sql92 else None
        if target is not None:
            if target.expr.type == UNKNOWN:
                target.expr = self.coerce(target.expr, TEXT)
            return
        e = self.expr(raw)
        if e.type != UNKNOWN:
            return
        same = next((t for t in targets if e.param is not None and t.expr.param is not None
                     and t.expr.param.number == e.param.number and t.expr.type == UNKNOWN), None)
        if same is not None and e.param is not None:  # findTargetlistEntrySQL99: equals a select-list item
            self.params.forget([e.param])
            same.expr = self.coerce(same.expr, TEXT)
        else:
            self.coerce(e, TEXT)

    def sql92_target(self, raw: Any, targets: list[Target], *, group: bool) -> Target | None:
        """``findTargetlistEntrySQL92``: a bare name matching an output column (in GROUP BY only when no FROM
        column has it), or an integer constant as a position."""
        if not isinstance(raw, dict):
            return None
        if "A_Const" in raw and "ival" in raw["A_Const"]:
            position = int(raw["A_Const"]["ival"].get("ival", 0))
            if not 1 <= position <= len(targets):
                raise OtherServerError("42P10", f"position {position} is not in select list")
            return targets[position - 1]
        fields = strings(raw["ColumnRef"].get("fields")) if "ColumnRef" in raw else []
        if len(fields) != 1 or fields[0] == "*":
            return None
        if group and self.lookup(self.level, fields) is not None:
            return None
        return next((t for t in targets if t.name == fields[0]), None)

    def distinct(self, clause: list[Any] | None, targets: list[Target]) -> None:
        """``transformDistinctClause`` (every output, unknown ones to text) / ``transformDistinctOnClause``."""
        if not clause:
            return
        if clause == [{}] or clause[0] is None:
            for t in targets:
                if t.expr.type == UNKNOWN:
                    t.expr = self.coerce(t.expr, TEXT)
            return
        for item in clause:
            self.sort_item(item, targets, group=False)

    def window_clauses(self, named: list[Any]) -> None:
        """``transformWindowDefinitions``: PARTITION BY and ORDER BY items (unknown ones to text); ROWS and GROUPS
        frame offsets are bigint (``transformFrameOffset``); RANGE offsets are left to the server."""
        for window in [node_of(w)[1] for w in named] + self.level.windows:
            for raw in window.get("partitionClause") or []:
                self.sort_item(raw, [], group=True, sql92=False)
            for sort in window.get("orderClause") or []:
                self.sort_item(node_of(sort)[1].get("node"), [], group=False, sql92=False)
            for key in ("startOffset", "endOffset"):
                if window.get(key) is None:
                    continue
                if int(window.get("frameOptions", 0)) & (_FRAME_ROWS | _FRAME_GROUPS):
                    self.coerce_to_target(self.expr(window[key]), INT8, "a", "frame offset")
                else:
                    self.opaque(window[key])  # RANGE: the in_range support function decides
        self.level.windows = []

    # -- VALUES and set operations ---------------------------------------------------------------------------------
    def values(self, body: dict[str, Any]) -> list[Target] | None:
        """``transformValuesClause``: each column's common type (text when all unknown), every item coerced."""
        self.with_clause(body.get("withClause"))
        rows = [[self.expr(x) for x in node_of(r)[1].get("items") or []] for r in body["valuesLists"]]
        if any(len(r) != len(rows[0]) for r in rows):
            raise OtherServerError("42601", "VALUES lists must all be the same length")
        out = []
        for i in range(len(rows[0])):
            common, _ = self.coerce_all([r[i] for r in rows], "VALUES")
            out.append(Target(f"column{i + 1}", Expr(common, label=f"column{i + 1}")))
        self.limits(body)
        return out

    def set_operation(self, body: dict[str, Any],
                      on_left: Callable[[list[Target] | None], None] | None = None) -> list[Target] | None:
        """``transformSetOperationStmt``: the leaves, their common column types, then LIMIT/OFFSET."""
        self.with_clause(body.get("withClause"))
        targets = self.setop_tree(body, True, on_left)
        for sort in body.get("sortClause") or []:
            raw = node_of(sort)[1].get("node")
            if self.sql92_target(raw, targets or [], group=False) is None:
                self.opaque(raw)
        self.limits(body)
        return targets

    def setop_tree(self, body: dict[str, Any], top: bool,
                   on_left: Callable[[list[Target] | None], None] | None = None) -> list[Target] | None:
        """``transformSetOperationTree``: a leaf is analysed as a sub-select (unknown outputs kept); two sides'
        columns resolve to their common type, and an unknown literal or parameter of a leaf is coerced to it."""
        leaf = body.get("op", "SETOP_NONE") == "SETOP_NONE" or (not top and any(body.get(k) for k in _LEAF_KEYS))
        if leaf:
            return self.in_level(Level(self.level), lambda: self.select_stmt(body, False))
        left = self.setop_tree(body["larg"], False)
        if on_left is not None:
            on_left(left)
        right = self.setop_tree(body["rarg"], False)
        if left is None or right is None:
            for t in (left or []) + (right or []):
                self.undecide(t.expr)
            return None
        if len(left) != len(right):
            raise OtherServerError("42601", "each set operation query must have the same number of columns")
        word = _SETOP_WORDS.get(str(body.get("op")), "UNION")
        out = []
        for lt, rt in zip(left, right, strict=True):
            common = self.common_type([lt.expr, rt.expr], word)
            for t in (lt, rt):
                if t.expr.type != UNKNOWN or t.expr.form in ("const", "null", "param"):
                    t.expr = self.coerce_common(t.expr, common, word)
            out.append(Target(lt.name, Expr(common, label=lt.name)))
        return out

    # -- WITH ------------------------------------------------------------------------------------------------------
    def with_clause(self, clause: dict[str, Any] | None) -> None:
        """``parse_cte.c transformWithClause``: each CTE in order, visible to those after it (and, when recursive,
        to its own recursive term with the non-recursive term's column types, unknown ones as text)."""
        if not clause:
            return
        for item in clause.get("ctes") or []:
            self.cte(node_of(item)[1], bool(clause.get("recursive")))

    def cte(self, cte: dict[str, Any], recursive: bool) -> None:
        """One CTE: its output columns (None when unknown) registered on the current level."""
        owner = self.level
        name, alias = str(cte.get("ctename")), {"colnames": cte.get("aliascolnames")}
        kind, query = node_of(cte["ctequery"])

        def on_left(left: list[Target] | None) -> None:
            cols = None if left is None else [(t.name, TEXT if t.expr.type == UNKNOWN else t.expr.type)
                                              for t in left]
            owner.ctes[name] = _renamed(cols, alias)

        def analyse() -> list[Target] | None:
            if kind != "SelectStmt":
                return self.statement(cte["ctequery"])
            if recursive and query.get("op", "SETOP_NONE") != "SETOP_NONE":
                return self.set_operation(query, on_left)
            return self.select_stmt(query, True)

        targets = self.in_level(Level(owner), analyse)
        owner.ctes[name] = _renamed(_columns_of(targets), alias)

    # -- FROM ------------------------------------------------------------------------------------------------------
    def from_item(self, raw: Any) -> None:
        """``transformFromClauseItem``: add the item's names to the current level."""
        kind, body = node_of(raw)
        if kind == "RangeVar":
            self.level.items.append(self.range_var(body))
        elif kind == "RangeSubselect":
            self.range_subselect(body)
        elif kind == "RangeFunction":
            self.range_function(body)
        elif kind == "JoinExpr":
            self.join(body)
        else:
            alias = body.get("alias") or {}
            self.opaque(raw)
            self.level.items.append(RangeItem(alias.get("aliasname"), None))

    def range_var(self, body: dict[str, Any]) -> RangeItem:
        """A relation or CTE by name (``parserOpenTable`` / ``scanNameSpaceForCTE``).

        :raises OtherServerError: 42P01, no such relation.
        """
        schema, name = body.get("schemaname"), str(body.get("relname"))
        alias = body.get("alias")
        refname = str((alias or {}).get("aliasname") or name)
        if schema is None:
            found, columns = self.level.cte(name)
            if found:
                return RangeItem(refname, _renamed(columns, alias))
        relation = self.cat.relations.get((schema, name))
        if relation is None:
            raise OtherServerError("42P01", f'relation "{name}" does not exist')
        return RangeItem(refname, _renamed(list(relation.columns), alias), dict(relation.system_columns))

    def range_subselect(self, body: dict[str, Any]) -> None:
        """A sub-select in FROM: LATERAL sees the items before it; otherwise only outer levels and CTEs."""
        parent = self.level if body.get("lateral") else Level(self.level.parent, ctes=self.level.ctes)
        targets = self.in_level(Level(parent), lambda: self.select_stmt(node_of(body["subquery"])[1], True))
        alias = body.get("alias") or {}
        self.level.items.append(RangeItem(alias.get("aliasname"), _renamed(_columns_of(targets), alias)))

    def range_function(self, body: dict[str, Any]) -> None:
        """A function in FROM (``transformRangeFunction``): one column of a scalar result, the column definition
        list of a record, WITH ORDINALITY a bigint more; other shapes unknown."""
        alias = body.get("alias") or {}
        functions = [node_of(f)[1].get("items") or [] for f in body.get("functions") or []]
        call = functions[0][0] if len(functions) == 1 else None
        if call is not None and not body.get("is_rowsfrom") and not body.get("coldeflist") and \
                strings(node_of(call)[1].get("funcname")) in (["unnest"], ["pg_catalog", "unnest"]) and \
                len(node_of(call)[1].get("args") or []) > 1:
            functions = [[{"FuncCall": {**node_of(call)[1], "args": [a]}}] for a in node_of(call)[1]["args"]]
            call = None  # transformRangeFunction: unnest(a, b) is ROWS FROM (unnest(a), unnest(b))
        if call is None or body.get("is_rowsfrom"):
            for items in functions:
                self.expr(items[0])
            self.level.items.append(RangeItem(alias.get("aliasname"), None))
            return
        e = self.expr(call)
        columns: Columns | None = None
        if body.get("coldeflist"):
            columns = [(str(c.get("colname")), self.typename(c["typeName"]))
                       for c in (node_of(d)[1] for d in body["coldeflist"])]
        elif e.type not in (OPAQUE, RECORD) and not self.cat.is_complex(e.type):
            columns = [(str(alias.get("aliasname") or e.label), e.type)]
        if columns is not None and body.get("ordinality"):
            columns.append(("ordinality", INT8))
        self.level.items.append(RangeItem(alias.get("aliasname") or e.label, _renamed(columns, alias)))

    def join(self, body: dict[str, Any]) -> None:
        """``transformFromClauseItem`` for a JoinExpr: both sides, then ON (boolean) or USING / NATURAL (merged
        columns of the common type); an alias names all the joined columns."""
        start = len(self.level.items)
        self.from_item(body["larg"])
        middle = len(self.level.items)
        self.from_item(body["rarg"])
        left, right = self.level.items[start:middle], self.level.items[middle:]
        using = strings(body.get("usingClause"))
        if body.get("isNatural"):
            lnames = {n for i in left for n, _ in (i.columns or [])}
            using = [n for i in right for n, _ in (i.columns or []) if n in lnames]
        for name in using:
            types = [self.lookup_in(left, name), self.lookup_in(right, name)]
            self.level.merged[name] = OPAQUE if OPAQUE in types else \
                select_common_type(self.cat, types, "JOIN/USING")
        if body.get("quals") is not None:
            self.coerce_bool(self.expr(body["quals"]), "JOIN/ON")
        alias = body.get("alias")
        if alias:
            items = left + right
            columns = None if any(i.columns is None for i in items) else \
                [c for i in items for c in (i.columns or [])]
            self.level.items.append(RangeItem(str(alias.get("aliasname")), _renamed(columns, alias),
                                              qualified_only=True))

    def lookup_in(self, items: list[RangeItem], name: str) -> int:
        """The type of an unqualified column among ``items`` (OPAQUE when it may sit in an opaque one).

        :raises OtherServerError: 42703 / 42702, no such column, or more than one.
        """
        found = [t for i in items if i.columns is not None for n, t in i.columns if n == name]
        if len(found) > 1:
            raise OtherServerError("42702", f'column reference "{name}" is ambiguous')
        if found:
            return found[0]
        if any(i.columns is None for i in items):
            return OPAQUE
        raise OtherServerError("42703", f'column "{name}" does not exist')

    # -- names -----------------------------------------------------------------------------------------------------
    def column_ref(self, fields: list[str]) -> Expr:
        """``transformColumnRef``: the innermost level that has the name decides (outer levels are correlated
        references); a whole-row or composite field reference is opaque.

        :raises OtherServerError: 42703, no level has the column.
        """
        if fields[-1] == "*":
            return Expr(OPAQUE)
        level: Level | None = self.level
        depth = 0
        while level is not None:
            found = self.lookup(level, fields)
            if found is not None:
                return Expr(found, "var", has_vars=depth == 0, label=fields[-1])
            level, depth = level.parent, depth + 1
        raise OtherServerError("42703", f'column "{".".join(fields)}" does not exist')

    def lookup(self, level: Level, fields: list[str]) -> int | None:
        """A column's type at one level, None when the level does not have the name."""
        if len(fields) == 1:
            return self.lookup_unqualified(level, fields[0])
        if len(fields) > 3:
            return OPAQUE
        rel, col = fields[-2], fields[-1]
        for item in level.items:
            if item.alias != rel:
                continue
            if item.columns is None:
                return OPAQUE
            found = [t for n, t in item.columns if n == col]
            if not found and col in item.system:
                found = [item.system[col]]
            if not found:
                raise OtherServerError("42703", f'column {rel}.{col} does not exist')
            return found[0]
        if len(fields) == 2 and self.lookup_unqualified(level, rel) is not None:
            return OPAQUE  # a composite column's field
        return None

    def lookup_unqualified(self, level: Level, name: str) -> int | None:
        """``colNameToVar`` at one level (a USING column first; a relation's name alone is a whole-row value)."""
        if name in level.merged:
            return level.merged[name]
        visible = [i for i in level.items if not i.qualified_only]
        found = [t for i in visible if i.columns is not None for n, t in i.columns if n == name]
        found += [i.system[name] for i in visible if name in i.system]
        if len(found) > 1:
            raise OtherServerError("42702", f'column reference "{name}" is ambiguous')
        if found:
            return found[0]
        if any(i.columns is None for i in visible) or any(i.alias == name for i in level.items):
            return OPAQUE
        return None

    # -- INSERT, UPDATE, DELETE ------------------------------------------------------------------------------------
    def target_relation(self, body: dict[str, Any]) -> RangeItem:
        """The statement's target relation as a FROM item (its alias or name)."""
        return self.range_var(body["relation"])

    def assign(self, e: Expr | None, column: tuple[str, int], indirection: list[Any] | None) -> None:
        """``transformAssignedExpr``: a value stored in a column is coerced to its type (assignment); into an
        array element, to the element type with int4 subscripts; other indirection is left to the server."""
        if e is None:
            return
        name, type_ = column
        if indirection:
            kinds = [node_of(i) for i in indirection]
            elem = self.cat.base_element(type_) if type_ != OPAQUE else 0
            if not elem or any(k != "A_Indices" for k, _ in kinds):
                self.undecide(e)
                self.opaque(indirection)
                return
            for _, sub in kinds:
                for key in ("lidx", "uidx"):
                    if sub.get(key) is not None:
                        self.coerce_to_target(self.expr(sub[key]), INT4, "a", "array subscript")
            type_ = type_ if any(sub.get("is_slice") for _, sub in kinds) else elem
        self.coerce_to_target(e, type_, "a", f'column "{name}"')

    def insert(self, body: dict[str, Any]) -> list[Target] | None:
        """``analyze.c transformInsertStmt``."""
        self.with_clause(body.get("withClause"))
        target = self.target_relation(body)
        columns = self.insert_columns(target, body.get("cols"))
        select = node_of(body["selectStmt"])[1] if body.get("selectStmt") else None
        if select is not None:
            general = not select.get("valuesLists") or any(select.get(k) for k in _LEAF_KEYS)
            if general:
                self.insert_select(body["selectStmt"], columns)
            else:
                for row in select["valuesLists"]:
                    items = [None if isinstance(x, dict) and "SetToDefault" in x else self.expr(x)
                             for x in node_of(row)[1].get("items") or []]
                    for e, (column, indirection) in zip(items, columns, strict=False):
                        self.assign(e, column, indirection)
        self.level.items.append(target)
        if body.get("onConflictClause"):
            self.on_conflict(body["onConflictClause"], target)
        return self.returning(body)

    def insert_columns(self, target: RangeItem,
                       cols: list[Any] | None) -> list[tuple[tuple[str, int], list[Any] | None]]:
        """The INSERT's target columns (named, or all in order) with their indirection."""
        known = dict(target.columns or [])
        if not cols:
            return [(c, None) for c in (target.columns or [])]
        out = []
        for item in cols:
            body = node_of(item)[1]
            name = str(body.get("name"))
            if name not in known:
                raise OtherServerError("42703", f'column "{name}" of the target relation does not exist')
            out.append(((name, known[name]), body.get("indirection")))
        return out

    def insert_select(self, raw: Any, columns: list[tuple[tuple[str, int], list[Any] | None]]) -> None:
        """INSERT ... SELECT: the sub-select's unknown outputs kept, then literals and parameters among them assigned
        to the target columns (``transformInsertStmt``: other outputs are Vars of the sub-select)."""
        targets = self.subquery(raw, False)
        if targets is None:
            return
        for t, (column, indirection) in zip(targets, columns, strict=False):
            direct = t.expr.type == UNKNOWN and t.expr.form in ("const", "null", "param")
            self.assign(t.expr if direct else Expr(t.expr.type), column, indirection)

    def on_conflict(self, clause: dict[str, Any], target: RangeItem) -> None:
        """``transformOnConflictClause``: the arbiter's predicate, then EXCLUDED visible: SET list, WHERE."""
        infer = clause.get("infer") or {}
        for elem in infer.get("indexElems") or []:
            expr = node_of(elem)[1].get("expr")
            if expr is not None:
                self.opaque(expr)
        if infer.get("whereClause") is not None:
            self.coerce_bool(self.expr(infer["whereClause"]), "WHERE")
        if clause.get("action") != "ONCONFLICT_UPDATE":
            return
        excluded = RangeItem("excluded", target.columns)
        self.level.items.append(excluded)
        self.set_list(clause.get("targetList") or [], target)
        if clause.get("whereClause") is not None:
            self.coerce_bool(self.expr(clause["whereClause"]), "WHERE")
        self.level.items.remove(excluded)

    def set_list(self, items: list[Any], target: RangeItem) -> None:
        """``transformUpdateTargetList``: each SET item assigned to its column; a multiple assignment's source (a
        row or a sub-select) is transformed once, at its first column."""
        known = dict(target.columns or [])
        source: list[Expr] = []
        for item in items:
            body = node_of(item)[1]
            name = str(body.get("name"))
            if name not in known:
                raise OtherServerError("42703", f'column "{name}" of the target relation does not exist')
            val = body.get("val")
            if isinstance(val, dict) and "SetToDefault" in val:
                continue
            if isinstance(val, dict) and "MultiAssignRef" in val:
                ref = val["MultiAssignRef"]
                if int(ref.get("colno", 1)) == 1:
                    source = self.multiassign_source(ref.get("source"))
                colno = int(ref.get("colno", 1))
                e: Expr | None = source[colno - 1] if colno <= len(source) else Expr(OPAQUE)
            else:
                e = self.expr(val)
            self.assign(e, (name, known[name]), body.get("indirection"))

    def multiassign_source(self, raw: Any) -> list[Expr]:
        """``transformMultiAssignRef``: a ROW's items, or a sub-select's output columns."""
        kind, body = node_of(raw)
        if kind == "RowExpr":
            return [Expr(OPAQUE) if isinstance(a, dict) and "SetToDefault" in a else self.expr(a)
                    for a in body.get("args") or []]
        if kind == "SubLink":
            targets = self.subquery(body.get("subselect"), True)
            return [Expr(t.expr.type) for t in targets] if targets is not None else []
        self.opaque(raw)
        return []

    def returning(self, body: dict[str, Any]) -> list[Target] | None:
        """``transformReturningClause``: a select list whose unknown items become text."""
        clause = body.get("returningClause")
        items = (clause or {}).get("exprs") if isinstance(clause, dict) else body.get("returningList")
        if not items:
            return []
        targets = self.target_list(items)
        if targets is not None:
            self.resolve_unknowns(targets)
        return targets

    def update(self, body: dict[str, Any]) -> list[Target] | None:
        """``analyze.c transformUpdateStmt``: FROM, WHERE, RETURNING, then the SET list."""
        self.with_clause(body.get("withClause"))
        target = self.target_relation(body)
        self.level.items.append(target)
        for item in body.get("fromClause") or []:
            self.from_item(item)
        if body.get("whereClause") is not None:
            self.coerce_bool(self.expr(body["whereClause"]), "WHERE")
        out = self.returning(body)
        self.set_list(body.get("targetList") or [], target)
        return out

    def delete(self, body: dict[str, Any]) -> list[Target] | None:
        """``analyze.c transformDeleteStmt``: USING, WHERE, RETURNING."""
        self.with_clause(body.get("withClause"))
        self.level.items.append(self.target_relation(body))
        for item in body.get("usingClause") or []:
            self.from_item(item)
        if body.get("whereClause") is not None:
            self.coerce_bool(self.expr(body["whereClause"]), "WHERE")
        return self.returning(body)

    def merge(self, body: dict[str, Any]) -> list[Target] | None:
        """``parse_merge.c transformMergeStmt``: the source, the join condition (target visible), RETURNING, then each
        WHEN clause: its condition (boolean), an INSERT's values or an UPDATE's SET list assigned to the target."""
        self.with_clause(body.get("withClause"))
        target = self.target_relation(body)
        self.from_item(body["sourceRelation"])
        self.level.items.append(target)
        self.expr(body["joinCondition"])
        out = self.returning(body)
        for clause in body.get("mergeWhenClauses") or []:
            when = node_of(clause)[1]
            if when.get("condition") is not None:
                self.coerce_bool(self.expr(when["condition"]), "WHEN")
            if when.get("commandType") == "CMD_UPDATE":
                self.set_list(when.get("targetList") or [], target)
            elif when.get("commandType") == "CMD_INSERT":
                columns = self.insert_columns(target, when.get("targetList"))
                items = [None if isinstance(x, dict) and "SetToDefault" in x else self.expr(x)
                         for x in when.get("values") or []]
                for e, (column, indirection) in zip(items, columns, strict=False):
                    self.assign(e, column, indirection)
        return out
