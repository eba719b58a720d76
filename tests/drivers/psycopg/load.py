"""Closed-loop load through psycopg 3 with its DEFAULT statement preparation, for lockscope's driver tests.

What psycopg 3 sends by default (``Connection.prepare_threshold = 5``, ``prepared_max = 100``): a query with
parameters goes through the extended protocol (libpq ``PQexecParams``: the UNNAMED statement, planned every time)
for its first 5 executions on a connection; the connection counts executions per (query, parameter types), and the
6th execution prepares it as a NAMED server-side statement (``_pg3_0``, ...: ``PQprepare``), which every later
execution runs (``PQexecPrepared``); the server's plan cache plans those custom for their executions 1-5 and generic
from the 6th. A query without parameters is sent the same way (extended protocol, no simple-query shortcut).

The connections use ``autocommit=True`` (one statement per transaction, as the other drivers' loops run); psycopg's
own default would wrap the whole loop in one transaction.

Usage: python load.py HOST PORT USER DBNAME CLIENTS SECONDS SQL [TYPE:VALUE ...]
  HOST is a Unix socket directory or an address; no password. SQL uses $1..$n, turned into psycopg's %(pN)s here
  (a literal % is doubled; a $n inside a string literal is not told apart). TYPE is int (a Python int) or text
  (a str). The loop runs SECONDS, or less if standard input ends first (its end-of-file stops the load). Prints
  one JSON line: {"driver","version","calls","errors","seconds"}.
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
import time

import psycopg
from psycopg.conninfo import make_conninfo


def fail(message: str) -> None:
    print(f"psycopg-load: {message}", file=sys.stderr)
    sys.exit(2)


def parse_param(p: str) -> object:
    kind, sep, value = p.partition(":")
    if kind == "int" and re.fullmatch(r"-?\d+", value):
        return int(value)
    if kind == "text" and sep:
        return value
    fail(f"parameter {p} is not int:N or text:S")
    return None


def end_of_input(stop: threading.Event) -> None:
    """Read standard input to its end, then set ``stop`` (the file descriptor itself: a daemon thread blocked in
    ``sys.stdin``'s buffered reader would stop the interpreter's shutdown)."""
    try:
        while os.read(0, 65536):
            pass
    except OSError:
        pass
    stop.set()


def main(argv: list[str]) -> None:
    if len(argv) < 7:
        fail("usage: load.py HOST PORT USER DBNAME CLIENTS SECONDS SQL [TYPE:VALUE ...]")
    host, port, user, dbname, clients, seconds, sql, *raw = argv
    query = re.sub(r"\$(\d+)", r"%(p\1)s", sql.replace("%", "%%"))
    params = {f"p{i}": parse_param(p) for i, p in enumerate(raw, 1)}
    conninfo = make_conninfo(host=host, port=port, user=user, dbname=dbname)
    conns = [psycopg.connect(conninfo, autocommit=True) for _ in range(int(clients))]

    calls = errors = 0
    lock = threading.Lock()
    stop = threading.Event()
    threading.Thread(target=end_of_input, args=(stop,), daemon=True).start()
    start = time.monotonic()
    deadline = start + float(seconds)

    def loop(conn: psycopg.Connection[tuple[object, ...]]) -> None:
        nonlocal calls, errors
        while time.monotonic() < deadline and not stop.is_set():
            try:
                cur = conn.execute(query, params)
                if cur.description is not None:
                    cur.fetchall()
            except psycopg.Error as exc:
                with lock:
                    errors += 1
                    if errors == 1:
                        print(f"psycopg-load: first error: {exc}", file=sys.stderr)
                continue
            with lock:
                calls += 1

    threads = [threading.Thread(target=loop, args=(conn,)) for conn in conns]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - start
    for conn in conns:
        conn.close()
    print(json.dumps({"driver": "psycopg", "version": psycopg.__version__, "calls": calls, "errors": errors,
                      "seconds": elapsed}))


if __name__ == "__main__":
    main(sys.argv[1:])
