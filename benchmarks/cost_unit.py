"""Benchmark: how well the planner's cost estimates a statement's execution time (issue 27, "a statement whose
execution time is unknown").

On a scratch PostgreSQL 18 (embedded) this script runs what ``lockscope lab ceiling`` runs for the cost unit
(:func:`lockscope.lab.cost_unit.measure_cost_unit` on pgbench's tables, scale 1), then estimates the execution time
of statements it did not fit on (an application-like schema: users 1,000 rows, posts 50,000 rows with a foreign
key and an index) as cost x the fitted seconds per unit, and prints each estimate against the measured
execution time (``EXPLAIN (ANALYZE, TIMING OFF)``, median of 20), as Markdown (BENCHMARKS.md, "forecast: planner
cost units").

    .venv/bin/python benchmarks/cost_unit.py

Single-client timings: they hold the machine's load lock (``/tmp/lockscope-load.lock``) while they run.
"""

from __future__ import annotations

import fcntl
import os
import platform
from datetime import UTC, datetime

from lockscope.db import run_script, time_and_cost_on_scratch
from lockscope.lab.cost_unit import measure_cost_unit
from lockscope.pgbench import pgbench_init
from lockscope.server import ScratchServer, ScratchSettings

HELD_OUT_SCHEMA = """
CREATE TABLE users (id int PRIMARY KEY, level int NOT NULL);
CREATE TABLE posts (id int PRIMARY KEY, uploader_id int NOT NULL REFERENCES users, title text NOT NULL,
                    created_at timestamptz NOT NULL);
CREATE INDEX ON posts (uploader_id);
INSERT INTO users SELECT g, g % 5 FROM generate_series(1, 1000) g;
INSERT INTO posts SELECT g, 1 + g % 1000, 'post ' || g, now() - g * interval '1 minute'
  FROM generate_series(1, 50000) g;
VACUUM ANALYZE;
"""
HELD_OUT = (
    "select title from posts where id = 4242",
    "select u.level, count(*) from posts p join users u on u.id = p.uploader_id where p.uploader_id between 300 "
    "and 320 group by u.level",
    "select count(*), max(length(title)) from posts where created_at > now() - interval '1 day' * 3",
    "select count(*) from posts",
    "select u.level, count(*) from posts p join users u on u.id = p.uploader_id group by u.level",
)


def main() -> None:
    lock = open("/tmp/lockscope-load.lock", "w")  # noqa: SIM115 - held for the run
    started = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    load_before = os.getloadavg()
    with ScratchServer(None, ScratchSettings()) as server:
        pgbench_init(server, 1)
        run_script(server.conninfo(), HELD_OUT_SCHEMA)
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            fit = measure_cost_unit(server.conninfo())
            held = [(text, *time_and_cost_on_scratch(server.conninfo(), text)[1:]) for text in HELD_OUT]
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    print(f"{started}, {platform.machine()}, {os.cpu_count()} cores, PostgreSQL 18 (embedded); load average "
          f"{load_before[0]:.2f} before, {os.getloadavg()[0]:.2f} after\n")
    print(f"fit: {fit.exec_s_per_cost_unit * 1e9:.1f} ns per cost unit, error factor {fit.error_factor:.2f}\n")
    print("| statement | set | cost units | measured ms | estimated ms | estimate / measured |")
    print("|---|---|---:|---:|---:|---:|")
    for text, cost, exec_s in fit.points:
        est = cost * fit.exec_s_per_cost_unit
        print(f"| `{text}` | fit | {cost:,.2f} | {exec_s * 1e3:.3f} | {est * 1e3:.3f} | {est / exec_s:.2f} |")
    for text, exec_ms, cost in held:
        est_ms = cost * fit.exec_s_per_cost_unit * 1e3
        print(f"| `{text}` | held out | {cost:,.2f} | {exec_ms:.3f} | {est_ms:.3f} | {est_ms / exec_ms:.2f} |")


if __name__ == "__main__":
    main()
