"""PostgreSQL 19 features on a real 19 server (19rc1 from Debian experimental, tests/fix_versions.py):
``pg_stat_lock.fastpath_exceeded`` against the measured footprints (warm and fresh sessions, the flush rules) and
through ``watch`` (live state, recording, report, Prometheus); pg_stat_statements ``generic_plan_calls`` /
``custom_plan_calls`` against the prepared executions and through ``audit``; the default max_locks_per_transaction
128.

The server: max_locks_per_transaction 16 (one fast-path group of 16 slots), autovacuum off (an autovacuum worker
analysing a table with 91 indexes would overflow the fast path too and move the server-wide counter).

What ``fastpath_exceeded`` counts (``lock.c LockAcquireExtended``): every weak relation lock request, not
already held, whose fast-path group is full (``FastPathLocalUseCounts[group] >= FP_LOCK_SLOTS_PER_GROUP``), i.e.
the statement's spilled locks, and also the transient catalog locks that relcache/catcache builds take and release
while the group is full. A backend adds to a local pending count (``pgstat_lock.c``) and flushes it (``pgstat.c
pgstat_report_stat``) at the end of a transaction at most once per ``PGSTAT_MIN_INTERVAL`` (1 s), else when it has
been idle ``PGSTAT_IDLE_INTERVAL`` (10 s), or at once after ``pg_stat_force_next_flush()``.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from prometheus_client.parser import text_string_to_metric_families
from rich.console import Console

from lockscope.capacity import CapacityModel
from lockscope.db import connect, run_script
from lockscope.footprint import measure_footprint
from lockscope.report.watch_html import recording_html
from lockscope.report.watch_terminal import LiveHeader, render_live, render_recording
from lockscope.server import ScratchServer, ScratchSettings
from lockscope.versions import PG19, default_max_locks_per_transaction
from lockscope.watch.engine import WatchConfig, Watcher
from lockscope.watch.prometheus import PrometheusExporter
from lockscope.watch.recorded import load_summary

from .fix_versions import bin_dir_of
from .helpers import run

#: The probe table: a primary key and 90 extra indexes. ``select * from fx where id = 1`` plans with all 91
#: indexes locked: 92 relation locks, 16 fast-path, 76 in the main lock table at mlpt 16.
EXTRA_INDEXES = 90
PROBE = "select * from fx where id = 1"
FILL_TABLES = 16
SCHEMA = (
    "create table fx (id int primary key, v int);"
    + "".join(f"create index fx_i{i} on fx (v);" for i in range(EXTRA_INDEXES))
    + "insert into fx values (1, 1);"
    + "".join(f"create table fill{i} ();" for i in range(FILL_TABLES))
    + "create table k0 (id int primary key, v int); create table k1 (id int primary key, v int);"
    + "create index k1_v on k1 (v); create table k30 (id int primary key, v int);"
    + "".join(f"create index k30_v{i} on k30 (v);" for i in range(30))
    + "create table gp (id int primary key, v int);"
    + "".join(f"create index gp_v{i} on gp (v);" for i in range(20))
    + "insert into gp select g, g from generate_series(1, 1000) g; analyze gp;"
    + "create extension pg_stat_statements;"
)


@pytest.fixture(scope="module")
def pg19() -> Iterator[ScratchServer]:
    server = ScratchServer(bin_dir_of(19), ScratchSettings(max_locks_per_transaction=16,
                                                           extra={"autovacuum": "off"}))
    if server.major != 19:
        pytest.fail(f"{server.bin_dir} is PostgreSQL {server.major}, not 19", pytrace=False)
    with server:
        run_script(server.conninfo(), SCHEMA)
        yield server


class Counter:
    """``sum(fastpath_exceeded)`` of pg_stat_lock (locktype relation), read from one warm autocommit session."""

    def __init__(self, conninfo: str) -> None:
        self.conn = psycopg.connect(conninfo, autocommit=True)

    def read(self) -> int:
        row = self.conn.execute("select fastpath_exceeded::int8 from pg_stat_lock "
                                "where locktype = 'relation'").fetchone()
        assert row is not None
        return int(row[0])

    def settled(self, previous: int, timeout_s: float = 3.0) -> int:
        """The counter once a forced flush has reached shared memory (it moves once, then stays)."""
        deadline = time.monotonic() + timeout_s
        value = self.read()
        while value == previous and time.monotonic() < deadline:
            time.sleep(0.05)
            value = self.read()
        return value

    def close(self) -> None:
        self.conn.close()


@pytest.fixture()
def counter(pg19: ScratchServer) -> Iterator[Counter]:
    c = Counter(pg19.conninfo())
    yield c
    c.close()


def _client(server: ScratchServer) -> psycopg.Connection:
    """A client session that runs every statement unprepared (psycopg would prepare a statement from its 5th
    execution: a reused generic plan takes no index locks, and the counter would stop moving)."""
    return psycopg.connect(server.conninfo(), autocommit=True, prepare_threshold=None)


def _run_and_flush(conn: psycopg.Connection, sql: str, *, fill: bool = False) -> None:
    if fill:  # fill the fast-path group first: every further weak lock request of the transaction is counted
        conn.execute("begin")
        for i in range(FILL_TABLES):
            conn.execute(f"lock table fill{i} in access share mode")
    conn.execute(sql).fetchall()
    if fill:
        conn.execute("commit")
    conn.execute("select pg_stat_force_next_flush()")  # flushed at the end of this statement


def test_default_mlpt_128_is_8_groups(pg19: ScratchServer) -> None:
    """PG 19's own default max_locks_per_transaction is 128 (8 groups of 16 slots); lockscope's model says so."""
    with psycopg.connect(pg19.conninfo(), autocommit=True) as conn:
        row = conn.execute("select boot_val, setting from pg_settings "
                           "where name = 'max_locks_per_transaction'").fetchone()
    assert row == ("128", "16")  # the built-in default; this server runs with 16
    assert default_max_locks_per_transaction(PG19) == 128
    assert CapacityModel(190000, 128).groups == 8 and CapacityModel(190000, 128).slots == 128
    with connect(pg19.conninfo()) as session:
        assert session.facts.major == 19
        assert session.facts.capacity.groups == 1  # this server runs with mlpt 16


def test_warm_session_counts_exactly_the_spilled_locks(pg19: ScratchServer, counter: Counter) -> None:
    """In a warm session (caches built), each execution adds exactly the statement's main-table locks, as the
    footprint measures them from pg_locks: 92 locks, 16 fast-path, 76 spilled."""
    with connect(pg19.conninfo()) as session:
        e = measure_footprint(session, PROBE).executions[0]
    assert (e.lock_count, e.fastpath_count, e.main_table_count) == (EXTRA_INDEXES + 2, 16, EXTRA_INDEXES - 14)
    with _client(pg19) as conn:
        _run_and_flush(conn, PROBE)  # warm the caches
        time.sleep(0.3)
        deltas = []
        for _ in range(3):
            before = counter.read()
            _run_and_flush(conn, PROBE)
            deltas.append(counter.settled(before) - before)
    assert deltas == [e.main_table_count] * 3


def test_fresh_session_adds_catalog_locks(pg19: ScratchServer, counter: Counter) -> None:
    """A new session's first execution also counts the catalog locks its relcache/catcache builds take while the
    group is full: each index opened by the planner after the group filled builds its relcache entry, taking and
    releasing 8 catalog locks (relcache.c: ScanPgRelation pg_class + pg_class_oid_index, RelationBuildTupleDesc
    pg_attribute + its index, RelationInitIndexAccessInfo's INDEXRELID syscache miss pg_index + its index, and
    RelationGetIndexAttOptions' ATTNUM syscache miss pg_attribute + its index). None of them shows in pg_locks
    afterwards: they are released at once."""
    before = counter.read()
    with _client(pg19) as fresh:
        _run_and_flush(fresh, PROBE)
    fresh_delta = counter.settled(before) - before
    before = counter.read()
    with _client(pg19) as warm:
        _run_and_flush(warm, PROBE)
        time.sleep(0.3)
        before = counter.read()
        _run_and_flush(warm, PROBE)
        warm_delta = counter.settled(before) - before
    assert warm_delta == EXTRA_INDEXES - 14
    # index 15 fills the group (table + 15 indexes = 16 slots): the relcache builds of indexes 15..91 spill 8
    # catalog locks each, plus a few later catalog lookups of a first query
    assert fresh_delta - warm_delta >= 8 * (EXTRA_INDEXES + 1 - 14)
    assert fresh_delta - warm_delta <= 8 * (EXTRA_INDEXES + 1 - 14) + 40

    # the same, exactly, with the group filled before the statement: everything is counted, so a fresh session's
    # count minus a warm one's is all of its catalog lock requests; one more index costs 1 + 8 in a fresh
    # session and 1 in a warm one
    def fresh_filled(sql: str) -> int:
        start = counter.read()
        with _client(pg19) as conn:
            _run_and_flush(conn, sql, fill=True)
        return counter.settled(start) - start

    def warm_filled(sql: str) -> int:
        with _client(pg19) as conn:
            _run_and_flush(conn, sql, fill=True)
            time.sleep(0.3)
            start = counter.read()
            _run_and_flush(conn, sql, fill=True)
            return counter.settled(start) - start

    f0, f1, f30 = (fresh_filled(f"select * from {t} where id = 1") for t in ("k0", "k1", "k30"))
    w0, w1, w30 = (warm_filled(f"select * from {t} where id = 1") for t in ("k0", "k1", "k30"))
    assert (w0, w1, w30) == (2, 3, 32)  # the statement's own locks: table, primary key, extra indexes
    assert (f1 - f0, f30 - f0) == (1 + 8, 30 * (1 + 8))
    assert f0 - w0 > 50  # a first query's catalog lookups (parser, planner): dozens of transient locks


def test_counts_arrive_at_most_once_a_second_per_backend(pg19: ScratchServer, counter: Counter) -> None:
    """pgstat.c pgstat_report_stat: a backend flushes at the end of a transaction only when its last flush is
    1 s old or more (PGSTAT_MIN_INTERVAL); a second execution right after the first stays pending (until the
    next transaction 1 s later, 10 s of idleness, or pg_stat_force_next_flush)."""
    with _client(pg19) as conn:
        _run_and_flush(conn, PROBE)
        time.sleep(1.2)
        before = counter.read()
        conn.execute(PROBE).fetchall()  # flushed at once: the last flush is > 1 s old
        conn.execute(PROBE).fetchall()  # pending
        first = counter.settled(before) - before
        time.sleep(0.5)
        assert counter.read() - before == first == EXTRA_INDEXES - 14
        conn.execute("select pg_stat_force_next_flush()")
        assert counter.settled(before + first) - before == 2 * (EXTRA_INDEXES - 14)


# -- watch ------------------------------------------------------------------------------------------------------
def test_watch_records_and_exports_fastpath_exceeded(pg19: ScratchServer, tmp_path: Path) -> None:
    """A workload of warm sessions spilling 76 locks per execution while watch records and exports: the
    recording's, the report's, the live state's and Prometheus' fastpath_exceeded all equal 76 x executions."""
    clients = 3
    conns = [_client(pg19) for _ in range(clients)]
    for conn in conns:
        _run_and_flush(conn, PROBE)  # caches built before the watch starts
    time.sleep(1.2)
    record = tmp_path / "pg19.db"
    watcher = Watcher(WatchConfig(pg19.conninfo(), hz=10, record_path=record, source="activity"))
    exporter = PrometheusExporter(watcher.state, "127.0.0.1", 0)
    executions = [0] * clients
    stop = threading.Event()

    def work(i: int) -> None:
        while not stop.is_set():
            conns[i].execute(PROBE).fetchall()
            executions[i] += 1
            time.sleep(0.02)
        conns[i].execute("select pg_stat_force_next_flush()")

    try:
        watcher.start()
        time.sleep(1.5)  # the first pg_stat_lock read is the baseline
        threads = [threading.Thread(target=work, args=(i,)) for i in range(clients)]
        for t in threads:
            t.start()
        time.sleep(3.0)
        live_rate = watcher.state.fastpath_exceeded_per_s
        stop.set()
        for t in threads:
            t.join(10)
        time.sleep(2.5)  # two more reads after the final flushes
        with urllib.request.urlopen(exporter.url, timeout=10) as resp:
            text = resp.read().decode()
        console = Console(record=True, width=200)
        console.print(render_live(watcher.state, LiveHeader("pg19", 10, None, str(record), exporter.url,
                                                            time.monotonic())))
        live = console.export_text()
    finally:
        stop.set()
        watcher.stop()
        exporter.close()
        for conn in conns:
            conn.close()
    assert watcher.error is None
    total = (EXTRA_INDEXES - 14) * sum(executions)
    assert sum(executions) > 20
    assert watcher.state.has_stat_lock
    assert watcher.state.fastpath_exceeded_total.get("relation") == total
    assert live_rate is not None and live_rate > 0
    assert f"{total:,} since start" in live and "catalog locks" in live
    metrics = {(s.name, tuple(sorted((k, v) for k, v in s.labels.items() if k != "server"))): s.value
               for fam in text_string_to_metric_families(text) for s in fam.samples}
    assert metrics[("lockscope_stat_lock_fastpath_exceeded_total", (("locktype", "relation"),))] == total
    report = load_summary(record)
    assert report.fastpath_exceeded_total == total
    assert max(v for _, v in report.fastpath_exceeded) > 0
    console = Console(record=True, width=250)
    console.print(render_recording(report))
    assert f"{total:,} in the recording" in console.export_text()
    html = recording_html(report)
    assert f"{total:,} in the recording" in html and "catalog locks" in html
    proc = run("report", str(record))
    assert proc.returncode == 0, proc.stderr
    assert "fastpath_exceeded" in proc.stdout


# -- audit: generic_plan_calls / custom_plan_calls ---------------------------------------------------------------
def test_plan_calls_match_prepared_executions_and_audit_shows_them(pg19: ScratchServer, tmp_path: Path) -> None:
    """A prepared statement executed 8 times in plan_cache_mode auto: 5 custom plans, then the generic plan built
    (execution 6) and reused: pg_stat_statements generic_plan_calls 3, custom_plan_calls 5, as lockscope's own
    footprint phases say; the audit's JSON and terminal report carry both and weight the spilled locks per call
    by them (custom plan: 22 locks, 6 spilled; reused generic plan: none spilled)."""
    sql = "select * from gp where id = $1"
    run_script(pg19.conninfo(), "select pg_stat_statements_reset()")
    with connect(pg19.conninfo()) as session:
        fp = measure_footprint(session, sql, params=["7"], protocol="prepared", executions=8)
    assert [e.phase for e in fp.executions] == ["custom"] * 5 + ["generic-build"] + ["generic-reuse"] * 2
    assert [e.plan_type for e in fp.executions] == ["custom"] * 5 + ["generic"] * 3
    run_script(pg19.conninfo(), "select pg_stat_statements_reset()")
    with psycopg.connect(pg19.conninfo(), autocommit=True, prepare_threshold=0) as conn:
        for i in range(8):
            conn.execute("select * from gp where id = %s", [i + 1]).fetchall()
    with psycopg.connect(pg19.conninfo(), autocommit=True) as conn:
        rows = conn.execute("select calls, generic_plan_calls, custom_plan_calls from pg_stat_statements "
                            "where query = 'select * from gp where id = $1'").fetchall()
    assert rows == [(8, 3, 5)]
    out = tmp_path / "audit.json"
    proc = run("audit", "--dsn", pg19.conninfo(), "--interval", "0", "--unused-days", "0", "--probe-rate", "0",
               "--json", str(out), extra_env={"COLUMNS": "250"})
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    items = [s for s in doc["statements"]["items"] if s["query"] == "select * from gp where id = $1"]
    assert len(items) == 1
    item = items[0]
    assert (item["calls"], item["generic_plan_calls"], item["custom_plan_calls"]) == (8, 3, 5)
    assert item["basis"] == "plan counters"
    assert item["phase_split"]["reused_fraction"] == pytest.approx(3 / 8)
    # custom plan: gp + its primary key + 20 indexes planned = 22 locks, 6 spilled (16 slots); the reused generic
    # plan: gp and the primary key only (executor locks + the scanned index), none spilled
    assert (item["custom"]["locks"], item["custom"]["spilled"]) == (22, 6)
    assert item["generic_reuse"]["spilled"] == 0
    assert item["spilled_per_call"] == pytest.approx(30 / 8)  # 5 planned calls spill 6, 3 reuses none
    assert "generic/custom calls" in proc.stdout and "3/5" in proc.stdout


def test_audit_catalog_flags_pg_stat_lock_on_19(pg19: ScratchServer) -> None:
    """The audit sees PG 19's pg_stat_lock (catalog flag) and reads its counter."""
    from lockscope.catalog import read_settings

    with connect(pg19.conninfo()) as session:
        settings = read_settings(session)
    assert settings.has_pg_stat_lock is True



def test_footprint_at_19s_own_default() -> None:
    """A scratch 19 started with PostgreSQL's own default (ScratchSettings(None), as ``footprint`` does without
    --mlpt) runs with 128 = 8 groups; the probe's 92 relation locks spread over the groups by FAST_PATH_REL_GROUP
    and all fit, as the model predicts with the real OIDs."""
    with ScratchServer(bin_dir_of(19), ScratchSettings(max_locks_per_transaction=None)) as server:
        run_script(server.conninfo(), SCHEMA.split("create table fill0")[0])
        with connect(server.conninfo()) as session:
            assert session.facts.max_locks_per_transaction == 128
            assert (session.facts.capacity.groups, session.facts.capacity.slots) == (8, 128)
            e = measure_footprint(session, PROBE).executions[0]
    assert e.lock_count == EXTRA_INDEXES + 2
    assert e.mismatches == ()
    assert e.main_table_count == e.predicted_main_table_count == 0  # 76 spilled at mlpt 16, none at the default
