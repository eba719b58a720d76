"""Index findings and the smallest set of safely droppable indexes that brings a table under the fast-path slots.

Every index, valid or not, is locked at planning (``plancat.c get_relation_info`` opens all of
``RelationGetIndexList``; only ``!indislive`` indexes are skipped), so each index that serves no query costs one
fast-path slot (or one main-lock-table acquisition) per statement on its table.

Kinds (an index is reported under the first that applies):

- **invalid**: ``indisvalid = false`` (a failed ``CREATE INDEX CONCURRENTLY``): never used, still locked.
- **duplicate**: same table, access method, keys, opclasses, collations, options, expressions, predicate and
  INCLUDE columns as another index; the one kept is the protected one, else the most scanned, else the oldest.
- **redundant**: a plain btree index whose key columns are a leading prefix of another valid btree index's keys on
  the same table, with the same opclasses, collations and options on those columns and the same predicate (or none
  on either), and no INCLUDE columns of its own.
- **unused**: ``idx_scan = 0`` over a statistics age of at least ``unused_min_age_s``.

Never proposed for dropping (``IndexInfo.protected_reason``): primary keys, unique indexes, indexes backing a
constraint (PK, unique, exclusion, or referenced by a foreign key), replica identity indexes, exclusion indexes,
and partition indexes attached to a partitioned index (the partitioned index is the unit to drop).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass

from ..capacity import FP_LOCK_SLOTS_PER_GROUP, CapacityModel
from ..catalog import Catalog, IndexInfo
from .tables import TableFootprint, footprint_case, relation_set_pruned

__all__ = ["KINDS", "DropPlan", "IndexFinding", "index_findings", "smallest_drop_set"]

KINDS = ("invalid", "duplicate", "redundant", "unused")
#: exhaustive search over candidate subsets up to this many candidates (2^12 = 4096 subsets), greedy beyond.
_EXHAUSTIVE_MAX = 12


@dataclass(frozen=True)
class IndexFinding:
    """One index that costs a planner lock for nothing (or little).

    :ivar index_oid: the index.
    :ivar kind: one of :data:`KINDS`.
    :ivar evidence: one line with the numbers (scans, stats age, the index it duplicates).
    :ivar droppable: True when lockscope may propose dropping it (not protected).
    :ivar protected_reason: why it must stay, when not droppable.
    :ivar other_oid: the index it duplicates or is a prefix of, else None.
    """

    index_oid: int
    table_oid: int
    qualified: str
    table: str
    kind: str
    evidence: str
    droppable: bool
    protected_reason: str | None
    other_oid: int | None
    idx_scan: int
    size_bytes: int
    partitioned: bool


@dataclass(frozen=True)
class DropPlan:
    """The smallest droppable set for one table over capacity.

    :ivar table_oid: the table.
    :ivar index_oids: the indexes to drop (empty when none needed or none possible).
    :ivar before_spilled: locks spilled by the pruned/plain footprint now (count).
    :ivar after_spilled: after dropping them (count; > 0 when no safe set suffices).
    :ivar exact: True when the set is proven minimal (exhaustive or per-group count), False for greedy.
    :ivar short_by: more droppable indexes that would be needed when no safe set suffices (count, estimate).
    """

    table_oid: int
    index_oids: tuple[int, ...]
    before_spilled: int
    after_spilled: int
    exact: bool
    short_by: int = 0

    @property
    def sufficient(self) -> bool:
        """True when dropping ``index_oids`` removes every spill of the pruned/plain footprint."""
        return self.after_spilled == 0


def _key_parts(ix: IndexInfo) -> tuple[list[str], list[str], list[str], list[str]]:
    keys = ix.indkey.split()[: ix.key_columns]
    return (keys, ix.indclass.split()[: ix.key_columns], ix.indcollation.split()[: ix.key_columns],
            ix.indoption.split()[: ix.key_columns])


def _is_prefix(short: IndexInfo, long: IndexInfo) -> bool:
    if short.am != "btree" or long.am != "btree" or not long.valid:
        return False
    if short.expressions or long.expressions or short.all_columns != short.key_columns:
        return False
    if short.predicate != long.predicate:
        return False
    s, lg = _key_parts(short), _key_parts(long)
    n = len(s[0])
    if n >= len(lg[0]):
        return False
    return all(s[i] == lg[i][:n] for i in range(4))


def _age_text(seconds: float) -> str:
    days = seconds / 86400
    return f"{days:.1f} days" if days >= 1 else f"{seconds / 3600:.1f} hours"


def index_findings(catalog: Catalog, *, unused_min_age_s: float = 7 * 86400) -> list[IndexFinding]:
    """Classify the indexes of every table (partition indexes are judged through their partitioned index).

    :param unused_min_age_s: statistics age (s) below which ``idx_scan = 0`` is not reported as unused.
    :return: findings, grouped by table in OID order.
    """
    stats_age = catalog.settings.stats_age_s
    out: list[IndexFinding] = []
    seen: set[int] = set()
    by_table: dict[int, list[IndexInfo]] = {}
    for ix in catalog.indexes.values():
        if ix.live and ix.parent_index_oid is None:
            by_table.setdefault(ix.table_oid, []).append(ix)

    def add(ix: IndexInfo, kind: str, evidence: str, other: IndexInfo | None = None) -> None:
        if ix.oid in seen:
            return
        seen.add(ix.oid)
        reason = ix.protected_reason
        out.append(IndexFinding(
            index_oid=ix.oid, table_oid=ix.table_oid, qualified=ix.qualified,
            table=catalog.relations[ix.table_oid].qualified, kind=kind, evidence=evidence,
            droppable=reason is None, protected_reason=reason, other_oid=other.oid if other else None,
            idx_scan=ix.idx_scan, size_bytes=ix.size_bytes, partitioned=ix.relkind == "I",
        ))

    for table_oid in sorted(by_table):
        table_indexes = sorted(by_table[table_oid], key=lambda i: i.oid)
        for ix in table_indexes:
            if not ix.valid:
                add(ix, "invalid", "indisvalid = false (failed CREATE INDEX CONCURRENTLY?): never used by a plan, "
                                   "still locked at planning")
        groups: dict[tuple[object, ...], list[IndexInfo]] = {}
        for ix in table_indexes:
            if ix.valid:
                groups.setdefault(ix.signature(), []).append(ix)
        for members in groups.values():
            if len(members) < 2:
                continue
            keep = sorted(members, key=lambda i: (i.protected_reason is None, -i.idx_scan, i.oid))[0]
            for ix in members:
                if ix is not keep:
                    add(ix, "duplicate", f"same definition as {keep.qualified}", keep)
        for short in table_indexes:
            if not short.valid or short.oid in seen:
                continue
            for long in table_indexes:
                if long is not short and long.oid not in seen and _is_prefix(short, long):
                    add(short, "redundant", f"its keys are a leading prefix of {long.qualified}", long)
                    break
        if stats_age >= unused_min_age_s:
            for ix in table_indexes:
                if ix.valid and ix.idx_scan == 0:
                    add(ix, "unused", f"idx_scan = 0 in {_age_text(stats_age)} of statistics "
                                      f"(since {catalog.settings.stats_since_source})")
    return out


def _expand_drops(catalog: Catalog, dropped: set[int]) -> set[int]:
    """The dropped indexes plus every index attached to them (dropping a partitioned index drops those too)."""
    attached: dict[int, list[int]] = {}
    for ix in catalog.indexes.values():
        if ix.parent_index_oid is not None:
            attached.setdefault(ix.parent_index_oid, []).append(ix.oid)
    removed: set[int] = set()
    stack = list(dropped)
    while stack:
        oid = stack.pop()
        if oid not in removed:
            removed.add(oid)
            stack.extend(attached.get(oid, ()))
    return removed


def _pruned_after(catalog: Catalog, model: CapacityModel, table: TableFootprint, removed: set[int],
                  leaves: list[int] | None = None) -> int:
    """Spilled locks of the table's worst pruned/plain footprint without the ``removed`` indexes (count).

    :param removed: index OIDs gone, attached partition indexes included (see :func:`_expand_drops`).
    :param leaves: the leaf partitions to evaluate (default: all).
    """
    version = model.server_version_num
    if catalog.relations[table.oid].relkind == "p":
        worst = 0
        for leaf in (leaves if leaves is not None else catalog.leaves(table.oid)):
            oids = [o for o in relation_set_pruned(catalog, leaf, version) if o not in removed]
            worst = max(worst, footprint_case(catalog, model, table.oid, oids, "pruned").spilled)
        return worst
    oids = [o for o in table.pruned.relation_oids if o not in removed]
    return footprint_case(catalog, model, table.oid, oids, table.pruned.case).spilled


def smallest_drop_set(catalog: Catalog, model: CapacityModel, table: TableFootprint,
                      findings: list[IndexFinding]) -> DropPlan:
    """The fewest droppable indexes (from ``findings``) whose removal makes the table's pruned/plain footprint fit.

    Plain tables: per fast-path group, the group's excess over 16 must be removed from that group
    (``lock.c FAST_PATH_REL_GROUP``; one group of 16 before PG 18), so the minimum is exact: take the excess from
    each group's candidates in preference order (invalid, duplicate, redundant, unused; fewest scans first).
    Partitioned tables: exhaustive search over the candidate subsets when there are at most 12 candidates
    (each partitioned index removes one lock per level), greedy beyond.
    """
    before = table.pruned.spilled
    if before == 0:
        return DropPlan(table.oid, (), 0, 0, True)
    rank = {k: n for n, k in enumerate(KINDS)}
    candidates = sorted((f for f in findings if f.table_oid == table.oid and f.droppable),
                        key=lambda f: (rank[f.kind], f.idx_scan, f.index_oid))
    rel = catalog.relations[table.oid]
    if rel.relkind != "p" and table.pruned.case == "plain":
        return _plain_drop_plan(catalog, model, table, candidates)
    oids = [f.index_oid for f in candidates]
    removed_by = {oid: _expand_drops(catalog, {oid}) for oid in oids}

    def removed(combo: tuple[int, ...] | list[int]) -> set[int]:
        return set().union(*(removed_by[o] for o in combo)) if combo else set()

    found, exact = _search_drop_set(catalog, model, table, oids, removed)
    if found is None:
        after = _pruned_after(catalog, model, table, removed(oids))
        return DropPlan(table.oid, tuple(oids), before, after, exact, after)
    after = _pruned_after(catalog, model, table, removed(found))
    extra = [o for o in oids if o not in found]
    while after and extra:  # another leaf still spills: extend greedily
        found = (*found, extra.pop(0))
        after = _pruned_after(catalog, model, table, removed(found))
        exact = False
    return DropPlan(table.oid, found, before, after, exact, after)


def _plain_drop_plan(catalog: Catalog, model: CapacityModel, table: TableFootprint,
                     candidates: list[IndexFinding]) -> DropPlan:
    """A plain table: from each fast-path group, its excess over the group's slots (exact)."""
    chosen: list[int] = []
    excess: dict[int, int] = {}
    for oid in table.pruned.relation_oids:
        g = model.group_of(oid)
        excess[g] = excess.get(g, 0) + 1
    short_by = 0
    for g, used in excess.items():
        need = used - FP_LOCK_SLOTS_PER_GROUP
        if need <= 0:
            continue
        in_group = [f.index_oid for f in candidates if model.group_of(f.index_oid) == g]
        chosen.extend(in_group[:need])
        short_by += max(0, need - len(in_group))
    after = _pruned_after(catalog, model, table, _expand_drops(catalog, set(chosen)))
    return DropPlan(table.oid, tuple(chosen), table.pruned.spilled, after, True, short_by)


def _search_drop_set(catalog: Catalog, model: CapacityModel, table: TableFootprint, oids: list[int],
                     removed: Callable[[tuple[int, ...] | list[int]], set[int]],
                     ) -> tuple[tuple[int, ...] | None, bool]:
    """A partitioned table: the smallest set of ``oids`` that fits its worst leaf (exhaustive up to
    :data:`_EXHAUSTIVE_MAX` candidates, else greedy), or None; and whether the search was exhaustive."""
    # search against the worst leaf, then confirm against every leaf (PG 18 groups differ per leaf)
    probe = [table.pruned.partition_oid] if table.pruned.partition_oid is not None else None
    exact = len(oids) <= _EXHAUSTIVE_MAX
    if exact:
        for size in range(1, len(oids) + 1):
            for combo in itertools.combinations(oids, size):
                if _pruned_after(catalog, model, table, removed(combo), probe) == 0:
                    return combo, exact
        return None, exact
    greedy: list[int] = []
    current = table.pruned.spilled
    for oid in oids:
        trial = _pruned_after(catalog, model, table, removed([*greedy, oid]), probe)
        if trial < current:
            greedy.append(oid)
            current = trial
        if current == 0:
            return tuple(greedy), exact
    return None, exact
