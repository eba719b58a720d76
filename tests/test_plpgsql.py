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

def prepare_locks(conninfo: str, stmt: TriggerStatement) -> set[tuple[str, str]]:
    """The table locks (``schema.name``, mode) PREPARE of ``stmt`` takes, with its derived parameter types."""
    types = ", ".join(t or "unknown" for t in stmt.param_types)
    head = f"PREPARE lockscope_t({types})" if stmt.params else "PREPARE lockscope_t"
    with psycopg.connect(conninfo, autocommit=True) as conn:
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
            kwargs = dict(language=row.language, function_name=row.function_name, table_type=row.table_name,
                          table_columns=cols, transition_tables=[t for t in (row.old_table, row.new_table) if t],
                          variable_conflict=row.variable_conflict)
            program = trigger_statements(row.prosrc, **kwargs)  # type: ignore[arg-type]
            if program.type_relations:
                typed: dict[str, dict[str, str]] = {}
                for c in session.query_rows("audit_table_columns", TableColumnRow, [list(program.type_relations)]):
                    typed.setdefault(c.written, {})[c.column_name] = c.type_name
                program = trigger_statements(row.prosrc, relation_columns=typed, **kwargs)  # type: ignore[arg-type]
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
    for event in case.events:
        table, kind, columns = event_target(event.stmt.sql)
        programs = derive_for(conninfo, table, kind, columns)
        assert {fn for fn, _ in event.runs + event.dynamic} <= set(programs), (event.stmt.sql, sorted(programs))
        locks = {stmt: prepare_locks(conninfo, stmt) for p in programs.values() for stmt in p.statements}
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
        with psycopg.connect(any_pg.conninfo(), autocommit=True) as conn:
            conn.execute(b"BEGIN")
            conn.execute(load_sql("exec_triggers", version).encode(), [oid])
            held = conn.execute(_LOCKS).fetchall()
            conn.execute(b"ROLLBACK")
        assert held and all(int(str(rel)) < 16384 for rel, _ in held), held  # FirstNormalObjectId: catalogs only
    finally:
        with psycopg.connect(any_pg.conninfo(), autocommit=True) as conn:
            conn.execute(b"drop schema plpgsql_exec cascade")
