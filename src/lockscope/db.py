"""The one module that talks to PostgreSQL: connections, session rules, SQL files, error mapping.

Session rules (every connection lockscope opens):

- ``application_name=lockscope``; ``connect_timeout`` 5 s unless the DSN or ``PGCONNECT_TIMEOUT`` sets it;
  ``lock_timeout``, ``statement_timeout`` and ``default_transaction_read_only = on`` for every query, catalog
  reads included (connection ``options``, after the DSN's or ``PGOPTIONS``' own); nothing is ever written.
- Autocommit: a catalog query is one round trip in a read-only transaction of its own, and no transaction is ever
  left open between queries. Probe transactions (:meth:`Session.probe_transaction`) are ``BEGIN READ ONLY`` with
  ``SET LOCAL lock_timeout`` and ``statement_timeout``, sent as one message, and always end in ROLLBACK.
- Every read of pg_locks (:data:`PG_LOCKS_QUERIES`) is paced by :meth:`Session.query_rows` at the session's
  ``pg_locks_rate_hz``, counted and timed (:attr:`Session.probe_cost`): each read takes all 16
  lock-partition LWLocks and every backend's fast-path LWLock (``lock.c GetLockStatusData``).
- SQL lives in ``lockscope/sql/NAME.sql``; a file ``NAME-NNNNNN.sql`` replaces it from server_version_num NNNNNN on.
- Passwords never appear in any message: :func:`redact_dsn` and :func:`redact` scrub them.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

import psycopg
from psycopg import errors as pg_errors
from psycopg import sql as pg_sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg.rows import RowFactory, RowMaker, no_result
from psycopg.types.string import TextBinaryLoader, TextLoader

from . import capacity
from .errors import (
    BadInputError,
    ConnectionFailedError,
    DatabaseError,
    LockBlockedError,
    StatementError,
    UnsupportedServerError,
)
from .privileges import HELPER_OPTIONS
from .rows import BlockingLockRow, RowT, row_maker
from .versions import MIN_SUPPORTED, major_of
from .vocab import PlanCacheMode

__all__ = [
    "APPLICATION_NAME",
    "DEFAULT_CONNECT_TIMEOUT_S",
    "PG_LOCKS_QUERIES",
    "Endpoint",
    "Pacer",
    "ProbeCost",
    "ServerFacts",
    "Session",
    "check_dsn",
    "connect",
    "load_script",
    "load_sql",
    "merge_conninfo",
    "redact",
    "redact_dsn",
    "run_script",
    "time_and_cost_on_scratch",
    "time_on_scratch",
]

APPLICATION_NAME = "lockscope"
#: ``connect_timeout`` (s) when neither the DSN nor ``PGCONNECT_TIMEOUT`` sets one (libpq's own default: none).
DEFAULT_CONNECT_TIMEOUT_S = 5
#: The SQL files that read pg_locks (``lock.c GetLockStatusData``: every backend's fast-path LWLock, then all 16
#: lock-partition LWLocks in shared mode while it copies the main lock table). :meth:`Session.query_rows` paces,
#: counts and times them. ``lockscope watch``'s own ``watch_locks`` / ``watch_blocking`` (at most once per second,
#: its own rule) are not in this set.
PG_LOCKS_QUERIES = frozenset({"relation_locks", "blocking_locks", "audit_held_locks", "executed_locks",
                              "budget_held_entries", "migration_locks", "migration_lock_count"})
#: SQLSTATE classes (first two characters, PostgreSQL ``errcodes.txt``) mapped to :class:`StatementError`: the
#: statement or its parameters are at fault (42 syntax/access rule, 22 data exception, 0A feature not supported,
#: 08 connection exception, 26 invalid statement name, 07 dynamic SQL, 25 invalid transaction state, 54 program
#: limit exceeded, 53 insufficient resources).
_STATEMENT_ERROR_CLASSES = frozenset({"42", "22", "0A", "08", "26", "07", "25", "54", "53"})
#: aclchk.c aclcheck_error: "permission denied for <object kind> <name>".
_PERMISSION_DENIED = re.compile(r"permission denied for (table|view|materialized view|sequence|schema|function) "
                                r"(\S+)")
_SQL_FILE = re.compile(r"^(?P<name>[a-z][a-z0-9_]*)(?:-(?P<since>\d{6}))?\.sql$")


def redact_dsn(dsn: str) -> str:
    """The DSN with any password replaced by ``********`` (conninfo or URI form); unparsable → ``<dsn>``."""
    try:
        params = conninfo_to_dict(dsn)
    except psycopg.Error:
        return "<dsn>"
    if "password" in params:
        params["password"] = "********"
    return make_conninfo("", **params)


_PASSWORD_KEYWORD = re.compile(r"\bpassword\s*=\s*")
_NEXT_KEYWORD = re.compile(r"\s[A-Za-z_]+\s*=")
_URI_PASSWORD = re.compile(r"^[A-Za-z]+://[^:/@?#]*:([^@/?#]*)@")


def _mask_raw_secrets(message: str, dsn: str) -> str:
    """``message`` (libpq's complaint about a DSN it cannot parse) without password fragments: each ``password=``
    value up to the next ``keyword=``, whole, and each of its words where libpq quotes a fragment (``"def"`` of
    ``password=abc def``); a URI's ``user:password@``."""
    whole: list[str] = []
    words: list[str] = []
    for match in _PASSWORD_KEYWORD.finditer(dsn):
        rest = dsn[match.end():]
        end = _NEXT_KEYWORD.search(rest)
        value = rest[: end.start()] if end else rest
        whole.append(value.strip())
        words += [w.strip("'\"&") for w in re.split(r"[\s&]+", value)]
    uri = _URI_PASSWORD.match(dsn)
    if uri:
        whole.append(uri.group(1))
    for secret in sorted({w for w in whole if w}, key=len, reverse=True):
        message = message.replace(secret, "********")
    for word in sorted({w for w in words if w}, key=len, reverse=True):
        message = message.replace(f'"{word}"', '"********"')
    return message


def check_dsn(dsn: str) -> dict[str, Any]:
    """Parse ``--dsn`` as libpq would (conninfo or URI), before anything is started or contacted.

    :return: its parameters (``psycopg.conninfo.conninfo_to_dict``).
    :raises BadInputError: not a connection string or URI libpq accepts, or a port that is not a number
        (one line, password fragments masked).
    """
    try:
        params = conninfo_to_dict(dsn)
    except psycopg.Error as exc:
        message = _mask_raw_secrets(" ".join(str(exc).split()), dsn)
        raise BadInputError(f"--dsn is not a libpq connection string or URI: {message}") from None
    for port in str(params.get("port") or "").split(","):
        if port.strip() and not (port.strip().isdigit() and 0 < int(port) < 65536):
            raise BadInputError(f"--dsn: port {port.strip()!r} is not a TCP port number")
    return params


def merge_conninfo(dsn: str, params: dict[str, str]) -> str:
    """``dsn`` (conninfo or URI, may be empty) with ``params`` (libpq keywords: psql's ``-h -p -U -d``) added, as
    one conninfo string (``psycopg.conninfo.make_conninfo``).

    :raises BadInputError: a parameter libpq rejects (e.g. a port that is not a number).
    """
    for port in str(params.get("port") or "").split(","):
        if port.strip() and not (port.strip().isdigit() and 0 < int(port) < 65536):
            raise BadInputError(f"-p: port {port.strip()!r} is not a TCP port number")
    try:
        return make_conninfo(dsn, **params)
    except psycopg.Error as exc:
        raise BadInputError(f"not a libpq connection option: {' '.join(str(exc).split())}") from None


def redact(text: str, dsn: str | None) -> str:
    """``text`` with the DSN's password (if any) replaced by ``********``."""
    if not dsn:
        return text
    try:
        password = conninfo_to_dict(dsn).get("password")
    except psycopg.Error:
        return text
    return text.replace(str(password), "********") if password else text


#: Marks lockscope's own queries in pg_stat_statements and pg_stat_activity (audit leaves them out).
OWN_QUERY_MARKER = "/* lockscope */"
_LINE_COMMENT = re.compile(r"--[^\n]*")
_FIRST_KEYWORD = re.compile(r"^(\s*(?:SELECT|WITH|INSERT|UPDATE|DELETE))\b", re.IGNORECASE | re.MULTILINE)


@functools.lru_cache(maxsize=512)
def load_sql(name: str, server_version_num: int) -> str:
    """Text of the SQL file ``name`` for a server version, its first keyword followed by
    :data:`OWN_QUERY_MARKER` (pg_stat_statements keeps the comment, so an audit or a watch on the same server
    recognises lockscope's own queries).

    :param name: file stem, e.g. ``relation_locks``.
    :param server_version_num: picks the file with the highest ``-NNNNNN`` suffix <= this version.
    :raises FileNotFoundError: if no file fits.
    """
    best: tuple[int, str] | None = None
    for entry in resources.files("lockscope.sql").iterdir():
        match = _SQL_FILE.match(entry.name)
        if not match or match["name"] != name:
            continue
        since = int(match["since"] or 0)
        if since <= server_version_num and (best is None or since > best[0]):
            best = (since, entry.read_text(encoding="utf-8"))
    if best is None:
        raise FileNotFoundError(f"no SQL file {name!r} for server_version_num {server_version_num}")
    text = best[1]
    if OWN_QUERY_MARKER not in _LINE_COMMENT.sub("", text):  # in a -- comment it is dropped with it
        text = _FIRST_KEYWORD.sub(rf"\1 {OWN_QUERY_MARKER}", text, count=1)
    return text


_PLACEHOLDER = re.compile(r"@([a-z_]+)@")
_SCRIPT_WORD = re.compile(r"^[a-z_][a-z0-9_]*$")


def load_script(name: str, **params: int | str) -> str:
    """Text of the set-up script ``sql/NAME.sql`` (scenario DDL for scratch servers, run with :func:`run_script`)
    with its ``@param@`` placeholders filled in.

    :param name: file stem, e.g. ``scenario_events``.
    :param params: placeholder -> value: an int, or a lower-case word (``[a-z_][a-z0-9_]*``, e.g. an index name
        prefix), inserted as is.
    :raises ValueError: a placeholder without a value, a value without a placeholder, or a value that is not an
        int or such a word.
    :raises FileNotFoundError: if there is no such file.
    """
    text = load_sql(name, 0)
    wanted = set(_PLACEHOLDER.findall(text))
    if wanted != set(params):
        raise ValueError(f"script {name!r} takes {sorted(wanted)}, got {sorted(params)}")
    values: dict[str, str] = {}
    for key, value in params.items():
        if isinstance(value, bool) or not isinstance(value, (int, str)) or \
                (isinstance(value, str) and not _SCRIPT_WORD.match(value)):
            raise ValueError(f"script {name!r}: {key}={value!r} is neither an int nor a lower-case word")
        values[key] = str(value)
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], text)


def fill_sql(name: str, text: str, fill: Mapping[str, str]) -> str:
    """``text`` of the SQL file ``name`` with its ``@key@`` placeholders replaced by ``fill[key]``: text lockscope
    composed itself (a schema quoted with :meth:`Session.identifier`, a list of columns the file reads), never a
    user's input.

    :raises ValueError: a placeholder without a value, or a value without a placeholder.
    """
    wanted = set(_PLACEHOLDER.findall(text))
    if wanted != set(fill):
        raise ValueError(f"sql/{name}.sql takes {sorted(wanted)}, got {sorted(fill)}")
    return _PLACEHOLDER.sub(lambda m: fill[m.group(1)], text)


def _typed_rows(row_type: type[RowT], source: str) -> RowFactory[RowT]:
    """A psycopg row factory making each row a ``row_type`` (as ``psycopg.rows.class_row``), with the result's
    columns checked against the type once, when its description arrives (:func:`lockscope.rows.row_maker`).

    :raises RowShapeError: (when the result arrives) a column the type needs is missing.
    """
    def factory(cursor: psycopg.Cursor[Any]) -> RowMaker[RowT]:
        if not cursor.description:
            return no_result
        return row_maker(row_type, [c.name for c in cursor.description], source)

    return factory


class Pacer:
    """Keeps an operation at or below ``rate_hz`` per second: :meth:`wait` sleeps until the next one is allowed.

    :param rate_hz: operations per second at most; 0 = unpaced.
    """

    def __init__(self, rate_hz: float, sleep: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.rate_hz = rate_hz
        self.interval_s = 1.0 / rate_hz if rate_hz > 0 else 0.0
        self._next: float | None = None
        self._sleep = sleep
        self._clock = clock

    def ready(self) -> float:
        """Sleep until the next operation would be allowed, without taking its turn (a no-op when it already is).

        :return: seconds slept.
        """
        now = self._clock()
        if self._next is not None and now < self._next:
            slept = self._next - now
            self._sleep(slept)
            return slept
        return 0.0

    def wait(self) -> float:
        """Sleep until the next operation is allowed (the first one never waits), and take its turn.

        :return: seconds slept.
        """
        slept = self.ready()
        self._next = self._clock() + self.interval_s
        return slept


@dataclass(frozen=True)
class ProbeCost:
    """What a session's pg_locks reads cost the server (:attr:`Session.probe_cost`).

    :ivar pg_locks_reads: pg_locks reads (count; one per probed execution, one per lock_timeout look-up).
    :ivar pg_locks_ms: time inside those queries, sum of their round trips (ms).
    :ivar probing_s: from the first read to the end of the last one (s; 0 with fewer than one read).
    :ivar probe_rate_hz: reads per second at most (0 = unpaced).
    """

    pg_locks_reads: int
    pg_locks_ms: float
    probing_s: float
    probe_rate_hz: float

    def line(self) -> str:
        """E.g. ``pg_locks reads: 37 in 18.6 s of probing, 41 ms inside pg_locks (paced at 2/s)``."""
        pace = f"paced at {self.probe_rate_hz:g}/s" if self.probe_rate_hz > 0 else "unpaced"
        return (f"pg_locks reads: {self.pg_locks_reads} in {self.probing_s:.1f} s of probing, "
                f"{self.pg_locks_ms:.0f} ms inside pg_locks ({pace})")

    def to_dict(self) -> dict[str, float | int]:
        """The JSON ``probe_cost`` object (docs/json-schema.md)."""
        return {"pg_locks_reads": self.pg_locks_reads, "pg_locks_ms": round(self.pg_locks_ms, 3),
                "probing_s": round(self.probing_s, 3), "probe_rate_hz": self.probe_rate_hz}


@dataclass(frozen=True)
class ServerFacts:
    """What lockscope needs to know about a server, read once per session.

    :ivar server_version_num: e.g. 180006.
    :ivar server_version: e.g. ``18.6``.
    :ivar database: current database name.
    :ivar max_locks_per_transaction: count.
    :ivar max_connections: count.
    :ivar max_prepared_transactions: count.
    :ivar autovacuum_workers: autovacuum_worker_slots (PG 18+) or autovacuum_max_workers (count).
    :ivar max_worker_processes: count.
    :ivar max_wal_senders: count.
    :ivar plan_cache_mode: ``auto``, ``force_generic_plan`` or ``force_custom_plan``.
    :ivar in_recovery: True on a standby.
    :ivar pg_locks_oid: OID of the pg_locks view (lockscope's own look-up lock is excluded by it).
    :ivar managed_service: ``rds``, ``cloudsql``, ``azure`` on such a managed service (:mod:`lockscope.services`),
        else ``""``.
    """

    server_version_num: int
    server_version: str
    database: str
    max_locks_per_transaction: int
    max_connections: int
    max_prepared_transactions: int
    autovacuum_workers: int
    max_worker_processes: int
    max_wal_senders: int
    plan_cache_mode: PlanCacheMode
    in_recovery: bool
    pg_locks_oid: int
    managed_service: str

    @property
    def major(self) -> int:
        """Major version, e.g. 18."""
        return major_of(self.server_version_num)

    @property
    def capacity(self) -> capacity.CapacityModel:
        """This server's fast-path capacity model."""
        return capacity.CapacityModel(self.server_version_num, self.max_locks_per_transaction)

    @property
    def max_backends(self) -> int:
        """MaxBackends (count), ``postinit.c InitializeMaxBackends``."""
        return capacity.max_backends(
            self.server_version_num,
            max_connections=self.max_connections,
            autovacuum_workers=self.autovacuum_workers,
            max_worker_processes=self.max_worker_processes,
            max_wal_senders=self.max_wal_senders,
        )

    @property
    def shared_lock_table_entries(self) -> int:
        """Shared lock table size in lock entries (count), ``lock.c NLOCKENTS``."""
        return capacity.shared_lock_table_entries(
            self.max_locks_per_transaction, self.max_backends, self.max_prepared_transactions
        )


@dataclass(frozen=True)
class _ServerFactsRow(ServerFacts):
    """``server_facts.sql``'s row: the :class:`ServerFacts` and the session rules as the server holds them.

    :ivar statement_timeout_ms: ms.
    :ivar lock_timeout_ms: ms.
    :ivar default_transaction_read_only: ``on`` or ``off``.
    """

    statement_timeout_ms: int
    lock_timeout_ms: int
    default_transaction_read_only: str


@dataclass(frozen=True)
class Endpoint:
    """Where a session is connected, for the first line of every command's output (no password, ever).

    :ivar host: host name, address, or Unix-socket directory (starts with ``/``).
    :ivar port: TCP port (also names the socket file).
    :ivar database: database name.
    :ivar user: role name.
    :ivar server_version: e.g. ``18.6``.
    """

    host: str
    port: int
    database: str
    user: str
    server_version: str

    @property
    def socket(self) -> bool:
        """True for a Unix-domain socket connection."""
        return self.host.startswith("/")

    def label(self) -> str:
        """E.g. ``PostgreSQL 18.6 at socket /tmp/x port 5433, database app, user me``."""
        where = f"socket {self.host} port {self.port}" if self.socket else f"{self.host}:{self.port}"
        return f"PostgreSQL {self.server_version} at {where}, database {self.database}, user {self.user}"


#: The most catalog results :meth:`Session.catalog_memo` keeps for later blocks (count).
_KEPT_MAX = 4096


class Session:
    """One lockscope connection with its rules; create with :func:`connect`, close with :meth:`close`.

    :ivar facts: the server's :class:`ServerFacts`.
    :ivar dsn_redacted: the DSN with the password hidden, for messages.
    """

    def __init__(self, conn: psycopg.Connection[Any], dsn: str, lock_timeout_ms: int, statement_timeout_ms: int,
                 pg_locks_rate_hz: float = 0.0):
        self._conn = conn
        self._dsn = dsn
        self.dsn_redacted = redact_dsn(dsn)
        self.lock_timeout_ms = lock_timeout_ms
        self.statement_timeout_ms = statement_timeout_ms
        self._in_probe = False
        self._pg_locks_pacer = Pacer(pg_locks_rate_hz)
        self._pg_locks_reads = 0
        self._pg_locks_s = 0.0
        self._pg_locks_first: float | None = None
        self._pg_locks_last = 0.0
        self._memo_names: frozenset[str] = frozenset()
        self._memo: dict[tuple[str, type, str, str], list[Any]] = {}
        # rows a catalog_memo block with keep_s left for later blocks: (read at, monotonic s; rows), oldest first
        self._kept: dict[tuple[str, type, str, str], tuple[float, list[Any]]] = {}
        self._keep_s: float | None = None
        #: the EXPLAIN helper's function name (``lockscope.explain``) every EXPLAIN goes through, or None
        self.explain_helper: str | None = None
        row = self._typed(load_sql("server_facts", 0), _ServerFactsRow, None, "server_facts")[0]
        if row.server_version_num < MIN_SUPPORTED:
            raise UnsupportedServerError(
                f"PostgreSQL {row.server_version} is not supported: lockscope needs 13 or later"
            )
        self.facts = ServerFacts(**{f.name: getattr(row, f.name) for f in dataclasses.fields(ServerFacts)})
        self._check_session_rules(row)

    def _check_session_rules(self, row: _ServerFactsRow) -> None:
        """Refuse a session whose connection options did not take effect (``server_facts.sql``'s last columns): a
        pooler that drops them would leave every query without lockscope's timeouts and read-only rule (and a
        ``SET`` instead could leak to other clients of a transaction-mode pool).

        :raises ConnectionFailedError: naming the settings found and what to connect to instead.
        """
        found = {"statement_timeout": f"{row.statement_timeout_ms} ms",
                 "lock_timeout": f"{row.lock_timeout_ms} ms",
                 "default_transaction_read_only": str(row.default_transaction_read_only)}
        wanted = {"statement_timeout": f"{self.statement_timeout_ms} ms", "lock_timeout": f"{self.lock_timeout_ms} ms",
                  "default_transaction_read_only": "on"}
        wrong = [f"{k} is {found[k]}, not {v}" for k, v in wanted.items() if found[k] != v]
        if wrong:
            raise ConnectionFailedError(
                f"{self.endpoint.label()}: lockscope's session rules did not take effect ({'; '.join(wrong)}): "
                + POOLER_ADVICE)

    # -- plumbing ------------------------------------------------------------------------------------------------
    def close(self) -> None:
        """Roll back anything open and close the connection. Idempotent."""
        if not self._conn.closed:
            with contextlib.suppress(psycopg.Error):
                self._conn.rollback()
            self._conn.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def closed(self) -> bool:
        """True once the connection is closed or broken."""
        return bool(self._conn.closed or self._conn.broken)

    @property
    def backend_pid(self) -> int:
        """pid of this session's server backend."""
        return int(self._conn.info.backend_pid)

    @property
    def endpoint(self) -> Endpoint:
        """Where this session is connected (host or socket directory, port, database, user, version)."""
        info = self._conn.info
        return Endpoint(host=str(info.host), port=int(info.port), database=str(info.dbname),
                        user=str(info.user), server_version=self.facts.server_version)

    def literal(self, value: str) -> str:
        """``value`` as a quoted SQL string literal (untyped, as a psql user would type it)."""
        return pg_sql.Literal(value).as_string(self._conn)

    def identifier(self, name: str) -> str:
        """``name`` as a quoted SQL identifier."""
        return pg_sql.Identifier(name).as_string(self._conn)

    def query_rows(self, name: str, row_type: type[RowT], params: Sequence[Any] | None = None, *,
                   fill: Mapping[str, str] | None = None) -> list[RowT]:
        """Run the SQL file ``name`` chosen for this server's version (:func:`load_sql`), each row made a
        ``row_type`` (a dataclass of :mod:`lockscope.rows`) with its columns checked once per result: the one way
        lockscope runs its own queries. A file that reads pg_locks (:data:`PG_LOCKS_QUERIES`) is paced, counted and
        timed (:attr:`probe_cost`): it first waits until ``1 / pg_locks_rate_hz`` seconds have passed since the
        previous read (no wait when unpaced). Inside a :meth:`probe_transaction` that wait is already over: the
        transaction began only once the next read was allowed, so a probe never holds its locks while it waits.

        Outside :meth:`probe_transaction` a query runs in a transaction of its own (autocommit): a session never
        stays idle in transaction. Inside a :meth:`catalog_memo` block naming the file, the rows are those of its
        first run with the same parameters.

        :param params: the file's ``%s`` parameters.
        :param fill: text lockscope composed itself (a quoted schema, a column list) for the file's ``@key@``
            placeholders; every placeholder needs one (see :func:`fill_sql`).
        :raises RowShapeError: the file's rows lack a column ``row_type`` needs (names the file and the column).
        :raises DatabaseError: with the server's message.
        """
        if name in self._memo_names:
            key = (name, row_type, repr(params), repr(fill))
            if key not in self._memo:
                kept = self._kept.get(key)
                if kept is not None and self._keep_s is not None and time.monotonic() - kept[0] < self._keep_s:
                    self._memo[key] = kept[1]
                else:
                    rows = self._query_rows(name, row_type, params, fill)
                    self._memo[key] = rows
                    if self._keep_s is not None:
                        self._kept.pop(key, None)
                        self._kept[key] = (time.monotonic(), rows)
                        while len(self._kept) > _KEPT_MAX:
                            del self._kept[next(iter(self._kept))]
            return list(self._memo[key])
        return self._query_rows(name, row_type, params, fill)

    @contextlib.contextmanager
    def catalog_memo(self, names: frozenset[str], *, keep_s: float | None = None) -> Iterator[None]:
        """Within the block, each SQL file of ``names`` runs once per parameters; later calls get the first call's
        rows (frozen rows, shared). For catalog reads that cannot change during one measurement: lockscope runs no
        DDL on a server of yours, and its probes only EXPLAIN. At the block's end the rows of the files it named (and
        no enclosing block names) are forgotten.

        :param keep_s: rows this block reads are also kept for later blocks that pass ``keep_s``: such a block
            takes rows read less than ``keep_s`` seconds before instead of reading them again (a statement probed
            again and again in one session: an audit's, a forecast's, a benchmark's), at most 4,096 results kept.
            A catalog change within that time is seen once it has passed, as with the query tree
            (``footprint.ORDER_FACTS_TTL_S``).
        """
        saved, saved_keep = self._memo_names, self._keep_s
        self._memo_names = saved | names
        self._keep_s = keep_s
        try:
            yield
        finally:
            self._memo_names, self._keep_s = saved, saved_keep
            self._memo = {key: rows for key, rows in self._memo.items() if key[0] in saved}

    def _query_rows(self, name: str, row_type: type[RowT], params: Sequence[Any] | None,
                    fill: Mapping[str, str] | None) -> list[RowT]:
        text = load_sql(name, self.facts.server_version_num)
        if fill is not None:
            text = fill_sql(name, text, fill)
        if name not in PG_LOCKS_QUERIES:
            return self._typed(text, row_type, params, name)
        self._pg_locks_pacer.wait()
        start = time.monotonic()
        if self._pg_locks_first is None:
            self._pg_locks_first = start
        try:
            return self._typed(text, row_type, params, name)
        finally:
            end = time.monotonic()
            self._pg_locks_reads += 1
            self._pg_locks_s += end - start
            self._pg_locks_last = end

    def _typed(self, text: str, row_type: type[RowT], params: Sequence[Any] | None, source: str) -> list[RowT]:
        """One of lockscope's queries, its rows made ``row_type`` by the row factory (:func:`_typed_rows`)."""
        try:
            with self._conn.cursor(row_factory=_typed_rows(row_type, source)) as cur:
                cur.execute(text.encode(), params)
                return cur.fetchall() if cur.description else []
        except psycopg.Error as exc:
            raise self._translate(exc) from None

    def deallocate(self, name: str) -> None:
        """``DEALLOCATE name`` of a prepared statement lockscope made (``lockscope_<pid>_<n>``), in a probe
        transaction (DEALLOCATE is not transactional: it holds after the ROLLBACK).

        :raises ValueError: ``name`` is not a lower-case identifier.
        :raises DatabaseError: with the server's message.
        """
        if not _SCRIPT_WORD.match(name):
            raise ValueError(f"not a prepared statement name lockscope makes: {name!r}")
        with self.probe_transaction(paced=False):
            try:
                self._conn.execute(f"DEALLOCATE {name}".encode())
            except psycopg.Error as exc:
                raise self._translate(exc) from None

    def oracle_rows(self, text: str, params: Sequence[Any] | None = None) -> list[tuple[Any, ...]]:
        """Run ``text`` on this session's connection, its rows as tuples: for the test suite's and the benchmarks'
        own reads (the server as the oracle), never for lockscope's modules, which run SQL files through
        :meth:`query_rows` (``tests/test_boundary.py`` holds that).

        :raises DatabaseError: with the server's message (LockBlockedError for lock_timeout).
        """
        try:
            with self._conn.cursor() as cur:
                cur.execute(text.encode(), params)
                return cur.fetchall() if cur.description else []
        except psycopg.Error as exc:
            raise self._translate(exc) from None

    @property
    def pg_locks_rate_hz(self) -> float:
        """pg_locks reads per second at most (0 = unpaced)."""
        return self._pg_locks_pacer.rate_hz

    @property
    def probe_cost(self) -> ProbeCost:
        """The pg_locks reads of this session so far: count, time inside them, span, pace."""
        span = self._pg_locks_last - self._pg_locks_first if self._pg_locks_first is not None else 0.0
        return ProbeCost(self._pg_locks_reads, self._pg_locks_s * 1000.0, span, self._pg_locks_pacer.rate_hz)

    def run_user_text(self, text: str, *, prefix_len: int = 0) -> list[tuple[Any, ...]]:
        """Send text built around the user's statement through the extended protocol (one statement only).

        :param text: e.g. ``EXPLAIN <statement>``; never anything that executes the statement.
        :param prefix_len: characters lockscope put before the user's text, subtracted from error positions.
        :return: result rows as tuples: EXPLAIN's lines, or the text of ``EXPLAIN (FORMAT JSON)``'s document (a
            ``json`` value comes back as its text, numbers as the server printed them: :mod:`lockscope.explain`).
        :raises StatementError: invalid SQL, unknown relation, wrong parameters (with the server's message).
        :raises LockBlockedError: lock_timeout expired.
        :raises DatabaseError: called outside :meth:`probe_transaction` (never sent).
        """
        self._require_probe()
        via = self._via_helper(text)
        try:
            # A binary-result cursor always uses the extended protocol (Parse/Bind/Execute), which refuses
            # several statements; psycopg's prepared-statement cache (and its DEALLOCATE ALL) stays unused.
            with self._conn.cursor(binary=True) as cur:
                cur.adapters.register_loader("json", TextBinaryLoader)
                if via is None:
                    cur.execute(text.encode())
                else:
                    cur.execute(via[0], via[1])
                return cur.fetchall() if cur.description else []
        except psycopg.Error as exc:
            raise self._translate(exc, prefix_len=0 if via else prefix_len) from None

    @property
    def user(self) -> str:
        """The session's role (``current_user`` at connection)."""
        return self._conn.info.user or ""

    def _via_helper(self, text: str) -> tuple[bytes, list[str]] | None:
        """``EXPLAIN (options) statement`` sent as ``SELECT helper(options, statement)`` when the session uses the
        EXPLAIN helper (:attr:`explain_helper`, :mod:`lockscope.privileges`); None to send ``text`` as it is.

        :raises StatementError: an option list the documented helper refuses (lockscope sends none).
        """
        if self.explain_helper is None:
            return None
        match = re.match(r"EXPLAIN \(([A-Z_, ]+)\) ", text)
        if match is None:
            return None
        if match.group(1) not in HELPER_OPTIONS:
            raise StatementError(f"EXPLAIN ({match.group(1)}) cannot go through the EXPLAIN helper")
        name = ".".join(pg_sql.Identifier(part).as_string(self._conn) for part in self.explain_helper.split("."))
        return f"SELECT {name}(%s, %s)".encode(), [match.group(1), text[match.end():]]

    def run_checked_text_simple(self, text: str, *, prefix_len: int = 0) -> list[tuple[Any, ...]]:
        """Like :meth:`run_user_text` but through the simple query protocol.

        Only for text whose single statement lockscope has verified with PostgreSQL's parser (pglast) and that
        must keep ``$n`` placeholders unbound, i.e. ``EXPLAIN (GENERIC_PLAN) <statement>`` (the extended protocol
        would treat ``$1`` as a protocol parameter and demand a value). Call it inside
        :meth:`probe_transaction` (READ ONLY, rolled back), which is what keeps it safe.

        :raises StatementError: invalid SQL, unknown relation, wrong parameters (with the server's message).
        :raises LockBlockedError: lock_timeout expired.
        :raises DatabaseError: called outside :meth:`probe_transaction` (never sent).
        """
        self._require_probe()
        if self.explain_helper is not None:  # the statement goes as the helper's text parameter: $n stay unbound
            return self.run_user_text(text, prefix_len=prefix_len)
        try:
            with self._conn.cursor() as cur:  # text cursor without parameters: simple query protocol
                cur.adapters.register_loader("json", TextLoader)
                cur.execute(text.encode())
                return cur.fetchall() if cur.description else []
        except psycopg.Error as exc:
            raise self._translate(exc, prefix_len=prefix_len) from None

    @contextlib.contextmanager
    def notices(self) -> Iterator[list[tuple[str, str, str]]]:
        """Collect the server's notices while the block runs: a list of (severity, message, detail). lockscope's
        probes send nothing that notices; the tests' oracle (``tests/order_oracle.py``) reads the server's
        ``debug_print_rewritten`` tree this way on scratch servers only."""
        seen: list[tuple[str, str, str]] = []

        def handler(diag: psycopg.errors.Diagnostic) -> None:
            seen.append((diag.severity or "", diag.message_primary or "", diag.message_detail or ""))

        self._conn.add_notice_handler(handler)
        try:
            yield seen
        finally:
            self._conn.remove_notice_handler(handler)

    @contextlib.contextmanager
    def probe_transaction(self, *, paced: bool = True, **local_settings: str) -> Iterator[Session]:
        """A READ ONLY transaction with lock_timeout / statement_timeout that is always rolled back. It begins only
        once a pg_locks read is allowed by the session's pace (:meth:`query_rows`), so the wait for that turn is
        spent before BEGIN, holding no lock.

        :param paced: False for a transaction that reads no pg_locks (a PREPARE, a DEALLOCATE, an EXPLAIN that only
            steps a plan cache): it begins without waiting for the pace.
        :param local_settings: extra ``SET LOCAL name = value`` (e.g. ``plan_cache_mode``).
        """
        settings = {
            "lock_timeout": f"{self.lock_timeout_ms}ms",
            "statement_timeout": f"{self.statement_timeout_ms}ms",
            **local_settings,
        }
        # the pg_locks pacing wait happens here, before BEGIN: never while the probe holds the statement's locks
        if paced:
            self._pg_locks_pacer.ready()
        if self._conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
            self._rollback()
        # One simple-protocol message (the session is in autocommit: this BEGIN is the only one, so the server has
        # no "there is already a transaction in progress" WARNING to log).
        statements: list[pg_sql.Composable] = [pg_sql.SQL("BEGIN READ ONLY")]
        statements += [pg_sql.SQL("SET LOCAL {} = {}").format(pg_sql.Identifier(name), pg_sql.Literal(value))
                       for name, value in settings.items()]
        try:
            with self._conn.cursor() as cur:
                cur.execute(pg_sql.SQL("; ").join(statements).as_bytes(self._conn))
        except psycopg.Error as exc:
            self._rollback()
            raise self._translate(exc) from None
        self._in_probe = True
        try:
            yield self
        finally:
            self._in_probe = False
            self._rollback()

    def _rollback(self) -> None:
        with contextlib.suppress(psycopg.Error):
            self._conn.rollback()  # sends ROLLBACK when a transaction is open, also in autocommit

    def _require_probe(self) -> None:
        if not self._in_probe:
            raise DatabaseError("internal: text around a user's statement is only sent inside a probe transaction")

    # -- errors ----------------------------------------------------------------------------------------------
    def _translate(self, exc: psycopg.Error, *, prefix_len: int = 0) -> DatabaseError:
        diag = exc.diag
        primary = redact((diag.message_primary or str(exc)).strip().splitlines()[0], self._dsn)
        if isinstance(exc, pg_errors.LockNotAvailable):
            self._rollback()
            return self._blocked_error()
        sqlstate = diag.sqlstate
        if isinstance(exc, pg_errors.QueryCanceled):
            # 57014 is both lockscope's own limit and a cancel request (pg_cancel_backend, a DBA's Ctrl-C)
            if "statement timeout" not in primary:
                return StatementError(f"canceled by the server or another session: {primary}", sqlstate=sqlstate)
            return StatementError(
                f"statement_timeout ({self.statement_timeout_ms} ms) expired: {primary} (lockscope's limit for one "
                "query: --statement-timeout)", sqlstate=sqlstate
            )
        if isinstance(exc, pg_errors.OperationalError) and self._conn.closed:
            return ConnectionFailedError(f"connection lost: {primary}", sqlstate=sqlstate)
        if sqlstate and sqlstate[:2] in _STATEMENT_ERROR_CLASSES:
            position = int(diag.statement_position) - prefix_len if diag.statement_position else None
            where = f" (at character {position})" if position and position > 0 else ""
            detail = f"; {diag.message_hint}" if diag.message_hint else ""
            if sqlstate == "42501":
                detail += self._grant_hint(primary)
            return StatementError(f"{sqlstate}: {primary}{where}{detail}", position, sqlstate=sqlstate)
        return DatabaseError(f"{sqlstate or 'error'}: {primary}", sqlstate=sqlstate)

    def _grant_hint(self, primary: str) -> str:
        """What lifts a 42501 "permission denied for <kind> <name>": the GRANT to this session's role (EXPLAIN needs
        the privileges of running the statement, never its execution: ``lockscope`` only EXPLAINs)."""
        match = _PERMISSION_DENIED.match(primary)
        user = self._conn.info.user or ""
        role = user if re.fullmatch(r"[a-z_][a-z0-9_]*", user) else pg_sql.Identifier(user).as_string(self._conn)
        if match is None:
            return f"; EXPLAIN needs the privileges the statement needs: grant them to {role}"
        kind, name = match.group(1), match.group(2)
        what = {"table": "SELECT ON TABLE", "view": "SELECT ON TABLE", "materialized view": "SELECT ON TABLE",
                "sequence": "USAGE ON SEQUENCE", "schema": "USAGE ON SCHEMA",
                "function": "EXECUTE ON FUNCTION"}.get(kind)
        if what is None:
            return f"; EXPLAIN needs the privileges the statement needs: grant them to {role}"
        return (f"; lockscope only EXPLAINs, which needs the privileges the statement needs: GRANT {what} {name} TO "
                f"{role}; (read-only for a table: EXPLAIN never runs it; docs/safety.md)")

    def _blocked_error(self) -> LockBlockedError:
        """Who holds the conflicting lock: one pg_locks look-up after the timeout (never a polling loop)."""
        try:
            rows = self.query_rows("blocking_locks", BlockingLockRow)
        finally:
            self._rollback()
        pids = tuple(dict.fromkeys(r.pid for r in rows))
        if not pids:
            return LockBlockedError(
                f"blocked by a lock held by another session: lock_timeout ({self.lock_timeout_ms} ms) expired"
            )
        held = ", ".join(f"pid {r.pid} ({r.mode} on {r.relation})" for r in rows[:3])
        return LockBlockedError(
            f"blocked by a lock held by pid {pids[0]}: lock_timeout ({self.lock_timeout_ms} ms) expired; "
            f"conflicting locks: {held}",
            pids,
        )


def connect(dsn: str, *, lock_timeout_ms: int = 200, statement_timeout_ms: int = 5000,
            sampler: bool = False, pg_locks_rate_hz: float = 0.0) -> Session:
    """Open a lockscope session.

    :param dsn: libpq conninfo or URI; empty string = libpq's defaults and the PG* environment, as for ``psql``.
    :param lock_timeout_ms: lock_timeout (ms) of every query of the session (set at connection, ``options``), and
        ``SET LOCAL`` again in each probe transaction.
    :param statement_timeout_ms: statement_timeout (ms), likewise.
    :param sampler: a sampling session (kept for the callers' clarity: every session is in autocommit, no
        transaction is ever held between queries).
    :param pg_locks_rate_hz: pg_locks reads per second at most (:meth:`Session.query_rows`); 0 = unpaced
        (scratch servers). The commands pass 2 for a server the user named unless ``--probe-rate`` says otherwise.
    :raises BadInputError: ``dsn`` is not a connection string libpq accepts (:func:`check_dsn`).
    :raises ConnectionFailedError: unreachable server or authentication failure: libpq's whole message (every
        line, joined) after the socket or host, port, database and user tried; the password never shown.
    :raises UnsupportedServerError: server older than PostgreSQL 13.
    """
    params = check_dsn(dsn) if dsn else {}
    if "connect_timeout" not in params and not os.environ.get("PGCONNECT_TIMEOUT"):
        params["connect_timeout"] = str(DEFAULT_CONNECT_TIMEOUT_S)
    params["application_name"] = APPLICATION_NAME
    # every query, catalog reads included, waits at most lock_timeout for a lock and runs at most statement_timeout;
    # every transaction is read-only, the sampler's autocommit ones too; and none is JIT-compiled: catalog reads such
    # as acquisition_facts are estimated above jit_above_cost, and a server built with LLVM would spend 0.2-1.4 s of
    # its CPU compiling each one (JIT changes execution time only, never which locks are taken)
    options = str(params.get("options") or os.environ.get("PGOPTIONS") or "")  # ours must not drop the user's
    params["options"] = (f"{options} -c statement_timeout={statement_timeout_ms}"
                         f" -c lock_timeout={lock_timeout_ms} -c default_transaction_read_only=on -c jit=off").strip()
    try:
        # prepare_threshold=None: psycopg never prepares a query of lockscope's on its own (it would after 5 runs,
        # and then answer a probe's ROLLBACK with DEALLOCATE ALL, dropping lockscope's own prepared statements)
        conn = psycopg.connect(make_conninfo("", **params), autocommit=True, prepare_threshold=None)
    except psycopg.Error as exc:
        text = re.sub(r"^connection (?:failed|is bad): ", "", str(exc).strip())
        lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
        message = redact("; ".join(lines) or "connection failed", dsn)
        if "unsupported startup parameter" in text:
            message += f": {POOLER_ADVICE}"
        raise ConnectionFailedError(f"cannot connect to {_where(params, text)}: {message}",
                                    sqlstate=exc.sqlstate) from None
    try:
        return Session(conn, dsn, lock_timeout_ms, statement_timeout_ms, pg_locks_rate_hz)
    except BaseException:
        conn.close()
        raise


#: What to do when a connection pooler refuses or drops the ``options`` startup parameter.
POOLER_ADVICE = ("a connection pooler (PgBouncer?) refuses or drops the options startup parameter that carries "
                 "lockscope's statement_timeout, lock_timeout and default_transaction_read_only; connect lockscope "
                 "to the PostgreSQL server itself (its host and port, not the pooler's)")

_SOCKET_IN_MESSAGE = re.compile(r'on socket "(?P<dir>.+?)/\.s\.PGSQL\.(?P<port>\d+)"')


def _where(params: dict[str, Any], libpq_message: str) -> str:
    """Socket directory or host, port, database and user a failed connection tried, as libpq chose them: the DSN's
    value, else the PG* environment, else libpq's compiled default (``PQconndefaults``: port 5432, the OS user;
    the database defaults to the user). With no host anywhere libpq uses its default socket directory (e.g.
    ``/var/run/postgresql`` or ``/tmp``), which only its message names."""
    defaults = {opt.keyword.decode(): (opt.val.decode() if opt.val is not None else None)
                for opt in psycopg.pq.Conninfo.get_defaults()}

    def value(key: str) -> str | None:
        given = params.get(key)
        return str(given) if given not in (None, "") else defaults.get(key)

    host = value("host") or value("hostaddr")
    port = value("port") or "5432"
    if not host:
        socket = _SOCKET_IN_MESSAGE.search(libpq_message)
        host = socket["dir"] if socket else "the default socket directory"
        port = socket["port"] if socket else port
        where = f"socket {host} port {port}"
    else:
        where = f"socket {host} port {port}" if host.startswith("/") else f"{host}:{port}"
    user = value("user") or "the current OS user"
    database = value("dbname") or user
    return f"{where}, database {database}, user {user}"


def run_script(conninfo: str, script: str) -> int:
    """Run a SQL script, statement by statement in autocommit, on a server lockscope started itself.

    Only for scratch servers (demo set-up, ``--setup``, lab): it executes statements for real.

    :param conninfo: the scratch server's conninfo (:meth:`ScratchServer.conninfo`).
    :param script: SQL text; split with PostgreSQL's own parser (pglast), so DO blocks and VACUUM work.
    :return: statements run (count).
    :raises StatementError: on the first failing statement (its text, shortened, and the server's message).
    :raises ConnectionFailedError: if the server cannot be reached.
    """
    from pglast import split
    from pglast.parser import ParseError

    try:
        statements = split(script)
    except ParseError as exc:
        raise StatementError(f"set-up script does not parse: {exc}") from None
    try:
        conn = psycopg.connect(conninfo, autocommit=True, application_name=APPLICATION_NAME)
    except psycopg.Error as exc:
        raise ConnectionFailedError(f"cannot connect to the scratch server: {str(exc).strip()}",
                                    sqlstate=exc.sqlstate) from None
    with conn:
        for stmt in statements:
            try:
                conn.execute(stmt.encode())
            except psycopg.Error as exc:
                short = " ".join(stmt.split())[:80]
                raise StatementError(f"set-up statement failed: {short}: {exc.diag.message_primary}",
                                     sqlstate=exc.sqlstate) from None
    return len(statements)


def time_on_scratch(conninfo: str, text: str, *, runs: int = 20) -> tuple[float, float]:
    """Median planning and execution time (ms) of ``text`` run for real ``runs`` times with ``EXPLAIN (ANALYZE,
    TIMING OFF, SUMMARY, FORMAT JSON)``, each in a transaction that is rolled back. Only for a server lockscope
    started itself (the statement executes: DML changes are rolled back, but it runs).

    :param conninfo: the scratch server's conninfo (:meth:`ScratchServer.conninfo`).
    :param text: one statement, parameters bound as literals.
    :raises StatementError: the statement failed (the server's message).
    :raises ConnectionFailedError: the server cannot be reached.
    """
    plan_ms, exec_ms, _ = time_and_cost_on_scratch(conninfo, text, runs=runs)
    return plan_ms, exec_ms


def time_and_cost_on_scratch(conninfo: str, text: str, *, runs: int = 20) -> tuple[float, float, float]:
    """:func:`time_on_scratch` with the plan's total cost (planner cost units, the top node's ``Total Cost`` of
    the last run): (planning ms, execution ms, cost).

    :raises StatementError: the statement failed (the server's message).
    :raises ConnectionFailedError: the server cannot be reached.
    """
    import json
    import statistics

    try:
        conn = psycopg.connect(conninfo, application_name=APPLICATION_NAME)
    except psycopg.Error as exc:
        raise ConnectionFailedError(f"cannot connect to the scratch server: {str(exc).strip()}",
                                    sqlstate=exc.sqlstate) from None
    plans: list[float] = []
    execs: list[float] = []
    cost = 0.0
    with conn:
        for _ in range(max(1, runs)):
            try:
                with conn.cursor() as cur:
                    cur.execute(b"EXPLAIN (ANALYZE, TIMING OFF, SUMMARY, FORMAT JSON) " + text.encode())
                    row = cur.fetchone()
            except psycopg.Error as exc:
                raise StatementError(f"timing the statement on the scratch server failed: "
                                     f"{exc.diag.message_primary or exc}", sqlstate=exc.sqlstate) from None
            finally:
                conn.rollback()
            doc = row[0] if row else None
            top = (json.loads(doc) if isinstance(doc, str) else doc or [{}])[0]
            plans.append(float(top.get("Planning Time", 0.0)))
            execs.append(float(top.get("Execution Time", 0.0)))
            cost = float(top.get("Plan", {}).get("Total Cost", 0.0))
    return statistics.median(plans), statistics.median(execs), cost


class ScratchExecutor:
    """A writable connection to a scratch server lockscope started itself, that RUNS statements for real, each
    transaction rolled back: the executed ground truth of transaction footprints (:mod:`lockscope.executed`).
    Never for a user's server: it takes a :class:`~lockscope.server.ScratchServer`, not a DSN.

    The connection is in autocommit; :meth:`begin` and :meth:`rollback` send ``BEGIN`` / ``ROLLBACK`` as plain
    simple-protocol statements (psycopg's own ``rollback()`` would also drop its prepared statements). Prepared
    statements are SQL-level (``PREPARE`` / ``EXECUTE``), so the server's plan cache advances from one execution to
    the next as an application's prepared statements do (``plancache.c GetCachedPlan``).

    :ivar facts: the server's :class:`ServerFacts` (read as every session reads them).
    """

    def __init__(self, conninfo: str, *, statement_timeout_ms: int = 0) -> None:
        try:
            self._conn = psycopg.connect(conninfo, autocommit=True, application_name=APPLICATION_NAME,
                                         prepare_threshold=None)
        except psycopg.Error as exc:
            raise ConnectionFailedError(f"cannot connect to the scratch server: {str(exc).strip()}",
                                        sqlstate=exc.sqlstate) from None
        self._dsn = conninfo
        self.statement_timeout_ms = statement_timeout_ms
        facts = self.query_rows("server_facts", _ServerFactsRow, version=0)[0]
        self.facts = ServerFacts(**{f.name: getattr(facts, f.name) for f in dataclasses.fields(ServerFacts)})
        if statement_timeout_ms:
            self.run(f"SET statement_timeout = {int(statement_timeout_ms)}")

    def close(self) -> None:
        """Roll back anything open and close the connection. Idempotent."""
        if not self._conn.closed:
            with contextlib.suppress(psycopg.Error):
                self._conn.execute(b"ROLLBACK")
            self._conn.close()

    def __enter__(self) -> ScratchExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def backend_pid(self) -> int:
        """pid of this connection's backend."""
        return int(self._conn.info.backend_pid)

    def literal(self, value: str) -> str:
        """``value`` as a quoted SQL string literal (untyped)."""
        return pg_sql.Literal(value).as_string(self._conn)

    def run(self, text: str) -> str:
        """Send one statement through the simple query protocol and run it for real (a scratch server only).

        :return: the server's command tag of the last statement the text held (``UPDATE 0``, ``SELECT 1``, ...;
            ``""`` when none came back).
        :raises StatementError: the server refused or failed it (its SQLSTATE and message, one line).
        """
        try:
            with self._conn.cursor() as cur:
                cur.execute(text.encode())
                return cur.statusmessage or ""
        except psycopg.Error as exc:
            raise self._failed(exc, text) from None

    def begin(self) -> None:
        """``BEGIN``."""
        self.run("BEGIN")

    def rollback(self) -> None:
        """``ROLLBACK`` (prepared statements stay; an error in the transaction is cleared)."""
        self.run("ROLLBACK")

    def commit(self) -> None:
        """``COMMIT`` (a migration's transaction, on a scratch server: the next transactions see its objects)."""
        self.run("COMMIT")

    def query_rows(self, name: str, row_type: type[RowT], params: Sequence[Any] | None = None, *,
                   version: int | None = None) -> list[RowT]:
        """Run lockscope's SQL file ``name`` (for this server's version, or ``version``), rows as ``row_type``.

        :raises RowShapeError: the rows lack a column ``row_type`` needs.
        :raises DatabaseError: with the server's message.
        """
        text = load_sql(name, self.facts.server_version_num if version is None else version)
        try:
            with self._conn.cursor(row_factory=_typed_rows(row_type, name)) as cur:
                cur.execute(text.encode(), params)
                return cur.fetchall() if cur.description else []
        except psycopg.Error as exc:
            raise DatabaseError(f"{exc.sqlstate or 'error'}: {(exc.diag.message_primary or str(exc)).strip()}",
                                sqlstate=exc.sqlstate) from None

    @staticmethod
    def _failed(exc: psycopg.Error, text: str) -> StatementError:
        short = " ".join(text.split())
        short = short if len(short) <= 80 else short[:77] + "..."
        where = f" (at character {exc.diag.statement_position})" if exc.diag.statement_position else ""
        return StatementError(f"{exc.sqlstate or 'error'}: {(exc.diag.message_primary or str(exc)).strip()}{where} "
                              f"in: {short}", sqlstate=exc.sqlstate)
