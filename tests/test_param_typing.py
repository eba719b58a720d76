"""Client-side parameter typing follows PostgreSQL's rules (issue 24): over a corpus of real statements, lockscope
accepts exactly the statements PREPARE accepts, refuses with PREPARE's SQLSTATE exactly those PREPARE refuses for a
reason of parameter typing, and where it types a ``$n`` it gives the type PREPARE gives.

The oracle is ``PREPARE`` on a real server holding the corpus's schemas: the ``pg18`` fixture's server and
``pg_old``'s (PostgreSQL 15: its catalog has other candidates, e.g. ``array_append(anyarray, anyelement)`` where 14+
has ``anycompatiblearray``). The corpus (``tests/data/params``, sources and licences in its README.md): the seed
experiments' statements, the GitLab subset with ActiveRecord-shaped statements, statements Miniflux and Temporal
send, and hand-made hard cases.

Parameter-typing reasons (``lockscope.paramtypes.TYPING_SQLSTATES``): 42P18 (a ``$n`` left untyped or unused),
42P08 (two types for one ``$n``, or an occurrence left untyped), 42725 (no best candidate among functions or
operators), 42804 (types that do not fit: a polymorphic argument with only unknown inputs, a UNION or assignment
of the type a ``$n`` got elsewhere). Chosen because each is raised by parse analysis from the types the parameters
get, and nothing else in the corpus raises them. Statements PREPARE refuses for another reason (42883: no such
operator for the types, 22P02: a literal that is not a number) are the server's to report: lockscope must not
refuse them for typing.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest

from lockscope.db import Session, connect, run_script
from lockscope.demo import EVENTS_SQL, T5_SQL
from lockscope.errors import StatementError
from lockscope.footprint import measure_footprint, measure_generic_plan
from lockscope.paramtypes import TYPING_SQLSTATES, type_params
from lockscope.server import ScratchServer
from lockscope.statement import check_statement

from .helpers import one_line_error, run

DATA = Path(__file__).parent / "data"
CORPUS = DATA / "params"
#: corpus file -> the schema scripts of its database
SCHEMAS = {
    "seeds": [EVENTS_SQL, T5_SQL, (CORPUS / "schema_seeds.sql").read_text()],
    "gitlab": [(DATA / "gitlab" / "schema.sql").read_text()],
    "miniflux": [(CORPUS / "schema_miniflux.sql").read_text()],
    "temporal": [(CORPUS / "schema_temporal.sql").read_text()],
    "hard": [(CORPUS / "schema_hard.sql").read_text()],
}
#: Statements whose parameter lockscope leaves to the server (typed by PREPARE, undecided on the client): the
#: documented gaps of lockscope.paramtypes.
UNDECIDED = {
    "select make_interval(days => $1)": "named arguments",
    "select * from acct tablesample system ($1)": "TABLESAMPLE arguments",
    "select rank($1) within group (order by balance) from acct": "hypothetical-set aggregates",
}


#: corpus name -> its statement files (the GitLab subset's own workload first)
FILES = {name: [CORPUS / f"{name}.sql"] for name in SCHEMAS} | {
    "gitlab": [DATA / "gitlab" / "workload.sql", CORPUS / "gitlab.sql"]}


def statements(name: str) -> list[tuple[str, str]]:
    """(file:line, statement) of a corpus: one statement per line, ``--`` comment lines between."""
    return [(f"{path.parent.name}/{path.name}:{n}", line) for path in FILES[name]
            for n, line in enumerate(path.read_text().splitlines(), 1)
            if line.strip() and not line.startswith("--")]


@dataclass(frozen=True)
class Prepared:
    """PREPARE's answer: the SQLSTATE it failed with (None: prepared) and the parameter types it inferred."""

    sqlstate: str | None
    types: tuple[int, ...] = ()


def prepare(conn: psycopg.Connection[tuple[object, ...]], sql: str, declared: list[str] | None = None) -> Prepared:
    types = f" ({', '.join(declared)})" if declared else ""
    try:
        conn.execute(f"PREPARE corpus_stmt{types} AS {sql}".encode())
    except psycopg.Error as exc:
        return Prepared(exc.sqlstate)
    row = conn.execute("select parameter_types::oid[] from pg_prepared_statements where name = 'corpus_stmt'")
    inferred = tuple(int(t) for t in (row.fetchone() or [[]])[0])
    conn.execute("DEALLOCATE corpus_stmt")
    return Prepared(None, inferred)


def disagreement(prepared: Prepared, sql: str, session: Session) -> str | None:
    """What lockscope's verdict gets wrong against PREPARE's, or None."""
    typing = type_params(session.query_rows, check_statement(sql), owner=session)
    if prepared.sqlstate is None:
        if typing.refused:
            return f"PREPARE accepts it, lockscope refuses it ({typing.sqlstate}: {typing.message})"
        wrong = [f"${n} {got} (PREPARE: {want})"
                 for n, (got, want) in enumerate(zip(typing.types, prepared.types, strict=True), 1)
                 if got and got != want]
        if wrong:
            return "lockscope types " + ", ".join(wrong)
        undecided = [n for n, got in enumerate(typing.types, 1) if not got]
        if bool(undecided) != (sql in UNDECIDED):
            return f"undecided parameters {undecided}, UNDECIDED says {UNDECIDED.get(sql, 'none')}"
        return None
    if prepared.sqlstate in TYPING_SQLSTATES:
        if typing.sqlstate != prepared.sqlstate:
            return f"PREPARE refuses it with {prepared.sqlstate}, lockscope says {typing.sqlstate or 'accept'}"
        return None
    if typing.refused:
        return f"PREPARE fails with {prepared.sqlstate} (not typing), lockscope refuses it with {typing.sqlstate}"
    return None


@pytest.fixture(scope="module", params=["pg18", "pg_old"])
def corpus_server(request: pytest.FixtureRequest) -> Iterator[tuple[ScratchServer, dict[str, str]]]:
    """A server (pg18, then pg_old) with one database per corpus file: name -> conninfo."""
    server: ScratchServer = request.getfixturevalue(request.param)
    databases = {}
    with psycopg.connect(server.conninfo(), autocommit=True) as conn:
        for name, scripts in SCHEMAS.items():
            conn.execute(f"drop database if exists params_{name}".encode())
            conn.execute(f"create database params_{name}".encode())
            conninfo = server.conninfo().replace("dbname=postgres", f"dbname=params_{name}")
            run_script(conninfo, "\n".join(scripts))
            databases[name] = conninfo
    yield server, databases
    with psycopg.connect(server.conninfo(), autocommit=True) as conn:
        for name in SCHEMAS:
            conn.execute(f"drop database if exists params_{name}".encode())


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_lockscope_accepts_exactly_what_prepare_accepts(corpus_server: tuple[ScratchServer, dict[str, str]],
                                                        name: str) -> None:
    """Every statement of the corpus file: lockscope's verdict and types against PREPARE's, disagreements listed."""
    server, databases = corpus_server
    problems = []
    refused: dict[str, int] = {}
    with psycopg.connect(databases[name], autocommit=True) as oracle, connect(databases[name]) as session:
        for line, sql in statements(name):
            prepared = prepare(oracle, sql)
            refused[prepared.sqlstate or "OK"] = refused.get(prepared.sqlstate or "OK", 0) + 1
            problem = disagreement(prepared, sql, session)
            if problem is not None:
                problems.append(f"{line}: {problem}: {sql}")
    assert problems == [], f"PostgreSQL {server.major}, {len(problems)} disagreement(s):\n" + "\n".join(problems)
    assert refused.get("OK", 0) >= len(statements(name)) // 2, refused
    if name == "hard":  # the hard cases hold refusals of every typing reason, and other failures
        assert set(TYPING_SQLSTATES) | {"OK", "42883"} <= set(refused), refused


#: Statements with ``--param-type`` declarations (``PREPARE name (types)``): declared parameters are typed from the
#: start, so a later context coerces nothing (hard.sql's tables).
DECLARED = [
    ("select $1, $2 where $2 = 1", ["int"]),
    ("select $1, $2 where $2 = 1", ["int", "int"]),
    ("select $2", ["text", "int"]),
    ("select $3", ["text"]),
    ("select $1 + $2", ["int"]),
    ("select $1 + $2", ["numeric", "numeric"]),
    ("select count($1)", ["bigint"]),
    ("select $1 where $1 = 1", ["text"]),
    ("select $1 where $1 = 1", ["bigint"]),
    ("select * from acct where id = $1 and owner = $2", ["bigint"]),
    ("select * from acct where tags @> $1", ["text[]"]),
    ("select * from person where current_mood = $1", ["mood"]),
    ("update acct set balance = $1 where id = $2", ["numeric", "int"]),
    ("select generate_series($1, $2)", ["timestamptz"]),
    ("select date_trunc($1, $2)", ["text", "timestamp without time zone"]),
]


def test_declared_parameter_types_as_prepare_declares_them(corpus_server: tuple[ScratchServer, dict[str, str]]) -> None:
    """``type_params`` with declared types against ``PREPARE name (types) AS``: same verdict, same types."""
    server, databases = corpus_server
    problems = []
    with psycopg.connect(databases["hard"], autocommit=True) as oracle, connect(databases["hard"]) as session:
        for sql, declared in DECLARED:
            prepared = prepare(oracle, sql, declared)
            typing = type_params(session.query_rows, check_statement(sql), declared, owner=session)
            want = (prepared.sqlstate if prepared.sqlstate in TYPING_SQLSTATES else None, prepared.types)
            got = (typing.sqlstate, typing.types if prepared.sqlstate is None else prepared.types)
            if got != want:
                problems.append(f"{declared} {sql}: PREPARE {want}, lockscope {got}")
    assert problems == [], f"PostgreSQL {server.major}:\n" + "\n".join(problems)


def test_the_seed_statement_is_probed_with_the_prepared_protocol(session18: Session) -> None:
    """The finding of issue 24: ``select from t where $1 = 1`` is typed integer as PREPARE types it, and the prepared
    probe runs (six relation locks while planning, the table alone once the generic plan is reused)."""
    assert type_params(session18.query_rows, check_statement("select from t where $1 = 1")).types == (23,)
    fp = measure_footprint(session18, "select from t where $1 = 1", params=["1"], protocol="prepared", executions=7)
    assert [len(e.locks) for e in fp.executions] == [6, 6, 6, 6, 6, 6, 1]


@pytest.mark.parametrize("sql, sqlstate, declared", [
    ("select count($1) from t", "42P18", ["int"]),
    ("select $1 + $2 from acct", "42725", ["int", "int"]),
    ("select generate_series($1, $2)", "42725", ["bigint", "bigint"]),
    ("select $1 from acct where id = $1", "42P08", ["int"]),
    ("select array_length($1, 1)", "42804", ["int[]"]),
    ("select * from acct where id = $2", "42P18", ["text", "int"]),
])
def test_untypable_statements_are_refused_before_the_server_sees_them(session18: Session, sql: str, sqlstate: str,
                                                                      declared: list[str]) -> None:
    """The prepared and generic-plan probes refuse, with PREPARE's SQLSTATE, a statement the server could not
    prepare; with ``--param-type`` declaring the types, the same statement is probed."""
    params = ["1"] * len(declared)
    with pytest.raises(StatementError) as refused:
        measure_footprint(session18, sql, params=params, protocol="prepared", executions=1)
    assert refused.value.sqlstate == sqlstate and str(refused.value).startswith(f"{sqlstate}: ")
    with pytest.raises(StatementError) as generic:
        measure_generic_plan(session18, sql)
    assert generic.value.sqlstate == sqlstate
    params = ["{1}" if t.endswith("[]") else "1" for t in declared]
    fp = measure_footprint(session18, sql, params=params, param_types=declared, protocol="prepared", executions=1)
    assert fp.executions[0].phase == "custom"


def test_cli_probes_the_seed_statement(pg18: ScratchServer) -> None:
    """``lockscope footprint --protocol prepared`` on the seed statement, against a server named by --dsn: probed,
    the generic plan reused; an untypable one is refused in one line with its SQLSTATE (exit 3)."""
    proc = run("footprint", "--dsn", pg18.conninfo(), "--protocol", "prepared", "--param", "1",
               "select from t where $1 = 1")
    assert proc.returncode == 0, proc.stderr
    assert "generic-reuse" in proc.stdout
    proc = run("footprint", "--dsn", pg18.conninfo(), "--protocol", "prepared", "--param", "1", "--param", "2",
               "select $1 + $2 from t")
    assert proc.returncode == 3
    assert "42725: operator is not unique: unknown + unknown" in one_line_error(proc, progress="lockscope footprint:")


def test_cli_probes_the_seed_statement_on_a_scratch_server(tmp_path: Path) -> None:
    """The same with ``--scratch --setup`` holding the 5-index table (lockscope's scenario_t5)."""
    setup = tmp_path / "t5.sql"
    setup.write_text(T5_SQL)
    proc = run("footprint", "--scratch", "--setup", str(setup), "--protocol", "prepared", "--param", "1",
               "select from t where $1 = 1")
    assert proc.returncode == 0, proc.stderr
    assert "generic-reuse" in proc.stdout
