"""Closed-loop load through asyncpg with its DEFAULT statement cache, for lockscope's driver tests.

What asyncpg sends by default (``statement_cache_size=100`` per connection): the first ``fetch`` of a SQL text on a
connection prepares it as a NAMED server-side statement (``__asyncpg_stmt_N__``: Parse + Describe + Sync), and
every execution, the first included, is Bind/Execute of that statement (extended protocol, binary parameters typed by
the Describe), which the server's plan cache plans custom for its executions 1-5 and generic from the 6th. asyncpg
never sends a parameterized statement unnamed while the cache is on.

Usage: python load.py HOST PORT USER DBNAME CLIENTS SECONDS SQL [TYPE:VALUE ...]   (asyncpg on PYTHONPATH)
  HOST is a Unix socket directory or an address; no password. SQL uses $1..$n (asyncpg's own syntax). TYPE is int
  (a Python int) or text (a str). The loop runs SECONDS, or less if standard input ends first (its end-of-file
  stops the load). Prints one JSON line: {"driver","version","calls","errors","seconds"}.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
import threading
import time

import asyncpg


def fail(message: str) -> None:
    print(f"asyncpg-load: {message}", file=sys.stderr)
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


async def main(argv: list[str]) -> None:
    if len(argv) < 7:
        fail("usage: load.py HOST PORT USER DBNAME CLIENTS SECONDS SQL [TYPE:VALUE ...]")
    host, port, user, dbname, clients, seconds, sql, *raw = argv
    params = [parse_param(p) for p in raw]
    conns = [await asyncpg.connect(host=host, port=int(port), user=user, database=dbname)
             for _ in range(int(clients))]

    calls = errors = 0
    stop = threading.Event()
    threading.Thread(target=end_of_input, args=(stop,), daemon=True).start()
    start = time.monotonic()
    deadline = start + float(seconds)

    async def loop(conn: asyncpg.Connection) -> None:
        nonlocal calls, errors
        while time.monotonic() < deadline and not stop.is_set():
            try:
                await conn.fetch(sql, *params)
            except asyncpg.PostgresError as exc:
                errors += 1
                if errors == 1:
                    print(f"asyncpg-load: first error: {exc}", file=sys.stderr)
                continue
            calls += 1

    await asyncio.gather(*(loop(conn) for conn in conns))
    elapsed = time.monotonic() - start
    for conn in conns:
        await conn.close()
    print(json.dumps({"driver": "asyncpg", "version": asyncpg.__version__, "calls": calls, "errors": errors,
                      "seconds": elapsed}))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
