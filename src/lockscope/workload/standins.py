"""Typed stand-ins for the constants pg_stat_statements replaced, so that a normalized text that cannot be typed
as it stands is probed anyway (issue 27).

pg_stat_statements replaces every constant with ``$n`` (``pg_stat_statements.c generate_normalized_query``). A
constant had a type of its own (an integer literal is ``int4``, ``parse_node.c make_const``), a ``$n`` has none:
in ``p.uploader_id between $1 and $2 + $3`` (the application sent ``:id + 20``) parse analysis meets ``unknown +
unknown``, which ``parse_oper.c oper_select_candidate`` cannot resolve (42725 "operator is not unique"); in
``select $1`` the parameter is never coerced (42P18, ``postgres.c pg_analyze_and_rewrite_varparams``). The
statement the application ran typed fine; its normalized text cannot be PREPAREd.

:func:`typed_standins` infers each such parameter's type from the expression around it, as parse analysis would type
one ``$n`` standing in that place: an operator expression whose operands are all parameters (``$2 + $3``, ``$1 ||
$2``, nested) is replaced by one fresh parameter and the statement typed again on the client
(:func:`lockscope.paramtypes.type_params`: the comparison's other side, the column assigned, a function's declared
argument, LIMIT/OFFSET's ``int8``, ...); its operands get that type. Without such a context, an arithmetic
operator's operands are ``int4`` (the integer literal pg_stat_statements most often replaced) and ``||``'s are
``text``. A parameter still left ``unknown`` gets ``text``, what parse analysis resolves an unknown literal to where
nothing coerces it (``parse_target.c resolveTargetListUnknowns``). A CASE whose results are all parameters is
``text`` (``parse_coerce.c select_common_type``), which ``sum()`` does not take (42883) nor AND (42804): as a
function's or AND/OR/NOT's argument, its results take the type the context gives the CASE, else ``int4``; where the
parameters type but the server would refuse the text for another reason (42883), only if that makes it pass. An
``ARRAY[...]`` of parameters only on the right of ``op ANY/ALL`` (``language_id = ANY(ARRAY[$3, $4])``: the
application sent a list of integers) is text[] the same way (``integer = text``, 42883): its elements take the
element type of the array a single ``$n`` there would get (the other side's, ``parse_oper.c
make_scalar_array_op``), only if that makes it pass. The
stand-in text is the normalized text with ``::type`` after each such ``$n``; it is typed once more on the client
before anything is sent, and the probes PREPARE and EXPLAIN it instead of the normalized text. A typed literal
pg_stat_statements normalized (``interval '1 day'`` -> ``interval $1``, which the server's grammar refuses) is
written as the cast it is (``$1::interval``) first. ``EXTRACT(epoch FROM x)`` is recorded as ``EXTRACT($1 FROM x)``:
the field is a text constant of a function call (``gram.y func_expr_common_subexpr``: ``extract(text, x)`` from
PostgreSQL 14, ``date_part(text, x)`` before; pg_proc has both for timestamp, timestamptz, interval, date, time,
timetz), which the grammar accepts only as a keyword or a string, never ``$n`` (42601); it is written as that call,
``pg_catalog.extract($1::text, x)``, and its stand-in value is ``epoch`` (a field every one of those types has).
Nothing is silently dropped: a text that still cannot be typed raises, with the reason.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from pglast import ast, enums, parse_sql
from pglast.parser import ParseError
from pglast.stream import RawStream

from ..errors import StatementError
from ..paramtypes import ParamTyping, describe_types, type_params
from ..paramtypes.catalog import Runner, read_catalog
from ..statement import CheckedStatement, check_statement
from ..versions import PG14

__all__ = ["StandIns", "standin_values", "typed_standins"]

_ARITHMETIC = frozenset({"+", "-", "*", "/", "%", "^"})
_CONCAT = "||"
_INT4, _INT8, _TEXT = 23, 20, 25
_ARRAY_ELEMENT = "the element type of the array the other side of ANY/ALL takes"


@dataclass(frozen=True)
class StandIns:
    """A normalized text's typed stand-ins.

    :ivar text: the statement with ``$n::type`` for each stand-in parameter (what the probes send).
    :ivar types: ``($n, type OID, schema-qualified type name)`` of each stand-in parameter, by ``n``.
    :ivar refused: why the normalized text could not be typed as it stands (``SQLSTATE: message``, the error
        PREPARE would raise).
    :ivar inferred_from: ``$n -> `` how its type was found (``context``, ``operator default``, ``unknown as text``).
    :ivar values: ``$n -> `` the stand-in value a parameter needs whatever its type (an EXTRACT field: ``epoch``).
    """

    text: str
    types: tuple[tuple[int, int, str], ...]
    refused: str
    inferred_from: tuple[tuple[int, str], ...] = ()
    values: tuple[tuple[int, str], ...] = ()

    @property
    def note(self) -> str:
        """One line for the report: which parameters got which type, and why they needed one."""
        by_type: dict[str, list[str]] = {}
        for n, _, name in self.types:
            by_type.setdefault(name.removeprefix("pg_catalog."), []).append(f"${n}")
        typed = "; ".join(f"{', '.join(ps)} {t}" for t, ps in by_type.items())
        how = ", ".join(sorted({h for _, h in self.inferred_from}))
        return (f"probed with typed stand-ins for the constants pg_stat_statements replaced ({typed}; from "
                f"{how}): the normalized text cannot be typed as it stands ({self.refused})")


def _param_only(node: Any) -> bool:
    """An operator expression whose operands are parameters (or such expressions) only: ``$2 + $3``."""
    if isinstance(node, ast.ParamRef):
        return True
    if isinstance(node, ast.A_Expr) and node.kind == enums.A_Expr_Kind.AEXPR_OP:
        operands = [o for o in (node.lexpr, node.rexpr) if o is not None]
        return bool(operands) and all(_param_only(o) for o in operands)
    return False


def _params_in(node: Any) -> list[int]:
    if isinstance(node, ast.ParamRef):
        return [node.number] if node.number is not None else []
    return [n for o in (node.lexpr, node.rexpr) if o is not None for n in _params_in(o)]


def _operator(node: ast.A_Expr) -> str:
    names = [s.sval for s in node.name or () if isinstance(s, ast.String) and s.sval is not None]
    return names[-1] if names else ""


def _case_results(node: Any) -> list[int] | None:
    """The parameters of a CASE whose every result (THEN, ELSE) is parameters only (``case when c = $2 then $3 else
    $4 end``), None for any other node."""
    if not isinstance(node, ast.CaseExpr):
        return None
    results = [w.result for w in node.args or () if isinstance(w, ast.CaseWhen)] + \
        ([node.defresult] if node.defresult is not None else [])
    if not results or not all(_param_only(r) for r in results):
        return None
    return [n for r in results for n in _params_in(r)]


def _array_params(node: Any) -> list[int] | None:
    """The parameters of an ``ARRAY[...]`` whose every element is parameters only (``ARRAY[$3, $4]``), None for any
    other node."""
    if not isinstance(node, ast.A_ArrayExpr) or not node.elements or not all(_param_only(e) for e in node.elements):
        return None
    return [n for e in node.elements for n in _params_in(e)]


def _replace_groups(node: Any, groups: list[tuple[int, str, list[int]]], fresh: Callable[[], int], *,
                    cases_only: bool = False) -> Any:
    """Replace each outermost parameter-only operator expression under ``node`` (unless ``cases_only``), each
    argument of a function or of AND/OR/NOT that is a CASE of parameters only, and each ``ARRAY[...]`` of
    parameters only on the right of ``op ANY/ALL``, by a fresh ``ParamRef`` (in place), recording (fresh number,
    operator, ``CASE`` or ``ARRAY``, its parameters)."""
    if not cases_only and isinstance(node, ast.A_Expr) and node.kind == enums.A_Expr_Kind.AEXPR_OP \
            and _param_only(node):
        number = fresh()
        groups.append((number, _operator(node), _params_in(node)))
        return ast.ParamRef(number=number)
    if isinstance(node, ast.A_Expr) and node.kind in (enums.A_Expr_Kind.AEXPR_OP_ANY, enums.A_Expr_Kind.AEXPR_OP_ALL):
        params = _array_params(node.rexpr)
        if params is not None:
            number = fresh()
            node.rexpr = ast.ParamRef(number=number)
            groups.append((number, "ARRAY", params))
    if isinstance(node, (ast.FuncCall, ast.BoolExpr)) and node.args:
        args = []
        for arg in node.args:
            params = _case_results(arg)
            if params is None:
                args.append(arg)
                continue
            args.append(ast.ParamRef(number=fresh()))
            groups.append((args[-1].number, "CASE", params))
        node.args = tuple(args)
    if isinstance(node, ast.Node):
        for name in node:
            value = getattr(node, name)
            if isinstance(value, (ast.Node, tuple, list)):
                setattr(node, name, _replace_groups(value, groups, fresh, cases_only=cases_only))
        return node
    if isinstance(node, (tuple, list)):
        return type(node)(_replace_groups(item, groups, fresh, cases_only=cases_only) for item in node)
    return node


def _nodes(node: Any) -> Iterator[ast.Node]:
    """Every node of a pglast tree, parents first."""
    if isinstance(node, ast.Node):
        yield node
        for name in node:
            yield from _nodes(getattr(node, name))
    elif isinstance(node, (tuple, list)):
        for item in node:
            yield from _nodes(item)


def _param_locations(text: str) -> dict[int, list[int]]:
    """``$n -> `` byte offsets of its occurrences in ``text`` (libpg_query's locations)."""
    out: dict[int, list[int]] = {}
    for node in _nodes(parse_sql(text)):
        if isinstance(node, ast.ParamRef) and node.number is not None and node.location is not None:
            out.setdefault(node.number, []).append(node.location)
    return out


def _with_casts(text: str, casts: dict[int, str]) -> str:
    """``text`` with ``::type`` after every occurrence of each cast parameter (found by its parse location)."""
    raw = text.encode()
    inserts = sorted(((loc + len(f"${n}".encode()), f"::{casts[n]}") for n, locs in _param_locations(text).items()
                      if n in casts for loc in locs), reverse=True)
    for at, cast in inserts:
        raw = raw[:at] + cast.encode() + raw[at:]
    return raw.decode()


def _group_types(run: Runner, checked: CheckedStatement, owner: object | None, *,
                 cases_only: bool = False) -> dict[int, tuple[int, str]]:
    """``$n -> (type OID, how)`` for the operands of every parameter-only operator expression (module docstring)
    and the results of every CASE of parameters only that is a function's or AND/OR/NOT's argument (``sum(case
    when c = $1 then $2 else $3 end)``: parse analysis makes such a CASE text, ``parse_coerce.c
    select_common_type``, and ``sum(text)`` does not exist, 42883, nor is text a boolean, 42804; the application's
    constants had a type: the function's declared argument or ``boolean`` when the context gives one, else
    ``int4``)."""
    tree = parse_sql(checked.text)
    groups: list[tuple[int, str, list[int]]] = []
    counter = iter(range(checked.param_count + 1, checked.param_count + 10_000))
    tree = _replace_groups(tree, groups, lambda: next(counter), cases_only=cases_only)
    if not groups:
        return {}
    probe = check_statement(RawStream()(tree))
    expected = type_params(run, probe, owner=owner).types
    out: dict[int, tuple[int, str]] = {}
    context = [expected[number - 1] if number - 1 < len(expected) else 0 for number, _, _ in groups]
    categories = describe_types(run, [t for t in context if t], owner=owner)
    catalog = read_catalog(run, relations=[], functions=[], operators=[], owner=owner)
    for (_, operator, params), found in zip(groups, context, strict=True):
        category = categories[found][1] if found else ""
        if operator == "ARRAY":
            element = catalog.element(found) if category == "A" else 0
            if element:
                for n in params:
                    out.setdefault(n, (element, _ARRAY_ELEMENT))
            continue
        if (operator in _ARITHMETIC and category == "N") or (operator == _CONCAT and category in ("S", "A")) \
                or (operator == "CASE" and category not in ("", "P")):
            typed = (found, "the expression around them")
        elif operator == "CASE":
            typed = (_INT4, "an integer constant's type (a CASE of constants nothing around types)")
        elif operator in _ARITHMETIC:
            typed = (_INT4, "an integer constant's type (nothing around the operator types it)")
        elif operator == _CONCAT:
            typed = (_TEXT, "text for || (nothing around the operator types it)")
        else:
            continue
        for n in params:
            out.setdefault(n, typed)
    return out


def _typed_literals(text: str) -> tuple[str, list[tuple[int, str]]]:
    """``interval $1`` -> ``$1::interval``: pg_stat_statements replaces the string of a typed literal (``interval
    '1 day'``, ``date '2024-01-01'``: gram.y ``AexprConst: ConstTypename Sconst``) with ``$n``, a text the server's
    grammar refuses (42601) but libpg_query (pglast) reads as a cast. Written as a cast, it is the same
    expression. A typed literal with a qualifier after it (``interval $1 day``) is left as it is.

    :return: the text and ``($n, type as written)`` of each rewritten literal.
    """
    spans: list[tuple[int, int, int, str]] = []
    raw = text.encode()

    for node in _nodes(parse_sql(text)):
        type_name = node.typeName if isinstance(node, ast.TypeCast) else None
        if isinstance(node, ast.TypeCast) and isinstance(node.arg, ast.ParamRef) and type_name is not None \
                and type_name.location is not None and node.arg.location is not None \
                and 0 <= type_name.location < node.arg.location and not type_name.typmods \
                and node.arg.number is not None:
            written = raw[type_name.location:node.arg.location].decode().strip()
            spans.append((type_name.location, node.arg.location + len(f"${node.arg.number}".encode()),
                          node.arg.number, written))
    for start, end, number, written in sorted(spans, reverse=True):
        raw = raw[:start] + f"${number}::{written}".encode() + raw[end:]
    return raw.decode(), [(n, w) for _, _, n, w in sorted(spans)]


_EXTRACT_FROM = re.compile(rb"\s*from\b", re.IGNORECASE)
_EXTRACT_OPEN = re.compile(rb"extract\s*\(\s*$", re.IGNORECASE)


def _extract_fields(text: str, server_version_num: int | None) -> tuple[str, list[tuple[int, str]]]:
    """``EXTRACT($1 FROM x)`` -> ``pg_catalog.extract($1::text, x)`` (``date_part`` before PostgreSQL 14): the call
    the server's grammar makes of ``EXTRACT(field FROM x)`` (``gram.y func_expr_common_subexpr``), written so that
    its field may be a parameter. libpg_query (pglast) reads ``EXTRACT($1 FROM x)``, the server refuses it (42601).

    :return: the text and ``($n, the call as written)`` of each rewritten EXTRACT.
    """
    function = "extract" if server_version_num is None or server_version_num >= PG14 else "date_part"
    raw = text.encode()
    spans: list[tuple[int, int, int]] = []
    for node in _nodes(parse_sql(text)):
        if not (isinstance(node, ast.FuncCall) and node.funcformat == enums.CoercionForm.COERCE_SQL_SYNTAX
                and [s.sval for s in node.funcname or () if isinstance(s, ast.String)] == ["pg_catalog", "extract"]
                and node.args and isinstance(node.args[0], ast.ParamRef) and node.location is not None):
            continue
        field = node.args[0]
        if field.number is None or field.location is None:
            continue
        after = field.location + len(f"${field.number}".encode())
        keyword = _EXTRACT_FROM.match(raw, after)
        if keyword is None or _EXTRACT_OPEN.fullmatch(raw[node.location:field.location]) is None:
            continue
        spans.append((node.location, keyword.end(), field.number))
    for start, end, number in sorted(spans, reverse=True):
        raw = raw[:start] + f"pg_catalog.{function}(${number}::text,".encode() + raw[end:]
    return raw.decode(), [(n, f"pg_catalog.{function}(${n}::text, ...)") for _, _, n in sorted(spans)]


def _rewrite(text: str, server_version_num: int | None) -> tuple[str, list[tuple[int, str]], list[tuple[int, str]]]:
    """The text with every EXTRACT field and typed literal pg_stat_statements replaced written as PostgreSQL reads
    it: ``(text, [($n, EXTRACT call as written)], [($n, literal's type as written)])``."""
    text, fields = _extract_fields(text, server_version_num)
    text, literals = _typed_literals(text)
    return text, fields, literals


def _rewritten_note(fields: list[tuple[int, str]], literals: list[tuple[int, str]]) -> str:
    parts = [f"EXTRACT(${n} FROM ...) written as {w}" for n, w in fields] \
        + [f"a typed literal's string, written as ${n}::{w}" for n, w in literals]
    return "42601 syntax error: pg_stat_statements replaced a constant the grammar needs as written with $n (" \
        + "; ".join(parts) + ")"


def typed_standins(run: Runner, checked: CheckedStatement, *, owner: object | None = None,
                   server_version_num: int | None = None) -> StandIns | None:
    """The stand-in text of a normalized statement whose ``$n`` PREPARE could not type (module docstring).

    :param run: runs lockscope's SQL files (``Session.query_rows``; catalog reads only, nothing names the statement).
    :param owner: keeps the session's type facts between statements (the session).
    :param server_version_num: the server's (which function an EXTRACT is, :func:`_extract_fields`); None: 14 or later.
    :return: None when the text types as it stands (no stand-in needed), else :class:`StandIns`.
    :raises StatementError: the text cannot be typed even with stand-ins (the SQLSTATE PREPARE would raise).
    :raises DatabaseError: a catalog read failed.
    """
    try:
        rewritten, fields, literals = _rewrite(checked.text, server_version_num)
    except (ParseError, ValueError) as exc:
        raise StatementError(f"typed stand-ins: cannot rewrite the text ({exc})") from None
    if fields or literals:
        checked = check_statement(rewritten)
    written = [(n, _TEXT, "text") for n, _ in fields] + [(n, 0, w) for n, w in literals]
    written_how = [(n, "EXTRACT's field (text)") for n, _ in fields] \
        + [(n, "the typed literal's own type") for n, _ in literals]
    epoch = tuple((n, "epoch") for n, _ in fields)
    first = type_params(run, checked, owner=owner)
    if not first.refused:
        return _standins_as_it_types(run, checked, owner, first.other_error, written, written_how,
                                     _rewritten_note(fields, literals), epoch)
    try:
        found = _group_types(run, checked, owner)
    except (ParseError, ValueError) as exc:
        raise StatementError(f"typed stand-ins: cannot rewrite the text ({exc})", sqlstate=first.sqlstate) from None
    text, typing = _typed(run, checked, found, owner)
    if typing.refused and typing.sqlstate == "42P18":  # left unknown where nothing coerces it: text
        for n, t in enumerate(typing.types, 1):
            if t == 0:
                found.setdefault(n, (_TEXT, "text for a parameter nothing types"))
        text, typing = _typed(run, checked, found, owner)
    if typing.refused or not found:
        raise StatementError(f"{first.sqlstate}: {first.message} (PREPARE would fail), and typed stand-ins did not "
                             f"help ({typing.sqlstate or first.sqlstate}: {typing.message or first.message})",
                             sqlstate=typing.sqlstate or first.sqlstate)
    names = describe_types(run, [t for t, _ in found.values()], owner=owner)
    typed = [(n, t, names[t][0]) for n, (t, _) in found.items()] + written
    how = [(n, h) for n, (_, h) in found.items()] + written_how
    return StandIns(text, tuple(sorted(typed)), f"{first.sqlstate} {first.message}", tuple(sorted(how)), epoch)


def _standins_as_it_types(run: Runner, checked: CheckedStatement, owner: object | None, other_error: str,
                          written: list[tuple[int, int, str]], written_how: list[tuple[int, str]], note: str,
                          epoch: tuple[tuple[int, str], ...]) -> StandIns | None:
    """A text whose parameters type on the client (after :func:`_rewrite`). When the server would still refuse it
    for another reason (``other_error``: ``sum(text)`` does not exist) and typing the results of each CASE of
    constants as a function's or AND/OR/NOT's argument from its context (:func:`_group_types`) makes it pass, those
    stand-ins too; else the rewritten text's stand-ins only (None when there are none)."""
    as_written = StandIns(checked.text, tuple(sorted(written)), note, tuple(sorted(written_how)), epoch) \
        if written else None
    if not other_error:
        return as_written
    try:
        cases = _group_types(run, checked, owner, cases_only=True)
    except (ParseError, ValueError) as exc:
        raise StatementError(f"typed stand-ins: cannot rewrite the text ({exc})") from None
    if not cases:
        return as_written
    text, typing = _typed(run, checked, cases, owner)
    if typing.refused or typing.other_error:
        return as_written
    names = describe_types(run, [t for t, _ in cases.values()], owner=owner)
    typed = [(n, t, names[t][0]) for n, (t, _) in cases.items()] + written
    how = [(n, h) for n, (_, h) in cases.items()] + written_how
    arrays = {h == _ARRAY_ELEMENT for _, h in cases.values()}
    why = ([] if arrays == {True} else
           ["a CASE whose results are all replaced constants is text (parse_coerce.c select_common_type)"]) \
        + (["an ARRAY of replaced constants is text[] (parse_coerce.c select_common_type)"] if True in arrays else [])
    case_note = f"{other_error}: {' and '.join(why)}"
    return StandIns(text, tuple(sorted(typed)), f"{note}; {case_note}" if written else case_note,
                    tuple(sorted(how)), epoch)


def _typed(run: Runner, checked: CheckedStatement, found: dict[int, tuple[int, str]],
           owner: object | None) -> tuple[str, ParamTyping]:
    names = describe_types(run, [t for t, _ in found.values()], owner=owner)
    text = _with_casts(checked.text, {n: names[t][0] for n, (t, _) in found.items()})
    return text, type_params(run, check_statement(text), owner=owner)


def standin_values(standins: StandIns) -> dict[int, str]:
    """A neutral value for each stand-in parameter whose value pg_stats cannot give (its custom plan still needs
    one): ``0`` for a numeric type, the empty string for a string type, ``epoch`` for an EXTRACT field;
    ``$n -> value``."""
    return {n: ("0" if t in (_INT4, _INT8, 21, 700, 701, 1700) else "") for n, t, _ in standins.types
            if t in (_INT4, _INT8, 21, 700, 701, 1700, _TEXT, 1043, 1042)} | dict(standins.values)
