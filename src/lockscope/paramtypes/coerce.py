"""PostgreSQL's coercion rules over type OIDs (``src/backend/parser/parse_coerce.c``), as pure functions of a
:class:`~lockscope.paramtypes.catalog.Catalog`.

Followed: ``find_coercion_pathway``, ``can_coerce_type``, ``select_common_type`` /
``select_common_type_from_oids``, ``verify_common_type``, ``check_generic_type_consistency`` and
``enforce_generic_type_consistency``. Contexts are pg_cast's letters: ``i`` implicit < ``a`` assignment <
``e`` explicit. Inputs never hold :data:`~lockscope.paramtypes.catalog.OPAQUE` (callers stop before).
"""

from __future__ import annotations

from collections.abc import Sequence

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
    INT2VECTOR,
    INTERNAL,
    OIDVECTOR,
    OPAQUE,
    RECORD,
    RECORDARRAY,
    TEXT,
    TEXTARRAY,
    UNKNOWN,
    Catalog,
)
from .failures import TypingFailure

__all__ = [
    "FAMILY1", "FAMILY2", "POLYMORPHIC", "can_coerce_type", "enforce_generic_type_consistency",
    "find_coercion_pathway", "select_common_type", "verify_common_type",
]

_RANK = {"i": 0, "a": 1, "e": 2}
#: ``IsPolymorphicTypeFamily1`` / ``Family2`` (pg_type.h).
FAMILY1 = frozenset({ANYELEMENT, ANYARRAY, ANYNONARRAY, ANYENUM, ANYRANGE, ANYMULTIRANGE})
FAMILY2 = frozenset({ANYCOMPATIBLE, ANYCOMPATIBLEARRAY, ANYCOMPATIBLENONARRAY, ANYCOMPATIBLERANGE,
                     ANYCOMPATIBLEMULTIRANGE})
POLYMORPHIC = FAMILY1 | FAMILY2


def find_coercion_pathway(cat: Catalog, target: int, source: int, context: str) -> str:
    """``parse_coerce.c find_coercion_pathway``: how ``source`` becomes ``target`` in ``context``.

    :return: ``none``, ``func``, ``relabel``, ``array`` (ArrayCoerceExpr) or ``io`` (CoerceViaIO).
    """
    source, target = cat.base_type(source), cat.base_type(target)
    if source == target:
        return "relabel"
    if INTERNAL in (source, target):
        return "none"
    cast = cat.cast(source, target)
    if cast is not None:
        if _RANK[context] < _RANK[cast[0]]:
            return "none"
        return {"f": "func", "i": "io", "b": "relabel"}.get(cast[1], "none")
    if target not in (OIDVECTOR, INT2VECTOR):
        t_elem, s_elem = cat.element(target), cat.element(source)
        if t_elem and s_elem and find_coercion_pathway(cat, t_elem, s_elem, context) != "none":
            return "array"
    if _RANK[context] >= _RANK["a"] and cat.category(target) == "S":
        return "io"
    if _RANK[context] >= _RANK["e"] and cat.category(source) == "S":
        return "io"
    return "none"


def _can_coerce_one(cat: Catalog, source: int, target: int, context: str) -> bool | None:
    """One position of ``can_coerce_type``; None for a polymorphic target (checked afterwards)."""
    if source == target or target == ANY:
        return True
    if INTERNAL in (source, target):
        return False
    if target in POLYMORPHIC:
        return None
    if source == UNKNOWN or find_coercion_pathway(cat, target, source, context) != "none":
        return True
    if (source == RECORD and cat.is_complex(target)) or (target == RECORD and cat.is_complex(source)):
        return True
    if target == RECORDARRAY and cat.is_complex(source):
        return True  # a composite array (never read: see catalog.py) to record[]
    # typeInheritsFrom / typeIsOfTypedTable: row types are not read, so two of them are taken as coercible
    return cat.is_complex(source) and cat.is_complex(target)


def can_coerce_type(cat: Catalog, inputs: Sequence[int], targets: Sequence[int], context: str) -> bool:
    """``parse_coerce.c can_coerce_type``: every input coerces to its target (unknown to anything), and the
    polymorphic targets are consistent (``check_generic_type_consistency``)."""
    generics = False
    for source, target in zip(inputs, targets, strict=True):
        one = _can_coerce_one(cat, source, target, context)
        if one is None:
            generics = True
        elif not one:
            return False
    return not generics or _generic_consistent(cat, inputs, targets)


def _family1_types(cat: Catalog, actual: Sequence[int], declared: Sequence[int]) -> tuple[int, int, int, int] | None:
    """The element, array, range and multirange types family-1 arguments fix (0 = none), or None when they
    disagree (the loop of ``check_generic_type_consistency`` / ``enforce_generic_type_consistency``)."""
    found = {"elem": 0, "array": 0, "range": 0, "multirange": 0}
    slot = {ANYELEMENT: "elem", ANYNONARRAY: "elem", ANYENUM: "elem", ANYARRAY: "array", ANYRANGE: "range",
            ANYMULTIRANGE: "multirange"}
    for a, d in zip(actual, declared, strict=True):
        key = slot.get(d)
        if key is None or a == UNKNOWN:
            continue
        if key != "elem":
            a = cat.base_type(a)
        if found[key] and found[key] != a:
            return None
        found[key] = a
    return found["elem"], found["array"], found["range"], found["multirange"]


def _family1_element(cat: Catalog, elem: int, array: int, rng: int, multirange: int) -> tuple[int, int] | None:
    """(element type, range type) implied by the family-1 types, or None when they disagree."""
    if array and array != ANYARRAY:
        array_elem = cat.element(array)
        if not array_elem or (elem and array_elem != elem):
            return None
        elem = array_elem
    if multirange:
        of = cat.multirange_range(multirange)
        if not of or (rng and of != rng):
            return None
        rng = of
    if rng:
        sub = cat.range_subtype(rng)
        if not sub or (elem and sub != elem):
            return None
        elem = sub
    return elem, rng


def _compatible_types(cat: Catalog, actual: Sequence[int], declared: Sequence[int]) -> list[int] | None:
    """The types the anycompatible family brings to the common-type choice, or None when one cannot."""
    out: list[int] = []
    ranges: set[int] = set()
    for a, d in zip(actual, declared, strict=True):
        if d not in FAMILY2 or a == UNKNOWN:
            continue
        if d in (ANYCOMPATIBLE, ANYCOMPATIBLENONARRAY):
            out.append(a)
        elif d == ANYCOMPATIBLEARRAY:
            elem = cat.element(cat.base_type(a))
            if not elem:
                return None
            out.append(elem)
        elif d == ANYCOMPATIBLERANGE:
            base = cat.base_type(a)
            if (ranges and base not in ranges) or not cat.range_subtype(base):
                return None
            if not ranges:
                out.append(cat.range_subtype(base))
            ranges.add(base)
        else:
            base = cat.base_type(a)
            of = cat.multirange_range(base)
            if not of:
                return None
            out.append(cat.range_subtype(of))
    return out


def _generic_consistent(cat: Catalog, actual: Sequence[int], declared: Sequence[int]) -> bool:
    """``parse_coerce.c check_generic_type_consistency``."""
    fixed = _family1_types(cat, actual, declared)
    if fixed is None:
        return False
    joined = _family1_element(cat, *fixed)
    if joined is None:
        return False
    elem = joined[0]
    if ANYNONARRAY in declared and elem and cat.is_array_domain(elem):
        return False
    if ANYENUM in declared and elem and not cat.is_enum(elem):
        return False
    compatible = _compatible_types(cat, actual, declared)
    if compatible is None:
        return False
    if compatible:
        common = select_common_type(cat, compatible, None)
        if not common or not verify_common_type(cat, common, compatible):
            return False
        if ANYCOMPATIBLENONARRAY in declared and cat.is_array_domain(common):
            return False
    return True


def select_common_type(cat: Catalog, types: Sequence[int], context: str | None) -> int:
    """``parse_coerce.c select_common_type``: the type CASE, COALESCE, UNION, VALUES, IN lists... resolve to;
    all-unknown inputs resolve to text; earlier inputs are preferred when in doubt.

    :param context: the construct's name for the error, or None to return 0 on failure instead.
    :raises TypingFailure: 42804, inputs of different type categories (with a context).
    """
    first = types[0]
    if first != UNKNOWN and all(t == first for t in types[1:]):
        return first
    ptype = cat.base_type(first)
    pcat, ppref = cat.category(ptype), cat.preferred(ptype)
    for t in types[1:]:
        ntype = cat.base_type(t)
        if ntype in (UNKNOWN, ptype):
            continue
        ncat, npref = cat.category(ntype), cat.preferred(ntype)
        if ptype == UNKNOWN:
            ptype, pcat, ppref = ntype, ncat, npref
        elif ncat != pcat:
            if context is None:
                return 0
            raise TypingFailure("42804", f"{context} types {cat.type_name(ptype)} and {cat.type_name(ntype)} "
                                         "cannot be matched")
        elif not ppref and can_coerce_type(cat, [ptype], [ntype], "i") and \
                not can_coerce_type(cat, [ntype], [ptype], "i"):
            ptype, pcat, ppref = ntype, ncat, npref
    return TEXT if ptype == UNKNOWN else ptype


def verify_common_type(cat: Catalog, common: int, types: Sequence[int]) -> bool:
    """``parse_coerce.c verify_common_type``: every input coerces implicitly to ``common``."""
    return all(can_coerce_type(cat, [t], [common], "i") for t in types)


def _unknown_polymorphic(kind: str) -> TypingFailure:
    return TypingFailure("42804", f"could not determine polymorphic type{kind} because input has type unknown")


def _mismatch(what: str) -> TypingFailure:
    return TypingFailure("42804", what)


def _enforce_family1(cat: Catalog, actual: Sequence[int], declared: list[int],
                     rettype: int) -> tuple[int, int, int, int]:
    """The family-1 part of ``enforce_generic_type_consistency``: (element, array, range, multirange) types."""
    fixed = _family1_types(cat, actual, declared)
    if fixed is None:
        raise _mismatch("arguments declared polymorphic are not all alike")
    elem, array, rng, multirange = fixed
    if array == ANYARRAY:
        raise _mismatch('cannot determine element type of "anyarray" argument')
    joined = _family1_element(cat, elem, array, rng, multirange)
    if joined is None:
        raise _mismatch("polymorphic arguments are not consistent")
    elem, rng = joined
    if not multirange and rng and (rettype == ANYMULTIRANGE or ANYMULTIRANGE in declared):
        multirange = cat.range_multirange(rng)
    if not elem:
        raise _unknown_polymorphic("")  # only unknown inputs for family-1 arguments
    if (ANYNONARRAY in declared or rettype == ANYNONARRAY) and cat.is_array_domain(elem):
        raise _mismatch(f"type matched to anynonarray is an array type: {cat.type_name(elem)}")
    if (ANYENUM in declared or rettype == ANYENUM) and not cat.is_enum(elem):
        raise _mismatch(f"type matched to anyenum is not an enum type: {cat.type_name(elem)}")
    return elem, array or cat.array_of(elem), rng, multirange


def _enforce_family2(cat: Catalog, actual: Sequence[int], declared: list[int], rettype: int) -> tuple[int, int]:
    """The anycompatible part of ``enforce_generic_type_consistency``: (common type, its array type)."""
    compatible = _compatible_types(cat, actual, declared)
    if compatible is None:
        raise _mismatch("arguments of anycompatible family are not consistent")
    wants_range = ANYCOMPATIBLERANGE in declared or rettype == ANYCOMPATIBLERANGE
    wants_multirange = ANYCOMPATIBLEMULTIRANGE in declared or rettype == ANYCOMPATIBLEMULTIRANGE
    if not compatible:
        if wants_range or wants_multirange:
            raise _unknown_polymorphic(" anycompatiblerange" if wants_range else " anycompatiblemultirange")
        return TEXT, TEXTARRAY
    common = select_common_type(cat, compatible, "anycompatible")
    if not verify_common_type(cat, common, compatible):
        raise _mismatch("arguments of anycompatible family cannot be cast to a common type")
    has_range = any(d in (ANYCOMPATIBLERANGE, ANYCOMPATIBLEMULTIRANGE) and a != UNKNOWN
                    for a, d in zip(actual, declared, strict=True))
    if (wants_range or wants_multirange) and not has_range:
        raise _unknown_polymorphic(" anycompatiblerange" if wants_range else " anycompatiblemultirange")
    return common, cat.array_of(common)


def enforce_generic_type_consistency(cat: Catalog, actual: Sequence[int], declared: list[int], rettype: int) -> int:
    """``parse_coerce.c enforce_generic_type_consistency``: resolve a polymorphic call.

    Replaces, in place, the polymorphic entries of ``declared`` for unknown and anycompatible inputs by the types
    they resolve to (what ``make_fn_arguments`` then coerces to), and returns the resolved result type.

    :raises TypingFailure: 42804, the polymorphic arguments have only unknown inputs, or inconsistent ones.
    """
    has1 = any(d in FAMILY1 for d in declared)
    has2 = any(d in FAMILY2 for d in declared)
    if not has1 and not has2:
        return rettype
    elem = array = rng = multirange = 0
    if has1:
        elem, array, rng, multirange = _enforce_family1(cat, actual, declared, rettype)
    common = common_array = 0
    if has2:
        common, common_array = _enforce_family2(cat, actual, declared, rettype)
    for i, (a, d) in enumerate(zip(actual, declared, strict=True)):
        if d in (ANYCOMPATIBLE, ANYCOMPATIBLENONARRAY):
            declared[i] = common
        elif d == ANYCOMPATIBLEARRAY:
            declared[i] = common_array
        elif a == UNKNOWN and d in (ANYELEMENT, ANYNONARRAY, ANYENUM):
            declared[i] = elem
        elif a == UNKNOWN and d == ANYARRAY:
            declared[i] = array
        elif a == UNKNOWN and d in (ANYRANGE, ANYMULTIRANGE):
            if not (rng if d == ANYRANGE else multirange):
                raise _unknown_polymorphic(" anyrange" if d == ANYRANGE else " anymultirange")
            declared[i] = rng if d == ANYRANGE else multirange
    results = {ANYELEMENT: elem, ANYNONARRAY: elem, ANYENUM: elem, ANYARRAY: array, ANYRANGE: rng,
               ANYMULTIRANGE: multirange, ANYCOMPATIBLE: common, ANYCOMPATIBLENONARRAY: common,
               ANYCOMPATIBLEARRAY: common_array}
    resolved = results.get(rettype)
    if resolved is not None:
        return resolved or OPAQUE
    return OPAQUE if rettype in POLYMORPHIC else rettype
