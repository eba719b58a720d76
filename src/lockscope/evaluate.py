"""A small evaluator of SQL expressions on known values, for the execution model (no server): the values an
``INSERT ... SELECT`` or a MERGE's source computes from the rows it reads (``s.id + 1000``), a trigger's ``WHEN``
condition on a row (``NEW.v > 5``), a ``format()`` a trigger's dynamic SQL is built with.

It works on the raw parse tree (libpg_query JSON, as pglast gives it) and on values as text, the way PostgreSQL
prints them. It knows integers and text: arithmetic (``+ - * / %`` with C's truncation), ``||``, comparisons (text
only for ``=`` and ``<>``: an ordering depends on the collation), ``AND``/``OR``/``NOT``, ``IS [NOT] NULL``, ``IS
[NOT] DISTINCT FROM``, ``BETWEEN``, ``IN``, casts to integer and text types, ``CASE``, ``COALESCE``, ``NULLIF`` and a
few immutable functions (``lower``, ``upper``, ``length``, ``abs``, ``repeat``, ``md5``, ``left``, ``right``,
``substr``, ``concat``, ``format``). Anything else is :data:`UNKNOWN`: the caller then says the execution is not
known exactly.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["UNKNOWN", "Row", "evaluate", "format_sql", "truth"]

#: A value the evaluator cannot compute.
UNKNOWN = "\x00unknown"
#: A row's columns by qualifier (``new``, ``old``, an alias, ``""`` for unqualified names): column -> text value.
Row = Mapping[str, Mapping[str, str | None]]

_INT = re.compile(r"^[+-]?\d+$")
_INT_TYPES = frozenset({"int2", "int4", "int8", "integer", "bigint", "smallint", "int"})
_TEXT_TYPES = frozenset({"text", "varchar", "bpchar", "name", "char"})


def _int(v: str | None) -> int | None:
    return int(v) if v is not None and _INT.match(v) else None


def evaluate(node: Any, row: Row, params: Sequence[str | None] = ()) -> str | None:
    """The value of ``node`` on ``row``: text as PostgreSQL prints it, None for NULL, :data:`UNKNOWN` when it
    cannot be computed here.

    :param params: the values of ``$1..$n``.
    """
    try:
        return _eval(node, row, params)
    except (ArithmeticError, ValueError, KeyError, IndexError, TypeError):
        return UNKNOWN


def truth(node: Any, row: Row, params: Sequence[str | None] = ()) -> bool | None:
    """Whether a condition holds (a NULL result is false, as in WHERE and WHEN); None when not known."""
    v = evaluate(node, row, params)
    if v == UNKNOWN:
        return None
    return v == "true"


def _bool(b: bool | None) -> str | None:
    return None if b is None else ("true" if b else "false")


def _eval(node: Any, row: Row, params: Sequence[str | None]) -> str | None:
    if not isinstance(node, dict) or len(node) != 1:
        return UNKNOWN
    ((kind, body),) = node.items()
    handler = _NODES.get(kind)
    return handler(body, row, params) if handler is not None else UNKNOWN


def _const(body: Mapping[str, Any], row: Row, params: Sequence[str | None]) -> str | None:
    if body.get("isnull"):
        return None
    for key in ("ival", "fval", "sval", "boolval", "bsval"):
        if key in body:
            inner = body[key]
            value = inner.get(key, 0 if key == "ival" else False if key == "boolval" else "")
            return ("true" if value else "false") if key == "boolval" else str(value)
    return "0"  # libpg_query leaves out an ival of 0


def _param(body: Mapping[str, Any], row: Row, params: Sequence[str | None]) -> str | None:
    n = int(body.get("number", 0))
    return params[n - 1] if 0 < n <= len(params) else UNKNOWN


def _column(body: Mapping[str, Any], row: Row, params: Sequence[str | None]) -> str | None:
    fields = [f.get("String", {}).get("sval") for f in body.get("fields") or []]
    if not fields or any(f is None for f in fields):
        return UNKNOWN
    names = [str(f) for f in fields]
    if len(names) == 1:
        for q in ("", *row):
            if names[0] in row.get(q, {}):
                return row[q][names[0]]
        return UNKNOWN
    q, col = names[-2].lower(), names[-1]
    return row[q][col] if q in row and col in row[q] else UNKNOWN


def _cast(body: Mapping[str, Any], row: Row, params: Sequence[str | None]) -> str | None:
    v = _eval(body.get("arg"), row, params)
    names = [n.get("String", {}).get("sval", "") for n in (body.get("typeName") or {}).get("names") or []]
    base = names[-1] if names else ""
    if v is None or v == UNKNOWN:
        return v
    if base in _INT_TYPES:
        i = _int(v.strip())
        return str(i) if i is not None else UNKNOWN
    if base in _TEXT_TYPES and base not in ("bpchar", "char"):
        return v
    if base == "bool":
        return {"true": "true", "t": "true", "false": "false", "f": "false"}.get(v.lower(), UNKNOWN)
    return UNKNOWN


def _c_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _arith(op: str, a: str | None, b: str | None) -> str | None:
    if a == UNKNOWN or b == UNKNOWN:
        return UNKNOWN
    if op == "||":
        return None if a is None or b is None else a + b
    if a is None or b is None:
        return None
    x, y = _int(a), _int(b)
    if x is None or y is None:
        return UNKNOWN
    if op == "+":
        return str(x + y)
    if op == "-":
        return str(x - y)
    if op == "*":
        return str(x * y)
    if op == "/":
        return str(_c_div(x, y))
    if op == "%":
        return str(x - _c_div(x, y) * y)
    return UNKNOWN


def _compare(op: str, a: str | None, b: str | None) -> str | None:
    if a == UNKNOWN or b == UNKNOWN:
        return UNKNOWN
    if a is None or b is None:
        return None
    x, y = _int(a), _int(b)
    if x is None or y is None:  # text: only equality is the same under every (deterministic) collation
        if op in ("=", "<>", "!="):
            return _bool((a == b) == (op == "="))
        return UNKNOWN
    return _bool({"=": x == y, "<>": x != y, "!=": x != y, "<": x < y, "<=": x <= y, ">": x > y,
                  ">=": x >= y}[op])


def _a_expr(body: Mapping[str, Any], row: Row, params: Sequence[str | None]) -> str | None:
    kind = body.get("kind")
    op = "".join(str(n.get("String", {}).get("sval", "")) for n in body.get("name") or [])
    if kind == "AEXPR_OP":
        if "lexpr" not in body:  # a prefix operator
            v = _eval(body.get("rexpr"), row, params)
            if op == "-" and v not in (None, UNKNOWN):
                i = _int(v)
                return str(-i) if i is not None else UNKNOWN
            return v if op == "+" else UNKNOWN
        a, b = _eval(body.get("lexpr"), row, params), _eval(body.get("rexpr"), row, params)
        if op in ("=", "<>", "!=", "<", "<=", ">", ">="):
            return _compare(op, a, b)
        return _arith(op, a, b)
    if kind in ("AEXPR_DISTINCT", "AEXPR_NOT_DISTINCT"):
        a, b = _eval(body.get("lexpr"), row, params), _eval(body.get("rexpr"), row, params)
        if UNKNOWN in (a, b):
            return UNKNOWN
        same = a == b if a is None or b is None else _compare("=", a, b) == "true"
        return _bool(same == (kind == "AEXPR_NOT_DISTINCT"))
    if kind == "AEXPR_IN":
        a = _eval(body.get("lexpr"), row, params)
        items = [_eval(v, row, params) for v in _items(body.get("rexpr"))]
        hits = [_compare("=", a, v) for v in items]
        if UNKNOWN in hits:
            return UNKNOWN
        found = "true" in hits
        result = True if found else (None if None in hits else False)
        return _bool(result if op == "=" or result is None else not result)
    if kind in ("AEXPR_BETWEEN", "AEXPR_NOT_BETWEEN"):
        a = _eval(body.get("lexpr"), row, params)
        lo, hi = (_eval(v, row, params) for v in _items(body.get("rexpr")))
        low, high = _compare(">=", a, lo), _compare("<=", a, hi)
        inside = _and([low, high])
        if inside in (None, UNKNOWN):
            return inside
        return _bool((inside == "true") == (kind == "AEXPR_BETWEEN"))
    if kind == "AEXPR_NULLIF":
        a, b = _eval(body.get("lexpr"), row, params), _eval(body.get("rexpr"), row, params)
        eq = _compare("=", a, b)
        return UNKNOWN if eq == UNKNOWN else (None if eq == "true" else a)
    return UNKNOWN


def _items(node: Any) -> list[Any]:
    if isinstance(node, dict) and "List" in node:
        return list(node["List"].get("items") or [])
    return list(node or [])


def _and(values: Sequence[str | None]) -> str | None:
    if "false" in values:
        return "false"
    if UNKNOWN in values:
        return UNKNOWN
    return None if None in values else "true"


def _or(values: Sequence[str | None]) -> str | None:
    if "true" in values:
        return "true"
    if UNKNOWN in values:
        return UNKNOWN
    return None if None in values else "false"


def _bool_expr(body: Mapping[str, Any], row: Row, params: Sequence[str | None]) -> str | None:
    args = [_eval(a, row, params) for a in body.get("args") or []]
    op = body.get("boolop")
    if op == "AND_EXPR":
        return _and(args)
    if op == "OR_EXPR":
        return _or(args)
    if op == "NOT_EXPR" and args:
        return {"true": "false", "false": "true"}.get(args[0] or "", args[0])
    return UNKNOWN


def _null_test(body: Mapping[str, Any], row: Row, params: Sequence[str | None]) -> str | None:
    v = _eval(body.get("arg"), row, params)
    if v == UNKNOWN:
        return UNKNOWN
    return _bool((v is None) == (body.get("nulltesttype") == "IS_NULL"))


def _coalesce(body: Mapping[str, Any], row: Row, params: Sequence[str | None]) -> str | None:
    for a in body.get("args") or []:
        v = _eval(a, row, params)
        if v != UNKNOWN and v is not None:
            return v
        if v == UNKNOWN:
            return UNKNOWN
    return None


def _case(body: Mapping[str, Any], row: Row, params: Sequence[str | None]) -> str | None:
    arg = _eval(body["arg"], row, params) if body.get("arg") else None
    for w in body.get("args") or []:
        when = w.get("CaseWhen") or {}
        cond = _eval(when.get("expr"), row, params)
        if body.get("arg"):
            cond = _compare("=", arg, cond)
        if cond == UNKNOWN:
            return UNKNOWN
        if cond == "true":
            return _eval(when.get("result"), row, params)
    return _eval(body["defresult"], row, params) if body.get("defresult") else None


def format_sql(fmt: str, args: Sequence[str | None]) -> str | None:
    """PostgreSQL's ``format()``: ``%s``, ``%I``, ``%L``, ``%%``, ``%n$s`` positions; None when it cannot be done
    here (a width, a missing argument)."""
    out: list[str] = []
    i = pos = 0
    while i < len(fmt):
        c = fmt[i]
        if c != "%":
            out.append(c)
            i += 1
            continue
        m = re.match(r"%(?:(\d+)\$)?([sIL%])", fmt[i:])
        if m is None:
            return None
        i += m.end()
        if m.group(2) == "%":
            out.append("%")
            continue
        n = int(m.group(1)) - 1 if m.group(1) else pos
        pos = n + 1
        if n >= len(args):
            return None
        v = args[n]
        if m.group(2) == "s":
            out.append("" if v is None else v)
        elif m.group(2) == "I":
            if v is None:
                return None
            out.append(v if re.fullmatch(r"[a-z_][a-z0-9_$]*", v) else '"' + v.replace('"', '""') + '"')
        else:
            out.append("NULL" if v is None else "'" + v.replace("'", "''") + "'")
    return "".join(out)


def _md5(a: str) -> str:
    return hashlib.md5(a.encode()).hexdigest()


_FUNCTIONS: dict[str, tuple[int, Callable[..., str]]] = {
    "lower": (1, lambda a: a.lower()),
    "upper": (1, lambda a: a.upper()),
    "length": (1, lambda a: str(len(a))),
    "char_length": (1, lambda a: str(len(a))),
    "abs": (1, lambda a: str(abs(int(a)))),
    "repeat": (2, lambda a, n: a * max(0, int(n))),
    "md5": (1, _md5),
    "left": (2, lambda a, n: a[: int(n)]),
    "right": (2, lambda a, n: a[-int(n):] if int(n) > 0 else a[abs(int(n)):]),
}


def _func(body: Mapping[str, Any], row: Row, params: Sequence[str | None]) -> str | None:
    name = [n.get("String", {}).get("sval", "") for n in body.get("funcname") or []]
    fn = name[-1].lower() if name else ""
    if len(name) > 1 and name[0] != "pg_catalog":
        return UNKNOWN
    args = [_eval(a, row, params) for a in body.get("args") or []]
    if UNKNOWN in args or body.get("agg_star") or body.get("over") or body.get("agg_distinct"):
        return UNKNOWN
    if fn == "concat":
        return "".join(a for a in args if a is not None)
    if fn == "format" and args and args[0] is not None:
        return format_sql(args[0], args[1:]) or UNKNOWN
    if fn == "substr" and len(args) in (2, 3):
        if any(a is None for a in args):
            return None
        text, start = str(args[0]), int(str(args[1]))
        length = int(str(args[2])) if len(args) == 3 else len(text) + abs(start) + 1
        lo = max(start, 1)
        hi = start + length
        return text[lo - 1: max(lo - 1, hi - 1)]
    spec = _FUNCTIONS.get(fn)
    if spec is None or len(args) != spec[0]:
        return UNKNOWN
    if any(a is None for a in args):
        return None
    return spec[1](*args)


_NODES: dict[str, Callable[[Mapping[str, Any], Row, Sequence[str | None]], str | None]] = {
    "A_Const": _const, "ParamRef": _param, "ColumnRef": _column, "TypeCast": _cast, "A_Expr": _a_expr,
    "BoolExpr": _bool_expr, "NullTest": _null_test, "CoalesceExpr": _coalesce, "CaseExpr": _case,
    "FuncCall": _func,
}
