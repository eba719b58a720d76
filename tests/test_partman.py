"""``lockscope footprint --scratch --job`` of pg_partman's maintenance on Debian's PostgreSQL 15 with Debian's
``postgresql-15-partman`` (4.7, installed by ``scripts/test.sh``; missing, the tests fail): ``run_maintenance`` of
an id-partitioned table with a retention drops 389 of its 401 partitions and premakes 3, all in one transaction.
The entries by lock type lockscope reports equal the distinct lock tags pg_locks shows, read by another session
before the ROLLBACK on the test's own server; with a budget it does not fit, the job is refused (exit 6) with a
max_locks_per_transaction fix that runs here, where PostgreSQL runs out with the budget's own."""

from __future__ import annotations

import json
from pathlib import Path

import psycopg
import pytest

from lockscope.server import ScratchServer, ScratchSettings

from .fix_versions import DEBIAN_PG15_BIN
from .helpers import ENTRIES_BY_TYPE, run

# a load: each test builds hundreds of partitions on two or three servers and runs the job on them; with the
# loads (one after another on one worker), never beside a test that times pgbench (tests/schedule.py)
pytestmark = pytest.mark.usefixtures("load_lock")


#: Debian's pg_partman for PG 15 (the package ``postgresql-15-partman``).
PARTMAN_CONTROL = Path("/usr/share/postgresql/15/extension/pg_partman.control")

#: Partitions of 10 ids from 0 (ev_p0 .. ev_p4000: 401 with premake 400), rows 0..3999 (the last, 3999, in
#: ev_p3990). Then premake 4 and a retention of 100 ids, tables dropped: run_maintenance drops every partition
#: whose ids all lie 100 or more below the largest id (ev_p0 .. ev_p3880: 389) and premakes ev_p4010 .. ev_p4030
#: (3), whatever the clock says. Each partition has an index, so each is 2 relations.
def _partitioned(premake: int, rows: int) -> str:
    """pg_partman in schema partman, public.ev partitioned by id in partitions of 10 ids from 0 (``premake`` of
    them ahead), one index, ids 0 .. rows - 1 loaded."""
    return f"""
CREATE SCHEMA partman;
CREATE EXTENSION pg_partman SCHEMA partman;
CREATE TABLE public.ev (id bigint NOT NULL, v int) PARTITION BY RANGE (id);
CREATE INDEX ON public.ev (v);
SELECT partman.create_parent('public.ev', 'id', 'native', '10', p_premake := {premake}, p_start_partition := '0');
INSERT INTO public.ev SELECT g, 0 FROM generate_series(0, {rows - 1}) AS g;
"""


SETUP = _partitioned(400, 4000) + """
UPDATE partman.part_config SET premake = 4, retention = '100', retention_keep_table = false
WHERE parent_table = 'public.ev';
"""
MAINTENANCE = "SELECT partman.run_maintenance('public.ev');"
PARTITIONS = "SELECT partition_tablename FROM partman.show_partitions('public.ev')"
BEFORE = {f"ev_p{k}" for k in range(0, 4001, 10)}
AFTER = {f"ev_p{k}" for k in range(3890, 4031, 10)}
#: What the budget server starts with; its set-up (401 partitions made in one transaction) needs a larger table.
BUDGET = ScratchSettings(max_locks_per_transaction=10, max_connections=20, extra={"autovacuum": "off"})


def _files(tmp_path: Path, setup_sql: str = SETUP, statement: str = MAINTENANCE) -> tuple[Path, Path]:
    """The set-up file and the job file (``statement`` in one transaction); fails when pg_partman is missing."""
    if not PARTMAN_CONTROL.exists():
        pytest.fail(f"{PARTMAN_CONTROL} is missing: run scripts/test.sh (it installs Debian's postgresql-15-partman)",
                    pytrace=False)
    setup, job = tmp_path / "partman-setup.sql", tmp_path / "job.sql"
    setup.write_text(setup_sql)
    job.write_text(f"BEGIN;\n{statement}\nCOMMIT;\n")
    return setup, job


def _partitions(conn: psycopg.Connection[tuple[object, ...]]) -> set[str]:
    return {str(name) for (name,) in conn.execute(PARTITIONS).fetchall()}


def _runs(srv: ScratchServer) -> bool:
    """True when the maintenance runs in one transaction (rolled back), False when the lock table is full: 53200,
    or pg_partman's own re-raise of it (run_maintenance's handler raises the message again as P0001)."""
    with psycopg.connect(srv.conninfo(), autocommit=True) as conn:
        conn.execute("BEGIN")
        try:
            conn.execute(MAINTENANCE)
        except psycopg.Error as exc:
            assert exc.sqlstate == "53200" or (exc.sqlstate == "P0001" and str(exc).startswith(
                "out of shared memory")), exc
            return False
        finally:
            conn.execute("ROLLBACK")
    return True


def test_maintenance_entries_equal_pg_locks(tmp_path: Path) -> None:
    setup, job = _files(tmp_path)
    out = tmp_path / "maintenance.json"
    proc = run("footprint", "--scratch", "--pg-bin", str(DEBIAN_PG15_BIN), "--mlpt", "64", "--setup", str(setup),
               "-f", str(job), "--job", "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    (txn,) = json.loads(out.read_text())["transactions"]
    assert not txn["exhausted"] and txn["empty_lines"] == []
    with ScratchServer(DEBIAN_PG15_BIN, ScratchSettings(max_locks_per_transaction=64)) as srv, \
            psycopg.connect(srv.conninfo(), autocommit=True) as conn, \
            psycopg.connect(srv.conninfo(), autocommit=True) as reader:
        conn.execute(SETUP)
        assert _partitions(conn) == BEFORE
        conn.execute("BEGIN")
        conn.execute(MAINTENANCE)
        truth: dict[str, int] = dict(reader.execute(ENTRIES_BY_TYPE, [conn.info.backend_pid]).fetchall())
        assert _partitions(conn) == AFTER  # 389 dropped, 3 made
        conn.execute("ROLLBACK")
    assert txn["peak_by_type"] == truth
    # each dropped partition and its index (778 relations, and their pg_class and pg_type rows), the 3 new ones
    assert truth["relation"] > 2 * 389 and truth["object"] > 389, truth
    assert txn["peak_entries"] == sum(truth.values())


def test_maintenance_too_big_is_refused_and_its_fix_runs(tmp_path: Path) -> None:
    setup, job = _files(tmp_path)
    out = tmp_path / "maintenance.json"
    proc = run("footprint", "--scratch", "--pg-bin", str(DEBIAN_PG15_BIN), "--setup", str(setup), "-f", str(job),
               "--job", "--assume-mlpt", "10", "--assume-max-connections", "20", "--fail-on", "exhaustion",
               "--json", str(out))
    assert proc.returncode == 6, proc.stderr
    (txn,) = json.loads(out.read_text())["transactions"]
    assert txn["exhausted"]
    mlpt = txn["fixes"]["verified_mlpt"]
    assert isinstance(mlpt, int) and mlpt > 10, txn["fixes"]
    assert f"max_locks_per_transaction {mlpt} (restart; verified on PG 15" in proc.stderr
    with ScratchServer(DEBIAN_PG15_BIN, BUDGET.replace(max_prepared_transactions=2000)) as srv:
        with psycopg.connect(srv.conninfo(), autocommit=True) as conn:
            conn.execute(SETUP)
        srv.configure(BUDGET)
        assert not _runs(srv), "PostgreSQL ran the maintenance lockscope refused"
        srv.reconfigure(max_locks_per_transaction=mlpt)
        assert _runs(srv)


#: Rows loaded before their partitions exist: 3 partitions (ev_p0 .. ev_p20, premake 2), ids 0..1999, so 1,970 rows
#: in the default partition; partition_data_id moves them, in batches of one partition (10 ids), into 197 new
#: partitions, all in one transaction (p_batch_count 1000: more batches than the data needs).
DATA_SETUP = _partitioned(2, 2000)
PARTITION_DATA = "SELECT partman.partition_data_id('public.ev', p_batch_count := 1000, p_analyze := false);"


def test_partition_data_entries_equal_pg_locks(tmp_path: Path) -> None:
    """pg_partman's partition_data_id, which moves rows out of the default partition into partitions it creates
    (pg_partman's partition_data_* jobs), measured as a job: its entries by lock type equal pg_locks."""
    setup, job = _files(tmp_path, DATA_SETUP, PARTITION_DATA)
    out = tmp_path / "data.json"
    proc = run("footprint", "--scratch", "--pg-bin", str(DEBIAN_PG15_BIN), "--mlpt", "64", "--setup", str(setup),
               "-f", str(job), "--job", "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    (txn,) = json.loads(out.read_text())["transactions"]
    with ScratchServer(DEBIAN_PG15_BIN, ScratchSettings(max_locks_per_transaction=64)) as srv, \
            psycopg.connect(srv.conninfo(), autocommit=True) as conn, \
            psycopg.connect(srv.conninfo(), autocommit=True) as reader:
        conn.execute(DATA_SETUP)
        assert len(_partitions(conn)) == 3
        conn.execute("BEGIN")
        moved = conn.execute(PARTITION_DATA).fetchone()
        truth: dict[str, int] = dict(reader.execute(ENTRIES_BY_TYPE, [conn.info.backend_pid]).fetchall())
        assert moved == (1970,) and len(_partitions(conn)) == 200
        conn.execute("ROLLBACK")
    assert txn["peak_by_type"] == truth
    assert truth["relation"] > 2 * 197 and truth["object"] >= 197, truth
