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

from .conftest import DEMO_SCHEMA, OLD_PG_BIN, by_major

EVENTS_PARAM = ["2024-06-06 00:00:00+00"]


def counts(fp: Footprint) -> list[int]:
    return [e.lock_count for e in fp.executions]


def assert_model_agrees(*fps: Footprint) -> None:
    for fp in fps:
        for e in fp.executions:
            assert e.mismatches == (), [(lk.relation, lk.fastpath, lk.predicted_fastpath) for lk in e.mismatches]


# -- every major 13-19 (any_pg): version-specific numbers declared by major ---------------------------------------
def _pidx(major: int) -> int:
    """1 where the planner locks a partitioned table's own (partitioned) indexes (PG 16+, commit 3c569049b7)."""
    return by_major({13: 0, 14: 0, 15: 0, 16: 1, 17: 1, 18: 1, 19: 1}, major)


def test_events_prepared_three_modes(any_session: Session) -> None:
    major = any_session.facts.major
    auto, custom, generic = measure_all_modes(any_session, EVENTS_STATEMENT, params=EVENTS_PARAM, executions=8)
    # custom plan: parent + pruned partition + its 3 indexes, and the parent's 3 partitioned indexes from PG 16
    # (commit 3c569049b7); generic build: parent + 12 partitions + 36 indexes (+ 3 partitioned indexes from PG 16)
    custom_locks = 5 + 3 * _pidx(major)
    build_locks = 49 + 3 * _pidx(major)
    # auto's locks, phases and plan types per major: tests/test_versions.py test_events_prepared_auto
    assert [fp.plan_cache_mode for fp in (auto, custom, generic)] == ["auto", "force_custom_plan",
                                                                      "force_generic_plan"]
    assert counts(generic) == [build_locks] + [13] * 7
    assert generic.executions[0].phase == "generic-build"
    assert counts(custom) == [custom_locks] * 8
    assert all(e.plan_type == "custom" for e in custom.executions)
    # PG 18+ at mlpt 64: 64 slots, nothing spills; before PG 18: 16 slots whatever mlpt says, the generic build spills
    spilled = by_major({13: 33, 14: 33, 15: 33, 16: 36, 17: 36, 18: 0, 19: 0}, major)
    assert [e.main_table_count for e in generic.executions] == [spilled] + [0] * 7
    assert all(e.main_table_count == 0 for fp in (auto, custom) for e in fp.executions if e.phase != "generic-build")
    assert_model_agrees(auto, custom, generic)


def test_events_roles(any_session: Session) -> None:
    fp = measure_footprint(any_session, EVENTS_STATEMENT.replace("$1", "'2024-06-06'"))
    roles = sorted(lk.role for lk in fp.executions[0].locks)
    partitioned_indexes = 3 * _pidx(any_session.facts.major)
    assert roles == (["partition"] + ["partition index"] * 3 + ["partitioned index"] * partitioned_indexes
                     + ["partitioned table"])
    assert {lk.mode for lk in fp.executions[0].locks} == {"AccessShareLock"}
    assert fp.executions[0].locks[0].relation == "public.events"  # parser lock first


def test_generic_reuse_locks_parent_and_all_partitions_only(any_session: Session) -> None:
    fp = measure_footprint(any_session, EVENTS_STATEMENT, params=EVENTS_PARAM, protocol="prepared",
                           plan_cache_mode="force_generic_plan", executions=2)
    reuse = fp.executions[1]
    assert sorted(lk.role for lk in reuse.locks) == ["partition"] * 12 + ["partitioned table"]
    assert sum("Subplans Removed: 11" in line for line in reuse.plan.lines) == 1


def test_no_parameters_means_generic_from_the_first_execution(any_session: Session) -> None:
    fp = measure_footprint(any_session, "select from t", protocol="prepared", executions=3)
    assert counts(fp) == [6, 1, 1]
    assert [e.phase for e in fp.executions] == ["generic-build", "generic-reuse", "generic-reuse"]


def test_p40_pruning(any_session: Session) -> None:
    major = any_session.facts.major
    pruned = measure_footprint(any_session, "select * from p40 where k = 150")
    unpruned = measure_footprint(any_session, "select * from p40 where k = (select 150)")
    # parent (+ its partitioned index from PG 16) + one partition + its index; unpruned: all 40 partitions + indexes
    assert pruned.executions[0].lock_count == 3 + _pidx(major)
    e = unpruned.executions[0]
    # 16 slots before PG 18; 4 groups of 16 at mlpt 64 from PG 18, where 18 of the 82 fall in full groups
    assert (e.lock_count, e.fastpath_count, e.main_table_count) == by_major(
        {13: (81, 16, 65), 14: (81, 16, 65), 15: (81, 16, 65), 16: (82, 16, 66), 17: (82, 16, 66),
         18: (82, 64, 18), 19: (82, 64, 18)}, major)
    assert_model_agrees(pruned, unpruned)
    assert unpruned.spilled and not pruned.spilled


def test_dml_modes_and_index_locks(any_session: Session) -> None:
    upd = measure_footprint(any_session, "update acct set balance = balance + 1 where id = 1").executions[0]
    assert {(lk.relation, lk.mode) for lk in upd.locks} == {
        ("public.acct", "RowExclusiveLock"), ("public.acct_pkey", "RowExclusiveLock"),
        ("public.acct_owner_idx", "RowExclusiveLock")}
    ins = measure_footprint(any_session, "insert into acct values (1000, 'x')").executions[0]
    assert [(lk.relation, lk.mode) for lk in ins.locks] == [("public.acct", "RowExclusiveLock")]
    upsert = measure_footprint(any_session, "insert into acct values (1000, 'x') on conflict (id) do nothing")
    assert {lk.relation for lk in upsert.executions[0].locks} == {"public.acct", "public.acct_pkey",
                                                                 "public.acct_owner_idx"}
    lock_for_update = measure_footprint(any_session, "select * from acct where id = 1 for update").executions[0]
    assert {lk.mode for lk in lock_for_update.locks} == {"RowShareLock"}


def test_view_and_sequence_roles(any_session: Session) -> None:
    view = measure_footprint(any_session, "select * from acct_v where id = 3").executions[0]
    assert {lk.relation: lk.role for lk in view.locks} == {
        "public.acct_v": "view", "public.acct": "table", "public.acct_pkey": "index",
        "public.acct_owner_idx": "index"}
    seq = measure_footprint(any_session, "select nextval('acct_seq')").executions[0]
    # EXPLAIN does not run nextval: no lock on the sequence. Nothing else is locked either.
    assert seq.lock_count == 0


def test_assumed_version_and_setting(any_session: Session) -> None:
    major = any_session.facts.major
    fp = measure_footprint(any_session, "select * from p40 where k = (select 150)",
                           assume=CapacityModel(170000, 64))
    assert fp.executions[0].assumed_main_table_count == 65 + _pidx(major)  # 81 or 82 locks, 16 slots
    fp = measure_footprint(any_session, "select * from p40 where k = (select 150)",
                           assume=CapacityModel(180000, 128))
    assert fp.executions[0].assumed_main_table_count == 0  # 8 groups: the demo's OIDs fit on every major


def test_pk_select_footprint(any_session: Session) -> None:
    fp = measure_footprint(any_session, PK_SELECT.replace("pgbench_accounts", "acct").replace("abalance", "balance")
                           .replace("aid", "id"), params=["1"])
    assert sorted((lk.relation, lk.role) for lk in fp.executions[0].locks) == [
        ("public.acct", "table"), ("public.acct_owner_idx", "index"), ("public.acct_pkey", "index")]


# -- PostgreSQL 18 -------------------------------------------------------------------------------------------------
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
                rows = session.oracle_rows("select oid::int8 from pg_class where relname ~ '^g(_i\\d+)?$'")
                oid_of = {r[0] for r in rows}
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
