"""The pg_locks-snapshot estimate of the main-lock-table rate (PG 13-18) against the executed truth (issue 40).

Per run: a scratch server (max_locks_per_transaction 16) under 16 pgbench clients (simple protocol), one of:

- ``demo``: ``pgbench -S`` on pgbench_accounts with 100 extra indexes (every call plans: 102 relation locks);
- ``wide``: one lookup on a table of 40 indexes (held out: not the demo's shape);
- ``txn``: Kong Gateway's five lookups in one transaction (tests/data/txn/kong_schema.ddl).

During ``--duration`` s: diagnose's own snapshots (``audit_held_locks.sql`` through a lockscope session, one a
second), the database's transaction counter before and after; the raw snapshots are kept in the JSON for offline
checks. The estimate is :func:`lockscope.workload.transactions.transaction_load` on them (as diagnose computes it).
Truth: main-table locks per transaction read by pg_locks in a single session (warm, the 8th execution of the
transaction), x the database's transactions/s over the same seconds.

Usage (load: take the machine's load lock)::

    flock /tmp/lockscope-load.lock python -m benchmarks.held_rate [--majors 15,17,18] [--loads demo,wide,txn]
        [--runs 10] [--duration 10] [--out benchmarks/results/held-rate-DATE.json]
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import time
from pathlib import Path
from typing import Any

from tests.fix_versions import bin_dir_of
from tests.test_diagnose import KONG_LOOKUPS
from tests.txn_oracle import CORPUS_DIR, Stmt, run_transaction

from lockscope.db import connect, run_script
from lockscope.demo_load import prepare_contended_schema
from lockscope.pgbench import start_pgbench
from lockscope.rows import HeldLocksRow, TransactionCountRow
from lockscope.server import ScratchServer, ScratchSettings
from lockscope.workload.transactions import transaction_load

WIDE_SCHEMA = ("create table wide (id int primary key, " + ", ".join(f"c{i} int" for i in range(40)) + ");\n"
               + "insert into wide select g, " + ", ".join("g" for _ in range(40))
               + " from generate_series(1, 10000) g;\n"
               + "".join(f"create index on wide (c{i});\n" for i in range(40)) + "analyze wide;\n")
LOADS: dict[str, dict[str, Any]] = {
    "demo": {"statements": ["select abalance from pgbench_accounts where aid = 7"],
             "script": "\\set aid random(1, 100000)\nselect abalance from pgbench_accounts where aid = :aid;\n"},
    "wide": {"statements": ["select c1 from wide where id = 7"],
             "script": "\\set id random(1, 10000)\nselect c1 from wide where id = :id;\n"},
    "txn": {"statements": [q.format(r=7, s=3) for q in KONG_LOOKUPS],
            "script": ("\\set r random(1, 800)\n\\set s random(1, 200)\nBEGIN;\n"
                       + ";\n".join(q.format(r=":r", s=":s") for q in KONG_LOOKUPS) + ";\nCOMMIT;\n")},
}


def _setup(server: ScratchServer, load: str) -> None:
    run_script(server.conninfo(), "create extension if not exists pg_stat_statements")
    if load == "demo":
        prepare_contended_schema(server)
    elif load == "wide":
        run_script(server.conninfo(), WIDE_SCHEMA)
    else:
        run_script(server.conninfo(), (CORPUS_DIR / "kong_schema.ddl").read_text() + "\nanalyze;")


def _row(r: HeldLocksRow) -> dict[str, Any]:
    return {"pid": r.pid, "query_id": r.query_id, "query": r.query, "state": r.state,
            "xact_start": r.xact_start.isoformat() if r.xact_start else None,
            "starts_transaction": r.starts_transaction, "main_table_locks": r.main_table_locks,
            "fastpath_locks": r.fastpath_locks, "relations": r.relations, "main_relations": r.main_relations}


def one_run(server: ScratchServer, load: str, duration_s: float, tmp: Path, held: int) -> dict[str, Any]:
    """One measured run: the load for ``duration_s`` + 3 s warm-up, the snapshots and counters, the estimate."""
    script = tmp / f"{load}.sql"
    script.write_text(LOADS[load]["script"])
    script.chmod(0o644)
    with start_pgbench(server, clients=16, duration_s=duration_s + 8, select_only=False,
                       extra_args=["-f", str(script)]) as bench, connect(server.conninfo()) as session:
        time.sleep(3.0)
        snapshots: list[list[HeldLocksRow]] = []
        t0 = time.monotonic()
        before = session.query_rows("audit_xact_counters", TransactionCountRow)[0].transactions
        while time.monotonic() - t0 < duration_s:
            snapshots.append(session.query_rows("audit_held_locks", HeldLocksRow))
            time.sleep(max(0.0, 1.0 - (time.monotonic() - t0) % 1.0))
        after = session.query_rows("audit_xact_counters", TransactionCountRow)[0].transactions
        elapsed = time.monotonic() - t0
        running = bench.running
    tps = (after - before) / elapsed
    est = transaction_load(snapshots, transactions_per_s=tps, calls_per_s={}, texts={})
    return {"load": load, "tps": tps, "held_truth": held, "truth_per_s": held * tps,
            "estimate_per_s": est.held_main_per_s, "ratio": est.held_main_per_s / (held * tps) if tps else None,
            "snapshots": [[_row(r) for r in rows] for rows in snapshots], "load_running": running}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--majors", default="18")
    parser.add_argument("--loads", default="demo,wide,txn")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--out", type=Path,
                        default=Path(f"benchmarks/results/held-rate-{datetime.date.today()}.json"))
    args = parser.parse_args(argv)
    results: list[dict[str, Any]] = []
    tmp = Path("/tmp/lockscope-held-rate")
    tmp.mkdir(exist_ok=True)
    tmp.chmod(0o755)
    for major in (int(m) for m in args.majors.split(",")):
        for load in args.loads.split(","):
            with ScratchServer(bin_dir_of(major), ScratchSettings(max_locks_per_transaction=16)) as server:
                _setup(server, load)
                truth = run_transaction(server.conninfo(), [Stmt(s) for s in LOADS[load]["statements"]],
                                        executions=8)
                held = truth.runs[-1].final.main_table_count
                for n in range(args.runs):
                    r = one_run(server, load, args.duration, tmp, held)
                    r["major"] = major
                    results.append(r)
                    print(f"PG{major} {load} run {n + 1}: truth {r['truth_per_s']:,.0f}/s ({held}/txn x "
                          f"{r['tps']:,.0f} tps), estimate {r['estimate_per_s']:,.0f}/s, ratio {r['ratio']:.2f}",
                          flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"machine": platform.platform(), "date": str(datetime.date.today()),
                                    "duration_s": args.duration, "runs": results}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
