"""The server's own rewritten query tree: the test oracle for :mod:`lockscope.querytree`.

Only on scratch servers the tests start, over a connection of its own: ``PREPARE`` with ``debug_print_rewritten =
on`` and ``client_min_messages = log`` sends the tree to the client as a LOG notice (``postgres.c
pg_rewrite_query``, ``print.c elog_node_display``) — and writes it to the server log as well, which is why lockscope
itself never does this on any server (docs/safety.md).
"""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Sequence
from typing import Any

import psycopg

from lockscope.pgnodes import NodeDumpError, parse_node_dump, query_from_dump
from lockscope.querynodes import Query

_names = itertools.count(1)
_SETTINGS = (b"BEGIN READ ONLY; SET LOCAL debug_print_rewritten = on; SET LOCAL client_min_messages = log; "
             b"SET LOCAL debug_pretty_print = off")


def server_tree(conninfo: str, sql: str) -> Query | None:
    """The rewritten Query the server builds for ``sql`` as typed nodes (:func:`lockscope.pgnodes.query_from_dump`),
    or None when it printed none holding an optimizable Query. In a READ ONLY transaction that is rolled back.

    PG 15+: ``PREPARE`` (then ``DEALLOCATE``). PG 13-14 rewrite a PREPARE without printing it, so there the
    statement itself is sent (extended protocol, NULL for each ``$n``): ``exec_parse_message`` prints the tree
    before anything runs, DML then stops at the read-only check, SELECTs read the tests' small tables.
    """
    notes: list[tuple[str, str, str]] = []
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.add_notice_handler(lambda d: notes.append((d.severity or "", d.message_primary or "",
                                                        d.message_detail or "")))
        major = conn.info.server_version // 10000
        conn.execute(_SETTINGS)
        try:
            if major < 15:
                params = len(set(re.findall(r"\$(\d+)", sql)))
                conn.pgconn.exec_params(sql.encode(), [None] * params)  # libpq: $n as they are, NULL values
            else:
                name = f"oracle_{os.getpid()}_{next(_names)}"
                conn.execute(f"PREPARE {name} AS {sql}".encode())
                conn.execute(b"ROLLBACK")
                conn.execute(f"DEALLOCATE {name}".encode())
        finally:
            if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                conn.execute(b"ROLLBACK")
    found = _rewritten_tree(notes)
    return None if found is None else query_from_dump(found)


def _rewritten_tree(notes: Sequence[tuple[str, str, str]]) -> dict[str, Any] | None:
    """The last ``rewritten parse tree`` notice that holds an optimizable Query (PREPARE's own utility tree comes
    first, ``prepare.c PrepareQuery`` prints the statement's)."""
    for severity, message, detail in reversed(notes):
        if severity != "LOG" or not message.startswith("rewritten parse tree") or not detail:
            continue
        try:
            tree = parse_node_dump(detail.replace("\n", " "))
        except NodeDumpError:
            continue
        queries = [q for q in (tree if isinstance(tree, list) else [tree]) if isinstance(q, dict)]
        tagged = [q for q in queries if q.get("canSetTag") == "true"] or queries
        if tagged and tagged[0].get("utilityStmt") is None:  # PG 13 prints a utility statement as "?"
            return tagged[0]
    return None
