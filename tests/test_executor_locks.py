"""Executor index locks of a reused generic plan, on a real server of every major 13-19.

EXPLAIN EXECUTE never opens the indexes a plan scans (nodeIndexscan.c ``ExecInitIndexScan`` and friends return
before ``index_open`` under ``EXEC_FLAG_EXPLAIN_ONLY``), a real execution does. The footprint engine adds them
(``Execution.executor_index_locks``, flags predicted); this test executes the statements for real on the test's
own scratch server and compares pg_locks, lock by lock, with the measured plus predicted locks.
"""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from lockscope.db import connect, run_script
from lockscope.footprint import Execution, measure_footprint
from lockscope.server import ScratchServer

from .conftest import by_major

PARTITIONS = 70  # parent + 70 partitions spill on 16 slots (PG 13-17) and overflow some of PG 18's 4 groups

SCHEMA = """
drop table if exists xl_t, xl_p cascade;
create table xl_t (id int primary key, a int, b int, pad text);
create index xl_t_a on xl_t (a);
create index "xl_t B" on xl_t (b);
insert into xl_t select g, g, g, repeat('x', 100) from generate_series(1, 5000) g;
create table xl_p (id int primary key, v int, pad text) partition by range (id);
""" + "".join(f"create table xl_p_{i} partition of xl_p for values from ({i * 1000}) to ({(i + 1) * 1000});\n"
              for i in range(PARTITIONS)) + f"""
insert into xl_p select g, g, repeat('y', 100) from generate_series(0, {PARTITIONS * 1000 - 1}) g;
analyze xl_t;
analyze xl_p;
"""

CASES = [
    ("select * from xl_t where id = $1", "7"),  # Index Scan using xl_t_pkey
    ("select * from xl_t where a = $1 or b = $1", "7"),  # BitmapOr over xl_t_a and "xl_t B"
    ("select * from xl_p where id = $1", "1500"),  # initial pruning: one partition's primary key
]


@pytest.fixture()
def executor_schema(any_pg: ScratchServer) -> Iterator[ScratchServer]:
    run_script(any_pg.conninfo(), SCHEMA)
    yield any_pg
    with psycopg.connect(any_pg.conninfo(), autocommit=True) as conn:
        conn.execute("drop table if exists xl_t, xl_p cascade")


def _real_locks(server: ScratchServer, sql: str, param: str) -> dict[tuple[int, str], bool]:
    """pg_locks of a real execution of the cached generic plan (the statement runs: this is the test's own
    scratch server), the xl_ relations only."""
    with psycopg.connect(server.conninfo(), autocommit=True) as conn:
        conn.execute("set plan_cache_mode = force_generic_plan")
        conn.execute(f"prepare q(int) as {sql.replace('$1', '$1::int')}")
        conn.execute(f"execute q({param})")  # builds and caches the generic plan
        conn.execute("begin")
        conn.execute(f"execute q({param})")  # reuses it
        rows = conn.execute(
            "select l.relation::int8, l.mode, l.fastpath from pg_locks l join pg_class c on c.oid = l.relation "
            "where l.pid = pg_backend_pid() and l.locktype = 'relation' and c.relname like 'xl\\_%'").fetchall()
        conn.execute("rollback")
    return {(int(oid), mode): bool(fp) for oid, mode, fp in rows}


def _modelled(e: Execution) -> dict[tuple[int, str], bool]:
    return {(lk.relation_oid, lk.mode): lk.fastpath for lk in (*e.locks, *e.executor_index_locks)}


@pytest.mark.parametrize("case", [0, 1, 2])
def test_reused_generic_plan_locks_equal_a_real_execution(executor_schema: ScratchServer, case: int) -> None:
    sql, param = CASES[case]
    with connect(executor_schema.conninfo()) as session:
        fp = measure_footprint(session, sql, params=[param], protocol="prepared",
                               plan_cache_mode="force_generic_plan", executions=2)
        major = session.facts.server_version_num // 10000
    e = fp.executions[-1]
    assert e.phase == "generic-reuse"
    real = _real_locks(executor_schema, sql, param)
    assert _modelled(e) == real  # every lock and its fast-path flag, measured and predicted
    names = [lk.relation.rsplit(".", 1)[1] for lk in e.executor_index_locks]
    expected_names = {0: ["xl_t_pkey"], 1: ["xl_t_a", '"xl_t B"'], 2: ["xl_p_1_pkey"]}[case]
    assert names == expected_names
    assert all(lk.order_rule == "executor index" for lk in e.executor_index_locks)
    if case == 2:  # parent + 70 partitions (AcquireExecutorLocks), then the one index the executor opens
        assert (e.lock_count, e.real_lock_count) == (PARTITIONS + 1, PARTITIONS + 2)
        spilled = by_major({13: 55, 14: 55, 15: 55, 16: 55, 17: 55, 18: None, 19: None}, major)
        if spilled is not None:  # 16 slots: 71 - 16 spill, and so does the index
            assert (e.main_table_count, e.real_main_table_count) == (spilled, spilled + 1)
