"""``lockscope watch --prometheus HOST:PORT``: the watch's figures as Prometheus metrics (official prometheus_client).

A custom collector computes every metric from :class:`~lockscope.watch.engine.WatchState` when Prometheus
scrapes, so exporting costs nothing between scrapes. Naming follows the Prometheus exporter guidelines: the
``lockscope_`` prefix, base units in names (``_ratio`` for 0..1, ``_hz``), ``_total`` on counters; no
``instance``/``server`` label (Prometheus adds ``instance`` from the scrape target: run one lockscope per server),
``datname`` (the database of the session, "" for none) on the per-session series. Metrics (all prefixed
``lockscope_``):

==========================================================  =======  ============================================
metric                                                      type     meaning
==========================================================  =======  ============================================
``active_sessions{datname,wait_event_type,wait_event}``     gauge    AAS over the last 10 s per database and
                                                                     wait event (not waiting: ``CPU``/``CPU``)
``active_session_samples_total{datname,wait_event_type,      counter  active sessions summed over samples;
wait_event}``                                                        AAS = rate(this) / rate(samples_total)
``samples_total``                                           counter  samples taken
``late_ticks_total``                                        counter  ticks skipped because sampling ran late
``sample_rate_hz``                                          gauge    samples per second achieved (last 10 s)
``lockmanager_waiting_sessions``                            gauge    sessions waiting on LWLock:LockManager,
                                                                     averaged over the last 10 s
``lockmanager_share_ratio``                                 gauge    fraction (0..1) of active-session samples
                                                                     on LWLock:LockManager, last 60 s
``up``                                                      gauge    1 while sampling works, 0 during a break
``gaps_total``                                              counter  breaks in sampling (connection lost)
``relation_locks``                                          gauge    relation locks in the last pg_locks snapshot
                                                                     (only with ``--locks-every``)
``main_table_relation_locks``                               gauge    of those, not fast-path (main lock table)
``max_backend_main_table_relation_locks``                   gauge    most main-table relation locks of one backend
``fastpath_slots_per_backend``                              gauge    fast-path relation-lock slots per backend
                                                                     (16 before PG 18, from max_locks_per_
                                                                     transaction on 18+)
``lock_fastpath_exceeded_total{locktype}``                  counter  PG19 pg_stat_lock.fastpath_exceeded increase
                                                                     seen while watching
``statement_lockmanager_samples_total{query_id}``            counter  active-session samples on LWLock:LockManager
                                                                     of the top :data:`TOP_STATEMENTS` statements
``statement_info{query_id,query}``                          gauge    1; their text (first
                                                                     :data:`QUERY_LABEL_CHARS` characters)
``watch_info{version,source,server_version}``               gauge    1; lockscope version, sample source
                                                                     (activity or pg_wait_sampling), server
==========================================================  =======  ============================================
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

from prometheus_client import start_http_server
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector, CollectorRegistry

from .. import __version__
from ..errors import BadInputError
from .sampler import CPU

if TYPE_CHECKING:
    from .engine import WatchState

__all__ = ["METRIC_NAMES", "PrometheusExporter", "WatchCollector", "parse_listen"]

#: Every metric name the exporter can emit, as scraped (counters with ``_total``): what the shipped Prometheus
#: rules and Grafana dashboard may reference (tests/test_contrib.py checks them against this list).
METRIC_NAMES = (
    "lockscope_active_sessions",
    "lockscope_active_session_samples_total",
    "lockscope_samples_total",
    "lockscope_late_ticks_total",
    "lockscope_sample_rate_hz",
    "lockscope_lockmanager_waiting_sessions",
    "lockscope_lockmanager_share_ratio",
    "lockscope_up",
    "lockscope_gaps_total",
    "lockscope_relation_locks",
    "lockscope_main_table_relation_locks",
    "lockscope_max_backend_main_table_relation_locks",
    "lockscope_fastpath_slots_per_backend",
    "lockscope_lock_fastpath_exceeded_total",
    "lockscope_statement_lockmanager_samples_total",
    "lockscope_statement_info",
    "lockscope_watch_info",
)
#: Statements exported per scrape (by LockManager samples since the start), and their text's length in labels.
TOP_STATEMENTS = 10
QUERY_LABEL_CHARS = 200


def parse_listen(text: str) -> tuple[str, int]:
    """``HOST:PORT``, ``:PORT`` or ``PORT`` -> (host, port); the host defaults to 127.0.0.1, port 0 picks a free
    port (shown in the live view).

    :raises BadInputError: for a malformed value or a port outside 0..65535.
    """
    host, sep, port_text = text.rpartition(":")
    if not sep:
        host, port_text = "", text
    host = host.strip("[]") or "127.0.0.1"
    try:
        port = int(port_text)
    except ValueError:
        raise BadInputError(f"--prometheus {text!r}: give HOST:PORT or PORT (e.g. 127.0.0.1:9187)") from None
    if not 0 <= port <= 65535:
        raise BadInputError(f"--prometheus {text!r}: port must be between 0 (any free port) and 65535")
    return host, port


def _labels(label: str) -> tuple[str, str]:
    if label == CPU:
        return CPU, CPU
    kind, _, event = label.partition(":")
    return kind, event


class WatchCollector(Collector):
    """Collects the metrics from a :class:`WatchState` at scrape time."""

    def __init__(self, state: WatchState) -> None:
        self.state = state

    def collect(self) -> Iterator[Metric]:
        st = self.state
        window = st.window
        now = time.time()
        recent = window.snapshot(now, recent_s=10.0, top=0, span_s=10)
        minute = window.snapshot(now, top=0)
        info = GaugeMetricFamily("lockscope_watch_info", "lockscope watch: version, sample source, server version",
                                 labels=["version", "source", "server_version"])
        info.add_metric([__version__, st.source, st.server_version], 1.0)
        yield info
        gauge = GaugeMetricFamily("lockscope_active_sessions",
                                  "Average active sessions over the last 10 s, by database and wait event",
                                  labels=["datname", "wait_event_type", "wait_event"])
        for (datname, label), aas in sorted(window.aas_by_database(now, 10).items()):
            gauge.add_metric([datname, *_labels(label)], aas)
        yield gauge
        counter = CounterMetricFamily("lockscope_active_session_samples",
                                      "Active sessions summed over samples, by database and wait event",
                                      labels=["datname", "wait_event_type", "wait_event"])
        for (datname, label), n in sorted(window.totals_by_database().items()):
            counter.add_metric([datname, *_labels(label)], n)
        yield counter
        yield CounterMetricFamily("lockscope_samples", "Samples of pg_stat_activity taken",
                                  value=window.total_ticks)
        yield CounterMetricFamily("lockscope_late_ticks", "Ticks skipped because sampling ran late",
                                  value=window.total_late_ticks)
        yield GaugeMetricFamily("lockscope_sample_rate_hz", "Samples per second achieved over the last 10 s",
                                value=recent.achieved_hz)
        yield GaugeMetricFamily("lockscope_lockmanager_waiting_sessions",
                                "Sessions waiting on LWLock:LockManager, averaged over the last 10 s",
                                value=recent.lockmanager_aas)
        yield GaugeMetricFamily("lockscope_lockmanager_share_ratio",
                                "Fraction of active-session samples waiting on LWLock:LockManager, last 60 s",
                                value=minute.lockmanager_share)
        yield GaugeMetricFamily("lockscope_up", "1 while sampling works, 0 during a break",
                                value=1.0 if st.connected else 0.0)
        yield CounterMetricFamily("lockscope_gaps", "Breaks in sampling (connection lost, server restart)",
                                  value=len(st.gaps))
        locks = st.locks
        if locks is not None:
            yield GaugeMetricFamily("lockscope_relation_locks",
                                    "Relation locks held or awaited, last pg_locks snapshot",
                                    value=locks.relation_locks)
            yield GaugeMetricFamily("lockscope_main_table_relation_locks",
                                    "Relation locks in the main lock table (not fast-path), last pg_locks snapshot",
                                    value=locks.main_table_locks)
            yield GaugeMetricFamily("lockscope_max_backend_main_table_relation_locks",
                                    "Most main-table relation locks held by one backend, last pg_locks snapshot",
                                    value=max((b.main_table_locks for b in locks.backends), default=0))
        _, statements = window.totals(TOP_STATEMENTS)
        stmt = CounterMetricFamily("lockscope_statement_lockmanager_samples",
                                   f"Active-session samples waiting on LWLock:LockManager, top {TOP_STATEMENTS} "
                                   "statements by query_id", labels=["query_id"])
        text = GaugeMetricFamily("lockscope_statement_info", "Text of the statements in "
                                 "lockscope_statement_lockmanager_samples_total (pg_stat_statements, else "
                                 "pg_stat_activity)", labels=["query_id", "query"])
        for s in statements:
            if s.query_id is None:
                continue
            stmt.add_metric([str(s.query_id)], s.lockmanager_samples)
            if s.text:
                text.add_metric([str(s.query_id), " ".join(s.text.split())[:QUERY_LABEL_CHARS]], 1.0)
        yield stmt
        yield text
        if st.fastpath_slots is not None:
            yield GaugeMetricFamily("lockscope_fastpath_slots_per_backend",
                                    "Fast-path relation-lock slots per backend (16 before PostgreSQL 18; "
                                    "max_locks_per_transaction rounded to groups of 16 from 18)",
                                    value=st.fastpath_slots)
        if st.has_stat_lock:
            fp = CounterMetricFamily("lockscope_lock_fastpath_exceeded",
                                     "PG19 pg_stat_lock.fastpath_exceeded increase while watching",
                                     labels=["locktype"])
            for locktype, n in sorted(st.fastpath_exceeded_total.items()):
                fp.add_metric([locktype], n)
            yield fp


class PrometheusExporter:
    """An HTTP endpoint serving ``/metrics`` from a private registry.

    :param state: the watch state to export.
    :param host: listen address (default 127.0.0.1).
    :param port: TCP port.
    :raises BadInputError: if the address cannot be bound (in use, not local).
    """

    def __init__(self, state: WatchState, host: str = "127.0.0.1", port: int = 9187) -> None:
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(WatchCollector(state))
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
