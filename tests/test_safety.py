"""Safety rules and bad input: nothing executed for real, nothing left behind, one clear line for every error."""

from __future__ import annotations

import threading
import time

import psycopg
import pytest

from lockscope.db import Session, connect, redact_dsn, run_script
from lockscope.errors import (
    BadInputError,
    ConnectionFailedError,
    LockBlockedError,
    StatementError,
    StatementParseError,
    UnsupportedStatementError,
)
from lockscope.footprint import measure_footprint, measure_generic_plan
from lockscope.rows import DatabaseFactsRow, RelationLockRow
from lockscope.server import ScratchServer
from lockscope.vocab import PlanCacheMode

from .helpers import run


def _rows(server: ScratchServer, sql: str) -> list[tuple[object, ...]]:
    with psycopg.connect(server.conninfo(), autocommit=True) as conn:
        return conn.execute(sql).fetchall()


@pytest.mark.parametrize("protocol", ["simple", "prepared"])
def test_dml_is_never_executed(any_pg: ScratchServer, any_session: Session, protocol: str) -> None:
    before = _rows(any_pg, "select id, owner, balance from acct order by id")
    assert len(before) == 100
    statements = ["delete from acct", "update acct set balance = 0, owner = 'gone'",
                  "insert into acct select g, 'new' from generate_series(1000, 1100) g",
                  "with d as (delete from acct returning *) select count(*) from d"]
    if any_pg.major >= 15:  # MERGE is PostgreSQL 15+
        statements.append("merge into acct a using (select 1 as id) s on a.id = s.id when matched then delete")
    for sql in statements:
        fp = measure_footprint(any_session, sql, protocol=protocol, executions=2)
        # probed for real (the target's RowExclusiveLock was seen), yet nothing changed
        assert ("public.acct", "RowExclusiveLock") in {(lk.relation, lk.mode) for lk in fp.executions[0].locks}
    assert _rows(any_pg, "select id, owner, balance from acct order by id") == before


def test_nothing_left_on_the_server(any_pg: ScratchServer) -> None:
    session = connect(any_pg.conninfo())
    pid = session.backend_pid
    measure_footprint(session, "select * from acct where id = $1", params=["1"], protocol="prepared")
    assert session.oracle_rows("select name from pg_prepared_statements") == []
    activity = _rows(any_pg, f"select application_name, state from pg_stat_activity where pid = {pid}")
    assert activity == [("lockscope", "idle")]  # not idle in transaction
    assert _rows(any_pg, f"select locktype, mode from pg_locks where pid = {pid}") == []
    session.close()
    time.sleep(0.2)
    assert _rows(any_pg, f"select 1 from pg_stat_activity where pid = {pid}") == []


GENERIC_PLAN_FIXTURE = """
create table gp_t (id int primary key default nextval('gp_seq'), x int not null);
create index gp_t_x on gp_t (x);
create table gp_log (op text not null, at timestamptz not null default now());
create function gp_record() returns trigger language plpgsql as
  $$ begin insert into gp_log (op) values (tg_op); return null; end $$;
create trigger gp_t_stmt after insert or update or delete on gp_t for each statement execute function gp_record();
create trigger gp_t_row after insert or update or delete on gp_t for each row execute function gp_record();
insert into gp_t (x) values (10), (20), (30);
truncate gp_log;
"""


def test_generic_plan_probe_executes_nothing_and_leaves_nothing(any_pg: ScratchServer) -> None:
    """measure_generic_plan on $n texts: PG 13-15 PREPARE + EXPLAIN EXECUTE name(NULL, ...) + DEALLOCATE, PG 16+
    EXPLAIN (GENERIC_PLAN). A real execution would fire the triggers (rows in gp_log), advance gp_seq (nextval is
    not rolled back) or change gp_t; none may happen, and the session must be left idle with no prepared
    statement and no lock."""
    run_script(any_pg.conninfo(), "create sequence gp_seq;" + GENERIC_PLAN_FIXTURE)
    try:
        seq_before = _rows(any_pg, "select last_value, is_called from gp_seq")
        assert seq_before == [(3, True)]
        rows_before = _rows(any_pg, "select id, x from gp_t order by id")
        assert rows_before == [(1, 10), (2, 20), (3, 30)]
        session = connect(any_pg.conninfo())
        pid = session.backend_pid
        probes = {
            "insert into gp_t (x) values ($1)": {"public.gp_t"},
            "insert into gp_t values ($1, $2)": {"public.gp_t"},
            "update gp_t set x = $1 where id = $2": {"public.gp_t", "public.gp_t_pkey", "public.gp_t_x"},
            "delete from gp_t where id = $1": {"public.gp_t", "public.gp_t_pkey", "public.gp_t_x"},
        }
        try:
            for sql, relations in probes.items():
                fp = measure_generic_plan(session, sql)
                locks = fp.executions[0].locks
                # the plan was built: the target and (UPDATE/DELETE) every index locked RowExclusive
                assert {lk.relation for lk in locks} == relations, sql
                assert {lk.mode for lk in locks} == {"RowExclusiveLock"}, sql
                assert fp.executions[0].phase == "generic-build"
            assert session.oracle_rows("select name from pg_prepared_statements") == []
            assert _rows(any_pg, f"select state from pg_stat_activity where pid = {pid}") == [("idle",)]
            assert _rows(any_pg, f"select locktype, mode from pg_locks where pid = {pid}") == []
        finally:
            session.close()
        assert _rows(any_pg, "select count(*) from gp_log") == [(0,)]
        assert _rows(any_pg, "select last_value, is_called from gp_seq") == seq_before
        assert _rows(any_pg, "select id, x from gp_t order by id") == rows_before
        assert _rows(any_pg, "select count(*) from pg_prepared_statements") == [(0,)]
    finally:
        run_script(any_pg.conninfo(), "drop table gp_t, gp_log; drop function gp_record(); drop sequence gp_seq")


def test_probe_transaction_settings(any_session: Session) -> None:
    with any_session.probe_transaction():
        row = any_session.oracle_rows(
            "select current_setting('transaction_read_only'), current_setting('lock_timeout'), "
            "current_setting('statement_timeout'), current_setting('application_name')")[0]
    assert row == ("on", "200ms", "5s", "lockscope")


@pytest.mark.parametrize("sql, word, node", [
    ("create table x (a int)", "CREATE", "CreateStmt"),
    ("drop table acct", "DROP", "DropStmt"),
    ("vacuum acct", "VACUUM", "VacuumStmt"),
    ("copy acct to stdout", "COPY", "CopyStmt"),
    ("set work_mem = '1GB'", "SET", "VariableSetStmt"),
    ("begin", "BEGIN", "TransactionStmt"),
    ("explain select 1", "EXPLAIN", "ExplainStmt"),
    ("execute foo", "EXECUTE", "ExecuteStmt"),
    ("lock table acct", "LOCK", "LockStmt"),
    ("  truncate acct", "TRUNCATE", "TruncateStmt"),
])
def test_utility_statements_are_refused(any_session: Session, sql: str, word: str, node: str) -> None:
    with pytest.raises(UnsupportedStatementError, match=rf"^{word} is a utility statement \({node}\)"):
        measure_footprint(any_session, sql)


def test_several_statements_empty_and_select_into(any_session: Session) -> None:
    with pytest.raises(UnsupportedStatementError, match="2 statements given"):
        measure_footprint(any_session, "select 1; drop table acct")
    for empty in ("", "   ", ";", "-- only a comment"):
        with pytest.raises(UnsupportedStatementError, match="empty statement"):
            measure_footprint(any_session, empty)
    with pytest.raises(UnsupportedStatementError, match=r"SELECT \.\.\. INTO"):
        measure_footprint(any_session, "select * into acct2 from acct")


def test_invalid_sql_is_refused_before_the_server(any_session: Session) -> None:
    """Text PostgreSQL's parser (pglast) rejects never reaches the server: the parser's message and psql's 1-based
    position (the server's own position for the same text, checked here), and no pg_locks read."""
    with pytest.raises(StatementParseError) as err:
        measure_footprint(any_session, "select * fro acct")
    assert str(err.value) == ('the statement does not parse: syntax error at or near "fro" (at character 10); '
                              "nothing was sent to a server")
    assert err.value.position == 10
    with pytest.raises(StatementError) as server, any_session.probe_transaction():  # the server's own position
        any_session.run_user_text("select * fro acct")
    assert server.value.position == err.value.position
    assert any_session.probe_cost.pg_locks_reads == 0


def test_pg_locks_reads_are_paced_counted_and_only_through_one_method(any_pg: ScratchServer) -> None:
    """Session.query_rows: the one way to read pg_locks, paced at the session's rate, counted and timed; unpaced by
    default (scratch servers). Other SQL files are neither paced nor counted."""
    with connect(any_pg.conninfo(), pg_locks_rate_hz=4.0) as session:
        session.query_rows("forecast_database", DatabaseFactsRow)
        assert session.probe_cost.pg_locks_reads == 0
        # one read per plan-cache phase, not per execution: custom (1-5), the generic plan's build (6), its reuse
        measure_footprint(session, "select * from acct where id = $1", params=["1"], protocol="prepared",
                          executions=8, plan_cache_mode=PlanCacheMode.FORCE_CUSTOM_PLAN)
        assert session.probe_cost.pg_locks_reads == 1
        measure_footprint(session, "select * from acct where id = $1", params=["1"], protocol="prepared",
                          executions=8)
        session.query_rows("relation_locks", RelationLockRow)
        cost = session.probe_cost
        assert (cost.pg_locks_reads, cost.probe_rate_hz) == (5, 4.0)
        assert cost.probing_s >= 1.0  # 5 reads at most 4 per second: 4 full intervals
        assert 0 < cost.pg_locks_ms < cost.probing_s * 1000
    with connect(any_pg.conninfo()) as session:
        measure_footprint(session, "select * from acct where id = 1")
        assert (session.probe_cost.pg_locks_reads, session.probe_cost.probe_rate_hz) == (1, 0.0)


def test_pacing_waits_before_the_probe_transaction(pg18: ScratchServer) -> None:
    """The wait for the next pg_locks read is spent before BEGIN, never while a probe holds the statement's locks:
    at 1 read per second, three probes take 2 s or more, yet each probe transaction (now() = its start, to the
    clock after its pg_locks read) lasts a small fraction of that."""
    with connect(pg18.conninfo(), pg_locks_rate_hz=1.0) as session:
        start = time.monotonic()
        held = []
        for _ in range(3):
            with session.probe_transaction():
                session.run_user_text("EXPLAIN select * from acct where id = 1")
                session.query_rows("relation_locks", RelationLockRow)
                held.append(float(session.oracle_rows("select extract(epoch from clock_timestamp() - now())")[0][0]))
        assert time.monotonic() - start >= 2.0
        assert max(held) < 0.5, held
        assert session.probe_cost.pg_locks_reads == 3


def test_audit_skips_a_text_its_parser_rejects(pg18: ScratchServer) -> None:
    """A pg_stat_statements text pglast cannot parse (e.g. a grammar newer than lockscope's parser) is skipped with
    the parser's reason, never sent to the server; the audit goes on with the others."""
    from lockscope.catalog import read_catalog
    from lockscope.workload.probes import probe_statements
    from lockscope.workload.statements import StatementRates

    rows = [StatementRates(queryid=1, userid=10, query="selec 1", calls=5, calls_per_s=1.0),
            StatementRates(queryid=2, userid=10, query="select * from acct where id = 1", calls=5, calls_per_s=1.0)]
    with connect(pg18.conninfo()) as session:
        bad, good = probe_statements(session, read_catalog(session), rows)
        assert bad.skipped_reason == ("does not parse with lockscope's parser (pglast): syntax error at or near "
                                      '"selec" (at character 1)')
        assert bad.custom is None and bad.generic is None
        assert good.skipped_reason is None and good.custom is not None and good.custom.locks == 3
        assert session.probe_cost.pg_locks_reads == 1


def test_unknown_relation_and_parameters(any_session: Session) -> None:
    with pytest.raises(StatementError, match='42P01: relation "nope" does not exist'):
        measure_footprint(any_session, "select * from nope")
    with pytest.raises(BadInputError, match=r"uses 1 parameter\(s\).*but 0 --param"):
        measure_footprint(any_session, "select * from acct where id = $1")
    with pytest.raises(StatementError, match="wrong number of parameters"):
        measure_footprint(any_session, "select * from acct where id = $1", protocol="prepared")
    with pytest.raises(StatementError, match='22P02: invalid input syntax for type integer: "abc"'):
        measure_footprint(any_session, "select * from acct where id = $1", params=["abc"])
    with pytest.raises(StatementError, match="22P02"):
        measure_footprint(any_session, "select * from acct where id = $1", params=["abc"], protocol="prepared")
    assert any_session.oracle_rows("select name from pg_prepared_statements") == []


def test_blocked_by_an_access_exclusive_lock(any_pg: ScratchServer, any_session: Session) -> None:
    holder = psycopg.connect(any_pg.conninfo())
    holder.execute("lock table acct in access exclusive mode")
    holder_pid = holder.info.backend_pid
    try:
        start = time.monotonic()
        with pytest.raises(LockBlockedError) as err:
            measure_footprint(any_session, "select * from acct where id = 1")
        elapsed = time.monotonic() - start
        assert f"blocked by a lock held by pid {holder_pid}" in str(err.value)
        assert "AccessExclusiveLock on acct" in str(err.value)
        assert err.value.blocking_pids[0] == holder_pid
        assert elapsed < 2.0
    finally:
        holder.rollback()
        holder.close()
    measure_footprint(any_session, "select * from acct where id = 1")  # the session is usable again


def test_statement_timeout_is_enforced(any_pg: ScratchServer) -> None:
    with connect(any_pg.conninfo(), lock_timeout_ms=1000) as session:
        session.statement_timeout_ms = 1  # the probe transactions' SET LOCAL statement_timeout
        with pytest.raises(StatementError, match="statement_timeout"):
            measure_footprint(session, "select * from p40 a, p40 b, p40 c, p40 d, p40 e, p40 f, p40 g, p40 h "
                                       "where a.k = b.k and b.k = c.k and c.k = d.k and d.k = e.k and e.k = f.k "
                                       "and f.k = g.k and g.k = h.k")


def test_a_cancel_request_is_not_called_a_timeout(any_pg: ScratchServer) -> None:
    """pg_cancel_backend on lockscope's query (57014, as statement_timeout): the error says it was canceled."""
    import threading

    with connect(any_pg.conninfo()) as session, psycopg.connect(any_pg.conninfo(), autocommit=True) as dba:
        pid = session.oracle_rows("select pg_backend_pid()")[0][0]
        canceller = threading.Timer(0.5, lambda: dba.execute("select pg_cancel_backend(%s)", (pid,)))
        canceller.start()
        try:
            with pytest.raises(StatementError) as caught:
                session.oracle_rows("select pg_sleep(3)")
        finally:
            canceller.join()
    assert str(caught.value) == ("canceled by the server or another session: canceling statement due to user "
                                 "request")


def test_every_query_has_the_timeouts(any_pg: ScratchServer) -> None:
    """Catalog reads outside probe transactions too: lock_timeout and statement_timeout are the session's own
    (connection options), so no lockscope query waits on a lock or runs without a bound."""
    for sampler in (False, True):
        with connect(any_pg.conninfo(), lock_timeout_ms=300, statement_timeout_ms=4000, sampler=sampler) as session:
            assert session.oracle_rows("select current_setting('lock_timeout'), current_setting('statement_timeout'), "
                                       "current_setting('transaction_read_only')") == [("300ms", "4s", "on")]
    holder = psycopg.connect(any_pg.conninfo())
    holder.execute("lock table acct in access exclusive mode")
    try:
        with connect(any_pg.conninfo(), lock_timeout_ms=300) as session:
            start = time.monotonic()
            with pytest.raises(LockBlockedError):
                session.oracle_rows("select count(*) from acct")  # a catalog-style read, not in a probe transaction
            assert time.monotonic() - start < 3.0
    finally:
        holder.rollback()
        holder.close()


def test_the_users_connection_options_are_kept(pg18: ScratchServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """lockscope adds its options to the DSN's ``options`` or to ``PGOPTIONS``, never in place of them."""
    monkeypatch.setenv("PGOPTIONS", "-c work_mem=7MB")
    for dsn, work_mem in ((pg18.conninfo(), "7MB"), (pg18.conninfo() + " options='-c work_mem=9MB'", "9MB")):
        with connect(dsn) as session:
            assert session.oracle_rows("select current_setting('work_mem'), current_setting('lock_timeout')") == [
                (work_mem, "200ms")]


def test_unreachable_server(tmp_path: object) -> None:
    with pytest.raises(ConnectionFailedError, match="cannot connect"):
        connect("host=127.0.0.1 port=1 user=x password=hunter2secret dbname=x connect_timeout=2")


@pytest.fixture(scope="module")
def tcp_server() -> object:
    with ScratchServer(tcp=True) as server:
        run_script(server.conninfo(), "create role alice login password 'right-password'")
        yield server


def test_bad_password_is_never_echoed(tcp_server: ScratchServer) -> None:
    dsn = f"host=127.0.0.1 port={tcp_server.port} user=alice password=Wr0ngSecret dbname=postgres"
    with pytest.raises(ConnectionFailedError) as err:
        connect(dsn)
    assert "Wr0ngSecret" not in str(err.value)
    assert str(err.value) == (f"cannot connect to 127.0.0.1:{tcp_server.port}, database postgres, user alice: "
                              f'connection to server at "127.0.0.1", port {tcp_server.port} failed: FATAL:  password '
                              'authentication failed for user "alice"')
    uri = f"postgresql://alice:Wr0ngSecret@127.0.0.1:{tcp_server.port}/postgres"
    proc = run("footprint", "--dsn", uri, "select 1")
    assert proc.returncode == 3
    assert "Wr0ngSecret" not in proc.stdout + proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
    ok = connect(f"host=127.0.0.1 port={tcp_server.port} user=alice password=right-password dbname=postgres")
    assert ok.facts.major == 18
    ok.close()


def test_tcp_listens_on_loopback_only(tcp_server: ScratchServer) -> None:
    assert _rows(tcp_server, "show listen_addresses") == [("127.0.0.1",)]


def test_redact_dsn() -> None:
    assert "s3cr3t" not in redact_dsn("postgresql://u:s3cr3t@h/db")
    assert "s3cr3t" not in redact_dsn("host=h password=s3cr3t")
    assert sorted(redact_dsn("host=h dbname=d").split()) == ["dbname=d", "host=h"]


def test_probe_does_not_hang_behind_a_waiting_strong_lock(any_pg: ScratchServer, any_session: Session) -> None:
    """A DDL queued behind a reader blocks new readers; the probe gives up after lock_timeout."""
    reader = psycopg.connect(any_pg.conninfo())
    reader.execute("select * from acct limit 1")  # holds AccessShareLock
    ddl_done = threading.Event()

    def ddl() -> None:
        with psycopg.connect(any_pg.conninfo(), autocommit=True) as conn:
            conn.execute("set lock_timeout = '3s'")
            try:
                conn.execute("alter table acct add column tmp int")
                conn.execute("alter table acct drop column tmp")
            except psycopg.errors.LockNotAvailable:
                pass
        ddl_done.set()

    t = threading.Thread(target=ddl)
    t.start()
    try:
        time.sleep(0.5)
        with pytest.raises(LockBlockedError, match="blocked by"):
            measure_footprint(any_session, "select * from acct where id = 1")
    finally:
        reader.rollback()
        reader.close()
        t.join(10)
    assert ddl_done.is_set()


def _log_lines_of(server: ScratchServer, since: int, pid: int) -> list[str]:
    """The server log's lines written after byte ``since`` by backend ``pid`` (log_line_prefix ``... [pid] ``)."""
    time.sleep(0.2)  # the logger writes asynchronously
    with open(server.log_file, "rb") as fh:
        fh.seek(since)
        text = fh.read().decode(errors="replace")
    return [line for line in text.splitlines() if f"[{pid}] " in line]


def test_probes_put_no_warning_or_error_in_the_server_log(any_pg: ScratchServer) -> None:
    """At the server's default log settings, probes that succeed leave no WARNING or ERROR line (a second BEGIN
    would log "there is already a transaction in progress" for every probe transaction)."""
    since = any_pg.log_file.stat().st_size
    with connect(any_pg.conninfo()) as session:
        measure_footprint(session, "select * from acct where id = 1")
        measure_footprint(session, "delete from acct where id = $1", params=["1"], protocol="prepared", executions=2)
        measure_generic_plan(session, "update acct set balance = $1 where id = $2")
        with session.probe_transaction():
            assert session.oracle_rows("select current_setting('transaction_read_only')") == [("on",)]
        assert session.oracle_rows("select current_setting('transaction_read_only')") == [("on",)]
        pid = session.backend_pid
    lines = _log_lines_of(any_pg, since, pid)
    assert not [line for line in lines if "WARNING:" in line or "ERROR:" in line], lines


def test_probes_put_no_statement_text_in_the_server_log(pg18: ScratchServer) -> None:
    """The acquisition order comes from a query tree built on the client: no debug_print_rewritten LOG line (with
    the statement's constants) reaches the server log (tests/test_server_log.py runs every command)."""
    since = pg18.log_file.stat().st_size
    with connect(pg18.conninfo()) as session:
        measure_footprint(session, "select * from acct where owner = 'application-data-7f3a'")
        pid = session.backend_pid
    lines = _log_lines_of(pg18, since, pid)
    assert not [line for line in lines if "application-data-7f3a" in line], lines[:5]
