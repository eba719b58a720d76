"""Choosing the function or operator a call means (``parse_func.c``, ``parse_oper.c``, ``namespace.c``).

Followed: ``namespace.c FuncnameGetCandidates`` (search-path candidates, variadic and default-argument
expansion, duplicates), ``OpernameGetCandidates`` / ``OpernameGetOprid``, ``parse_func.c func_match_argtypes``,
``func_select_candidate`` (exact matches, preferred types, the unknown-input heuristics: the string category wins,
else one category for all candidates, preferred types within it; last, unknowns taken as the one known type),
``func_get_detail`` (exact match, a type name used as a function, then candidate selection), ``parse_oper.c
binary_oper_exact`` (one unknown input takes the other's type), ``oper_select_candidate``, ``oper`` and
``left_oper``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..rows import ParamFunctionRow, ParamOperatorRow
from .catalog import RECORD, UNKNOWN, Catalog
from .coerce import can_coerce_type, find_coercion_pathway
from .failures import OtherServerError, TypingFailure

__all__ = ["Candidate", "FuncDetail", "func_get_detail", "left_oper", "oper"]


@dataclass(frozen=True)
class Candidate:
    """One function or operator a call could mean (``FuncCandidateList`` entry).

    :ivar oid: its OID; 0 when two equally good functions share the argument list (``FuncnameGetCandidates``
        marks that ambiguous).
    :ivar args: argument types as the call sees them (variadic expanded; defaulted arguments left out).
    :ivar nvargs: arguments folded into the variadic array (count); ``ndargs``: defaulted arguments (count).
    """

    oid: int
    args: tuple[int, ...]
    path_position: int
    nvargs: int = 0
    ndargs: int = 0
    function: ParamFunctionRow | None = None
    operator: ParamOperatorRow | None = None


def _split(names: Sequence[str]) -> tuple[str | None, str]:
    return (names[-2] if len(names) > 1 else None), names[-1]


def _in_scope(schema: str | None, row_schema: str, path_position: int) -> int | None:
    """The candidate's search-path rank (0 for an explicit schema), None when the name does not reach it."""
    if schema is not None:
        return 0 if row_schema == schema else None
    return path_position if path_position > 0 else None


def _keep(found: list[Candidate], new: Candidate, variadic: bool) -> None:
    """Add ``new`` unless a candidate with the same argument list wins (``FuncnameGetCandidates``)."""
    width = len(new.args)
    for i, old in enumerate(found):
        if len(old.args) != width or old.args != new.args:
            continue
        if new.path_position != old.path_position:
            preference = new.path_position - old.path_position
        elif variadic and old.nvargs == 0:
            preference = 1
        elif not variadic and old.nvargs > 0:
            preference = -1
        else:
            preference = 0
        if preference < 0:
            found[i] = new
        elif preference == 0:
            found[i] = Candidate(0, old.args, old.path_position, old.nvargs, old.ndargs, old.function)
        return
    found.append(new)


def function_candidates(cat: Catalog, names: Sequence[str], nargs: int, expand_variadic: bool) -> list[Candidate]:
    """``namespace.c FuncnameGetCandidates`` (positional notation, input arguments only)."""
    schema, name = _split(names)
    found: list[Candidate] = []
    for row in cat.functions.get(name, []):
        rank = _in_scope(schema, row.schema_name, row.path_position)
        if rank is None:
            continue
        pronargs = len(row.arg_types)
        variadic = expand_variadic and pronargs <= nargs and row.variadic_type != 0
        defaults = pronargs > nargs and nargs + row.default_count >= pronargs
        if pronargs != nargs and not variadic and not defaults:
            continue
        args = list(row.arg_types[:nargs])
        if variadic:
            args = list(row.arg_types[:pronargs - 1]) + [row.variadic_type] * (nargs - pronargs + 1)
        nvargs = nargs - pronargs + 1 if variadic else 0
        _keep(found, Candidate(row.oid, tuple(args), rank, nvargs, pronargs - nargs if defaults else 0, row),
              variadic)
    return found


def func_match_argtypes(cat: Catalog, inputs: Sequence[int], candidates: Sequence[Candidate]) -> list[Candidate]:
    """``parse_func.c func_match_argtypes``: the candidates every input coerces to implicitly."""
    return [c for c in candidates if can_coerce_type(cat, inputs, c.args, "i")]


def _best_by(candidates: list[Candidate], score: list[int]) -> list[Candidate]:
    best = max(score)
    return [c for c, s in zip(candidates, score, strict=True) if s == best]


def _unknown_categories(cat: Catalog, base: Sequence[int],
                        candidates: Sequence[Candidate]) -> dict[int, tuple[str, bool]] | None:
    """Per unknown position, the category its candidates agree on (string wins) and whether one of them takes a
    preferred type there; None when a position's categories conflict."""
    slots: dict[int, tuple[str, bool]] = {}
    for i, b in enumerate(base):
        if b != UNKNOWN:
            continue
        category, preferred, conflict = "", False, False
        for c in candidates:
            ccat, cpref = cat.category(c.args[i]), cat.preferred(c.args[i])
            if not category:
                category, preferred = ccat, cpref
            elif ccat == category:
                preferred |= cpref
            elif ccat == "S":
                category, preferred = ccat, cpref
            else:
                conflict = True
        if conflict and category != "S":
            return None
        slots[i] = (category, preferred)
    return slots


def _by_unknown_categories(cat: Catalog, base: Sequence[int], candidates: list[Candidate]) -> list[Candidate]:
    """The unknown-input step of ``func_select_candidate`` (all candidates kept when it rejects them all)."""
    slots = _unknown_categories(cat, base, candidates)
    if slots is None:
        return candidates
    kept = [c for c in candidates
            if all(cat.category(c.args[i]) == category and (not preferred or cat.preferred(c.args[i]))
                   for i, (category, preferred) in slots.items())]
    return kept or candidates


def func_select_candidate(cat: Catalog, inputs: Sequence[int], candidates: list[Candidate]) -> Candidate | None:
    """``parse_func.c func_select_candidate``: the best of several candidates, or None (ambiguous)."""
    base = [UNKNOWN if t == UNKNOWN else cat.base_type(t) for t in inputs]
    unknowns = sum(1 for t in base if t == UNKNOWN)
    candidates = _best_by(candidates, [sum(1 for b, a in zip(base, c.args, strict=True) if b != UNKNOWN and a == b)
                                       for c in candidates])
    if len(candidates) == 1:
        return candidates[0]
    candidates = _best_by(candidates, [
        sum(1 for b, a in zip(base, c.args, strict=True)
            if b != UNKNOWN and (a == b or (cat.category(a) == cat.category(b) and cat.preferred(a))))
        for c in candidates])
    if len(candidates) == 1:
        return candidates[0]
    if unknowns == 0:
        return None
    candidates = _by_unknown_categories(cat, base, candidates)
    if len(candidates) == 1:
        return candidates[0]
    known = {b for b in base if b != UNKNOWN}
    if unknowns < len(base) and len(known) == 1:
        (only,) = known
        fits = [c for c in candidates if can_coerce_type(cat, [only] * len(base), c.args, "i")]
        if len(fits) == 1:
            return fits[0]
    return None


@dataclass(frozen=True)
class FuncDetail:
    """``func_get_detail``'s answer: ``kind`` normal, aggregate, window, procedure (``prokind``), coercion (a type
    name used as a function: ``coerce_to`` the type) or multiple (ambiguous); ``candidate`` the chosen one."""

    kind: str
    candidate: Candidate | None = None
    coerce_to: int = 0


def _as_coercion(cat: Catalog, names: Sequence[str], source: int, unknown_const: bool) -> int:
    """The type a one-argument call by a type's name converts to (``func_get_detail``'s coercion case), else 0."""
    target = cat.type_by_name(list(names))
    if not target:
        return 0
    if source == UNKNOWN and unknown_const:
        return target
    path = find_coercion_pathway(cat, target, source, "e")
    if path == "relabel":
        return target
    if path == "io" and not ((source == RECORD or cat.is_complex(source)) and cat.category(target) == "S"):
        return target
    return 0


def func_get_detail(cat: Catalog, names: Sequence[str], inputs: Sequence[int], *, unknown_const: bool = False,
                    expand_variadic: bool = True) -> FuncDetail:
    """``parse_func.c func_get_detail`` for a positional call.

    :param unknown_const: the single argument is an unknown-type literal (``typename('literal')``).
    :raises OtherServerError: 42883, no function of that name takes these arguments.
    """
    raw = function_candidates(cat, names, len(inputs), expand_variadic)
    best = next((c for c in raw if c.args == tuple(inputs)), None)
    if best is None:
        if len(inputs) == 1:
            target = _as_coercion(cat, names, inputs[0], unknown_const)
            if target:
                return FuncDetail("coercion", coerce_to=target)
        matching = func_match_argtypes(cat, inputs, raw)
        if len(matching) == 1:
            best = matching[0]
        elif matching:
            best = func_select_candidate(cat, inputs, matching)
            if best is None:
                return FuncDetail("multiple")
    if best is None:
        raise OtherServerError("42883", f"function {'.'.join(names)}({', '.join(map(cat.type_name, inputs))}) "
                                        "does not exist")
    if best.oid == 0 or best.function is None:
        return FuncDetail("multiple")
    kinds = {"a": "aggregate", "w": "window", "p": "procedure"}
    return FuncDetail(kinds.get(best.function.kind, "normal"), best)


def _operator_candidates(cat: Catalog, names: Sequence[str], kind: str) -> list[Candidate]:
    """``namespace.c OpernameGetCandidates``: operators of the name reachable by it, one per argument list."""
    schema, name = _split(names)
    found: list[Candidate] = []
    for row in cat.operators.get(name, []):
        rank = _in_scope(schema, row.schema_name, row.path_position)
        if rank is None or row.kind != kind:
            continue
        args = (row.left_type, row.right_type) if kind == "b" else (row.right_type,)
        new = Candidate(row.oid, args, rank, operator=row)
        same = next((i for i, c in enumerate(found) if c.args == args), None)
        if same is None:
            found.append(new)
        elif rank < found[same].path_position:
            found[same] = new
    return found


def _exact(candidates: Sequence[Candidate], args: tuple[int, ...]) -> Candidate | None:
    """``namespace.c OpernameGetOprid``: the reachable operator with exactly these input types."""
    return next((c for c in candidates if c.args == args), None)


def _op_signature(cat: Catalog, names: Sequence[str], left: int | None, right: int) -> str:
    lead = f"{cat.type_name(left)} " if left is not None else ""
    return f"{lead}{'.'.join(names)} {cat.type_name(right)}"


def _select_operator(cat: Catalog, names: Sequence[str], inputs: Sequence[int],
                     candidates: list[Candidate], signature: str) -> ParamOperatorRow:
    """``parse_oper.c oper_select_candidate`` and ``op_error``."""
    matching = func_match_argtypes(cat, inputs, candidates)
    chosen = matching[0] if len(matching) == 1 else (
        func_select_candidate(cat, inputs, matching) if matching else None)
    if chosen is not None and chosen.operator is not None:
        return chosen.operator
    if matching:
        raise TypingFailure("42725", f"operator is not unique: {signature}")
    raise OtherServerError("42883", f"operator does not exist: {signature}")


def oper(cat: Catalog, names: Sequence[str], left: int, right: int) -> ParamOperatorRow:
    """``parse_oper.c oper``: the binary operator ``left names right`` means.

    :raises TypingFailure: 42725, several candidates and no best one.
    :raises OtherServerError: 42883, no operator fits.
    """
    candidates = _operator_candidates(cat, names, "b")
    a, b, was_unknown = left, right, False
    if a == UNKNOWN:
        a, was_unknown = b, True
    elif b == UNKNOWN:
        b, was_unknown = a, True
    exact = _exact(candidates, (a, b))
    if exact is None and was_unknown and cat.base_type(a) != a:
        base = cat.base_type(a)
        exact = _exact(candidates, (base, base))
    if exact is not None and exact.operator is not None:
        return exact.operator
    return _select_operator(cat, names, [left, right], candidates, _op_signature(cat, names, left, right))


def left_oper(cat: Catalog, names: Sequence[str], right: int) -> ParamOperatorRow:
    """``parse_oper.c left_oper``: the prefix operator ``names right`` means.

    :raises TypingFailure: 42725, several candidates and no best one.
    :raises OtherServerError: 42883, no operator fits.
    """
    candidates = _operator_candidates(cat, names, "l")
    exact = _exact(candidates, (right,))
    if exact is not None and exact.operator is not None:
        return exact.operator
    return _select_operator(cat, names, [right], candidates, _op_signature(cat, names, None, right))
