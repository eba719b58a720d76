"""``lockscope watch --prometheus [HOST:]PORT``: the watch's figures as Prometheus metrics (official
prometheus_client).

A custom collector computes every metric from :class:`~lockscope.watch.engine.WatchState` when Prometheus
scrapes, so exporting costs nothing between scrapes. Naming follows the Prometheus exporter guidelines (the
``lockscope_`` prefix, base units in names, ``_ratio`` for 0..1, ``_total`` on counters), and the signals that
``lockscope export-queries`` also defines have the same names and labels there (one vocabulary,
:data:`SHARED_METRICS`; the postgres_exporter names are ``<query>_<column>``, so the watch follows them).

Labels: ``server`` on every series, ``host:port`` of the PostgreSQL server watched (a Unix-socket directory as
host; no database, no user, no password), the same value postgres_exporter gives its own ``server`` label, so
the two sources join; ``datname`` on the per-session series (the session's database, "" for none); ``queryid``
(pg_stat_statements' queryid) on the per-statement series. SQL text is never a label unless asked for
(``--prometheus-query-text``: ``lockscope_statement_info{queryid,query}``). Cardinality per metric:
docs/monitoring.md.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

from prometheus_client import start_http_server
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector, CollectorRegistry

from .. import __version__
from ..capacity import FP_LOCK_SLOTS_PER_GROUP
from ..errors import BadInputError
from . import DEFAULT_PORT
from .sampler import CPU

if TYPE_CHECKING:
    from .engine import WatchState

__all__ = ["DEFAULT_PORT", "METRIC_NAMES", "SHARED_METRICS", "PrometheusExporter", "WatchCollector", "parse_listen"]

#: The signals both ``lockscope watch --prometheus`` and ``lockscope export-queries`` (postgres_exporter) emit,
#: under these names (tests/test_export_queries.py checks the export side against this list).
SHARED_METRICS = (
    "lockscope_activity_active_sessions",
    "lockscope_locks_relation",
    "lockscope_locks_relation_main_table",
    "lockscope_locks_relation_waiting",
    "lockscope_locks_backends_with_main_table",
    "lockscope_locks_max_backend_main_table",
    "lockscope_locks_backends_over_fastpath_slots",
    "lockscope_fastpath_slots_per_backend",
    "lockscope_fastpath_max_locks_per_transaction",
    "lockscope_stat_lock_fastpath_exceeded_total",
)

#: Every metric name the exporter can emit, as scraped (counters with ``_total``): what the shipped Prometheus
#: rules and Grafana dashboard may reference (tests/test_contrib.py checks them against this list).
METRIC_NAMES = (
    *SHARED_METRICS,
    "lockscope_active_session_samples_total",
    "lockscope_samples_total",
    "lockscope_late_ticks_total",
    "lockscope_sample_rate_hz",
    "lockscope_lockmanager_waiting_sessions",
    "lockscope_lockmanager_share_ratio",
    "lockscope_up",
    "lockscope_gaps_total",
    "lockscope_statement_lockmanager_samples_total",
    "lockscope_statement_info",
    "lockscope_watch_info",
    "lockscope_main_lock_table_held_per_second",
    "lockscope_transactions_per_second",
)
#: Statements exported per scrape (by LockManager samples since the start), and their text's length in labels
#: (``--prometheus-query-text`` only).
TOP_STATEMENTS = 10
QUERY_LABEL_CHARS = 200


def parse_listen(text: str) -> tuple[str, int]:
    """``HOST:PORT``, ``:PORT``, ``PORT`` or ``HOST`` -> (host, port); the host defaults to 127.0.0.1, the port to
    :data:`DEFAULT_PORT`; port 0 picks a free port (shown in the live view).

    :raises BadInputError: for a malformed value or a port outside 0..65535.
    """
    host, sep, port_text = text.rpartition(":")
    if not sep:
        host, port_text = ("", text) if text.strip().isdigit() else (text, str(DEFAULT_PORT))
    elif (host.startswith("[") and not host.endswith("]")) or (host.count(":") and not host.startswith("[")):
        host, port_text = text, str(DEFAULT_PORT)  # a bare IPv6 address
    host = host.strip("[]") or "127.0.0.1"
    try:
        port = int(port_text)
    except ValueError:
        raise BadInputError(f"--prometheus {text!r}: give HOST:PORT or PORT (e.g. 127.0.0.1:{DEFAULT_PORT})") from None
    if not 0 <= port <= 65535:
        raise BadInputError(f"--prometheus {text!r}: port must be between 0 (any free port) and 65535")
    return host, port


def _labels(label: str) -> tuple[str, str]:
    if label == CPU:
        return CPU, CPU
    kind, _, event = label.partition(":")
    return kind, event


def server_label(host: str, port: int) -> str:
    """The ``server`` label: ``host:port`` as postgres_exporter writes it (a Unix-socket directory as host)."""
    return f"{host}:{port}"


class WatchCollector(Collector):
    """Collects the metrics from a :class:`WatchState` at scrape time.

    :param query_text: also export ``lockscope_statement_info{queryid,query}`` (the statements' text).
    """

    def __init__(self, state: WatchState, *, query_text: bool = False) -> None:
        self.state = state
        self.query_text = query_text

    def collect(self) -> Iterator[Metric]:
        """Every metric, computed from the watch state now (the order of the exposition is fixed)."""
        st = self.state
        now = time.time()
        recent = st.window.snapshot(now, recent_s=10.0, top=0, span_s=10)
        minute = st.window.snapshot(now, top=0)
        server = server_label(st.endpoint.host, st.endpoint.port) if st.endpoint is not None else ""
        yield from _session_metrics(st, server, now)
        yield _one(CounterMetricFamily, server, "lockscope_samples", "Samples of pg_stat_activity taken",
                   st.window.total_ticks)
        yield _one(CounterMetricFamily, server, "lockscope_late_ticks", "Ticks skipped because sampling ran late",
                   st.window.total_late_ticks)
        yield _one(GaugeMetricFamily, server, "lockscope_sample_rate_hz",
                   "Samples per second achieved over the last 10 s", recent.achieved_hz)
        yield _one(GaugeMetricFamily, server, "lockscope_lockmanager_waiting_sessions",
                   "Sessions waiting on LWLock:LockManager, averaged over the last 10 s", recent.lockmanager_aas)
        yield _one(GaugeMetricFamily, server, "lockscope_lockmanager_share_ratio",
                   "Fraction of active-session samples waiting on LWLock:LockManager, last 60 s",
                   minute.lockmanager_share)
        yield _one(GaugeMetricFamily, server, "lockscope_up", "1 while sampling works, 0 during a break",
                   1.0 if st.connected else 0.0)
        yield _one(CounterMetricFamily, server, "lockscope_gaps",
                   "Breaks in sampling (connection lost, server restart)", len(st.gaps))
        yield from _lock_metrics(st, server)
        yield from _statement_metrics(st, server, self.query_text)
        yield from _setting_metrics(st, server)


def _one(family: type[GaugeMetricFamily] | type[CounterMetricFamily], server: str, name: str, doc: str,
         value: float) -> Metric:
    """One series labelled ``server`` only."""
    metric = family(name, doc, labels=["server"])
    metric.add_metric([server], value)
    return metric


def _session_metrics(st: WatchState, server: str, now: float) -> Iterator[Metric]:
    """``lockscope_watch_info``, then the active sessions by database and wait event (gauge and counter)."""
    window = st.window
    info = GaugeMetricFamily("lockscope_watch_info", "lockscope watch: version, sample source, server version",
                             labels=["server", "version", "source", "server_version"])
    info.add_metric([server, __version__, st.source, st.server_version], 1.0)
    yield info
    per_session = ["server", "datname", "wait_event_type", "wait_event"]
    gauge = GaugeMetricFamily("lockscope_activity_active_sessions",
                              "Active sessions by database and wait event (watch: averaged over the last 10 s "
                              "of samples)", labels=per_session)
    for (datname, label), aas in sorted(window.aas_by_database(now, 10).items()):
        gauge.add_metric([server, datname, *_labels(label)], aas)
    yield gauge
    counter = CounterMetricFamily("lockscope_active_session_samples",
                                  "Active sessions summed over samples, by database and wait event",
                                  labels=per_session)
    for (datname, label), n in sorted(window.totals_by_database().items()):
        counter.add_metric([server, datname, *_labels(label)], n)
    yield counter


def _lock_metrics(st: WatchState, server: str) -> Iterator[Metric]:
    """``lockscope_locks_*`` from the last pg_locks snapshot (none before the first)."""
    locks = st.locks
    if locks is None:
        return
    backends = locks.backends
    slots = st.fastpath_slots
    for name, doc, value in (
        ("relation", "Relation locks held or awaited, last pg_locks snapshot",
         sum(b.relation_locks for b in backends)),
        ("relation_main_table", "Relation locks in the main lock table (not fast-path), last pg_locks "
         "snapshot", sum(b.main_table_locks for b in backends)),
        ("relation_waiting", "Relation locks not granted (waiting), last pg_locks snapshot",
         sum(b.waiting_locks for b in backends)),
        ("backends_with_main_table", "Backends holding at least one main-table relation lock",
         sum(1 for b in backends if b.main_table_locks)),
        ("max_backend_main_table", "Most main-table relation locks held by one backend",
         max((b.main_table_locks for b in backends), default=0)),
        ("backends_over_fastpath_slots", "Backends holding more relation locks than their fast-path slots",
         sum(1 for b in backends if slots is not None and b.relation_locks > slots)),
    ):
        yield _one(GaugeMetricFamily, server, f"lockscope_locks_{name}", doc, value)
    load = st.transactions
    if load is not None:
        yield _one(GaugeMetricFamily, server, "lockscope_main_lock_table_held_per_second",
                   "Main-lock-table acquisitions per second the watched database's transactions hold: held "
                   "main-table locks per transaction x transactions/s, pg_locks snapshots of the last window",
                   load.held_main_per_s)
        if load.transactions_per_s is not None:
            yield _one(GaugeMetricFamily, server, "lockscope_transactions_per_second",
                       "Transactions (commits and rollbacks) per second of the watched database, same window",
                       load.transactions_per_s)


def _statement_metrics(st: WatchState, server: str, query_text: bool) -> Iterator[Metric]:
    """LockManager samples of the top statements by queryid, and their text when ``query_text``."""
    _, statements = st.window.totals(TOP_STATEMENTS)
    stmt = CounterMetricFamily("lockscope_statement_lockmanager_samples",
                               f"Active-session samples waiting on LWLock:LockManager, top {TOP_STATEMENTS} "
                               "statements by queryid", labels=["server", "queryid"])
    text = GaugeMetricFamily("lockscope_statement_info", "Text of the statements in "
                             "lockscope_statement_lockmanager_samples_total (pg_stat_statements, else "
                             "pg_stat_activity; --prometheus-query-text only)",
                             labels=["server", "queryid", "query"])
    for s in statements:
        if s.query_id is None:
            continue
        stmt.add_metric([server, str(s.query_id)], s.lockmanager_samples)
        if s.text and query_text:
            text.add_metric([server, str(s.query_id), " ".join(s.text.split())[:QUERY_LABEL_CHARS]], 1.0)
    yield stmt
    if query_text:
        yield text


def _setting_metrics(st: WatchState, server: str) -> Iterator[Metric]:
    """Fast-path slots, max_locks_per_transaction and PG 19's pg_stat_lock counter, when known."""
    if st.fastpath_slots is not None:
        yield _one(GaugeMetricFamily, server, "lockscope_fastpath_slots_per_backend",
                   f"Fast-path relation-lock slots per backend ({FP_LOCK_SLOTS_PER_GROUP} before PostgreSQL 18; "
                   f"max_locks_per_transaction rounded to groups of {FP_LOCK_SLOTS_PER_GROUP} from 18)",
                   st.fastpath_slots)
    if st.max_locks_per_transaction is not None:
        yield _one(GaugeMetricFamily, server, "lockscope_fastpath_max_locks_per_transaction",
                   "The max_locks_per_transaction setting", st.max_locks_per_transaction)
    if st.has_stat_lock:
        fp = CounterMetricFamily("lockscope_stat_lock_fastpath_exceeded",
                                 "PG19 pg_stat_lock.fastpath_exceeded: locks that found the fast-path group "
                                 "full (watch: the increase while watching)", labels=["server", "locktype"])
        for locktype, n in sorted(st.fastpath_exceeded_total.items()):
            fp.add_metric([server, locktype], n)
        yield fp


class PrometheusExporter:
    """An HTTP endpoint serving ``/metrics`` from a private registry.

    :param state: the watch state to export.
    :param host: listen address (default 127.0.0.1: metrics stay on the machine unless a host is given).
    :param port: TCP port (default :data:`DEFAULT_PORT`).
    :param query_text: also export the statements' text (``--prometheus-query-text``).
    :raises BadInputError: if the address cannot be bound (in use, not local).
    """

    def __init__(self, state: WatchState, host: str = "127.0.0.1", port: int = DEFAULT_PORT, *,
                 query_text: bool = False) -> None:
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(WatchCollector(state, query_text=query_text))
        self.host = host
        try:
            self._server, self._thread = start_http_server(port, addr=host, registry=self.registry)
        except OSError as exc:
            raise BadInputError(f"--prometheus: cannot listen on {host}:{port}: {exc.strerror or exc}") from None
        self.port = int(self._server.server_address[1])
        self._closed = False

    @property
    def url(self) -> str:
        """The metrics URL."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/metrics"

    def close(self) -> None:
        """Stop serving. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self._server.shutdown()
        self._server.server_close()
