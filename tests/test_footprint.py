"""Footprints measured on real servers: the seed numbers, exactly, with measured = predicted."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from lockscope.capacity import CapacityModel, LockRequest, simulate_fast_path
from lockscope.db import Session, connect, run_script
from lockscope.demo import EVENTS_STATEMENT, PK_SELECT, extra_index_sweep, load_events_rows
from lockscope.footprint import Footprint, measure_all_modes, measure_footprint
from lockscope.pgbench import pgbench_init
from lockscope.server import ScratchServer, ScratchSettings

from .conftest import DEMO_SCHEMA, OLD_PG_BIN

EVENTS_PARAM = ["2024-06-06 00:00:00+00"]


def counts(fp: Footprint) -> list[int]:
    return [e.lock_count for e in fp.executions]


def assert_model_agrees(*fps: Footprint) -> None:
    for fp in fps:
        for e in fp.executions:
            assert e.mismatches == (), [(lk.relation, lk.fastpath, lk.predicted_fastpath) for lk in e.mismatches]


# -- PostgreSQL 18 -------------------------------------------------------------------------------------------------
def test_events_prepared_three_modes_pg18(session18: Session) -> None:
    auto, custom, generic = measure_all_modes(session18, EVENTS_STATEMENT, params=EVENTS_PARAM, executions=8)
    assert counts(auto) == [8, 8, 8, 8, 8, 52, 13, 13]
    assert [e.phase for e in auto.executions] == ["custom"] * 5 + ["generic-build"] + ["generic-reuse"] * 2
    assert [e.plan_type for e in auto.executions] == ["custom"] * 5 + ["generic"] * 3
    assert counts(generic) == [52] + [13] * 7
    assert generic.executions[0].phase == "generic-build"
    assert counts(custom) == [8] * 8
    assert all(e.plan_type == "custom" for e in custom.executions)
    assert all(e.main_table_count == 0 for fp in (auto, custom, generic) for e in fp.executions)  # mlpt 64
    assert_model_agrees(auto, custom, generic)


def test_events_roles_pg18(session18: Session) -> None:
    fp = measure_footprint(session18, EVENTS_STATEMENT.replace("$1", "'2024-06-06'"))
    roles = sorted(lk.role for lk in fp.executions[0].locks)
    assert roles == ["partition"] + ["partition index"] * 3 + ["partitioned index"] * 3 + ["partitioned table"]
    assert {lk.mode for lk in fp.executions[0].locks} == {"AccessShareLock"}
    assert fp.executions[0].locks[0].relation == "public.events"  # parser lock first


def test_generic_reuse_locks_parent_and_all_partitions_only(session18: Session) -> None:
    fp = measure_footprint(session18, EVENTS_STATEMENT, params=EVENTS_PARAM, protocol="prepared",
                           plan_cache_mode="force_generic_plan", executions=2)
    reuse = fp.executions[1]
    assert sorted({lk.role for lk in reuse.locks}) == ["partition", "partitioned table"]
    assert any("Subplans Removed: 11" in line for line in reuse.plan)


def test_unpartitioned_five_indexes_pg18(session18: Session) -> None:
    fp = measure_footprint(session18, "select from t", protocol="prepared", param_types=["int"], params=["1"],
                           executions=8)
    assert counts(fp) == [6, 6, 6, 6, 6, 6, 1, 1]
    assert [e.phase for e in fp.executions][5:] == ["generic-build", "generic-reuse", "generic-reuse"]
    assert_model_agrees(fp)


def test_no_parameters_means_generic_from_the_first_execution(session18: Session) -> None:
    fp = measure_footprint(session18, "select from t", protocol="prepared", executions=3)
    assert counts(fp) == [6, 1, 1]
    assert [e.phase for e in fp.executions] == ["generic-build", "generic-reuse", "generic-reuse"]


def test_p40_pruning_pg18(session18: Session) -> None:
    pruned = measure_footprint(session18, "select * from p40 where k = 150")
    unpruned = measure_footprint(session18, "select * from p40 where k = (select 150)")
    assert pruned.executions[0].lock_count == 4
    e = unpruned.executions[0]
    assert (e.lock_count, e.fastpath_count, e.main_table_count) == (82, 64, 18)
    assert_model_agrees(pruned, unpruned)
    assert unpruned.spilled and not pruned.spilled


def test_dml_modes_and_index_locks_pg18(session18: Session) -> None:
    upd = measure_footprint(session18, "update acct set balance = balance + 1 where id = 1").executions[0]
    assert {(lk.relation, lk.mode) for lk in upd.locks} == {
        ("public.acct", "RowExclusiveLock"), ("public.acct_pkey", "RowExclusiveLock"),
        ("public.acct_owner_idx", "RowExclusiveLock")}
    ins = measure_footprint(session18, "insert into acct values (1000, 'x')").executions[0]
    assert [(lk.relation, lk.mode) for lk in ins.locks] == [("public.acct", "RowExclusiveLock")]
    upsert = measure_footprint(session18, "insert into acct values (1000, 'x') on conflict (id) do nothing")
    assert {lk.relation for lk in upsert.executions[0].locks} == {"public.acct", "public.acct_pkey",
                                                                 "public.acct_owner_idx"}
    lock_for_update = measure_footprint(session18, "select * from acct where id = 1 for update").executions[0]
    assert {lk.mode for lk in lock_for_update.locks} == {"RowShareLock"}


def test_view_and_sequence_roles_pg18(session18: Session) -> None:
    view = measure_footprint(session18, "select * from acct_v where id = 3").executions[0]
    assert {lk.relation: lk.role for lk in view.locks} == {
        "public.acct_v": "view", "public.acct": "table", "public.acct_pkey": "index",
        "public.acct_owner_idx": "index"}
    seq = measure_footprint(session18, "select nextval('acct_seq')").executions[0]
    # EXPLAIN does not run nextval: no lock on the sequence. Nothing else is locked either.
    assert seq.lock_count == 0


def test_assumed_version_and_setting(session18: Session) -> None:
    fp = measure_footprint(session18, "select * from p40 where k = (select 150)",
                           assume=CapacityModel(170000, 64))
    e = fp.executions[0]
    assert e.assumed_main_table_count == 82 - 16
    fp = measure_footprint(session18, "select * from p40 where k = (select 150)",
                           assume=CapacityModel(180000, 128))
    assert fp.executions[0].assumed_main_table_count == 0


def test_events_with_data_auto_keeps_custom_plans() -> None:
    with ScratchServer() as server:
        run_script(server.conninfo(), DEMO_SCHEMA)
        load_events_rows(server.conninfo(), 20_000)
        with connect(server.conninfo()) as session:
            fp = measure_footprint(session, EVENTS_STATEMENT, params=EVENTS_PARAM, protocol="prepared",
                                   executions=8)
    assert counts(fp) == [8, 8, 8, 8, 8, 52, 8, 8]
    assert [e.plan_type for e in fp.executions] == ["custom"] * 8
    assert fp.executions[5].phase == "generic-build"


@pytest.fixture(scope="module")
def pgbench18() -> Iterator[ScratchServer]:
    with ScratchServer(settings=ScratchSettings(max_locks_per_transaction=16)) as server:
        pgbench_init(server)
        yield server


def test_extra_index_cliff_pg18(pgbench18: ScratchServer) -> None:
    points = extra_index_sweep(pgbench18, (16,), 17)
    assert [p.locks for p in points] == [k + 2 for k in range(18)]
    assert [p.main_table for p in points] == [0] * 15 + [1, 2, 3]  # 16 slots: spill from 15 extra indexes
    assert all(p.main_table == p.predicted_main_table for p in points)
    assert all(not p.footprint.mismatch_count for p in points)
    # the spilled ones are the last indexes locked (highest OIDs), as RelationGetIndexList orders them
    last = points[-1].footprint.executions[0]
    assert [lk.fastpath for lk in last.locks] == [True] * 16 + [False] * 3


def test_group_overflow_below_the_slot_count_pg18(pgbench18: ScratchServer) -> None:
    """PG 18 at mlpt 64 (4 groups): spills as soon as one group holds 17, even below 64 relations."""
    pgbench18.reconfigure(max_locks_per_transaction=64)
    try:
        with connect(pgbench18.conninfo()) as session:
            model = session.facts.capacity
            run_script(pgbench18.conninfo(), "create table g (id int)")
            oid_of = {}
            n = 0
            # add indexes until one group of {g, its indexes} reaches 17 relations
            while True:
                n += 1
                run_script(pgbench18.conninfo(), f"create index g_i{n} on g (id)")
                rows = session.fetch_all("select oid::int8 as oid from pg_class where relname ~ '^g(_i\\d+)?$'")
                session.fetch_all("rollback")
                oid_of = {r["oid"] for r in rows}
                groups = [model.group_of(o) for o in oid_of]
                if max(groups.count(g) for g in set(groups)) == 17:
                    break
            fp = measure_footprint(session, "select * from g")
            e = fp.executions[0]
            assert e.lock_count == len(oid_of) < 64
            assert e.main_table_count == 1 == e.predicted_main_table_count
            assert_model_agrees(fp)
    finally:
        run_script(pgbench18.conninfo(), "drop table if exists g")
        pgbench18.reconfigure(max_locks_per_transaction=16)


# -- PostgreSQL <= 17 (Debian 15 by default) -------------------------------------------------------------------
def test_events_prepared_three_modes_old_pg(session_old: Session) -> None:
    assert session_old.facts.major <= 17
    auto, custom, generic = measure_all_modes(session_old, EVENTS_STATEMENT, params=EVENTS_PARAM, executions=7)
    # PG 13-15 do not lock the parent's partitioned indexes (locked from PG 16, commit 3c569049b7)
    custom_locks = 5 if session_old.facts.major <= 15 else 8
    build_locks = 49 if session_old.facts.major <= 15 else 52
    assert counts(auto) == [custom_locks] * 5 + [build_locks, 13]
    assert counts(custom) == [custom_locks] * 7
    assert counts(generic) == [build_locks] + [13] * 6
    # 16 slots whatever max_locks_per_transaction says: the generic build spills
    assert generic.executions[0].main_table_count == build_locks - 16
    assert generic.executions[1].main_table_count == 0
    assert_model_agrees(auto, custom, generic)


def test_p40_unpruned_old_pg(session_old: Session) -> None:
    e = measure_footprint(session_old, "select * from p40 where k = (select 150)").executions[0]
    parent_index = 0 if session_old.facts.major <= 15 else 1
    assert e.lock_count == 81 + parent_index
    assert (e.fastpath_count, e.main_table_count) == (16, 81 + parent_index - 16)
    assert not e.mismatches


def test_extra_index_cliff_old_pg_ignores_mlpt() -> None:
    with ScratchServer(OLD_PG_BIN, ScratchSettings(max_locks_per_transaction=128)) as server:
        pgbench_init(server)
        points = extra_index_sweep(server, (128,), 16)
    assert [p.main_table for p in points] == [0] * 15 + [1, 2]
    assert all(p.main_table == p.predicted_main_table for p in points)


def test_full_fast_path_refuses_a_second_mode_on_a_held_relation(pg_old: ScratchServer) -> None:
    """lock.c: the use-count check comes before FastPathGrantRelationLock (the model's rule, on a real server)."""
    tables = [f"fp_t{i}" for i in range(16)]
    run_script(pg_old.conninfo(), "".join(f"create table {t} ();" for t in tables))
    try:
        with psycopg.connect(pg_old.conninfo()) as conn:
            for t in tables:
                conn.execute(f"lock table {t} in access share mode")
            conn.execute("lock table fp_t0 in row exclusive mode")
            rows = conn.execute(
                "select relation::int8, mode, fastpath from pg_locks where pid = pg_backend_pid() "
                "and locktype = 'relation' and relation::regclass::text like 'fp_t%' "
                "order by relation::regclass::text <> 'fp_t0', mode").fetchall()
            oids = conn.execute("select oid::int8 from pg_class where relname = any(%s) order by oid",
                                [tables]).fetchall()
            conn.rollback()
        measured = {(r[0], r[1]): r[2] for r in rows}
        model = CapacityModel(170000, 64)
        reqs = [LockRequest(o[0], "AccessShareLock") for o in oids]
        first = min(o[0] for o in oids if (o[0], "RowExclusiveLock") in measured)
        reqs.append(LockRequest(first, "RowExclusiveLock"))
        predicted = simulate_fast_path(model, reqs)
        assert predicted[-1] is False
        assert measured[(first, "RowExclusiveLock")] is False
        assert sum(measured.values()) == 16
    finally:
        run_script(pg_old.conninfo(), "".join(f"drop table {t};" for t in tables))


def test_pk_select_footprint_matches_on_both(session18: Session, session_old: Session) -> None:
    for session in (session18, session_old):
        fp = measure_footprint(session, PK_SELECT.replace("pgbench_accounts", "acct").replace("abalance", "balance")
                               .replace("aid", "id"), params=["1"])
        assert fp.executions[0].lock_count == 3
