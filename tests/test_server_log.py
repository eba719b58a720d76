"""Nothing lockscope runs reaches the server log (issue 17): every command against a server whose logging is left at
PostgreSQL's defaults (``log_min_messages = warning``, ``log_min_error_statement = error``), then its log read; a
statement whose parameters the server could not type is refused before the server sees it (issue 24).

The statements carry a literal that must never be copied anywhere (``secret-literal-4242``): before, the footprint
engine's ``debug_print_rewritten`` put every probed statement's parse tree, literals included, into the log.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from lockscope.db import run_script
from lockscope.server import ScratchServer, ScratchSettings
from lockscope.statement import check_statement

from .helpers import run

DATA = Path(__file__).parent / "data"
SECRET = "secret-literal-4242"
STATEMENTS = [
    f"select * from posts where title = '{SECRET}'",
    f"select p.id, t.a from posts p join t01 t on t.id = p.author where p.title <> '{SECRET}' and t.a in "
    "(select a from t02 where b = 7)",
    f"update posts set title = '{SECRET}' where id in (select id from posts where score > 3)",
    "select * from film_list where fid < 10",
    "select * from lp where k = 'pk7'",
    f"with m as (select author from posts where body = '{SECRET}') select count(*) from t01 join m on m.author = t01.a",
]
#: Statements whose parameters the server could not type (issue 24), with PREPARE's SQLSTATE: lockscope refuses them
#: on the client, so the server never sees them and logs nothing.
UNTYPABLE = [
    ("select $1 + $2 from posts", "42725"),
    ("select count($1) from posts", "42P18"),
    ("select title from posts where $1 is null", "42P18"),
    ("select $1 from posts where id = $1", "42P08"),
    ("select array_length($1, 1) from posts", "42804"),
]
#: A trigger whose function runs statements (dispatched on TG_OP, with a dynamic EXECUTE lockscope cannot derive),
#: for the execution locks' probes.
TRIGGER_SQL = """create table film_log (id bigserial primary key, film_id int, op text, at timestamptz default now());
create function film_logged() returns trigger language plpgsql as $$
begin
  if tg_op = 'DELETE' then
    insert into film_log (film_id, op) values (old.film_id, tg_op);
  else
    insert into film_log (film_id, op) values (new.film_id, tg_op);
    perform count(*) from film_log where film_id = new.film_id;
    execute 'select 1 from film_log limit 1';
  end if;
  return null;
end $$;
create trigger film_logged after insert or update or delete on film for each row execute function film_logged();
"""
#: Statements whose execution locks (foreign-key checks, triggers, sequences, routing) are probed, and a
#: transaction of them: nothing of it may reach the log either.
WRITES = [
    f"update film set title = '{SECRET}' where film_id = 3",
    "insert into rental (rental_id, rental_date, inventory_id, customer_id, staff_id) values (99999, now(), 1, 1, "
    "1) on conflict do nothing",
    "insert into payment (payment_id, customer_id, staff_id, rental_id, amount, payment_date) values (1, 1, 1, 1, "
    "4.99, '2022-03-03 00:00:00+00')",
]
#: Lines a server writes by itself, whatever lockscope does.
_OWN_LINES = re.compile(r"checkpoint (starting|complete)|automatic (vacuum|analyze)|connection (received|authorized)"
                        r"|disconnection:")


@pytest.fixture(scope="module")
def logged_server() -> Iterator[ScratchServer]:
    with ScratchServer(None, ScratchSettings(max_locks_per_transaction=16)) as server:
        script = (DATA / "acquisition" / "schema.sql").read_text() + (DATA / "rental" / "schema.sql").read_text()
        run_script(server.conninfo(), script + "\ncreate extension pg_stat_statements;\n"
                   "insert into posts (id, author, score, title) select g, g % 10, g % 7, 'p' || g "
                   "from generate_series(100001, 100500) g;\n" + TRIGGER_SQL + "analyze;\n")
        with psycopg.connect(server.conninfo(), autocommit=True) as conn:  # a workload for audit and diagnose
            for _ in range(30):
                for sql in STATEMENTS:
                    if not sql.startswith("update"):
                        conn.execute(sql.encode())
        yield server


def test_no_command_writes_to_the_server_log(logged_server: ScratchServer, tmp_path: Path) -> None:
    dsn = logged_server.conninfo()
    log = logged_server.log_file
    start = log.stat().st_size
    runs = []
    for sql in STATEMENTS:
        runs.append(run("footprint", "--dsn", dsn, "--verbose", sql))
    runs.append(run("footprint", "--dsn", dsn, "--probe-rate", "0", "--protocol", "prepared", "--plan-cache-mode",
                    "all", "--param", SECRET, "select * from posts where title = $1"))
    runs.append(run("forecast", "--dsn", dsn, "--statement", STATEMENTS[1]))
    runs.append(run("audit", "--dsn", dsn, "--interval", "0", "--probe-rate", "0"))
    runs.append(run("forecast", "--dsn", dsn, "--interval", "0", "--probe-rate", "0"))
    runs.append(run("diagnose", "--dsn", dsn, "--duration", "2s", "--probe-rate", "0"))
    runs.append(run("watch", "--dsn", dsn, "--duration", "2s", "--no-live"))
    for sql in WRITES:
        runs.append(run("footprint", "--dsn", dsn, "--probe-rate", "0", "--verbose", sql))
    script = tmp_path / "txn.sql"
    script.write_text("begin;\n" + "".join(f"{w};\n" for w in WRITES) + "commit;\n")
    runs.append(run("footprint", "--dsn", dsn, "--probe-rate", "0", "--protocol", "prepared", "-f", str(script)))
    refused = []
    for sql, _ in UNTYPABLE:
        params = [arg for n in range(1, check_statement(sql).param_count + 1) for arg in ("--param", str(n))]
        refused.append(run("footprint", "--dsn", dsn, "--protocol", "prepared", *params, sql))
    for proc in runs:
        assert proc.returncode == 0, (proc.args, proc.stderr[-2000:])
    for proc, (_, sqlstate) in zip(refused, UNTYPABLE, strict=True):
        assert proc.returncode == 3 and f"error: {sqlstate}: " in proc.stderr, (proc.args, proc.stderr[-2000:])
    text = log.read_bytes()[start:].decode(errors="replace")
    assert "parse tree" not in text and ":constvalue" not in text and SECRET not in text
    foreign = [line for line in text.splitlines() if line.strip() and not _OWN_LINES.search(line)]
    assert foreign == [], "\n".join(foreign[:20])
