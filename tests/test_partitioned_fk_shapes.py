"""Issue 37's table: DML shapes of partitioned tables with foreign keys (cascades one and two levels deep, a
DELETE cascading from a partition, INSERT with and without a column list, an upsert, a row moved across partitions,
an INSERT routed into a partition with its own trigger, MERGE), each prepared and executed 8 times on one
connection. The truth: the statement run for real on the scratch server (``lockscope.executed``), pg_locks read
before each rollback. The model: ``lockscope footprint``'s EXPLAIN-only measurement on the same server. They agree
per lock (relation, mode, fast-path flag), per execution, and lockscope labels every execution exact; the two-level
cascade's footprint reads pg_locks at most 40 times (it made 19,936 reads before).

PostgreSQL 18 and 19 at max_locks_per_transaction 16 (one group of 16 fast-path slots: the generic plans' builds
spill), the schema ``tests/data/shapes/tenant_item.sql``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from lockscope.db import connect, run_script
from lockscope.executed import execute_scripts
from lockscope.footprint import measure_footprint
from lockscope.script import Script, ScriptStatement, Transaction
from lockscope.server import ScratchServer, ScratchSettings
from lockscope.statement import check_statement, raw_statement

from .fix_versions import bin_dir_of
from .servers import ServerPool

SCHEMA = (Path(__file__).parent / "data" / "shapes" / "tenant_item.sql").read_text()
EXECUTIONS = 8

#: (id, statement, parameters): the issue's nine shapes.
SHAPES = [
    ("cascade_one_level", "delete from tenant1 where id = $1", ["7"]),
    ("cascade_two_levels", "delete from tenant where id = $1", ["7"]),
    ("delete_partition_cascade", "delete from item where tenant_id = $1 and id = $2", ["7", "2"]),
    ("insert_no_column_list", "insert into item values ($1, $2, 'y')", ["7", "100"]),
    ("insert_column_list", "insert into item (tenant_id, id, v) values ($1, $2, 'y')", ["7", "100"]),
    ("upsert", "insert into item (tenant_id, id, v) values ($1, $2, 'y') "
               "on conflict (tenant_id, id) do update set v = excluded.v", ["7", "2"]),
    ("row_movement", "update item set tenant_id = $1, id = id + 100000 where tenant_id = $2 and id = $3",
     ["8", "7", "3"]),
    ("routed_into_trigger_partition", "insert into item (tenant_id, id, v) values ($1, $2, 'y')", ["5", "100"]),
    ("merge", "merge into item i using (select $1::int as t, $2::int as id) s on i.tenant_id = s.t and i.id = s.id "
              "when matched then update set v = 'm' when not matched then insert values (s.t, s.id, 'n')",
     ["7", "2"]),
]


def _load(server: ScratchServer) -> None:
    run_script(server.conninfo(), SCHEMA)


@pytest.fixture(scope="module", params=[18, 19], ids=["pg18", "pg19"])
def shapes_server(request: pytest.FixtureRequest, server_pool: ServerPool) -> ScratchServer:
    return server_pool.get(bin_dir_of(request.param), "shapes37", ScratchSettings(max_locks_per_transaction=16),
                           _load)


def _truth(server: ScratchServer, sql: str, params: list[str]) -> list[set[tuple[int, str, bool]]]:
    kind = next(iter(raw_statement(check_statement(sql))))
    script = Script((Transaction((ScriptStatement(sql, tuple(params), sql, 1, kind),), False, 1),), False)
    (fp,) = execute_scripts(server.conninfo(), [script] * EXECUTIONS, protocol="prepared", executions=EXECUTIONS)
    return [{(lk.relation_oid, str(lk.mode), lk.fastpath) for lk in e.locks} for e in fp.executions]


@pytest.mark.parametrize(("name", "sql", "params"), SHAPES, ids=[s[0] for s in SHAPES])
def test_model_equals_the_executed_truth_per_lock(shapes_server: ScratchServer, name: str, sql: str,
                                                  params: list[str]) -> None:
    with connect(shapes_server.conninfo(), pg_locks_rate_hz=0) as session:  # the model first: nothing written yet
        fp = measure_footprint(session, sql, params=params, protocol="prepared", executions=EXECUTIONS)
        reads = session.probe_cost.pg_locks_reads
    truth = _truth(shapes_server, sql, params)
    for e, held in zip(fp.executions, truth, strict=True):
        model = {(lk.relation_oid, str(lk.mode), lk.fastpath) for lk in e.real_locks}
        assert model == held, (name, e.number, sorted(held - model), sorted(model - held))
        assert e.exact, (name, e.number, e.unknowns)
    if name == "cascade_two_levels":
        assert reads <= 40, reads
    # the totals a user reads: the real execution's, and they spill at the generic plan's build
    if name in ("cascade_one_level", "cascade_two_levels", "delete_partition_cascade", "merge"):
        assert fp.executions[5].real_main_table_count > 0 and fp.spilled


#: Two SET DEFAULT actions that update the same referencing row in turn: the first version's check event is queued,
#: then that version is updated again by the second action, so only the latest version is checked
#: (ri_triggers.c RI_FKey_check, SnapshotSelf): the check's plan is called twice per execution, not three times,
#: and its generic plan (every partition of the referenced table) is built at the 3rd execution, not the 2nd.
SET_DEFAULT_TWICE = """
create table p (k int not null, id int not null, primary key (k, id)) partition by range (id);
create table p_0 partition of p for values from (0) to (10);
create table p_1 partition of p for values from (10) to (20);
create table p_2 partition of p for values from (20) to (30);
create table p_3 partition of p for values from (30) to (40);
insert into p values (1, 1), (2, 2), (1, 11), (1, 21), (1, 31);
create table c (id int primary key, f2_k int default 1, f2_id int default 1, f3_k int default 1,
                f3_id int default 1);
alter table c add constraint c_f2 foreign key (f2_k, f2_id) references p on update set default;
alter table c add constraint c_f3 foreign key (f3_k, f3_id) references p on update set default;
insert into c values (1, 2, 2, 2, 2), (2, 2, 2, 1, 1);
analyze;
"""


@pytest.mark.parametrize("major", [13, 18])
def test_a_row_version_updated_again_is_not_checked(server_pool: ServerPool, major: int) -> None:
    server = server_pool.get(bin_dir_of(major), "set_default_twice", ScratchSettings(max_locks_per_transaction=16),
                             lambda s: run_script(s.conninfo(), SET_DEFAULT_TWICE))
    sql, params = "update p set k = $1 where id = $2 and k = $3", ["0", "2", "2"]
    with connect(server.conninfo(), pg_locks_rate_hz=0) as session:
        fp = measure_footprint(session, sql, params=params, protocol="simple", executions=EXECUTIONS)
    kind = next(iter(raw_statement(check_statement(sql))))
    script = Script((Transaction((ScriptStatement(sql, tuple(params), sql, 1, kind),), False, 1),), False)
    (truth,) = execute_scripts(server.conninfo(), [script] * EXECUTIONS, protocol="simple", executions=EXECUTIONS)
    counts = [len(e.locks) for e in truth.executions]
    assert counts[2] > counts[1]  # the generic plan's build, at the 3rd execution
    for e, real in zip(fp.executions, truth.executions, strict=True):
        model = {(lk.relation_oid, str(lk.mode), lk.fastpath) for lk in e.real_locks}
        assert model == {(lk.relation_oid, str(lk.mode), lk.fastpath) for lk in real.locks}, e.number
        assert e.exact, (e.number, e.unknowns)
