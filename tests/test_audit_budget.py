"""audit's lock budget (issue 26) against what PostgreSQL does.

- pg_dump's need against pg_dump's real success and failure around the boundary: PG 19 with small settings
  (max_locks_per_transaction 10, max_connections 20: 560 entries), N tables so that lockscope's need is exactly the
  budget (``pg_dump -s`` of the same bin dir succeeds) and N + 1 (it fails "out of shared memory"); PG 18: the need
  within the nominal budget succeeds (the floor).
- CREATE INDEX and ALTER TABLE ADD COLUMN on a partitioned table: lockscope's need equals the lock-table entries
  pg_lock_status() shows for the transaction, on PG 13, 18 and 19.
- the findings and their fixes when a need exceeds the budget.
"""

from __future__ import annotations

import dataclasses
import subprocess
import time

import psycopg
import pytest

from lockscope.audit import AuditOptions, run_audit
from lockscope.audit.lockbudget import LockBudgetAudit, lock_budget_findings
from lockscope.budget import assumed_budget
from lockscope.db import connect
from lockscope.server import ScratchServer, ScratchSettings

from .fix_versions import bin_dir_of

pytestmark = pytest.mark.slow

#: The boundary servers: 10 x (MaxBackends 20 + 16 + 8 + 10 + 2) = 560 entries on PG 18 and 19; autovacuum off so
#: no worker holds entries while pg_dump runs.
_SMALL = ScratchSettings(max_locks_per_transaction=10, max_connections=20, extra={"autovacuum": "off"})


def _budget_audit(server: ScratchServer) -> LockBudgetAudit:
    with connect(server.conninfo()) as session:
        report = run_audit(session, AuditOptions(statements=False))
    assert report.lock_budget is not None and report.lock_budget.dump is not None
    return report.lock_budget


def _create_tables(conn: psycopg.Connection[tuple[object, ...]], first: int, last: int) -> None:
    """Tables t<first>..t<last>, 100 per transaction (one transaction of all would itself exhaust the table)."""
    for start in range(first, last + 1, 100):
        end = min(start + 99, last)
        conn.execute(f"DO $$BEGIN FOR i IN {start}..{end} LOOP "
                     "EXECUTE format('CREATE TABLE t%s (a int)', i); END LOOP; END$$")


def _main_table_entries(conn: psycopg.Connection[tuple[object, ...]], pid: int | None = None) -> int:
    """Lock-table entries (every lock outside the fast path, any type) of ``pid``, or of every backend."""
    row = conn.execute("SELECT count(*) FROM pg_lock_status() l WHERE NOT l.fastpath AND (%s::int IS NULL OR "
                       "l.pid = %s)", (pid, pid)).fetchone()
    assert row is not None
    return int(row[0])


def _pg_dump(server: ScratchServer) -> subprocess.CompletedProcess[str]:
    """``pg_dump -s``, returned once its backend has left: pg_dump exits as soon as it closes its connection, and
    the backend releases its lock-table entries (all of them at the limit) a moment later, in its own exit."""
    done = subprocess.run([str(server.tool("pg_dump")), "-s", "-d", server.conninfo()], capture_output=True,
                          text=True, timeout=300, check=False)
    with psycopg.connect(server.conninfo(), autocommit=True) as conn:
        deadline = time.monotonic() + 30.0
        while conn.execute("SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' "
                           "AND pid <> pg_backend_pid() AND application_name = 'pg_dump'").fetchone() != (0,):
            assert time.monotonic() < deadline, "pg_dump's backend did not exit within 30 s"
            time.sleep(0.05)
    return done


def _fill_to_budget(server: ScratchServer, conn: psycopg.Connection[tuple[object, ...]]) -> int:
    """Create tables until lockscope's pg_dump need equals the free entries; returns the table count."""
    _create_tables(conn, 1, 400)
    audit = _budget_audit(server)
    assert audit.budget.entries == 560
    assert audit.dump is not None
    tables = 400 + audit.budget.free_entries - audit.dump.need_entries
    _create_tables(conn, 401, tables)
    audit = _budget_audit(server)
    assert audit.dump is not None and audit.dump.need_entries == audit.budget.free_entries == 560
    assert audit.verdict(audit.dump.need_entries) == "fits"
    # nothing else holds an entry while pg_dump runs: the test's connection is idle, autovacuum is off, and
    # pg_dump's own virtual transaction ID lock is in its fast path
    assert _main_table_entries(conn) == 0
    return tables


def test_pg_dump_need_at_the_limit_pg19() -> None:
    with ScratchServer(bin_dir_of(19), _SMALL) as server, \
            psycopg.connect(server.conninfo(), autocommit=True) as conn:
        tables = _fill_to_budget(server, conn)
        # 424 tables + 150 catalogs of pg_dump's own queries - 16 fast-path slots + 2 transient = 560
        assert tables == 424
        done = _pg_dump(server)
        assert done.returncode == 0, done.stderr
        _create_tables(conn, tables + 1, tables + 1)
        audit = _budget_audit(server)
        assert audit.dump is not None and audit.dump.need_entries == 561
        assert audit.verdict(audit.dump.need_entries) == "exceeds"
        failed = _pg_dump(server)
        assert failed.returncode != 0 and "out of shared memory" in failed.stderr
        (finding,) = [f for f in lock_budget_findings(audit) if f.kind == "lock-budget-pg-dump"]
        assert finding.severity == "high"
        assert finding.title == "pg_dump of this database needs 561 lock-table entries of 560"
        assert finding.fix.startswith("max_locks_per_transaction = 11 (restart), or dump in parts, e.g. per "
                                      "schema with pg_dump -n (the largest, public, needs 561 entries: split it "
                                      "further with -t patterns)")
        assert finding.sql == ("-- pg_dump needs 561 lock-table entries; restart needed\n"
                               "ALTER SYSTEM SET max_locks_per_transaction = 11;",)


def test_pg_dump_need_within_the_floor_pg18() -> None:
    with ScratchServer(bin_dir_of(18), _SMALL) as server, \
            psycopg.connect(server.conninfo(), autocommit=True) as conn:
        _fill_to_budget(server, conn)
        done = _pg_dump(server)
        assert done.returncode == 0, done.stderr


_PARTITIONED = """
CREATE TABLE ev (id int, d int, v text) PARTITION BY RANGE (d);
CREATE INDEX ON ev (id);
DO $$BEGIN FOR i IN 0..11 LOOP
  EXECUTE format('CREATE TABLE ev_%s PARTITION OF ev FOR VALUES FROM (%s) TO (%s)', i, i * 10, i * 10 + 10);
  EXECUTE format('CREATE INDEX ON ev_%s (v)', i);
END LOOP; END$$;
CREATE TABLE ev_sub PARTITION OF ev FOR VALUES FROM (1000) TO (2000) PARTITION BY HASH (id);
CREATE TABLE ev_sub_0 PARTITION OF ev_sub FOR VALUES WITH (MODULUS 3, REMAINDER 0);
CREATE TABLE ev_sub_1 PARTITION OF ev_sub FOR VALUES WITH (MODULUS 3, REMAINDER 1);
CREATE TABLE ev_sub_2 PARTITION OF ev_sub FOR VALUES WITH (MODULUS 3, REMAINDER 2);
CREATE TABLE plain (a int);
"""


def _held_by_ddl(server: ScratchServer, ddl: str) -> int:
    """The lock-table entries a transaction holds after ``ddl`` (rolled back), read by another session: one per
    locked object outside the fast path (pg_locks has a row per mode; the table one entry per object)."""
    with psycopg.connect(server.conninfo()) as conn, \
            psycopg.connect(server.conninfo(), autocommit=True) as observer:
        pid = conn.info.backend_pid
        conn.execute(ddl)  # type: ignore[arg-type]
        row = observer.execute(
            "SELECT count(*) FROM (SELECT DISTINCT locktype, database, relation, page, tuple, virtualxid::text, "
            "transactionid::text, classid, objid, objsubid FROM pg_lock_status() WHERE pid = %s AND NOT fastpath) "
            "AS e", [pid]).fetchone()
        conn.rollback()
    assert row is not None
    return int(row[0])


def _relations_locked(server: ScratchServer, sql: str) -> int:
    """The relations of this database ``sql`` leaves locked in its transaction (rolled back), any mode, fast path
    or not."""
    with psycopg.connect(server.conninfo()) as conn:
        conn.execute(sql)  # type: ignore[arg-type]
        row = conn.execute("SELECT count(DISTINCT relation) FROM pg_locks WHERE pid = pg_backend_pid() AND "
                           "locktype = 'relation' AND relation >= 16384 AND database = (SELECT oid FROM "
                           "pg_database WHERE datname = current_database())").fetchone()
        conn.rollback()
    assert row is not None
    return int(row[0])


@pytest.mark.parametrize("major", [13, 18, 19])
def test_partitioned_table_ddl_need_equals_pg_locks(major: int) -> None:
    with ScratchServer(bin_dir_of(major), ScratchSettings(extra={"autovacuum": "off"})) as server:
        with psycopg.connect(server.conninfo(), autocommit=True) as conn:
            conn.execute(_PARTITIONED)
        audit = _budget_audit(server)
        (need,) = audit.partitions
        # ev, 12 + 1 partitions, 3 sub-partitions; ev and ev_sub partitioned
        assert (need.qualified, need.relations, need.partitioned) == ("public.ev", 17, 2)
        # a new index on every relation of the tree, and one attaching the partitions' existing indexes
        assert need.create_index_entries == _held_by_ddl(server, "CREATE INDEX ON ev (d, v)") == 35
        assert need.create_index_entries == _held_by_ddl(server, "CREATE INDEX ON ev (v)")
        assert need.alter_entries == _held_by_ddl(server, "ALTER TABLE ev ADD COLUMN z int") == 18
        # an UPDATE that prunes nothing: the 17 tables of the tree and the leaves' 27 indexes (and, from 16, the
        # partitioned ones: ev's and ev_sub's index on id); its entries with the transaction ID of the row written,
        # and the 2 transient entries a lock takes while the fast-path group is full
        with psycopg.connect(server.conninfo(), autocommit=True) as conn:
            conn.execute("INSERT INTO ev VALUES (1, 1, 'x')")  # a row to write: the UPDATE takes a transaction ID
        update = "UPDATE ev SET v = v"
        assert need.dml_relations == _relations_locked(server, update) == (44 if major < 16 else 46)
        assert need.dml_entries == _held_by_ddl(server, update) + 2
        assert need.leaves == 15 and need.dml_entries_by_leaves[-1] == need.dml_entries
        if major == 19:
            _findings_when_exceeded(audit)


def _findings_when_exceeded(audit: LockBudgetAudit) -> None:
    """The same needs against a lock table of 10 x (1 + 16 + 8 + 10 + 2) = 370 entries less 350 held."""
    small = dataclasses.replace(assumed_budget(190000, max_locks_per_transaction=10, max_connections=1),
                                held_entries=350)
    kinds = {f.kind: f for f in lock_budget_findings(dataclasses.replace(audit, budget=small))}
    ddl = kinds["lock-budget-partition-ddl"]
    assert ddl.title == "CREATE INDEX on public.ev needs 35 lock-table entries of 20"
    assert ddl.fix == ("CREATE INDEX ON ONLY public.ev, then per partition CREATE INDEX CONCURRENTLY and ALTER "
                       "INDEX ... ATTACH PARTITION, each its own transaction; or max_locks_per_transaction = 11 "
                       "(restart)")
    assert kinds["lock-budget-pg-dump"].severity == "high"
    # the unpruned UPDATE, all in the fast path but the transaction ID and the transient 2, against 1 free entry
    tiny = dataclasses.replace(small, held_entries=369)
    dml = {f.kind: f for f in lock_budget_findings(dataclasses.replace(audit, budget=tiny))}[
        "lock-budget-partition-dml"]
    assert dml.title == "an UPDATE or DELETE of public.ev without its partition key locks 46 relations: 3 lock-table "\
        "entries of 1"
    assert dml.fix == "max_locks_per_transaction = 11 (restart)"  # no partition is the problem: 3 entries at any
    # the widest footprint is a table here: the shared-lock-table finding speaks for it, not a second one
    assert "lock-budget-connections" not in kinds


@pytest.mark.parametrize("major", [13, 19])
def test_a_statement_near_the_budget_in_one_session(major: int) -> None:
    """lock-budget-statement: a read of a table with 70 indexes (the audit's widest footprint) needs, in one
    session, its relation locks outside the fast path (as pg_locks shows them during its planning), the transaction
    ID and 2 transient entries; named at half the free entries (low), beyond them with the budget's severity."""
    with ScratchServer(bin_dir_of(major), ScratchSettings(extra={"autovacuum": "off"})) as server:
        with psycopg.connect(server.conninfo(), autocommit=True) as conn:
            conn.execute("CREATE TABLE wide (" + ", ".join(f"c{i} int" for i in range(70)) + ")")
            for i in range(70):
                conn.execute(f"CREATE INDEX ON wide (c{i})")  # type: ignore[arg-type]
        audit = _budget_audit(server)
        spilled = _held_by_ddl(server, "EXPLAIN SELECT * FROM wide")  # planning opens every index
    assert audit.statement is not None
    assert (audit.statement.subject, audit.statement.spilled) == ("public.wide", spilled)
    need = audit.statement.need_entries
    assert need == spilled + 3
    base = assumed_budget(190000, max_locks_per_transaction=10, max_connections=1)  # 370 entries
    near = dataclasses.replace(base, held_entries=370 - need - 5)  # need is most of the free entries
    over = dataclasses.replace(base, held_entries=370 - need + 1)

    def finding(budget: object) -> list[str]:
        found = lock_budget_findings(dataclasses.replace(audit, budget=budget))
        return [f"{f.severity}: {f.title}" for f in found if f.kind == "lock-budget-statement"]

    share = round(100 * need / (need + 5))
    assert finding(near) == [f"low: one execution of public.wide needs {need} lock-table entries of {need + 5}: "
                             f"{share}% of them in one session"]
    assert finding(over) == [f"high: one execution of public.wide needs {need} lock-table entries of {need - 1}"]
    assert finding(dataclasses.replace(base, held_entries=0)) == []
