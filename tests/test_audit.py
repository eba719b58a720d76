"""lockscope audit on real servers: a real application schema (GitLab subset, tests/data/gitlab), PG 18 and PG 15.

The audit's table footprints are checked against pg_locks measurements (the footprint engine) of the same
statements: exact lock counts and exact main-lock-table counts.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from lockscope.audit import AuditOptions, AuditReport, run_audit
from lockscope.cli import main
from lockscope.db import Session, connect, run_script
from lockscope.errors import EXIT_SPILL
from lockscope.footprint import measure_footprint, measure_generic_plan
from lockscope.rows import DatabaseFactsRow, NameRow, WatchFeaturesRow
from lockscope.server import ScratchServer, ScratchSettings

from .conftest import OLD_PG_BIN

DATA = Path(__file__).parent / "data" / "gitlab"
SCHEMA = (DATA / "schema.sql").read_text()
WORKLOAD = [ln for ln in (DATA / "workload.sql").read_text().splitlines() if ln and not ln.startswith("--")]
ROWS = """
create extension if not exists pg_stat_statements;
insert into namespaces (id, name, path, type, parent_id, organization_id, traversal_ids)
  select g, 'ns' || g, 'path' || g, case when g % 3 = 0 then 'Group' else 'User' end,
         case when g % 5 = 0 then null else g / 5 end, 1, array[g] from generate_series(1, 300) g;
insert into merge_requests (id, target_branch, source_branch, target_project_id, iid, title, created_at, state_id)
  select g, 'main', 'feature' || g, 1 + g % 20, g, 'MR ' || g, now(), 1 + g % 3 from generate_series(1, 400) g;
insert into merge_request_diffs (id, merge_request_id, project_id)
    select g, 1 + g % 400, 1 from generate_series(1, 400) g;
insert into members (id, access_level, source_id, source_type, notification_level, member_namespace_id)
  select g, 30, 1 + g % 50, 'Namespace', 3, 1 + g % 50 from generate_series(1, 300) g;
insert into p_ci_builds (id, partition_id, commit_id, type, stage_idx, status)
  select g, 100 + g % 4, 1 + g % 40, 'Ci::Build', g % 5, 'success' from generate_series(1, 800) g;
analyze;
"""
PARAMS = {
    "select * from namespaces where id = $1": ["7"],
    "select * from namespaces where type = 'Group' and parent_id is null and lower(path) = lower($1)": ["path15"],
    "select * from merge_requests where target_project_id = $1 and iid = $2": ["3", "42"],
    "select id, title from merge_requests where target_project_id = $1 and state_id = 1 order by created_at desc "
    "limit 20": ["3"],
    "update merge_requests set updated_at = now() where id = $1": ["9"],
    "select * from merge_request_diffs where merge_request_id = $1 order by id desc limit 1": ["5"],
    "select * from members where source_id = $1 and source_type = 'Namespace' and requested_at is null": ["4"],
    "select * from p_ci_builds where partition_id = $1 and id = $2": ["101", "5"],
    "select * from p_ci_builds where commit_id = $1 and type = 'Ci::Build' order by stage_idx": ["4"],
}


def _gitlab_server(bin_dir: Path | None) -> Iterator[tuple[ScratchServer, AuditReport]]:
    if bin_dir is not None and not (bin_dir / "postgres").exists():
        pytest.fail(f"no PostgreSQL at {bin_dir}: run scripts/test.sh", pytrace=False)
    with ScratchServer(bin_dir, ScratchSettings(max_locks_per_transaction=64)) as server:
        run_script(server.conninfo(), SCHEMA + ROWS)
        # the application's workload: every statement 8 times as a prepared statement (generic plans from the 6th)
        with psycopg.connect(server.conninfo(), autocommit=True, prepare_threshold=0) as conn:
            for sql in WORKLOAD:
                for _ in range(8):
                    conn.execute(re.sub(r"\$\d+", "%s", sql), PARAMS[sql])  # type: ignore[arg-type]
        with connect(server.conninfo()) as session:
            report = run_audit(session, AuditOptions(interval_s=0, unused_min_age_s=0))
        yield server, report


@pytest.fixture(scope="module")
def gitlab18() -> Iterator[tuple[ScratchServer, AuditReport]]:
    yield from _gitlab_server(None)


@pytest.fixture(scope="module")
def gitlab_old() -> Iterator[tuple[ScratchServer, AuditReport]]:
    yield from _gitlab_server(OLD_PG_BIN)


def _table(report: AuditReport, name: str):  # type: ignore[no-untyped-def]
    return next(t for t in report.tables if t.qualified == f"public.{name}")


def _assert_tables_match_pg_locks(server: ScratchServer, report: AuditReport) -> None:
    with connect(server.conninfo()) as session:
        for t in report.tables:
            if t.kind == "partitioned table":
                continue
            e = measure_footprint(session, f"select * from {t.qualified}").executions[0]
            assert sorted(lk.relation_oid for lk in e.locks) == sorted(t.pruned.relation_oids), t.qualified
            assert (e.lock_count, e.main_table_count) == (t.pruned.locks, t.pruned.spilled), t.qualified
        builds = _table(report, "p_ci_builds")
        catalog_leaves = {report.names[o]: o for o in builds.unpruned.relation_oids
                          if re.fullmatch(r"public\.ci_builds_\d+", report.names.get(o, ""))}
        assert len(catalog_leaves) == 4
        version = report.server_version_num
        for name, leaf in catalog_leaves.items():
            value = name.rsplit("_", 1)[1]
            e = measure_footprint(session, f"select * from p_ci_builds where partition_id = {value}").executions[0]
            assert leaf in {lk.relation_oid for lk in e.locks}
            if leaf == builds.pruned.partition_oid:  # the audit reports the worst partition
                assert (e.lock_count, e.main_table_count) == (builds.pruned.locks, builds.pruned.spilled)
            assert e.lock_count == builds.pruned.locks
        e = measure_footprint(session, "select * from p_ci_builds where partition_id = (select 100)").executions[0]
        assert sorted(lk.relation_oid for lk in e.locks) == sorted(builds.unpruned.relation_oids)
        assert (e.lock_count, e.main_table_count) == (builds.unpruned.locks, builds.unpruned.spilled)
        assert version // 10000 in (15, 18)


# -- table footprints = pg_locks ---------------------------------------------------------------------------------
def test_gitlab_table_footprints_match_pg_locks_pg18(gitlab18: tuple[ScratchServer, AuditReport]) -> None:
    server, report = gitlab18
    assert report.capacity.slots == 64
    # PostgreSQL is exact here: 1 table + its indexes; partitioned (PG 16+): parent + 19 partitioned indexes
    # + 1 partition + its 19 indexes; unpruned: parent + 19 + 4 x (1 + 19)
    assert (_table(report, "namespaces").pruned.locks, _table(report, "merge_requests").pruned.locks,
            _table(report, "members").pruned.locks, _table(report, "merge_request_diffs").pruned.locks) == (
        25, 29, 17, 10)
    builds = _table(report, "p_ci_builds")
    assert (builds.pruned.locks, builds.unpruned.locks, builds.partitions) == (40, 100, 4)
    _assert_tables_match_pg_locks(server, report)


def test_gitlab_table_footprints_match_pg_locks_old(gitlab_old: tuple[ScratchServer, AuditReport]) -> None:
    server, report = gitlab_old
    assert report.capacity.slots == 16
    assert [(_table(report, n).pruned.locks, _table(report, n).pruned.spilled)
            for n in ("namespaces", "merge_requests", "members", "merge_request_diffs")] == [
        (25, 9), (29, 13), (17, 1), (10, 0)]
    builds = _table(report, "p_ci_builds")  # PG 13-15 do not lock the partitioned indexes
    assert (builds.pruned.locks, builds.pruned.spilled, builds.unpruned.locks, builds.unpruned.spilled) == (
        21, 5, 81, 65)
    _assert_tables_match_pg_locks(server, report)
    high = {f.subject for f in report.findings if f.kind == "table-spill"}
    assert {"public.namespaces", "public.merge_requests", "public.members"} <= high


# -- statements ------------------------------------------------------------------------------------------------------
def _stmt(report: AuditReport, prefix: str):  # type: ignore[no-untyped-def]
    return next(s for s in report.workload.statements if s.query.startswith(prefix))


@pytest.mark.parametrize("fixture", ["gitlab18", "gitlab_old"])
def test_gitlab_statement_footprints(fixture: str, request: pytest.FixtureRequest) -> None:
    _server, report = request.getfixturevalue(fixture)
    w = report.workload
    assert w.available and w.entries >= len(WORKLOAD)
    mr = _stmt(report, "select * from merge_requests where target_project_id = $1 and iid = $2")
    assert mr.custom is not None and mr.custom.locks == _table(report, "merge_requests").pruned.locks
    assert mr.custom.spilled == _table(report, "merge_requests").pruned.spilled
    assert mr.calls == 8 and mr.calls_per_s > 0
    # 29 relations (table + 28 indexes): 16 slots spill 13 before PG 18; PG 18's 64 slots (4 groups) hold them.
    # Prepared from the first of 8 executions: 5 custom plans and the generic build plan (track_planning counts 6
    # plannings), the last 2 reuse the cached plan (table + its scanned index: nothing spills)
    assert mr.split is not None and mr.split.basis == "plans"
    assert mr.split.reused_fraction == pytest.approx(2 / 8)
    assert mr.spilled_per_call == pytest.approx({"gitlab18": 0, "gitlab_old": 6 * 13 / 8}[fixture])
    per_call = {"gitlab18": 0, "gitlab_old": 6 * 13 / 8}[fixture]
    assert mr.main_lock_table_per_s == pytest.approx(mr.calls_per_s * per_call)
    # pruned at plan time by the derived partition_id value
    builds = _table(report, "p_ci_builds")
    pruned = _stmt(report, "select * from p_ci_builds where partition_id = $1 and id = $2")
    assert pruned.custom is not None and pruned.custom.locks == builds.pruned.locks
    assert not pruned.non_pruning
    # the generic plan cannot prune with $1: building it locks the whole tree; reusing it, parent + 4 partitions
    assert pruned.generic is not None and pruned.generic.locks == builds.unpruned.locks
    assert pruned.generic_reuse is not None and pruned.generic_reuse.locks == 5
    assert pruned.generic_locks_more
    assert any(f.kind == "generic-over-custom" and f.subject == f"queryid {pruned.queryid}" for f in report.findings)
    # no partition key: never prunes
    commit = _stmt(report, "select * from p_ci_builds where commit_id = $1")
    assert [(c.partitions_locked, c.partitions_total) for c in commit.non_pruning] == [(4, 4)]
    assert commit.custom is not None and commit.custom.locks == builds.unpruned.locks
    assert any(f.kind == "non-pruning" and f.subject == f"queryid {commit.queryid}" for f in report.findings)
    # measured = the capacity model, for every probed plan
    for s in w.statements:
        for fp in (s.custom, s.generic):
            if fp is not None:
                assert fp.spilled == fp.predicted_spilled, s.query


def test_gitlab_lock_partition_load_old(gitlab_old: tuple[ScratchServer, AuditReport]) -> None:
    """The audit's per-partition acquisitions/s = calls/s x each statement's main-table locks per lock partition,
    planned calls and reuses of the cached plan weighted by the phase split (track_planning: 6 of the 8 calls
    planned), as pg_locks shows them (the footprint engine's lock_partition, the server's LockTagHashCode): the
    planned call's locks from EXPLAIN, the reuse's from EXPLAIN EXECUTE of a generic plan (the indexes it scans,
    which only a real execution opens, with predicted flags)."""
    server, report = gitlab_old
    load = report.partition_load
    assert load is not None and load.database_oid == report.database_oid
    expected = [0.0] * 16
    spilling = 0
    with connect(server.conninfo()) as session:
        for s in report.workload.statements:
            if s.skipped_reason or s.split is None:
                continue
            # 6 plannings of 8 calls (2 reuses), or 8 where the generic plan of a partitioned table costs more than
            # the custom plans and the plan cache keeps planning (plancache.c choose_custom_plan)
            reused_share = s.split.reused_fraction
            assert reused_share is not None and round(reused_share * 8) in (0, 2), s.query
            # a planned call: the custom plan, or the generic plan's build when no custom plan could be probed
            planned = (measure_footprint(session, s.query, params=s.params) if s.custom is not None
                       else measure_generic_plan(session, s.query)).executions[0]
            main_planned = [lk for lk in planned.locks if not lk.fastpath]
            if s.custom is None:
                main_reused = []  # no values to execute the prepared statement with: the reuse below spills nothing
                assert s.generic_reuse is not None and s.generic_reuse.spilled == 0, s.query
            else:
                reused = measure_footprint(session, s.query, params=s.params, protocol="prepared",
                                           plan_cache_mode="force_generic_plan", executions=2).executions[1]
                assert reused.phase == "generic-reuse"
                main_reused = [lk for lk in (*reused.locks, *reused.executor_index_locks) if not lk.fastpath]
            assert s.spilled_per_call == pytest.approx((1 - reused_share) * len(main_planned)
                                                       + reused_share * len(main_reused)), s.query
            spilling += bool(main_planned)
            for locks, share in ((main_planned, 1 - reused_share), (main_reused, reused_share)):
                for lk in locks:
                    expected[lk.lock_partition] += s.calls_per_s * share
    assert spilling >= 3
    assert load.acquisitions_per_s == pytest.approx(expected)
    assert load.total_per_s == pytest.approx(sum(s.main_lock_table_per_s for s in report.workload.statements))
    hot = load.hottest_partition
    assert hot is not None and load.lwlock_acquisitions_per_s[hot] == max(load.lwlock_acquisitions_per_s)
    # the statements and relations loading the hottest partition add up to its acquisitions
    assert sum(st.acquisitions_per_s for st in load.statements) == pytest.approx(load.acquisitions_per_s[hot])
    assert sum(r.acquisitions_per_s for r in load.relations) == pytest.approx(load.acquisitions_per_s[hot])
    assert all(r.relation.startswith("public.") for r in load.relations)
    # the same in JSON, in the terminal report and in HTML
    from rich.console import Console

    from lockscope.report.audit_html import audit_html
    from lockscope.report.audit_json import audit_to_dict
    from lockscope.report.audit_terminal import render_audit

    doc = audit_to_dict(report)["lock_partition_load"]
    assert doc["hottest_partition"] == hot and len(doc["acquisitions_per_s"]) == 16
    assert doc["relations"][0]["relation"] == load.relations[0].relation
    console = Console(record=True, width=1000)
    console.print(render_audit(report))
    text = console.export_text()
    assert f"hottest: partition {hot}," in text and load.verdict in text and load.relations[0].relation in text
    assert f"<b>partition {hot}</b>" in audit_html(report)


@pytest.mark.parametrize("fixture", ["gitlab18", "gitlab_old"])
def test_gitlab_generic_reuse_locks_equal_a_real_execution(fixture: str, request: pytest.FixtureRequest) -> None:
    """The derived locks of reusing a cached generic plan (AcquireExecutorLocks' tables and partitions, then the
    indexes the executor opens for its index scans) = pg_locks after a real execution on the test's own server."""
    from psycopg import sql

    server, report = request.getfixturevalue(fixture)
    checked = 0
    with psycopg.connect(server.conninfo(), autocommit=True) as conn:
        conn.execute("set plan_cache_mode = force_generic_plan")
        for n, s in enumerate(report.workload.statements):
            reuse = s.generic_reuse
            if reuse is None or not s.params or s.skipped_reason:
                continue
            conn.execute(f"prepare reuse_{n} as {s.query}")
            run = sql.SQL("execute {}({})").format(sql.Identifier(f"reuse_{n}"),
                                                    sql.SQL(", ").join(sql.Literal(p) for p in s.params))
            conn.execute("begin")
            conn.execute(run)  # builds the generic plan (planner locks) ...
            conn.execute("rollback")
            conn.execute("begin")
            conn.execute(run)  # ... and reuses it
            locked = {int(r[0]) for r in conn.execute(
                "select l.relation from pg_locks l join pg_class c on c.oid = l.relation where l.pid = "
                "pg_backend_pid() and l.locktype = 'relation' and c.relnamespace = 'public'::regnamespace")}
            conn.execute("rollback")
            assert locked == set(reuse.relation_oids), s.query
            checked += 1
            if "table" in reuse.roles:  # a plain table: it and the index its generic plan scans
                assert reuse.roles == ("table", "index"), s.query
    assert checked >= 7


def test_lockscope_own_queries_are_not_audited(gitlab18: tuple[ScratchServer, AuditReport]) -> None:
    """Every lockscope SQL file carries the /* lockscope */ marker after its first keyword, so the queries of a
    watch or a forecast on the same server (here: the name look-up and the database OID) are not audited."""
    server, _ = gitlab18
    with connect(server.conninfo()) as session:
        for name, row_type in (("watch_names", NameRow), ("forecast_database", DatabaseFactsRow),
                               ("watch_features", WatchFeaturesRow)):
            session.query_rows(name, row_type)
        report = run_audit(session, AuditOptions(interval_s=0, unused_min_age_s=0))
    texts = [s.query for s in report.workload.statements if not s.skipped_reason]
    assert texts and not [t for t in texts if "lockscope" in t or "pg_database AS d" in t]


def test_gitlab_drop_plan_and_index_rules_old(gitlab_old: tuple[ScratchServer, AuditReport]) -> None:
    _, report = gitlab_old
    findings = {f.qualified: f for f in report.index_findings}
    for f in report.index_findings:  # never unique, PK, constraint or attached partition index
        if f.droppable:
            assert f.protected_reason is None
    protected = {n: f for n, f in findings.items() if n.endswith("_pkey") or "unique" in n or "_iid" in n
                 or n.endswith("invite_token") or "parent_id_and_id" in n}
    assert protected and not any(f.droppable for f in protected.values())
    assert {f.protected_reason for f in protected.values()} <= {"primary key", "unique",
                                                                 "attached to a partitioned index (drop that one "
                                                                 "instead)"} | {f.protected_reason for f in
                                                                                protected.values()
                                                                                if f.protected_reason and
                                                                                f.protected_reason.startswith("backs")}
    plans = {report.names[p.table_oid]: p for p in report.drop_plans}
    mr = plans["public.merge_requests"]
    assert mr.sufficient and mr.exact and len(mr.index_oids) == 13  # 29 locks, 16 slots: exactly 13 to drop
    assert all(findings[report.names[o]].droppable for o in mr.index_oids)
    builds = plans["public.p_ci_builds"]  # a partitioned index removes one lock per partition pruned to
    assert builds.sufficient and len(builds.index_oids) == 5
    assert all(findings[report.names[o]].partitioned for o in builds.index_oids)


def test_gitlab_mlpt_advice_pg18_and_upgrade_old(gitlab18: tuple[ScratchServer, AuditReport],
                                                 gitlab_old: tuple[ScratchServer, AuditReport]) -> None:
    _, new = gitlab18
    _, old = gitlab_old
    assert old.mlpt.upgrade and old.mlpt.groups_needed == 8  # 128 slots on PG 18 with the same OIDs
    assert (old.mlpt.mlpt_min, old.mlpt.mlpt_recommended) == (65, 128)
    assert (old.mlpt.tables_spilling_now, old.mlpt.tables_spilling_after) == (4, 0)
    assert not new.mlpt.upgrade and new.mlpt.shmem_now_bytes == 3_613_836  # the model (lock.c LockManagerShmemSize)
    # shared lock table capacity: mlpt 64 x (MaxBackends + max_prepared_transactions 0); the scratch server's
    # MaxBackends, read from the server: max_connections + autovacuum_worker_slots + max_worker_processes
    # + max_wal_senders + 2 = 100 + 16 + 8 + 10 + 2
    assert (new.max_backends, new.max_prepared_transactions, new.shared_lock.entries) == (136, 0, 8704)


# -- bad input and degraded modes ------------------------------------------------------------------------------------
def test_missing_pg_stat_statements_is_a_note(session_old: Session) -> None:
    report = run_audit(session_old, AuditOptions(interval_s=0))
    assert not report.workload.available
    assert any("CREATE EXTENSION pg_stat_statements" in n for n in report.notes)
    assert report.tables  # the catalog part still works


def test_no_privileges_on_pg_stat_statements(gitlab18: tuple[ScratchServer, AuditReport]) -> None:
    server, _ = gitlab18
    run_script(server.conninfo(), "create role auditor login; grant select on all tables in schema public to auditor")
    with connect(server.conninfo().replace("user=postgres", "user=auditor")) as session:
        report = run_audit(session, AuditOptions(interval_s=0))
    assert report.workload.available and report.workload.hidden >= len(WORKLOAD)
    assert any("GRANT pg_read_all_stats TO auditor" in n for n in report.notes)
    run_script(server.conninfo(), "revoke execute on function pg_stat_statements(boolean) from public")
    try:
        with connect(server.conninfo().replace("user=postgres", "user=auditor")) as session:
            report = run_audit(session, AuditOptions(interval_s=0))
        assert not report.workload.available
        assert any("could not be read" in n and "pg_read_all_stats" in n for n in report.notes)
    finally:
        run_script(server.conninfo(), "grant execute on function pg_stat_statements(boolean) to public")


def test_standby_is_audited_read_only(scratch_base: Path) -> None:
    with ScratchServer(base_dir=scratch_base) as server:
        run_script(server.conninfo(), "create extension pg_stat_statements; create table s (id int primary key, v int);"
                                      "create index on s (v); select * from s where id = 1;")
        signal = server.data_dir / "standby.signal"
        signal.write_text("")
        import os
        import pwd

        if os.geteuid() == 0:
            entry = pwd.getpwnam("lockscope")
            os.chown(signal, entry.pw_uid, entry.pw_gid)
        server.restart()
        with connect(server.conninfo()) as session:
            assert session.facts.in_recovery
            report = run_audit(session, AuditOptions(interval_s=0))
        assert report.in_recovery and any(n.startswith("standby") for n in report.notes)
        assert _table(report, "s").pruned.locks == 3
        assert report.workload.available


def test_cli_unreachable_and_bad_dsn(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["audit", "--dsn", "host=127.0.0.1 port=1 user=x password=hunter2secret connect_timeout=2"])
    err = capsys.readouterr().err
    assert code == 3 and "hunter2secret" not in err and len(err.strip().splitlines()) == 1
    assert main(["audit", "--dsn", "host=x", "--mlpt", "32"]) == 2


# -- the embedded demo through the CLI: files, SQL script, exit code ---------------------------------------------------
@pytest.mark.slow
def test_cli_demo_writes_report_sql_and_fails_on_high(tmp_path: Path, load_lock: None,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    out = {k: tmp_path / f"audit.{k}" for k in ("json", "html", "sql")}
    code = main(["audit", "--demo", "--interval", "2", "--json", str(out["json"]), "--html", str(out["html"]),
                 "--sql", str(out["sql"]), "--fail-on", "high"])
    assert code == EXIT_SPILL, capsys.readouterr().err
    doc = json.loads(out["json"].read_text())
    assert doc["schema"] == "lockscope/audit/v1" and doc["demo"] is True
    assert doc["summary"]["high"] >= 1 and doc["statements"]["available"]
    kinds = {f["kind"] for f in doc["findings"]}
    assert {"table-spill", "statement-spill", "non-pruning", "generic-over-custom", "shared-lock-table",
            "index-duplicate", "max-locks-per-transaction", "plan-cache-mode", "partition-granularity"} <= kinds
    assert {(i["index"], i["kind"], i["droppable"]) for i in doc["indexes"]} >= {
        ("public.orders_ratio", "invalid", True), ("public.orders_customer_id_again", "duplicate", True),
        ("public.orders_status_copy", "duplicate", True)}
    orders = next(t for t in doc["tables"] if t["table"] == "public.orders")
    assert (orders["pruned"]["locks"], orders["pruned"]["spilled"]) == (19, 3)
    plan = next(p for p in doc["drop_plans"] if p["table"] == "public.orders")
    assert plan["sufficient"] and len(plan["indexes"]) == 3 and "public.orders_ratio" in plan["indexes"]
    sql = out["sql"].read_text()
    assert "DROP INDEX CONCURRENTLY public.orders_ratio;" in sql
    assert "ALTER SYSTEM SET max_locks_per_transaction = " in sql
    assert 'ALTER ROLE "postgres" IN DATABASE "postgres" SET plan_cache_mode = force_custom_plan;' in sql
    for stmt in re.findall(r"^(DROP|ALTER)[^\n]*", sql, re.M):
        assert stmt  # every statement is preceded by its evidence comment:
    for block in sql.split("\n\n")[1:]:
        if block.strip() and not block.startswith("-- nothing"):
            assert block.lstrip().startswith("-- [")
    html = out["html"].read_text()
    assert "<svg" in html and "<script" not in html.lower()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html) and "<link" not in html  # self-contained
    assert main(["audit", "--demo", "--interval", "1", "--fail-on", "high", "--no-statements", "--mlpt", "64"]) == 0


# -- scale: a 50,000-entry pg_stat_statements is capped (top N) and fast -----------------------------------------
MANY_STATEMENTS = """
create extension pg_stat_statements;
create table w (c0 int, c1 int, c2 int, c3 int, c4 int, c5 int, c6 int, c7 int, c8 int, c9 int,
                c10 int, c11 int, c12 int, c13 int, c14 int, c15 int, c16 int, c17 int, c18 int, c19 int);
create index on w (c0);
do $$
declare n int := 0;
begin
  -- ordered column 4-tuples give distinct queryids (target-list order is part of the jumble)
  <<outer>>
  for a in 0..19 loop for b in 0..19 loop for c in 0..19 loop for d in 0..19 loop
    continue when a = b or a = c or a = d or b = c or b = d or c = d;
    execute format('select c%s, c%s, c%s, c%s from w where c0 = 1', a, b, c, d);
    n := n + 1;
    exit outer when n >= 50000;
  end loop; end loop; end loop; end loop;
end $$;
"""


@pytest.mark.slow
def test_50000_statements_are_capped_and_fast(load_lock: None) -> None:
    import time

    settings = ScratchSettings(extra={"pg_stat_statements.max": "60000", "pg_stat_statements.track": "all"})
    with ScratchServer(settings=settings) as server:
        run_script(server.conninfo(), MANY_STATEMENTS)
        with connect(server.conninfo()) as session:
            t0 = time.monotonic()
            report = run_audit(session, AuditOptions(interval_s=0, top_n=200))
            elapsed = time.monotonic() - t0
    assert report.workload.entries >= 50000
    # the top 200 by calls, and beyond them only a statement that carries at least 1 % of the calls or of the
    # execution time (on a slow machine one cold first execution of the 50,000 can: the total is ~0.1 s)
    beyond = report.workload.statements[200:]
    w = report.workload
    assert 200 <= len(w.statements) <= 210
    assert all(s.calls_per_s * (s.mean_exec_ms or 0.0) >= 0.01 * w.total_exec_ms_per_s
               or s.calls_per_s >= 0.01 * w.total_calls_per_s
               for s in beyond), [(s.query, s.calls_per_s, s.mean_exec_ms) for s in beyond]
    assert any("the top 200 by calls are audited" in n for n in report.notes)
    probed = [s for s in report.workload.statements if s.query.startswith("select c")]
    assert len(probed) >= 190  # the rest: the DO block and lockscope's set-up statements
    assert all(s.generic is not None and s.generic.locks == 2 for s in probed)  # w and its index
    assert all(s.custom_reason and "no statistics" in s.custom_reason for s in probed)  # w is empty
    assert elapsed < 30, elapsed
