"""The statements a trigger function runs, derived from its source (``lockscope.plpgsql``), held to a real server.

The oracle (a private scratch server, PostgreSQL 18): for every case of the trigger corpus (``tests/plpgsql_corpus.py``:
real-world trigger functions of Kong, crates.io, que, graphile-worker and 2ndQuadrant's audit trigger, and the
census's PL/pgSQL cases), the triggers of the event's table are read with ``sql/exec_triggers.sql``, the firing ones
chosen by :func:`lockscope.plpgsql.firing_triggers`, and each function derived. Then

- every derived statement PREPAREs with the parameter types derived (``unknown`` where none), and the relations its
  PREPARE locks (parse analysis and rewriting: the range table in its lock modes) are read from pg_lock_status();
- the event runs for real in a rolled-back transaction (``tests/txn_oracle.py``), once with the table's user
  triggers and once without (``ALTER TABLE ... DISABLE TRIGGER USER``): every table lock the triggers add is one a
  derived statement that runs takes, and every lock those statements' PREPARE takes is held when the event runs;
- the sequences a derived statement's ``nextval`` names are locked when it runs;
- dynamic SQL is reported as not derivable and really locks what no derived statement does.
"""

from __future__ import annotations

from collections.abc import Iterator

import pglast
import psycopg
import pytest

from lockscope.db import connect, load_sql
from lockscope.plpgsql import (
    Construct,
    FunctionSupport,
    TriggerEvent,
    TriggerLevel,
    TriggerProgram,
    TriggerStatement,
    TriggerTiming,
    firing_triggers,
    trigger_program,
    trigger_statements,
)
from lockscope.rows import ExecTriggerRow, TableColumnRow
from lockscope.server import ScratchServer, ScratchSettings

from .plpgsql_corpus import Event, TriggerCase, load_trigger_cases
from .txn_oracle import Case, HeldLock, run_transaction, setup_case

TABLE_KINDS = frozenset("rpvmf")
_LOCKS = (b"SELECT relation::int8, mode FROM pg_catalog.pg_lock_status() "
          b"WHERE pid = pg_catalog.pg_backend_pid() AND granted AND locktype = 'relation'")
_NAMES = ("SELECT c.oid::int8, n.nspname || '.' || c.relname, c.relkind::text FROM pg_catalog.pg_class c "
          "JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
          "WHERE c.oid = ANY(%s) AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')")
CASES = load_trigger_cases()


@pytest.fixture(scope="module")
def server() -> Iterator[ScratchServer]:
    with ScratchServer(settings=ScratchSettings(extra={"autovacuum": "off"})) as srv:
        yield srv


# -- the oracle ------------------------------------------------------------------------------------------------------

def prepare_locks(conninfo: str, stmt: TriggerStatement, search_path: str | None = None) -> set[tuple[str, str]]:
    """The table locks (``schema.name``, mode) PREPARE of ``stmt`` takes, with its derived parameter types (under
    the function's own ``search_path`` when it has one)."""
    types = ", ".join(t or "unknown" for t in stmt.param_types)
    head = f"PREPARE lockscope_t({types})" if stmt.params else "PREPARE lockscope_t"
    with psycopg.connect(conninfo, autocommit=True) as conn:
        if search_path is not None:
            conn.execute(f"SET search_path = {search_path}".encode())
        conn.execute(b"BEGIN")
        try:
            conn.execute(f"{head} AS {stmt.sql}".encode())
            held = conn.execute(_LOCKS).fetchall()
        finally:
            conn.execute(b"ROLLBACK")
            conn.execute(b"DEALLOCATE ALL")
        names = {int(str(oid)): (str(name), str(kind))
                 for oid, name, kind in conn.execute(_NAMES, [[int(str(r[0])) for r in held]]).fetchall()}
    return {(names[int(str(oid))][0], str(mode)) for oid, mode in held
            if int(str(oid)) in names and names[int(str(oid))][1] in TABLE_KINDS}


def table_locks(locks: tuple[HeldLock, ...]) -> set[tuple[str, str]]:
    return {(lk.relation, lk.mode) for lk in locks if lk.relkind in TABLE_KINDS}


def event_target(sql: str) -> tuple[str, TriggerEvent, list[str] | None]:
    """The table an INSERT, UPDATE or DELETE writes (as written), its event and the columns an UPDATE sets."""
    stmt = pglast.parse_sql(sql)[0].stmt
    kind = {"InsertStmt": TriggerEvent.INSERT, "UpdateStmt": TriggerEvent.UPDATE,
            "DeleteStmt": TriggerEvent.DELETE}[type(stmt).__name__]
    rel = stmt.relation
    name = f"{rel.schemaname}.{rel.relname}" if rel.schemaname else str(rel.relname)
    columns = [str(t.name) for t in stmt.targetList] if kind == TriggerEvent.UPDATE else None
    return name, kind, columns


def derive_for(conninfo: str, table: str, event: TriggerEvent, columns: list[str] | None
               ) -> dict[str, TriggerProgram]:
    """The programs of the triggers of ``table`` that fire for ``event``, by function name, derived from the
    catalog as the lead's engine reads it: ``exec_triggers`` and ``audit_table_columns`` (twice: the relations a
    first derivation wants typed)."""
    with connect(conninfo) as session:
        oid = session.query_rows("audit_table_columns", TableColumnRow, [[table]])[0].table_oid
        rows = session.query_rows("exec_triggers", ExecTriggerRow, [oid])
        firing = firing_triggers(rows, event, updated_columns=columns)
        programs = {}
        for fired in firing:
            row = fired.trigger
            cols = {c.column_name: c.type_name for c in
                    session.query_rows("audit_table_columns", TableColumnRow, [[row.table_name]])}
            program = trigger_program(row, cols)
            if program.type_relations:
                typed: dict[str, dict[str, str]] = {}
                for c in session.query_rows("audit_table_columns", TableColumnRow, [list(program.type_relations)]):
                    typed.setdefault(c.written, {})[c.column_name] = c.type_name
                program = trigger_program(row, cols, typed)
            programs[row.function_name] = program
    return programs


def run_event(conninfo: str, table: str, event: Event) -> tuple[tuple[HeldLock, ...], tuple[HeldLock, ...]]:
    """What the event holds with the table's user triggers, and without them."""
    full = run_transaction(conninfo, [event.stmt], executions=1).runs[0].final.locks
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute(f"ALTER TABLE {table} DISABLE TRIGGER USER".encode())
        try:
            base = run_transaction(conninfo, [event.stmt], executions=1).runs[0].final.locks
        finally:
            conn.execute(f"ALTER TABLE {table} ENABLE TRIGGER USER".encode())
    return full, base


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_derived_statements_prepare_and_lock_what_the_trigger_locks(server: ScratchServer, case: TriggerCase) -> None:
    conninfo = setup_case(server.conninfo(), case.case)
    derived: set[tuple[str, int]] = set()
    for event in case.events:
        table, kind, columns = event_target(event.stmt.sql)
        programs = derive_for(conninfo, table, kind, columns)
        derived |= {(fn, s.line) for fn, p in programs.items() for s in p.statements}
        assert {fn for fn, _ in event.runs + event.dynamic} <= set(programs), (event.stmt.sql, sorted(programs))
        locks = {stmt: prepare_locks(conninfo, stmt, p.search_path) for p in programs.values()
                 for stmt in p.statements}
        running = [s for fn, line in event.runs for s in programs[fn].statements if s.line == line]
        assert len(running) >= len(event.runs), (event.runs, [(s.line, s.sql) for s in running])
        for fn, line in event.dynamic:
            assert any(n.line == line for n in programs[fn].not_derivable), programs[fn].not_derivable
        full, base = run_event(conninfo, table, event)
        expected = set().union(*(locks[s] for s in running)) if running else set()
        added = table_locks(full) - table_locks(base)
        assert expected <= table_locks(full), (event.stmt.sql, expected - table_locks(full))
        if event.dynamic:
            assert added - expected, f"{event.stmt.sql}: dynamic SQL locked nothing no derived statement does"
        else:
            assert added <= expected, (event.stmt.sql, added - expected)
        sequences = {lk.name for lk in full if lk.relkind == "S"}
        assert {seq.rsplit(".", 1)[-1] for s in running for seq in s.sequences} <= sequences
    assert derived == {pair for e in case.events for pair in e.runs} | set(case.unreached)


# -- which triggers fire, in which order ---------------------------------------------------------------------------

FIRING_SETUP = """
create table parent (id int primary key);
insert into parent values (1), (2);
create table fo (id int primary key, v int not null default 1, w int, p int references parent);
create view fo_v as select id, v from fo;
create function say() returns trigger language plpgsql as $$
begin
  raise notice '%', tg_name;
  return case when tg_level = 'ROW' then coalesce(new, old) end;
end $$;
create trigger a_bs before insert or update or delete on fo for each statement execute function say();
create trigger b_br before insert or update on fo for each row execute function say();
create trigger a_br_when before update on fo for each row when (new.v > 0) execute function say();
create trigger "B_upper" after insert on fo for each row execute function say();
create trigger c_ar after insert or update or delete on fo for each row execute function say();
create trigger b_ar_of after update of w on fo for each row execute function say();
create trigger z_as after insert or update or delete or truncate on fo for each statement execute function say();
create trigger d_disabled after insert on fo for each row execute function say();
alter table fo disable trigger d_disabled;
create trigger e_replica after insert on fo for each row execute function say();
alter table fo enable replica trigger e_replica;
create trigger f_always after insert on fo for each row execute function say();
alter table fo enable always trigger f_always;
create constraint trigger g_deferred after insert on fo deferrable initially deferred for each row
  execute function say();
create trigger h_instead instead of update on fo_v for each row execute function say();
create trigger i_view_bs before update on fo_v for each statement execute function say();
insert into fo (id, v, w, p) values (10, 1, 1, 1), (11, 2, 2, 2);
"""


def _expand(firing: tuple[object, ...], rows: int) -> list[str]:
    """The notices the firing triggers raise for a statement touching ``rows`` rows (each ROW trigger once per row,
    BEFORE/INSTEAD per row during the statement, AFTER ROW per row at its end)."""
    def names(timing: TriggerTiming, level: TriggerLevel) -> list[str]:
        return [f.trigger.tgname for f in firing  # type: ignore[attr-defined]
                if f.timing == timing and f.level == level and not f.deferred]  # type: ignore[attr-defined]
    per_row = names(TriggerTiming.BEFORE, TriggerLevel.ROW) + names(TriggerTiming.INSTEAD, TriggerLevel.ROW)
    return (names(TriggerTiming.BEFORE, TriggerLevel.STATEMENT) + per_row * rows
            + names(TriggerTiming.AFTER, TriggerLevel.ROW) * rows + names(TriggerTiming.AFTER, TriggerLevel.STATEMENT))


@pytest.mark.parametrize(("sql", "event", "columns", "rows", "role", "notices"), [
    ("insert into fo (id, p) values (1, 1), (2, 2)", TriggerEvent.INSERT, None, 2, "origin",
     "a_bs b_br b_br B_upper c_ar f_always B_upper c_ar f_always z_as"),
    ("insert into fo (id) values (3)", TriggerEvent.INSERT, None, 1, "replica", "e_replica f_always"),
    ("update fo set v = v + 1", TriggerEvent.UPDATE, ["v"], 2, "origin",
     "a_bs a_br_when b_br a_br_when b_br c_ar c_ar z_as"),
    ("update fo set w = 5", TriggerEvent.UPDATE, ["w"], 2, "origin",
     "a_bs a_br_when b_br a_br_when b_br b_ar_of c_ar b_ar_of c_ar z_as"),
    ("delete from fo", TriggerEvent.DELETE, None, 2, "origin", "a_bs c_ar c_ar z_as"),
    ("truncate fo", TriggerEvent.TRUNCATE, None, 0, "origin", "z_as"),
    ("update fo_v set v = 7", TriggerEvent.UPDATE, ["v"], 2, "origin", "i_view_bs h_instead h_instead"),
], ids=["insert", "insert-replica", "update-v", "update-of-w", "delete", "truncate", "view-instead-of"])
def test_firing_triggers_order_is_the_servers(server: ScratchServer, sql: str, event: TriggerEvent,
                                              columns: list[str] | None, rows: int, role: str, notices: str) -> None:
    """The notices each trigger raises, in the order the server fires them (recorded), are the firing triggers
    expanded over the statement's rows: BEFORE STATEMENT, BEFORE/INSTEAD OF ROW per row, AFTER ROW per row at the
    end, AFTER STATEMENT; the deferred constraint trigger fires at COMMIT (never here: rolled back)."""
    conninfo = setup_case(server.conninfo(), Case("firing", "firing order", FIRING_SETUP, ()))
    table = pglast.parse_sql(sql)[0].stmt
    relation = table.relation if not hasattr(table, "relations") else table.relations[0]
    with connect(conninfo) as session:
        oid = session.query_rows("audit_table_columns", TableColumnRow, [[str(relation.relname)]])[0].table_oid
        firing = firing_triggers(session.query_rows("exec_triggers", ExecTriggerRow, [oid]), event,
                                 updated_columns=columns, replication_role=role)
    seen: list[str] = []
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.add_notice_handler(lambda diag: seen.append(str(diag.message_primary)))
        conn.execute(f"SET session_replication_role = {role}".encode())
        conn.execute(b"BEGIN")
        conn.execute(sql.encode())
        conn.execute(b"ROLLBACK")
    assert seen == notices.split()
    assert _expand(firing, rows) == seen
    assert [f.trigger.tgname for f in firing if f.deferred] == (["g_deferred"] if event == TriggerEvent.INSERT
                                                               and role == "origin" else [])
    assert all(f.conditional == (f.trigger.tgname == "a_br_when") for f in firing)


# -- the catalog read --------------------------------------------------------------------------------------------

EXEC_TRIGGERS_SETUP = """
create schema plpgsql_exec;
set search_path = plpgsql_exec;
create table ref (id int primary key);
create table t (id int primary key, a int, b int, r int references ref, u int unique deferrable initially deferred);
create function tf() returns trigger language plpgsql set search_path = plpgsql_exec, public as $$
begin
  return new;
end $$;
create trigger t_before before insert or update of b, a on t for each row when (new.a > 0) execute function tf();
create trigger t_after_stmt after insert on t referencing new table as added for each statement execute function tf();
create constraint trigger t_check after update on t deferrable initially deferred for each row execute function tf();
create trigger t_tsv before insert on t for each row
  execute function tsvector_update_trigger(a, 'pg_catalog.english', b);
"""


def test_exec_triggers_reads_the_user_triggers_without_locking_the_table(any_pg: ScratchServer) -> None:
    """On every major: the user triggers of a table, by name, with their functions; the foreign key's RI
    triggers and the deferrable unique constraint's recheck trigger left out; only catalogs locked."""
    with psycopg.connect(any_pg.conninfo(), autocommit=True) as conn:
        conn.execute(b"drop schema if exists plpgsql_exec cascade")
        conn.execute(EXEC_TRIGGERS_SETUP.encode())
    try:
        with connect(any_pg.conninfo()) as session:
            oid = session.query_rows("audit_table_columns", TableColumnRow, [["plpgsql_exec.t"]])[0].table_oid
            rows = session.query_rows("exec_triggers", ExecTriggerRow, [oid])
            version = session.facts.server_version_num
        got = [(r.tgname, r.tgtype, r.tgenabled, r.tgattr, r.tgattr_names, r.has_when, r.constraint_trigger,
                r.deferrable, r.initially_deferred, r.old_table, r.new_table, r.table_name, r.function_name,
                r.function_schema, r.language, r.proconfig, r.argument_names, r.argument_types, r.variable_conflict)
               for r in rows]
        assert got == [
            ("t_after_stmt", 4, "O", [], [], False, False, False, False, None, "added", "plpgsql_exec.t", "tf",
             "plpgsql_exec", "plpgsql", ["search_path=plpgsql_exec, public"], None, [], None),
            ("t_before", 1 | 2 | 4 | 16, "O", [3, 2], ["b", "a"], True, False, False, False, None, None,
             "plpgsql_exec.t", "tf", "plpgsql_exec", "plpgsql", ["search_path=plpgsql_exec, public"], None, [],
             None),
            ("t_check", 1 | 16, "O", [], [], False, True, True, True, None, None, "plpgsql_exec.t", "tf",
             "plpgsql_exec", "plpgsql", ["search_path=plpgsql_exec, public"], None, [], None),
            ("t_tsv", 1 | 2 | 4, "O", [], [], False, False, False, False, None, None, "plpgsql_exec.t",
             "tsvector_update_trigger", "pg_catalog", "internal", None, None, [], None),
        ]
        assert rows[1].prosrc == "\nbegin\n  return new;\nend "
        assert trigger_program(rows[1], {}).search_path == "plpgsql_exec, public"
        assert trigger_program(rows[3], {}).support == FunctionSupport.NO_LOCKS
        with psycopg.connect(any_pg.conninfo(), autocommit=True) as conn:
            conn.execute(b"BEGIN")
            conn.execute(load_sql("exec_triggers", version).encode(), [oid])
            held = conn.execute(_LOCKS).fetchall()
            conn.execute(b"ROLLBACK")
        assert held and all(int(str(rel)) < 16384 for rel, _ in held), held  # FirstNormalObjectId: catalogs only
    finally:
        with psycopg.connect(any_pg.conninfo(), autocommit=True) as conn:
            conn.execute(b"drop schema plpgsql_exec cascade")


# -- the derivation, statement by statement (literals; every statement also PREPAREd) ------------------------------

@pytest.mark.parametrize(("name", "table", "event", "expected"), [
    ("before_row_trigger", "line", TriggerEvent.INSERT, {"line_price": [
        (3, "select p.price * $1                from product p where p.id = $2",
         (("new.qty", "integer"), ("new.product_id", "integer")), ("product",))]}),
    ("after_row_audit", "item", TriggerEvent.UPDATE, {"item_audit": [
        (3, "insert into item_audit (item_id, old_qty, new_qty) values ($1, $2, $3)",
         (("new.id", "integer"), ("old.qty", "integer"), ("new.qty", "integer")), ("item_audit",))]}),
    ("statement_trigger", "hit", TriggerEvent.INSERT, {"hit_count": [
        (3, "update hit_stats set n = n + 1 where name = $1", (("tg_table_name", "name"),), ("hit_stats",))]}),
    ("dynamic_sql_trigger", "post", TriggerEvent.INSERT, {"bump": []}),
    ("kong_create_route", "routes", TriggerEvent.INSERT, {"sync_tags": [
        (4, "delete from tags where entity_name = $1", (("tg_table_name", "name"),), ("tags",)),
        (7, "delete from tags where entity_id = $1", (("old.id", "uuid"),), ("tags",)),
        (10, "insert into tags values ($1, $2, $3)\n    on conflict (entity_id) do update\n"
             "            set tags=excluded.tags",
         (("new.id", "uuid"), ("tg_table_name", "name"), ("new.tags", "text[]")), ("tags",))]}),
])
def test_census_trigger_functions(server: ScratchServer, name: str, table: str, event: TriggerEvent,
                                  expected: dict[str, list[tuple[int, str, tuple[tuple[str, str], ...],
                                                                 tuple[str, ...]]]]) -> None:
    """The census's trigger functions, derived from the catalog: the text PL/pgSQL prepares (``INTO`` blanked by
    pl_gram.y), one ``$n`` per variable typed from the table's columns and the special variables; EXECUTE is a
    note (the census: dynamic SQL is planned at every call)."""
    case = next(c for c in CASES if c.name == name)
    programs = derive_for(setup_case(server.conninfo(), case.case), table, event, None)
    got = {fn: [(s.line, s.sql, tuple((p.variable, p.type_name) for p in s.params), s.relations)
                for s in p.statements] for fn, p in programs.items()}
    assert got == expected
    assert all(s.construct == Construct.SQL for p in programs.values() for s in p.statements)
    if name == "dynamic_sql_trigger":
        assert [(n.line, n.construct) for n in programs["bump"].not_derivable] == [(3, Construct.EXECUTE)]
    assert [s.generic_from_first_call for p in programs.values() for s in p.statements] == [False] * sum(
        len(v) for v in expected.values())


CONSTRUCTS = """
declare
  v int := (select count(*) from t1);
  cc cursor (p int) for select * from t2 where id = p;
  c2 refcursor;
  r record;
begin
  select t3.v * new.qty into strict v from t3 where t3.id = new.id;
  v := (select max(id) from t4 where id < v);
  if exists (select 1 from t5 where id = new.id) then
    perform 1 from t6 where id = old.id for update;
  elsif tg_op = 'DELETE' then
    delete from t7 where id = old.id;
  end if;
  case (select count(*) from t8) when 0 then null; else null; end case;
  while exists (select 1 from t9 where id > v) loop
    exit when (select v > 3 from t10 limit 1);
    v := v + 1;
  end loop;
  for r in select * from t11 where id = new.id loop
    update t12 set v = r.v where id = r.id;
  end loop;
  foreach v in array (select array_agg(id) from t13) loop null; end loop;
  open cc(new.id);
  open c2 for select * from t14 where id = v;
  insert into t15 (id) values (new.id) returning id into v;
  merge into t16 using (select new.id as id) s on t16.id = s.id when not matched then insert (id) values (s.id);
  with w as (select id from t17) update t18 set v = 1 where id in (select id from w);
  assert (select count(*) from t19) >= 0, 'never';
  raise notice 'n %', (select count(*) from t20);
  execute 'select 1 from t21 where id = $1' using new.id;
  for r in execute 'select * from t22' loop null; end loop;
  lock table t23 in share mode;
  notify t24;
  new.id := nextval('s1');
  perform setval('Public."S2"'::regclass, 1), currval(tg_argv[0]);
  execute format('select 1 from %I', tg_argv[1]);
  return new;
end
"""
CONSTRUCTS_SETUP = ("create table src (id int primary key, qty int);\n"
                    + "".join(f"create table t{i} (id int primary key, v int);\n" for i in range(1, 24))
                    + "create sequence s1;\ncreate sequence if not exists public.\"S2\";\n")
T = Construct
CONSTRUCTS_EXPECTED = [
    (3, T.DECLARATION, "SELECT (select count(*) from t1)", (), ("t1",), ()),
    (4, T.CURSOR_DECLARATION, "select * from t2 where id = $1", (("p", "int"),), ("t2",), ()),
    (8, T.SQL, "select t3.v * $1               from t3 where t3.id = $2", (("new.qty", "integer"),
                                                                               ("new.id", "integer")), ("t3",), ()),
    (9, T.ASSIGNMENT, "SELECT  (select max(id) from t4 where id < $1)", (("v", "int"),), ("t4",), ()),
    (10, T.IF, "SELECT exists (select 1 from t5 where id = $1)", (("new.id", "integer"),), ("t5",), ()),
    (11, T.PERFORM, "SELECT 1 from t6 where id = $1 for update", (("old.id", "integer"),), ("t6",), ()),
    (13, T.SQL, "delete from t7 where id = $1", (("old.id", "integer"),), ("t7",), ()),
    (15, T.CASE, "SELECT (select count(*) from t8)", (), ("t8",), ()),
    (16, T.WHILE, "SELECT exists (select 1 from t9 where id > $1)", (("v", "int"),), ("t9",), ()),
    (17, T.EXIT, "SELECT (select $1 > 3 from t10 limit 1)", (("v", "int"),), ("t10",), ()),
    (20, T.FOR_QUERY, "select * from t11 where id = $1", (("new.id", "integer"),), ("t11",), ()),
    (21, T.SQL, "update t12 set v = $1 where id = $2", (("r.v", None), ("r.id", None)), ("t12",), ()),
    (23, T.FOREACH, "SELECT (select array_agg(id) from t13)", (), ("t13",), ()),
    (25, T.OPEN, "select * from t14 where id = $1", (("v", "int"),), ("t14",), ()),
    (26, T.SQL, "insert into t15 (id) values ($1) returning id", (("new.id", "integer"),), ("t15",), ()),
    (27, T.SQL, "merge into t16 using (select $1 as id) s on t16.id = s.id when not matched then insert (id) "
                "values (s.id)", (("new.id", "integer"),), ("t16",), ()),
    (28, T.SQL, "with w as (select id from t17) update t18 set v = 1 where id in (select id from w)", (),
     ("t17", "t18"), ()),
    (29, T.ASSERT, "SELECT (select count(*) from t19) >= 0", (), ("t19",), ()),
    (30, T.RAISE, "SELECT (select count(*) from t20)", (), ("t20",), ()),
    (31, T.EXECUTE, "select 1 from t21 where id = $1", (("new.id", "integer"),), ("t21",), ()),
    (32, T.FOR_EXECUTE, "select * from t22", (), ("t22",), ()),
    (35, T.ASSIGNMENT, "SELECT  nextval('s1')", (), (), ("s1",)),
    (36, T.PERFORM, "SELECT setval('Public.\"S2\"'::regclass, 1), currval($1[0])", (("tg_argv", "text[]"),), (),
     ('public."S2"',)),
]


def test_every_construct_that_prepares_a_plan(server: ScratchServer) -> None:
    """Each PL/pgSQL construct that prepares an SPI plan (pl_exec.c ``exec_prepare_plan`` callers), in text order:
    the SQL text PL/pgSQL prepares, its ``$n``, the relations it names, which equal the relations its PREPARE locks
    (the server's parse analysis); simple expressions (no relation) are left out; an EXECUTE of a constant string is
    a one-shot statement; dynamic SQL built at run time, a utility statement and a sequence named at run time are
    notes."""
    program = trigger_statements(CONSTRUCTS, table_type="src", table_columns={"id": "integer", "qty": "integer"})
    assert program.support == FunctionSupport.PLPGSQL
    got = [(s.line, s.construct, s.sql, tuple((p.variable, p.type_name) for p in s.params), s.relations,
            s.sequences) for s in program.statements]
    assert got == CONSTRUCTS_EXPECTED
    assert [s.line for s in program.statements if s.one_shot] == [31, 32]  # constant EXECUTEs: planned every call
    assert [(n.line, n.construct, n.relations) for n in program.not_derivable] == [
        (33, T.SQL, ("t23",)), (36, T.PERFORM, ()), (37, T.EXECUTE, ())]
    assert [c.name for c in program.function_calls if c.line in (35, 36, 37)] == [
        "nextval", "setval", "currval", "format"]
    conninfo = setup_case(server.conninfo(), Case("constructs", "constructs", CONSTRUCTS_SETUP, ()))
    for stmt in program.statements:
        locked = {name.rsplit(".", 1)[-1] for name, _ in prepare_locks(conninfo, stmt)}
        assert locked == set(stmt.relations), (stmt.line, locked)


NAMESPACE = """
<<outer_lbl>>
declare
  x int;
  y text := 'y';
  n alias for new;
begin
  perform 1 from t where a = x;
  declare
    x text;
  begin
    perform 1 from t where b = x and a = outer_lbl.x and b = y and a = f.tg_nargs and b = f.x;
  end;
  <<lb>>
  declare
    z t%rowtype;
    zz t.c%type;
    zy z%type;
    r record;
  begin
    for i in 1..3 loop
      perform 1 from t where a = i and c = z.c and d = zz and e = lb.z.c and b = r.f and t.a = zy.a;
    end loop;
  exception when others then
    insert into t (b) values (sqlstate);
  end;
  update t set c = new.c, a = n.id where b = tg_argv[1] and a = new.id and n is not null and (new).id = 1;
  return new;
end
"""
NAMESPACE_SETUP = """
create table src (id bigint, c numeric);
create table t (a int, b text, c numeric(10,2), d numeric, e numeric);
"""


def test_names_resolve_as_plpgsql_resolves_them(server: ScratchServer) -> None:
    """pl_funcs.c ``plpgsql_ns_lookup`` and pl_comp.c ``resolve_column_ref``: the innermost declaration wins, a
    block label or the function's name qualifies a variable of that level only (``f.x`` stays a column reference:
    x is the block's, not the function's), ``ALIAS`` is the same variable (one ``$n`` for ``n.id`` and ``new.id``),
    ``%ROWTYPE``/``%TYPE`` take the types of the catalog facts given (unknown without them: ``type_relations`` asks
    for them), a ``record``'s fields are unknown, ``sqlstate`` exists in an exception handler."""
    kwargs = dict(function_name="f", table_type="src", table_columns={"id": "bigint", "c": "numeric"})
    bare = trigger_statements(NAMESPACE, **kwargs)  # type: ignore[arg-type]
    assert bare.type_relations == ("t",)
    columns = {"t": {"a": "integer", "b": "text", "c": "numeric(10,2)", "d": "numeric", "e": "numeric"}}
    program = trigger_statements(NAMESPACE, relation_columns=columns, **kwargs)  # type: ignore[arg-type]
    assert program.type_relations == ()
    got = [(s.line, s.sql, tuple((p.variable, p.type_name, p.origin.name) for p in s.params))
           for s in program.statements]
    assert got == [
        (8, "SELECT 1 from t where a = $1", (("x", "int", "DECLARED"),)),
        (12, "SELECT 1 from t where b = $1 and a = $2 and b = $3 and a = $4 and b = f.x",
         (("x", "text", "DECLARED"), ("x", "int", "DECLARED"), ("y", "text", "DECLARED"),
          ("tg_nargs", "integer", "SPECIAL"))),
        (22, "SELECT 1 from t where a = $1 and c = $2 and d = $3 and e = $2 and b = $4 and t.a = $5",
         (("i", "integer", "LOOP_VARIABLE"), ("z.c", "numeric(10,2)", "RECORD_FIELD"),
          ("zz", "numeric(10,2)", "DECLARED"), ("r.f", None, "RECORD_FIELD"), ("zy.a", "integer", "RECORD_FIELD"))),
        (25, "insert into t (b) values ($1)", (("sqlstate", "text", "SPECIAL"),)),
        (27, "update t set c = $1, a = $2 where b = $3[1] and a = $2 and $4 is not null and ($4).id = 1",
         (("new.c", "numeric", "ROW_COLUMN"), ("new.id", "bigint", "ROW_COLUMN"), ("tg_argv", "text[]", "SPECIAL"),
          ("new", "src", "WHOLE_ROW"))),
    ]
    assert [s.param_types for s in bare.statements][2] == ("integer", None, None, None, None)
    conninfo = setup_case(server.conninfo(), Case("namespace", "namespace", NAMESPACE_SETUP, ()))
    for stmt in program.statements[:1] + program.statements[2:]:  # line 12's f.x is no variable: fails to PREPARE
        assert prepare_locks(conninfo, stmt) == {("namespace.t", "RowExclusiveLock" if stmt.command != "SELECT"
                                                  else "AccessShareLock")}


def test_variable_conflict_decides_names_both_a_column_and_a_variable() -> None:
    """``#variable_conflict`` (the function's) or ``plpgsql.variable_conflict``: ``use_column`` keeps a name that
    a relation of the statement has as a column (with its columns given; else a note), the default and
    ``use_variable`` take the variable (pl_comp.c ``plpgsql_pre_column_ref``, ``plpgsql_post_column_ref``)."""
    body = "declare a int; k int; begin update t set a = a + k where t.a = k; return new; end"
    columns = {"t": {"a": "integer", "b": "text"}}
    sql = {mode: trigger_statements(body, relation_columns=columns, variable_conflict=mode).statements[0].sql
           for mode in ("error", "use_variable", "use_column")}
    assert sql == {"error": "update t set a = $1 + $2 where t.a = $2",
                   "use_variable": "update t set a = $1 + $2 where t.a = $2",
                   "use_column": "update t set a = a + $1 where t.a = $1"}
    own = trigger_statements("#variable_conflict use_column\n" + body, relation_columns=columns)
    assert own.statements[0].sql == sql["use_column"]
    unknown = trigger_statements(body, variable_conflict="use_column")
    assert unknown.statements[0].sql == sql["error"] and unknown.type_relations == ("t",)
    assert {n.line for n in unknown.not_derivable} == {1}


def test_transition_tables_and_sequences() -> None:
    """A statement reading a transition table (``REFERENCING``) cannot be prepared outside the trigger: a note
    naming its relations; one reading nothing else takes no lock and is left out; ``nextval`` of a constant names a
    sequence (a qualified, quoted name as ``regclass`` reads it), of a computed name is a note."""
    body = """begin
  insert into log (id) select id from old_rows;
  perform count(*) from new_rows;
  insert into log (id) values (nextval('Audit."Seq"'));
  insert into log (id) values (nextval('log_' || tg_table_name || '_seq'));
  return null;
end"""
    program = trigger_statements(body, transition_tables=["old_rows", "new_rows"])
    assert [(s.line, s.sql, s.relations, s.sequences) for s in program.statements] == [
        (4, "insert into log (id) values (nextval('Audit.\"Seq\"'))", ("log",), ('audit."Seq"',)),
        (5, "insert into log (id) values (nextval('log_' || $1 || '_seq'))", ("log",), ())]
    assert [(n.line, n.relations) for n in program.not_derivable] == [(2, ("log",)), (5, ())]


@pytest.mark.parametrize(("language", "function", "support", "notes"), [
    ("c", "tsvector_update_trigger", FunctionSupport.NO_LOCKS, 0),
    ("internal", "suppress_redundant_updates_trigger", FunctionSupport.NO_LOCKS, 0),
    ("c", "lo_manage", FunctionSupport.OTHER, 1),
    ("plpython3u", "audit", FunctionSupport.OTHER, 1),
    ("sql", "f", FunctionSupport.SQL, 1),
])
def test_other_languages_are_not_derived(language: str, function: str, support: FunctionSupport,
                                         notes: int) -> None:
    program = trigger_statements("whatever", language=language, function_name=function)
    assert (program.language, program.support, len(program.not_derivable), program.statements) == (
        language, support, notes, ())


def test_a_body_that_does_not_compile_is_a_note() -> None:
    program = trigger_statements("begin perform from where; end")
    assert program.statements == ()
    assert [(n.line, n.construct) for n in program.not_derivable] == [(0, Construct.FUNCTION)]
    assert "does not compile" in program.not_derivable[0].reason
