"""Derived footprints' plan-time pruning (issue 39) on generated WHERE clauses, PostgreSQL as the oracle.

Hypothesis draws statements over LIST, RANGE (with and without a DEFAULT partition, sub-partitioned) and HASH
partitioned tables: conjunctions of ``=``, ``IN``, ``<``, ``<=``, ``>``, ``>=``, ``BETWEEN``, ``<>``, ``IS NULL``,
``OR``, comparisons with ``now()``-like and immutable expressions, parameters, alone or joined. For each, a
superuser's measured footprint and a ``pg_monitor`` role's derived one: a derived execution labelled exact holds
exactly the measured locks; one labelled an upper bound (``at_most``) holds every measured lock. Nobody here wrote
these shapes."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lockscope.db import Session, connect, run_script
from lockscope.footprint import measure_footprint
from lockscope.server import ScratchServer, ScratchSettings

from .fix_versions import bin_dir_of

SCHEMA = """
create table lr (k int, v int, d date) partition by range (k);
create table lr0 partition of lr for values from (minvalue) to (10);
create table lr1 partition of lr for values from (10) to (20);
create table lr2 partition of lr for values from (20) to (30);
create table lr3 partition of lr for values from (30) to (maxvalue);
create index on lr (v);
create table ld (k int, v int) partition by range (k);
create table ld0 partition of ld for values from (0) to (10);
create table ld1 partition of ld for values from (10) to (20);
create table ld_default partition of ld default;
create table ll (k text, v int) partition by list (k);
create table ll_ab partition of ll for values in ('a', 'b');
create table ll_c partition of ll for values in ('c');
create table ll_n partition of ll for values in ('d', null);
create table ll_default partition of ll default;
create index on ll (v);
create table lh (k int, v int) partition by hash (k);
""" + "".join(f"create table lh{r} partition of lh for values with (modulus 4, remainder {r});\n"
             for r in range(4)) + """
create table ls (k int, g int, v int) partition by range (k);
create table ls0 partition of ls for values from (0) to (50) partition by list (g);
create table ls0a partition of ls0 for values in (1, 2);
create table ls0b partition of ls0 for values in (3);
create table ls1 partition of ls for values from (50) to (100);
create table lt (k date, v int) partition by range (k);
create table lt_jan partition of lt for values from ('2026-01-01') to ('2026-02-01');
create table lt_feb partition of lt for values from ('2026-02-01') to ('2026-03-01');
create table lt_mar partition of lt for values from ('2026-03-01') to ('2026-04-01');
create table small (id int primary key, k int);
create role mon login in role pg_monitor;
"""

#: table -> (key column, how to draw a key value as SQL)
TABLES = {
    "lr": ("k", st.integers(-5, 40).map(str)),
    "ld": ("k", st.integers(-5, 25).map(str)),
    "ll": ("k", st.sampled_from(["'a'", "'b'", "'c'", "'d'", "'z'"])),
    "lh": ("k", st.integers(0, 20).map(str)),
    "ls": ("k", st.integers(0, 99).map(str)),
    "lt": ("k", st.sampled_from(["'2026-01-15'", "'2026-02-01'", "date '2026-03-31'", "'2025-12-31'::date"])),
}


@st.composite
def conditions(draw: st.DrawFn, table: str, alias: str) -> str:
    key, value = TABLES[table]
    col = f"{alias}.{key}" if alias else key
    form = draw(st.sampled_from(["=", "in", "<", "<=", ">", ">=", "between", "<>", "is null", "or", "now", "sub",
                                 "expr", "v", "g"]))
    if form == "in":
        return f"{col} in ({', '.join(draw(st.lists(value, min_size=1, max_size=3)))})"
    if form == "between":
        return f"{col} between {draw(value)} and {draw(value)}"
    if form == "is null":
        return f"{col} is null"
    if form == "or":
        return f"({col} = {draw(value)} or {alias + '.' if alias else ''}v = 1)"
    if form == "now":
        return {"lt": f"{col} > now()::date - 30", "ll": f"{col} > to_char(now(), 'YYYY')"}.get(
            table, f"{col} > extract(day from now())::int")
    if form == "sub":
        return f"{col} = (select max(id) from small)" if table not in ("lt", "ll") else f"{col} = {draw(value)}"
    if form == "expr":
        return f"{col} = abs(-3)" if table != "lt" and table != "ll" else f"{col} = {draw(value)}"
    if form == "v":
        return f"{alias + '.' if alias else ''}v = {draw(st.integers(0, 9))}"
    if form == "g" and table == "ls":
        return f"{alias + '.' if alias else ''}g = {draw(st.integers(1, 3))}"
    if form == "g":
        return f"{col} = {draw(value)}"
    return f"{col} {form} {draw(value)}"


@st.composite
def statements(draw: st.DrawFn) -> str:
    table = draw(st.sampled_from(sorted(TABLES)))
    joined = draw(st.booleans())
    alias = "t" if joined else ""
    conds = draw(st.lists(conditions(table, alias), min_size=1, max_size=3))
    where = " and ".join(conds)
    if joined:
        return f"select * from {table} t join small s on s.id = t.v where {where}"
    return f"select * from {table} where {where}"


@pytest.fixture(scope="module", params=[18, 15])
def pruning_server(request: pytest.FixtureRequest) -> Iterator[tuple[Session, Session]]:
    with ScratchServer(bin_dir_of(request.param), ScratchSettings(max_locks_per_transaction=16)) as server:
        run_script(server.conninfo(), SCHEMA)
        with connect(server.conninfo()) as su, connect(server.conninfo().replace("user=postgres", "user=mon")) as mon:
            yield su, mon


def test_generated_pruning_derived_exactly_or_said(pruning_server: tuple[Session, Session]) -> None:
    su, mon = pruning_server
    tally = {"exact": 0, "at most": 0, "other": 0}

    @settings(derandomize=True, max_examples=150, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(sql=statements())
    def check(sql: str) -> None:
        measured = measure_footprint(su, sql).executions[0]
        derived_fp = measure_footprint(mon, sql)
        assert derived_fp.source == "derived"
        derived = derived_fp.executions[0]
        held = sorted((lk.relation, lk.mode) for lk in measured.locks)
        counted = sorted((lk.relation, lk.mode) for lk in derived.locks)
        if derived.exact:
            tally["exact"] += 1
            assert counted == held, (sql, set(held) ^ set(counted))
        elif derived.at_most and not derived.unknowns:
            tally["at most"] += 1
            assert set(held) <= set(counted), (sql, set(held) - set(counted))
        else:
            tally["other"] += 1

    check()
    # most shapes are decided (2026-12-08, PG 18: 150 drawn, well over half exact)
    assert tally["exact"] >= 75, tally
