"""Per-table planner-lock footprints from the catalog, against the capacity model with the real OIDs.

What a one-table statement (``SELECT ... FROM t WHERE ...``) locks at planning (pg-lock-internals.md section 3):

- plain table / materialized view: the table (parser, ``parse_relation.c addRangeTableEntry``) and every live
  index, valid or not (``plancat.c get_relation_info`` over ``relcache.c RelationGetIndexList``): 1 + indexes.
- partitioned table, **pruned** to one partition: the parent; on PG 16+ its partitioned indexes (commit
  3c569049b7, ``get_relation_info`` now opens indexes of partitioned tables); every intermediate partitioned table on
  the way down (with its partitioned indexes on 16+); the surviving leaf partition and all its indexes
  (``inherit.c expand_partitioned_rtentry``). Reported for the leaf that spills most.
- partitioned table, **unpruned** (no plan-time-safe partition-key clause, a ``$1`` in a generic plan,
  ``enable_partition_pruning = off``): the parent and every partition at every level with all their indexes.
- legacy inheritance parent: every child and its indexes (``expand_inherited_rtentry`` locks all children).

The relations are put in the footprint engine's modelled acquisition order (``footprint.acquisition_order``) and run
through ``capacity.simulate_fast_path``: the spilled count is exact for an otherwise empty fast-path array.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..capacity import FP_LOCK_SLOTS_PER_GROUP, CapacityModel, LockRequest, groups_overflow
from ..catalog import Catalog
from ..footprint import acquisition_order
from ..versions import PG16
from ..vocab import LockMode

__all__ = [
    "PG16",
    "FootprintCase",
    "TableFootprint",
    "footprint_case",
    "relation_set_pruned",
    "relation_set_unpruned",
    "table_footprints",
]



@dataclass(frozen=True)
class FootprintCase:
    """The relations one statement shape locks on one table, and what the capacity model does with them.

    :ivar case: ``plain``, ``pruned``, ``unpruned`` or ``inheritance``.
    :ivar relation_oids: the locked relations in modelled acquisition order.
    :ivar spilled: locks the model puts in the main lock table (count).
    :ivar overflowing_groups: ``{group: relations}`` for fast-path groups holding more than 16 of them.
    :ivar partition_oid: the leaf partition of the pruned case, else None.
    """

    case: str
    relation_oids: tuple[int, ...]
    spilled: int
    overflowing_groups: dict[int, int]
    partition_oid: int | None = None

    @property
    def locks(self) -> int:
        """Relation locks (count)."""
        return len(self.relation_oids)

    @property
    def fits(self) -> bool:
        """True when nothing spills."""
        return self.spilled == 0


@dataclass(frozen=True)
class TableFootprint:
    """One top-level table's footprints.

    :ivar oid: the table's OID.
    :ivar qualified: quoted ``schema.name``.
    :ivar kind: ``table``, ``partitioned table``, ``inheritance parent``, ``materialized view``, ``foreign table``.
    :ivar indexes: the table's own live indexes (count; partitioned indexes for a partitioned table).
    :ivar partitions: leaf partitions / children (count).
    :ivar all_relations: relations of the whole tree, parent + partitions + all indexes (count).
    :ivar pruned: the best case: plain table, or pruned to its worst single partition.
    :ivar unpruned: a partitioned table (or inheritance parent) scanned without plan-time pruning, else None.
    """

    oid: int
    qualified: str
    kind: str
    indexes: int
    partitions: int
    all_relations: int
    pruned: FootprintCase
    unpruned: FootprintCase | None

    @property
    def worst(self) -> FootprintCase:
        """The unpruned case when there is one, else the pruned."""
        return self.unpruned or self.pruned


@dataclass(frozen=True)
class _Entry:
    """A catalog relation as the catalog-only order reads it (:class:`lockscope.acquisition.CatalogRelation`)."""

    relkind: str
    relname: str
    parent_oid: int | None
    bound: str | None = None
    partstrat: str | None = None


def _infos(catalog: Catalog, oids: Iterable[int]) -> dict[int, _Entry]:
    """The relations' kinds, names, parents, and for partitions their bounds and their parent's strategy (partitions
    in bound order from the FOR VALUES text, ``acquisition.order_partitions``)."""
    out: dict[int, _Entry] = {}
    for oid in oids:
        rel = catalog.relations.get(oid)
        if rel is not None:
            out[oid] = _Entry(rel.relkind, rel.name, rel.parent_oid, rel.partition_bound, rel.partition_strategy)
            continue
        ix = catalog.indexes[oid]
        out[oid] = _Entry(ix.relkind, ix.name, ix.table_oid)
    return out


def footprint_case(catalog: Catalog, model: CapacityModel, top_oid: int, oids: Iterable[int], case: str,
                   partition_oid: int | None = None, mode: LockMode = LockMode.ACCESS_SHARE) -> FootprintCase:
    """Order the relations as the backend takes them and simulate the fast path.

    :param oids: the locked relations (any order, distinct).
    :param mode: lock mode of every request (AccessShareLock for SELECT; RowExclusiveLock for an UPDATE target).
    """
    oid_list = list(dict.fromkeys(oids))
    infos = _infos(catalog, oid_list)
    order = acquisition_order(infos, oid_list, [catalog.relations[top_oid].name], model.server_version_num)
    flags = model.predict([LockRequest(o, mode) for o in order])
    return FootprintCase(case, tuple(order), sum(not f for f in flags), groups_overflow(model, order),
                         partition_oid)


def _own_indexes(catalog: Catalog, oid: int, server_version_num: int) -> tuple[int, ...]:
    rel = catalog.relations[oid]
    if rel.relkind == "p" and server_version_num < PG16:
        return ()  # PG 13-15: get_relation_info skips a partitioned table's indexes
    return catalog.indexes_of.get(oid, ())


def relation_set_pruned(catalog: Catalog, leaf_oid: int, server_version_num: int) -> list[int]:
    """Relations a statement pruned to one leaf partition locks: ancestors (with partitioned indexes on 16+),
    the leaf and its indexes."""
    oids: list[int] = []
    for rel in [*catalog.ancestors(leaf_oid), leaf_oid]:
        oids.append(rel)
        oids.extend(_own_indexes(catalog, rel, server_version_num))
    return oids


def relation_set_unpruned(catalog: Catalog, top_oid: int, server_version_num: int) -> list[int]:
    """Relations an unpruned statement locks: the table, every partition/child at every level, all indexes."""
    oids: list[int] = []
    for rel in [top_oid, *catalog.descendants(top_oid)]:
        oids.append(rel)
        oids.extend(_own_indexes(catalog, rel, server_version_num))
    return oids


def _kind(relkind: str, has_children: bool) -> str:
    if relkind == "p":
        return "partitioned table"
    if relkind == "m":
        return "materialized view"
    if relkind == "f":
        return "foreign table"
    return "inheritance parent" if has_children else "table"


def table_footprints(catalog: Catalog, model: CapacityModel) -> list[TableFootprint]:
    """Footprints of every top-level table, ranked: most spilled locks first, then most locks.

    :param model: the server's capacity (or an assumed one).
    :return: one :class:`TableFootprint` per top-level relation (partitions are summarised in their parent).
    """
    version = model.server_version_num
    out: list[TableFootprint] = []
    for rel in catalog.top_level():
        children = catalog.children_of.get(rel.oid, ())
        kind = _kind(rel.relkind, bool(children))
        own = _own_indexes(catalog, rel.oid, version)
        unpruned_set = relation_set_unpruned(catalog, rel.oid, version)
        if rel.relkind == "p":
            leaves = catalog.leaves(rel.oid)
            best: FootprintCase | None = None
            for leaf in leaves:
                case = footprint_case(catalog, model, rel.oid, relation_set_pruned(catalog, leaf, version),
                                      "pruned", leaf)
                if best is None or (case.spilled, case.locks) > (best.spilled, best.locks):
                    best = case
            if best is None:  # no partitions yet: the parent (and its partitioned indexes) only
                best = footprint_case(catalog, model, rel.oid, [rel.oid, *own], "pruned")
            pruned = best
            unpruned: FootprintCase | None = footprint_case(catalog, model, rel.oid, unpruned_set, "unpruned")
        elif children:
            pruned = footprint_case(catalog, model, rel.oid, unpruned_set, "inheritance")
            unpruned = pruned
            leaves = catalog.leaves(rel.oid)
        else:
            pruned = footprint_case(catalog, model, rel.oid, [rel.oid, *own], "plain")
            unpruned = None
            leaves = []
        all_relations = len(relation_set_unpruned(catalog, rel.oid, PG16))
        out.append(TableFootprint(rel.oid, rel.qualified, kind, len(catalog.indexes_of.get(rel.oid, ())),
                                  len(leaves), all_relations, pruned, unpruned))
    out.sort(key=lambda t: (-t.pruned.spilled, -(t.unpruned.spilled if t.unpruned else 0), -t.worst.locks,
                            t.qualified))
    return out


def headroom(case: FootprintCase, model: CapacityModel) -> int:
    """Free fast-path slots left in the fullest group this case uses (count; negative when it overflows)."""
    used: dict[int, int] = {}
    for oid in case.relation_oids:
        g = model.group_of(oid)
        used[g] = used.get(g, 0) + 1
    return FP_LOCK_SLOTS_PER_GROUP - max(used.values(), default=0)
