"""Metric definitions for the monitoring agents DBAs already run (``lockscope export-queries``): lockscope's lock
signals as SQL queries that postgres_exporter or pgwatch run themselves, with no lockscope process.

The SQL lives in ``sql/export_*.sql``; :data:`QUERIES` declares each query's columns (labels and values) once, and
:func:`render` writes them in the agent's own format:

- ``postgres_exporter``: a custom-queries file for ``--extend.query-path`` (each entry: ``query``, ``master:
  true``, ``cache_seconds``, ``runonserver`` for PG 19-only queries, ``metrics`` with LABEL/GAUGE/COUNTER usage);
  the metric names are ``<entry>_<column>``.
- ``pgwatch``: a pgwatch 3 metrics file (``metrics:`` with ``sqls`` by minimum major, ``gauges``,
  ``is_instance_level``, and a ``lockscope`` preset with the recommended intervals); label columns are renamed
  ``tag_<label>`` and ``epoch_ns`` is added, as pgwatch expects.

The YAML is written by hand (SQL as literal block scalars, every other string JSON-quoted, which YAML reads as a
double-quoted scalar), so lockscope needs no YAML library at run time. Pure functions, no I/O but reading the
packaged SQL files.
"""

from __future__ import annotations

import json
import textwrap
from dataclasses import dataclass

from .. import __version__
from ..versions import MIN_SUPPORTED, PG19, major_of

__all__ = ["FORMATS", "QUERIES", "Column", "MetricQuery", "pgwatch_sql", "render"]

#: ``--format`` choices.
FORMATS = ("postgres_exporter", "pgwatch")


@dataclass(frozen=True)
class Column:
    """One result column of a query.

    :ivar name: column name (the SQL's alias).
    :ivar usage: ``LABEL``, ``GAUGE`` or ``COUNTER`` (postgres_exporter's words).
    :ivar description: help text.
    """

    name: str
    usage: str
    description: str


#: The oldest major every exported query runs on (lockscope's oldest supported server).
_OLDEST_MAJOR = major_of(MIN_SUPPORTED)


@dataclass(frozen=True)
class MetricQuery:
    """One exported query.

    :ivar name: metric family prefix (postgres_exporter entry name, pgwatch metric name), ``lockscope_...``.
    :ivar sql: stem of its ``sql/*.sql`` file.
    :ivar description: what it measures and what reading it costs.
    :ivar columns: result columns, labels first.
    :ivar min_major: oldest PostgreSQL major it runs on.
    :ivar interval_s: recommended scrape interval (s): postgres_exporter ``cache_seconds``, pgwatch preset.
    """

    name: str
    sql: str
    description: str
    columns: tuple[Column, ...]
    min_major: int
    interval_s: int

    @property
    def labels(self) -> tuple[str, ...]:
        """Label column names."""
        return tuple(c.name for c in self.columns if c.usage == "LABEL")

    @property
    def text(self) -> str:
        """The query (comment lines removed)."""
        from ..db import load_sql  # psycopg loads when a query is rendered, not when the command's options are

        lines = load_sql(self.sql, self.min_major * 10000).splitlines()
        return "\n".join(ln for ln in lines if not ln.lstrip().startswith("--")).strip()


QUERIES: tuple[MetricQuery, ...] = (
    MetricQuery(
        name="lockscope_locks",
        sql="export_relation_locks",
        description=(
            "Relation locks per database from pg_locks: all, those in the shared main lock table (not fast-path), "
            "those waiting; backends with main-table relation locks, the most one backend holds, and backends "
            "holding more relation locks than their fast-path slots. COST: reading pg_locks takes every backend's "
            "fast-path LWLock and then all 16 lock-partition LWLocks in shared mode while the main lock table is "
            "copied, stalling backends that acquire or release main-table locks: scrape every 60 s or less often."),
        columns=(
            Column("datname", "LABEL", "Database of the backends ('shared': only shared-catalog locks)"),
            Column("relation", "GAUGE", "Relation locks held or awaited"),
            Column("relation_main_table", "GAUGE", "Relation locks in the main lock table (not fast-path)"),
            Column("relation_waiting", "GAUGE", "Relation locks not granted (waiting)"),
            Column("backends_with_main_table", "GAUGE", "Backends holding at least one main-table relation lock"),
            Column("max_backend_main_table", "GAUGE", "Most main-table relation locks held by one backend"),
            Column("backends_over_fastpath_slots", "GAUGE",
                   "Backends holding more relation locks than their fast-path slots"),
        ),
        min_major=_OLDEST_MAJOR,
        interval_s=60,
    ),
    MetricQuery(
        name="lockscope_activity",
        sql="export_activity",
        description=(
            "Active sessions by database and wait event, one snapshot per scrape (average over a range: "
            "avg_over_time; LWLock:LockManager is the lock-manager contention signal). Reads backend status "
            "without heavyweight locks (pg_stat_get_activity, not the view) plus one pg_database lookup."),
        columns=(
            Column("datname", "LABEL", "Database of the session"),
            Column("wait_event_type", "LABEL", "pg_stat_activity.wait_event_type, 'CPU' when not waiting"),
            Column("wait_event", "LABEL", "pg_stat_activity.wait_event, 'CPU' when not waiting"),
            Column("active_sessions", "GAUGE", "Sessions in state 'active' at the scrape"),
        ),
        min_major=_OLDEST_MAJOR,
        interval_s=15,
    ),
    MetricQuery(
        name="lockscope_fastpath",
        sql="export_fastpath",
        description="Fast-path relation-lock slots per backend and max_locks_per_transaction (settings only).",
        columns=(
            Column("slots_per_backend", "GAUGE",
                   "Fast-path relation-lock slots per backend (16 before PostgreSQL 18)"),
            Column("max_locks_per_transaction", "GAUGE", "The max_locks_per_transaction setting"),
        ),
        min_major=_OLDEST_MAJOR,
        interval_s=300,
    ),
    MetricQuery(
        name="lockscope_stat_lock",
        sql="export_stat_lock",
        description=(
            "PostgreSQL 19 pg_stat_lock per lock type: locks that found the fast-path group full "
            "(fastpath_exceeded) and lock waits over deadlock_timeout, cumulative. Cumulative statistics: "
            "no lock-manager cost."),
        columns=(
            Column("locktype", "LABEL", "Lock type (relation, ...)"),
            Column("fastpath_exceeded_total", "COUNTER",
                   "Locks that could not use a fast-path slot because the backend's group was full"),
            Column("waits_total", "COUNTER", "Lock waits longer than deadlock_timeout"),
        ),
        min_major=major_of(PG19),
        interval_s=60,
    ),
)


def _q(text: str) -> str:
    """A YAML double-quoted scalar (JSON string syntax is a subset of it)."""
    return json.dumps(text, ensure_ascii=False)


def _block(text: str, indent: int) -> list[str]:
    pad = " " * indent
    return [pad + ln if ln else "" for ln in text.splitlines()]


def _header(fmt: str, use: str) -> list[str]:
    return [
        f"# lockscope {__version__}: lock-manager metrics for {fmt}, no lockscope process needed.",
        f"# Generated by `lockscope export-queries --format {fmt}`. {use}",
        "# lockscope_locks reads pg_locks, which takes every backend's fast-path LWLock and all 16 lock-partition",
        "# LWLocks (shared) while it copies the main lock table: keep its interval at 60 s or longer.",
        "# Background: docs/monitoring.md in the lockscope repository.",
    ]


def _postgres_exporter() -> str:
    out = _header("postgres_exporter", "Use: postgres_exporter --extend.query-path=FILE")
    for q in QUERIES:
        out += ["", *textwrap.wrap(q.description, 114, initial_indent="# ", subsequent_indent="# "),
                f"{q.name}:", "  query: |"]
        out += _block(q.text, 4)
        out += ["  master: true", f"  cache_seconds: {q.interval_s}"]
        if q.min_major > _OLDEST_MAJOR:
            out.append(f"  runonserver: {_q(f'>={q.min_major}.0.0')}")
        out.append("  metrics:")
        for c in q.columns:
            out += [f"    - {c.name}:", f"        usage: {_q(c.usage)}", f"        description: {_q(c.description)}"]
    return "\n".join(out) + "\n"


def pgwatch_sql(q: MetricQuery) -> str:
    """The query as pgwatch wants it: ``epoch_ns`` first, label columns renamed ``tag_<label>``."""
    cols = ", ".join(f"q.{c.name} AS tag_{c.name}" if c.usage == "LABEL" else f"q.{c.name}" for c in q.columns)
    return (f"SELECT /* lockscope */ (extract(epoch from now()) * 1e9)::int8 AS epoch_ns, {cols}\n"
            f"FROM (\n{q.text}\n) AS q")


def _pgwatch() -> str:
    out = _header("pgwatch", "Use: pgwatch --metrics=FILE (pgwatch 3 YAML), preset 'lockscope'.")
    out += ["", "metrics:"]
    for q in QUERIES:
        gauges = [c.name for c in q.columns if c.usage == "GAUGE"]
        out += [f"  {q.name}:", f"    description: {_q(q.description)}", "    sqls:", f"      {q.min_major}: |"]
        out += _block(pgwatch_sql(q), 8)
        out.append(f"    gauges: [{', '.join(_q(g) for g in gauges)}]")
        out.append("    is_instance_level: true")
    out += ["", "presets:", "  lockscope:",
            f"    description: {_q('lockscope lock-manager signals at the recommended intervals (s)')}",
            "    metrics:"]
    out += [f"      {q.name}: {q.interval_s}" for q in QUERIES]
    return "\n".join(out) + "\n"


def render(fmt: str) -> str:
    """The definitions in format ``fmt`` (one of :data:`FORMATS`), as YAML text.

    :raises ValueError: for another format.
    """
    if fmt == "postgres_exporter":
        return _postgres_exporter()
    if fmt == "pgwatch":
        return _pgwatch()
    raise ValueError(f"unknown format {fmt!r}: choose one of {', '.join(FORMATS)}")
