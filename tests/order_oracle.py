"""The server's own rewritten query tree: the test oracle for :mod:`lockscope.querytree`.

Only on scratch servers the tests start: ``PREPARE`` with ``debug_print_rewritten = on`` and
``client_min_messages = log`` sends the tree to the client as a LOG notice (``postgres.c pg_rewrite_query``,
``print.c elog_node_display``), and writes it to the server log as well — which is why lockscope itself never does
this on any server (docs/safety.md).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Sequence
from typing import Any

from lockscope.db import Session
from lockscope.pgnodes import NodeDumpError, parse_node_dump

_names = itertools.count(1)


def server_tree(session: Session, sql: str) -> dict[str, Any] | None:
    """The rewritten Query the server builds for ``sql`` (PREPARE, rolled back, then DEALLOCATE), or None when
    the server printed none that holds an optimizable Query."""
    name = f"oracle_{os.getpid()}_{next(_names)}"
    settings = {"debug_print_rewritten": "on", "client_min_messages": "log", "debug_pretty_print": "off"}
    with session.probe_transaction(**settings), session.notices() as notes:
        session.run_user_text(f"PREPARE {name} AS {sql}")
    with session.probe_transaction():
        session.fetch_all(f"DEALLOCATE {name}")
    return _rewritten_tree(notes)


def _rewritten_tree(notes: Sequence[tuple[str, str, str]]) -> dict[str, Any] | None:
    """The last ``rewritten parse tree`` notice that holds an optimizable Query (PREPARE's own utility tree comes
    first, ``prepare.c PrepareQuery`` prints the statement's)."""
    for severity, message, detail in reversed(notes):
        if severity != "LOG" or not message.startswith("rewritten parse tree") or not detail:
            continue
        try:
            tree = parse_node_dump(detail.replace("\n", " "))
        except NodeDumpError:
            return None
        queries = [q for q in (tree if isinstance(tree, list) else [tree]) if isinstance(q, dict)]
        tagged = [q for q in queries if q.get("canSetTag") == "true"] or queries
        if tagged and tagged[0].get("utilityStmt") is None:
            return tagged[0]
    return None
