"""``lockscope diagnose`` on real servers: an idle one (nothing wrong, with the numbers), the contended demo load
(pgbench_accounts' spilled indexes named, the fix ranked), and the same load after its max_locks_per_transaction
advice (the LockManager share gone), a transactional load of five lookups on Kong Gateway's tables (the
main-lock-table rate the server holds, not the statements' footprints), plus the refusals before any work."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from lockscope.db import run_script
from lockscope.demo_load import DEMO_INDEX_PREFIX
from lockscope.pgbench import PgbenchRun, start_pgbench
from lockscope.server import ScratchServer, ScratchSettings

from .fix_versions import bin_dir_of
from .helpers import check_report, one_line_error, run
from .txn_oracle import CORPUS_DIR, Stmt, run_transaction

IDLE_SCHEMA = """
create extension if not exists pg_stat_statements;
create table item (id int primary key, name text not null);
create index on item (name);
insert into item select g, 'n' || g from generate_series(1, 1000) g;
analyze item;
select name from item where id = 7;
"""


def test_idle_server_reports_nothing_wrong(scratch_base: Path, tmp_path: Path) -> None:
    """An idle PG 18 with pg_stat_statements: no active session, no LockManager sample, 0 main-lock-table
    acquisitions/s; the verdict says so with the numbers; no culprit, no fix; exit 0; JSON and first line."""
    out = tmp_path / "idle.json"
    with ScratchServer(settings=ScratchSettings(), base_dir=scratch_base) as server:
        run_script(server.conninfo(), IDLE_SCHEMA)
        proc = run("diagnose", "--dsn", server.conninfo(), "--duration", "2s", "--hz", "20", "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    first = proc.stdout.splitlines()[0]
    assert first.startswith("lockscope diagnose: PostgreSQL 18.") and first.endswith("(from --dsn)")
    doc = json.loads(out.read_text())
    assert doc["schema"] == "lockscope/diagnose/v2" and doc["status"] == "healthy"
    assert doc["watch"]["lockmanager_samples"] == 0 and doc["watch"]["lockmanager_share"] == 0.0
    assert doc["watch"]["ticks"] >= 20
    assert doc["main_lock_table_per_s"] == 0.0 and doc["partition_per_s"] == [0.0] * 16
    assert doc["culprits"] == [] and doc["fixes"] == [] and doc["spilled_relations"] == []
    assert doc["statements_measured"] >= 1
    assert doc["verdict"].startswith("Nothing wrong: 0.0% of active-session samples wait on LWLock:LockManager")
    assert f"none of the {doc['statements_measured']} audited statements spills" in doc["verdict"]
    assert proc.stdout.rstrip().splitlines()[-2:] == [doc["verdict"], f"wrote {out}"]
    # a server named by --dsn: pg_locks reads paced at 2/s, one per probed execution, said last on stderr
    cost = doc["probe_cost"]
    assert cost["probe_rate_hz"] == 2.0 and cost["pg_locks_reads"] >= doc["statements_measured"]
    assert cost["probing_s"] >= (cost["pg_locks_reads"] - 1) / 2.0
    said = re.fullmatch(r"lockscope diagnose: pg_locks reads: (\d+) in ([\d.]+) s of probing, (\d+) ms inside "
                        r"pg_locks \(paced at 2/s\)", proc.stderr.strip().splitlines()[-1])
    assert said is not None, proc.stderr
    # the text rounds the seconds once, the JSON to 3 decimals (2.5501 s: "2.6" and 2.55)
    assert int(said[1]) == cost["pg_locks_reads"] and abs(float(said[2]) - cost["probing_s"]) <= 0.051
    assert abs(int(said[3]) - cost["pg_locks_ms"]) <= 0.51


#: The fixed demo's diagnosis (s): its LockManager share is none, its main-lock-table rate 0 (the first run's 6 s).
FIXED_DURATION = "3s"


@pytest.mark.slow
def test_contended_demo_then_its_fix(tmp_path: Path, load_lock: None) -> None:
    """`lockscope diagnose --demo` (embedded PG 18, pgbench -S -c16, 100 extra indexes, mlpt 16): most active
    sessions wait on LockManager; the one statement on pgbench_accounts spills 86 of its 102 locks (16 fast-path
    slots) over the 16 lock partitions; the fixes are the smallest droppable index set (86 duplicates, no restart)
    and max_locks_per_transaction = 128, both to 0 main-lock-table acquisitions/s for it. Run again with the
    suggested setting (a scratch server started with it): the LockManager share is gone. Both measured here."""
    first, html = tmp_path / "before.json", tmp_path / "before.html"
    proc = run("diagnose", "--demo", "--duration", "6s", "--json", str(first), "--html", str(html))
    assert proc.returncode == 0, proc.stderr
    a = json.loads(first.read_text())
    assert a["server"]["max_locks_per_transaction"] == 16 and a["server"]["fast_path_slots"] == 16
    # a share no healthy server shows (a VM gives 0.1-0.7 for the demo load, with the machine's other work; the
    # second run below, fixed, shows none)
    assert a["status"] == "contention" and a["watch"]["lockmanager_share"] >= 0.1, a["watch"]
    top = a["culprits"][0]
    assert "pgbench_accounts" in top["text"] and top["tables"] == ["public.pgbench_accounts"]
    assert top["lockmanager_fraction"] >= 0.9
    phases = {p["phase"]: p for p in top["phases"]}
    assert (phases["custom"]["locks"], phases["custom"]["spilled"]) == (102, 86)
    assert len(top["spilled_locks"]) == 86 and sum(top["partition_load"]) == 86
    assert {lk["role"] for lk in top["spilled_locks"]} == {"index"}
    assert all(lk["relation"].startswith(f"public.{DEMO_INDEX_PREFIX}_") for lk in top["spilled_locks"])
    assert sorted(set(phases["custom"]["lock_partitions"])) == list(range(16))
    assert top["main_lock_table_per_s"] == pytest.approx(top["calls_per_s"] * 86)
    # the server's figure on 18 is an estimate from pg_locks snapshots, with its interval; every call plans its 86
    # main-table locks (issue 40: the snapshots catch most of them mid-planning)
    rate = a["main_lock_table"]
    assert rate["kind"] == "estimate" and rate["low_per_s"] <= rate["server_per_s"] <= rate["high_per_s"], rate
    assert 0.75 <= rate["server_per_s"] / (86 * rate["transactions_per_s"]) <= 1.25, rate
    kinds = [f["kind"] for f in a["fixes"]]
    assert kinds == ["drop-indexes", "max-locks-per-transaction"], kinds
    drop, mlpt_fix = a["fixes"]
    assert drop["title"] == "drop 86 duplicate indexes on public.pgbench_accounts" and not drop["restart"]
    assert drop["culprit_spills_after"][0] == 0 and drop["main_lock_table_per_s_after"] < 1.0
    assert mlpt_fix["restart"] and mlpt_fix["culprit_spills_after"][0] == 0
    mlpt = int(mlpt_fix["title"].split("= ")[1].split(" ")[0])
    assert mlpt == 128
    verdict = a["verdict"]
    assert "1 statement on public.pgbench_accounts spills 86 locks per call" in verdict
    assert "drop these 86 duplicate indexes" in verdict and f"max_locks_per_transaction = {mlpt} (restart)" in verdict
    assert verdict in proc.stdout.splitlines()
    # the forecast starts from the point it measured: the demo's 16 pgbench connections, its calls/s (within
    # 25 % or re-anchored), then the fix's effect at the same population
    fc = a["forecast"]
    now = fc["model_vs_now"]
    assert now["population"] == fc["clients"] == 16
    assert now["measured_calls_per_s"] == pytest.approx(top["calls_per_s"], rel=0.01)
    assert abs(now["anchored_calls_per_s"] / now["measured_calls_per_s"] - 1) <= 0.25
    # the fix (86 fewer indexes to plan and lock) costs less CPU per call; the modelled LockManager share, a few
    # per cent at most once wall time is deflated to CPU (issue 27), does not grow
    after, before = fc["after_first_fix"], fc["before"]
    assert after["cpu_per_transaction_us"] < before["cpu_per_transaction_us"]
    assert after["lockmanager_share"] <= before["lockmanager_share"]
    assert "model vs now at 16 connections: " in proc.stdout  # a line of the header panel
    # the model's LockManager share is a forecast only within 10 points of the sampled one (issue 27)
    # ... and only where the sampled share is known to within 10 points itself (its 95 % interval over the
    # seconds sampled; the demo's share is bursty)
    sampled = now["measured_lockmanager_share_95"]
    assert sampled is not None and sampled["batches"] >= 4
    assert sampled["low"] <= now["measured_lockmanager_share"] <= sampled["high"]
    assert a["watch"]["lockmanager_share_95"] == sampled  # the watch's samples are the live point's
    # a status the seconds sampled cannot decide is said to be so (contention from a 10 % share)
    undecided = sampled["low"] < 0.10 <= sampled["high"]
    assert any("from which the status is contention" in n for n in a["notes"]) is undecided
    reproduced = (abs(now["model_lockmanager_share"] - now["measured_lockmanager_share"]) <= 0.10
                  and sampled["half_width"] <= 0.10)
    assert now["lockmanager_reproduced"] is reproduced
    assert any("are not printed as a forecast" in n for n in a["notes"]) is not reproduced
    check_report(html, tmp_path, min_svgs=4)

    second = tmp_path / "after.json"
    proc = run("diagnose", "--demo", "--duration", FIXED_DURATION, "--mlpt", str(mlpt), "--json", str(second))
    assert proc.returncode == 0, proc.stderr
    b = json.loads(second.read_text())
    assert b["server"]["max_locks_per_transaction"] == mlpt
    assert b["status"] == "healthy" and b["verdict"].startswith("Nothing wrong: "), b["verdict"]
    assert b["watch"]["lockmanager_share"] <= a["watch"]["lockmanager_share"] / 5, (a["watch"], b["watch"])
    assert all(c["spilled_per_call"] == 0 for c in b["culprits"])
    assert b["main_lock_table_per_s"] < 1.0 and b["fixes"] == []


def test_refusals_before_any_work(tmp_path: Path) -> None:
    """Bad input is one line, exit 2, before a server is started or contacted."""
    cases = [
        (("--dsn", "host=/nonexistent", "--mlpt", "64"), "--mlpt applies to a scratch server only"),
        (("--dsn", "host=/nonexistent", "--demo-indexes", "5"), "--demo-indexes applies to a scratch server only"),
        (("--duration", "0s"), "duration must be positive"),
        (("--mlpt", "5"), "max_locks_per_transaction is at least 10"),
        (("--hz", "500"), "sampling rate must be between 1 and 100 Hz"),
        (("--html", str(tmp_path / "missing" / "d.html")), "no such directory"),
    ]
    for args, message in cases:
        proc = run("diagnose", *args)
        assert proc.returncode == 2, (args, proc.stderr)
        assert message in one_line_error(proc), (args, proc.stderr)


#: The longest a transactional load runs (s): it ends when its test's measurements are over (``_load``), this
#: only bounds a stuck one.
LOAD_BOUND_S = 120
#: From pgbench's start to the measurement (s): its 16 connections made and running (as the fixed load before).
LOAD_SETTLE_S = 1.5


@contextmanager
def _load(server: ScratchServer, tmp_path: Path, script: str) -> Iterator[PgbenchRun]:
    """pgbench runs ``script`` (16 clients, simple protocol) on ``server`` until the block ends (it is then
    stopped), the block starting :data:`LOAD_SETTLE_S` in."""
    path = tmp_path / "load.sql"
    path.write_text(script)
    path.chmod(0o644)
    with start_pgbench(server, clients=16, duration_s=LOAD_BOUND_S, select_only=False,
                       extra_args=["-f", str(path)]) as load:
        time.sleep(LOAD_SETTLE_S)
        assert load.running, load.wait(0)  # pgbench's own error, raised
        yield load


#: Five lookups by key on five of Kong Gateway's tables (tests/data/txn/kong_schema.ddl: 6, 6, 10, 7 and 4
#: relations when planned, each within the 16 fast-path slots alone), as one transaction. ``{r}``/``{s}``: a route
#: (1..800) and a service (1..200) of the corpus data.
KONG_LOOKUPS = (
    "select * from routes where id = ('00000000-0000-4000-9000-' || lpad(({r})::text, 12, '0'))::uuid",
    "select * from services where id = ('00000000-0000-4000-8000-' || lpad(({s})::text, 12, '0'))::uuid",
    "select * from plugins where id = ('00000000-0000-4000-a000-' || lpad(({r})::text, 12, '0'))::uuid",
    "select * from consumers where id = ('00000000-0000-4000-b000-' || lpad(({s})::text, 12, '0'))::uuid",
    "select * from tags where entity_id = ('00000000-0000-4000-9000-' || lpad(({r})::text, 12, '0'))::uuid",
)
#: The five lookups as one transaction, for pgbench: a route and a service drawn at random each time.
KONG_SCRIPT = ("\\set r random(1, 800)\n\\set s random(1, 200)\nBEGIN;\n"
               + ";\n".join(q.format(r=":r", s=":s") for q in KONG_LOOKUPS) + ";\nCOMMIT;\n")


@pytest.mark.slow
@pytest.mark.parametrize("major", [18, 19])
def test_transactions_of_real_lookups(major: int, scratch_base: Path, tmp_path: Path, load_lock: None) -> None:
    """pgbench runs BEGIN, the five Kong lookups, COMMIT (16 clients, simple protocol, mlpt 16) on a scratch server;
    `lockscope diagnose --dsn` watches it. Each lookup fits the fast path alone (the model: 0/s), the transaction
    does not: the oracle (the same transaction on one connection, pg_lock_status after it, a warm execution) holds
    17 main-table locks. The server's figure diagnose reports is within 25 % of that x the database's
    transactions/s (PG 18: pg_locks snapshots; PG 19: pg_stat_lock.fastpath_exceeded, whose own count per warm
    transaction the oracle reads too, and the snapshots' held figure within 25 % of it); the verdict names the
    transaction, the note says why the model misses it, the fixes are the transaction's. Then `lockscope watch
    --locks-every 1s` on the same load: its held figure within 25 % of the oracle's x its transactions/s."""
    with ScratchServer(bin_dir_of(major), ScratchSettings(max_locks_per_transaction=16),
                       base_dir=scratch_base) as server:
        run_script(server.conninfo(), "create extension if not exists pg_stat_statements;\n"
                   + (CORPUS_DIR / "kong_schema.ddl").read_text() + "\nanalyze;")
        truth = run_transaction(server.conninfo(), [Stmt(q.format(r=7, s=3)) for q in KONG_LOOKUPS], executions=8)
        warm = truth.runs[-1]
        held = warm.final.main_table_count
        assert (len(warm.final.locks), held) == (33, 17)  # the server's answer, stated: 33 relation locks, 17 spill
        per_txn = float(warm.fastpath_exceeded) if warm.fastpath_exceeded is not None else float(held)
        with _load(server, tmp_path, KONG_SCRIPT) as load:
            out, html = tmp_path / "txn.json", tmp_path / "txn.html"
            proc = run("diagnose", "--dsn", server.conninfo(), "--duration", "4s", "--json", str(out), "--html",
                       str(html))
            watched = tmp_path / "watch.json"
            watch = run("watch", "--dsn", server.conninfo(), "--duration", "4s", "--locks-every", "1s", "--json",
                        str(watched))
            loaded = load.running
    assert proc.returncode == 0, proc.stderr
    assert watch.returncode == 0, watch.stderr
    assert loaded, "pgbench ended before the measurements did"
    doc = json.loads(out.read_text())
    rate = doc["main_lock_table"]
    tps = rate["transactions_per_s"]
    assert tps is not None and tps > 0 and rate["model_per_s"] == 0.0, rate
    assert rate["basis"] == ("pg_stat_lock.fastpath_exceeded" if major >= 19 else
                             "pg_locks snapshots: held main-table locks per transaction x transactions/s"), rate
    assert doc["main_lock_table_per_s"] == rate["server_per_s"]
    assert 0.75 <= rate["server_per_s"] / (per_txn * tps) <= 1.25, (rate, per_txn)
    assert 0.75 <= rate["held_per_s"] / (held * tps) <= 1.25, (rate, held)
    txn = doc["transactions"][0]
    tables = ["routes", "services", "plugins", "consumers", "tags"]
    assert [re.search(r"from (\w+) where", s["text"]).group(1) for s in txn["statements"]] == tables  # type: ignore[union-attr]
    assert all(s["spilled_alone"] == 0.0 for s in txn["statements"]) and txn["relations"] == 33
    assert txn["transactions_per_s_basis"] == "calls of its last statement"
    assert 0.75 <= txn["transactions_per_s"] / tps <= 1.25, (txn, tps)
    assert "its 5 statements fill the fast path together" in txn["cause"]
    assert "fill the fast path together" in rate["model_vs_server"]
    named = re.search(r"transactions of these 5 statements \(on public\.routes, public\.services, public\.plugins "
                      r"and 2 more\) hold (\d+) main-table locks each", doc["verdict"])
    assert named is not None and abs(int(named.group(1)) - held) <= 0.25 * held, doc["verdict"]
    kinds = {f["kind"]: f for f in doc["fixes"]}
    assert {"fewer-statements", "max-locks-per-transaction"} <= set(kinds), doc["fixes"]
    assert all(kinds[k]["basis"] == "server" and kinds[k]["transaction"] == 0 for k in
               ("fewer-statements", "max-locks-per-transaction"))
    mlpt = kinds["max-locks-per-transaction"]
    # what is left: the server's figure less the transaction's held rate (PG 19: the counter's own difference)
    assert mlpt["restart"] and mlpt["main_lock_table_per_s_after"] <= 0.25 * mlpt["main_lock_table_per_s_before"]
    assert doc["status"] in ("risk", "contention")
    page = html.read_text()
    assert "Transactions holding main-table locks (" in page and "fill the fast path together" in page
    if major == 18:
        check_report(html, tmp_path, min_svgs=3)
    w = json.loads(watched.read_text())["main_lock_table"]
    assert w["snapshots"] >= 3 and w["transactions_per_s"] > 0, w
    assert 0.75 <= w["held_per_s"] / (held * w["transactions_per_s"]) <= 1.25, (w, held)
    assert w["basis"] == rate["basis"] and (w["fastpath_exceeded_per_s"] is not None) == (major >= 19)


@pytest.mark.slow
def test_foreign_key_check_on_a_partitioned_table(scratch_base: Path, tmp_path: Path, load_lock: None) -> None:
    """PG 18, mlpt 16: transactions that INSERT into seg_link, whose foreign key references tenant_seg (40 LIST
    partitions), then read the row referenced, under plan_cache_mode = force_generic_plan (set for the database: it
    governs the RI check's SPI plan, ri_triggers.c). The statements' EXPLAIN footprints fit (the model: 0/s); the
    check's generic plan locks every partition. The oracle (one connection, warm) gives what the transaction holds;
    diagnose's held figure is within 25 % of it x the database's transactions/s, names the foreign key as the cause
    and proposes plan_cache_mode = force_custom_plan (named in the verdict), not fewer statements per
    transaction (their own locks fit together)."""
    with ScratchServer(None, ScratchSettings(max_locks_per_transaction=16), base_dir=scratch_base) as server:
        run_script(server.conninfo(), "create extension if not exists pg_stat_statements;\n"
                   + (CORPUS_DIR / "tenant_seg.ddl").read_text()
                   + "\nanalyze;\nalter database postgres set plan_cache_mode = force_generic_plan;")
        statements = ("insert into seg_link (tenant, seg_id) values ({t}, {id})",
                      "select label from tenant_seg where tenant = {t} and id = {id}")
        truth = run_transaction(server.conninfo(), [Stmt(q.format(t=7, id=47)) for q in statements], executions=8)
        held = truth.runs[-1].final.main_table_count
        assert held >= 20  # the server's answer: the generic plan's 40 partitions, most in the main lock table
        script = ("\\set id random(1, 4000)\n\\set t :id % 40\nBEGIN;\n"
                  + ";\n".join(q.format(t=":t", id=":id") for q in statements) + ";\nCOMMIT;\n")
        with _load(server, tmp_path, script) as load:
            out = tmp_path / "fk.json"
            proc = run("diagnose", "--dsn", server.conninfo(), "--duration", "4s", "--json", str(out))
            loaded = load.running
    assert proc.returncode == 0, proc.stderr
    assert loaded, "pgbench ended before the measurement did"
    doc = json.loads(out.read_text())
    rate = doc["main_lock_table"]
    assert rate["model_per_s"] == 0.0 and rate["transactions_per_s"] > 0, rate
    assert 0.75 <= rate["server_per_s"] / (held * rate["transactions_per_s"]) <= 1.25, (rate, held)
    txn = doc["transactions"][0]
    assert not txn["single_statement"] and "seg_link" in txn["statements"][0]["text"], txn
    (fk,) = txn["foreign_keys"]
    assert (fk["table"], fk["referenced"], fk["partitioned"]) == ("public.seg_link", "public.tenant_seg", True)
    assert fk["main_table_locks"] >= 0.75 * held and "foreign-key check" in txn["cause"]
    kinds = [f["kind"] for f in doc["fixes"]]
    assert "fewer-statements" not in kinds, doc["fixes"]  # the statements' own locks fit together
    (fix,) = [f for f in doc["fixes"] if f["kind"] == "plan-cache-mode"]  # the audit's for the role gives way
    assert fix["basis"] == "server" and not fix["restart"], doc["fixes"]
    assert fix["sql"] == ['ALTER ROLE "postgres" IN DATABASE "postgres" SET plan_cache_mode = force_custom_plan;']
    assert fix["main_lock_table_per_s_after"] <= 0.25 * fix["main_lock_table_per_s_before"]
    assert "transactions of these 2 statements (on public.seg_link" in doc["verdict"], doc["verdict"]
    assert "set plan_cache_mode = force_custom_plan for the sessions that write public.seg_link" in doc["verdict"]
    assert "fill the fast path together" not in txn["cause"]


@pytest.mark.slow
def test_the_servers_rate_without_pg_stat_statements(scratch_base: Path, tmp_path: Path, load_lock: None) -> None:
    """Issue 40: a database without pg_stat_statements (preloaded, never created there). diagnose still gives the
    server's main-lock-table rate from its pg_locks snapshots and pg_stat_database's transactions (Kong's five
    lookups in one transaction, PG 18, mlpt 16): within 25 % of the executed truth (17 main-table locks x
    transactions/s), an estimate with its interval, and a note saying what was skipped."""
    with ScratchServer(None, ScratchSettings(max_locks_per_transaction=16), base_dir=scratch_base) as server:
        run_script(server.conninfo(), (CORPUS_DIR / "kong_schema.ddl").read_text() + "\nanalyze;")
        truth = run_transaction(server.conninfo(), [Stmt(q.format(r=7, s=3)) for q in KONG_LOOKUPS], executions=8)
        held = truth.runs[-1].final.main_table_count
        with _load(server, tmp_path, KONG_SCRIPT) as load:
            proc = run("diagnose", "--dsn", server.conninfo(), "--duration", "4s", "--json", str(tmp_path / "d.json"))
            assert load.running
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((tmp_path / "d.json").read_text())
    rate = doc["main_lock_table"]
    assert held == 17 and rate["kind"] == "estimate" and rate["transactions_per_s"] > 0, rate
    assert 0.75 <= rate["server_per_s"] / (held * rate["transactions_per_s"]) <= 1.25, rate
    assert rate["low_per_s"] <= rate["server_per_s"] <= rate["high_per_s"]
    assert any("pg_stat_statements is not installed" in n and "pg_locks snapshots" in n for n in doc["notes"])
