"""Issue 25: audit and forecast see transactions.

- ``audit --scratch --setup --workload``: the workload script's transactions measured on the scratch server (run for
  real, rolled back, and by EXPLAIN only): a five-lookup transaction whose statements fit the fast path alone and
  spill together (max_locks_per_transaction 16), and the seg_link INSERT whose foreign-key check's generic plan
  (built at the 6th call) locks every partition of the LIST-partitioned referenced table;
- ``audit --dsn`` (pg_stat_statements only): the caveat that a transaction may hold more than its statements, and
  the pg_locks snapshots' evidence of a backend holding its transaction's locks;
- ``forecast --workload``: a transaction is one class whose main-table locks are the transaction footprint's, where
  the same statements as separate transactions put none in the main lock table.

The executed counts are literals; they are the ones ``tests/test_txn_truth.py`` holds against the oracle on every
major (``five_lookups``: held/main 7/0, 14/0, 21/5, 28/12, 35/19; ``fk_list_partitioned``: 6 relations, 84 at
execution 6 of which 69 in the main lock table at 16 slots), and each is checked here against the server's own run
(the executed truth the command reports, ``executed.execute_scripts``).
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest

from lockscope.db import connect, run_script
from lockscope.executed import execute_scripts
from lockscope.script import read_script
from lockscope.server import ScratchServer, ScratchSettings
from lockscope.transaction import measure_transaction

from .helpers import run
from .servers import ServerPool
from .txn_oracle import CORPUS_DIR

#: The five tables of the five-lookup case (7 relations each: the table, its primary key, 5 indexes).
LOOKUPS_SQL = (CORPUS_DIR / "five_lookups.sql").read_text().split("-- transaction", 1)[0]
#: The seg_link shape of issue 25: tenant_seg LIST-partitioned in 40, seg_link referencing it.
TENANT_SEG_SQL = (CORPUS_DIR / "tenant_seg.ddl").read_text()
LOOKUPS = "".join(f"select a from look{t} where id = :id;\n" for t in range(1, 6))
TRANSACTION = f"\\set id random(1, 500)\nbegin;\n{LOOKUPS}commit;\n"
SEPARATE = f"\\set id random(1, 500)\n{LOOKUPS}"
SEG_LINK = "\\set t 7\n\\set s 47\ninsert into seg_link (tenant, seg_id) values (:t, :s);\n"
MLPT16 = ScratchSettings(max_locks_per_transaction=16)


@pytest.fixture(scope="module")
def lookups16(server_pool: ServerPool) -> ScratchServer:
    """A PG 18 server (max_locks_per_transaction 16: one group of 16 fast-path slots) with the five lookup tables
    and pg_stat_statements, standing for a user's server."""
    def setup(server: ScratchServer) -> None:
        run_script(server.conninfo(), LOOKUPS_SQL + "; analyze; create extension if not exists pg_stat_statements")

    return server_pool.get(None, "txn_lookups", MLPT16, setup)


def _finding(doc: dict[str, Any], kind: str) -> dict[str, Any]:
    found = [f for f in doc["findings"] if f["kind"] == kind]
    assert len(found) == 1, [f["kind"] for f in doc["findings"]]
    return dict(found[0])


def test_scratch_audit_measures_the_workload_transactions(tmp_path: Path, load_lock: None) -> None:
    """``audit --scratch --workload``: pgbench runs the script (2 clients) on the scratch server, a load."""
    (tmp_path / "schema.sql").write_text(LOOKUPS_SQL + ";\n" + TENANT_SEG_SQL)
    (tmp_path / "workload.pgbench").write_text(TRANSACTION + SEG_LINK)
    proc = run("audit", "--scratch", "--setup", str(tmp_path / "schema.sql"), "--mlpt", "16", "--workload",
               str(tmp_path / "workload.pgbench"), "--interval", "2s", "--json", "-", "--sql",
               str(tmp_path / "fixes.sql"), "--fail-on", "medium")
    assert proc.returncode == 6, proc.stderr
    doc = json.loads(proc.stdout)
    txns = doc["transactions"]
    assert txns["measured"] and txns["caveat"] is None
    lookups, seg = txns["items"]
    # the executed truth, statement by statement (the server's pg_lock_status() after each statement)
    first = lookups["executed"]["executions"][0]
    assert [(s["held_after"], s["main_after"]) for s in first["statements"]] == [
        (7, 0), (14, 0), (21, 5), (28, 12), (35, 19)]
    assert (first["locks"], first["main_table"], first["first_spill"]) == (35, 19, 3)
    # prepared (as pgbench -M prepared runs it): executions 1-6 plan, 7-8 reuse the cached generic plans
    assert [e["main_table"] for e in lookups["executed"]["executions"]] == [19] * 6 + [0, 0]
    assert [e["main_table"] for e in lookups["executions"]] == [19] * 6 + [0, 0]  # the EXPLAIN-only model agrees
    assert lookups["transactions_per_s"] > 0
    spill = _finding(doc, "transaction-spill")
    assert spill["severity"] == "medium" and spill["subject"] == "transaction at line 2"
    assert spill["title"] == ("the transaction of these 5 statements holds 35 locks, 19 in the main lock table, "
                              "from statement 3 on; each statement fits the fast path alone")
    assert "held/main after each statement 7/0, 14/0, 21/5, 28/12, 35/19" in spill["evidence"]
    assert "executions 1-6 of 8 spill" in spill["evidence"]
    assert spill["fix"].startswith("fewer statements per transaction (it spills from statement 3: commit before it)")
    assert "30 of its 35 locks are indexes" in spill["fix"] and "max_locks_per_transaction = " in spill["fix"]
    # the seg_link INSERT: its foreign-key check's generic plan at the 6th call (ri_triggers.c, plancache.c)
    seg_runs = seg["executed"]["executions"]
    assert [e["locks"] for e in seg_runs[:6]] == [6, 6, 6, 6, 6, 84] and seg_runs[5]["main_table"] == 69
    assert seg["executions"][5]["statements"][0]["query_phases"] == [
        {"query": "seg_link_tenant_seg_id_fkey check", "phase": "generic-build"}]
    fk = _finding(doc, "fk-generic-plan")
    assert fk["severity"] == "medium" and fk["subject"] == "transaction at line 11, statement 1"
    assert fk["title"] == ("insert into seg_link (tenant, seg_id) values ($1, $2): the seg_link_tenant_seg_id_fkey "
                           "check's generic plan (execution 6) puts 69 locks in the main lock table; the "
                           "transaction holds 84, 69 main")
    assert "main-table locks it adds per execution 1..8: 0, 0, 0, 0, 0, 69" in fk["evidence"]
    assert "its EXPLAIN takes 1 (none in the main lock table)" in fk["evidence"]
    assert fk["fix"].startswith("plan_cache_mode = force_custom_plan for the application's role")
    assert "SET plan_cache_mode = force_custom_plan;" in (tmp_path / "fixes.sql").read_text()
    assert not [f for f in doc["findings"] if f["kind"] == "execution-locks"]  # the FK case is named as such


def test_live_audit_says_a_transaction_may_hold_more_and_shows_it(lookups16: ScratchServer) -> None:
    """pg_stat_statements alone: the caveat in the report and the JSON; a backend holding four lookups' locks while
    its fifth statement runs is caught by the pg_locks snapshots and reported."""
    conninfo = lookups16.conninfo()
    with psycopg.connect(conninfo, autocommit=True) as c:
        c.execute("select pg_stat_statements_reset()")
        c.execute("select a, pg_sleep(0) from look5 where id = 50")  # known to pg_stat_statements
    started = threading.Event()

    def hold() -> None:
        with psycopg.connect(conninfo) as c:  # one transaction: the lookups' locks are held to its end
            for t in range(1, 5):
                c.execute(f"select a from look{t} where id = 10")
            started.set()
            c.execute("select a, pg_sleep(8) from look5 where id = 50")
            c.rollback()

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert started.wait(10)
        time.sleep(0.5)
        proc = run("audit", "--dsn", conninfo, "--interval", "2s", "--probe-rate", "0", "--json", "-")
    finally:
        holder.join()
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    txns = doc["transactions"]
    assert not txns["measured"] and txns["caveat"].startswith("a transaction may hold more than its statements")
    assert txns["caveat"] in doc["notes"]
    held = txns["held"]
    assert held["most_main_table"] == 19 and held["snapshots"] >= 1
    sleeper = held["statements"][0]
    assert "pg_sleep" in sleeper["query"]
    assert (sleeper["held_locks"], sleeper["held_main_table"]) == (35, 19)  # look1..look5 and their indexes
    assert (sleeper["footprint_locks"], sleeper["footprint_main_table"]) == (7, 0)
    finding = _finding(doc, "transaction-held")
    assert finding["title"] == ("transactions on this server hold up to 19 main-table locks (their statements' own "
                                "plans: at most 0)")


def test_forecast_a_transaction_is_one_class_holding_the_transaction_footprint(lookups16: ScratchServer,
                                                                              tmp_path: Path) -> None:
    """forecast --workload: the transaction's class has the transaction footprint's main-table locks (19, per lock
    partition as the footprint has them, checked against the server's own run), the same statements as separate
    transactions none; pg_stat_statements alone says a transaction may hold more."""
    conninfo = lookups16.conninfo()
    (tmp_path / "txn.pgbench").write_text(TRANSACTION)
    (tmp_path / "separate.pgbench").write_text(SEPARATE)
    common = ("--dsn", conninfo, "--cores", "2", "--clients", "4", "--probe-rate", "0", "--json", "-")
    together = run("forecast", "--workload", str(tmp_path / "txn.pgbench"), *common)
    assert together.returncode == 0, together.stderr
    apart = run("forecast", "--workload", str(tmp_path / "separate.pgbench"), *common)
    assert apart.returncode == 0, apart.stderr
    scripts = [read_script(TRANSACTION, execution=k) for k in range(1, 9)]
    with connect(conninfo) as session:
        model = measure_transaction(session, [s.transactions[0] for s in scripts], executions=8)
    truth = execute_scripts(conninfo, scripts, executions=8)[0]
    steady = model.executions[-1]
    assert (steady.lock_count, steady.main_table_count) == (35, 19)
    assert (truth.executions[-1].lock_count, truth.executions[-1].main_table_count) == (35, 19)
    doc = json.loads(together.stdout)
    assert doc["mode"] == "script"
    (cls,) = doc["measured"]["statements"]
    assert (cls["name"], cls["relation_locks"], cls["main_table_locks"]) == ("transaction at line 2", 35, 19)
    assert cls["partition_load"] == list(steady.partition_load) == list(truth.executions[-1].partition_load)
    assert doc["measured"]["main_table_locks_per_transaction"] == 19
    separate = json.loads(apart.stdout)["measured"]
    assert [(s["relation_locks"], s["main_table_locks"]) for s in separate["statements"]] == [(7, 0)] * 5
    assert separate["main_table_locks_per_transaction"] == 0
    # the same statements from pg_stat_statements: each its own transaction, and the caveat says so
    with psycopg.connect(conninfo, autocommit=True) as c:
        for t in range(1, 6):
            c.execute(f"select a from look{t} where id = 10")
    stats = run("forecast", "--dsn", conninfo, "--interval", "0", "--probe-rate", "0", "--json", "-")
    assert stats.returncode == 0, stats.stderr
    notes = json.loads(stats.stdout)["notes"]
    assert any(n.startswith("a transaction may hold more than its statements") and "--workload FILE" in n
               for n in notes), notes
