"""Issue 21: every README example runs as written. Each ``$ lockscope ...`` line of README.md's code blocks runs
(through bash, as a user pastes it) in a directory holding the files the examples name (:data:`INPUTS`), against a
scratch server standing in for the user's: ``$DSN`` and the PG* environment name it. Each must exit 0, or the code
its ``# exit N`` comment documents. None is skipped."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
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
#: The files the examples read and never write (they chain no commands: :func:`lanes`).
INPUTS = {"schema.sql", "queries.sql", "shop.sql", "checkout.sql"}
#: (command, documented exit code)
Command = tuple[str, int]
_EXIT = re.compile(r"\s+#\s*exit\s+(\d+)\s*$")


def readme_commands() -> list[Command]:
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


#: What marks a README command that runs a load (pgbench on a scratch server it starts): ``--demo`` (the README's
#: ``lockscope lab prepared`` runs no pgbench: it counts each execution's locks).
LOAD_MARKS = ("--demo",)


def lanes(commands: list[Command], inputs: set[str]) -> tuple[list[list[Command]], list[Command]]:
    """The README's commands as (chains run side by side, loads run one after another, alone).

    A command that puts no load on a server joins the chain of the last earlier command it shares a file with
    (``lockscope report incident.db`` after the ``watch`` that records it; ``inputs``, the files every example
    reads, do not chain), else it starts a chain of its own. A command with a :data:`LOAD_MARKS` mark is a load.
    """
    chains: list[list[Command]] = []
    owner: dict[str, list[Command]] = {}
    loads = []
    for command, code in commands:
        if any(mark in command for mark in LOAD_MARKS):
            loads.append((command, code))
            continue
        files = {w for w in shlex.split(command) if "." in w and not w.startswith("-") and w not in inputs}
        chain = next((owner[f] for f in files if f in owner), None)
        if chain is None:
            chain = []
            chains.append(chain)
        chain.append((command, code))
        owner.update(dict.fromkeys(files, chain))
    return chains, loads


def test_lanes_keep_the_order_that_matters() -> None:
    chains, loads = lanes(readme_commands(), INPUTS)
    assert [c for c, _ in loads] == [c for c, _ in readme_commands() if "--demo" in c]
    watch = next(chain for chain in chains if chain[0][0].startswith("lockscope watch"))
    assert [c.split()[1] for c, _ in watch] == ["watch", "report"]
    assert sum(len(chain) for chain in chains) + len(loads) == len(readme_commands())


@pytest.mark.slow
def test_readme_examples_run_as_written(tmp_path: Path, load_lock: None) -> None:
    """Every command runs as written, through bash. Those that put no load on a server (chains: :func:`lanes`) run
    side by side first; then the loads, one at a time with nothing else running, as the contended demo's
    ``--fail-on contention`` gate needs a LockManager share of 10 % (this VM gives it 10-70 %)."""
    commands = readme_commands()
    assert len(commands) >= 12
    work = tmp_path / "work"
    work.mkdir()
    (work / "schema.sql").write_text(SCHEMA_SQL)
    (work / "queries.sql").write_text(QUERIES_SQL)
    (work / "shop.sql").write_text(SHOP_SQL)
    (work / "checkout.sql").write_text(CHECKOUT_SQL)
    chains, loads = lanes(commands, INPUTS)
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

        def run_one(command: str) -> tuple[subprocess.CompletedProcess[str], float]:
            t0 = time.monotonic()
            proc = subprocess.run(["bash", "-c", command], cwd=work, env=env, capture_output=True, text=True,
                                  timeout=300, stdin=subprocess.DEVNULL)
            return proc, time.monotonic() - t0

        def run_chain(chain: list[Command]) -> list[tuple[subprocess.CompletedProcess[str], float]]:
            return [run_one(command) for command, _ in chain]

        start = time.monotonic()
        with ThreadPoolExecutor(max_workers=len(chains)) as side_by_side:
            done = dict(zip((c for chain in chains for c, _ in chain),
                            (r for results in side_by_side.map(run_chain, chains) for r in results), strict=True))
        done.update((command, run_one(command)) for command, _ in loads)
        elapsed = time.monotonic() - start
    failures = []
    for command, code in commands:
        proc, took = done[command]
        print(f"{took:5.1f} s  exit {proc.returncode}  {command}")
        if proc.returncode != code:
            failures.append(f"{command}: exit {proc.returncode}, documented {code}\n{proc.stderr[-4000:]}")
    assert not failures, "\n\n".join(failures)
    assert elapsed < 240, elapsed  # the issue's budget is about two minutes
    assert (work / "incident.html").exists() and (work / "compare-mlpt").is_dir()
