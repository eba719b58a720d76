"""EXPLAIN read as JSON (lockscope/explain.py): the facts taken from fields, and the plan's text rendered from the
same document, line for line what the server's own text format prints, on every major 13-19."""

from __future__ import annotations

import json

from lockscope.db import Session
from lockscope.demo import EVENTS_PARAM, EVENTS_STATEMENT
from lockscope.explain import quote_identifier, read_explain

#: Statements on the demo schema (tests/conftest.py DEMO_SCHEMA) covering the node types and properties the text
#: format prints: scans of every kind, joins, aggregates and grouping sets, window functions, set operations,
#: sorts, limits, CTEs, sublinks (InitPlans and SubPlans), DML with ON CONFLICT and RETURNING, partitions, views,
#: functions, VALUES, TABLESAMPLE, quoted names.
CORPUS = [
    "select * from acct where id = 1", "select * from acct where owner = 'x'", "select count(*) from acct",
    "select owner, count(*) from acct group by owner", "select owner, sum(balance) from acct group by rollup (owner)",
    "select owner, id, count(*) from acct group by grouping sets ((owner), (id), ())",
    "select owner, id, count(*) from acct group by cube (owner, id)",
    "select * from acct order by balance desc nulls last limit 3", "select distinct owner from acct",
    "select * from acct tablesample bernoulli (10) repeatable (7)", "select * from acct tablesample system (5)",
    "select * from acct where ctid = '(0,1)'", "select * from acct where ctid > '(0,1)' and ctid < '(1,1)'",
    "select * from (values (1), (2)) v(x)", "select * from acct a where id in (values (1), (2))",
    "select row_number() over (partition by owner order by id), * from acct",
    "select sum(balance) over (order by id rows between 1 preceding and current row) from acct",
    "select * from events where event_time > now() - interval '1 day'",
    "insert into acct values (1000, 'x', 1) on conflict (id) do update set balance = excluded.balance "
    "where acct.balance > 0",
    "insert into acct values (1001, 'x', 1) on conflict do nothing",
    "insert into acct values (1002, 'y', 2) returning *",
    "update events set event_data = event_data where event_time < now()", "delete from events where event_time < now()",
    "select * from acct join t on true", "select * from p40 where k = 3", "select * from p40",
    "select * from acct_v where id < 5", "select nextval('acct_seq')", "select * from acct where id = any('{1,2,3}')",
    "select a.id from acct a join acct b on a.owner = b.owner",
    "select * from acct where id in (select id from acct b where b.balance > 50)",
    "select * from acct where balance > (select avg(balance) from acct)",
    "select (select max(balance) from acct b where b.owner = a.owner) from acct a",
    "select * from pg_class where relname = 'x'", 'select "select".id from acct as "select"',
    'select * from acct "Mixed" where "Mixed".id = 1', "select * from generate_series(1, 10) g",
    "select * from generate_series(1, 10) g, generate_series(1, 3) h",
    "select * from rows from (generate_series(1, 3), generate_series(1, 4)) r",
    "select id from acct intersect all select id from acct", "select id from acct except select id from acct",
    "select id from acct union select id from acct", 'select * from acct order by owner collate "C"',
    "select * from acct a where exists (select 1 from acct b where b.id = a.id + 1)",
    "select * from acct a where not exists (select 1 from acct b where b.id = a.id + 1)",
    "select * from acct for update skip locked", "select * from acct limit 1 offset 3",
    "with m as materialized (select * from acct) select * from m join acct using (id)",
    "with recursive r(n) as (select 1 union all select n + 1 from r where n < 10) select * from r",
    "select * from acct a full join acct b on a.id = b.id", "select * from acct a left join p40 on p40.k = a.id",
]


def _server_text(session: Session, explain: str) -> list[str]:
    return [str(r[0]) for r in session.run_user_text(explain)]


def _rendered(session: Session, explain: str) -> list[str]:
    return list(read_explain(str(session.run_user_text(explain)[0][0])).lines)


def test_the_text_is_the_servers(any_session: Session) -> None:
    """For every statement of the corpus, the text rendered from ``EXPLAIN (FORMAT JSON)`` equals the server's own
    ``EXPLAIN`` text line for line; likewise a cached generic plan's (``Subplans Removed``, ``$1``)."""
    differ = []
    with any_session.probe_transaction():
        for sql in CORPUS:
            want = _server_text(any_session, "EXPLAIN " + sql)
            if _rendered(any_session, "EXPLAIN (FORMAT JSON) " + sql) != want:
                differ.append(sql)
    assert differ == []
    with any_session.probe_transaction(plan_cache_mode="force_generic_plan"):
        any_session.run_user_text(f"PREPARE explain_t AS {EVENTS_STATEMENT}")
        try:
            want = _server_text(any_session, f"EXPLAIN EXECUTE explain_t('{EVENTS_PARAM}')")
            assert any("Subplans Removed: 11" in line for line in want) and any("$1" in line for line in want)
            assert _rendered(any_session, f"EXPLAIN (FORMAT JSON) EXECUTE explain_t('{EVENTS_PARAM}')") == want
        finally:
            any_session.run_user_text("DEALLOCATE explain_t")


def test_facts_from_fields(any_session: Session) -> None:
    # the plan's shape is not the subject (a 100-row table's plan depends on whether another test analyzed it)
    with any_session.probe_transaction(enable_seqscan="off"):
        def plan(sql: str) -> object:
            return read_explain(str(any_session.run_user_text("EXPLAIN (FORMAT JSON) " + sql)[0][0]))

        pk = plan("select * from acct where id = 1")
        assert (pk.index_names, pk.scanned_relations, pk.cte_names, pk.param_refs) == (("acct_pkey",), 1,
                                                                                     frozenset(), False)
        cte = plan("with m as materialized (select * from acct) select * from m join acct using (id)")
        assert cte.cte_names == frozenset({"m"}) and cte.scanned_relations == 2
        assert plan("select * from p40").scanned_relations == 40
        summary = read_explain(str(any_session.run_user_text(
            "EXPLAIN (SUMMARY, FORMAT JSON) select 1")[0][0]))
        assert summary.planning_time_ms is not None and summary.planning_time_ms >= 0


def test_index_names_in_plan_order_unquoted() -> None:
    """Index scan nodes anywhere in the tree (members, parallel, backward), names as the catalog spells them; the
    text quotes them as ``quote_identifier`` does."""
    def node(kind: str, index: str, alias: str, **extra: object) -> dict[str, object]:
        return {"Node Type": kind, "Parent Relationship": "Member", "Parallel Aware": False, "Async Capable": False,
                "Scan Direction": "Forward", "Index Name": index, "Relation Name": "xl_t", "Alias": alias,
                "Startup Cost": "0.00", "Total Cost": "1.00", "Plan Rows": 1, "Plan Width": 8, **extra}

    top = {"Node Type": "Append", "Parallel Aware": False, "Async Capable": False, "Startup Cost": "0.00",
           "Total Cost": "4.00", "Plan Rows": 4, "Plan Width": 8, "Subplans Removed": 0, "Plans": [
               node("Index Scan", "xl_t_pkey", "xl_t"),
               {"Node Type": "Bitmap Index Scan", "Parent Relationship": "Member", "Parallel Aware": False,
                "Async Capable": False, "Index Name": "xl_t B", "Startup Cost": "0.00", "Total Cost": "4.28",
                "Plan Rows": 1, "Plan Width": 0},
               node("Index Only Scan", 'we"ird', "t_1", **{"Scan Direction": "Backward"}),
               node("Index Scan", "xl_t_a", "xl_t", **{"Parallel Aware": True}),
               node("Index Scan", "xl_t_pkey", "t2")]}
    plan = read_explain(json.dumps([{"Plan": top}]).replace('"0.00"', "0.00").replace('"1.00"', "1.00")
                        .replace('"4.00"', "4.00").replace('"4.28"', "4.28"))
    assert plan.index_names == ("xl_t_pkey", "xl_t B", 'we"ird', "xl_t_a")
    assert plan.scanned_relations == 4
    assert plan.lines == (
        "Append  (cost=0.00..4.00 rows=4 width=8)",
        "  ->  Index Scan using xl_t_pkey on xl_t  (cost=0.00..1.00 rows=1 width=8)",
        '  ->  Bitmap Index Scan on "xl_t B"  (cost=0.00..4.28 rows=1 width=0)',
        '  ->  Index Only Scan Backward using "we""ird" on xl_t t_1  (cost=0.00..1.00 rows=1 width=8)',
        "  ->  Parallel Index Scan using xl_t_a on xl_t  (cost=0.00..1.00 rows=1 width=8)",
        "  ->  Index Scan using xl_t_pkey on xl_t t2  (cost=0.00..1.00 rows=1 width=8)")
    rule = [{"Plan": {"Node Type": "Result", "Parallel Aware": False, "Async Capable": False, "Startup Cost": 0,
                      "Total Cost": 0, "Plan Rows": 1, "Plan Width": 0}}, "Notify"]
    assert read_explain(json.dumps(rule)).lines == ("Result  (cost=0..0 rows=1 width=0)", "", "NOTIFY")
    assert read_explain("[]").lines == ("Query rewrites to nothing",)
    assert [quote_identifier(n) for n in ("events", "select", "user", "Mixed", "a b", "_x1")] == [
        "events", '"select"', '"user"', '"Mixed"', '"a b"', "_x1"]
