"""Issue 21: every README example runs as written. Each ``$ lockscope ...`` line of README.md's code blocks runs
(through bash, as a user pastes it) in a directory holding the ``schema.sql`` and ``queries.sql`` the examples
name, against a scratch server standing in for the user's: ``$DSN`` and the PG* environment name it. Each must
exit 0, or the code its ``# exit N`` comment documents. None is skipped."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from psycopg.conninfo import conninfo_to_dict

from lockscope.db import run_script
from lockscope.server import ScratchServer, ScratchSettings

from .conftest import DEMO_SCHEMA

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"

#: The files the README's CI examples name: a table with 18 indexes (19 planner locks: 3 over 16 slots) and a
#: migration's queries, which are also a valid pgbench script.
SCHEMA_SQL = """create table orders (id bigint primary key, customer_id bigint not null, status text not null,
                     created_at timestamptz not null default now());
create index orders_customer on orders (customer_id);
create index orders_status on orders (status);
create index orders_created on orders (created_at);
""" + "".join(f"create index orders_x{i} on orders (customer_id, id) where id > {i};\n" for i in range(1, 15))
QUERIES_SQL = """select * from orders where id = 42;
select count(*) from orders where customer_id = 7 and status = 'open';
update orders set status = 'shipped' where id = 42;
"""
#: The transaction example's files: a shop's schema (the orders table's 18 indexes, order lines with a foreign key
#: to it) and a checkout transaction (tests/data/txn/model/checkout.sql holds the same shape against the oracle).
SHOP_SQL = SCHEMA_SQL + """create table customers (id bigint primary key, name text);
insert into customers select g, 'c' || g from generate_series(1, 100) g;
create table order_lines (id bigserial primary key, order_id bigint not null references orders (id), qty int);
create index on order_lines (order_id);
"""
CHECKOUT_SQL = """BEGIN;
select * from customers where id = 7;
insert into orders (id, customer_id, status) values (42, 7, 'open');
insert into order_lines (order_id, qty) values (42, 3);
update orders set status = 'paid' where id = 42;
COMMIT;
"""
_EXIT = re.compile(r"\s+#\s*exit\s+(\d+)\s*$")


def readme_commands() -> list[tuple[str, int]]:
    """(command, documented exit code) of every ``$ lockscope`` line in a code block (indented or fenced)."""
    out = []
    fenced = False
    for line in README.read_text().splitlines():
        if line.strip().startswith("```"):
            fenced = not fenced
            continue
        if not (fenced or line.startswith("    ")):
            continue
        text = line.strip()
        if not text.startswith("$ lockscope"):
            continue
        command = text[2:]
        code = 0
        match = _EXIT.search(command)
        if match:
            code = int(match.group(1))
            command = command[: match.start()]
        else:
            command = re.sub(r"\s+#.*$", "", command)
        out.append((command, code))
    return out


def test_readme_has_the_examples_the_issue_asks_for() -> None:
    commands = [c for c, _ in readme_commands()]
    for start in ("lockscope diagnose", "lockscope footprint --scratch", "lockscope audit --scratch",
                  "lockscope forecast", "lockscope demo", "lockscope lab prepared", "lockscope watch"):
        assert any(c.startswith(start) for c in commands), start
    head = README.read_text().split("\n## ", 3)
    assert head[1].startswith("Which command when") and head[2].startswith("Set-up")
    # the first screen's copy-paste lines are the examples run below, word for word
    table = re.findall(r"`(lockscope [^`]+)`", head[1])
    assert len(table) == 5 and set(table) <= set(commands), set(table) - set(commands)


@pytest.mark.slow
def test_readme_examples_run_as_written(tmp_path: Path, load_lock: None) -> None:
    commands = readme_commands()
    assert len(commands) >= 12
    work = tmp_path / "work"
    work.mkdir()
    (work / "schema.sql").write_text(SCHEMA_SQL)
    (work / "queries.sql").write_text(QUERIES_SQL)
    (work / "shop.sql").write_text(SHOP_SQL)
    (work / "checkout.sql").write_text(CHECKOUT_SQL)
    with ScratchServer(None, ScratchSettings(max_locks_per_transaction=64)) as server:
        # the server stands for the user's: its schema and a workload pg_stat_statements has seen
        run_script(server.conninfo(), DEMO_SCHEMA + "create extension if not exists pg_stat_statements;"
                   + "select pg_stat_statements_reset();"
                   + "select * from acct where id = 7; select count(*) from events where event_id = 3;" * 20)
        params = conninfo_to_dict(server.conninfo())
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
        env.update(DSN=server.conninfo(), PGHOST=str(params["host"]), PGPORT=str(params["port"]),
                   PGUSER=str(params["user"]), PGDATABASE="postgres",
                   PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
        failures = []
        start = time.monotonic()
        for command, code in commands:
            t0 = time.monotonic()
            proc = subprocess.run(["bash", "-c", command], cwd=work, env=env, capture_output=True, text=True,
                                  timeout=300, stdin=subprocess.DEVNULL)
            took = time.monotonic() - t0
            print(f"{took:5.1f} s  exit {proc.returncode}  {command}")
            if proc.returncode != code:
                failures.append(f"{command}: exit {proc.returncode}, documented {code}\n{proc.stderr[-4000:]}")
        elapsed = time.monotonic() - start
    assert not failures, "\n\n".join(failures)
    assert elapsed < 240, elapsed  # the issue's budget is about two minutes
    assert (work / "incident.html").exists() and (work / "compare-mlpt").is_dir()
