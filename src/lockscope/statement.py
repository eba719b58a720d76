"""Checking a user's statement before it goes anywhere near a server (pglast, PostgreSQL's own parser).

lockscope probes only single optimizable statements: SELECT (and VALUES, WITH ...), INSERT, UPDATE, DELETE,
MERGE. Utility statements (DDL, VACUUM, COPY, SET, BEGIN, EXPLAIN, EXECUTE, ...), ``SELECT ... INTO``, several
statements and empty input are refused with one line. Text pglast cannot parse is left for the server to judge
(its message and position are what the user sees) — it still goes only through EXPLAIN in a read-only,
rolled-back transaction, sent with the extended protocol, which refuses several statements.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pglast import parse_sql
from pglast.parser import ParseError, scan

from .errors import BadInputError, UnsupportedStatementError

__all__ = ["PROBEABLE_KINDS", "CheckedStatement", "bind_params", "check_statement"]

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
    :ivar kind: SELECT, INSERT, UPDATE, DELETE, MERGE, or ``unknown`` when only the server can parse it.
    :ivar param_count: highest ``$n`` used (count); 0 when none or unknown.
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


def check_statement(sql: str) -> CheckedStatement:
    """Refuse what lockscope must not or cannot probe.

    :param sql: the user's input.
    :return: the statement to probe.
    :raises UnsupportedStatementError: empty input, several statements, a utility statement, SELECT INTO.
    """
    text = _strip(sql)
    if not text:
        raise UnsupportedStatementError("empty statement: give one SELECT, INSERT, UPDATE, DELETE or MERGE")
    try:
        stmts = parse_sql(text)
    except ParseError:
        # The server's parser decides (possibly a newer grammar); its message is clearer than ours.
        return CheckedStatement(text, "unknown", 0, ())
    if len(stmts) == 0:
        raise UnsupportedStatementError("empty statement: give one SELECT, INSERT, UPDATE, DELETE or MERGE")
    if len(stmts) > 1:
        raise UnsupportedStatementError(
            f"{len(stmts)} statements given: lockscope probes exactly one statement at a time"
        )
    node = stmts[0].stmt
    name = type(node).__name__
    if name not in PROBEABLE_KINDS:
        word = text.split(None, 1)[0].upper() if text.split() else _UTILITY_WORD.sub("", name)
        raise UnsupportedStatementError(
            f"{word} is a utility statement ({name}): lockscope probes only SELECT, INSERT, UPDATE, DELETE "
            "and MERGE"
        )
    if name == "SelectStmt" and getattr(node, "intoClause", None) is not None:
        raise UnsupportedStatementError("SELECT ... INTO creates a table: probe the SELECT without INTO")
    return CheckedStatement(text, PROBEABLE_KINDS[name], _max_param(text), _relation_names(node))


def _param_tokens(text: str) -> list[tuple[int, int, int]]:
    """(start, end_exclusive, number) of each ``$n`` token, in character offsets."""
    data = text.encode("utf-8")
    out = []
    for token in scan(text):
        if token.name == "PARAM":
            raw = data[token.start : token.end + 1].decode("utf-8")
            start = len(data[: token.start].decode("utf-8"))
            out.append((start, start + len(raw), int(raw[1:])))
    return out


def _max_param(text: str) -> int:
    try:
        return max((n for _, _, n in _param_tokens(text)), default=0)
    except ParseError:
        return 0


def _relation_names(node: object) -> tuple[str, ...]:
    from pglast import ast
    from pglast.visitors import Visitor

    names: list[str] = []

    class _Collect(Visitor):  # type: ignore[misc]
        def visit_RangeVar(self, ancestors: object, rv: ast.RangeVar) -> None:
            names.append(rv.relname)

    _Collect()(node)
    return tuple(dict.fromkeys(names))


def bind_params(statement: CheckedStatement, params: Sequence[str], quote: Callable[[str], str]) -> str:
    """The statement with each ``$n`` replaced by the quoted literal of ``params[n-1]`` (simple protocol).

    Untyped literals are what a psql user types: the server coerces them to the column's type, and a value of
    the wrong type fails there with the server's message.

    :param quote: turns a value into a SQL string literal (``Session.literal``).
    :raises BadInputError: when the number of values differs from the highest ``$n``.
    """
    if statement.param_count != len(params):
        raise BadInputError(
            f"the statement uses {statement.param_count} parameter(s) ($1..${statement.param_count}) "
            f"but {len(params)} --param value(s) were given"
        )
    if not params:
        return statement.text
    text = statement.text
    for start, end, number in reversed(_param_tokens(text)):
        text = text[:start] + quote(params[number - 1]) + text[end:]
    return text
