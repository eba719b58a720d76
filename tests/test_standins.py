"""Typed stand-ins for the constants pg_stat_statements replaced (issue 27): a normalized text that PREPARE cannot
type as it stands is probed anyway, its ``$n`` typed from the expression around them.

The oracle is PREPARE on the ``pg18`` fixture's server: the normalized text fails with the SQLSTATE of parameter
typing, the stand-in text ``typed_standins`` gives is accepted, and the types PREPARE gives its parameters
(``pg_prepared_statements.parameter_types``) are the ones the stand-ins name.
"""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from lockscope.db import Session, connect
from lockscope.server import ScratchServer
from lockscope.statement import check_statement
from lockscope.workload.standins import standin_values, typed_standins

from .fix_versions import bin_dir_of
from .servers import ServerPool, demo_server

SCHEMA = """
CREATE SCHEMA standins;
CREATE TABLE standins.users (id int PRIMARY KEY, level int NOT NULL, name text NOT NULL);
CREATE TABLE standins.posts (id bigint PRIMARY KEY, uploader_id int NOT NULL, title text NOT NULL,
                             score numeric NOT NULL, created timestamptz NOT NULL DEFAULT now());
"""

#: normalized text -> (SQLSTATE PREPARE raises on it, the types PREPARE gives the stand-in text's $1..$n)
SHAPES = {
    "select u.level, count(*) from standins.posts p join standins.users u on u.id = p.uploader_id "
    "where p.uploader_id between $1 and $2 + $3 group by u.level": ("42725", ["integer", "integer", "integer"]),
    "select id from standins.posts where uploader_id = $1 + $2": ("42725", ["integer", "integer"]),
    "select id from standins.posts where id in ($1 + $2, $3)": ("42725", ["bigint", "bigint", "bigint"]),
    "select id from standins.posts offset $1 * $2": ("42725", ["bigint", "bigint"]),
    "select id from standins.posts order by id limit $1 + $2": ("42725", ["bigint", "bigint"]),
    "select id from standins.posts where score > $1 * $2": ("42725", ["numeric", "numeric"]),
    "select $1 + $2 from standins.posts where id = $3": ("42725", ["integer", "integer", "bigint"]),
    "select greatest($1 - $2, 3) from standins.posts": ("42725", ["integer", "integer"]),
    # EXTRACT(epoch FROM x) is recorded as EXTRACT($1 FROM x): the grammar refuses it; the field is extract's text
    # argument (umami's session detail, listmonk's daily views, miniflux's weekly count)
    "select sum(floor(extract($1 from (t.max_time - t.min_time)))) from (select min(created) as min_time, "
    "max(created) as max_time from standins.posts where uploader_id = $2 group by id) as t":
        ("42601", ["text", "integer"]),
    "with intval as (select case when (extract ($1 from ($2::timestamp - $3::timestamp)) / $4) >= $5 then $6 "
    "else $7 end) select count(*), date_trunc((select * from intval), created) from standins.posts "
    "where id = any($8) group by 2":
        ("42601", ["text", "timestamp without time zone", "timestamp without time zone", "numeric", "numeric",
                   "text", "text", "bigint[]"]),
    "select extract($1 from interval $2) / nullif(extract($3 from (max(created) - min(created))), $4) "
    "from standins.posts where created >= now() - interval $5":
        ("42601", ["text", "interval", "text", "numeric", "interval"]),
    # a CASE of replaced constants is text: sum(text) does not exist (umami's dashboard stats), text is no boolean
    # (listmonk's subscriber count)
    "select sum(case when level = $1 then $2 else $3 end) from standins.users": ("42883", ["integer"] * 3),
    "select id from standins.posts where uploader_id > $1 and (case when title = $2 then $3 else $4 end)":
        ("42804", ["integer", "text", "boolean", "boolean"]),
    # an ARRAY of replaced constants is text[]: integer = text (lemmy's post list, language_id = ANY(ARRAY[...]))
    "select id from standins.posts where uploader_id = any(array[$1, $2])": ("42883", ["integer", "integer"]),
    "select id from standins.posts where title <> all(array[$1, $2]) and uploader_id = any(array[$3]) limit $4":
        ("42883", ["text", "text", "integer", "bigint"]),
    "select sum(case when u.level = $1 then $2 else $3 end), sum(floor(extract($4 from now() - p.created))) "
    "from standins.users u join standins.posts p on p.uploader_id = u.id":
        ("42601", ["integer", "integer", "integer", "text"]),
}


@pytest.fixture()
def standins_session(pg18: ScratchServer) -> Iterator[Session]:
    with psycopg.connect(pg18.conninfo(), autocommit=True) as admin:
        admin.execute("DROP SCHEMA IF EXISTS standins CASCADE")
        admin.execute(SCHEMA)
        try:
            with connect(pg18.conninfo()) as session:
                yield session
        finally:
            admin.execute("DROP SCHEMA standins CASCADE")


def _prepare(conninfo: str, text: str) -> list[str] | str:
    """PREPARE on the server: the parameter types it gives, or the SQLSTATE it raises."""
    with psycopg.connect(conninfo, autocommit=True) as conn:
        try:
            conn.execute(f"PREPARE t AS {text}")  # type: ignore[arg-type]
        except psycopg.Error as exc:
            return str(exc.sqlstate)
        row = conn.execute("SELECT parameter_types::text[] FROM pg_prepared_statements WHERE name = 't'").fetchone()
        assert row is not None
        return list(row[0])


@pytest.mark.parametrize("normalized", list(SHAPES))
def test_prepare_of_the_standin_text_succeeds_where_the_normalized_text_fails(
        pg18: ScratchServer, standins_session: Session, normalized: str) -> None:
    sqlstate, types = SHAPES[normalized]
    assert _prepare(pg18.conninfo(), normalized) == sqlstate
    standins = typed_standins(standins_session.query_rows, check_statement(normalized), owner=standins_session)
    assert standins is not None
    assert _prepare(pg18.conninfo(), standins.text) == types
    assert sqlstate in standins.note and "typed stand-ins" in standins.note


def test_a_text_that_types_as_it_stands_gets_no_standins(standins_session: Session) -> None:
    text = "select id, $1 || $2 from standins.posts where title like $3 || $4 and uploader_id = $5"
    assert typed_standins(standins_session.query_rows, check_statement(text), owner=standins_session) is None


@pytest.mark.parametrize(("normalized", "types"), [
    ("select count(*) from standins.posts where id > $1 and now() - interval $2 * $3 < now()",
     ["bigint", "interval", "double precision"]),
    ("select id from standins.posts where uploader_id between $1 and $2 + $3 and now() > date $4",
     ["integer", "integer", "integer", "date"]),
])
def test_a_typed_literal_pg_stat_statements_normalized_is_written_as_its_cast(
        pg18: ScratchServer, standins_session: Session, normalized: str, types: list[str]) -> None:
    """``interval '1 day'`` is recorded as ``interval $1``: the server's grammar refuses it (42601)."""
    assert _prepare(pg18.conninfo(), normalized) == "42601"
    standins = typed_standins(standins_session.query_rows, check_statement(normalized), owner=standins_session)
    assert standins is not None
    assert _prepare(pg18.conninfo(), standins.text) == types


def test_an_extract_field_stands_in_as_epoch_and_its_custom_plan_runs(
        pg18: ScratchServer, standins_session: Session) -> None:
    """The custom plan binds the field a value: ``epoch``, which timestamp, interval and date all have."""
    normalized = "select extract($1 from interval $2) + extract($3 from date '2000-01-01')"
    standins = typed_standins(standins_session.query_rows, check_statement(normalized), owner=standins_session)
    assert standins is not None
    values = standin_values(standins)
    assert (values[1], values[3]) == ("epoch", "epoch")
    with psycopg.connect(pg18.conninfo(), autocommit=True) as conn:
        conn.execute(f"PREPARE t AS {standins.text}")  # type: ignore[arg-type]
        row = conn.execute("EXECUTE t('epoch', '1 day', 'epoch')").fetchone()
    assert row is not None and row[0] == 86400 + 946684800


def test_before_postgresql_14_an_extract_is_date_part(server_pool: ServerPool) -> None:
    """PostgreSQL 13's grammar makes ``EXTRACT(f FROM x)`` ``date_part(f, x)``: pg_proc has no ``extract``."""
    server = demo_server(server_pool, bin_dir_of(13))
    normalized = "select extract($1 from now() - interval $2)"
    with connect(server.conninfo()) as session:
        standins = typed_standins(session.query_rows, check_statement(normalized), owner=session,
                                  server_version_num=session.facts.server_version_num)
    assert standins is not None and "pg_catalog.date_part($1::text," in standins.text
    assert _prepare(server.conninfo(), normalized) == "42601"
    assert _prepare(server.conninfo(), standins.text) == ["text", "interval"]


def test_a_case_of_constants_the_server_takes_as_text_keeps_its_text(
        pg18: ScratchServer, standins_session: Session) -> None:
    """``string_agg(case ... then $2 else $3 end, $4)`` resolves with the CASE as text: PREPARE takes it as it
    stands, so no stand-in retypes its results (an ``int4`` would make it fail: string_agg(integer, ...))."""
    text = "select string_agg(case when level = $1 then $2 else $3 end, $4) from standins.users"
    assert _prepare(pg18.conninfo(), text) == ["integer", "text", "text", "text"]
    assert typed_standins(standins_session.query_rows, check_statement(text), owner=standins_session) is None


def test_an_array_of_constants_says_why_it_was_retyped(standins_session: Session) -> None:
    """``col = ANY(ARRAY[$1, $2])``: the note names the ARRAY, not a CASE; the elements take the column's type."""
    normalized = "select id from standins.posts where uploader_id = any(array[$1, $2])"
    standins = typed_standins(standins_session.query_rows, check_statement(normalized), owner=standins_session)
    assert standins is not None
    assert "an ARRAY of replaced constants is text[]" in standins.note and "CASE" not in standins.note
    assert [(n, name) for n, _, name in standins.types] == [(1, "pg_catalog.int4"), (2, "pg_catalog.int4")]
    assert standin_values(standins) == {1: "0", 2: "0"}
