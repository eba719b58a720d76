"""Typed stand-ins for the constants pg_stat_statements replaced, so that a normalized text that cannot be typed
as it stands is probed anyway (issue 27).

pg_stat_statements replaces every constant with ``$n`` (``pg_stat_statements.c generate_normalized_query``). A
constant had a type of its own (an integer literal is ``int4``, ``parse_node.c make_const``), a ``$n`` has none:
in ``p.uploader_id between $1 and $2 + $3`` (the application sent ``:id + 20``) parse analysis meets ``unknown +
unknown``, which ``parse_oper.c oper_select_candidate`` cannot resolve (42725 "operator is not unique"); in
``select $1`` the parameter is never coerced (42P18, ``postgres.c pg_analyze_and_rewrite_varparams``). The
statement the application ran typed fine; its normalized text cannot be PREPAREd.

:func:`typed_standins` infers each such parameter's type from the expression around it, as parse analysis would
type one ``$n`` standing in that place: an operator expression whose operands are all parameters (``$2 + $3``,
``$1 || $2``, nested) is replaced by one fresh parameter and the statement typed again on the client
(:func:`lockscope.paramtypes.type_params`: the comparison's other side, the column assigned, a function's
declared argument, LIMIT/OFFSET's ``int8``, ...); its operands get that type. Without such a context, an
arithmetic operator's operands are ``int4`` (the integer literal pg_stat_statements most often replaced) and
``||``'s are ``text``. A parameter still left ``unknown`` gets ``text``, what parse analysis resolves an unknown
literal to where nothing coerces it (``parse_target.c resolveTargetListUnknowns``). The stand-in text is the
normalized text with ``::type`` after each such ``$n``; it is typed once more on the client before anything is
sent, and the probes PREPARE and EXPLAIN it instead of the normalized text. A typed literal pg_stat_statements
normalized (``interval '1 day'`` -> ``interval $1``, which the server's grammar refuses) is written as the cast it
is (``$1::interval``) first. Nothing is silently dropped: a text that still cannot be typed raises, with the
reason.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from pglast import ast, enums, parse_sql
from pglast.parser import ParseError
from pglast.stream import RawStream

from ..errors import StatementError
from ..paramtypes import ParamTyping, describe_types, type_params
from ..paramtypes.catalog import Runner
from ..statement import CheckedStatement, check_statement

__all__ = ["StandIns", "standin_values", "typed_standins"]

_ARITHMETIC = frozenset({"+", "-", "*", "/", "%", "^"})
_CONCAT = "||"
_INT4, _INT8, _TEXT = 23, 20, 25


@dataclass(frozen=True)
class StandIns:
    """A normalized text's typed stand-ins.

    :ivar text: the statement with ``$n::type`` for each stand-in parameter (what the probes send).
    :ivar types: ``($n, type OID, schema-qualified type name)`` of each stand-in parameter, by ``n``.
    :ivar refused: why the normalized text could not be typed as it stands (``SQLSTATE: message``, the error
        PREPARE would raise).
    :ivar inferred_from: ``$n -> `` how its type was found (``context``, ``operator default``, ``unknown as text``).
    """

    text: str
    types: tuple[tuple[int, int, str], ...]
    refused: str
    inferred_from: tuple[tuple[int, str], ...] = ()

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


def _replace_groups(node: Any, groups: list[tuple[int, str, list[int]]], fresh: Callable[[], int]) -> Any:
    """Replace each outermost parameter-only operator expression under ``node`` by a fresh ``ParamRef`` (in
    place), recording (fresh number, operator, its parameters)."""
    if isinstance(node, ast.A_Expr) and node.kind == enums.A_Expr_Kind.AEXPR_OP and _param_only(node):
        number = fresh()
        groups.append((number, _operator(node), _params_in(node)))
        return ast.ParamRef(number=number)
    if isinstance(node, ast.Node):
        for name in node:
            value = getattr(node, name)
            if isinstance(value, (ast.Node, tuple, list)):
                setattr(node, name, _replace_groups(value, groups, fresh))
        return node
    if isinstance(node, (tuple, list)):
        return type(node)(_replace_groups(item, groups, fresh) for item in node)
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


def _group_types(run: Runner, checked: CheckedStatement, owner: object | None) -> dict[int, tuple[int, str]]:
    """``$n -> (type OID, how)`` for the operands of every parameter-only operator expression (module docstring)."""
    tree = parse_sql(checked.text)
    groups: list[tuple[int, str, list[int]]] = []
    counter = iter(range(checked.param_count + 1, checked.param_count + 10_000))
    tree = _replace_groups(tree, groups, lambda: next(counter))
    if not groups:
        return {}
    probe = check_statement(RawStream()(tree))
    expected = type_params(run, probe, owner=owner).types
    out: dict[int, tuple[int, str]] = {}
    context = [expected[number - 1] if number - 1 < len(expected) else 0 for number, _, _ in groups]
    categories = describe_types(run, [t for t in context if t], owner=owner)
    for (_, operator, params), found in zip(groups, context, strict=True):
        category = categories[found][1] if found else ""
        if (operator in _ARITHMETIC and category == "N") or (operator == _CONCAT and category in ("S", "A")):
            typed = (found, "the expression around them")
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


def typed_standins(run: Runner, checked: CheckedStatement, *, owner: object | None = None) -> StandIns | None:
    """The stand-in text of a normalized statement whose ``$n`` PREPARE could not type (module docstring).

    :param run: runs lockscope's SQL files (``Session.query_rows``; catalog reads only, nothing names the statement).
    :param owner: keeps the session's type facts between statements (the session).
    :return: None when the text types as it stands (no stand-in needed), else :class:`StandIns`.
    :raises StatementError: the text cannot be typed even with stand-ins (the SQLSTATE PREPARE would raise).
    :raises DatabaseError: a catalog read failed.
    """
    try:
        rewritten, literals = _typed_literals(checked.text)
    except (ParseError, ValueError) as exc:
        raise StatementError(f"typed stand-ins: cannot rewrite the text ({exc})") from None
    if literals:
        checked = check_statement(rewritten)
    first = type_params(run, checked, owner=owner)
    if not first.refused:
        if not literals:
            return None
        casts = ", ".join(f"${n}::{w}" for n, w in literals)
        return StandIns(checked.text, tuple((n, 0, w) for n, w in literals),
                        "42601 syntax error: pg_stat_statements replaced a typed literal's string with $n "
                        f"(written as {casts})", tuple((n, "the typed literal's own type") for n, _ in literals))
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
    typed = [(n, t, names[t][0]) for n, (t, _) in found.items()] + [(n, 0, w) for n, w in literals]
    how = [(n, h) for n, (_, h) in found.items()] + [(n, "the typed literal's own type") for n, _ in literals]
    return StandIns(text, tuple(sorted(typed)), f"{first.sqlstate} {first.message}", tuple(sorted(how)))


def _typed(run: Runner, checked: CheckedStatement, found: dict[int, tuple[int, str]],
           owner: object | None) -> tuple[str, ParamTyping]:
    names = describe_types(run, [t for t, _ in found.values()], owner=owner)
    text = _with_casts(checked.text, {n: names[t][0] for n, (t, _) in found.items()})
    return text, type_params(run, check_statement(text), owner=owner)


def standin_values(standins: StandIns) -> dict[int, str]:
    """A neutral value for each stand-in parameter whose value pg_stats cannot give (its custom plan still needs
    one): ``0`` for a numeric type, the empty string for a string type; ``$n -> value``."""
    return {n: ("0" if t in (_INT4, _INT8, 21, 700, 701, 1700) else "") for n, t, _ in standins.types
            if t in (_INT4, _INT8, 21, 700, 701, 1700, _TEXT, 1043, 1042)}
