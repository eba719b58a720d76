# ruff: noqa: E501  (statement texts are kept on one line each, as a user would paste them)
"""Acquisition-order model: the predicted fast-path flag equals pg_locks for EVERY lock, and the query tree built on
the client (lockscope.querytree) gives the same lock order as the server's own rewritten tree (the oracle,
tests/order_oracle.py, on these scratch servers only).

Real servers (the session pool's, tests/servers.py: one per major with these schemas, restarted for each setting):
PG 18 at max_locks_per_transaction 16, 64 and 128 (1, 4 and 8 fast-path groups) and Debian's PG 15 at 16 (one
16-slot array) and 128, every other major 13-19 at 64 for the query-tree comparison, with three schemas whose
tables have 6-20 indexes each: tests/data/acquisition (nested joins, same-table subqueries, LIST/RANGE/HASH
partitions created out of bound order, two-level partitioning, legacy inheritance), tests/data/rental (a
pagila-style DVD-rental schema written for these tests) and the GitLab subset of tests/data/gitlab with its hot
joins.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from lockscope import acquisition, pgnodes, querynodes, querytree
from lockscope.capacity import CapacityModel
from lockscope.db import Session, connect, run_script
from lockscope.footprint import Footprint, measure_footprint
from lockscope.pgnodes import NodeDumpError, parse_node_dump
from lockscope.querynodes import Query
from lockscope.rows import AcquisitionFactsRow, FunctionVolatilityRow, RelationInfoRow, RelationLockRow
from lockscope.server import ScratchServer, ScratchSettings
from lockscope.statement import check_statement, raw_statement

from .conftest import need_bin_dir
from .order_oracle import server_tree
from .servers import ServerPool

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
SHAPES = [
    'select * from t01 where id = 1 for update',
    'select * from t01 join t02 on t02.id = t01.id for share of t02',
    'select * from t01, t02 where t01.id = t02.id for update of t01 for share of t02',
    'select * from (select * from t01 where a = 1) s for update',
    'select * from t01, lateral (select * from t02 where t02.id = t01.next_id) x',
    'select * from t01 cross join lateral (select count(*) from posts where posts.author = t01.a) c',
    'select * from t01 join lateral (select * from t03 where t03.id = t01.id limit 1) l on true',
    'select * from generate_series(1, 3) gs join t01 on t01.id = gs',
    'select * from t01, unnest(array[1,2]) u(x) where u.x = t01.a',
    'select id from t01 union select id from t02 union all select id from t03',
    'select id from t01 intersect select author from posts except select id from t04',
    '(select id from t01 order by id limit 5) union all (select id from t02)',
    'select * from union_view where a = 3',
    'select * from (select id from t01 union all select id from t02) u join t03 on t03.id = u.id',
    'with recursive r(n) as (select 1 union all select n + 1 from r where n < 10) select * from r join t01 on t01.id = r.n',
    'with x as (select * from t01), y as (select x.id, t02.a from x join t02 on t02.id = x.id) select * from y join t03 on t03.id = y.id',
    'with x as not materialized (select * from t01), y as materialized (select * from t02) select * from x, y, x x2 where x.id = y.id and x2.id = y.id',
    'with d as (delete from posts where score < 0 returning id) select * from d join t01 on t01.id = d.id',
    'with u as (update t02 set a = a + 1 where id = 3 returning *) select * from u',
    'with x as (select id from t01) insert into posts (id, author) select id, id from x',
    'with x as (select id from t05) update posts set score = 0 where id in (select id from x)',
    'with unused as (select * from t06) select * from t01',
    'with v as (select vol_f(id) f from t01) select * from v join t02 on t02.id = v.f',
    'select * from (select a, count(*) c from t01 group by a) s join t02 on t02.a = s.a',
    'select * from (select * from t01 where a > 1) s join (select * from t02 order by id) s2 on s2.id = s.id',
    'select * from (select distinct a from t01) s, t02 where t02.a = s.a',
    'select * from (select t01.*, row_number() over (order by id) rn from t01) s where rn < 3',
    'select * from (select vol_f(id) v, id from t01) s join t02 on t02.id = s.id',
    'select * from (select stable_f(id) v, id from t01) s join t02 on t02.id = s.id',
    'select * from t01 where exists (select 1 from t02 where t02.id = t01.id) and not exists (select 1 from t03 where t03.id = t01.id)',
    'select * from t01 where a in (select a from t02) or b in (select b from t03)',
    'select * from t01 where a = any (select a from t02 where t02.b = t01.b)',
    'select * from t01 where a > all (select a from t02)',
    'select * from t01 where (a, b) in (select a, b from t02)',
    'select * from t01 where a in (select vol_f(a) from t02)',
    'select * from t01 where exists (select count(*) from t02 where t02.id = t01.id)',
    'select * from t01 where exists (select 1 from t02 where t02.id = t01.id limit 1)',
    'select * from t01 where exists (select 1 from t02 where t02.id = t01.id group by t02.a)',
    'select * from t01 where exists (select 1 from t02 join t03 on t03.id = t02.id where t02.id = t01.id)',
    'select * from t01 where exists (select 1 from t02 where t02.a = 1)',
    'select * from t01 join t02 on t02.id = t01.id and t02.a in (select a from t03)',
    'select * from t01 left join t02 on t02.id = t01.id and exists (select 1 from t03 where t03.id = t02.id)',
    'select * from t01 join t02 on t01.a in (select a from t03 where t03.b = t02.b)',
    'select case when a > 0 then (select max(id) from t02) else (select min(id) from t03) end from t01',
    'select array(select id from t02 where t02.a = t01.a), (select count(*) from t03) from t01',
    'select * from t01 where a = (select max(a) from t02) and b = (select min(b) from t03 where t03.c = t01.c)',
    'select a, count(*) from t01 group by a having count(*) > (select count(*) from t02)',
    'select * from t01 order by (select max(id) from t02 where t02.a = t01.a) limit 3',
    'select * from t01 limit (select count(*) from t02)',
    'select * from t01 where coalesce((select a from t02 where id = 1), 0) = t01.a',
    'select * from t01 where t01.a in (select t02.a from t02 where t02.b in (select b from t03 where t03.c = t01.c))',
    'select * from t01 full join t02 on t02.id = t01.id',
    'select * from t01 join t02 using (id) join t03 using (id)',
    'select * from t01 natural join t02',
    'select * from t01 left join (t02 join t03 on t03.id = t02.id) on t02.id = t01.id',
    'select * from (t01 join t02 using (id)) j join t03 on t03.id = j.id',
    'select * from t01 right join t02 on t02.id = t01.id right join t03 on t03.id = t02.id',
    'select * from t01 join t02 on true join t03 on t03.a = t01.a left join t04 on t04.b = t02.b',
    'select * from top_posts where author = 3',
    'select * from top_posts_t01 where a = 5',
    'select * from secure_posts where author = 3',
    'select * from t01 where id in (select id from top_posts)',
    'select * from film_list fl join top_posts tp on tp.id = fl.fid',
    'select * from other.things where owner = 1',
    'select * from public.t01 join other.things o on o.id = t01.id',
    'select * from "MixedCase" m where m."Owner" = 2',
    'select * from only inh_parent where v = 1',
    'select * from pg_catalog.pg_class where oid = 1',
    'select a, sum(b) over (partition by c) from t01 where id < 10',
    'select a, b, count(*) from t01 group by rollup (a, b)',
    'select count(*) filter (where a > 0), max(b) from t01',
    "select string_agg(title, ',' order by id) from posts",
    'insert into posts (id, author) values (1, 2)',
    'insert into posts (id, author) values (1, (select max(a) from t01)), (2, 3)',
    'insert into posts (id, author) values (1, 2), (3, (select min(a) from t02))',
    'insert into posts (id, author) select id, a from t01 where a in (select author from posts) returning id',
    'insert into posts (id, author) values (1, 2) on conflict (id) do update set score = excluded.score + 1',
    'insert into posts (id, author) values (1, 2) on conflict do nothing',
    'insert into posts default values',
    'update posts set score = score + 1 where id = 1 returning (select count(*) from t01)',
    'update posts p set score = t.a from t01 t join t02 u on u.id = t.id where t.id = p.author',
    'update posts set (score, author) = (select a, b from t01 where t01.id = posts.id) where id < 5',
    "update lp set v = 1 where k = 'pk1'",
    'update rp set v = 1 where id < 150',
    'delete from posts using t01 where t01.id = posts.author and t01.a = 1',
    'delete from lp where v = 3',
    'delete from posts where exists (select 1 from t01 where t01.id = posts.author) returning *',
    'merge into posts p using (select * from t01 where a > 3) s on s.id = p.id when matched and s.a > 5 then delete when matched then update set score = s.a',
    'merge into posts p using t02 s on s.id = p.id when not matched then insert (id) values (s.id)',
    'merge into lp using t01 s on s.id = lp.id when matched then update set v = s.a',
    "select * from lp join rp on rp.id = lp.id where lp.k in ('pk1', 'pk7')",
    'select * from rp where id = (select max(id) from t01)',
    'select * from hp join t01 on t01.id = hp.id where hp.id in (select id from t02)',
    'select * from inh_parent join posts on posts.id = inh_parent.v',
    "select * from payment p where p.payment_date > now() - interval '1 day'",
    'values (1), (2)',
    'select * from (values (1, 2), (3, 4)) v(x, y) join t01 on t01.id = v.x',
    'select 1',
    'select now(), random()',
    'select * from t01 tablesample system (10)',
    'select t01 from t01 where id = 1',
    'select t01.*, t02.id from t01 join t02 on t02.id = t01.id',
    "select * from t01 where id = 1 and ctid = '(0,1)'",
    'select id from t01 union all select id from t02 where a = 1 union all (select id from t03 order by a limit 2)',
    'select * from (select id from lp union all select id from t01) u join t03 on t03.id = u.id',
    'select * from t04 join (select id from rp union all (select id from t02 limit 3)) u on u.id = t04.id join lp on lp.id = t04.id',
    'select * from union_view u join hp on hp.id = u.id',
    'select id from t01 union select id from t02 union all select id from t03',
    'select * from t01 join t02 on t02.id = t01.id and t01.a in (select a from t03)',
    'select * from t01 left join t02 on t02.id = t01.id and t02.a in (select a from t03)',
    'select * from t01 right join t02 on t02.id = t01.id and t01.a in (select a from t03)',
    'select * from t01 join t02 on t02.id = t01.id and exists (select 1 from t03 where t03.id = t01.id) and t02.b in (select b from t04)',
]
PARAM_STATEMENTS = [
    ('select * from lp where k = $1', ['pk10']),
    ('select * from rp where id = $1', ['150']),
    ('select * from payment where payment_date = $1', ['2022-03-05 00:00:00+00']),
    ('select p.* from posts p join t01 on t01.id = p.author where p.id = $1', ['5']),
    ('update posts set score = 1 where id in (select id from posts where score > $1)', ['3']),
]


def _load_schemas(server: ScratchServer) -> None:
    script = ((DATA / "acquisition" / "schema.sql").read_text() + (DATA / "rental" / "schema.sql").read_text()
              + (DATA / "gitlab" / "schema.sql").read_text() + GITLAB_ROWS
              + (DATA / "acquisition" / "shapes.sql").read_text())
    run_script(server.conninfo(), script)


def _server(pool: ServerPool, bin_dir: Path | None, mlpt: int) -> ScratchServer:
    """The session pool's server of ``bin_dir`` with this module's schemas, at ``mlpt`` (a restart when it ran
    at another one)."""
    if bin_dir is not None:
        need_bin_dir(bin_dir)
    return pool.get(bin_dir, "acquisition", ScratchSettings(max_locks_per_transaction=mlpt),
                    _load_schemas)


@pytest.fixture(scope="module", params=[("18", 16), ("18", 64), ("18", 128), ("15", 16), ("15", 128)],
                ids=["pg18-mlpt16", "pg18-mlpt64", "pg18-mlpt128", "pg15-mlpt16", "pg15-mlpt128"])
def server_spec(request: pytest.FixtureRequest) -> tuple[str, int]:
    """(major, max_locks_per_transaction); module-scoped, so that pytest runs each one's tests together."""
    spec: tuple[str, int] = request.param
    return spec


@pytest.fixture()
def server(server_spec: tuple[str, int], server_pool: ServerPool) -> ScratchServer:
    version, mlpt = server_spec
    return _server(server_pool, None if version == "18" else OLD_PG_BIN, mlpt)


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
    for sql in [*STATEMENTS, *GITLAB_JOINS, *SHAPES]:
        footprints.append(measure_footprint(session, sql))
    for sql in [*STATEMENTS[::3], *GITLAB_JOINS[:3], *SHAPES[::7]]:
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
    assert "unmodelled" not in rules and "unknown" not in rules
    assert all(fp.order_note == "" for fp in footprints)


def _first_requests(tree: Query, facts: acquisition.CatalogFacts, version: int,
                    phase: str) -> list[tuple[int, str]]:
    """The lock requests that take a slot (first request of each relation and mode), in order."""
    steps = acquisition.statement_lock_steps(tree, facts, version, phase)
    return list(dict.fromkeys((s.relation_oid, s.mode) for s in steps))


def _tree_differences(session: Session, conninfo: str, statements: list[str]) -> tuple[list[str], int]:
    """Statements (with phase) whose client-built tree orders the lock requests differently from the server's
    own tree, and the number of requests compared."""
    version = session.facts.server_version_num
    compared = 0
    differ: list[str] = []
    for sql in statements:
        oracle = server_tree(conninfo, sql)
        assert oracle is not None, sql
        raw = raw_statement(check_statement(sql))
        built = querytree.build_query_tree(raw, querytree.gather_lookup(session.query_rows, raw, version))
        rels = sorted(acquisition.tree_relation_oids(oracle) | acquisition.tree_relation_oids(built.tree))
        rows = session.query_rows("acquisition_facts", AcquisitionFactsRow, [rels])
        funcs = sorted(acquisition.tree_function_oids(oracle))
        volatile = {r.function_oid for r in session.query_rows("function_volatility", FunctionVolatilityRow, [funcs])
                    if r.provolatile == "v"} if funcs else set()
        server_facts = acquisition.catalog_facts_from_rows(rows, None, volatile)
        client_facts = acquisition.catalog_facts_from_rows(rows, None, volatile | built.volatile_functions)
        for phase in ("simple", "custom", "generic-reuse"):
            want = _first_requests(oracle, server_facts, version, phase)
            got = _first_requests(built.tree, client_facts, version, phase)
            if got != want:
                differ.append(f"{phase}: {sql}")
            compared += len(want)
    return differ, compared


def _corpus(major: int) -> list[str]:
    statements = [*STATEMENTS, *GITLAB_JOINS, *SHAPES, *(p for p, _ in PARAM_STATEMENTS)]
    return [sql for sql in statements if major >= 15 or not sql.startswith("merge")]  # MERGE is PG 15+


@pytest.mark.parametrize("server_spec", [("18", 64), ("15", 16)], ids=["pg18-mlpt64", "pg15-mlpt16"],
                         scope="module")
def test_client_tree_orders_like_the_server_tree(session: Session, server: ScratchServer) -> None:
    """The tree lockscope builds on the client (pglast + catalog, nothing in the server log) gives, for every
    statement of the corpus and every phase (EXPLAIN, planning a prepared statement, reusing a generic plan), the
    same lock requests in the same order as the server's own rewritten tree (debug_print_rewritten, the oracle).
    Once per major: a tree and its lock order do not depend on max_locks_per_transaction."""
    differ, compared = _tree_differences(session, server.conninfo(), _corpus(session.facts.major))
    assert differ == [], "\n".join(differ)
    assert compared > 5000


@pytest.mark.parametrize("major", [13, 14, 16, 17, 19])
def test_client_tree_on_every_other_major(major: int, server_pool: ServerPool) -> None:
    """The same comparison on the majors the fixtures above do not start (15 and 18 run at every mlpt there):
    view storage (PG 13-15 keep *OLD*/*NEW* entries), MERGE's fields (PG 17 renamed them) and the PG 18 grammar
    all change the tree's shape, never its lock order."""
    from .fix_versions import bin_dir_of

    server = _server(server_pool, bin_dir_of(major), 64)
    with connect(server.conninfo()) as s:
        assert s.facts.major == major
        differ, compared = _tree_differences(s, server.conninfo(), _corpus(major))
    assert differ == [], "\n".join(differ)
    assert compared > 4000


def test_shapes_the_client_cannot_order_are_labelled_unknown(session: Session) -> None:
    """DML on a table with rules: the order is not reproduced client-side, every lock says ``unknown`` and the
    footprint says why; the measured flags are still pg_locks' own."""
    fp = measure_footprint(session, "update rules_t set v = 1 where id = 1")
    assert "rules" in fp.order_note
    assert {lock.order_rule for lock in fp.executions[0].locks} == {"unknown"}
    assert fp.executions[0].lock_count == 2  # the table and its primary key, RowExclusiveLock


def test_unknown_relation_is_refused_before_the_server_sees_the_statement(session: Session) -> None:
    """A relation that does not exist is refused client-side (42P01), so the server logs no error for it."""
    from lockscope.errors import StatementError

    with pytest.raises(StatementError, match='42P01: relation "no_such_table" does not exist'):
        measure_footprint(session, "select * from t01 join no_such_table n on n.id = t01.id")


def test_slot_order_is_reverse_acquisition_order(session: Session) -> None:
    """pg_locks lists fast-path locks slot by slot (lock.c GetLockStatusData) and FastPathGrantRelationLock
    takes the LAST free slot of a group, so within each group pg_locks shows the model's order reversed."""
    checked = 0
    for sql in [*STATEMENTS, *GITLAB_JOINS]:
        fp = measure_footprint(session, sql)
        model = list(dict.fromkeys(lock.relation_oid for lock in fp.executions[0].locks if lock.fastpath))
        with session.probe_transaction():
            session.run_user_text("EXPLAIN " + sql)
            rows = session.query_rows("relation_locks", RelationLockRow)
        own = session.facts.pg_locks_oid
        slots = list(dict.fromkeys(r.relation_oid for r in rows if r.fastpath and r.relation_oid != own))
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
        oid = int(session.oracle_rows("select %s::regclass::oid::int8", [parent])[0][0])
        rows = session.query_rows("acquisition_facts", AcquisitionFactsRow, [[oid]])
        server = acquisition.catalog_facts_from_rows(rows, _server_partition_order(session, rows))
        catalog = acquisition.catalog_facts_from_rows(rows)
        names = {r.relation_oid: r for r in session.query_rows("relation_info", RelationInfoRow,
                                                               [[r.relation_oid for r in rows]])}
        assert server.relations[oid].children == catalog.relations[oid].children, parent
        with session.probe_transaction(enable_partition_pruning="off"):
            plan = "\n".join(str(r[0]) for r in session.run_user_text(f"EXPLAIN SELECT * FROM ONLY {parent}"
                                                                      .replace("ONLY ", "")))
        positions = [plan.find(f" on {names[c].relname} ") for c in server.relations[oid].children]
        if all(p >= 0 for p in positions):  # one level: the Append lists the partitions in bound order
            assert positions == sorted(positions), parent
    lp = int(session.oracle_rows("select 'lp'::regclass::oid::int8")[0][0])
    facts = acquisition.catalog_facts_from_rows(session.query_rows("acquisition_facts", AcquisitionFactsRow, [[lp]]))
    relnames = {r.relation_oid: r.relname for r in session.query_rows("relation_info", RelationInfoRow,
                                                                      [list(facts.relations[lp].children)])}
    ordered = [relnames[c] for c in facts.relations[lp].children]
    assert ordered[:4] == ["lp_1", "lp_10", "lp_11", "lp_12"] and ordered[-1] == "lp_def"


def test_catalog_path_agrees_with_query_tree_model(session: Session) -> None:
    """The audit's catalog-only order (acquisition_order) equals the tree model for one-table statements."""
    for table in ("posts", "lp", "hp", "rp", "inh_parent", "payment", "p_ci_builds", "namespaces"):
        fp = measure_footprint(session, f"select * from {table}")
        locks = fp.executions[0].locks
        oids = [lock.relation_oid for lock in locks]
        facts = {r.relation_oid: r for r in session.query_rows("acquisition_facts", AcquisitionFactsRow, [oids])}
        infos = {r.relation_oid: replace(r, bound=facts[r.relation_oid].bound if r.relation_oid in facts else None,
                                         partstrat=facts[r.relation_oid].partstrat if r.relation_oid in facts else None)
                 for r in session.query_rows("relation_info", RelationInfoRow, [oids])}
        order = acquisition.acquisition_order(infos, oids, [table], session.facts.server_version_num)
        assert order == oids, table


def test_node_dump_reader() -> None:
    tree = parse_node_dump('({QUERY :commandType 1 :rtable ({RANGETBLENTRY :relid 16384 :eref {ALIAS :aliasname '
                           'a\\ b :colnames ("id")} :inh true}) :cols (i 1 2) :none <> :empty (b) :val 4 [ 1 0 0 0 ]})')
    q = tree[0]
    assert q["commandType"] == "1" and q["rtable"][0]["relid"] == "16384"
    assert q["rtable"][0]["eref"]["aliasname"] == "a b" and q["cols"] == [1, 2]
    assert q["none"] is None and q["empty"] == [] and q["val"] == ["4", "[", "1", "0", "0", "0", "]"]


def test_node_dump_normalised_into_typed_nodes() -> None:
    """query_from_dump: numbers become ints and the headers' enums, flags bools, a TargetEntry its expression; PG
    13-14's RTE and PG 15-16's MERGE ``matched`` are read into the one shape; a value outside an enum is refused."""
    dump = ('({QUERY :commandType 5 :resultRelation 1 :rtable ({RTE :rtekind 0 :relid 16384 :relkind r '
            ':rellockmode 3 :inh true :eref {ALIAS :aliasname p :colnames ("id")}}) :jointree {FROMEXPR :fromlist '
            '({RANGETBLREF :rtindex 1}) :quals {BOOLEXPR :boolop and :args ({VAR :varno 1 :varlevelsup 0} '
            '{SUBLINK :subLinkType 0 :testexpr <> :subselect {QUERY :commandType 1 :hasAggs true}})}} '
            ':mergeActionList ({MERGEACTION :matched false :commandType 3 :qual <> :targetList ({TARGETENTRY '
            ':expr {FUNCEXPR :funcid 1299 :args <>} :resno 1})}) :hasForUpdate false})')
    q = pgnodes.query_from_dump(parse_node_dump(dump)[0])
    assert q.command_type == querynodes.CmdType.CMD_MERGE and q.result_relation == 1
    rte = q.rtable[0]
    assert (rte.rtekind, rte.relid, rte.relkind, rte.rellockmode, rte.inh) == \
        (querynodes.RTEKind.RTE_RELATION, 16384, "r", 3, True)
    assert (rte.eref_name, rte.colnames) == ("p", ("id",))
    assert q.jointree.fromlist == (querynodes.RangeTblRef(1),)
    quals = q.jointree.quals
    assert isinstance(quals, querynodes.BoolExpr) and quals.boolop == querynodes.BoolExprType.AND_EXPR
    var, link = quals.args
    assert var == querynodes.Var(1, 0)
    assert isinstance(link, querynodes.SubLink) and link.sublink_type == querynodes.SubLinkType.EXISTS_SUBLINK
    assert link.subselect.has_aggs and not q.has_for_update
    (action,) = q.merge_action_list
    assert action.match_kind == querynodes.MergeMatchKind.MERGE_WHEN_NOT_MATCHED_BY_TARGET
    assert action.target_list == (querynodes.FunctionRef(1299),)
    with pytest.raises(NodeDumpError, match="RTEKind"):
        pgnodes.query_from_dump(parse_node_dump("{QUERY :commandType 1 :rtable ({RTE :rtekind 42})}"))


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
    if not session.oracle_rows("select 1 from pg_class where relname = 'lp316'"):
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


@pytest.fixture()
def pg17_pair(server_pool: ServerPool) -> tuple[ScratchServer, ScratchServer]:
    """A real PostgreSQL 17 and an embedded 18, both at max_locks_per_transaction 16 with the same schemas."""
    from .fix_versions import bin_dir_of

    return _server(server_pool, bin_dir_of(17), 16), _server(server_pool, None, 16)


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
