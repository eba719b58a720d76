"""``lockscope watch --source pg_wait_sampling`` on a real PostgreSQL 15 with Debian's pg_wait_sampling 1.1.4
(``postgresql-15-pg-wait-sampling``, installed by scripts/test.sh) preloaded: detection, exact session counts from
the in-server history, CPU inference, ring wraps, query ids joining pg_stat_statements, the CLI and the exporter."""

from __future__ import annotations

import itertools
import sqlite3
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from lockscope.db import Session, connect, run_script
from lockscope.errors import StatementError
from lockscope.server import ScratchServer, ScratchSettings
from lockscope.watch.engine import WatchConfig, Watcher
from lockscope.watch.prometheus import PrometheusExporter
from lockscope.watch.sampler import Sample
from lockscope.watch.wait_sampling import (
    WaitSamplingInfo,
    WaitSamplingReader,
    detect,
    installed_in,
    is_session_wait,
    read_interval_s,
    require,
    scratch_preload,
)

from .helpers import one_line_error, run

PG15_BIN = Path("/usr/lib/postgresql/15/bin")


@pytest.fixture(scope="module")
def pgws() -> Iterator[ScratchServer]:
    """PostgreSQL 15 with pg_wait_sampling and pg_stat_statements preloaded and created in ``postgres``."""
    if not installed_in(PG15_BIN):
        pytest.fail("pg_wait_sampling is not installed for PostgreSQL 15: run scripts/test.sh (it installs "
                    "Debian's postgresql-15-pg-wait-sampling)", pytrace=False)
    server = ScratchServer(PG15_BIN, ScratchSettings(extra=scratch_preload(PG15_BIN)))
    with server:
        run_script(server.conninfo(), "create extension pg_wait_sampling; create extension pg_stat_statements")
        yield server


@pytest.fixture()
def sampler_session(pgws: ScratchServer) -> Iterator[Session]:
    with connect(pgws.conninfo(), sampler=True) as session:
        yield session


def _sleepers(conninfo: str, n: int, seconds: float) -> list[threading.Thread]:
    threads = [threading.Thread(target=run_script, args=(conninfo, f"select pg_sleep({seconds})"), daemon=True)
               for _ in range(n)]
    for t in threads:
        t.start()
    return threads


def _read_for(reader: WaitSamplingReader, seconds: float) -> list[Sample]:
    samples: list[Sample] = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        time.sleep(reader.interval_s)
        samples.extend(reader.read())
    return samples


def test_detect(pgws: ScratchServer, pg_old: ScratchServer, sampler_session: Session) -> None:
    info = require(sampler_session)
    assert info == WaitSamplingInfo(schema="public", extversion="1.1", history_size=5000, history_period_ms=10,
                                    profile_period_ms=10, profile_queries="on", sample_cpu=None)
    assert info.cpu_inferred
    assert info.describe() == "pg_wait_sampling 1.1 (history every 10 ms, ring 5000 items, CPU inferred)"
    # another database of the same server: the extension is not created there
    run_script(pgws.conninfo(), "drop database if exists ws_other; create database ws_other")
    with connect(pgws.conninfo("ws_other"), sampler=True) as other:
        got, reason = detect(other)
        assert got is None and "not created in this database" in reason
    # created but not preloaded (the plain PG 15 test server): its GUCs do not exist
    run_script(pg_old.conninfo(), "drop database if exists ws_nopreload; create database ws_nopreload")
    try:
        run_script(pg_old.conninfo("ws_nopreload"), "create extension pg_wait_sampling")
        with connect(pg_old.conninfo("ws_nopreload"), sampler=True) as session:
            got, reason = detect(session)
            assert got is None and "shared_preload_libraries" in reason
    finally:
        run_script(pg_old.conninfo(), "drop database ws_nopreload")


def test_rules_without_server() -> None:
    info = WaitSamplingInfo("public", "1.1", 5000, 10, 10, "on", None)
    # 5000 items / 20 per walk = 250 walks = 2.5 s; a third of that, capped at 0.5 s
    assert read_interval_s(info, 20) == 0.5
    assert read_interval_s(info, 50) == pytest.approx(1.0 / 3)  # 100 walks = 1 s
    assert read_interval_s(info, 200) == 0.1  # 25 walks = 0.25 s: a third is below the 0.1 s floor
    assert read_interval_s(WaitSamplingInfo("public", "1.1", 100, 10, 10, "on", None), 10) == 0.1
    assert is_session_wait(None, None) and is_session_wait("LWLock", "LockManager")
    assert is_session_wait("Client", "ClientWrite")
    assert not is_session_wait("Client", "ClientRead") and not is_session_wait("Activity", "CheckpointerMain")


def test_sleeping_sessions_counted_exactly(pgws: ScratchServer, sampler_session: Session) -> None:
    """3 sessions in pg_sleep, 1 idle session, background processes: every walk has exactly the 3 sleepers."""
    with connect(pgws.conninfo()) as idle:
        threads = _sleepers(pgws.conninfo(), 3, 4.0)
        time.sleep(0.7)
        reader = WaitSamplingReader(sampler_session, require(sampler_session), hz=100)
        samples = _read_for(reader, 2.0)
        for t in threads:
            t.join(10)
        assert idle.backend_pid not in {s.pid for x in samples for s in x.sessions}
    assert len(samples) >= 150  # ~95 walks per second kept at --hz 100
    for sample in samples:
        assert [s.wait for s in sample.sessions] == ["Timeout:PgSleep"] * 3, sample
        assert {s.backend_type for s in sample.sessions} == {"client backend"}
        assert {s.datname for s in sample.sessions} == {"postgres"}
    assert reader.walks_lost == 0
    assert sum(s.late_ticks for s in samples) == 0
    assert sampler_session.backend_pid not in {s.pid for x in samples for s in x.sessions}
    # walks are 10-11 ms apart (history_period 10 ms), mapped to this clock
    steps = [b.wall_s - a.wall_s for a, b in itertools.pairwise(samples)]
    assert 0.0095 <= sorted(steps)[len(steps) // 2] <= 0.012
    assert abs(samples[-1].wall_s - time.time()) < 5.0


def test_query_id_joins_pg_stat_statements(pgws: ScratchServer, sampler_session: Session) -> None:
    threads = _sleepers(pgws.conninfo(), 1, 2.0)
    time.sleep(0.5)
    reader = WaitSamplingReader(sampler_session, require(sampler_session), hz=10)
    samples = _read_for(reader, 1.0)
    for t in threads:
        t.join(10)
    ids = {s.query_id for x in samples for s in x.sessions}
    assert len(ids) == 1 and None not in ids
    with connect(pgws.conninfo()) as session:
        rows = session.oracle_rows("select query from pg_stat_statements where queryid = %s", [ids.pop()])
    assert [r[0] for r in rows] == ["select pg_sleep($1)"]
    # --hz 10: one walk per 100 ms slot, however long the read loop overran on a busy machine
    slots = [int(x.wall_s * 10) for x in samples]
    assert slots == sorted(set(slots))
    assert len(samples) >= 8
    assert len(samples) <= (samples[-1].wall_s - samples[0].wall_s) * 10 + 2


#: The CPU burner: about 4 s of one core on this VM, canceled once sampled.
BURN_SQL = "select count(*) from generate_series(1, 40000000)"


@pytest.mark.alone  # the burner's share of samples is its share of a core: nothing else of the run meanwhile
def test_cpu_inferred_for_running_session(pgws: ScratchServer, sampler_session: Session, load_lock: None) -> None:
    """pg_wait_sampling 1.1.4 records no item for a process that is not waiting; lockscope infers CPU. The burner
    is a load (one core for seconds): it takes ``load_lock``."""
    canceled: list[StatementError] = []

    def burn() -> None:  # seconds of one core, canceled once the samples are in
        try:
            run_script(pgws.conninfo(), BURN_SQL)
        except StatementError as exc:
            canceled.append(exc)

    with connect(pgws.conninfo()) as probe:
        pids_before = {int(r[0]) for r in probe.oracle_rows("select pid from pg_stat_activity")}
    thread = threading.Thread(target=burn, daemon=True)
    thread.start()
    time.sleep(0.5)
    reader = WaitSamplingReader(sampler_session, require(sampler_session), hz=100)
    samples = _read_for(reader, 1.0)
    run_script(pgws.conninfo(), f"select pg_cancel_backend(pid) from pg_stat_activity where query = '{BURN_SQL}'")
    thread.join(60)
    assert canceled and "canceling statement due to user request" in str(canceled[0]), canceled  # it ran till then
    burner = [s for x in samples for s in x.sessions if s.pid not in pids_before]
    assert burner, "the running session was never seen"
    cpu = sum(1 for s in burner if s.wait == "CPU")
    assert cpu / len(samples) >= 0.5  # on a busy 2-core machine it is sometimes preempted (still CPU) or in IO


def test_ring_wrap_counted_as_late_ticks(pgws: ScratchServer) -> None:
    run_script(pgws.conninfo(), "alter system set pg_wait_sampling.history_size = 100; select pg_reload_conf()")
    try:
        time.sleep(0.5)
        with connect(pgws.conninfo(), sampler=True) as session:
            info = require(session)
            assert info.history_size == 100
            reader = WaitSamplingReader(session, info, hz=100)
            assert reader.interval_s == 0.1  # ~7 processes per walk: the ring turns over in ~0.15 s
            time.sleep(1.0)
            samples = reader.read()
        assert reader.walks_lost >= 50
        assert samples[0].late_ticks >= 50 and all(s.late_ticks == 0 for s in samples[1:])
    finally:
        run_script(pgws.conninfo(), "alter system reset pg_wait_sampling.history_size; select pg_reload_conf()")
        time.sleep(0.3)


def test_watch_cli_and_recording(pgws: ScratchServer, tmp_path: Path) -> None:
    threads = _sleepers(pgws.conninfo(), 2, 4.0)
    record = tmp_path / "ws.db"
    proc = run("watch", "--dsn", pgws.conninfo(), "--source", "pg_wait_sampling", "--duration", "2.5",
               "--no-live", "--record", str(record))
    for t in threads:
        t.join(10)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("lockscope watch: PostgreSQL 15.")
    assert lines[1] == ("lockscope watch: samples from pg_wait_sampling 1.1 (history every 10 ms, ring 5000 items, "
                        "CPU inferred)")
    assert "Timeout:PgSleep" in proc.stdout
    with sqlite3.connect(record) as db:
        meta = dict(db.execute("select key, value from meta").fetchall())
        assert meta["source"] == "pg_wait_sampling"
        ticks = db.execute("select count(*) from samples").fetchone()[0]
        assert 18 <= ticks <= 27  # --hz 10 over 2.5 s
        per_tick = db.execute("select count(*) from sessions where wait_event = 'PgSleep' group by sample_id"
                              ).fetchall()
        assert {n for (n,) in per_tick} <= {2}
    proc = run("watch", "--dsn", pgws.conninfo(), "--duration", "1", "--no-live")
    assert proc.returncode == 0 and "samples from pg_wait_sampling 1.1" in proc.stdout.splitlines()[1]


def test_source_refused_or_skipped_without_extension(pg18: ScratchServer) -> None:
    proc = run("watch", "--dsn", pg18.conninfo(), "--source", "pg_wait_sampling", "--duration", "1", "--no-live")
    assert proc.returncode == 3
    assert "pg_wait_sampling is not created in this database" in one_line_error(proc)
    proc = run("watch", "--dsn", pg18.conninfo(), "--duration", "1", "--no-live")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[1] == ("lockscope watch: samples from pg_stat_activity (pg_wait_sampling not "
                                           "used: the extension pg_wait_sampling is not created in this database "
                                           "(CREATE EXTENSION pg_wait_sampling))")


def test_exporter_with_wait_sampling(pgws: ScratchServer) -> None:
    threads = _sleepers(pgws.conninfo(), 2, 3.0)
    watcher = Watcher(WatchConfig(pgws.conninfo(), hz=10, duration_s=2.5, source="pg_wait_sampling"))
    exporter = PrometheusExporter(watcher.state, "127.0.0.1", 0)
    try:
        watcher.start()
        time.sleep(1.5)
        with urllib.request.urlopen(exporter.url, timeout=10) as resp:
            text = resp.read().decode()
    finally:
        watcher.stop()
        exporter.close()
        for t in threads:
            t.join(10)
    metrics = {(s.name, tuple(sorted((k, v) for k, v in s.labels.items() if k != "server"))): s.value
               for fam in text_string_to_metric_families(text) for s in fam.samples}
    info = [k for k in metrics if k[0] == "lockscope_watch_info"]
    assert len(info) == 1 and ("source", "pg_wait_sampling") in info[0][1]
    key = ("lockscope_activity_active_sessions", (("datname", "postgres"), ("wait_event", "PgSleep"),
                                         ("wait_event_type", "Timeout")))
    assert metrics[key] == pytest.approx(2.0)
