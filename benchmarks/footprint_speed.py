"""Benchmark: footprint probes per second against the floor of a raw EXPLAIN + pg_locks read, same server, same
statements (issue 17: the client-built query tree must keep the engine at >= 30 % of that floor).

On a scratch server (embedded PostgreSQL 18, max_locks_per_transaction 16, the order-test schemas: GitLab subset,
DVD rental, the acquisition tables), for each statement, interleaved in rounds so that machine noise hits both
alike:

- **floor**: one psycopg connection, ``EXPLAIN <statement>`` then ``SELECT ... FROM pg_locks WHERE pid =
  pg_backend_pid()`` in a transaction that is rolled back: the least any lock-footprint probe can do;
- **lockscope, warm**: ``measure_footprint(session, statement)`` (simple protocol) again and again: the query tree
  and catalog facts are read once per session and statement (as for a footprint's executions, an audit's custom
  and generic probes, a forecast's what-ifs), then each probe is the probe transaction, the pg_locks read, every
  lock named and predicted;
- **lockscope, cold**: the same with a statement text never seen before each time (a counter in a comment), so
  each probe also builds the query tree and reads the catalog (name resolution, views, facts).

Prints a Markdown table (probes/s each, ratio) for BENCHMARKS.md. Unpaced (a scratch server): on a server a user
names, lockscope paces its pg_locks reads by default.

    python benchmarks/footprint_speed.py --seconds 3 --rounds 5 [--filler-tables 2000]
"""

from __future__ import annotations

import argparse
import itertools
import platform
import statistics
import time
from pathlib import Path

import psycopg

from lockscope.db import connect, load_sql, run_script
from lockscope.footprint import measure_footprint
from lockscope.server import ScratchServer, ScratchSettings

DATA = Path(__file__).resolve().parent.parent / "tests" / "data"
STATEMENTS = {
    "pk lookup": "select * from posts where id = 42",
    "3-table join (GitLab)": "select mr.id, d.id from merge_requests mr join merge_request_diffs d on "
                             "d.merge_request_id = mr.id join namespaces n on n.id = mr.target_project_id "
                             "where mr.target_project_id = 3",
    "join + IN subquery": "select 1 from t01 join t02 on t02.id = t01.id where t01.a in "
                          "(select author from posts where score > 3)",
    "view over a join": "select * from customer_list cl join rental r on r.customer_id = cl.id where cl.id = 5",
    "partitioned, pruned": "select * from payment p where p.payment_date = '2022-03-05 00:00:00+00'",
    "UPDATE with subquery": "update posts set score = 1 where id in (select id from posts where score > 3)",
}


def _rate(fn: object, seconds: float) -> float:
    """Calls per second of ``fn`` over about ``seconds``."""
    assert callable(fn)
    n = 0
    t0 = time.perf_counter()
    while (elapsed := time.perf_counter() - t0) < seconds:
        fn()
        n += 1
    return n / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="seconds per measurement (default 2)")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds; the median is reported")
    parser.add_argument("--pg-bin", type=Path)
    parser.add_argument("--filler-tables", type=int, default=0, metavar="N",
                        help="N more tables, each with a primary key and one index, for a catalog the size of a "
                             "real application's (a cold probe's catalog reads must not grow with it)")
    args = parser.parse_args()
    script = "".join((DATA / d / "schema.sql").read_text() for d in ("acquisition", "rental", "gitlab"))
    script += "".join(f"create table filler_{i} (id int primary key, a int); create index on filler_{i} (a);"
                      for i in range(args.filler_tables))
    with ScratchServer(args.pg_bin, ScratchSettings(max_locks_per_transaction=16)) as server:
        run_script(server.conninfo(), script)
        locks_sql = load_sql("relation_locks", 0).encode()
        rows = []
        with psycopg.connect(server.conninfo()) as raw, connect(server.conninfo()) as session:
            version = session.facts.server_version
            relations = int(session.oracle_rows("select count(*) from pg_catalog.pg_class")[0][0])
            for label, sql in STATEMENTS.items():
                explain = ("EXPLAIN " + sql).encode()

                def floor(explain: bytes = explain) -> None:
                    with raw.cursor() as cur:
                        cur.execute(explain)
                        cur.fetchall()
                        cur.execute(locks_sql)
                        cur.fetchall()
                    raw.rollback()

                def probe(sql: str = sql) -> None:
                    measure_footprint(session, sql)

                fresh = itertools.count()

                def cold(sql: str = sql, fresh: itertools.count[int] = fresh) -> None:
                    measure_footprint(session, f"{sql} /* {next(fresh)} */")

                floors, warm, colds = [], [], []
                for _ in range(args.rounds):
                    floors.append(_rate(floor, args.seconds))
                    warm.append(_rate(probe, args.seconds))
                    colds.append(_rate(cold, args.seconds))
                f = statistics.median(floors)
                warm_ratio = statistics.median(b / a for a, b in zip(floors, warm, strict=True))
                cold_ratio = statistics.median(b / a for a, b in zip(floors, colds, strict=True))
                locks = measure_footprint(session, sql).executions[0].lock_count
                rows.append((label, locks, f, statistics.median(warm), warm_ratio, statistics.median(colds),
                             cold_ratio))
    print(f"PostgreSQL {version}, {platform.machine()}, {platform.processor() or platform.system()}, "
          f"{args.rounds} rounds x {args.seconds:g} s each, interleaved, {relations:,} relations in pg_class\n")
    print("| statement | locks | floor probes/s | lockscope warm probes/s | warm / floor | lockscope cold probes/s "
          "| cold / floor |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for label, locks, f, w, wr, c, cr in rows:
        print(f"| {label} | {locks} | {f:,.0f} | {w:,.0f} | {wr:.0%} | {c:,.0f} | {cr:.0%} |")


if __name__ == "__main__":
    main()
