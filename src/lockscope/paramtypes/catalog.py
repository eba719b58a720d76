"""The catalog facts parameter typing reads, and lookups over them as PostgreSQL's syscache helpers answer them.

A :class:`Catalog` holds, for one statement on one server: every data type but row types (``param_types.sql``),
every cast (``param_casts.sql``), the functions and operators of the names the statement uses
(``param_functions.sql``, ``param_operators.sql``) and the columns of the relations it names
(``param_columns.sql``). Types and casts are read once per session (:func:`read_catalog` keeps them), the rest per
statement. Nothing here names the statement or locks a user relation.

Type OIDs are PostgreSQL's fixed ones from ``pg_type.dat`` (the same in every supported major). A type missing
from the catalog read is a row type (or an array of one): :meth:`Catalog.is_complex` says so, the way
``ISCOMPLEX`` would.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..rows import (
    ParamCastRow,
    ParamColumnRow,
    ParamFunctionRow,
    ParamOperatorRow,
    ParamTypeRow,
    RowT,
)

__all__ = [
    "ANY",
    "ANYARRAY",
    "ANYCOMPATIBLE",
    "ANYCOMPATIBLEARRAY",
    "ANYCOMPATIBLEMULTIRANGE",
    "ANYCOMPATIBLENONARRAY",
    "ANYCOMPATIBLERANGE",
    "ANYELEMENT",
    "ANYENUM",
    "ANYMULTIRANGE",
    "ANYNONARRAY",
    "ANYRANGE",
    "BIT",
    "BOOL",
    "FACTS_TTL_S",
    "FLOAT8",
    "INT2VECTOR",
    "INT4",
    "INT8",
    "INTERNAL",
    "NUMERIC",
    "OIDVECTOR",
    "OPAQUE",
    "RECORD",
    "RECORDARRAY",
    "TEXT",
    "TEXTARRAY",
    "UNKNOWN",
    "VOID",
    "Catalog",
    "Relation",
    "Runner",
    "read_catalog",
]

#: A type lockscope cannot tell on the client (a row type's column, a record's field): no refusal rests on it.
OPAQUE = -1
BOOL = 16
INT8 = 20
INT2VECTOR = 22
INT4 = 23
TEXT = 25
OIDVECTOR = 30
FLOAT8 = 701
UNKNOWN = 705
TEXTARRAY = 1009
BIT = 1560
NUMERIC = 1700
RECORD = 2249
RECORDARRAY = 2287
ANY = 2276
ANYARRAY = 2277
VOID = 2278
INTERNAL = 2281
ANYELEMENT = 2283
ANYNONARRAY = 2776
ANYENUM = 3500
ANYRANGE = 3831
ANYMULTIRANGE = 4537
ANYCOMPATIBLEMULTIRANGE = 4538
ANYCOMPATIBLE = 5077
ANYCOMPATIBLEARRAY = 5078
ANYCOMPATIBLENONARRAY = 5079
ANYCOMPATIBLERANGE = 5080

#: System columns of a table (``heap.c SystemAttributeDefinition``), named by attnum < 0 rows.
_CATEGORY_COMPOSITE = "C"


class Runner(Protocol):
    """Runs a lockscope SQL file into typed rows (:meth:`lockscope.db.Session.query_rows`)."""

    def __call__(self, name: str, row_type: type[RowT], params: Sequence[Any] | None = None, /) -> list[RowT]:
        ...


@dataclass(frozen=True)
class Relation:
    """A relation as a FROM item sees it: its columns in order and its system columns (name -> type OID)."""

    oid: int
    columns: tuple[tuple[str, int], ...]
    system_columns: tuple[tuple[str, int], ...]


class Catalog:
    """Lookups over one statement's catalog facts (``lsyscache.c`` and ``namespace.c`` answers, in Python).

    :ivar types: type OID -> its row.
    :ivar casts: (source, target) -> (context, method) letters.
    :ivar functions: function name -> its rows (every schema).
    :ivar operators: operator name -> its rows (every schema).
    :ivar relations: (schema or None, name) -> :class:`Relation`; a name the server does not resolve is absent.
    """

    def __init__(self, types: Iterable[ParamTypeRow], casts: Iterable[ParamCastRow],
                 functions: Iterable[ParamFunctionRow], operators: Iterable[ParamOperatorRow],
                 relations: dict[tuple[str | None, str], Relation]) -> None:
        self.types = {t.oid: t for t in types}
        self.casts = {(c.source, c.target): (c.context, c.method) for c in casts}
        self.functions: dict[str, list[ParamFunctionRow]] = {}
        for f in functions:
            self.functions.setdefault(f.name, []).append(f)
        self.operators: dict[str, list[ParamOperatorRow]] = {}
        for o in operators:
            self.operators.setdefault(o.name, []).append(o)
        self.relations = relations
        self._by_name: dict[tuple[str, str], int] = {}
        self._visible: dict[str, int] = {}
        for t in self.types.values():
            self._by_name[(t.schema_name, t.name)] = t.oid
            if t.visible:
                self._visible[t.name] = t.oid

    # -- pg_type ---------------------------------------------------------------------------------------------------
    def known(self, oid: int) -> bool:
        """The type was read (not a row type nor an array of one)."""
        return oid in self.types

    def base_type(self, oid: int) -> int:
        """``lsyscache.c getBaseType``: a domain's base type (through domains over domains), else the type."""
        seen = 0
        while oid in self.types and self.types[oid].kind == "d" and self.types[oid].base_type and seen < 32:
            oid = self.types[oid].base_type
            seen += 1
        return oid

    def category(self, oid: int) -> str:
        """``TypeCategory``: one letter; a row type's is C."""
        t = self.types.get(oid)
        return t.category if t is not None else _CATEGORY_COMPOSITE

    def preferred(self, oid: int) -> bool:
        """``typispreferred``."""
        t = self.types.get(oid)
        return bool(t and t.preferred)

    def element(self, oid: int) -> int:
        """``get_element_type``: a true array's element type, else 0."""
        t = self.types.get(oid)
        return t.element if t is not None else 0

    def base_element(self, oid: int) -> int:
        """``get_base_element_type``: the element type of an array or of a domain over an array, else 0."""
        return self.element(self.base_type(oid))

    def array_of(self, oid: int) -> int:
        """``get_array_type``: the array type over ``oid``, else 0."""
        t = self.types.get(oid)
        return t.array_type if t is not None else 0

    def is_complex(self, oid: int) -> bool:
        """``ISCOMPLEX``: a row type (never read, see the module docstring)."""
        return oid > 0 and oid not in self.types

    def is_array_domain(self, oid: int) -> bool:
        """``type_is_array_domain``: an array, or a domain over one."""
        return self.base_element(oid) != 0

    def is_enum(self, oid: int) -> bool:
        """``type_is_enum``."""
        t = self.types.get(oid)
        return bool(t and t.kind == "e")

    def range_subtype(self, oid: int) -> int:
        """``get_range_subtype``: a range's subtype, else 0."""
        t = self.types.get(oid)
        return t.range_subtype if t is not None else 0

    def multirange_range(self, oid: int) -> int:
        """``get_multirange_range``: a multirange's range type, else 0."""
        t = self.types.get(oid)
        return t.multirange_of if t is not None else 0

    def range_multirange(self, oid: int) -> int:
        """``get_range_multirange``: the multirange type over a range, else 0."""
        return next((t.oid for t in self.types.values() if t.multirange_of == oid and oid), 0)

    def type_name(self, oid: int) -> str:
        """The type's name as ``format_type_be`` shows the common ones (for messages)."""
        if oid == UNKNOWN:
            return "unknown"
        t = self.types.get(oid)
        return t.name if t is not None else f"type {oid}"

    def type_by_name(self, names: Sequence[str]) -> int:
        """``parse_type.c LookupTypeName`` for a type's name list (schema-qualified or not): its OID, else 0."""
        if len(names) == 1:
            return self._visible.get(names[0], 0)
        if len(names) == 2:
            return self._by_name.get((names[0], names[1]), 0)
        return 0

    # -- pg_cast ---------------------------------------------------------------------------------------------------
    def cast(self, source: int, target: int) -> tuple[str, str] | None:
        """The pg_cast row (context, method) from ``source`` to ``target``, else None."""
        return self.casts.get((source, target))


#: Types and casts per session (they change only with DDL): read again after this many seconds.
FACTS_TTL_S = 60.0
_SESSION_FACTS: weakref.WeakKeyDictionary[Any, tuple[float, list[ParamTypeRow], list[ParamCastRow]]] = \
    weakref.WeakKeyDictionary()


def read_catalog(run: Runner, *, relations: Sequence[tuple[str | None, str]], functions: Sequence[str],
                 operators: Sequence[str], owner: object | None = None) -> Catalog:
    """Read the catalog facts one statement's parameter typing needs (at most five catalog queries, fewer when the
    session read the types and casts less than :data:`FACTS_TTL_S` ago or the statement names no function or
    relation).

    :param run: runs SQL files (``Session.query_rows``).
    :param relations: (schema or None, name) of each relation the statement names.
    :param functions: names of the functions it calls; ``operators``: of the operators it uses.
    :param owner: the object to keep types and casts with (the session, held weakly), or None.
    :raises DatabaseError: a catalog query failed.
    """
    facts = _SESSION_FACTS.get(owner) if owner is not None else None
    if facts is None or time.monotonic() - facts[0] > FACTS_TTL_S:
        facts = (time.monotonic(), run("param_types", ParamTypeRow), run("param_casts", ParamCastRow))
        if owner is not None:
            _SESSION_FACTS[owner] = facts
    procs = run("param_functions", ParamFunctionRow, [sorted(set(functions))]) if functions else []
    opers = run("param_operators", ParamOperatorRow, [sorted(set(operators))]) if operators else []
    return Catalog(facts[1], facts[2], procs, opers, _read_relations(run, relations))


def _read_relations(run: Runner, names: Sequence[tuple[str | None, str]]) -> dict[tuple[str | None, str], Relation]:
    wanted = list(dict.fromkeys(names))
    if not wanted:
        return {}
    rows = run("param_columns", ParamColumnRow, [[s for s, _ in wanted], [n for _, n in wanted]])
    found: dict[int, list[ParamColumnRow]] = {}
    for row in rows:
        found.setdefault(row.ord, []).append(row)
    out = {}
    for ord_, key in enumerate(wanted, 1):
        cols = found.get(ord_)
        if cols:
            out[key] = Relation(cols[0].relation_oid,
                                tuple((c.column_name, c.type_oid) for c in cols if c.attnum > 0),
                                tuple((c.column_name, c.type_oid) for c in cols if c.attnum < 0))
    return out
