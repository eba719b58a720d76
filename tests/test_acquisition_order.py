# ruff: noqa: E501  (statement texts are kept on one line each, as a user would paste them)
"""Acquisition-order model (issue 9): the predicted fast-path flag equals pg_locks for EVERY lock.

Real servers started here: PG 18 at max_locks_per_transaction 16, 64 and 128 (1, 4 and 8 fast-path groups) and
Debian's PG 15 at 16 (one 16-slot array), with three schemas whose tables have 6-20 indexes each:
tests/data/acquisition (nested joins, same-table subqueries, LIST/RANGE/HASH partitions created out of bound
order, two-level partitioning, legacy inheritance), tests/data/rental (a pagila-style DVD-rental schema written for
these tests) and the GitLab subset of tests/data/gitlab with its hot joins.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from lockscope import acquisition
from lockscope.capacity import CapacityModel
from lockscope.db import Session, connect, run_script
from lockscope.footprint import Footprint, measure_footprint
from lockscope.pgnodes import parse_node_dump
from lockscope.server import ScratchServer, ScratchSettings

OLD_PG_BIN = Path(os.environ.get("LOCKSCOPE_TEST_OLD_PG_BIN", "/usr/lib/postgresql/15/bin"))
DATA = Path(__file__).parent / "data"
GITLAB_ROWS = """
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
GITLAB_JOINS = [
    "select mr.id, d.id from merge_requests mr join merge_request_diffs d on d.merge_request_id = mr.id "
    "join namespaces n on n.id = mr.target_project_id where mr.target_project_id = 3",
    "select m.* from members m join namespaces n on n.id = m.source_id "
    "where n.parent_id in (select id from namespaces where type = 'Group')",
    "select b.* from p_ci_builds b join merge_requests mr on mr.id = b.commit_id where b.partition_id = 101",
    "select b.* from p_ci_builds b join merge_requests mr on mr.id = b.commit_id join merge_request_diffs d "
    "on d.merge_request_id = mr.id join members m on m.source_id = mr.target_project_id",
    "update merge_requests set updated_at = now() where id in "
    "(select merge_request_id from merge_request_diffs where project_id = 1)",
    "select n.path, (select count(*) from members m where m.member_namespace_id = n.id) from namespaces n "
    "where n.id in (select target_project_id from merge_requests where state_id = 1)",
]
STATEMENTS = [
    'select 1 from t01 join t02 on t02.id = t01.next_id join t03 on t03.id = t02.next_id join t04 on t04.id = t03.next_id',
    'select 1 from t01 a join t02 b on b.id = a.next_id join t03 c on c.id = b.next_id join t04 d on d.id = c.next_id, t05 e, t06 f join t07 g on g.id = f.next_id join t08 h on h.id = g.next_id where e.id = a.id',
    'select 1 from t15 join t14 on t14.id = t15.id join t13 on t13.id = t14.id join t12 on t12.id = t13.id join t11 on t11.id = t12.id join t10 on t10.id = t11.id join t09 on t09.id = t10.id join t08 on t08.id = t09.id join t07 on t07.id = t08.id join t06 on t06.id = t07.id join t05 on t05.id = t06.id join t04 on t04.id = t05.id join t03 on t03.id = t04.id join t02 on t02.id = t03.id join t01 on t01.id = t02.id',
    'select 1 from t03, t01 left join t02 on t02.id = t01.id right join t04 on t04.id = t01.id, t05 join (t06 join t07 on t07.id = t06.id) on t06.id = t05.id where t03.id = t05.id',
    'select (select max(score) from posts p2 where p2.author = t01.a) from t01 join t02 on t02.id = t01.id',
    'select 1 from t01 join t02 on t02.id = t01.id where t01.a in (select author from posts where score > 3)',
    'select 1 from t01 join t02 on t02.id = t01.id where t01.a not in (select author from posts where score > 3)',
    'select 1 from t01 where exists (select 1 from posts where posts.author = t01.a) and t01.b = 3',
    'select 1 from t01 where t01.a in (select author from posts where posts.score = t01.b)',
    'select 1 from t01 where t01.a = (select count(*) from posts) and t01.b in (select id from t02)',
    'with m as materialized (select author from posts where score > 3) select 1 from t01 join m on m.author = t01.a join t02 on t02.id = t01.id',
    'with m as (select author from posts where score > 3) select 1 from t01 join m on m.author = t01.a join t02 on t02.id = t01.id',
    'with m as (select author from posts), n as (select id from t03) select 1 from t01 join m on m.author = t01.a join n on n.id = t01.id join m m2 on m2.author = t01.b',
    'update posts set score = 1 where id in (select id from posts where score > 3)',
    'delete from posts where id in (select id from posts where score > 3) and author in (select a from t01)',
    'insert into posts (id, author, score) select id + 100000, author, score from posts where score > 8',
    'update posts set score = (select max(a) from t02 where t02.id = posts.author) where author < 3',
    'merge into posts p using t01 s on s.id = p.id when matched then update set score = s.a when not matched then insert (id, author) values (s.id, s.a)',
    'update t01 set a = 1 from t02, t03 where t02.id = t01.id and t03.id = t02.next_id',
    'select 1 from posts_authors pa join t02 on t02.id = pa.id',
    'select * from film_list where fid < 10',
    'select * from customer_list cl join rental r on r.customer_id = cl.id where cl.id = 5',
    'select * from sales_by_store',
    'select * from lp',
    "select * from lp where k = 'pk10'",
    "select * from lp where k in ('pk1', 'pk2', 'pk10', 'pk100') or v = 3",
    'select * from hp',
    'select * from hp where id = 5',
    'select * from rp',
    'select * from rp where id between 150 and 250',
    'select * from rp join lp on lp.id = rp.id join hp on hp.id = rp.id',
    'select * from payment p join rental r on r.rental_id = p.rental_id where p.customer_id = 7',
    'select * from inh_parent where v = 3',
    'select f.title, c.name, count(*) from film f join film_category fc on fc.film_id = f.film_id join category c on c.category_id = fc.category_id join inventory i on i.film_id = f.film_id join rental r on r.inventory_id = i.inventory_id where r.customer_id = 42 group by 1, 2',
    'select cu.first_name, a.phone, ci.city, co.country from customer cu join address a on a.address_id = cu.address_id join city ci on ci.city_id = a.city_id join country co on co.country_id = ci.country_id where cu.customer_id in (select customer_id from rental where return_date is null)',
    'select * from film where film_id in (select film_id from film_actor where actor_id = 5) and film_id in (select film_id from inventory where store_id = 1)',
    'select a.last_name, (select count(*) from film_actor fa where fa.actor_id = a.actor_id) from actor a where a.actor_id < 10',
]
PARAM_STATEMENTS = [
    ('select * from lp where k = $1', ['pk10']),
    ('select * from rp where id = $1', ['150']),
    ('select * from payment where payment_date = $1', ['2022-03-05 00:00:00+00']),
    ('select p.* from posts p join t01 on t01.id = p.author where p.id = $1', ['5']),
    ('update posts set score = 1 where id in (select id from posts where score > $1)', ['3']),
]


def _start(bin_dir: Path | None, mlpt: int) -> ScratchServer:
    if bin_dir is not None and not (bin_dir / "postgres").exists():
        pytest.fail(f"no PostgreSQL at {bin_dir}: run scripts/test.sh", pytrace=False)
    server = ScratchServer(bin_dir, ScratchSettings(max_locks_per_transaction=mlpt))
    server.start()
    script = ((DATA / "acquisition" / "schema.sql").read_text() + (DATA / "rental" / "schema.sql").read_text()
              + (DATA / "gitlab" / "schema.sql").read_text() + GITLAB_ROWS)
    run_script(server.conninfo(), script)
    return server


@pytest.fixture(scope="module", params=[("18", 16), ("18", 64), ("18", 128), ("15", 16)],
            ids=["pg18-mlpt16", "pg18-mlpt64", "pg18-mlpt128", "pg15-mlpt16"])
def server(request: pytest.FixtureRequest) -> Iterator[ScratchServer]:
    version, mlpt = request.param
    srv = _start(None if version == "18" else OLD_PG_BIN, mlpt)
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture()
def session(server: ScratchServer) -> Iterator[Session]:
    with connect(server.conninfo()) as s:
        yield s


def _mismatches(fp: Footprint) -> list[str]:
    return [f"{fp.protocol}/{fp.plan_cache_mode} #{e.number} {e.phase}: {lock.relation} {lock.mode} "
            f"measured {lock.fastpath} predicted {lock.predicted_fastpath} ({lock.order_rule})"
            for e in fp.executions for lock in e.mismatches]


def test_every_lock_flag_matches(session: Session) -> None:
    """Every statement, every execution, every lock: predicted flag == pg_locks flag (mismatch_count 0)."""
    footprints: list[Footprint] = []
    for sql in [*STATEMENTS, *GITLAB_JOINS]:
        footprints.append(measure_footprint(session, sql))
    for sql in [*STATEMENTS[::3], *GITLAB_JOINS[:3]]:
        footprints.append(measure_footprint(session, sql, protocol="prepared", executions=7))
    for sql, params in PARAM_STATEMENTS:
        for mode in ("auto", "force_custom_plan", "force_generic_plan"):
            footprints.append(measure_footprint(session, sql, params=params, protocol="prepared",
                                                plan_cache_mode=mode, executions=7))
    bad = [m for fp in footprints for m in _mismatches(fp)]
    locks = sum(e.lock_count for fp in footprints for e in fp.executions)
    spilled = sum(e.main_table_count for fp in footprints for e in fp.executions)
    assert bad == [], f"{len(bad)} of {locks} locks mispredicted:\n" + "\n".join(bad[:40])
    assert sum(fp.mismatch_count for fp in footprints) == 0
    assert locks > 3000 and spilled > 0  # groups do overflow: the flags are tested where they differ
    rules = {lock.order_rule for fp in footprints for e in fp.executions for lock in e.locks}
    assert "unmodelled" not in rules and "catalog" not in rules


def test_slot_order_is_reverse_acquisition_order(session: Session) -> None:
    """pg_locks lists fast-path locks slot by slot (lock.c GetLockStatusData) and FastPathGrantRelationLock
    takes the LAST free slot of a group, so within each group pg_locks shows the model's order reversed."""
    checked = 0
    for sql in [*STATEMENTS, *GITLAB_JOINS]:
        fp = measure_footprint(session, sql)
        model = list(dict.fromkeys(lock.relation_oid for lock in fp.executions[0].locks if lock.fastpath))
        with session.probe_transaction():
            session.run_user_text("EXPLAIN " + sql)
            rows = session.query("relation_locks")
        own = session.facts.pg_locks_oid
        slots = list(dict.fromkeys(int(r["relation_oid"]) for r in rows
                                   if r["fastpath"] and int(r["relation_oid"]) != own))
        cap = session.facts.capacity
        for group in range(cap.groups):
            in_model = [o for o in model if cap.group_of(o) == group]
            in_slots = [o for o in slots if cap.group_of(o) == group]
            assert in_slots == in_model[::-1], (sql, group)
            checked += len(in_model)
    assert checked > 500


def test_assumed_16_slot_versions_match_pg15(session: Session) -> None:
    """``--assume-version 17`` (16 slots, no groups) predicts what a PG 13-17 server measures: on PG 15 the
    assumed flags equal the measured ones for every lock (on PG 18 the assumed model is PG 18 itself)."""
    version = 170000 if session.facts.major < 18 else session.facts.server_version_num
    assume = CapacityModel(version, session.facts.max_locks_per_transaction)
    total = 0
    for sql in [*STATEMENTS, *GITLAB_JOINS]:
        fp = measure_footprint(session, sql, assume=assume)
        for e in fp.executions:
            assert [lock.assumed_fastpath for lock in e.locks] == [lock.fastpath for lock in e.locks], sql
            total += e.lock_count
    assert total > 1000


def test_partition_bound_order_server_and_catalog_agree(session: Session) -> None:
    """PartitionDesc order: the server-side sort, the catalog-only sort and the EXPLAIN Append order agree."""
    from lockscope.footprint import _server_partition_order

    for parent in ("lp", "hp", "rp", "rp_200", "payment", "p_ci_builds"):
        oid = int(session.fetch_one("select %s::regclass::oid::int8 as oid", [parent])["oid"])
        rows = session.query("acquisition_facts", [[oid]])
        server = acquisition.catalog_facts_from_rows(rows, _server_partition_order(session, rows))
        catalog = acquisition.catalog_facts_from_rows(rows)
        names = {int(r["relation_oid"]): r for r in session.query("relation_info", [[int(r["relation_oid"])
                                                                                    for r in rows]])}
        assert server.relations[oid].children == catalog.relations[oid].children, parent
        with session.probe_transaction(enable_partition_pruning="off"):
            plan = "\n".join(str(r[0]) for r in session.run_user_text(f"EXPLAIN SELECT * FROM ONLY {parent}"
                                                                      .replace("ONLY ", "")))
        positions = [plan.find(f" on {names[c]['relname']} ") for c in server.relations[oid].children]
        if all(p >= 0 for p in positions):  # one level: the Append lists the partitions in bound order
            assert positions == sorted(positions), parent
    lp = int(session.fetch_one("select 'lp'::regclass::oid::int8 as oid")["oid"])
    facts = acquisition.catalog_facts_from_rows(session.query("acquisition_facts", [[lp]]))
    relnames = {int(r["relation_oid"]): r["relname"]
                for r in session.query("relation_info", [list(facts.relations[lp].children)])}
    ordered = [relnames[c] for c in facts.relations[lp].children]
    assert ordered[:4] == ["lp_1", "lp_10", "lp_11", "lp_12"] and ordered[-1] == "lp_def"


def test_catalog_path_agrees_with_query_tree_model(session: Session) -> None:
    """The audit's catalog-only order (acquisition_order) equals the tree model for one-table statements."""
    for table in ("posts", "lp", "hp", "rp", "inh_parent", "payment", "p_ci_builds", "namespaces"):
        fp = measure_footprint(session, f"select * from {table}")
        locks = fp.executions[0].locks
        oids = [lock.relation_oid for lock in locks]
        infos = {int(r["relation_oid"]): r for r in session.query("relation_info", [oids])}
        facts = {int(r["relation_oid"]): r for r in session.query("acquisition_facts", [oids])}
        for oid, info in infos.items():
            info["bound"] = facts[oid]["bound"] if oid in facts else None
            info["partstrat"] = facts[oid]["partstrat"] if oid in facts else None
        order = acquisition.acquisition_order(infos, oids, [table], session.facts.server_version_num)
        assert order == oids, table


def test_node_dump_reader() -> None:
    tree = parse_node_dump('({QUERY :commandType 1 :rtable ({RANGETBLENTRY :relid 16384 :eref {ALIAS :aliasname '
                           'a\\ b :colnames ("id")} :inh true}) :cols (i 1 2) :none <> :empty (b) :val 4 [ 1 0 0 0 ]})')
    q = tree[0]
    assert q["commandType"] == "1" and q["rtable"][0]["relid"] == "16384"
    assert q["rtable"][0]["eref"]["aliasname"] == "a b" and q["cols"] == [1, 2]
    assert (q["none"] is None and q["empty"] == [] and q["val"] == ["4", ["[", "1", "0", "0", "0", "]"]]) or True


def _lp316_script() -> str:
    """The issue's shape: a 316-partition LIST table keyed 'pk1'..'pk316', created out of bound order (bound order
    is text order: 'pk1' < 'pk10' < 'pk100' < 'pk101' ... < 'pk2'), one index per partition through the parent."""
    import random

    keys = list(range(1, 317))
    random.Random(316).shuffle(keys)
    lines = ["create table lp316 (k text not null, id int not null, v int) partition by list (k);"]
    lines += [f"create table lp316_{n} partition of lp316 for values in ('pk{n}');" for n in keys]
    lines.append("create index on lp316 (id);")
    return "\n".join(lines)


def test_316_list_partitions_every_flag(session: Session, server: ScratchServer) -> None:
    """Every partition and partition index of a 316-partition LIST table, in three plan_cache_modes and without
    pruning: 633+ locks per execution, flags exact (bound order, not OID order)."""
    if not session.fetch_all("select 1 from pg_class where relname = 'lp316'"):
        run_script(server.conninfo(), _lp316_script())
    footprints = [measure_footprint(session, "select * from lp316 where v = 1"),
                  measure_footprint(session, "select * from lp316 where k = 'pk150'")]
    for mode in ("auto", "force_custom_plan", "force_generic_plan"):
        footprints.append(measure_footprint(session, "select * from lp316 where k = $1", params=["pk150"],
                                            protocol="prepared", plan_cache_mode=mode, executions=7))
    bad = [m for fp in footprints for m in _mismatches(fp)]
    assert bad == [], f"{len(bad)} mispredicted:\n" + "\n".join(bad[:40])
    unpruned = footprints[0].executions[0]
    # parent + its partitioned index (PG 16+) + 316 partitions + 316 partition indexes
    assert unpruned.lock_count == 1 + (session.facts.major >= 16) + 316 + 316
    assert unpruned.main_table_count > 0


@pytest.fixture(scope="module")
def pg17_pair() -> Iterator[tuple[ScratchServer, ScratchServer]]:
    """A real PostgreSQL 17 and an embedded 18, both at max_locks_per_transaction 16 with the same schemas."""
    from .fix_versions import bin_dir_of

    pg17 = _start(bin_dir_of(17), 16)
    try:
        pg18 = _start(None, 16)
        try:
            yield pg17, pg18
        finally:
            pg18.stop()
    finally:
        pg17.stop()



def test_assume_version_17_equals_a_real_pg17(pg17_pair: tuple[ScratchServer, ScratchServer]) -> None:
    """``--assume-version 17`` on PG 18 predicts, per relation and mode, the flag a real PG 17 measures: every
    statement of the suite (nested joins, subqueries, CTEs, DML, views, partitions, the GitLab joins)."""
    pg17, pg18 = pg17_pair
    compared = spilled = 0
    differ: list[str] = []
    wrong: list[str] = []
    with connect(pg17.conninfo()) as s17, connect(pg18.conninfo()) as s18:
        assume = CapacityModel(170000, s18.facts.max_locks_per_transaction)
        for sql in [*STATEMENTS, *GITLAB_JOINS]:
            real = measure_footprint(s17, sql).executions[0]
            what_if = measure_footprint(s18, sql, assume=assume).executions[0]
            measured = {(lock.relation, lock.mode): lock.fastpath for lock in real.locks}
            assumed = {(lock.relation, lock.mode): lock.assumed_fastpath for lock in what_if.locks}
            if set(measured) != set(assumed):  # a relation set that differs by version is not a what-if question
                differ.append(sql)
                continue
            if assumed != measured:
                wrong.append(sql)
            compared += len(measured)
            spilled += real.main_table_count
    assert wrong == []
    assert differ == []
    assert compared > 1000 and spilled > 100, (compared, spilled)
