"""Scripts of statements as PostgreSQL runs them: transactions, and pgbench's variables and ``\\set`` lines.

A file (or standard input, or a pgbench ``-f`` script) is read into :class:`Transaction` s the way the server will
see them:

- statements between ``BEGIN`` (or ``START TRANSACTION``) and ``COMMIT`` / ``END`` / ``ROLLBACK`` are one
  transaction: their locks accumulate and are held to its end (``lock.c LockReleaseAll`` at commit or abort);
- every statement outside such a block is a transaction of its own, as psql and pgbench send it in autocommit.

pgbench scripts (``pgbench.c``) are read as pgbench reads them:

- a line starting with a backslash is a meta-command; ``\\set NAME EXPR`` is evaluated
  (:mod:`lockscope.pgbench_expr`), ``\\sleep`` is ignored, a trailing backslash continues the line; other
  meta-commands (``\\if``, ``\\gset``, ``\\setshell``, ...) are refused: their effect is not known before running;
- SQL commands end at ``;``; ``:name`` in SQL is a variable (``pgbench.c parseVariable``). With the prepared or
  extended protocol every occurrence becomes its own parameter ``$n`` (``parseQuery``, so a variable used twice is
  two parameters); with the simple protocol its value is pasted into the text (``assignVariables``). Variables
  ``scale`` (``--scale``, 1 by default), ``client_id`` (0) and ``random_seed`` are predefined, as in pgbench.

Random functions draw from a generator seeded per script execution (:func:`read_script` ``execution``), so each
execution of a transaction gets its own values and the same values every time.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pglast import split
from pglast.parser import ParseError, parse_sql_json

from .errors import BadInputError
from .pgbench_expr import ExpressionError, Value, evaluate

__all__ = ["Script", "ScriptStatement", "Transaction", "TransactionControl", "read_script"]

#: Meta-commands a script may use (the others change what runs in ways known only when it runs).
_ALLOWED_META = frozenset({"set", "sleep"})
_META = re.compile(r"^\\([A-Za-z]+)\b\s*(.*)$", re.S)
_SET = re.compile(r"^([A-Za-z_\x80-\uffff][A-Za-z0-9_\x80-\uffff]*)\s+(.+)$", re.S)
_VARIABLE = re.compile(r":([A-Za-z_\x80-\uffff][A-Za-z0-9_\x80-\uffff]*)")
#: pgbench's random_seed when none is given (any fixed value: lockscope's runs are reproducible).
DEFAULT_RANDOM_SEED = 0


class TransactionControl:
    """How a transaction-control statement moves the block (parsenodes.h ``TransactionStmtKind`` names)."""

    OPEN = frozenset({"TRANS_STMT_BEGIN", "TRANS_STMT_START"})
    CLOSE = frozenset({"TRANS_STMT_COMMIT", "TRANS_STMT_ROLLBACK"})
    #: Savepoints keep every lock of the transaction (a released subtransaction's locks pass to its parent,
    #: ``lock.c LockReassignCurrentOwner``); ``ROLLBACK TO`` releases locks and is refused.
    KEEP = frozenset({"TRANS_STMT_SAVEPOINT", "TRANS_STMT_RELEASE"})


@dataclass(frozen=True)
class ScriptStatement:
    """One statement of a script, as the server receives it.

    :ivar text: the statement; pgbench variables as ``$1..$n`` (prepared/extended protocol) or their values pasted
        in (simple protocol).
    :ivar params: values of ``$1..$n`` as text (empty with the simple protocol or without variables).
    :ivar original: the statement as written, blanks collapsed.
    :ivar line: 1-based line of the script where it starts.
    :ivar kind: libpg_query node name (``SelectStmt``, ``InsertStmt``, ``CreateStmt``, ...).
    """

    text: str
    params: tuple[str, ...]
    original: str
    line: int
    kind: str


@dataclass(frozen=True)
class Transaction:
    """Statements the server runs as one transaction.

    :ivar statements: in order (transaction control left out).
    :ivar explicit: True inside ``BEGIN ... COMMIT``, False for a statement in autocommit.
    :ivar line: 1-based line of its first statement (or of its ``BEGIN``).
    """

    statements: tuple[ScriptStatement, ...]
    explicit: bool
    line: int


@dataclass(frozen=True)
class Script:
    """A script read into transactions.

    :ivar transactions: in order.
    :ivar pgbench: True when the text uses pgbench's meta-commands or variables.
    """

    transactions: tuple[Transaction, ...]
    pgbench: bool

    @property
    def statements(self) -> tuple[ScriptStatement, ...]:
        """Every statement, in order."""
        return tuple(s for t in self.transactions for s in t.statements)

    @property
    def has_blocks(self) -> bool:
        """True when any transaction is an explicit ``BEGIN ... COMMIT`` block."""
        return any(t.explicit for t in self.transactions)


@dataclass
class _Reader:
    """State while reading: variables, the open block, the collected transactions."""

    protocol: str
    variables: dict[str, Value]
    rng: random.Random
    where: str
    pgbench: bool = False
    block: list[ScriptStatement] | None = None
    block_line: int = 0
    out: list[Transaction] | None = None

    def fail(self, line: int, message: str) -> BadInputError:
        return BadInputError(f"{self.where}line {line}: {message}")


def read_script(text: str, *, protocol: str = "prepared", where: str = "", scale: int = 1, execution: int = 1,
                variables: Mapping[str, str] | None = None) -> Script:
    """Read a SQL file or pgbench script into transactions.

    :param text: the script.
    :param protocol: ``simple``, ``extended`` or ``prepared``: how pgbench variables reach the server.
    :param where: the file name, for messages (``"queries.sql"``).
    :param scale: the value of ``:scale`` (pgbench ``--scale``).
    :param execution: which execution of the script (1-based): seeds the random functions, so that each
        execution draws its own values (``random_seed`` + execution).
    :param variables: ``-D NAME=VALUE`` definitions (text values, as pgbench takes them).
    :raises BadInputError: SQL that does not parse, an unknown or unsupported meta-command, an undefined
        variable, a ``BEGIN`` inside a block or a ``COMMIT`` outside one, ``ROLLBACK TO SAVEPOINT``, a block left
        open at the end, no statement at all (each naming the line).
    """
    if protocol not in ("simple", "extended", "prepared"):
        raise BadInputError(f"unknown protocol {protocol!r}: use simple, extended or prepared")
    values: dict[str, Value] = {"scale": scale, "client_id": 0, "random_seed": DEFAULT_RANDOM_SEED,
                                "default_seed": DEFAULT_RANDOM_SEED}
    for name, value in (variables or {}).items():
        values[name] = _typed(value)
    reader = _Reader(protocol, values, random.Random(f"{DEFAULT_RANDOM_SEED}:{execution}"),
                     f"{where}: " if where else "", out=[])
    pending: list[tuple[int, str]] = []  # SQL lines not yet ended by ';'
    for line_no, line in _logical_lines(text):
        meta = _META.match(line.strip())
        if meta is None:
            pending.append((line_no, line))
            continue
        _flush(reader, pending, final=False)
        pending = []
        _meta(reader, line_no, meta.group(1).lower(), meta.group(2).strip())
    _flush(reader, pending, final=True)
    if reader.block is not None:
        raise reader.fail(reader.block_line, "BEGIN without COMMIT: the transaction is never ended")
    assert reader.out is not None
    if not reader.out:
        raise BadInputError(f"{reader.where}no SQL statement")
    return Script(tuple(reader.out), reader.pgbench)


def _typed(value: str) -> Value:
    try:
        return int(value)
    except ValueError:
        try:
            return float(value)
        except ValueError:
            return value  # pgbench keeps other values as text


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """(first line number, text) with meta-commands' backslash continuations joined (pgbench ``psqlscanslash``)."""
    lines = text.splitlines()
    out: list[tuple[int, str]] = []
    i = 0
    while i < len(lines):
        start, line = i + 1, lines[i]
        i += 1
        if line.lstrip().startswith("\\"):
            while line.rstrip().endswith("\\") and i < len(lines):
                line = line.rstrip()[:-1] + " " + lines[i]
                i += 1
        out.append((start, line))
    return out


def _meta(reader: _Reader, line: int, name: str, rest: str) -> None:
    reader.pgbench = True
    if name not in _ALLOWED_META:
        raise reader.fail(line, f"\\{name} is not supported: lockscope reads \\set and \\sleep, and cannot know "
                                "in advance what other meta-commands do")
    if name == "set":
        match = _SET.match(rest)
        if match is None:
            raise reader.fail(line, "\\set needs a variable name and an expression")
        try:
            reader.variables[match.group(1)] = evaluate(match.group(2), reader.variables, reader.rng)
        except ExpressionError as exc:
            raise reader.fail(line, f"\\set {match.group(1)}: {exc}") from None


def _flush(reader: _Reader, pending: list[tuple[int, str]], *, final: bool) -> None:
    """Turn the collected SQL lines into statements (pgbench ends a SQL command at ``;``: a meta-command in the
    middle of an unfinished one is a syntax error there too)."""
    sql = "\n".join(text for _, text in pending)
    if not sql.strip() or not _has_sql(sql):
        return
    first = next(n for n, text in pending if text.strip())
    for offset, piece, kind, node in _pieces(reader, sql, first):
        _statement(reader, first + offset, piece, kind, node)


def _has_sql(sql: str) -> bool:
    """False for text made only of comments and semicolons."""
    try:
        return bool(split(sql))
    except ParseError:
        return True


def _pieces(reader: _Reader, sql: str, first: int) -> list[tuple[int, str, str, dict[str, Any]]]:
    """The statements of a SQL chunk: (line offset, text with pgbench variables still in place, libpg_query node
    name, node). libpg_query parses the chunk with a ``$1`` stand-in of the same length for each variable, so its
    statement locations are those of the chunk."""
    stand_in = _VARIABLE.sub(lambda m: "$1" + " " * (len(m.group(0).encode()) - 2), sql.replace("::", "\x00\x00"))
    stand_in = stand_in.replace("\x00\x00", "::")
    try:
        stmts = json.loads(parse_sql_json(stand_in)).get("stmts", [])
    except ParseError as exc:
        raise reader.fail(first, f"the SQL does not parse: {exc.args[0] if exc.args else exc}") from None
    data = sql.encode("utf-8")
    out = []
    for stmt in stmts:
        start = int(stmt.get("stmt_location", 0))
        length = int(stmt.get("stmt_len", 0)) or len(data) - start
        piece = data[start : start + length].decode("utf-8")
        lead = len(piece) - len(piece.lstrip())
        ((kind, node),) = stmt["stmt"].items()
        out.append((data[:start].decode("utf-8").count("\n") + piece[:lead].count("\n"), piece.strip(), kind,
                    node))
    return out


def _statement(reader: _Reader, line: int, piece: str, kind: str, node: dict[str, Any]) -> None:
    text, params = _bind(reader, line, piece)
    if kind == "TransactionStmt":
        _control(reader, line, str(node.get("kind", "")))
        return
    stmt = ScriptStatement(text, params, " ".join(piece.split()), line, kind)
    assert reader.out is not None
    if reader.block is None:
        reader.out.append(Transaction((stmt,), False, line))
    else:
        reader.block.append(stmt)


def _control(reader: _Reader, line: int, kind: str) -> None:
    assert reader.out is not None
    if kind in TransactionControl.OPEN:
        if reader.block is not None:
            raise reader.fail(line, "BEGIN inside a transaction block (PostgreSQL only warns and ignores it: "
                                    "remove it)")
        reader.block, reader.block_line = [], line
    elif kind in TransactionControl.CLOSE:
        if reader.block is None:
            raise reader.fail(line, "COMMIT or ROLLBACK without BEGIN")
        reader.out.append(Transaction(tuple(reader.block), True, reader.block_line))
        reader.block = None
    elif kind not in TransactionControl.KEEP:
        raise reader.fail(line, f"{kind.removeprefix('TRANS_STMT_').replace('_', ' ')} is not supported: "
                                "lockscope models transactions that end with COMMIT or ROLLBACK")


def _bind(reader: _Reader, line: int, piece: str) -> tuple[str, tuple[str, ...]]:
    """pgbench's variable handling for one statement: ``$n`` per occurrence with its value (prepared, extended:
    ``pgbench.c parseQuery``), or values pasted in (simple: ``assignVariables``; an undefined name stays as
    written). ``::`` casts are skipped, as ``parseVariable`` finds no name after a colon."""
    params: list[str] = []
    out: list[str] = []
    pos = 0
    for m in _VARIABLE.finditer(piece):
        if m.start() > 0 and piece[m.start() - 1] == ":":
            continue
        name = m.group(1)
        if reader.protocol == "simple":
            if name in reader.variables:
                out += [piece[pos : m.start()], _text(reader.variables[name])]
                pos = m.end()
            continue
        if name not in reader.variables:
            raise reader.fail(line, f"undefined variable :{name}")
        params.append(_text(reader.variables[name]))
        out += [piece[pos : m.start()], f"${len(params)}"]
        pos = m.end()
    out.append(piece[pos:])
    if params or reader.protocol == "simple":
        reader.pgbench = reader.pgbench or bool(params) or "".join(out) != piece
    return "".join(out), tuple(params)


def _text(value: Value) -> str:
    """A variable's value as pgbench sends it (``pgbench.c makeVariableValue`` / ``valueTypeName`` text forms)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)
