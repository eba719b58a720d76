"""lockscope watch and report on real servers without load: sampling, extras, recording, report, Prometheus,
bad input and bad record files."""

from __future__ import annotations

import itertools
import json
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families
from psycopg.conninfo import conninfo_to_dict
from rich.console import Console

from lockscope.db import Session, connect, load_sql, run_script
from lockscope.errors import RecordFileError
from lockscope.report.watch_html import recording_html
from lockscope.report.watch_terminal import LiveHeader, render_live, render_summary
from lockscope.rows import QueryTextRow, RelationLockRow
from lockscope.server import ScratchServer
from lockscope.watch.engine import WatchConfig, Watcher, stat_lock_deltas
from lockscope.watch.prometheus import PrometheusExporter, parse_listen
from lockscope.watch.recorded import load_summary
from lockscope.watch.sampler import BackgroundSampler, read_activity, summarize
from lockscope.watch.store import open_recording

from .helpers import clean_env, one_line_error, run, start, wait_until


@pytest.fixture(scope="module")
def watch_table(pg18: ScratchServer) -> str:
    run_script(pg18.conninfo(), "create table if not exists watch_t (id int primary key); "
                                "insert into watch_t values (1) on conflict do nothing")
    return "watch_t"


class Background:
    """Statements run for real on the test server in threads (autocommit, one statement each)."""

    def __init__(self, conninfo: str) -> None:
        self.conninfo = conninfo
        self.threads: list[threading.Thread] = []
        self.errors: list[BaseException] = []

    def start(self, sql: str) -> None:
        def target() -> None:
            try:
                run_script(self.conninfo, sql)
            except BaseException as exc:  # collected, checked by the test
                self.errors.append(exc)
        thread = threading.Thread(target=target, daemon=True)
        thread.start()
        self.threads.append(thread)

    def join(self) -> None:
        for thread in self.threads:
            thread.join(30)


@pytest.fixture()
def background(pg18: ScratchServer) -> Iterator[Background]:
    bg = Background(pg18.conninfo())
    yield bg
    bg.join()


def _lock_scene(bg: Background, table: str, hold_s: float = 3.0) -> None:
    """One session sleeps (Timeout:PgSleep) holding an ACCESS EXCLUSIVE lock; another waits on it (Lock:relation)."""
    bg.start(f"do $$ begin lock table {table} in access exclusive mode; perform pg_sleep({hold_s}); end $$")
    time.sleep(0.3)
    bg.start(f"select count(*) from {table}")
    time.sleep(0.3)


# -- sampling -------------------------------------------------------------------------------------------------
def test_sample_query_takes_no_heavyweight_lock(session18: Session) -> None:
    """The per-tick query reads pg_stat_get_activity(NULL): no relation lock at all (the pg_stat_activity view
    would lock pg_database, pg_authid and 4 of their indexes in the main lock table)."""
    sql = load_sql("activity_sample", session18.facts.server_version_num)
    with session18.probe_transaction():
        session18.oracle_rows(sql)
        locks = session18.query_rows("relation_locks", RelationLockRow)
    assert [r.relation_oid for r in locks] == []  # relation_locks reads pg_lock_status(): no lock of its own
    with session18.probe_transaction():
        session18.oracle_rows("select * from pg_stat_activity")
        view_locks = session18.query_rows("relation_locks", RelationLockRow)
    assert sum(not r.fastpath for r in view_locks) == 6  # what the view would cost per sample


def test_reader_resolves_names_and_old_api_still_works(pg18: ScratchServer, background: Background) -> None:
    background.start("select pg_sleep(1.5)")
    time.sleep(0.3)
    with connect(pg18.conninfo(), sampler=True) as session:
        sessions = read_activity(session)
    sleeper = [s for s in sessions if s.wait == "Timeout:PgSleep"]
    assert len(sleeper) == 1
    assert (sleeper[0].datname, sleeper[0].usename, sleeper[0].backend_type) == ("postgres", "postgres",
                                                                                "client backend")
    assert sleeper[0].query_id is not None and sleeper[0].query_start is not None
    with BackgroundSampler(pg18.conninfo(), hz=20) as sampler:
        time.sleep(0.5)
    summary = summarize(sampler.samples)
    assert summary.samples >= 5 and summary.by_wait.get("Timeout:PgSleep", 0) >= 5


def test_old_server_features_and_sampling(pg_old: ScratchServer) -> None:
    """PG 15: no pg_stat_lock (detected from the catalog, no failure), sampling works."""
    watcher = Watcher(WatchConfig(pg_old.conninfo(), hz=20, duration_s=0.6)).start()
    watcher.wait(10)
    summary = watcher.stop()
    assert watcher.error is None
    assert watcher.state.has_stat_lock is False and watcher.state.fastpath_exceeded_per_s is None
    assert summary.server_version.startswith("15") and summary.ticks >= 8


def test_stat_lock_deltas() -> None:
    assert stat_lock_deltas({"relation": (10, 1)}, {"relation": (25, 1), "object": (3, 0)}) == {
        "relation": (15, 0), "object": (3, 0)}
    # a reset (or server restart) restarts the counter: the delta is the new value
    assert stat_lock_deltas({"relation": (100, 5)}, {"relation": (7, 1)}) == {"relation": (7, 1)}


# -- a full watch on a real scene, recorded and reported ---------------------------------------------------------
def test_watch_record_report_round_trip(pg18: ScratchServer, watch_table: str, background: Background,
                                        tmp_path: Path) -> None:
    record = tmp_path / "run.db"
    watcher = Watcher(WatchConfig(pg18.conninfo(), hz=20, duration_s=2.5, record_path=record, locks_every_s=1.0))
    watcher.start()
    _lock_scene(background, watch_table, hold_s=2.0)
    # live view renders while running
    console = Console(record=True, width=140, force_terminal=True)
    console.print(render_live(watcher.state, LiveHeader("test", 20, 2.5, str(record), None, time.monotonic())))
    assert watcher.wait(15)
    summary = watcher.stop()
    background.join()
    assert not background.errors
    assert watcher.error is None and summary.end_reason == "duration"
    assert 40 <= summary.ticks <= 52 and summary.samples_recorded == summary.ticks
    assert summary.by_wait.get("Timeout:PgSleep", 0) > 10 and summary.by_wait.get("Lock:relation", 0) > 10
    live = console.export_text()
    assert "lockscope watch" in live and "LWLock:LockManager" in live
    console.print(render_summary(summary))

    with open_recording(record) as rec:
        assert rec.meta["format"] == "lockscope-watch" and rec.meta["end_reason"] == "duration"
        assert rec.rows("SELECT count(*) FROM samples")[0][0] == summary.ticks
        waits = dict(rec.rows("SELECT wait_event_type || ':' || wait_event, count(*) FROM sessions "
                              "WHERE wait_event_type IS NOT NULL GROUP BY 1"))
        assert waits["Timeout:PgSleep"] == summary.by_wait["Timeout:PgSleep"]
        assert waits["Lock:relation"] == summary.by_wait["Lock:relation"]
        # pg_blocking_pids: only for the Lock waiter, at most once per second
        blocking = rec.rows("SELECT ts, pid, blocking_pids FROM blocking ORDER BY ts")
        assert 1 <= len(blocking) <= 3
        assert all(b - a >= 0.99 for (a, _, _), (b, _, _) in itertools.pairwise(blocking))
        waiter_pid = blocking[0][1]
        holder = json.loads(blocking[0][2])
        assert len(holder) == 1 and holder[0] != waiter_pid
        snaps = rec.rows("SELECT id, ts FROM lock_snapshots ORDER BY ts")
        assert 2 <= len(snaps) <= 4
        snap_id = rec.rows("SELECT min(snapshot_id) FROM lock_snapshot_backends WHERE pid = ?", (waiter_pid,))[0][0]
        per_backend = {r[0]: r[1:] for r in rec.rows(
            "SELECT pid, relation_locks, main_table_locks, waiting_locks FROM lock_snapshot_backends "
            "WHERE snapshot_id = ?", (snap_id,))}
        assert per_backend[waiter_pid][2] == 1  # the waiter's one ungranted lock
        assert per_backend[holder[0]][1] >= 1  # the ACCESS EXCLUSIVE lock is never fast-path

    report = load_summary(record)
    assert report.ticks == summary.ticks and report.top_wait_event in ("Timeout:PgSleep", "Lock:relation")
    # the recording gives the sampled share's interval from the same seconds as the live watch
    assert [b for b in report.lockmanager_batches if b[0]] == [b for b in summary.lockmanager_batches if b[0]]
    assert report.lockmanager_interval == summary.lockmanager_interval
    html = recording_html(report)
    assert html.count("<svg") == 2 and "<script" not in html and 'src="http' not in html and "<link" not in html
    proc = run("report", str(record), "--html", str(tmp_path / "r.html"))
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "r.html").read_text().startswith("<!DOCTYPE html>")
    proc = run("report", str(record))
    assert proc.returncode == 0 and "Timeout:PgSleep" in proc.stdout


def test_statement_text_fallback_from_activity(pg18: ScratchServer, background: Background) -> None:
    """Without pg_stat_statements, a query_id's text comes from the backend running it (no heavyweight lock)."""
    background.start("select pg_sleep(1.5) /* watch-fallback */")
    time.sleep(0.3)
    with connect(pg18.conninfo(), sampler=True) as session:
        qid = next(s.query_id for s in read_activity(session) if s.wait == "Timeout:PgSleep")
        with session.probe_transaction():
            rows = session.query_rows("watch_activity_text", QueryTextRow, [[qid]])
            locks = session.query_rows("relation_locks", RelationLockRow)
    assert [r.query for r in rows] == ["select pg_sleep(1.5) /* watch-fallback */"]
    assert [r.relation_oid for r in locks] == []


def test_prometheus_endpoint_scrape(pg18: ScratchServer, watch_table: str, background: Background) -> None:
    watcher = Watcher(WatchConfig(pg18.conninfo(), hz=20, duration_s=3.0, locks_every_s=1.0))
    exporter = PrometheusExporter(watcher.state, "127.0.0.1", 0)
    try:
        watcher.start()
        _lock_scene(background, watch_table, hold_s=2.0)
        time.sleep(1.2)
        with urllib.request.urlopen(exporter.url, timeout=10) as resp:
            text = resp.read().decode()
    finally:
        watcher.stop()
        exporter.close()
    samples = [s for fam in text_string_to_metric_families(text) for s in fam.samples]
    # every series names the PostgreSQL server (host:port, as postgres_exporter's server label); no SQL text
    params = conninfo_to_dict(pg18.conninfo())
    assert {s.labels.get("server") for s in samples} == {f"{params['host']}:{pg18.port}"}
    assert not any("query" in s.labels for s in samples)
    metrics = {(s.name, tuple(sorted((k, v) for k, v in s.labels.items() if k != "server"))): s.value
               for s in samples}
    pg = ("datname", "postgres")
    active = "lockscope_activity_active_sessions"
    assert metrics[(active, (pg, ("wait_event", "PgSleep"), ("wait_event_type", "Timeout")))] > 0.5
    assert metrics[(active, (pg, ("wait_event", "relation"), ("wait_event_type", "Lock")))] > 0.5
    assert metrics[("lockscope_samples_total", ())] >= 20
    assert metrics[("lockscope_up", ())] == 1.0
    assert metrics[("lockscope_lockmanager_waiting_sessions", ())] == 0.0
    assert 10 <= metrics[("lockscope_sample_rate_hz", ())] <= 25
    assert metrics[("lockscope_locks_relation_main_table", ())] >= 1  # the ACCESS EXCLUSIVE lock
    assert metrics[("lockscope_locks_relation", ())] >= 2
    assert metrics[("lockscope_locks_relation_waiting", ())] >= 1  # the session waiting for it
    assert metrics[("lockscope_fastpath_max_locks_per_transaction", ())] == 64
    assert ("lockscope_stat_lock_fastpath_exceeded_total", (("locktype", "relation"),)) not in metrics  # PG 18


# -- bad input -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("args, message", [
    (["--hz", "0"], "between 1 and 100"),
    (["--hz", "101"], "between 1 and 100"),
    (["--hz", "100.5"], "between 1 and 100"),
    (["--locks-every", "0.5"], "at least 1 s"),
    (["--prometheus", "localhost:http"], "HOST:PORT"),
    (["--prometheus", "70000"], "port must be between"),
    (["--mlpt", "16"], "scratch server only"),
])
def test_watch_bad_options(pg18: ScratchServer, args: list[str], message: str) -> None:
    proc = run("watch", "--dsn", pg18.conninfo(), "--duration", "1s", *args)
    assert proc.returncode == 2
    assert message in one_line_error(proc)


def test_watch_hz_bounds_accepted(pg18: ScratchServer) -> None:
    for hz in ("1", "100"):
        proc = run("watch", "--dsn", pg18.conninfo(), "--hz", hz, "--duration", "1.2s")
        assert proc.returncode == 0, proc.stderr
        assert f"(target {hz})" in proc.stdout


def test_watch_help_documents_costs() -> None:
    proc = run("watch", "--help")
    text = " ".join(proc.stdout.split())
    for phrase in ("all 16 lock-partition LWLocks", "--locks-every", "pg_blocking_pids()", "wait_event_type 'Lock'",
                   "statement_timeout", "--prometheus", "1 to 100"):
        assert phrase in text


def test_watch_unreachable_server_and_duration_syntax(tmp_path: Path) -> None:
    proc = run("watch", "--dsn", f"host={tmp_path} port=1 user=x password=s3cret", "--duration", "1s")
    assert proc.returncode == 3
    line = one_line_error(proc)
    assert "cannot connect" in line and "s3cret" not in line
    proc = run("watch", "--duration", "soon")
    assert proc.returncode == 2 and "not a duration" in proc.stderr


def _foreign_files(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    text = tmp_path / "notes.txt"
    text.write_text("hello, not a database\n")
    foreign = tmp_path / "foreign.db"
    with sqlite3.connect(foreign) as conn:
        conn.execute("create table t (x)")
    other_meta = tmp_path / "other.db"
    with sqlite3.connect(other_meta) as conn:
        conn.execute("create table meta (key text, value text)")
        conn.execute("insert into meta values ('format', 'something-else')")
    return {
        "missing": (tmp_path / "nope.db", "no such recording"),
        "empty": (empty, "not a lockscope watch recording (an empty file)"),
        "text": (text, "not a lockscope watch recording (not an SQLite database)"),
        "foreign": (foreign, "an SQLite database but not a lockscope watch recording"),
        "other_meta": (other_meta, "not a lockscope watch recording (format 'something-else')"),
        "directory": (tmp_path, "is a directory"),
    }


def test_report_bad_record_files(tmp_path: Path, pg18: ScratchServer) -> None:
    for name, (path, message) in _foreign_files(tmp_path).items():
        with pytest.raises(RecordFileError, match=message.replace("(", r"\(").replace(")", r"\)")):
            open_recording(path)
        proc = run("report", str(path), "--html", str(tmp_path / "out.html"))
        assert proc.returncode == 2, name
        assert message in one_line_error(proc), name
    assert not (tmp_path / "out.html").exists()
    # a real recording, then damaged: newer schema, then garbage in its pages
    good = tmp_path / "good.db"
    watcher = Watcher(WatchConfig(pg18.conninfo(), hz=20, duration_s=0.5, record_path=good)).start()
    watcher.wait(10)
    watcher.stop()
    newer = tmp_path / "newer.db"
    newer.write_bytes(good.read_bytes())
    with sqlite3.connect(newer) as conn:
        conn.execute("update meta set value = '99' where key = 'schema_version'")
    proc = run("report", str(newer))
    assert proc.returncode == 2 and "schema 99" in one_line_error(proc)
    corrupt = tmp_path / "corrupt.db"
    data = bytearray(good.read_bytes())
    data[120:] = b"\x5a" * (len(data) - 120)
    corrupt.write_bytes(bytes(data))
    proc = run("report", str(corrupt))
    assert proc.returncode == 2
    assert "is corrupt" in one_line_error(proc) or "not a lockscope watch recording" in proc.stderr
    # watch never overwrites an existing file, and says so before connecting anywhere
    proc = run("watch", "--dsn", "host=/nonexistent", "--record", str(good), "--duration", "1s")
    assert proc.returncode == 2 and "already exists" in one_line_error(proc)


def test_watch_and_report_json(pg18: ScratchServer, tmp_path: Path) -> None:
    """watch --json (the summary when it ends) and report --json (a recording's summary): one schema."""
    record, out = tmp_path / "r.db", tmp_path / "w.json"
    proc = run("watch", "--dsn", pg18.conninfo(), "--hz", "20", "--duration", "1.5s", "--record", str(record),
               "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    watched = json.loads(out.read_text())
    proc = run("report", str(record), "--json", "-")
    assert proc.returncode == 0, proc.stderr
    recorded = json.loads(proc.stdout)
    assert watched["schema"] == recorded["schema"] == "lockscope/watch/v1"
    assert (watched["source"], recorded["source"]) == ("watch", "recording")
    assert set(watched) == set(recorded) and watched["ticks"] >= 20 and watched["end_reason"] == "duration"
    assert watched["recording"] == recorded["recording"] == str(record)


def test_parse_listen() -> None:
    assert parse_listen("9187") == ("127.0.0.1", 9187)
    assert parse_listen("0.0.0.0") == ("0.0.0.0", 9855)  # the default port, never postgres_exporter's 9187
    assert parse_listen(":9187") == ("127.0.0.1", 9187)
    assert parse_listen("0.0.0.0:9") == ("0.0.0.0", 9)
    assert parse_listen("[::1]:9187") == ("::1", 9187)


def test_sigint_and_sigterm_flush_and_close(pg18: ScratchServer, tmp_path: Path) -> None:
    import signal

    for sig, code, reason in ((signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")):
        record = tmp_path / f"{reason}.db"
        proc = start("watch", "--dsn", pg18.conninfo(), "--hz", "20", "--record", str(record),
                     env=clean_env(COLUMNS="250"))
        _wait_for_samples(record, 10)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=30)
        assert proc.returncode == code, err
        assert "Traceback" not in err and "samples" in out and f"ended: {reason}" in out
        assert not Path(str(record) + "-wal").exists()  # checkpointed and closed: one file
        with open_recording(record) as rec:
            assert rec.meta["end_reason"] == reason
            n = rec.rows("SELECT count(*) FROM samples")[0][0]
        assert f"({n:,} samples)" in out


def test_killed_process_loses_at_most_the_last_second(pg18: ScratchServer, tmp_path: Path) -> None:
    import signal

    record = tmp_path / "killed.db"
    proc = subprocess.Popen([sys.executable, "-m", "lockscope", "watch", "--dsn", pg18.conninfo(), "--hz", "20",
                             "--record", str(record), "--no-live"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    _wait_for_samples(record, 40)
    time.sleep(1.0)
    killed_at = time.time()
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    with open_recording(record) as rec:
        last = rec.rows("SELECT max(ts) FROM samples")[0][0]
        n = rec.rows("SELECT count(*) FROM samples")[0][0]
        assert "end_reason" not in rec.meta
    assert killed_at - last <= 1.25, killed_at - last  # commit every second (+ one tick of slack)
    assert n >= 40
    summary = load_summary(record)
    assert summary.ticks == n


def _wait_for_samples(record: Path, n: int, timeout_s: float = 30.0) -> None:
    def recorded() -> bool:
        if not (record.exists() and record.stat().st_size):
            return False
        try:
            with open_recording(record) as rec:
                return int(rec.rows("SELECT count(*) FROM samples")[0][0]) >= n
        except RecordFileError:
            return False

    wait_until(recorded, timeout_s, what=f"{record}: {n} samples", every_s=0.1)
