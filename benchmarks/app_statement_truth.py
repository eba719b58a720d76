"""What one application statement really does on a scratch server (issue 27): its locks and its wait events.

For one statement of ``benchmarks/apps/APP`` (``forecast_apps.app_statements``), on a scratch PostgreSQL 18 with
the application's schema and data (mlpt 16, as ``forecast_apps.py``):

- **locks**: the statement executed for real ``--executions`` times on one new connection, each in a transaction
  rolled back after pg_locks is read. It prints, per call, the relation locks held at the end of the call and how
  many are fast-path or in the main lock table. The pg_locks query's own ``AccessShareLock`` on ``pg_locks`` is
  counted. It then prints what ``lockscope.footprint.measure_footprint`` gives for the same statement: EXPLAIN's
  locks and the execution model's (``Execution.real_locks``), per probed execution;
- **waits**: pgbench of the statement at each ``--clients`` for 9 s. After 2 s, 100 snapshots of
  pg_stat_activity at 20 Hz: the share of active client backends per wait event (CPU when none), and the AAS;
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

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import forecast_apps
from lockscope.db import connect
from lockscope.footprint import measure_footprint
from lockscope.lab.load import install_pg_stat_statements
from lockscope.pgbench import start_pgbench
from lockscope.server import ScratchServer, ScratchSettings

#: The client backends' wait events, one row each (CPU when none), lockscope's own session left out.
WAITS_SQL = ("select coalesce(wait_event_type || ':' || wait_event, 'CPU') from pg_stat_activity "
             "where backend_type = 'client backend' and state = 'active' and pid <> pg_backend_pid()")
#: The session's own relation locks and their fast-path flags.
LOCKS_SQL = "select fastpath from pg_locks where pid = pg_backend_pid() and locktype = 'relation'"


def executed_locks(server: ScratchServer, text: str, executions: int) -> list[tuple[int, int, int]]:
    """Per real execution of ``text`` on one new connection: (relation locks held at its end, fast-path, main
    lock table) (counts). Each runs in a transaction that is rolled back."""
    out: list[tuple[int, int, int]] = []
    # lockscope's own sessions are READ ONLY: this one executes for real, on the script's own scratch server
    with psycopg.connect(server.conninfo(), autocommit=True) as conn:
        for _ in range(executions):
            with conn.transaction(force_rollback=True):
                conn.execute(text)
                flags = [bool(r[0]) for r in conn.execute(LOCKS_SQL).fetchall()]
            out.append((len(flags), sum(flags), len(flags) - sum(flags)))
    return out


def sampled_waits(server: ScratchServer, path: Path, clients: int) -> tuple[float, float, list[tuple[str, float]]]:
    """pgbench of the script at ``path`` with ``clients`` for 9 s: (TPS, AAS, [(wait event, share 0..1)] with
    the most frequent first)."""
    seen: collections.Counter[str] = collections.Counter()
    ticks = 100
    with start_pgbench(server, clients=clients, duration_s=9, select_only=False, extra_args=["-f", str(path)]) as run, \
            connect(server.conninfo()) as session:
        time.sleep(2.0)
        for _ in range(ticks):
            seen.update(str(r[0]) for r in session.oracle_rows(WAITS_SQL))
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
        for i, (held, fast, main_table) in enumerate(executed_locks(server, st.text, args.executions), 1):
            print(f"executed call {i}: {held} relation locks, {fast} fast-path, {main_table} main lock table")
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
