"""What a transaction really holds, execution by execution: the test oracle for transaction footprints.

Only on scratch servers the tests start: the statements RUN (a transaction per execution, always rolled back), on one
connection, so the backend's plan caches (the statements' own prepared plans, the RI checks' SPI plans of
``ri_triggers.c``, PL/pgSQL's) advance from one execution to the next as an application's would. After each
statement the backend's own lock table entries are read with ``pg_catalog.pg_lock_status()`` — the function, not
the ``pg_locks`` view, whose AccessShareLock would take a fast-path slot mid-transaction (``lockfuncs.c
pg_lock_status``: fast-path slots first, then the main lock table). Relation OIDs are named in a transaction of
their own after the rollback, so the naming query's catalog locks are never among the measured ones.

The corpus of cases (``tests/data/txn/*.sql``) is read by :func:`load_cases`; the format is in
``tests/data/txn/README.md``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import psycopg

from lockscope.versions import PG19

__all__ = ["CORPUS_DIR", "Case", "HeldLock", "StatementLocks", "Stmt", "TxnRun", "TxnTruth", "load_case",
           "load_cases", "run_transaction", "setup_case"]

CORPUS_DIR = Path(__file__).parent / "data" / "txn"

_LOCKS_SQL = (b"SELECT locktype, database::int8, relation::int8, mode, fastpath "
              b"FROM pg_catalog.pg_lock_status() WHERE pid = pg_catalog.pg_backend_pid() AND granted")
_NAMES_SQL = (  # a TOAST table and its index are named after their table: "doc:toast", "doc:toast_index"
    "SELECT c.oid::int8, n.nspname, CASE WHEN t.oid IS NOT NULL THEN t.relname || ':toast' "
    "WHEN ti.oid IS NOT NULL THEN ti.relname || ':toast_index' ELSE c.relname END, c.relkind::text "
    "FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
    "LEFT JOIN pg_catalog.pg_class t ON c.relkind = 't' AND t.reltoastrelid = c.oid "
    "LEFT JOIN pg_catalog.pg_index i ON n.nspname = 'pg_toast' AND i.indexrelid = c.oid "
    "LEFT JOIN pg_catalog.pg_class ti ON ti.reltoastrelid = i.indrelid "
    "WHERE c.oid = ANY(%s)")


@dataclass(frozen=True)
class Stmt:
    """One statement of a transaction.

    :ivar sql: the statement text with ``$1..$n`` placeholders, each once and in order (rewritten to psycopg's
        ``%s``; a literal ``%`` is kept).
    :ivar params: parameter values, sent as psycopg adapts them: a ``str`` as an unknown-typed value the server
        types from the statement (what the corpus sends), an ``int`` as int2/int4/int8 ...
    :ivar prepared: True: a named prepared statement (psycopg ``prepare=True``: Parse once, then Bind/Execute per
        execution, the server's plan cache ``plancache.c GetCachedPlan``); False: the simple query protocol with the
        values bound on the client (``psycopg.ClientCursor``), planned afresh every time.
    """

    sql: str
    params: tuple[object, ...] = ()
    prepared: bool = False


@dataclass(frozen=True, order=True)
class HeldLock:
    """One granted relation lock the backend held (one pg_lock_status row).

    :ivar relation: ``schema.name`` (``pg_class`` of the current database; a TOAST table and its index as
        ``pg_toast.TABLE:toast`` and ``pg_toast.TABLE:toast_index``), or ``oid:N`` for a relation dropped or of another
        database.
    :ivar mode: lock mode as pg_locks spells it (``AccessShareLock`` ...).
    :ivar fastpath: True: a fast-path slot; False: the main lock table.
    :ivar relkind: ``pg_class.relkind`` (``r`` table, ``p`` partitioned table, ``i`` index, ``I`` partitioned
        index, ``S`` sequence, ``t`` TOAST table, ``v`` view, ...), ``?`` when unknown.
    :ivar oid: the relation's OID.
    """

    relation: str
    mode: str
    fastpath: bool
    relkind: str = field(default="?", compare=False)
    oid: int = field(default=0, compare=False)

    @property
    def name(self) -> str:
        """The relation name without its schema."""
        return self.relation.rsplit(".", 1)[-1]


@dataclass(frozen=True)
class StatementLocks:
    """The backend's lock table entries right after one statement of the transaction.

    :ivar statement: 0-based position in the transaction.
    :ivar locks: every granted relation lock held (cumulative since the transaction began), sorted.
    :ivar main_by_locktype: the granted entries outside the fast path by pg_locks ``locktype`` (``relation``,
        ``transactionid``, ``object``, ``tuple``, ...), as sorted (locktype, count) pairs; ``virtualxid`` entries
        in fast path are not counted (a backend's own VXID lock lives in its fast-path area, ``lock.c
        VirtualXactLockTableInsert``).
    """

    statement: int
    locks: tuple[HeldLock, ...]
    main_by_locktype: tuple[tuple[str, int], ...]

    @property
    def main_table_count(self) -> int:
        """Relation locks in the main lock table (count)."""
        return sum(not lk.fastpath for lk in self.locks)

    def names(self, fastpath: bool | None = None) -> tuple[tuple[str, str], ...]:
        """(name without schema, mode) of the held locks, sorted; only fast-path or main-table ones when asked."""
        return tuple(sorted((lk.name, lk.mode) for lk in self.locks if fastpath is None or lk.fastpath == fastpath))


@dataclass(frozen=True)
class TxnRun:
    """One execution of the transaction (the k-th on the backend).

    :ivar execution: 1-based.
    :ivar statements: one :class:`StatementLocks` per statement, in order.
    :ivar fastpath_exceeded: PG 19+: relation locks this execution acquired in the main lock table although they
        were fast-path eligible (``pg_stat_lock.fastpath_exceeded`` of locktype ``relation``, before and after the
        transaction; ``lock.c LockAcquireExtended`` counts every such acquisition, those released before the end of
        the transaction too); None before PG 19. Read on the test's own server, where no other backend takes locks.
    """

    execution: int
    statements: tuple[StatementLocks, ...]
    fastpath_exceeded: int | None = None

    @property
    def final(self) -> StatementLocks:
        """The entries after the last statement (what the transaction holds at COMMIT)."""
        return self.statements[-1]


@dataclass(frozen=True)
class TxnTruth:
    """What a transaction held, execution by execution, on one server.

    :ivar server_version_num: the server's version.
    :ivar max_locks_per_transaction: the server's setting (count).
    :ivar runs: one :class:`TxnRun` per execution, in order.
    """

    server_version_num: int
    max_locks_per_transaction: int
    runs: tuple[TxnRun, ...]

    def counts(self, statement: int = -1) -> tuple[tuple[int, int], ...]:
        """(relation locks, of which in the main lock table) after ``statement`` for every execution."""
        return tuple((len(r.statements[statement].locks), r.statements[statement].main_table_count)
                     for r in self.runs)


def _client_sql(stmt: Stmt) -> str:
    """``$n`` → ``%s`` (psycopg placeholders) for statements whose ``$n`` appear once each, in order; a literal
    ``%`` is doubled."""
    text = stmt.sql.replace("%", "%%")
    found = [int(m) for m in re.findall(r"\$(\d+)\b", text)]
    if found != list(range(1, len(found) + 1)):
        raise ValueError(f"$n must appear once each, in order: {stmt.sql!r}")
    if len(found) != len(stmt.params):
        raise ValueError(f"{len(found)} placeholders, {len(stmt.params)} values: {stmt.sql!r}")
    return re.sub(r"\$\d+\b", "%s", text)


def _snapshot(conn: psycopg.Connection[tuple[object, ...]], index: int) -> tuple[int, list[tuple[int, str, bool]],
                                                                                   Counter[str]]:
    rows = conn.execute(_LOCKS_SQL, prepare=False).fetchall()
    rels = [(int(str(rel)), str(mode), bool(fp)) for kind, _db, rel, mode, fp in rows
            if kind == "relation" and rel is not None]
    main = Counter(str(kind) for kind, _db, _rel, _mode, fp in rows if not fp)
    return index, rels, main


def run_transaction(conninfo: str, statements: Sequence[Stmt], executions: int = 8) -> TxnTruth:
    """Run ``statements`` as one transaction ``executions`` times on ONE new connection (so execution k is the
    backend's k-th), each time rolled back, reading the backend's lock table after every statement.

    :param conninfo: a scratch server's conninfo (the statements run for real: never a user's server).
    :param statements: the transaction's statements (at least one).
    :param executions: how many times (count, >= 1).
    :return: a :class:`TxnTruth`.
    :raises psycopg.Error: a statement failed (the transaction is rolled back first).
    """
    if not statements or executions < 1:
        raise ValueError("need statements and executions >= 1")
    raw: list[list[tuple[int, list[tuple[int, str, bool]], Counter[str]]]] = []
    exceeded: list[int | None] = []
    with psycopg.connect(conninfo, autocommit=True) as conn:
        client = psycopg.ClientCursor(conn)
        version = conn.info.server_version
        for _ in range(executions):
            taken = []
            before = _fastpath_exceeded(conn, version)
            conn.execute(b"BEGIN", prepare=False)
            try:
                for i, stmt in enumerate(statements):
                    if stmt.prepared:
                        conn.execute(_client_sql(stmt), stmt.params, prepare=True)
                    else:
                        client.execute(_client_sql(stmt), stmt.params, prepare=False)
                    taken.append(_snapshot(conn, i))
            finally:
                _rollback(conn)
            raw.append(taken)
            after = _fastpath_exceeded(conn, version)
            exceeded.append(None if before is None or after is None else after - before)
        row = conn.execute("show max_locks_per_transaction", prepare=False).fetchone()
        mlpt = int(str(row[0])) if row else 0
        names = _names(conn, {oid for run in raw for _, rels, _ in run for oid, _, _ in rels})
    runs = tuple(TxnRun(k + 1, tuple(_statement_locks(i, rels, main, names) for i, rels, main in run), exceeded[k])
                 for k, run in enumerate(raw))
    return TxnTruth(version, mlpt, runs)


def _fastpath_exceeded(conn: psycopg.Connection[tuple[object, ...]], version: int) -> int | None:
    """PG 19+: the server's ``pg_stat_lock.fastpath_exceeded`` for relation locks, this backend's pending counts
    flushed first (``pg_stat_force_next_flush()`` makes the next end of transaction flush them); None before 19."""
    if version < PG19:
        return None
    conn.execute(b"SELECT pg_catalog.pg_stat_force_next_flush()", prepare=False)
    row = conn.execute(b"SELECT fastpath_exceeded FROM pg_catalog.pg_stat_lock WHERE locktype = 'relation'",
                       prepare=False).fetchone()
    return int(str(row[0])) if row else 0


def _rollback(conn: psycopg.Connection[tuple[object, ...]]) -> None:
    """ROLLBACK sent past psycopg's statement cache: ``Connection.rollback()`` and a ROLLBACK through a cursor both
    make psycopg forget (and DEALLOCATE) its prepared statements, which would reset the server's plan cache."""
    result = conn.pgconn.exec_(b"ROLLBACK")
    if result.status != psycopg.pq.ExecStatus.COMMAND_OK:
        raise psycopg.OperationalError(f"ROLLBACK failed: {conn.pgconn.error_message.decode(errors='replace')}")


def _names(conn: psycopg.Connection[tuple[object, ...]], oids: Iterable[int]) -> dict[int, tuple[str, str]]:
    rows = conn.execute(_NAMES_SQL, [sorted(oids)], prepare=False).fetchall()
    return {int(str(oid)): (f"{nsp}.{rel}", str(kind)) for oid, nsp, rel, kind in rows}


def _statement_locks(index: int, rels: list[tuple[int, str, bool]], main: Counter[str],
                     names: dict[int, tuple[str, str]]) -> StatementLocks:
    locks = tuple(sorted(HeldLock(names.get(oid, (f"oid:{oid}", "?"))[0], mode, fp,
                                  names.get(oid, ("", "?"))[1], oid) for oid, mode, fp in rels))
    return StatementLocks(index, locks, tuple(sorted(main.items())))


# --- the corpus --------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Case:
    """One case of ``tests/data/txn``: a schema of its own, its set-up and its transaction.

    :ivar name: the file's stem, also the case's schema name.
    :ivar title: the file's first comment line.
    :ivar setup: SQL run once (in the schema) before the transaction runs.
    :ivar statements: the transaction's statements with their parameters (``prepared`` False: the protocol is
        chosen by the caller, :meth:`with_protocol`).
    :ivar settings: ``(name, value)`` pairs of ``-- set: name = value`` lines, set for the transaction's
        connection (e.g. ``plan_cache_mode``, which also governs the plans of RI checks and PL/pgSQL).
    """

    name: str
    title: str
    setup: str
    statements: tuple[Stmt, ...]
    settings: tuple[tuple[str, str], ...] = ()

    def with_protocol(self, prepared: bool) -> tuple[Stmt, ...]:
        """The statements, all sent prepared or all with the simple query protocol."""
        return tuple(Stmt(s.sql, s.params, prepared) for s in self.statements)


_PARAMS = re.compile(r"^--\s*params:\s*(.*)$")


def load_case(path: Path) -> Case:
    """Read one case file: a first ``-- title`` line, set-up SQL, a ``-- transaction`` line, then the statements
    (each ends with ``;`` at the end of a line, ``-- params: 1, 'x'`` before a statement gives its values: bare or
    single-quoted, all sent as text). A ``-- include: FILE`` line is replaced by that file of the corpus; a
    ``-- set: name = value`` line before ``-- transaction`` sets a parameter for the transaction's connection.

    :raises ValueError: no ``-- transaction`` line or no statement after it.
    """
    text = re.sub(r"^-- include: (\S+)$", lambda m: (path.parent / m.group(1)).read_text(), path.read_text(),
                  flags=re.M)
    head, sep, txn = text.partition("\n-- transaction\n")
    if not sep:
        raise ValueError(f"{path.name}: no '-- transaction' line")
    title = head.splitlines()[0].lstrip("- ").strip()
    statements: list[Stmt] = []
    params: tuple[object, ...] = ()
    lines: list[str] = []
    for line in txn.splitlines():
        m = _PARAMS.match(line.strip())
        if m:
            params = _parse_values(m.group(1))
            continue
        if line.strip().startswith("--") or not line.strip():
            continue
        lines.append(line)
        if line.rstrip().endswith(";"):
            statements.append(Stmt(" ".join(s.strip() for s in lines).rstrip(";").strip(), params))
            lines, params = [], ()
    if not statements or lines:
        raise ValueError(f"{path.name}: the transaction needs statements ending with ';'")
    settings = tuple((m.group(1), m.group(2)) for m in re.finditer(r"^-- set: (\w+)\s*=\s*(\w+)$", head, re.M))
    return Case(path.stem, title, head, tuple(statements), settings)


def _parse_values(text: str) -> tuple[object, ...]:
    """``1, 'x'`` → ``("1", "x")``: every value as text, so the server types it from the statement (unknown-typed
    parameters, as ``PREPARE name AS ...`` without types and lockscope's ``--param`` values)."""
    out: list[object] = []
    for item in re.findall(r"'(?:[^']|'')*'|[^,\s]+", text):
        out.append(item[1:-1].replace("''", "'") if item.startswith("'") else item)
    return tuple(out)


def load_cases(names: Iterable[str] | None = None) -> tuple[Case, ...]:
    """The corpus (every ``*.sql`` of :data:`CORPUS_DIR`, sorted by name), or the named cases."""
    paths = sorted(CORPUS_DIR.glob("*.sql"))
    if names is not None:
        wanted = set(names)
        paths = [p for p in paths if p.stem in wanted]
    return tuple(load_case(p) for p in paths)


def setup_case(conninfo: str, case: Case) -> str:
    """Create the case's schema and run its set-up in it (dropping an earlier one), then ANALYZE it.

    :return: a conninfo whose ``search_path`` is the case's schema, with the case's ``settings``.
    """
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute(f"drop schema if exists {case.name} cascade".encode())
        conn.execute(f"create schema {case.name}".encode())
        conn.execute(f"set search_path = {case.name}".encode())
        conn.execute(case.setup.encode())
        tables = conn.execute("select string_agg(format('%%I.%%I', n.nspname, c.relname), ', ') "
                              "from pg_class c join pg_namespace n on n.oid = c.relnamespace "
                              "where n.nspname = %s and c.relkind in ('r', 'p')", [case.name]).fetchone()
        if tables and tables[0]:
            conn.execute(f"analyze {tables[0]}".encode())
    options = " ".join(f"-c {name}={value}" for name, value in (("search_path", case.name), *case.settings))
    return f"{conninfo} options='{options}'"
