"""Catalog and settings reads shared by audit, forecast, diagnose and the workload reader, in a few set-based
queries (never one round trip per table).

- ``audit_relations.sql``: tables, partitioned tables, partitions at any depth (``pg_inherits``), foreign tables,
  materialized views.
- ``audit_indexes.sql``: every index with what makes it undroppable (unique, primary key, exclusion, replica
  identity, a constraint using it) and what makes two indexes equal (keys, opclasses, collations, options,
  expressions, predicate), its scans (``pg_stat_all_indexes``) and size.
- ``audit_settings.sql``: settings beyond :class:`~lockscope.db.ServerFacts`, stats reset time, pg_stat_statements.
- ``forecast_database.sql``, ``forecast_relations.sql``, ``forecast_index.sql``: the current database's OID, relations
  by OID (shared catalog or not, their names), index names as ``--drop-index`` gives them.

Nothing here prints; everything comes back as frozen dataclasses.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from .db import Session
from .errors import BadInputError
from .rows import AuditSettingsRow, ClassRow, DatabaseFactsRow, IndexInfo, TableInfo

__all__ = [
    "AuditSettings",
    "Catalog",
    "IndexInfo",
    "TableInfo",
    "build_catalog",
    "database_facts",
    "read_catalog",
    "read_settings",
    "relation_facts",
    "resolve_indexes",
]


@dataclass(frozen=True)
class AuditSettings:
    """Settings and facts read once.

    :ivar enable_partition_pruning: the setting.
    :ivar now: server time of the read.
    :ivar stats_since: when the index/table scan counters started (``pg_stat_database.stats_reset``, or the
        postmaster start time when never reset).
    :ivar stats_since_source: ``stats_reset`` or ``postmaster start``.
    :ivar pgss_schema: schema of the pg_stat_statements extension in this database, or None.
    :ivar read_all_stats: current user has pg_read_all_stats (sees every role's statements).
    :ivar has_pg_stat_lock: the PG 19 ``pg_stat_lock`` view exists.
    :ivar client_backends: client sessions connected now (count).
    :ivar track_planning: ``pg_stat_statements.track_planning`` is on (pg_stat_statements counts plannings in
        ``plans``).
    :ivar compute_query_id: the ``compute_query_id`` setting (PG 14+), else None.
    """

    enable_partition_pruning: bool
    now: _dt.datetime
    stats_since: _dt.datetime
    stats_since_source: str
    pgss_schema: str | None
    read_all_stats: bool
    has_pg_stat_lock: bool
    current_user: str
    database_oid: int
    client_backends: int
    track_planning: bool = False
    compute_query_id: str | None = None

    @property
    def stats_age_s(self) -> float:
        """Age of the scan counters (s)."""
        return max(0.0, (self.now - self.stats_since).total_seconds())


@dataclass(frozen=True)
class Catalog:
    """The relations and indexes of one database, with look-ups.

    :ivar relations: by OID.
    :ivar indexes: by OID (live and not live).
    :ivar indexes_of: table OID -> its live index OIDs in OID order (``relcache.c RelationGetIndexList``).
    :ivar children_of: table OID -> its partitions / inheritance children in OID order.
    """

    relations: dict[int, TableInfo]
    indexes: dict[int, IndexInfo]
    settings: AuditSettings
    indexes_of: dict[int, tuple[int, ...]] = field(default_factory=dict)
    children_of: dict[int, tuple[int, ...]] = field(default_factory=dict)

    def top_level(self) -> list[TableInfo]:
        """Relations that are not partitions or inheritance children, in OID order."""
        return [r for r in self.relations.values() if r.parent_oid is None]

    def leaves(self, oid: int) -> list[int]:
        """Leaf partitions (or inheritance children without children) under ``oid``, any depth, in OID order."""
        out: list[int] = []
        stack = list(reversed(self.children_of.get(oid, ())))
        while stack:
            child = stack.pop()
            grandchildren = self.children_of.get(child, ())
            if grandchildren:
                stack.extend(reversed(grandchildren))
            elif self.relations[child].relkind != "p":
                out.append(child)
        return sorted(out)

    def descendants(self, oid: int) -> list[int]:
        """Every partition / child under ``oid`` at any depth (intermediate partitioned tables included)."""
        out: list[int] = []
        stack = list(self.children_of.get(oid, ()))
        while stack:
            child = stack.pop()
            out.append(child)
            stack.extend(self.children_of.get(child, ()))
        return sorted(out)

    def ancestors(self, oid: int) -> list[int]:
        """Parents of ``oid`` from the top-level table down (excluding ``oid``)."""
        chain: list[int] = []
        parent = self.relations[oid].parent_oid
        while parent is not None and parent in self.relations:
            chain.append(parent)
            parent = self.relations[parent].parent_oid
        return list(reversed(chain))

    def top_of(self, oid: int) -> int:
        """The top-level table of a partition (itself for a top-level table)."""
        chain = self.ancestors(oid)
        return chain[0] if chain else oid


def _as_datetime(value: Any) -> _dt.datetime:
    return value if isinstance(value, _dt.datetime) else _dt.datetime.fromisoformat(str(value))


def build_catalog(relation_rows: Sequence[TableInfo], index_rows: Sequence[IndexInfo],
                  settings: AuditSettings) -> Catalog:
    """Assemble a :class:`Catalog` from ``audit_relations.sql`` / ``audit_indexes.sql`` rows (no I/O)."""
    relations = {r.oid: r for r in relation_rows}
    # a parent outside the audited schemas is treated as absent
    relations = {oid: (r if r.parent_oid is None or r.parent_oid in relations else replace(r, parent_oid=None))
                 for oid, r in relations.items()}
    indexes = {r.oid: r for r in index_rows if r.table_oid in relations}
    # a partitioned index has no scan counter of its own: the sum over the indexes attached to it, any depth
    children_idx: dict[int, list[int]] = {}
    for ix in indexes.values():
        if ix.parent_index_oid is not None:
            children_idx.setdefault(ix.parent_index_oid, []).append(ix.oid)

    def scans_of(oid: int) -> int:
        kids = children_idx.get(oid)
        return indexes[oid].idx_scan if not kids else sum(scans_of(k) for k in kids)

    for oid, ix in list(indexes.items()):
        if ix.relkind == "I":
            indexes[oid] = replace(ix, idx_scan=scans_of(oid))
    indexes_of: dict[int, list[int]] = {}
    for ix in indexes.values():
        if ix.live:  # plancat.c get_relation_info: RelationGetIndexList skips !indislive only
            indexes_of.setdefault(ix.table_oid, []).append(ix.oid)
    children_of: dict[int, list[int]] = {}
    for rel in relations.values():
        if rel.parent_oid is not None:
            children_of.setdefault(rel.parent_oid, []).append(rel.oid)
    return Catalog(
        relations=relations, indexes=indexes, settings=settings,
        indexes_of={k: tuple(sorted(v)) for k, v in indexes_of.items()},
        children_of={k: tuple(sorted(v)) for k, v in children_of.items()},
    )


def read_settings(session: Session) -> AuditSettings:
    """Read ``audit_settings.sql`` (one row)."""
    row = session.query_rows("audit_settings", AuditSettingsRow)[0]
    stats_reset = row.stats_reset
    return AuditSettings(
        enable_partition_pruning=str(row.enable_partition_pruning) == "on",
        now=_as_datetime(row.now),
        stats_since=_as_datetime(stats_reset if stats_reset is not None else row.postmaster_start),
        stats_since_source="stats_reset" if stats_reset is not None else "postmaster start",
        pgss_schema=row.pgss_schema,
        read_all_stats=bool(row.read_all_stats),
        has_pg_stat_lock=bool(row.has_pg_stat_lock),
        current_user=row.current_user,
        database_oid=int(row.database_oid),
        client_backends=int(row.client_backends),
        track_planning=str(row.track_planning or "off") == "on",
        compute_query_id=row.compute_query_id,
    )


def read_catalog(session: Session) -> Catalog:
    """Read the whole catalog in three queries (relations, indexes, settings).

    :raises DatabaseError: if the server refuses (the catalog is readable by every role).
    """
    settings = read_settings(session)
    return build_catalog(session.query_rows("audit_relations", TableInfo),
                         session.query_rows("audit_indexes", IndexInfo), settings)


def database_facts(session: Session) -> tuple[int, int]:
    """(current database OID, its other active client backends) (``sql/forecast_database.sql``).

    :raises DatabaseError: the query failed.
    """
    row = session.query_rows("forecast_database", DatabaseFactsRow)[0]
    return int(row.database_oid), int(row.active_backends)


def relation_facts(session: Session, oids: Sequence[int]) -> dict[int, tuple[bool, str]]:
    """``oid -> (relisshared, schema-qualified name)`` for these relations (missing ones left out)."""
    if not oids:
        return {}
    rows = session.query_rows("forecast_relations", ClassRow, [sorted(set(oids))])
    return {r.oid: (bool(r.relisshared), str(r.qualified)) for r in rows}


def resolve_indexes(session: Session, names: Sequence[str]) -> dict[str, int]:
    """``name -> OID`` of each ``--drop-index`` name (resolved by the server's ``to_regclass``, search_path
    applies).

    :raises BadInputError: a name that is no relation, or not an index.
    """
    out: dict[str, int] = {}
    for name in names:
        rows = session.query_rows("forecast_index", ClassRow, [name])
        if not rows:
            raise BadInputError(f"--drop-index {name}: no such relation in database {session.facts.database}")
        if rows[0].relkind not in ("i", "I"):
            raise BadInputError(f"--drop-index {name}: {rows[0].qualified} is not an index")
        out[name] = rows[0].oid
    return out
