"""Typing expressions as PostgreSQL's parse analysis does (``src/backend/parser/parse_expr.c``, with
``parse_oper.c make_op`` / ``make_scalar_array_op``, ``parse_func.c ParseFuncOrColumn`` / ``make_fn_arguments``
and ``parse_coerce.c coerce_type``), over pglast's raw parse tree (libpg_query JSON).

Only what decides a ``$n``'s type is modelled: each expression's type, where an untyped parameter is coerced (and
so typed), and the errors of parameter typing. A construct outside the model gives :data:`OPAQUE` and marks the
parameters in it undecided, so no refusal ever rests on a guess.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .catalog import (
    ANY,
    ANYARRAY,
    ANYCOMPATIBLE,
    ANYCOMPATIBLEARRAY,
    ANYCOMPATIBLEMULTIRANGE,
    ANYCOMPATIBLENONARRAY,
    ANYCOMPATIBLERANGE,
    ANYELEMENT,
    ANYENUM,
    ANYMULTIRANGE,
    ANYNONARRAY,
    ANYRANGE,
    BIT,
    BOOL,
    INT4,
    INT8,
    NUMERIC,
    OPAQUE,
    RECORD,
    TEXT,
    UNKNOWN,
    Catalog,
)
from .coerce import (
    POLYMORPHIC,
    can_coerce_type,
    enforce_generic_type_consistency,
    select_common_type,
    verify_common_type,
)
from .failures import OtherServerError, TypingFailure
from .nodes import Expr, Level, Params, Target, raw_dicts
from .resolve import func_get_detail, left_oper, oper

__all__ = ["ExprAnalyzer", "node_of", "param_numbers", "strings"]

_PASS_THROUGH = frozenset({ANY, ANYELEMENT, ANYNONARRAY, ANYCOMPATIBLE, ANYCOMPATIBLENONARRAY})
_RELABEL_POLY = frozenset({ANYARRAY, ANYENUM, ANYRANGE, ANYMULTIRANGE, ANYCOMPATIBLEARRAY, ANYCOMPATIBLERANGE,
                           ANYCOMPATIBLEMULTIRANGE})
#: ``parse_expr.c transformSQLValueFunction`` result types (date 1082, timetz 1266, timestamptz 1184, time 1083,
#: timestamp 1114, name 19).
_SQL_VALUE_TYPES = {
    "SVFOP_CURRENT_DATE": 1082, "SVFOP_CURRENT_TIME": 1266, "SVFOP_CURRENT_TIME_N": 1266,
    "SVFOP_CURRENT_TIMESTAMP": 1184, "SVFOP_CURRENT_TIMESTAMP_N": 1184, "SVFOP_LOCALTIME": 1083,
    "SVFOP_LOCALTIME_N": 1083, "SVFOP_LOCALTIMESTAMP": 1114, "SVFOP_LOCALTIMESTAMP_N": 1114,
    "SVFOP_CURRENT_ROLE": 19, "SVFOP_CURRENT_USER": 19, "SVFOP_USER": 19, "SVFOP_SESSION_USER": 19,
    "SVFOP_CURRENT_CATALOG": 19, "SVFOP_CURRENT_SCHEMA": 19,
}
_BETWEEN = {
    "AEXPR_BETWEEN": (">=", "<=", "AND_EXPR"), "AEXPR_NOT_BETWEEN": ("<", ">", "OR_EXPR"),
    "AEXPR_BETWEEN_SYM": (">=", "<=", "AND_EXPR"), "AEXPR_NOT_BETWEEN_SYM": ("<", ">", "OR_EXPR"),
}


def node_of(value: Any) -> tuple[str, dict[str, Any]]:
    """(kind, body) of a one-key raw node ``{"Kind": {...}}``."""
    ((kind, body),) = value.items()
    return kind, body if isinstance(body, dict) else {}


def strings(items: Sequence[Any] | None) -> list[str]:
    """The ``String`` values of a raw name list (``[{"String": {"sval": "x"}}, ...]``); ``*`` for ``A_Star``."""
    out = []
    for item in items or []:
        kind, body = node_of(item)
        out.append(str(body.get("sval", "")) if kind == "String" else "*")
    return out


def param_numbers(raw: Any) -> list[int]:
    """Every ``$n`` number inside a raw subtree."""
    return [int(d["ParamRef"].get("number", 0)) for d in raw_dicts(raw) if isinstance(d.get("ParamRef"), dict)]


def _const(body: dict[str, Any]) -> Expr:
    """``parse_node.c make_const``: integer -> int4, an integer too wide -> int8, else numeric; string and NULL ->
    unknown; bool; bit string."""
    if body.get("isnull"):
        return Expr(UNKNOWN, "null")
    if "ival" in body:
        return Expr(INT4, "const")
    if "fval" in body:
        text = str(body["fval"].get("fval", ""))
        digits = text.lstrip("-")
        if digits.isdigit() and -(2 ** 63) <= int(text) < 2 ** 63:
            return Expr(INT8, "const")
        return Expr(NUMERIC, "const")
    if "boolval" in body:
        return Expr(BOOL, "const", label="bool")
    if "bsval" in body:
        return Expr(BIT, "const")
    return Expr(UNKNOWN, "const")


class ExprAnalyzer:
    """Types one statement's expressions; :mod:`lockscope.paramtypes.stmts` adds statements and scopes.

    :ivar cat: the catalog facts; ``params``: the parameter types and Param nodes; ``level``: the current query
        level (FROM items names resolve against).
    """

    def __init__(self, cat: Catalog, params: Params) -> None:
        self.cat = cat
        self.params = params
        self.level = Level(None)

    # -- hooks for statements ------------------------------------------------------------------------------------
    def subquery(self, raw: Any, resolve_unknowns: bool) -> list[Target] | None:
        """The output columns of a sub-SELECT analysed one level down (None when lockscope cannot tell them)."""
        raise NotImplementedError

    def column_ref(self, fields: list[str]) -> Expr:
        """``transformColumnRef``: a column (or ``OPAQUE``) by its possibly qualified name."""
        raise NotImplementedError

    # -- helpers ---------------------------------------------------------------------------------------------------
    def opaque(self, raw: Any, type_: int = OPAQUE) -> Expr:
        """A construct outside the model: every ``$n`` in it is undecided."""
        for n in param_numbers(raw):
            self.params.undecide(n)
        return Expr(type_)

    def undecide(self, e: Expr) -> None:
        """``e`` meets a context lockscope cannot type: if it is (or wraps) a parameter, that one is undecided."""
        if e.param is not None:
            e.param.undecided = True
            self.params.undecide(e.param.number)
        if e.inner is not None:
            self.undecide(e.inner)
        for f in e.fields:
            self.undecide(f)

    def typename(self, raw: dict[str, Any]) -> int:
        """``parse_type.c typenameTypeId``: the type a TypeName names (its array type with ``[]``).

        :raises OtherServerError: 42704, no such type.
        """
        names = strings(raw.get("names"))
        if raw.get("pct_type") or raw.get("setof"):
            return OPAQUE
        oid = self.cat.type_by_name(names[-2:])
        if not oid:
            raise OtherServerError("42704", f'type "{".".join(names)}" does not exist')
        if raw.get("arrayBounds"):
            oid = self.cat.array_of(oid)
        return oid or OPAQUE

    # -- coercion (parse_coerce.c coerce_type and its callers) ------------------------------------------------------
    def coerce(self, e: Expr, target: int, context: str = "i") -> Expr:
        """``coerce_type``: ``e`` as a ``target``; an unknown Param gets that type (``variable_coerce_param_hook``).

        :raises TypingFailure: 42P08, the parameter already has another type.
        """
        if e.form == "param" and e.param is not None and e.type != e.param.type:
            e = Expr(e.param.type, "param", e.param, has_vars=e.has_vars, label=e.label)  # coerced meanwhile
        if target == e.type:
            return e
        if OPAQUE in (target, e.type):
            self.undecide(e)
            return Expr(target, has_vars=e.has_vars, label=e.label)
        if target in _PASS_THROUGH:
            return e
        if target in _RELABEL_POLY and e.type != UNKNOWN:
            return Expr(self.cat.base_type(e.type), has_vars=e.has_vars, label=e.label)
        if e.type == UNKNOWN and e.form in ("const", "null"):
            return Expr(target, "const", label=e.label)
        if e.form == "param" and e.param is not None and e.param.type == UNKNOWN:
            self.params.resolve(e.param, target)
            return Expr(target, "param", e.param, label=e.label)
        if e.form == "collate" and e.inner is not None:
            inner = self.coerce(e.inner, target, context)
            return Expr(inner.type, "collate", inner=inner, has_vars=e.has_vars, label=e.label)
        if e.type == UNKNOWN:
            raise OtherServerError("XX000", f"failed to find conversion function from unknown to "
                                            f"{self.cat.type_name(target)}")
        return Expr(target, has_vars=e.has_vars, label=e.label)

    def coerce_to_target(self, e: Expr, target: int, context: str, what: str) -> Expr:
        """``coerce_to_target_type`` after ``can_coerce_type`` (casts, assignments).

        :raises TypingFailure: 42804, an assignment (or condition, subscript...) of a type that does not convert.
        :raises OtherServerError: 42846, a cast that does not exist.
        """
        if OPAQUE in (e.type, target) or e.type == target:
            return self.coerce(e, target, context)
        if not can_coerce_type(self.cat, [e.type], [target], context):
            failure = TypingFailure if context != "e" else OtherServerError
            raise failure("42804" if context != "e" else "42846",
                          f"{what}: cannot convert {self.cat.type_name(e.type)} to {self.cat.type_name(target)}")
        return self.coerce(e, target, context)

    def coerce_common(self, e: Expr, target: int, construct: str) -> Expr:
        """``coerce_to_common_type``."""
        return self.coerce_to_target(e, target, "i", construct)

    def coerce_bool(self, e: Expr, construct: str) -> Expr:
        """``coerce_to_boolean``: WHERE, HAVING, ON, AND/OR/NOT, CASE WHEN ... (an unknown ``$n`` becomes bool)."""
        return self.coerce_to_target(e, BOOL, "a", f"argument of {construct}")

    def common_type(self, exprs: Sequence[Expr], construct: str) -> int:
        """``select_common_type`` over transformed expressions (OPAQUE when one of them is)."""
        types = [e.type for e in exprs]
        if OPAQUE in types:
            for e in exprs:
                self.undecide(e)
            return OPAQUE
        return select_common_type(self.cat, types, construct)

    def coerce_all(self, exprs: Sequence[Expr], construct: str) -> tuple[int, list[Expr]]:
        """``select_common_type`` then ``coerce_to_common_type`` on each (CASE, COALESCE, VALUES, ARRAY ...)."""
        common = self.common_type(exprs, construct)
        return common, [self.coerce_common(e, common, construct) for e in exprs]

    # -- dispatch (transformExprRecurse) ---------------------------------------------------------------------------
    def expr(self, raw: Any) -> Expr:
        """``parse_expr.c transformExprRecurse``: one raw expression, transformed."""
        kind, body = node_of(raw)
        handler = getattr(self, "_x_" + kind, None)
        if handler is None:
            return self.opaque(raw)
        result: Expr = handler(body)
        return result

    def _x_ColumnRef(self, body: dict[str, Any]) -> Expr:
        return self.column_ref(strings(body.get("fields")))

    def _x_ParamRef(self, body: dict[str, Any]) -> Expr:
        ref = self.params.reference(int(body.get("number", 0)))
        return Expr(ref.type, "param", ref)

    def _x_A_Const(self, body: dict[str, Any]) -> Expr:
        return _const(body)

    def _x_TypeCast(self, body: dict[str, Any]) -> Expr:
        """``transformTypeCast`` (an ARRAY[...] argument takes the element type of an array target)."""
        target = self.typename(body["typeName"])
        arg = body.get("arg")
        if target != OPAQUE and isinstance(arg, dict) and "A_ArrayExpr" in arg and \
                self.cat.base_element(target):
            e = self.array_expr(arg["A_ArrayExpr"], self.cat.base_type(target))
        else:
            e = self.expr(arg)
        names = strings(body["typeName"].get("names"))
        label = e.label if e.label != "?column?" else names[-1]
        return _relabel(self.coerce_to_target(e, target, "e", "cannot cast"), label)

    def _x_CollateClause(self, body: dict[str, Any]) -> Expr:
        inner = self.expr(body.get("arg"))
        return Expr(inner.type, "collate", inner=inner, has_vars=inner.has_vars, label=inner.label)

    def _x_BoolExpr(self, body: dict[str, Any]) -> Expr:
        word = {"AND_EXPR": "AND", "OR_EXPR": "OR", "NOT_EXPR": "NOT"}.get(str(body.get("boolop")), "AND")
        args = [self.coerce_bool(self.expr(a), word) for a in body.get("args") or []]
        return Expr(BOOL, has_vars=any(a.has_vars for a in args))

    def _x_NullTest(self, body: dict[str, Any]) -> Expr:
        arg = self.expr(body.get("arg"))  # any type: not coerced
        return Expr(BOOL, has_vars=arg.has_vars)

    def _x_BooleanTest(self, body: dict[str, Any]) -> Expr:
        arg = self.coerce_bool(self.expr(body.get("arg")), "IS TRUE")
        return Expr(BOOL, has_vars=arg.has_vars)

    def _x_SQLValueFunction(self, body: dict[str, Any]) -> Expr:
        return Expr(_SQL_VALUE_TYPES.get(str(body.get("op")), OPAQUE))

    def _x_RowExpr(self, body: dict[str, Any]) -> Expr:
        fields = tuple(self.expr(a) for a in body.get("args") or [])
        return Expr(RECORD, "row", fields=fields, has_vars=any(f.has_vars for f in fields), label="row")

    def _x_A_ArrayExpr(self, body: dict[str, Any]) -> Expr:
        return self.array_expr(body, 0)

    def _x_CoalesceExpr(self, body: dict[str, Any]) -> Expr:
        args = [self.expr(a) for a in body.get("args") or []]
        common, _ = self.coerce_all(args, "COALESCE")
        return Expr(common, has_vars=any(a.has_vars for a in args), label="coalesce")

    def _x_MinMaxExpr(self, body: dict[str, Any]) -> Expr:
        word = "GREATEST" if body.get("op") == "IS_GREATEST" else "LEAST"
        args = [self.expr(a) for a in body.get("args") or []]
        common, _ = self.coerce_all(args, word)
        return Expr(common, has_vars=any(a.has_vars for a in args), label=word.lower())

    def _x_CaseExpr(self, body: dict[str, Any]) -> Expr:
        """``transformCaseExpr``: an unknown CASE argument becomes text; WHEN tests compare with ``=`` and are
        booleans; the results (ELSE first) resolve to their common type."""
        arg = self.expr(body["arg"]) if body.get("arg") is not None else None
        if arg is not None and arg.type == UNKNOWN:
            arg = self.coerce_common(arg, TEXT, "CASE")
        results: list[Expr] = []
        for when in body.get("args") or []:
            w = node_of(when)[1]
            test = self.expr(w.get("expr"))
            if arg is not None:
                test = self.make_op(["="], Expr(arg.type), test)
            self.coerce_bool(test, "CASE/WHEN")
            results.append(self.expr(w.get("result")))
        default = body.get("defresult")
        results.insert(0, self.expr(default) if default is not None else Expr(UNKNOWN, "null"))
        common, _ = self.coerce_all(results, "CASE")
        return Expr(common, has_vars=any(r.has_vars for r in results), label="case")

    def _x_A_Indirection(self, body: dict[str, Any]) -> Expr:
        """Subscripts of an array (``transformContainerSubscripts``: int4 subscripts); field selection and other
        subscripting (jsonb, hstore) are left to the server."""
        e = self.expr(body.get("arg"))
        for item in body.get("indirection") or []:
            kind, sub = node_of(item)
            if kind == "A_Indices" and e.type == UNKNOWN:
                raise TypingFailure("42804", "cannot subscript type unknown because it does not support subscripting")
            elem = self.cat.base_element(e.type) if e.type not in (OPAQUE, UNKNOWN) else 0
            if kind != "A_Indices" or not elem:
                if e.type in (UNKNOWN, OPAQUE):
                    self.undecide(e)
                return self.opaque(body.get("indirection"))
            for key in ("lidx", "uidx"):
                if sub.get(key) is not None:
                    self.coerce_to_target(self.expr(sub[key]), INT4, "a", "array subscript")
            e = Expr(self.cat.base_type(e.type) if sub.get("is_slice") else elem, has_vars=e.has_vars,
                     label=e.label)
        return e

    def _x_SubLink(self, body: dict[str, Any]) -> Expr:
        return self.sublink(body)

    def _x_FuncCall(self, body: dict[str, Any]) -> Expr:
        return self.func_call(body)

    def _x_A_Expr(self, body: dict[str, Any]) -> Expr:
        kind = str(body.get("kind"))
        names = strings(body.get("name"))
        if kind in ("AEXPR_OP", "AEXPR_LIKE", "AEXPR_ILIKE", "AEXPR_SIMILAR"):
            return self.a_expr_op(names, body)
        if kind in ("AEXPR_OP_ANY", "AEXPR_OP_ALL"):
            left, right = self.expr(body.get("lexpr")), self.expr(body.get("rexpr"))
            return self.make_scalar_array_op(names, left, right)
        if kind in ("AEXPR_DISTINCT", "AEXPR_NOT_DISTINCT"):
            return self.a_expr_distinct(names, body)
        if kind == "AEXPR_NULLIF":
            left, right = self.expr(body.get("lexpr")), self.expr(body.get("rexpr"))
            return self.nullif(names, left, right)
        if kind == "AEXPR_IN":
            return self.a_expr_in(names, body)
        if kind in _BETWEEN:
            return self.a_expr_between(kind, body)
        return self.opaque(body)

    # -- operators -------------------------------------------------------------------------------------------------
    def a_expr_op(self, names: list[str], body: dict[str, Any]) -> Expr:
        """``transformAExprOp``: ROW op ROW compares field by field; ROW op (sub-select) is a row comparison."""
        lraw, rraw = body.get("lexpr"), body.get("rexpr")
        if isinstance(lraw, dict) and "RowExpr" in lraw and isinstance(rraw, dict) and "SubLink" in rraw and \
                rraw["SubLink"].get("subLinkType") == "EXPR_SUBLINK":
            return self.sublink({**rraw["SubLink"], "subLinkType": "ROWCOMPARE_SUBLINK", "testexpr": lraw,
                                 "operName": body.get("name")})
        left = self.expr(lraw) if lraw is not None else None
        right = self.expr(rraw)
        if left is not None and left.form == "row" and right.form == "row":
            return self.row_comparison(names, list(left.fields), list(right.fields))
        return self.make_op(names, left, right)

    def a_expr_distinct(self, names: list[str], body: dict[str, Any]) -> Expr:
        """``transformAExprDistinct``: against a NULL literal it is a NullTest on the other side."""
        lraw, rraw = body.get("lexpr"), body.get("rexpr")
        for raw, other in ((rraw, lraw), (lraw, rraw)):
            if isinstance(raw, dict) and raw.get("A_Const", {}).get("isnull"):
                return self._x_NullTest({"arg": other})
        left, right = self.expr(lraw), self.expr(rraw)
        if left.form == "row" and right.form == "row":
            return self.row_comparison(names, list(left.fields), list(right.fields))
        return self.make_op(names, left, right)

    def nullif(self, names: list[str], left: Expr, right: Expr) -> Expr:
        """``transformAExprNullIf``: the ``=`` operator, typed as its (coerced) first argument."""
        if OPAQUE in (left.type, right.type):
            self.make_op(names, left, right)
            return Expr(OPAQUE)
        op = oper(self.cat, names, left.type, right.type)
        declared = [op.left_type, op.right_type]
        enforce_generic_type_consistency(self.cat, [left.type, right.type], declared, op.result_type)
        coerced = self.make_fn_arguments([left, right], declared)
        return Expr(coerced[0].type, has_vars=left.has_vars or right.has_vars, label="nullif")

    def a_expr_between(self, kind: str, body: dict[str, Any]) -> Expr:
        """``transformAExprBetween``: rewritten as two comparisons (the tested expression transformed twice)."""
        low_op, high_op, _ = _BETWEEN[kind]
        low, high = (body.get("rexpr") or {}).get("List", {}).get("items", [None, None])
        lexpr = body.get("lexpr")
        tests = [(low_op, lexpr, low), (high_op, lexpr, high)]
        if kind.endswith("_SYM"):
            tests += [(low_op, lexpr, high), (high_op, lexpr, low)]
        for name, a, b in tests:
            self.coerce_bool(self.make_op([name], self.expr(a), self.expr(b)), "BETWEEN")
        return Expr(BOOL)

    def a_expr_in(self, names: list[str], body: dict[str, Any]) -> Expr:
        """``transformAExprIn``: two or more items without columns of this level form an array of their common type
        (the left side first, so preferred when in doubt) compared with ``= ANY``; the rest compare one by one."""
        left = self.expr(body.get("lexpr"))
        items = [self.expr(r) for r in (body.get("rexpr") or {}).get("List", {}).get("items", [])]
        rest = items
        constants = [e for e in items if not e.has_vars]
        used_left = False
        if len(constants) > 1:
            types = [left.type] + [e.type for e in constants]
            scalar = select_common_type(self.cat, types, None) if OPAQUE not in types else OPAQUE
            if scalar == OPAQUE:
                for e in (left, *items):
                    self.undecide(e)
                return Expr(BOOL)
            if scalar and verify_common_type(self.cat, scalar, types) and scalar != RECORD and \
                    self.cat.array_of(scalar):
                for e in constants:
                    self.coerce_common(e, scalar, "IN")
                self.make_scalar_array_op(names, left, Expr(self.cat.array_of(scalar)))
                used_left, rest = True, [e for e in items if e.has_vars]
        copies = []
        for e in rest:
            copy = self.copy(left)
            copies.append(copy)
            if copy.form == "row" and e.form == "row":
                self.row_comparison(names, list(copy.fields), list(e.fields))
            else:
                self.coerce_bool(self.make_op(names, copy, e), "IN")
        if not used_left and copies:
            self.params.forget(_refs(left))
        return Expr(BOOL, has_vars=left.has_vars or any(e.has_vars for e in items))

    def copy(self, e: Expr) -> Expr:
        """``copyObject`` of a transformed expression: its Params become new nodes of the same type."""
        if e.param is not None:
            ref = self.params.reference(e.param.number)
            ref.type, ref.undecided = e.param.type, e.param.undecided
            return Expr(e.type, e.form, ref, has_vars=e.has_vars, label=e.label)
        inner = self.copy(e.inner) if e.inner is not None else None
        return Expr(e.type, e.form, None, inner, tuple(self.copy(f) for f in e.fields), e.has_vars, e.label)

    def row_comparison(self, names: list[str], left: list[Expr], right: list[Expr]) -> Expr:
        """``make_row_comparison_op``: one operator per pair of fields."""
        if len(left) != len(right):
            raise OtherServerError("42601", "unequal number of entries in row expressions")
        for a, b in zip(left, right, strict=True):
            self.make_op(names, a, b)
        return Expr(BOOL, has_vars=any(e.has_vars for e in (*left, *right)))

    def make_op(self, names: list[str], left: Expr | None, right: Expr) -> Expr:
        """``parse_oper.c make_op``: the operator chosen (``oper`` / ``left_oper``), its polymorphic types resolved,
        its arguments coerced to its declared types."""
        args = [right] if left is None else [left, right]
        if any(a.type == OPAQUE for a in args):
            for a in args:
                self.undecide(a)
            return Expr(OPAQUE, has_vars=any(a.has_vars for a in args))
        if left is None:
            op = left_oper(self.cat, names, right.type)
            declared = [op.right_type]
        else:
            op = oper(self.cat, names, left.type, right.type)
            declared = [op.left_type, op.right_type]
        result = enforce_generic_type_consistency(self.cat, [a.type for a in args], declared, op.result_type)
        self.make_fn_arguments(args, declared)
        return Expr(result, has_vars=any(a.has_vars for a in args))

    def make_scalar_array_op(self, names: list[str], left: Expr, right: Expr) -> Expr:
        """``parse_oper.c make_scalar_array_op`` (``= ANY (array)``, IN lists): the operator takes the array's
        element type on the right (an unknown array stays unknown), then the array is coerced to the array type of
        its declared right input."""
        if OPAQUE in (left.type, right.type):
            self.undecide(left)
            self.undecide(right)
            return Expr(BOOL, has_vars=left.has_vars or right.has_vars)
        rtype = UNKNOWN if right.type == UNKNOWN else self.cat.base_element(right.type)
        if not rtype:
            raise OtherServerError("42809", "op ANY/ALL (array) requires array on right side")
        op = oper(self.cat, names, left.type, rtype)
        declared = [op.left_type, op.right_type]
        result = enforce_generic_type_consistency(self.cat, [left.type, rtype], declared, op.result_type)
        if result != BOOL:
            raise OtherServerError("42809", "op ANY/ALL (array) requires operator to yield boolean")
        array = right.type if declared[1] in POLYMORPHIC else self.cat.array_of(declared[1])
        if not array:
            raise OtherServerError("42704", f"could not find array type for data type "
                                            f"{self.cat.type_name(declared[1])}")
        self.make_fn_arguments([left, right], [declared[0], array])
        return Expr(BOOL, has_vars=left.has_vars or right.has_vars)

    def make_fn_arguments(self, args: Sequence[Expr], declared: Sequence[int]) -> list[Expr]:
        """``parse_func.c make_fn_arguments``: each argument coerced (implicitly) to its declared type."""
        return [a if a.type == d else self.coerce(a, d, "i") for a, d in zip(args, declared, strict=False)]

    # -- arrays, sub-selects, functions ----------------------------------------------------------------------------
    def array_expr(self, body: dict[str, Any], array_type: int) -> Expr:
        """``transformArrayExpr``: the elements' common type (text when all are unknown), or the element type of
        the cast's array type, which every element is cast to."""
        elements: list[Expr] = []
        multidims = False
        for raw in body.get("elements") or []:
            if isinstance(raw, dict) and "A_ArrayExpr" in raw:
                elements.append(self.array_expr(raw["A_ArrayExpr"], array_type))
                multidims = True
            else:
                e = self.expr(raw)
                multidims |= e.type not in (OPAQUE, UNKNOWN) and self.cat.element(e.type) != 0
                elements.append(e)
        if array_type:
            target = array_type if multidims else self.cat.element(array_type)
            for e in elements:
                self.coerce_to_target(e, target, "e", "cannot cast")
            return Expr(array_type, has_vars=any(e.has_vars for e in elements), label="array")
        if not elements:
            raise OtherServerError("42P18", "cannot determine type of empty array")
        common, _ = self.coerce_all(elements, "ARRAY")
        result = OPAQUE if common == OPAQUE else (common if multidims else self.cat.array_of(common) or OPAQUE)
        return Expr(result, has_vars=any(e.has_vars for e in elements), label="array")

    def sublink(self, body: dict[str, Any]) -> Expr:
        """``transformSubLink``: the sub-select first (its unknown outputs resolved to text), then for ANY/ALL and
        row comparisons the left side compared with each output column."""
        kind = str(body.get("subLinkType"))
        targets = self.subquery(body.get("subselect"), True)
        if kind == "EXISTS_SUBLINK":
            return Expr(BOOL)
        if kind in ("EXPR_SUBLINK", "ARRAY_SUBLINK"):
            if targets is None:
                return Expr(OPAQUE)
            if len(targets) != 1:
                raise OtherServerError("42601", "subquery must return only one column")
            t = targets[0].expr.type
            if kind == "ARRAY_SUBLINK":
                t = self.cat.array_of(t) if t != OPAQUE else OPAQUE
            return Expr(t or OPAQUE, label=targets[0].name if kind == "EXPR_SUBLINK" else "array")
        if kind not in ("ANY_SUBLINK", "ALL_SUBLINK", "ROWCOMPARE_SUBLINK"):
            return self.opaque(body)
        left = self.expr(body.get("testexpr"))
        if targets is None:
            self.undecide(left)
            return Expr(BOOL)
        lefts = list(left.fields) if left.form == "row" else [left]
        if len(lefts) != len(targets):
            raise OtherServerError("42601", "subquery has too many or too few columns")
        return self.row_comparison(strings(body.get("operName")) or ["="], lefts,
                                   [Expr(t.expr.type) for t in targets])

    def func_call(self, body: dict[str, Any]) -> Expr:
        """``transformFuncCall`` and ``ParseFuncOrColumn``: arguments (an ordered-set aggregate's WITHIN GROUP items
        after them), FILTER, the function chosen (``func_get_detail``), polymorphic types resolved, arguments
        coerced; then ``transformAggregateCall``: with DISTINCT, unknown arguments become text, ORDER BY items
        likewise; window clauses are kept for the query's window definitions."""
        names = strings(body.get("funcname"))
        raw_args = list(body.get("args") or [])
        within = bool(body.get("agg_within_group"))
        if within:
            raw_args += [node_of(sort)[1].get("node") for sort in body.get("agg_order") or []]
        if any(isinstance(a, dict) and "NamedArgExpr" in a for a in raw_args):
            return self.opaque(body)
        args = [self.expr(a) for a in raw_args]
        if body.get("agg_filter") is not None:
            self.coerce_bool(self.expr(body["agg_filter"]), "FILTER")
        result = self.resolve_call(names, args, bool(body.get("func_variadic")), within)
        if body.get("agg_distinct"):
            for a in args:
                if a.type == UNKNOWN:
                    self.coerce(a, TEXT)
        for sort in [] if within else body.get("agg_order") or []:
            e = self.expr(node_of(sort)[1].get("node"))
            if e.type == UNKNOWN:
                self.coerce(e, TEXT)
        if body.get("over") is not None:
            self.level.windows.append(body["over"])
        return Expr(result, has_vars=any(a.has_vars for a in args), label=names[-1])

    def resolve_call(self, names: list[str], args: list[Expr], variadic: bool, within_group: bool = False) -> int:
        """The result type of a call by name (``func_get_detail`` ... ``make_fn_arguments``); a hypothetical-set
        aggregate's arguments (``unify_hypothetical_args``) are left to the server.

        :raises TypingFailure: 42725, the call is ambiguous.
        """
        if any(a.type == OPAQUE for a in args):
            for a in args:
                self.undecide(a)
            return OPAQUE
        unknown_const = len(args) == 1 and args[0].form in ("const", "null") and args[0].type == UNKNOWN
        detail = func_get_detail(self.cat, names, [a.type for a in args], unknown_const=unknown_const,
                                 expand_variadic=not variadic)
        if detail.kind == "coercion":
            return self.coerce_to_target(args[0], detail.coerce_to, "e", "cannot cast").type
        if detail.kind == "multiple":
            shown = ", ".join(self.cat.type_name(a.type) for a in args)
            raise TypingFailure("42725", f"function {'.'.join(names)}({shown}) is not unique")
        candidate = detail.candidate
        assert candidate is not None and candidate.function is not None
        fn = candidate.function
        defaults = list(fn.arg_types[len(args):]) if candidate.ndargs else []
        if any(d in POLYMORPHIC for d in defaults) or (within_group and ANY in candidate.args):
            for a in args:
                self.undecide(a)
            return OPAQUE
        declared = list(candidate.args) + defaults
        actual = [a.type for a in args] + defaults
        result = enforce_generic_type_consistency(self.cat, actual, declared, fn.result_type)
        self.make_fn_arguments(args, declared[:len(args)])
        return result


def _refs(e: Expr) -> list[Any]:
    out = [e.param] if e.param is not None else []
    if e.inner is not None:
        out += _refs(e.inner)
    for f in e.fields:
        out += _refs(f)
    return out


def _relabel(e: Expr, label: str) -> Expr:
    e.label = label
    return e

