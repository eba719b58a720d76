"""Typed rows of lockscope's queries, made at the database boundary (:meth:`lockscope.db.Session.query_rows`).

One frozen dataclass per SQL file's row (``lockscope/sql/NAME.sql``): pg_stat_statements counters and texts,
pg_stat_activity samples and processes, pg_locks snapshots, the catalog facts of the audit, the footprint engine and
the acquisition-order model, the forecast's clock and population. A field is named after its column unless the
column has a unit the name does not say: then the field carries it (``total_exec_time_ms`` reads the column
``total_exec_time``), declared with :func:`column`.

:func:`row_maker` checks a query's columns against the row type once, when the result's description arrives (the
psycopg row factory of :mod:`lockscope.db` calls it, as psycopg's own ``class_row`` does): a column the type needs
and the result lacks raises :class:`RowShapeError` naming the SQL file and the column (a query and its row type out
of step is a lockscope bug, never the user's). Columns the type does not know are ignored; a field with a default
may be absent (columns a query adds only on some servers, e.g. pg_stat_statements' ``plans``). Values are kept as
psycopg returns them for the SQL types the files cast to (``int8`` -> int, ``float8`` -> float, ``bool``, ``text``,
``timestamptz`` -> datetime). :func:`from_row` builds one row from a mapping (column -> value) the same way.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, TypeVar, cast

from .errors import DatabaseError
from .vocab import LockMode

__all__ = [
    "AcquisitionFactsRow",
    "ActivityRow",
    "AuditSettingsRow",
    "BackendLockCountsRow",
    "BlockingLockRow",
    "BlockingLoopRow",
    "BlockingPidsRow",
    "ClassNameRow",
    "ClassRow",
    "ClockRow",
    "ColumnNameRow",
    "ColumnStatsRow",
    "DatabaseFactsRow",
    "DemoLoadStateRow",
    "DumpLockRow",
    "ExecColumnRow",
    "ExecRiTriggerRow",
    "ExecRowValuesRow",
    "ExecTargetRow",
    "ExecTriggerRow",
    "ExecutedLockRow",
    "ExecutorIndexRow",
    "ForeignKeyRow",
    "FunctionVolatilityRow",
    "HeldEntriesRow",
    "HeldLocksRow",
    "IndexInfo",
    "KcacheCpuRow",
    "KcacheSchemaRow",
    "LabStatementRow",
    "LeafPartitionRow",
    "MigrationEntriesRow",
    "MigrationLockRow",
    "NameRow",
    "OidListRow",
    "OrderFunctionRow",
    "OrderRelationRow",
    "OrdinalOidRow",
    "OrdinalValueRow",
    "ParamCastRow",
    "ParamColumnRow",
    "ParamFunctionRow",
    "ParamOperatorRow",
    "ParamTypeRow",
    "PartitionRankRow",
    "PartitionTreeRow",
    "PopulationRow",
    "PostmasterAgeRow",
    "PreparedCountersRow",
    "ProcessRow",
    "QueryTextRow",
    "RelationInfoRow",
    "RelationLockRow",
    "RowShapeError",
    "RowT",
    "StatLockRow",
    "StatementCountersRow",
    "StatementTextRow",
    "StatementTimesRow",
    "StatementsResetRow",
    "StatsResetRow",
    "TableColumnRow",
    "TableIndexesRow",
    "TableInfo",
    "TransactionCountRow",
    "UniqueKeyColumnRow",
    "ViewRuleRow",
    "WaitHistoryRow",
    "WaitSamplingFeaturesRow",
    "WatchFeaturesRow",
    "column",
    "from_row",
    "row_maker",
]

#: A row dataclass of this module (:func:`row_maker`, :meth:`lockscope.db.Session.query_rows`).
RowT = TypeVar("RowT")


class RowShapeError(DatabaseError):
    """A row lacks a column its row type needs (a lockscope bug: the SQL file and the dataclass disagree)."""


def column(name: str, **kwargs: Any) -> Any:
    """A dataclass field read from the column ``name`` (when the field's name differs, e.g. carries a unit).

    :param kwargs: passed to :func:`dataclasses.field` (``default=...``).
    """
    return dataclasses.field(metadata={"column": name}, **kwargs)


_COLUMNS: dict[type[Any], tuple[tuple[str, str, bool, type[StrEnum] | None], ...]] = {}


def _enum_of(hint: Any) -> type[StrEnum] | None:
    """The StrEnum a field is typed with (``LockMode`` or ``LockMode | None``), else None."""
    for tp in (hint, *typing.get_args(hint)):
        if isinstance(tp, type) and issubclass(tp, StrEnum):
            return tp
    return None


def _columns(row_type: type[Any]) -> tuple[tuple[str, str, bool, type[StrEnum] | None], ...]:
    """(field name, column name, required, the StrEnum its values become) of each field of a row dataclass
    (computed once per type)."""
    found = _COLUMNS.get(row_type)
    if found is None:
        hints = typing.get_type_hints(row_type)
        found = tuple((f.name, str(f.metadata.get("column", f.name)),
                       f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING,
                       _enum_of(hints[f.name]))
                      for f in dataclasses.fields(row_type))
        _COLUMNS[row_type] = found
    return found


def row_maker(row_type: type[RowT], columns: Sequence[str], source: str) -> Callable[[Sequence[Any]], RowT]:
    """A function making one ``row_type`` from one result row's values, for a result with these ``columns``.

    :param row_type: a dataclass of this module (or any dataclass whose fields name the result's columns).
    :param columns: the result's column names, in order (``cursor.description``).
    :param source: the SQL file (stem) the result comes from, for the error message.
    :raises RowShapeError: a column the type needs is not among ``columns``; (when a row is made) a value that is
        not one of its field's enum (:mod:`lockscope.vocab`).
    """
    cls: type[Any] = row_type
    position = {name: i for i, name in enumerate(columns)}
    picks: list[tuple[str, int]] = []
    enums: list[tuple[str, int, type[StrEnum]]] = []
    for name, col, required, enum in _columns(cls):
        if col in position and enum is None:
            picks.append((name, position[col]))
        elif col in position and enum is not None:
            enums.append((name, position[col], enum))
        elif required:
            raise RowShapeError(f"internal: sql/{source}.sql returned no column {col!r} "
                                f"({row_type.__name__} needs it; it returned {sorted(columns)})")

    def make(values: Sequence[Any]) -> RowT:
        kwargs = {name: values[i] for name, i in picks}
        for name, i, enum in enums:
            kwargs[name] = _member(enum, values[i], source, columns[i])
        return cast(RowT, cls(**kwargs))

    return make


def _member(enum: type[StrEnum], value: Any, source: str, col: str) -> StrEnum | None:
    """``value`` as a member of ``enum`` (None stays None).

    :raises RowShapeError: no member has this value.
    """
    if value is None:
        return None
    try:
        return enum(value)
    except ValueError:
        raise RowShapeError(f"internal: sql/{source}.sql returned {value!r} in column {col!r}, not a "
                            f"{enum.__name__}") from None


def from_row(row_type: type[RowT], row: Mapping[str, Any], source: str) -> RowT:
    """One SQL row (column -> value) as a ``row_type`` instance (:func:`row_maker` over one row).

    :param source: the SQL file (stem) the row came from, for the error message.
    :raises RowShapeError: a column the type needs is missing.
    """
    return row_maker(row_type, list(row), source)(list(row.values()))


# -- pg_stat_statements ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class StatementCountersRow:
    """One pg_stat_statements entry's counters, no text (``audit_pgss_snapshot.sql``).

    :ivar queryid: pg_stat_statements queryid; None for an entry of another role whose details are hidden.
    :ivar userid: the role's OID; None when hidden.
    :ivar calls: executions since the last reset (count).
    :ivar plans: plannings (count; only with track_planning), else None.
    :ivar generic_plan_calls: calls that reused a cached generic plan (count; PG 19), else None.
    :ivar custom_plan_calls: calls planned with a custom plan (count; PG 19), else None.
    :ivar total_exec_time_ms: execution time summed over the calls (ms), None when not read.
    :ivar total_plan_time_ms: planning time summed over the plannings (ms; with track_planning), else None.
    :ivar rows: rows returned or affected, summed (count), None when not read.
    """

    queryid: int | None
    userid: int | None
    calls: int
    plans: int | None = None
    generic_plan_calls: int | None = None
    custom_plan_calls: int | None = None
    total_exec_time_ms: float | None = column("total_exec_time", default=None)
    total_plan_time_ms: float | None = column("total_plan_time", default=None)
    rows: int | None = None

    def plus(self, other: StatementCountersRow) -> StatementCountersRow:
        """The two entries' counters summed (the toplevel and nested entries of one statement); a counter
        missing from both stays None."""
        def add(a: Any, b: Any) -> Any:
            return a if b is None else (a or 0) + b

        return dataclasses.replace(
            self, calls=self.calls + other.calls, plans=add(self.plans, other.plans),
            generic_plan_calls=add(self.generic_plan_calls, other.generic_plan_calls),
            custom_plan_calls=add(self.custom_plan_calls, other.custom_plan_calls),
            total_exec_time_ms=add(self.total_exec_time_ms, other.total_exec_time_ms),
            total_plan_time_ms=add(self.total_plan_time_ms, other.total_plan_time_ms),
            rows=add(self.rows, other.rows))


@dataclass(frozen=True)
class StatementTextRow:
    """One pg_stat_statements entry's text and role (``audit_pgss_texts.sql``).

    :ivar queryid: pg_stat_statements queryid.
    :ivar userid: the role's OID.
    :ivar rolname: the role's name, None when the role is gone.
    :ivar query: the normalised text, None when hidden.
    """

    queryid: int
    userid: int
    rolname: str | None
    query: str | None


@dataclass(frozen=True)
class QueryTextRow:
    """A statement text by query identifier (``watch_statements.sql`` from pg_stat_statements,
    ``watch_activity_text.sql`` from pg_stat_activity).

    :ivar query_id: the query identifier (pg_stat_statements queryid = pg_stat_activity query_id).
    :ivar query: its text, at most 1000 characters.
    """

    query_id: int
    query: str


@dataclass(frozen=True)
class ColumnNameRow:
    """One column of a relation (``audit_pgss_columns.sql``: the pg_stat_statements view's columns)."""

    name: str


@dataclass(frozen=True)
class StatsResetRow:
    """When pg_stat_statements was last reset (``audit_pgss_reset.sql``; None when never)."""

    stats_reset: _dt.datetime | None


@dataclass(frozen=True)
class PostmasterAgeRow:
    """Seconds since the postmaster started (``audit_postmaster_age.sql``, column ``s``).

    :ivar age_s: s.
    """

    age_s: float = column("s")


# -- pg_stat_activity ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ActivityRow:
    """One active backend of one sample (``activity_sample.sql``: pg_stat_get_activity, ``state = 'active'``).

    :ivar query_id: pg_stat_activity.query_id (PG 14+ with compute_query_id), else None.
    :ivar datid: the database's OID, None for processes without one.
    :ivar usesysid: the role's OID, None for processes without one.
    """

    pid: int
    backend_type: str | None
    state: str | None
    wait_event_type: str | None
    wait_event: str | None
    query_id: int | None
    datid: int | None
    usesysid: int | None
    application_name: str | None
    xact_start: _dt.datetime | None
    query_start: _dt.datetime | None


@dataclass(frozen=True)
class ProcessRow:
    """One server process, active or not (``wait_sampling_procs.sql``).

    :ivar state: None for auxiliary processes (they report none).
    """

    pid: int
    backend_type: str | None
    state: str | None
    datid: int | None
    usesysid: int | None
    application_name: str | None
    xact_start: _dt.datetime | None
    query_start: _dt.datetime | None


@dataclass(frozen=True)
class NameRow:
    """A database or role name by OID (``watch_names.sql``).

    :ivar kind: ``database`` or ``role``.
    """

    kind: str
    oid: int
    name: str


@dataclass(frozen=True)
class WaitHistoryRow:
    """One pg_wait_sampling history item (``wait_sampling_history.sql``).

    :ivar ts: when the collector recorded it (server time).
    :ivar event_type: wait event type, None on CPU (sample_cpu).
    :ivar queryid: the statement's query identifier (0 when unknown).
    :ivar server_now: the server's ``statement_timestamp()`` of the read.
    :ivar ring_oldest: the oldest item still in the ring (None when empty).
    :ivar ring_items: items in the ring (count).
    """

    pid: int
    ts: _dt.datetime
    event_type: str | None
    event: str | None
    queryid: int | None
    server_now: _dt.datetime
    ring_oldest: _dt.datetime | None
    ring_items: int


@dataclass(frozen=True)
class HeldLocksRow:
    """The granted relation locks of one client backend in a transaction in one pg_locks snapshot
    (``audit_held_locks.sql``).

    :ivar query_id: pg_stat_activity.query_id (PG 14+ with compute_query_id), else None.
    :ivar query: what it runs, or last ran when idle in transaction (its text, with literals).
    :ivar main_table_locks: locks in the main lock table (count; ``NOT fastpath``).
    :ivar fastpath_locks: fast-path locks (count).
    :ivar state: pg_stat_activity.state (``active``, ``idle in transaction``, ...), None when not read.
    :ivar xact_start: the backend's transaction start (pg_stat_activity.xact_start), None when not read.
    :ivar starts_transaction: the statement began the transaction (``xact_start = query_start``: autocommit, or
        BEGIN itself).
    :ivar relations: OIDs of the relations it holds a lock on (distinct), None when not read.
    :ivar main_relations: OIDs of those with a lock in the main lock table (distinct), None when there are none.
    """

    pid: int
    query_id: int | None
    query: str | None
    main_table_locks: int = column("main_table")
    fastpath_locks: int = column("fastpath")
    state: str | None = None
    xact_start: _dt.datetime | None = None
    starts_transaction: bool | None = None
    relations: list[int] | None = None
    main_relations: list[int] | None = None


@dataclass(frozen=True)
class TransactionCountRow:
    """The current database's transactions so far (``audit_xact_counters.sql``).

    :ivar transactions: xact_commit + xact_rollback of pg_stat_database (count).
    """

    transactions: int


@dataclass(frozen=True)
class ForeignKeyRow:
    """A foreign key of a table a transaction held (``diagnose_foreign_keys.sql``).

    :ivar constraint_name: pg_constraint.conname.
    :ivar table_oid: the referencing table (conrelid).
    :ivar referenced_oid: the referenced table (confrelid).
    :ivar referenced_partitioned: the referenced table is partitioned.
    :ivar check_relations: the relations its check can lock: the referenced table, its partitions, their indexes
        (OIDs).
    """

    constraint_name: str
    table_oid: int
    referenced_oid: int
    referenced_partitioned: bool
    check_relations: list[int]


# -- pg_locks --------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class BlockingLockRow:
    """A granted relation lock of another session that conflicts with a probe (``blocking_locks.sql``).

    :ivar relation: the relation's name (``regclass`` text), or its OID as text.
    """

    pid: int
    mode: str
    relation: str


@dataclass(frozen=True)
class BackendLockCountsRow:
    """One backend's relation locks in one pg_locks snapshot (``watch_locks.sql``; counts), and for a client
    backend of the watched database in a transaction (``in_database``) what :class:`HeldLocksRow` has.

    :ivar relation_locks: relation locks held or awaited (count).
    :ivar main_table_locks: of them not fast-path (count; awaited ones included).
    :ivar waiting_locks: of them not granted (count).
    :ivar held_main_table: granted ones in the main lock table (count).
    :ivar held_fastpath: granted fast-path ones (count).
    :ivar in_database: a client backend of the watched database in a transaction, not lockscope's own.
    """

    pid: int
    relation_locks: int
    main_table_locks: int
    waiting_locks: int
    held_main_table: int = column("main_table", default=0)
    held_fastpath: int = column("fastpath", default=0)
    in_database: bool | None = None
    query_id: int | None = None
    query: str | None = None
    state: str | None = None
    xact_start: _dt.datetime | None = None
    starts_transaction: bool | None = None
    relations: list[int] | None = None
    main_relations: list[int] | None = None

    def held(self) -> HeldLocksRow | None:
        """The row as ``audit_held_locks.sql`` gives it, None for a backend outside (``in_database`` false)."""
        if not self.in_database:
            return None
        return HeldLocksRow(self.pid, self.query_id, self.query, self.held_main_table, self.held_fastpath,
                            self.state, self.xact_start, self.starts_transaction, self.relations,
                            self.main_relations)


@dataclass(frozen=True)
class BlockingPidsRow:
    """Who blocks a waiting backend (``watch_blocking.sql``, ``pg_blocking_pids``).

    :ivar blocking_pids: the blockers' pids (None when the backend is gone).
    """

    pid: int
    blocking_pids: list[int] | None


@dataclass(frozen=True)
class BlockingLoopRow:
    """One row of the observer benchmark's loop (``watch_blocking_loop.sql``: ``pg_blocking_pids`` of every
    backend; lockscope itself never runs it).

    :ivar pg_blocking_pids: the backend's blockers (None when it is gone).
    """

    pg_blocking_pids: list[int] | None


@dataclass(frozen=True)
class StatLockRow:
    """PG 19 ``pg_stat_lock`` counters of one lock type (``watch_stat_lock.sql``, ``audit_pg_stat_lock.sql``).

    :ivar fastpath_exceeded: locks that went to the main lock table because their fast-path group was full (count).
    :ivar waits: lock waits longer than deadlock_timeout (count; None where not read).
    """

    locktype: str
    fastpath_exceeded: int | None
    waits: int | None = None


# -- catalog and settings --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class TableInfo:
    """One table-like relation of the audit's catalog (``audit_relations.sql``).

    :ivar oid: pg_class OID.
    :ivar qualified: quoted ``schema.name``.
    :ivar relkind: ``r`` table, ``p`` partitioned table, ``m`` materialized view, ``f`` foreign table.
    :ivar is_partition: True for a partition (of any level).
    :ivar parent_oid: the parent (partitioned table or inheritance parent), or None.
    :ivar partition_bound: ``FOR VALUES ...`` text of a partition, or None.
    :ivar partition_strategy: ``r`` range, ``l`` list, ``h`` hash for a partitioned table, else None.
    :ivar partition_key: ``pg_get_partkeydef`` text, e.g. ``RANGE (event_time)``.
    :ivar reltuples: planner's row estimate (count; 0 when unknown).
    :ivar scans: seq_scan + idx_scan since stats reset (count).
    """

    oid: int
    schema: str
    name: str
    qualified: str
    relkind: str
    is_partition: bool
    parent_oid: int | None
    partition_bound: str | None = None
    partition_strategy: str | None = None
    partition_key: str | None = None
    reltuples: float = 0.0
    scans: int = 0


@dataclass(frozen=True)
class IndexInfo:
    """One index (``audit_indexes.sql``; ``relkind`` ``i``, or ``I`` for a partitioned index).

    :ivar oid: index OID.
    :ivar table_oid: the indexed relation's OID.
    :ivar valid: ``indisvalid`` (False after a failed CREATE INDEX CONCURRENTLY: still locked at planning).
    :ivar live: ``indislive`` (False: being dropped; not in the planner's list).
    :ivar constraint_name: a constraint (PK, unique, exclusion, or foreign key referencing it) using the index.
    :ivar key_columns: ``indnkeyatts`` (count); ``all_columns``: ``indnatts`` including INCLUDE columns.
    :ivar parent_index_oid: the partitioned index this partition index is attached to, or None.
    :ivar idx_scan: scans since stats reset (count); for a partitioned index the sum over its partitions.
    :ivar size_bytes: on-disk size (bytes; 0 for partitioned indexes).
    """

    oid: int
    table_oid: int
    schema: str
    name: str
    qualified: str
    relkind: str
    am: str
    valid: bool
    live: bool
    is_unique: bool
    is_primary: bool
    is_exclusion: bool
    is_replica_identity: bool
    constraint_name: str | None
    key_columns: int
    all_columns: int
    indkey: str
    indclass: str
    indcollation: str
    indoption: str
    expressions: str | None
    predicate: str | None
    parent_index_oid: int | None
    idx_scan: int
    size_bytes: int

    @property
    def protected_reason(self) -> str | None:
        """Why lockscope never proposes dropping this index, or None when it may be dropped."""
        if self.is_primary:
            return "primary key"
        if self.is_replica_identity:
            return "replica identity"
        if self.is_exclusion:
            return "exclusion constraint"
        if self.constraint_name:
            return f"backs constraint {self.constraint_name}"
        if self.is_unique:
            return "unique"
        if self.parent_index_oid is not None:
            return "attached to a partitioned index (drop that one instead)"
        return None

    def signature(self) -> tuple[Any, ...]:
        """What makes two indexes of one table interchangeable: AM, keys, opclasses, collations, options,
        expressions, predicate, INCLUDE columns."""
        return (self.am, self.indkey, self.indclass, self.indcollation, self.indoption, self.expressions,
                self.predicate, self.key_columns, self.all_columns)


@dataclass(frozen=True)
class AuditSettingsRow:
    """Settings and facts beyond :class:`lockscope.db.ServerFacts` (``audit_settings.sql``, one row); settings as
    ``current_setting`` text (None for a setting this server does not have)."""

    enable_partition_pruning: str
    now: _dt.datetime
    postmaster_start: _dt.datetime
    stats_reset: _dt.datetime | None
    pgss_schema: str | None
    read_all_stats: bool
    has_pg_stat_lock: bool
    current_user: str
    database_oid: int
    client_backends: int
    track_planning: str | None
    compute_query_id: str | None


@dataclass(frozen=True)
class WatchFeaturesRow:
    """What a server offers ``lockscope watch`` (``watch_features.sql``, one row).

    :ivar has_stat_lock: PG 19's ``pg_stat_lock`` with ``fastpath_exceeded``.
    :ivar pgss_schema: the pg_stat_statements extension's schema in this database, or None.
    :ivar compute_query_id: the setting (None before PG 14).
    """

    has_stat_lock: bool
    pgss_schema: str | None
    compute_query_id: str | None


@dataclass(frozen=True)
class WaitSamplingFeaturesRow:
    """pg_wait_sampling in this database (``wait_sampling_features.sql``, one row): its schema and version (None
    when not created) and its settings as ``current_setting`` text (None when the library is not preloaded)."""

    schema: str | None
    extversion: str | None
    history_size: str | None
    history_period: str | None
    profile_period: str | None
    profile_queries: str | None
    sample_cpu: str | None


@dataclass(frozen=True)
class TableColumnRow:
    """A column of a table a statement or a trigger function names (``audit_table_columns.sql``).

    :ivar written: the table's name as the statement writes it (resolved by ``to_regclass``).
    :ivar type_name: the column's type as SQL text (``format_type``, with its type modifier).
    :ivar attnum: its ``pg_attribute.attnum`` (1-based).
    """

    written: str
    table_oid: int
    column_name: str
    type_name: str = ""
    attnum: int = 0


@dataclass(frozen=True)
class ColumnStatsRow:
    """What pg_stats knows of one column's values (``audit_column_stats.sql``; text, as ``pg_stats`` shows it).

    :ivar mcv: its most common value, or None.
    :ivar histogram: its histogram bounds, or None.
    """

    table_oid: int
    column_name: str
    mcv: str | None
    histogram: list[str] | None


@dataclass(frozen=True)
class DatabaseFactsRow:
    """The current database (``forecast_database.sql``).

    :ivar active_backends: its other client backends running a statement now (count).
    """

    database_oid: int
    active_backends: int


@dataclass(frozen=True)
class ClassRow:
    """A relation's kind and name by OID (``forecast_relations.sql``, ``forecast_index.sql``).

    :ivar qualified: quoted ``schema.name``.
    :ivar relisshared: a shared catalog (its locks never take the fast path); False where not read
        (``forecast_index.sql``).
    """

    oid: int
    relkind: str
    qualified: str
    relisshared: bool = False


@dataclass(frozen=True)
class OrderRelationRow:
    """A relation a statement names, resolved as the parser would (``order_relations.sql``, one row per name in
    the order given).

    :ivar ord: the name's position (1-based).
    :ivar oid: the relation, None when the name resolves to nothing.
    :ivar relkind: ``pg_class.relkind``, None when unresolved.
    :ivar row_security: row-level security is active for the current user.
    :ivar has_rules: a table or view with rewrite rules other than a view's ``_RETURN``.
    :ivar security_barrier: the view option.
    :ivar columns: its column names in attnum order.
    """

    ord: int
    oid: int | None
    relkind: str | None
    row_security: bool
    has_rules: bool
    security_barrier: bool
    columns: list[str] | None


@dataclass(frozen=True)
class OrderFunctionRow:
    """What parse analysis needs of a function name (``order_functions.sql``; over its visible overloads)."""

    name: str
    is_volatile: bool
    is_aggregate: bool
    is_window: bool
    returns_set: bool


@dataclass(frozen=True)
class ViewRuleRow:
    """A view's stored query (``order_views.sql``).

    :ivar ev_action: the ``_RETURN`` rule's query tree (``pg_rewrite.ev_action`` text).
    :ivar security_barrier: the view option.
    """

    view_oid: int
    ev_action: str
    security_barrier: bool


# -- typing a statement's $n on the client (lockscope.paramtypes) ---------------------------------------------------
@dataclass(frozen=True)
class ParamTypeRow:
    """A data type (``param_types.sql``): what parse analysis reads of it when it chooses types.

    :ivar kind: ``typtype``: b base, p pseudo, e enum, r range, m multirange, d domain.
    :ivar category: ``typcategory`` (one letter: N numeric, S string, A array, D date/time, ...).
    :ivar element: the element type's OID of a true array, else 0.
    :ivar array_type: the array type's OID over this type, else 0.
    :ivar base_type: a domain's base type OID, else 0.
    :ivar range_subtype: a range's subtype OID, else 0.
    :ivar multirange_of: a multirange's range type OID, else 0 (PG 14+).
    :ivar visible: found by an unqualified name under the session's search_path.
    """

    oid: int
    schema_name: str
    name: str
    kind: str
    category: str
    preferred: bool
    element: int
    array_type: int
    base_type: int
    range_subtype: int
    multirange_of: int
    visible: bool


@dataclass(frozen=True)
class ParamCastRow:
    """A cast (``param_casts.sql``): ``context`` i/a/e, ``method`` f/i/b as pg_cast spells them."""

    source: int
    target: int
    context: str
    method: str


@dataclass(frozen=True)
class ParamFunctionRow:
    """A function of a name a statement calls (``param_functions.sql``).

    :ivar path_position: 1-based place of its schema in the session's search path, 0 outside it.
    :ivar arg_types: declared input argument type OIDs (``proargtypes``).
    :ivar variadic_type: the variadic element type OID, 0 when not variadic.
    :ivar default_count: input arguments with defaults (count).
    :ivar kind: ``prokind``: f function, a aggregate, w window, p procedure.
    """

    oid: int
    name: str
    schema_name: str
    path_position: int
    arg_types: list[int]
    result_type: int
    returns_set: bool
    variadic_type: int
    default_count: int
    kind: str


@dataclass(frozen=True)
class ParamOperatorRow:
    """An operator of a name a statement uses (``param_operators.sql``; ``kind`` b binary or l prefix, a prefix
    operator's ``left_type`` 0)."""

    oid: int
    name: str
    schema_name: str
    path_position: int
    kind: str
    left_type: int
    right_type: int
    result_type: int


@dataclass(frozen=True)
class ParamColumnRow:
    """A column of a relation a statement names (``param_columns.sql``; ``ord`` the 1-based place of the name in
    the query's parameters, ``attnum`` negative for system columns)."""

    ord: int
    relation_oid: int
    column_name: str
    type_oid: int
    attnum: int


# -- the footprint engine and the acquisition-order model ------------------------------------------------------------
@dataclass(frozen=True)
class RelationLockRow:
    """One relation lock this backend holds, granted (``relation_locks.sql``, one pg_locks read).

    :ivar relation_oid: the locked relation.
    :ivar mode: lock mode as pg_locks spells it.
    :ivar fastpath: pg_locks ``fastpath`` (True = fast-path slot, False = main lock table).
    :ivar shared_catalog: the lock's database is 0 (a shared catalog: never fast-path, lock.c
        ``EligibleForRelationFastPath``).
    :ivar database_oid: the LOCKTAG's database (0 for a shared catalog).
    """

    relation_oid: int
    mode: LockMode
    fastpath: bool
    shared_catalog: bool
    database_oid: int


@dataclass(frozen=True)
class RelationInfoRow:
    """The name and role facts of one relation (``relation_info.sql``; also the first columns of
    ``acquisition_facts.sql``, :class:`AcquisitionFactsRow`).

    :ivar relation: quoted ``schema.name``.
    :ivar relname: the bare name (as EXPLAIN prints it, unquoted).
    :ivar relkind: ``pg_class.relkind``.
    :ivar parent_oid: the indexed table (an index), the inheritance parent (a partition or child), the owner (a TOAST
        table), else None.
    :ivar parent_relkind: the indexed table's relkind (an index), else None.
    :ivar parent_relispartition: the indexed table is a partition.
    :ivar bound: the partition bound as ``pg_get_expr`` prints it (``acquisition_facts.sql`` only), else None.
    :ivar partstrat: ``l``, ``r`` or ``h`` for a partitioned table (``acquisition_facts.sql`` only), else None.
    """

    relation_oid: int
    relation: str
    relname: str
    relkind: str
    relispartition: bool
    parent_oid: int | None
    parent_relkind: str | None
    parent_relispartition: bool
    bound: str | None = None
    partstrat: str | None = None


@dataclass(frozen=True, kw_only=True)
class AcquisitionFactsRow(RelationInfoRow):
    """Catalog facts of one relation of a statement, a descendant or an index of either (``acquisition_facts.sql``).

    :ivar index_oids: live indexes in OID order (``relcache.c RelationGetIndexList``), None for an index.
    :ivar key_types: a partitioned table's key column types (``format_type``; None for an expression column), else
        None.
    :ivar key_collations: their collations (quoted ``schema.name``, None where none), else None.
    """

    index_oids: list[int] | None
    key_types: list[str | None] | None
    key_collations: list[str | None] | None


@dataclass(frozen=True)
class ExecutorIndexRow:
    """An index of a locked table whose name a plan's index scan shows (``executor_indexes.sql``)."""

    index_oid: int
    relname: str
    table_oid: int


@dataclass(frozen=True)
class PreparedCountersRow:
    """Plan counters of one prepared statement (``prepared_counters.sql``; None on PG 13; counts)."""

    generic_plans: int | None
    custom_plans: int | None


@dataclass(frozen=True)
class FunctionVolatilityRow:
    """``pg_proc.provolatile`` of one function (``function_volatility.sql``: ``i``, ``s`` or ``v``)."""

    function_oid: int
    provolatile: str


@dataclass(frozen=True)
class PartitionRankRow:
    """One partition in its parent's bound order, as the server sorts the bound values (``partition_order.sql``)."""

    oid: int


# -- forecast, lab and demo ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ClockRow:
    """The server's ``clock_timestamp()`` (``forecast_clock.sql``)."""

    now: _dt.datetime


@dataclass(frozen=True)
class KcacheSchemaRow:
    """pg_stat_kcache in the current database (``forecast_kcache_schema.sql``; no row without it).

    :ivar kcache_schema: its schema.
    :ivar pgss_schema: pg_stat_statements' schema (None when not created here).
    :ivar linux_hz: the setting ``pg_stat_kcache.linux_hz`` as text (None: the library is not loaded).
    :ivar version: the extension's version (e.g. ``2.2.1``).
    """

    kcache_schema: str
    pgss_schema: str | None
    linux_hz: str | None
    version: str


@dataclass(frozen=True)
class KcacheCpuRow:
    """One statement's CPU recorded by pg_stat_kcache beside its pg_stat_statements wall time
    (``forecast_kcache.sql``).

    :ivar queryid: the query identifier.
    :ivar calls: executions (count).
    :ivar wall_ms: planning + execution time (ms, pg_stat_statements).
    :ivar cpu_s: user + system CPU of planning + execution (s, pg_stat_kcache).
    """

    queryid: int
    calls: int
    wall_ms: float
    cpu_s: float


@dataclass(frozen=True)
class PopulationRow:
    """Client backends that ran a statement since a time or run one now (``forecast_population.sql``; count)."""

    connections: int


@dataclass(frozen=True)
class StatementTimesRow:
    """What pg_stat_statements recorded of one statement (``forecast_statement_times.sql``).

    :ivar calls: executions (count; None when it has no entry).
    :ivar mean_exec_ms: mean execution time (ms), None without calls.
    :ivar mean_plan_ms: mean planning time (ms; with track_planning), else None.
    :ivar plans: plannings (count), None without an entry.
    :ivar total_exec_ms: execution time of every call (ms), None without an entry.
    :ivar total_plan_ms: planning time of every planning (ms; 0 without track_planning), None without an entry.
    """

    calls: int | None
    mean_exec_ms: float | None
    mean_plan_ms: float | None
    plans: int | None
    total_exec_ms: float | None
    total_plan_ms: float | None


@dataclass(frozen=True)
class LabStatementRow:
    """One pg_stat_statements entry of a lab point (``lab_statements.sql``; times in ms, counts).

    :ivar plans: plannings (count; None without track_planning on old extensions).
    """

    query: str
    calls: int
    plans: int | None
    total_plan_ms: float = column("total_plan_time")
    total_exec_ms: float = column("total_exec_time")
    mean_plan_ms: float = column("mean_plan_time")
    mean_exec_ms: float = column("mean_exec_time")
    queryid: int | None = None
    rows: int | None = None
    shared_blks_hit: int | None = None
    shared_blks_read: int | None = None


@dataclass(frozen=True)
class StatementsResetRow:
    """``pg_stat_statements_reset()`` was called (``lab_statements_reset.sql``)."""

    reset: bool


@dataclass(frozen=True)
class ClassNameRow:
    """A relation's name and OID (``lab_ceiling_pool.sql``, ``lab_ceiling_oids.sql``)."""

    relname: str
    oid: int


@dataclass(frozen=True)
class DumpLockRow:
    """A relation ``pg_dump`` of the current database locks (``audit_dump_locks.sql``).

    :ivar oid: pg_class OID.
    :ivar schema: its schema's name.
    :ivar relkind: ``r``, ``p`` (dumped tables) or any relkind of their inheritance children and partitions.
    :ivar any_default: a locked table has a column default (pg_dump then reads pg_attrdef).
    :ivar any_enum: the database has an enum type (pg_dump then reads pg_enum).
    """

    oid: int
    schema: str
    relkind: str
    any_default: bool
    any_enum: bool


@dataclass(frozen=True)
class DemoLoadStateRow:
    """What the contended demo load still needs on a scratch server (``demo_load_state.sql``)."""

    has_accounts: bool
    has_pgss: bool
    pgss_preloaded: bool


# -- execution locks (lockscope.execlocks) and executed runs (lockscope.executed) -----------------------------------
@dataclass(frozen=True)
class ExecTargetRow:
    """A DML target's facts (``exec_target.sql``).

    :ivar index_oids: live indexes, OID order (``RelationGetIndexList``).
    :ivar toast_oid: its TOAST relation, None without one.
    :ivar toast_index_oid: that TOAST relation's index, None without one.
    :ivar partstrat: ``l``, ``r`` or ``h`` for a partitioned table, else None.
    :ivar partition_key_columns: the key's columns (quoted names), None for a key with an expression or no key.
    :ivar ancestor_oids: partitioned ancestors, nearest first (empty for a table that is no partition).
    :ivar default_partition: it is its parent's default partition (``pg_partitioned_table.partdefid``).
    :ivar relpages: its size in pages at the last VACUUM or ANALYZE (``pg_class.relpages``; 0: empty then).
    """

    relation_oid: int
    relation: str
    relkind: str
    index_oids: list[int]
    toast_oid: int | None
    toast_index_oid: int | None
    partstrat: str | None
    partition_key_columns: list[str] | None
    ancestor_oids: list[int]
    default_partition: bool = False
    relpages: int = 0


@dataclass(frozen=True)
class ExecColumnRow:
    """A column of a DML target (``exec_columns.sql``).

    :ivar sequence_oid: the sequence its default or identity calls ``nextval`` on, else None.
    :ivar default_expr: the default's (or generation's) expression as ``pg_get_expr`` prints it, else None.
    :ivar toastable: a value of it can be stored out of line (``attlen`` -1, ``attstorage`` not plain).
    :ivar attlen: bytes of a fixed-width type, -1 for a varlena.
    :ivar attalign: ``pg_attribute.attalign``.
    :ivar attstorage: ``pg_attribute.attstorage``.
    :ivar attcompression: ``pg_attribute.attcompression`` (PG 14+; '' for the default).
    :ivar default_compression: the server's ``default_toast_compression`` (``pglz`` before PG 14).
    """

    attnum: int
    name: str
    type_name: str
    generated: bool
    has_default: bool
    sequence_oid: int | None
    default_expr: str | None = None
    toastable: bool = True
    attlen: int = -1
    attalign: str = "i"
    attstorage: str = "x"
    attcompression: str = ""
    default_compression: str = "pglz"





@dataclass(frozen=True)
class ExecRiTriggerRow:
    """A foreign-key trigger of one relation with its constraint (``exec_ri_triggers.sql``).

    :ivar function_name: the ``ri_triggers.c`` entry point (``RI_FKey_check_ins``, ``RI_FKey_cascade_del``, ...).
    :ivar root_constraint_oid: the constraint its clones descend from (itself when it is no clone).
    :ivar fk_columns: referencing columns, key order, quoted.
    :ivar pk_columns: referenced columns, key order, quoted.
    :ivar pf_operators: ``OPERATOR(schema.op)`` of each column pair (``conpfeqop``).
    :ivar index_oid: the referenced side's unique index (``conindid``).
    :ivar on_update: ``confupdtype``: a no action, r restrict, c cascade, n set null, d set default.
    :ivar on_delete: ``confdeltype``, likewise.
    :ivar match_type: ``confmatchtype``: s simple, f full, p partial.
    :ivar deferred: ``INITIALLY DEFERRED`` (fires at COMMIT).
    :ivar temporal: a PERIOD foreign key (PG 18+).
    """

    trigger_oid: int
    tgname: str
    tgtype: int
    tgenabled: str
    function_name: str
    deferrable: bool
    initially_deferred: bool
    root_constraint_oid: int
    constraint_oid: int
    name: str
    fk_oid: int
    fk_relation: str
    fk_relkind: str
    pk_oid: int
    pk_relation: str
    pk_relkind: str
    fk_columns: list[str]
    fk_types: list[str]
    pk_columns: list[str]
    pk_types: list[str]
    pf_operators: list[str] | None
    index_oid: int
    index_am: str | None
    on_update: str
    on_delete: str
    match_type: str
    deferred: bool
    temporal: bool


@dataclass(frozen=True)
class ExecRowValuesRow:
    """One row a write reaches, found by lockscope's key lookup (``exec_rows.sql``).

    :ivar leaf_oid: the relation (partition) the row is in (``tableoid``).
    :ivar vals: the asked-for columns' values as text, in order (None: NULL).
    :ivar sizes: their stored sizes (bytes, ``pg_column_size``; None for NULL).
    :ivar ext: PG 17+: whether each is stored out of line (``pg_column_toast_chunk_id``), else None.
    """

    leaf_oid: int
    vals: list[str | None]
    sizes: list[int | None]
    ext: list[bool | None] | None


@dataclass(frozen=True)
class UniqueKeyColumnRow:
    """One column of a unique index (``exec_unique_keys.sql``).

    :ivar plain: the index has no expression and no predicate.
    :ivar column_name: the column ('' for an expression).
    """

    index_oid: int
    plain: bool
    column_name: str


@dataclass(frozen=True)
class PartitionTreeRow:
    """A relation of a partition tree (``exec_partition_tree.sql``).

    :ivar level: 0 for the root, 1 for its partitions, ...
    """

    relation_oid: int
    relname: str
    is_leaf: bool
    level: int


@dataclass(frozen=True)
class OrdinalOidRow:
    """A name resolved to an OID, by its place in the list asked for (``exec_relations.sql``; None: no such
    relation)."""

    ord: int
    relation_oid: int | None


@dataclass(frozen=True)
class ExecutedLockRow:
    """One lock-table entry a backend holds, granted (``executed_locks.sql``, read on scratch servers).

    :ivar locktype: pg_locks ``locktype`` (``relation``, ``transactionid``, ``object``, ...).
    :ivar relation_oid: the relation for a relation lock, else None.
    :ivar database_oid: the LOCKTAG's database where it has one (0 for a shared catalog), else None.
    """

    locktype: str
    relation_oid: int | None
    mode: LockMode
    fastpath: bool
    database_oid: int | None

@dataclass(frozen=True)
class MigrationLockRow:
    """One shared lock-table entry a backend holds outside the fast path, its modes folded (``migration_locks.sql``).

    :ivar locktype: pg_locks ``locktype`` (``relation``, ``object``, ``transactionid``, ...).
    :ivar relation_oid: the relation for a relation lock, else None.
    :ivar modes: the modes held on the object (pg_locks ``mode`` names).
    """

    locktype: str
    relation_oid: int | None
    modes: list[str]


@dataclass(frozen=True)
class MigrationEntriesRow:
    """The shared lock-table entries a backend holds outside the fast path, counted (``migration_lock_count.sql``).

    :ivar entries: count of distinct locked objects.
    """

    entries: int


@dataclass(frozen=True)
class OidListRow:
    """A list of OIDs (``migration_relation_oids.sql``).

    :ivar oids: the OIDs.
    """

    oids: list[int]


@dataclass(frozen=True)
class LeafPartitionRow:
    """A leaf partition of a partitioned table (``migration_leaf_partitions.sql``).

    :ivar relation: quoted ``schema.name``.
    :ivar parent: its parent's, quoted.
    :ivar bound: ``FOR VALUES ...`` as ``pg_get_expr`` prints it.
    """

    relation_oid: int
    relation: str
    parent: str
    bound: str


@dataclass(frozen=True)
class TableIndexesRow:
    """A table's indexes (``migration_table_indexes.sql``).

    :ivar relation_oid: the table.
    :ivar oids: its indexes' OIDs.
    """

    relation_oid: int
    oids: list[int]


@dataclass(frozen=True)
class HeldEntriesRow:
    """The shared lock-table entries other sessions hold (``budget_held_entries.sql``).

    :ivar entries: count of distinct locked objects outside the fast path.
    """

    entries: int



@dataclass(frozen=True)
class OrdinalValueRow:
    """A value by its place in the list asked for (``exec_column_samples.sql``; None: no statistics)."""

    ord: int
    value: str | None



# -- the statements of triggers --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ExecTriggerRow:
    """One user trigger of a table and its function (``exec_triggers.sql``; foreign-key and other constraint-made
    triggers left out).

    :ivar tgtype: ``pg_trigger.tgtype``, the ``pg_trigger.h TRIGGER_TYPE_*`` bits (ROW 1, BEFORE 2, INSERT 4,
        DELETE 8, UPDATE 16, TRUNCATE 32, INSTEAD 64).
    :ivar tgenabled: ``O`` (origin and local), ``R`` (replica), ``A`` (always), ``D`` (disabled).
    :ivar tgattr: the ``UPDATE OF`` columns' attnums (empty: any UPDATE).
    :ivar tgattr_names: the same columns' names, in that order.
    :ivar has_when: it has a ``WHEN`` condition (``tgqual``).
    :ivar triggerdef: ``pg_get_triggerdef`` of a trigger with a ``WHEN`` condition (its condition as SQL), else None.
    :ivar constraint_trigger: a ``CREATE CONSTRAINT TRIGGER``.
    :ivar old_table: ``REFERENCING OLD TABLE AS`` name, else None.
    :ivar new_table: ``REFERENCING NEW TABLE AS`` name, else None.
    :ivar table_name: the table's ``regclass`` text (qualified when not on the session's ``search_path``).
    :ivar language: ``pg_language.lanname`` of the function.
    :ivar prosrc: the function's source (its body; the C symbol for a C function).
    :ivar proconfig: the function's ``SET`` options (``search_path=...``), else None.
    :ivar argument_names: ``pg_proc.proargnames`` (None: none named; trigger functions take no arguments).
    :ivar argument_types: the argument types (``format_type``), in order.
    :ivar variable_conflict: the session's ``plpgsql.variable_conflict`` when set, else None (``error``).
    """

    trigger_oid: int
    tgname: str
    tgtype: int
    tgenabled: str
    tgattr: list[int]
    tgattr_names: list[str]
    has_when: bool
    constraint_trigger: bool
    deferrable: bool
    initially_deferred: bool
    old_table: str | None
    new_table: str | None
    table_oid: int
    table_name: str
    function_oid: int
    function_name: str
    function_schema: str
    language: str
    prosrc: str
    proconfig: list[str] | None
    argument_names: list[str] | None
    argument_types: list[str]
    variable_conflict: str | None
    triggerdef: str | None = None


@dataclass(frozen=True)
class PrivilegeGapRow:
    """A privilege a statement's EXPLAIN needs that the session's role lacks (``privilege_gaps.sql``).

    :ivar relation_oid: the relation.
    :ivar relation: quoted ``schema.name``.
    :ivar relkind: ``pg_class.relkind``.
    :ivar privilege: ``SELECT``, ``INSERT``, ``UPDATE`` or ``DELETE``.
    :ivar some_columns: the role holds the privilege on some of the relation's columns.
    :ivar schema_usage: the role may use the relation's schema.
    """

    relation_oid: int
    relation: str
    relkind: str
    privilege: str
    some_columns: bool
    schema_usage: bool


@dataclass(frozen=True)
class ExplainHelperRow:
    """The EXPLAIN helper function as the catalog shows it (``explain_helper.sql``).

    :ivar function_oid: its OID.
    :ivar security_definer: it runs with its owner's privileges.
    :ivar may_execute: the session's role may call it.
    :ivar owner: its owner's role name.
    """

    function_oid: int
    security_definer: bool
    may_execute: bool
    owner: str


@dataclass(frozen=True)
class PartitionKeyRow:
    """A partitioned table's key (``partition_keys.sql``).

    :ivar relation_oid: the partitioned table.
    :ivar partstrat: ``l``, ``r`` or ``h``.
    :ivar key_columns: column names in key order (None for an expression).
    :ivar key_types: ``format_type`` of each (None for an expression).
    :ivar key_collations: quoted collation of each, None where none.
    """

    relation_oid: int
    partstrat: str
    key_columns: list[str | None]
    key_types: list[str | None]
    key_collations: list[str | None]


@dataclass(frozen=True)
class PartitionMatchRow:
    """A key value's partition (``partition_match.sql``, ``partition_hash_match.sql``).

    :ivar value_index: the value's position in the values given (1-based).
    :ivar partition_oid: a partition that holds it.
    """

    value_index: int
    partition_oid: int


@dataclass(frozen=True)
class DatabaseOidRow:
    """This database's OID (``database_oid.sql``)."""

    database_oid: int


@dataclass(frozen=True)
class UserFunctionRow:
    """A function a statement calls that is not built in (``user_functions.sql``)."""

    name: str


@dataclass(frozen=True)
class FunctionImmutabilityRow:
    """Whether the functions of one name are immutable (``function_immutability.sql``).

    :ivar name: the function name.
    :ivar all_immutable: every overload is.
    :ivar some_immutable: at least one is.
    """

    name: str
    all_immutable: bool
    some_immutable: bool
