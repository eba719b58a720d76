"""Typing a statement's ``$n`` parameters on the client, after PostgreSQL's own rules, so that lockscope refuses a
statement the server could not prepare before the server sees it (and logs the error).

``PREPARE`` (and the extended protocol's Parse, and ``EXPLAIN (GENERIC_PLAN)``) analyse a statement with variable
parameters (``parse_param.c``): a ``$n`` starts as type ``unknown`` and takes the type of the first context that
coerces it (an operator's other side, a function's declared argument, a column assigned to, a cast, LIMIT...);
at the end every parameter must have one type (``postgres.c pg_analyze_and_rewrite_varparams``,
``parse_param.c check_variable_parameters``). Choosing that context's type is candidate selection among functions
and operators with unknown inputs (``parse_func.c func_select_candidate``, ``parse_oper.c
oper_select_candidate``) and common-type resolution (``parse_coerce.c select_common_type``). This package follows
those rules over pglast's raw parse tree and a few catalog reads (``param_*.sql``: types, casts, the functions and
operators of the names used, the columns of the relations named; nothing names the statement, nothing locks a
user relation): :func:`type_params`.

Where a construct is outside the model (MERGE, composite fields, jsonb subscripts, named arguments, ordered-set
aggregates, row types...), the parameters it holds are undecided and never refused: the server decides. The
corpus test (``tests/test_param_typing.py``) holds the model to PREPARE's answers.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pglast.parser import ParseError, parse_sql_json

from ..statement import CheckedStatement, raw_statement
from .catalog import OPAQUE, UNKNOWN, Catalog, Runner, read_catalog
from .exprs import node_of, strings
from .failures import TYPING_SQLSTATES, OtherServerError, TypingFailure
from .nodes import Params, raw_dicts
from .stmts import StatementAnalyzer

__all__ = ["TYPING_SQLSTATES", "ParamTyping", "describe_types", "statement_names", "type_params"]

_BETWEEN_OPERATORS = ("<", "<=", ">", ">=")


@dataclass(frozen=True)
class ParamTyping:
    """The parameter types parse analysis would give a statement, or the typing error it would raise.

    :ivar types: the type OID of each ``$1..$n`` (index n-1); 0 where lockscope cannot tell on the client.
    :ivar sqlstate: the SQLSTATE of the parameter-typing error (one of :data:`TYPING_SQLSTATES`), else None.
    :ivar message: that error's message (PostgreSQL's wording), else empty.
    :ivar other_error: ``SQLSTATE: message`` when the server would refuse the statement for another reason (a
        function or operator that does not exist...; not a typing refusal, ``types`` then all 0), else empty.
    """

    types: tuple[int, ...]
    sqlstate: str | None = None
    message: str = ""
    other_error: str = ""

    @property
    def refused(self) -> bool:
        """The server would refuse the statement for a reason of parameter typing."""
        return self.sqlstate is not None


def statement_names(raw: Any) -> tuple[list[tuple[str | None, str]], list[str], list[str]]:
    """The relation names (schema or None, name), function names and operator names a raw statement uses, for
    the catalog reads (CTE names are read too and resolved to the CTE on the client)."""
    relations: list[tuple[str | None, str]] = []
    functions: set[str] = set()
    operators: set[str] = {"="}
    for node in raw_dicts(raw):
        if "relname" in node and "inh" in node:
            relations.append((node.get("schemaname"), str(node["relname"])))
        kind_body = node.get("FuncCall")
        if isinstance(kind_body, dict):
            functions.update(strings(kind_body.get("funcname"))[-1:])
        for key in ("A_Expr", "SubLink"):
            body = node.get(key)
            if isinstance(body, dict):
                operators.update(strings(body.get("name") or body.get("operName"))[-1:])
                if str(body.get("kind", "")).startswith(("AEXPR_BETWEEN", "AEXPR_NOT_BETWEEN")):
                    operators.update(_BETWEEN_OPERATORS)
    return relations, sorted(functions), sorted(operators - {"BETWEEN", "BETWEEN SYMMETRIC", "NOT BETWEEN",
                                                              "NOT BETWEEN SYMMETRIC"})


def _declared_type(cat: Catalog, name: str) -> int:
    """A ``--param-type`` name's OID (parsed by pglast as a cast's type), OPAQUE when lockscope cannot tell."""
    try:
        tree = parse_sql_json(f"SELECT NULL::{name}")
    except ParseError:
        return OPAQUE
    stmt = json.loads(tree)["stmts"][0]["stmt"]
    target = node_of(node_of(stmt)[1]["targetList"][0])[1]["val"]
    kind, body = node_of(target)
    if kind != "TypeCast":
        return OPAQUE
    names = strings(body["typeName"].get("names"))
    oid = cat.type_by_name(names[-2:])
    if oid and body["typeName"].get("arrayBounds"):
        oid = cat.array_of(oid)
    return oid or OPAQUE


def _final_check(params: Params, count: int) -> None:
    """``parse_param.c check_variable_parameters`` (every Param node has its parameter's final type), then
    ``postgres.c pg_analyze_and_rewrite_varparams`` (every ``$1..$n`` used and typed).

    :raises TypingFailure: 42P08 or 42P18.
    """
    for ref in params.refs:
        final = params.types.get(ref.number, 0)
        if ref.undecided or ref.number in params.undecided or final == OPAQUE:
            continue
        if ref.type != final:
            raise TypingFailure("42P08", f"could not determine data type of parameter ${ref.number}")
    for n in range(1, count + 1):
        if n not in params.undecided and params.types.get(n, 0) in (0, UNKNOWN):
            raise TypingFailure("42P18", f"could not determine data type of parameter ${n}")


def type_params(run: Runner, statement: CheckedStatement, declared: Sequence[str] = (), *,
                owner: object | None = None) -> ParamTyping:
    """The types PREPARE would give a statement's parameters, or the parameter-typing error it would raise.

    :param run: runs lockscope's SQL files (``Session.query_rows``).
    :param declared: ``PREPARE name (types)`` types of ``$1..$k`` (``--param-type``), typed from the start.
    :param owner: keeps the session's type and cast facts between statements (the session; held weakly).
    :return: a :class:`ParamTyping`; not refused when the server would refuse the statement for another reason
        (an operator that does not exist...): that error is the server's to report.
    :raises DatabaseError: a catalog read failed.
    """
    raw = raw_statement(statement)
    relations, functions, operators = statement_names(raw)
    cat = read_catalog(run, relations=relations, functions=functions, operators=operators, owner=owner)
    params = Params({i: _declared_type(cat, t) for i, t in enumerate(declared, 1)})
    count = max(statement.param_count, len(declared))
    try:
        StatementAnalyzer(cat, params).statement(raw)
        _final_check(params, count)
    except TypingFailure as failure:
        return ParamTyping(_types(params, count), failure.sqlstate, failure.message)
    except OtherServerError as other:
        return ParamTyping((0,) * count, other_error=f"{other.sqlstate}: {other.message}")
    return ParamTyping(_types(params, count))


def _types(params: Params, count: int) -> tuple[int, ...]:
    def one(n: int) -> int:
        t = params.types.get(n, 0)
        return 0 if n in params.undecided or t in (OPAQUE, UNKNOWN) else t

    return tuple(one(n) for n in range(1, count + 1))


def describe_types(run: Runner, oids: Sequence[int], *, owner: object | None = None) -> dict[int, tuple[str, str]]:
    """``oid -> (schema.name, typcategory)``: the name as a cast in a statement text can give it (each part
    double-quoted when it is not a plain lower-case identifier) and its category letter (``N`` numeric, ``S``
    string, ``A`` array, ...; ``""`` when unknown); from the session's type facts (:func:`read_catalog`, no
    statement named).

    :raises DatabaseError: the catalog read failed.
    """
    cat = read_catalog(run, relations=[], functions=[], operators=[], owner=owner)

    def quote(part: str) -> str:
        return part if part.isidentifier() and part == part.lower() and part.isascii() else \
            '"' + part.replace('"', '""') + '"'

    out = {}
    for oid in oids:
        row = cat.types.get(oid)
        out[oid] = (f"{quote(row.schema_name)}.{quote(row.name)}", row.category) if row is not None else \
            (cat.type_name(oid), "")
    return out
