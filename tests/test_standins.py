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
from lockscope.workload.standins import typed_standins

SCHEMA = """
CREATE SCHEMA standins;
CREATE TABLE standins.users (id int PRIMARY KEY, level int NOT NULL, name text NOT NULL);
CREATE TABLE standins.posts (id bigint PRIMARY KEY, uploader_id int NOT NULL, title text NOT NULL,
                             score numeric NOT NULL);
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
