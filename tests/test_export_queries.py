"""``lockscope export-queries``: the YAML shapes postgres_exporter and pgwatch read, and every query run for real on
PostgreSQL 15, 18 and 19 (pg_stat_lock) against a scene with exact lock counts."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
import yaml
from psycopg.rows import dict_row

from lockscope.db import connect, run_script
from lockscope.errors import DatabaseError
from lockscope.exporters import FORMATS, QUERIES, MetricQuery, pgwatch_sql, render
from lockscope.server import ScratchServer

from .fix_versions import bin_dir_of
from .helpers import one_line_error, run
from .servers import ServerPool, demo_server

BY_NAME = {q.name: q for q in QUERIES}
SCENE_DB = "export_q"
N_TABLES = 20


@pytest.fixture(scope="module")
def pg19(server_pool: ServerPool) -> ScratchServer:
    """The session's demo server of PostgreSQL 19 (``every_pg``'s; max_locks_per_transaction 64)."""
    server = demo_server(server_pool, bin_dir_of(19))
    if server.major != 19:
        pytest.fail(f"{server.bin_dir} is PostgreSQL {server.major}, not 19", pytrace=False)
    return server


@pytest.fixture(scope="module", params=["pg_old", "pg18", "pg19"])
def server(request: pytest.FixtureRequest) -> ScratchServer:
    srv: ScratchServer = request.getfixturevalue(request.param)
    run_script(srv.conninfo(), f"drop database if exists {SCENE_DB}; create database {SCENE_DB}")
    tables = "".join(f"create table t{i} (id int); " for i in range(1, N_TABLES + 1))
    run_script(srv.conninfo(SCENE_DB), tables + "create table a (id int); create table b (id int); "
                                                "create table c (id int);")
    return srv


def _rows(srv: ScratchServer, sql: str) -> list[dict[str, Any]]:
    with psycopg.connect(srv.conninfo(), autocommit=True, row_factory=dict_row) as conn:
        return conn.execute(sql.encode()).fetchall()


class Scene:
    """In database export_q: a holder (idle in transaction) with SHARE locks on a, b, c (strong: main lock table)
    and ACCESS SHARE locks on t1..t20 (fast-path while slots last), and a waiter blocked on a (EXCLUSIVE)."""

    def __init__(self, srv: ScratchServer) -> None:
        self.holder = psycopg.connect(srv.conninfo(SCENE_DB))
        self.holder.execute("lock table a, b, c in share mode")
        self.holder.execute("lock table " + ", ".join(f"t{i}" for i in range(1, N_TABLES + 1))
                            + " in access share mode")
        self.holder_pid = self.holder.info.backend_pid
        self.waiter = threading.Thread(target=run_script, args=(srv.conninfo(SCENE_DB),
                                                                "begin; lock table a in exclusive mode; commit"),
                                       daemon=True)
        self.waiter.start()
        time.sleep(0.5)

    def close(self) -> None:
        self.holder.rollback()
        self.holder.close()
        self.waiter.join(30)


@pytest.fixture()
def scene(server: ScratchServer) -> Iterator[Scene]:
    s = Scene(server)
    yield s
    s.close()


def test_relation_locks_query_exact(server: ScratchServer, scene: Scene) -> None:
    q = BY_NAME["lockscope_locks"]
    rows = {r["datname"]: r for r in _rows(server, q.text)}
    row = rows[SCENE_DB]
    assert list(row) == [c.name for c in q.columns]
    # the holder's main-table locks, read directly from pg_locks (independent of the exported query)
    direct = _rows(server, f"select count(*) filter (where not fastpath) as main from pg_locks "
                           f"where locktype = 'relation' and pid = {scene.holder_pid}")[0]["main"]
    expected_main = {15: 3 + (N_TABLES - 16)}.get(server.major, direct)  # PG 15: 16 fast-path slots
    assert direct == expected_main
    assert row["relation"] == 3 + N_TABLES + 1           # holder's 23, the waiter's 1
    assert row["relation_main_table"] == direct + 1      # + the waiter's lock (never fast-path: EXCLUSIVE)
    assert row["relation_waiting"] == 1
    assert row["backends_with_main_table"] == 2
    assert row["max_backend_main_table"] == direct
    # 23 relation locks: more than 16 slots on PG 15, fewer than 64 on 18/19 (max_locks_per_transaction 64)
    assert row["backends_over_fastpath_slots"] == {15: 1, 18: 0, 19: 0}[server.major]


def test_activity_query(server: ScratchServer, scene: Scene) -> None:
    q = BY_NAME["lockscope_activity"]
    rows = [r for r in _rows(server, q.text) if r["datname"] == SCENE_DB]
    assert rows == [{"datname": SCENE_DB, "wait_event_type": "Lock", "wait_event": "relation", "active_sessions": 1}]


def test_fastpath_query(server: ScratchServer) -> None:
    rows = _rows(server, BY_NAME["lockscope_fastpath"].text)
    with connect(server.conninfo()) as session:
        slots = session.facts.capacity.slots
    mlpt = server.settings.max_locks_per_transaction
    assert rows == [{"slots_per_backend": slots, "max_locks_per_transaction": mlpt}]
    assert slots == {15: 16, 18: 64, 19: 64}[server.major]


def test_stat_lock_query_only_on_19(server: ScratchServer) -> None:
    q = BY_NAME["lockscope_stat_lock"]
    if server.major < 19:
        with connect(server.conninfo()) as session, pytest.raises(DatabaseError) as err:
            session.oracle_rows(q.text)
        assert err.value.sqlstate == "42P01"  # undefined_table: why the definitions say >= 19
        return
    rows = {r["locktype"]: r for r in _rows(server, q.text)}
    assert set(rows["relation"]) == {"locktype", "fastpath_exceeded_total", "waits_total"}
    assert all(isinstance(r["fastpath_exceeded_total"], int) for r in rows.values())


def test_pgwatch_sql_runs(server: ScratchServer, scene: Scene) -> None:
    for q in QUERIES:
        if q.min_major > server.major:
            continue
        rows = _rows(server, pgwatch_sql(q))
        assert rows, q.name
        expected = ["epoch_ns"] + [f"tag_{c.name}" if c.usage == "LABEL" else c.name for c in q.columns]
        assert list(rows[0]) == expected
        assert abs(rows[0]["epoch_ns"] / 1e9 - time.time()) < 60


def _check_query(q: MetricQuery) -> None:
    assert q.name.startswith("lockscope_") and "--" not in q.text


def test_postgres_exporter_yaml_shape() -> None:
    doc = yaml.safe_load(render("postgres_exporter"))
    assert list(doc) == [q.name for q in QUERIES]
    for q in QUERIES:
        _check_query(q)
        entry = doc[q.name]
        assert entry["query"].strip() == q.text
        assert entry["master"] is True
        assert entry["cache_seconds"] == q.interval_s
        assert entry.get("runonserver") == (">=19.0.0" if q.min_major == 19 else None)
        metrics = [next(iter(m.items())) for m in entry["metrics"]]
        assert [name for name, _ in metrics] == [c.name for c in q.columns]
        assert {spec["usage"] for _, spec in metrics} <= {"LABEL", "GAUGE", "COUNTER"}
        assert all(spec["description"] for _, spec in metrics)
        for name, spec in metrics:  # counters end in _total (Prometheus naming)
            assert (spec["usage"] == "COUNTER") == name.endswith("_total")
    assert doc["lockscope_locks"]["cache_seconds"] >= 60  # pg_locks takes all 16 partition LWLocks


def test_pgwatch_yaml_shape() -> None:
    doc = yaml.safe_load(render("pgwatch"))
    assert list(doc) == ["metrics", "presets"]
    for q in QUERIES:
        entry = doc["metrics"][q.name]
        assert list(entry["sqls"]) == [q.min_major]
        assert entry["sqls"][q.min_major].strip() == pgwatch_sql(q)
        assert entry["gauges"] == [c.name for c in q.columns if c.usage == "GAUGE"]
        assert entry["is_instance_level"] is True and entry["description"]
    assert doc["presets"]["lockscope"]["metrics"] == {q.name: q.interval_s for q in QUERIES}
    assert doc["presets"]["lockscope"]["metrics"]["lockscope_locks"] >= 60


def test_cli(tmp_path: Path) -> None:
    for fmt in FORMATS:
        proc = run("export-queries", "--format", fmt)
        assert proc.returncode == 0 and proc.stderr == ""
        assert proc.stdout == render(fmt)
    out = tmp_path / "q.yaml"
    proc = run("export-queries", "--format", "pgwatch", "-o", str(out))
    assert proc.returncode == 0 and proc.stdout == "" and proc.stderr.strip() == f"wrote {out}"
    assert out.read_text() == render("pgwatch")
    proc = run("export-queries", "--format", "telegraf")
    assert proc.returncode == 2 and "invalid choice: 'telegraf'" in one_line_error(proc)
    proc = run("export-queries", "--format", "pgwatch", "-o", str(tmp_path / "no" / "q.yaml"))
    assert proc.returncode == 2 and "no such directory" in one_line_error(proc)
