"""Real client libraries, each with its DEFAULT statement caching, against PostgreSQL's plan cache: how many of a
statement's calls were planned (pg_stat_statements ``plans`` with track_planning on) for each library, as exact
counts. This is the ground truth that issue 18 (calls attributed to the plan-cache phase they really run) is checked
against; the programs and their build are in :mod:`tests.drivers`.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from lockscope.db import run_script
from lockscope.server import ScratchServer, ScratchSettings

from . import drivers
from .drivers import DRIVERS, DriverError, build, run
from .helpers import summary_line

SQL = "select * from t where id = $1"
SCHEMA = """
create table t (id int primary key, a int not null, b text not null, c int not null);
create index t_a on t (a);
create index t_b on t (b);
create index t_c on t (c);
insert into t select g, g % 10, 'b' || g, g % 7 from generate_series(1, 1000) g;
analyze t;
create extension pg_stat_statements;
"""
CLIENTS = 2
SECONDS = 1.0
#: The terminal summary's section with one line per driver run (rates are reported only).
SUMMARY = "client libraries: calls and plannings per run (tests/test_drivers.py)"

# plancache.c choose_custom_plan (plan_cache_mode = auto): a prepared (named) statement gets custom plans "until we
# have done at least 5", so its executions 1-5 are each planned; at the 6th, GetCachedPlan builds the generic plan
# (one more planning) and keeps it while its cost is below the average custom plan's, which carries a planning charge
# (1000 * cpu_operator_cost per relation): for this index lookup the generic plan wins, and executions 7.. plan
# nothing. An unnamed statement (a new CachedPlanSource each time) is planned on every execution.
CUSTOM_PLANS_FIRST = 5
NAMED_STATEMENT_PLANS = CUSTOM_PLANS_FIRST + 1

#: Plannings of SQL per connection once the connection is past its library's switch (None: every call is planned).
PLANS_PER_CONNECTION: dict[str, int | None] = {
    # named statement prepared at the first execution (QueryExecModeCacheStatement)
    "pgx": NAMED_STATEMENT_PLANS,
    # prepareThreshold=5: executions 1-4 unnamed (planned each), the 5th parses the named statement S_1
    "pgjdbc": 4 + NAMED_STATEMENT_PLANS,
    # unnamed statement every time: planned on every call, nothing reused
    "node-pg": None,
    # name: given: parsed once per connection, then Bind/Execute
    "node-pg-named": NAMED_STATEMENT_PLANS,
    # prepare_threshold=5: executions 1-5 unnamed (PQexecParams), the 6th prepares _pg3_0
    "psycopg": 5 + NAMED_STATEMENT_PLANS,
    # statement cache: named statement prepared at the first execution
    "asyncpg": NAMED_STATEMENT_PLANS,
}


@pytest.fixture(scope="module")
def server() -> Iterator[ScratchServer]:
    with ScratchServer(settings=ScratchSettings(track_planning=True)) as srv:
        run_script(srv.conninfo(), SCHEMA)
        yield srv


def stat_of(conninfo: str, sql: str) -> tuple[int, int]:
    """(calls, plans) of ``sql`` in pg_stat_statements (exactly one entry: every driver sends the same text)."""
    with psycopg.connect(conninfo, autocommit=True) as conn:
        rows = conn.execute("select calls, plans from pg_stat_statements where query = %s", [sql]).fetchall()
    assert len(rows) == 1, rows
    calls, plans = rows[0]
    return int(calls), int(plans)


def reset_stats(conninfo: str) -> None:
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute("select pg_stat_statements_reset()")


@pytest.mark.slow
@pytest.mark.parametrize("driver", DRIVERS)
def test_default_statement_caching(driver: str, server: ScratchServer, request: pytest.FixtureRequest,
                                   load_lock: None) -> None:
    started = time.monotonic()
    build(driver)  # fetched and built on the first run, a cache hit afterwards
    build_seconds = time.monotonic() - started
    reset_stats(server.conninfo())
    result = run(driver, server.conninfo(), SQL, ["int:42"], clients=CLIENTS, seconds=SECONDS)
    calls, plans = stat_of(server.conninfo(), SQL)
    summary_line(request, SUMMARY, f"{driver:14} {result.version:9} calls {calls:7} plans {plans:6} "
                                   f"{result.rate:8.0f} calls/s  (build {build_seconds:.1f} s)")

    assert result.errors == 0, result.stderr
    assert result.driver == driver and result.version
    assert calls == result.calls  # every call the library completed, executed once on the server
    # each connection far past its library's switch to a named statement (and past the generic plan)
    assert calls >= CLIENTS * 100, calls
    per_connection = PLANS_PER_CONNECTION[driver]
    if per_connection is None:
        assert plans == calls
    else:
        assert plans == CLIENTS * per_connection


@pytest.mark.slow  # no load: one client for 0.3 s
def test_failing_statement_counts_errors(server: ScratchServer) -> None:
    for driver in DRIVERS:
        result = run(driver, server.conninfo(), "select * from no_such_table where id = $1", ["int:1"],
                     clients=1, seconds=0.3)
        assert (result.calls, result.driver) == (0, driver)
        assert result.errors > 0, result
        assert "no_such_table" in result.stderr, (driver, result.stderr)


@pytest.mark.slow  # no load: one client for 0.2 s
def test_text_parameters(server: ScratchServer) -> None:
    for driver in DRIVERS:
        result = run(driver, server.conninfo(), "select id from t where b = $1 and a = $2", ["text:b42", "int:2"],
                     clients=1, seconds=0.2)
        assert result.errors == 0 and result.calls > 0, (driver, result.stderr)


def test_build_cache_follows_the_sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert build("pgx") == build("pgx")  # the second call is a cache hit
    assert build("pgx").name == f"pgx-{drivers._key('pgx')}"
    assert build("psycopg") == drivers.HERE / "psycopg"  # this interpreter's psycopg: nothing to build
    before = drivers._key("pgx")
    shutil.copytree(drivers.HERE / "pgx", tmp_path / "pgx")
    monkeypatch.setattr(drivers, "HERE", tmp_path)
    assert drivers._key("pgx") == before
    with open(tmp_path / "pgx" / "main.go", "a", encoding="utf-8") as f:
        f.write("\n// changed\n")
    assert drivers._key("pgx") != before


def test_bad_input_is_refused(server: ScratchServer) -> None:
    with pytest.raises(DriverError, match="unknown driver 'jdbc'"):
        build("jdbc")
    with pytest.raises(DriverError, match=r"parameter '42' is not int:N or text:S"):
        run("pgx", server.conninfo(), SQL, ["42"], clients=1, seconds=1)
