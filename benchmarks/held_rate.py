"""The pg_locks-snapshot estimate of the main-lock-table rate (PG 13-18) against the executed truth (issue 40).

Per run: a scratch server (max_locks_per_transaction 16) under 16 pgbench clients (simple protocol), one of:

- ``demo``: ``pgbench -S`` on pgbench_accounts with 100 extra indexes (every call plans: 102 relation locks);
- ``wide``: one lookup on a table of 40 indexes (held out: not the demo's shape);
- ``txn``: Kong Gateway's five lookups in one transaction (tests/data/txn/kong_schema.ddl).

After 3 s of load, ``lockscope diagnose --duration D --json`` on it: the estimate (``main_lock_table.per_s``, its
95 % interval ``low_per_s``..``high_per_s``, the database's transactions/s over diagnose's interval). Truth:
main-table locks per transaction read by pg_locks in a single session (warm, the 8th execution of the
transaction), x those transactions/s.

Usage (load: take the machine's load lock)::

    flock /tmp/lockscope-load.lock python -m benchmarks.held_rate [--majors 15,17,18] [--loads demo,wide,txn]
        [--runs 10] [--duration 10] [--out benchmarks/results/held-rate-DATE.json]
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tests.fix_versions import bin_dir_of
from tests.test_diagnose import KONG_LOOKUPS, KONG_SCRIPT
from tests.txn_oracle import CORPUS_DIR, Stmt, run_transaction

from lockscope.db import run_script
from lockscope.demo_load import prepare_contended_schema
from lockscope.pgbench import start_pgbench
from lockscope.server import ScratchServer, ScratchSettings

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
            "script": KONG_SCRIPT},
}


def _setup(server: ScratchServer, load: str) -> None:
    run_script(server.conninfo(), "create extension if not exists pg_stat_statements")
    if load == "demo":
        prepare_contended_schema(server)
    elif load == "wide":
        run_script(server.conninfo(), WIDE_SCHEMA)
    else:
        run_script(server.conninfo(), (CORPUS_DIR / "kong_schema.ddl").read_text() + "\nanalyze;")


def one_run(server: ScratchServer, load: str, duration_s: float, tmp: Path, held: int) -> dict[str, Any]:
    """One measured run: the load, 3 s of warm-up, then ``lockscope diagnose --duration`` on it (its JSON's
    ``main_lock_table``); truth = ``held`` x the database's transactions/s diagnose read over its interval."""
    script = tmp / f"{load}.sql"
    script.write_text(LOADS[load]["script"])
    script.chmod(0o644)
    out = tmp / f"{load}-diagnose.json"
    with start_pgbench(server, clients=16, duration_s=duration_s + 60, select_only=False,
                       extra_args=["-f", str(script)]) as bench:
        time.sleep(3.0)
        proc = subprocess.run([sys.executable, "-m", "lockscope", "diagnose", "--dsn", server.conninfo(),
                               "--duration", f"{duration_s:g}s", "--json", str(out)],
                              capture_output=True, text=True, timeout=300)
        running = bench.running
    if proc.returncode != 0:
        raise SystemExit(f"diagnose failed: {proc.stderr[-500:]}")
    rate = json.loads(out.read_text())["main_lock_table"]
    tps = rate["transactions_per_s"] or 0.0
    truth = held * tps
    low, high = rate.get("low_per_s"), rate.get("high_per_s")
    return {"load": load, "tps": tps, "held_truth": held, "truth_per_s": truth, "estimate_per_s": rate["per_s"],
            "kind": rate.get("kind"), "low_per_s": low, "high_per_s": high,
            "ratio": rate["per_s"] / truth if truth else None,
            "covered": low is not None and high is not None and low <= truth <= high,
            "model_per_s": rate["model_per_s"], "snapshots": rate["snapshots"],
            "transactions_seen": rate["transactions_seen"], "load_running": running}


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
                          f"{r['tps']:,.0f} tps), {r['kind']} {r['estimate_per_s']:,.0f}/s "
                          f"[{r['low_per_s'] or 0:,.0f}, {r['high_per_s'] or 0:,.0f}], ratio {r['ratio']:.2f}, "
                          f"covered {r['covered']}", flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"machine": platform.platform(), "date": str(datetime.date.today()),
                                    "duration_s": args.duration, "runs": results}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
