"""``lockscope diagnose`` on a transactional load, every major 13-19: the server's main-lock-table rate against the
executed truth (BENCHMARKS.md "diagnose: transactions").

Per major, a scratch server (max_locks_per_transaction 16, autovacuum off) with Kong Gateway's schema
(``tests/data/txn/kong_schema.ddl``) and two loads of 16 pgbench clients (simple protocol):

- ``txn``: BEGIN, five lookups by key on routes, services, plugins, consumers, tags, COMMIT (each lookup within the
  16 fast-path slots alone, the five together not);
- ``mixed``: the same transaction and an autocommit lookup on plugins (10 relations, fits), 1:1 by pgbench weight:
  two transaction shapes, one holding main-table locks.

Truth: the transaction run on one connection by ``tests/txn_oracle.py`` (8 executions, the last one warm):
main-table locks held at its end (pg_lock_status), and on 19 ``pg_stat_lock.fastpath_exceeded`` per execution;
x the transactions/s of the shape that holds them: over diagnose's own interval, the database's
transactions/s (pg_stat_database, in diagnose's JSON) x the transaction script's share of pgbench's transactions
(``truth_interval_per_s``); over pgbench's whole run, its own per-script tps (``truth_per_s``, a longer window
that includes the probes). ``diagnose --duration D`` runs
after a 3 s warm-up while the load continues; its JSON gives the server's figure (``main_lock_table``), the held
estimate and the model.

Usage (load: take the machine's load lock)::

    flock /tmp/lockscope-load.lock python -m benchmarks.diagnose_transactions [--majors 13,...,19]
        [--duration 20] [--out benchmarks/results/diagnose-transactions-DATE.json]
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import io
import json
import platform
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from tests.fix_versions import bin_dir_of
from tests.test_diagnose import KONG_LOOKUPS, KONG_SCRIPT
from tests.txn_oracle import CORPUS_DIR, Stmt, run_transaction

from lockscope.cli import main as lockscope_main
from lockscope.db import run_script
from lockscope.server import ScratchServer, ScratchSettings

#: pgbench's per-script block: "SQL script N: FILE" then "tps = X" (13-14: in its "transactions" line, 15+: in its
#: "actually processed" line).
_SCRIPT = re.compile(r"^SQL script (\d+):(.*?)(?=^SQL script |\Z)", re.M | re.S)
_TPS_IN = re.compile(r"tps = ([\d.]+)")
_TOTAL_TPS = re.compile(r"^tps = ([\d.]+)", re.M)
TXN = KONG_SCRIPT
SINGLE = "\\set r random(1, 800)\n" + KONG_LOOKUPS[2].format(r=":r") + ";\n"


def _pgbench(server: ScratchServer, scripts: list[tuple[str, int]], seconds: int, out: dict[str, Any]) -> None:
    """pgbench with weighted scripts for ``seconds``; ``out["tps"]`` per script (by position) and in all."""
    files = []
    for i, (text, _) in enumerate(scripts):
        path = Path(server.root) / f"bench-{i}.sql"
        path.write_text(text)
        files.append(path)
    argv = [str(server.tool("pgbench")), "-h", str(server.socket_dir), "-p", str(server.port), "-U", "postgres",
            "-n", "-c", "16", "-j", "2", "-T", str(seconds), "-M", "simple"]
    for path, (_, weight) in zip(files, scripts, strict=True):
        argv += ["-f", f"{path}@{weight}"]
    proc = subprocess.run([*argv, "postgres"], capture_output=True, text=True, timeout=seconds + 120, check=True)
    per = {int(m.group(1)) - 1: float(t.group(1)) for m in _SCRIPT.finditer(proc.stdout)
           if (t := _TPS_IN.search(m.group(2))) is not None}
    total = _TOTAL_TPS.search(proc.stdout)
    out["tps"] = per if len(scripts) > 1 else {0: float(total.group(1)) if total else 0.0}


def _diagnose(server: ScratchServer, duration_s: int, out: Path) -> dict[str, Any]:
    with contextlib.redirect_stdout(io.StringIO()):  # the report itself: the JSON has it
        code = lockscope_main(["diagnose", "--dsn", server.conninfo(), "--duration", f"{duration_s}s", "-q",
                               "--json", str(out)])
    if code != 0:
        raise SystemExit(f"diagnose exited {code}")
    doc: dict[str, Any] = json.loads(out.read_text())
    return doc


def measure(major: int, load: str, duration_s: int, work: Path) -> dict[str, Any]:
    """One major and one load: truth and diagnose's figures (see the module docstring)."""
    scripts = [(TXN, 1)] if load == "txn" else [(TXN, 1), (SINGLE, 1)]
    settings = ScratchSettings(max_locks_per_transaction=16, extra={"autovacuum": "off"})
    with ScratchServer(bin_dir_of(major), settings) as server:
        run_script(server.conninfo(), "create extension if not exists pg_stat_statements;\n"
                   + (CORPUS_DIR / "kong_schema.ddl").read_text() + "\nanalyze;")
        truth = run_transaction(server.conninfo(), [Stmt(q.format(r=7, s=3)) for q in KONG_LOOKUPS], executions=8)
        warm = truth.runs[-1]
        bench: dict[str, Any] = {}
        loader = threading.Thread(target=_pgbench, args=(server, scripts, duration_s + 12, bench))
        loader.start()
        time.sleep(3)
        t0 = time.monotonic()
        doc = _diagnose(server, duration_s, work / f"diagnose-{major}-{load}.json")
        elapsed = time.monotonic() - t0
        loader.join()
        version = doc["server"]["version"]
    rate, txns = doc["main_lock_table"], doc["transactions"]
    held, tps_txn = warm.final.main_table_count, bench["tps"][0]
    share = tps_txn / sum(bench["tps"].values())  # the transaction script's share of pgbench's transactions
    return {"major": major, "server": version, "load": load, "locks": len(warm.final.locks), "held_main": held,
            "fastpath_exceeded_per_txn": warm.fastpath_exceeded, "pgbench_tps": bench["tps"],
            "truth_per_s": held * tps_txn,
            "truth_interval_per_s": held * share * (rate["transactions_per_s"] or 0.0),
            "server_per_s": rate["server_per_s"], "basis": rate["basis"],
            "held_per_s": rate["held_per_s"], "model_per_s": rate["model_per_s"],
            "db_transactions_per_s": rate["transactions_per_s"], "snapshots": rate["snapshots"],
            "transactions_seen": rate["transactions_seen"],
            "shapes": [(len(t["statements"]), t["held_main_table_per_transaction"], t["transactions_per_s"],
                        t["transactions_per_s_basis"]) for t in txns],
            "verdict": doc["verdict"], "diagnose_s": elapsed}


def table(rows: list[dict[str, Any]]) -> str:
    """The BENCHMARKS.md table."""
    out = ["| server | load | truth: held main-table locks / txn (PG 19: counted) | txn/s (database, interval) | "
           "truth main-table/s | diagnose: server's figure (basis) | held estimate | server / truth | held / truth "
           "| model | shapes seen (statements: held main per txn at txn/s) |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        counted = f" ({r['fastpath_exceeded_per_txn']})" if r["fastpath_exceeded_per_txn"] is not None else ""
        basis = "fastpath_exceeded" if r["basis"].startswith("pg_stat_lock") else "pg_locks snapshots"
        shapes = "; ".join(f"{n}: {h:.1f} at {t:,.0f}" for n, h, t, _ in r["shapes"]) or "-"
        truth = r["truth_interval_per_s"]
        out.append(f"| {r['server']} | {r['load']} | {r['held_main']}{counted} | {r['db_transactions_per_s']:,.0f} | "
                   f"{truth:,.0f} | {r['server_per_s']:,.0f} ({basis}) | {r['held_per_s']:,.0f} | "
                   f"{r['server_per_s'] / truth:.2f} | {r['held_per_s'] / truth:.2f} | {r['model_per_s']:,.0f} | "
                   f"{shapes} |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--majors", default="13,14,15,16,17,18,19")
    parser.add_argument("--loads", default="txn,mixed")
    parser.add_argument("--duration", type=int, default=20)
    parser.add_argument("--out", type=Path,
                        default=Path(f"benchmarks/results/diagnose-transactions-{datetime.date.today()}.json"))
    args = parser.parse_args(argv)
    work = args.out.with_suffix("")
    work.mkdir(parents=True, exist_ok=True)
    rows = []
    for major in (int(m) for m in args.majors.split(",")):
        for load in args.loads.split(","):
            row = measure(major, load, args.duration, work)
            row["pgbench_tps"] = {str(k): v for k, v in row["pgbench_tps"].items()}
            rows.append(row)
            print(json.dumps(row), file=sys.stderr, flush=True)
    meta = {"date": str(datetime.date.today()), "machine": f"{platform.machine()}, {platform.processor() or '?'}, "
            f"{len(__import__('os').sched_getaffinity(0))} cores", "python": platform.python_version(),
            "duration_s": args.duration}
    args.out.write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    print(table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
