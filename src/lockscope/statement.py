"""Checking a user's statement before it goes anywhere near a server (pglast, PostgreSQL's own parser).

lockscope probes only single optimizable statements: SELECT (and VALUES, WITH ...), INSERT, UPDATE, DELETE,
MERGE. Utility statements (DDL, VACUUM, COPY, SET, BEGIN, EXPLAIN, EXECUTE, ...), ``SELECT ... INTO``, several
statements and empty input are refused with one line. Text that PostgreSQL's parser (pglast, libpg_query) cannot
parse is refused too, with the parser's message and the 1-based character position psql would show, before any
server is contacted: nothing lockscope has not verified as one probeable statement ever reaches a server.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pglast.parser import ParseError, parse_sql_json, scan

from .errors import BadInputError, StatementParseError, UnsupportedStatementError

__all__ = ["PROBEABLE_KINDS", "CheckedStatement", "bind_params", "check_param_count", "check_statement",
           "check_statements", "raw_statement"]

#: pglast node names of the statements lockscope probes, with the word shown to users.
PROBEABLE_KINDS = {
    "SelectStmt": "SELECT",
    "InsertStmt": "INSERT",
    "UpdateStmt": "UPDATE",
    "DeleteStmt": "DELETE",
    "MergeStmt": "MERGE",
}
_UTILITY_WORD = re.compile(r"Stmt$")


@dataclass(frozen=True)
class CheckedStatement:
    """A statement lockscope agreed to probe.

    :ivar text: the statement without surrounding blanks and trailing semicolons.
    :ivar kind: SELECT, INSERT, UPDATE, DELETE or MERGE.
    :ivar param_count: highest ``$n`` used (count); 0 when none.
    :ivar relation_names: relation names as written (unqualified, lower-cased unless quoted), in text order.
    """

    text: str
    kind: str
    param_count: int
    relation_names: tuple[str, ...]


def _strip(sql: str) -> str:
    text = sql.strip()
    while text.endswith(";"):
        text = text[:-1].rstrip()
    return text


@functools.lru_cache(maxsize=8)
def _parse_json(text: str) -> dict[str, Any]:
    """libpg_query's JSON parse tree of ``text`` (cached by text; callers never mutate it).

    :raises ParseError: the text does not parse.
    """
    tree: dict[str, Any] = json.loads(parse_sql_json(text))
    return tree


def raw_statement(statement: CheckedStatement) -> dict[str, Any]:
    """The raw parse tree node of a checked statement (``{"SelectStmt": {...}}``, libpg_query JSON). The same tree
    every call (cached): do not mutate it."""
    stmt: dict[str, Any] = _parse_json(statement.text)["stmts"][0]["stmt"]
    return stmt


@functools.lru_cache(maxsize=8)
def check_statement(sql: str) -> CheckedStatement:
    """Refuse what lockscope must not or cannot probe; parses the text once (cached by text).

    Uses libpg_query's JSON parse tree (pglast ``parse_sql_json``): a 1 MB statement is checked in well under a
    second, and callers that check the same text again (the CLI, then the probe) get the cached result.

    :param sql: the user's input.
    :return: the statement to probe.
    :raises StatementParseError: the parser rejects the text (its message, ``at character N`` 1-based in ``sql``
        as psql counts, when the parser gives a position).
    :raises UnsupportedStatementError: empty input, several statements, a utility statement, SELECT INTO.
    """
    text = _strip(sql)
    if not text:
        raise UnsupportedStatementError("empty statement: give one SELECT, INSERT, UPDATE, DELETE or MERGE")
    try:
        tree = _parse_json(text)
    except ParseError as exc:
        raise _parse_error(exc, sql, text) from None
    stmts = tree.get("stmts", [])
    if len(stmts) == 0:
        raise UnsupportedStatementError("empty statement: give one SELECT, INSERT, UPDATE, DELETE or MERGE")
    if len(stmts) > 1:
        raise UnsupportedStatementError(
            f"{len(stmts)} statements given: lockscope probes exactly one statement at a time"
        )
    ((name, node),) = stmts[0]["stmt"].items()
    if name not in PROBEABLE_KINDS:
        word = text.split(None, 1)[0].upper() if text.split() else _UTILITY_WORD.sub("", name)
        raise UnsupportedStatementError(
            f"{word} is a utility statement ({name}): lockscope probes only SELECT, INSERT, UPDATE, DELETE "
            "and MERGE"
        )
    if name == "SelectStmt" and node.get("intoClause") is not None:
        raise UnsupportedStatementError("SELECT ... INTO creates a table: probe the SELECT without INTO")
    return CheckedStatement(text, PROBEABLE_KINDS[name], _max_param(text), _relation_names(node))


def check_statements(sql: str, *, where: str = "") -> tuple[CheckedStatement, ...]:
    """Several statements separated by ``;`` (a queries file), each checked as :func:`check_statement` does.

    :param where: what holds them, for messages (e.g. ``"queries.sql"``).
    :return: the statements in order (at least one).
    :raises StatementParseError: the text does not parse (position in ``sql``).
    :raises UnsupportedStatementError: empty input, or a statement lockscope does not probe (its number named).
    """
    from pglast import split

    text = _strip(sql)
    if not text:
        raise UnsupportedStatementError("empty statement: give one SELECT, INSERT, UPDATE, DELETE or MERGE")
    try:
        tree = _parse_json(text)
    except ParseError as exc:
        raise _parse_error(exc, sql, text) from None
    if len(tree.get("stmts", [])) <= 1:
        return (check_statement(sql),)
    parts = [p for p in split(text) if p.strip()]
    out = []
    for n, part in enumerate(parts, 1):
        try:
            out.append(check_statement(part))
        except BadInputError as exc:
            raise type(exc)(f"statement {n} of {len(parts)}{' in ' + where if where else ''}: {exc}") from None
    return tuple(out)


def _parse_error(exc: ParseError, sql: str, text: str) -> StatementParseError:
    """The one-line refusal of a text the parser rejects.

    pglast's ``ParseError.args`` are (message, location): location is the 0-based character offset in the parsed
    text (libpg_query's cursor position minus one, converted from bytes to characters by pglast), or None, e.g. for
    ``syntax error at end of input``, where the server reports the position just past the text. psql reports the
    server's 1-based ``at character N``; so does lockscope, counted in ``sql`` as the user gave it.
    """
    message = str(exc.args[0]) if exc.args else str(exc)
    location = exc.args[1] if len(exc.args) > 1 and isinstance(exc.args[1], int) else None
    lead = len(sql) - len(sql.lstrip())  # _strip removed these characters before parsing
    if location is None and message.endswith("at end of input"):
        location = len(text)
    position = lead + location + 1 if location is not None else None
    where = f" (at character {position})" if position is not None else ""
    return StatementParseError(f"the statement does not parse: {message}{where}; nothing was sent to a server",
                               position)


def check_param_count(statement: CheckedStatement, params: Sequence[str], param_types: Sequence[str] = ()) -> None:
    """Refuse a parameter count that cannot work, before any server is contacted.

    ``$1..$n`` need one ``--param`` value each. With ``--param-type`` (prepared protocol), the statement has as
    many parameters as declared types when that is more than its highest ``$n`` (``PREPARE name (int) AS ...``
    declares an unused ``$1``), and ``EXECUTE`` needs a value for each.

    :raises BadInputError: naming the counts.
    """
    wanted = max(statement.param_count, len(param_types))
    if len(params) == wanted:
        return
    if statement.param_count >= len(param_types):
        raise BadInputError(
            f"the statement uses {statement.param_count} parameter(s) ($1..${statement.param_count}) "
            f"but {len(params)} --param value(s) were given"
        )
    raise BadInputError(f"{len(param_types)} --param-type(s) declare {wanted} parameter(s) "
                        f"but {len(params)} --param value(s) were given")


def _param_tokens(text: str) -> list[tuple[int, int, int]]:
    """(start, end_exclusive, number) of each ``$n`` token, in character offsets (pglast's ``scan`` gives
    character offsets, its ``end`` inclusive)."""
    return [(tok.start, tok.end + 1, int(text[tok.start + 1: tok.end + 1])) for tok in scan(text)
            if tok.name == "PARAM"]


def _max_param(text: str) -> int:
    try:
        return max((n for _, _, n in _param_tokens(text)), default=0)
    except ParseError:
        return 0


def _relation_names(node: object) -> tuple[str, ...]:
    """Distinct ``RangeVar`` relation names of a JSON parse tree, in text order (by ``location``)."""
    found: list[tuple[int, str]] = []
    stack: list[object] = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            rv = item.get("RangeVar")
            if isinstance(rv, dict) and "relname" in rv:
                found.append((int(rv.get("location", -1)), str(rv["relname"])))
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return tuple(dict.fromkeys(name for _, name in sorted(found)))


def bind_params(statement: CheckedStatement, params: Sequence[str], quote: Callable[[str], str]) -> str:
    """The statement with each ``$n`` replaced by the quoted literal of ``params[n-1]`` (simple protocol).

    Untyped literals are what a psql user types: the server coerces them to the column's type, and a value of
    the wrong type fails there with the server's message.

    :param quote: turns a value into a SQL string literal (``Session.literal``).
    :raises BadInputError: when the number of values differs from the highest ``$n``.
    """
    check_param_count(statement, params)
    if not params:
        return statement.text
    text = statement.text
    for start, end, number in reversed(_param_tokens(text)):
        text = text[:start] + quote(params[number - 1]) + text[end:]
    return text
