"""What one application statement really does on a scratch server (issue 27): its locks and its wait events.

For one statement of ``benchmarks/apps/APP`` (``forecast_apps.app_statements``), on a scratch PostgreSQL 18 with
the application's schema and data (mlpt 16, as ``forecast_apps.py``):

- **locks**: the statement executed for real ``--executions`` times on one connection, each in a transaction
  rolled back after the backend's entries are read (:func:`lockscope.executed.execute_scripts`, the project's
  oracle). It prints, per call, the relation locks held at the end of the call and how many are in the main lock
  table. It then prints what ``lockscope.footprint.measure_footprint`` gives for the same statement: EXPLAIN's
  locks and the execution model's (``Execution.real_locks``), per probed execution;
- **waits**: pgbench of the statement at each ``--clients`` for 9 s. After 2 s, 100 snapshots of
  active sessions at 20 Hz (lockscope's sample query): the share of active client backends per wait event (CPU
  when none), and the AAS;
  pgbench's TPS.

Only servers this script starts are loaded. Never run under ``flock`` itself::

    .venv/bin/python benchmarks/app_statement_truth.py lemmy like_post [--clients 16 --clients 32] [--executions 8]

Results of 2026-12-07: BENCHMARKS.md, "Lemmy, the fifth application".
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import forecast_apps
from lockscope.db import connect
from lockscope.executed import execute_scripts
from lockscope.footprint import measure_footprint
from lockscope.lab.load import install_pg_stat_statements
from lockscope.pgbench import start_pgbench
from lockscope.rows import ActivityRow
from lockscope.script import read_script
from lockscope.server import ScratchServer, ScratchSettings


def executed_locks(server: ScratchServer, text: str, executions: int) -> list[tuple[int, int]]:
    """Per real execution of ``text`` on one connection (:func:`lockscope.executed.execute_scripts`, each rolled
    back, its entries read with ``pg_lock_status()``): (relation locks held at its end, of which in the main lock
    table) (counts)."""
    script = read_script(text, protocol="simple")
    [fp] = execute_scripts(server.conninfo(), [script] * executions, executions=executions)
    return [(e.lock_count, e.main_table_count) for e in fp.executions]


def sampled_waits(server: ScratchServer, path: Path, clients: int) -> tuple[float, float, list[tuple[str, float]]]:
    """pgbench of the script at ``path`` with ``clients`` for 9 s: (TPS, AAS, [(wait event, share 0..1)] with
    the most frequent first; ``CPU`` for an active client backend without a wait event). Each tick is lockscope's
    own sample query (``sql/activity_sample``: no heavyweight lock, no lock-partition LWLock)."""
    seen: collections.Counter[str] = collections.Counter()
    ticks = 100
    with start_pgbench(server, clients=clients, duration_s=9, select_only=False, extra_args=["-f", str(path)]) as run, \
            connect(server.conninfo()) as session:
        time.sleep(2.0)
        for _ in range(ticks):
            seen.update(f"{r.wait_event_type}:{r.wait_event}" if r.wait_event else "CPU"
                        for r in session.query_rows("activity_sample", ActivityRow)
                        if r.backend_type == "client backend")
            time.sleep(0.05)
        tps = run.wait().tps
    total = sum(seen.values())
    return tps, total / ticks, [(k, v / total) for k, v in seen.most_common()] if total else []


def main(argv: Sequence[str] | None = None) -> None:
    """Print the statement's executed locks, lockscope's model of them, and its wait events per client count."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("app")
    parser.add_argument("statement")
    parser.add_argument("--clients", type=int, action="append")
    parser.add_argument("--executions", type=int, default=8)
    args = parser.parse_args(argv)
    st = next((s for s in forecast_apps.app_statements(args.app) if s.name == args.statement), None)
    if st is None:
        parser.error(f"{args.app} has no statement {args.statement}")
    settings = ScratchSettings(max_locks_per_transaction=16, extra={"max_parallel_workers_per_gather": "0"})
    with forecast_apps.load_lock(), ScratchServer(None, settings) as server:
        install_pg_stat_statements(server)
        forecast_apps.load_app(server, args.app)
        for i, (held, main_table) in enumerate(executed_locks(server, st.text, args.executions), 1):
            print(f"executed call {i}: {held} relation locks, {main_table} in the main lock table")
        with connect(server.conninfo()) as session:
            fp = measure_footprint(session, st.text, protocol="simple")
        for e in fp.executions:
            print(f"modelled execution {e.number}: EXPLAIN {e.lock_count} locks ({e.main_table_count} main), "
                  f"real {e.real_lock_count} ({e.real_main_table_count} main)")
        for note in fp.executions[-1].notes:
            print(f"  note: {note}")
        for clients in args.clients or [16, 32]:
            tps, aas, shares = sampled_waits(server, st.path, clients)
            top = ", ".join(f"{k} {100 * v:.0f}%" for k, v in shares[:8])
            print(f"{clients} clients: {tps:,.0f} TPS, AAS {aas:.1f}: {top}")


if __name__ == "__main__":
    main()
