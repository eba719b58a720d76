"""Reading PostgreSQL's node dumps (``outfuncs.c nodeToString`` text) into plain Python values.

lockscope reads one kind of node dump on users' servers: a view's stored query, ``pg_rewrite.ev_action`` (the
rule action the rewriter expands, :mod:`lockscope.querytree`). The tests read a second one on their own scratch
servers: the rewritten query tree the server prints with ``debug_print_rewritten`` (``print.c
elog_node_display``, ``debug_pretty_print = off``: ``format_node_dump`` only replaces blanks by line breaks, so
joining the lines with blanks restores ``nodeToString``'s text).

Grammar (``read.c pg_strtok`` / ``readfuncs.c``): ``{NAME :field value ...}`` is a node, ``( ... )`` a list
(``(i 1 2)``, ``(o 16384)``, ``(b 1 3)`` are integer, OID and bitmapset lists), ``<>`` is NULL, anything else an
atom; ``\\`` escapes the next character. A node becomes ``{"node": NAME, field: value, ...}``; a field's value is
one item, or a list of items when the field holds several tokens (e.g. a datum ``4 [ 1 0 0 0 ]``).
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any

__all__ = ["NodeDumpError", "parse_node_dump", "walk_nodes"]


class NodeDumpError(ValueError):
    """The text is not a node dump lockscope can read."""


#: Node names that changed: PG 13-14's outfuncs.c wrote a RangeTblEntry as ``RTE`` (PG 15+: ``RANGETBLENTRY``).
_NODE_NAMES = {"RTE": "RANGETBLENTRY"}
_TOKEN = re.compile(r"[(){}]|(?:\\.|[^\s(){}\\])+", re.S)
_ESCAPE = re.compile(r"\\(.)", re.S)


def _tokens(text: str) -> list[str]:
    """``read.c pg_strtok``: brackets, and runs of other characters up to a blank or bracket; a backslash
    escapes the next character (an escaped leading ``:`` keeps its backslash, so it is not read as a field)."""
    out: list[str] = []
    for raw in _TOKEN.findall(text):
        if "\\" not in raw:
            out.append(raw)
            continue
        token = _ESCAPE.sub(r"\1", raw)
        out.append("\\" + token if raw.startswith("\\:") else token)
    return out


def parse_node_dump(text: str) -> Any:
    """Parse one ``nodeToString`` dump (as ``format_node_dump`` prints it; line breaks are blanks).

    :param text: e.g. ``({QUERY :commandType 1 ...})``.
    :return: nested dicts (nodes, key ``node`` = node name), lists and atom strings; ``None`` for ``<>``.
    :raises NodeDumpError: unbalanced brackets or an empty text.
    """
    toks = _tokens(text)
    pos = 0

    def item() -> Any:
        nonlocal pos
        tok = toks[pos]
        if tok == "{":
            pos += 1
            node: dict[str, Any] = {"node": _NODE_NAMES.get(toks[pos], toks[pos])}
            pos += 1
            while toks[pos] != "}":
                field = toks[pos]
                if not field.startswith(":"):
                    raise NodeDumpError(f"expected a field name in {node['node']}, got {field!r}")
                pos += 1
                values: list[Any] = []
                while toks[pos] != "}" and not toks[pos].startswith(":"):
                    values.append(item())
                node[field[1:]] = values[0] if len(values) == 1 else (values or None)
            pos += 1
            return node
        if tok == "(":
            pos += 1
            items: list[Any] = []
            while toks[pos] != ")":
                items.append(item())
            pos += 1
            if items and items[0] in ("i", "o", "b", "x") and all(isinstance(x, str) for x in items):
                return [int(x) for x in items[1:]] if items[0] in ("i", "o", "b") else items[1:]
            return items
        pos += 1
        return None if tok == "<>" else tok

    if not toks:
        raise NodeDumpError("empty node dump")
    try:
        result = item()
    except IndexError:
        raise NodeDumpError("node dump ends early (unbalanced brackets)") from None
    return result


def walk_nodes(value: Any, name: str, *, skip: Collection[str] = ()) -> list[dict[str, Any]]:
    """Every node called ``name`` inside ``value``, depth first in text order (not descending into matches, nor
    into nodes called one of ``skip``)."""
    found: list[dict[str, Any]] = []

    def visit(v: Any) -> None:
        if isinstance(v, dict):
            if v.get("node") == name:
                found.append(v)
                return
            if v.get("node") in skip:
                return
            for key, sub in v.items():
                if key != "node":
                    visit(sub)
        elif isinstance(v, list):
            for sub in v:
                visit(sub)

    visit(value)
    return found
