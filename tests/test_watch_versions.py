"""lockscope watch's sampling on a real server of every major 13-19 (``any_pg``): the per-tick query takes no
heavyweight lock, a short watch sees a sleeping lock holder and its waiter, records them, and detects
PG 19's pg_stat_lock (present on 19 only, read without failing elsewhere). The load tests stay on PG 18
(tests/test_watch_load.py)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from lockscope.db import Session, load_sql, run_script
from lockscope.rows import RelationLockRow
from lockscope.server import ScratchServer
from lockscope.watch.engine import WatchConfig, Watcher
from lockscope.watch.recorded import load_summary


def test_sample_query_takes_no_heavyweight_lock(any_session: Session) -> None:
    """The version's sample query (sql/activity_sample*.sql) locks no relation at all."""
    sql = load_sql("activity_sample", any_session.facts.server_version_num)
    with any_session.probe_transaction():
        any_session.oracle_rows(sql)
        locks = any_session.query_rows("relation_locks", RelationLockRow)
    assert [r.relation_oid for r in locks] == []  # relation_locks reads pg_lock_status(): no lock of its own


def test_watch_samples_a_lock_scene(any_pg: ScratchServer, tmp_path: Path) -> None:
    major = any_pg.major
    run_script(any_pg.conninfo(), "create table if not exists watch_v (id int)")
    errors: list[BaseException] = []

    def start(sql: str) -> threading.Thread:
        def target() -> None:
            try:
                run_script(any_pg.conninfo(), sql)
            except BaseException as exc:  # checked below
                errors.append(exc)
        thread = threading.Thread(target=target, daemon=True)
        thread.start()
        return thread

    record = tmp_path / f"pg{major}.db"
    watcher = Watcher(WatchConfig(any_pg.conninfo(), hz=20, duration_s=2.0, record_path=record,
                                  source="activity")).start()
    holder = start("do $$ begin lock table watch_v in access exclusive mode; perform pg_sleep(1.5); end $$")
    time.sleep(0.3)
    waiter = start("select count(*) from watch_v")
    assert watcher.wait(15)
    summary = watcher.stop()
    holder.join(10)
    waiter.join(10)
    assert not errors and watcher.error is None
    assert summary.server_version.startswith(str(major))
    assert 30 <= summary.ticks <= 42 and summary.samples_recorded == summary.ticks
    assert summary.by_wait.get("Timeout:PgSleep", 0) >= 10
    assert summary.by_wait.get("Lock:relation", 0) >= 10
    assert watcher.state.has_stat_lock is (major >= 19)
    if major < 19:
        assert watcher.state.fastpath_exceeded_per_s is None
    report = load_summary(record)
    assert report.ticks == summary.ticks and report.meta["server_version"].startswith(str(major))
    assert report.by_wait["Lock:relation"] == summary.by_wait["Lock:relation"]
    assert bool(report.fastpath_exceeded) is (major >= 19)  # one delta per second from the second read

