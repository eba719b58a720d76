"""What modelled parse analysis builds: typed expressions, ``$n`` occurrences and the scopes names resolve in.

An :class:`Expr` stands for a transformed expression node (``exprType`` and the few node shapes the typing rules
look at: a Param, an unknown literal, a ROW, a COLLATE). A :class:`ParamRef` is one ``Param`` node: parse analysis
sets its type when it coerces it (``parse_param.c variable_coerce_param_hook``) and checks every one against the
parameter's final type at the end (``check_variable_parameters``). :class:`Params` holds the parameter types as
``parse_param.c VarParamState`` does.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .catalog import OPAQUE, UNKNOWN
from .failures import TypingFailure

__all__ = ["Expr", "Level", "ParamRef", "Params", "RangeItem", "Target", "raw_dicts"]


@dataclass(eq=False)
class ParamRef:
    """One ``$n`` occurrence (a Param node): ``type`` its current type, ``undecided`` when it met a context lockscope
    cannot type on the client (then no refusal rests on it)."""

    number: int
    type: int
    undecided: bool = False


@dataclass(eq=False)
class Expr:
    """A transformed expression.

    :ivar type: its type OID (``exprType``), :data:`UNKNOWN` for an untyped literal or parameter,
        :data:`OPAQUE` when lockscope cannot tell.
    :ivar form: ``param`` (a bare Param), ``const`` (a literal), ``null`` (the NULL literal), ``row`` (ROW(...)),
        ``collate`` (COLLATE over ``inner``), ``var`` (a column), ``other``.
    :ivar has_vars: contains a column of the current query level (``contain_vars_of_level``).
    :ivar label: the name a select-list item gets from it (``FigureColname``).
    """

    type: int
    form: str = "other"
    param: ParamRef | None = None
    inner: Expr | None = None
    fields: tuple[Expr, ...] = ()
    has_vars: bool = False
    label: str = "?column?"


@dataclass
class Target:
    """A select-list (or RETURNING) item: its column name and expression."""

    name: str
    expr: Expr


@dataclass
class RangeItem:
    """A FROM item as names see it (``ParseNamespaceItem``).

    :ivar alias: the name it is referred to by (alias or relation name), None for an unaliased join.
    :ivar columns: (name, type) in order, None when lockscope cannot tell them (the item is opaque).
    :ivar system: system columns (name -> type).
    :ivar qualified_only: its columns resolve only when qualified (a join's alias: the joined items answer
        unqualified names).
    """

    alias: str | None
    columns: list[tuple[str, int]] | None
    system: dict[str, int] = field(default_factory=dict)
    qualified_only: bool = False


@dataclass
class Level:
    """One query level (``ParseState``): its FROM items, CTEs and window clauses; ``parent`` the enclosing one."""

    parent: Level | None
    items: list[RangeItem] = field(default_factory=list)
    ctes: dict[str, list[tuple[str, int]] | None] = field(default_factory=dict)
    windows: list[dict[str, object]] = field(default_factory=list)
    merged: dict[str, int] = field(default_factory=dict)

    def cte(self, name: str) -> tuple[bool, list[tuple[str, int]] | None]:
        """(found, columns) of the CTE ``name`` visible from this level."""
        level: Level | None = self
        while level is not None:
            if name in level.ctes:
                return True, level.ctes[name]
            level = level.parent
        return False, None


class Params:
    """The statement's parameter types (``parse_param.c VarParamState``) and every Param node made.

    :ivar types: n -> type OID (:data:`UNKNOWN` while used but untyped; declared types from the start).
    """

    def __init__(self, declared: dict[int, int]) -> None:
        self.types: dict[int, int] = dict(declared)
        self.refs: list[ParamRef] = []
        self.undecided: set[int] = set()

    def reference(self, number: int) -> ParamRef:
        """``variable_paramref_hook``: a new Param of the parameter's current type."""
        current = self.types.setdefault(number, UNKNOWN)
        ref = ParamRef(number, current, undecided=current == OPAQUE)
        self.refs.append(ref)
        return ref

    def resolve(self, ref: ParamRef, target: int) -> None:
        """``variable_coerce_param_hook``: an unknown-type Param coerced to ``target`` fixes its parameter's type.

        :raises TypingFailure: 42P08, the parameter was already given another type.
        """
        current = self.types[ref.number]
        if current == UNKNOWN:
            self.types[ref.number] = target
        elif current != target and current != OPAQUE:
            raise TypingFailure("42P08", f"inconsistent types deduced for parameter ${ref.number}")
        ref.type = target

    def forget(self, refs: Iterable[ParamRef]) -> None:
        """Drop Param nodes the final query tree does not hold (replaced by copies)."""
        gone = {id(r) for r in refs}
        self.refs = [r for r in self.refs if id(r) not in gone]

    def undecide(self, number: int) -> None:
        """Parameter ``number`` met a context lockscope cannot type: no refusal may rest on it."""
        self.undecided.add(number)


def raw_dicts(raw: Any) -> list[dict[str, Any]]:
    """Every JSON object inside a raw parse tree (libpg_query JSON), ``raw`` included when it is one."""
    out: list[dict[str, Any]] = []
    stack = [raw]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            out.append(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return out
