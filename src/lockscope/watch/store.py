"""``lockscope watch --record FILE``: recordings in SQLite (stdlib), written by a thread, committed every second.

Schema version 1 (documented in ``docs/watch.md``)::

    meta(key TEXT PRIMARY KEY, value TEXT)            format = 'lockscope-watch', schema_version = '1', ...
    samples(id INTEGER PRIMARY KEY, ts REAL, late_ticks INTEGER, active_sessions INTEGER)
    sessions(sample_id INTEGER, pid INTEGER, backend_type TEXT, state TEXT, wait_event_type TEXT,
             wait_event TEXT, query_id INTEGER, datname TEXT, usename TEXT, application_name TEXT,
             xact_start REAL, query_start REAL)
    gaps(id INTEGER PRIMARY KEY, start_ts REAL, end_ts REAL NULL, reason TEXT)
    lock_snapshots(id INTEGER PRIMARY KEY, ts REAL, backends INTEGER, relation_locks INTEGER,
                   main_table_locks INTEGER)
    lock_snapshot_backends(snapshot_id INTEGER, pid INTEGER, relation_locks INTEGER, main_table_locks INTEGER,
                           waiting_locks INTEGER)
    blocking(ts REAL, pid INTEGER, blocking_pids TEXT)                 blocking_pids: JSON array of pids
    stat_lock(ts REAL, interval_s REAL, locktype TEXT, fastpath_exceeded INTEGER, waits INTEGER)   deltas (PG19)
    statements(query_id INTEGER PRIMARY KEY, query TEXT, source TEXT)  source: pg_stat_statements|pg_stat_activity

Times are seconds since the epoch (UTC). The file is in WAL mode while recording (a report can read it
meanwhile); every second the writer commits, so a killed process loses at most the last second; a clean close
checkpoints and leaves one self-contained file.
"""

from __future__ import annotations

import json
import queue
import sqlite3
import threading
import time
import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import RecordFileError
from .sampler import Sample
from .window import LockSnapshot

__all__ = ["FORMAT", "SCHEMA_SQL", "SCHEMA_VERSION", "GapRow", "RecordWriter", "Recording", "open_recording"]

#: ``meta.format`` of a lockscope recording.
FORMAT = "lockscope-watch"
#: The schema version this lockscope writes and reads.
SCHEMA_VERSION = 1
_SQLITE_MAGIC = b"SQLite format 3\x00"

SCHEMA_SQL = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE samples (id INTEGER PRIMARY KEY, ts REAL NOT NULL, late_ticks INTEGER NOT NULL,
                      active_sessions INTEGER NOT NULL);
CREATE TABLE sessions (sample_id INTEGER NOT NULL, pid INTEGER NOT NULL, backend_type TEXT, state TEXT,
                       wait_event_type TEXT, wait_event TEXT, query_id INTEGER, datname TEXT, usename TEXT,
                       application_name TEXT, xact_start REAL, query_start REAL);
CREATE TABLE gaps (id INTEGER PRIMARY KEY, start_ts REAL NOT NULL, end_ts REAL, reason TEXT NOT NULL);
CREATE TABLE lock_snapshots (id INTEGER PRIMARY KEY, ts REAL NOT NULL, backends INTEGER NOT NULL,
                             relation_locks INTEGER NOT NULL, main_table_locks INTEGER NOT NULL);
CREATE TABLE lock_snapshot_backends (snapshot_id INTEGER NOT NULL, pid INTEGER NOT NULL,
                                     relation_locks INTEGER NOT NULL, main_table_locks INTEGER NOT NULL,
                                     waiting_locks INTEGER NOT NULL);
CREATE TABLE blocking (ts REAL NOT NULL, pid INTEGER NOT NULL, blocking_pids TEXT NOT NULL);
CREATE TABLE stat_lock (ts REAL NOT NULL, interval_s REAL NOT NULL, locktype TEXT NOT NULL,
                        fastpath_exceeded INTEGER NOT NULL, waits INTEGER NOT NULL);
CREATE TABLE statements (query_id INTEGER PRIMARY KEY, query TEXT NOT NULL, source TEXT NOT NULL);
"""
_TABLES = ("meta", "samples", "sessions", "gaps", "lock_snapshots", "lock_snapshot_backends", "blocking",
           "stat_lock", "statements")


def _ts(value: Any) -> float | None:
    return value.timestamp() if value is not None else None


class RecordWriter:
    """Writes one recording from a background thread; the sampling thread only enqueues.

    :param path: a new file (an existing non-empty file is refused: lockscope never overwrites).
    :param meta: ``key -> value`` stored in ``meta`` (values turned into text).
    :param flush_every_s: commit interval (s, <= 1).
    :raises RecordFileError: if the file exists or cannot be created.
    """

    def __init__(self, path: Path | str, meta: dict[str, object], *, flush_every_s: float = 1.0) -> None:
        self.path = Path(path)
        if self.path.exists() and (self.path.is_dir() or self.path.stat().st_size > 0):
            raise RecordFileError(f"{self.path} already exists; lockscope watch never overwrites a file "
                                  "(choose a new --record name)")
        try:
            conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("BEGIN")
            for stmt in SCHEMA_SQL.split(";"):
                if stmt.strip():
                    conn.execute(stmt)
            base = {"format": FORMAT, "schema_version": SCHEMA_VERSION, "started_ts": time.time()}
            conn.executemany("INSERT INTO meta VALUES (?, ?)",
                             [(k, str(v)) for k, v in {**base, **meta}.items() if v is not None])
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            raise RecordFileError(f"cannot create the recording {self.path}: {exc}") from None
        self._conn = conn
        self.flush_every_s = min(1.0, flush_every_s)
        self._queue: queue.Queue[tuple[str, Any]] = queue.Queue()
        self._next_sample_id = 1
        self._next_snapshot_id = 1
        self.samples_written = 0
        self.error: BaseException | None = None
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="lockscope-recorder", daemon=True)
        self._thread.start()

    # -- producer side (sampling thread) ----------------------------------------------------------------------
    def add_sample(self, sample: Sample) -> None:
        """Queue one sample and its sessions."""
        self._queue.put(("sample", sample))

    def gap_started(self, wall_s: float, reason: str) -> None:
        """A break in sampling began (connection lost) at ``wall_s`` (s since the epoch)."""
        self._queue.put(("gap_start", (wall_s, reason)))

    def gap_ended(self, wall_s: float) -> None:
        """The open break ended at ``wall_s``."""
        self._queue.put(("gap_end", wall_s))

    def add_lock_snapshot(self, snapshot: LockSnapshot) -> None:
        """Queue one pg_locks snapshot."""
        self._queue.put(("locks", snapshot))

    def add_blocking(self, wall_s: float, blocking: Mapping[int, Sequence[int]]) -> None:
        """Queue ``pid -> blocking pids`` read at ``wall_s``."""
        self._queue.put(("blocking", (wall_s, blocking)))

    def add_stat_lock(self, wall_s: float, interval_s: float, deltas: dict[str, tuple[int, int]]) -> None:
        """Queue PG19 pg_stat_lock deltas: ``locktype -> (fastpath_exceeded, waits)`` over ``interval_s``."""
        self._queue.put(("stat_lock", (wall_s, interval_s, deltas)))

    def add_statement(self, query_id: int, text: str, source: str) -> None:
        """Queue a statement text for a query_id."""
        self._queue.put(("statement", (query_id, text, source)))

    def close(self, end_reason: str = "stopped") -> None:
        """Write everything queued, record the end, checkpoint and close (leaves one file). Idempotent.

        :raises RecordFileError: if writing failed.
        """
        if self._closed:
            return
        self._closed = True
        self._queue.put(("close", end_reason))
        self._thread.join(30)
        if self.error is not None:
            raise RecordFileError(f"writing {self.path} failed: {self.error}")

    # -- writer thread ------------------------------------------------------------------------------------------
    def _run(self) -> None:
        conn = self._conn
        in_tx = False
        next_flush = time.monotonic() + self.flush_every_s
        try:
            while True:
                timeout = max(0.0, next_flush - time.monotonic())
                try:
                    kind, payload = self._queue.get(timeout=timeout)
                except queue.Empty:
                    kind, payload = "", None
                if kind:
                    if not in_tx:
                        conn.execute("BEGIN")
                        in_tx = True
                    if kind == "close":
                        conn.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                                         [("ended_ts", str(time.time())), ("end_reason", str(payload))])
                        conn.execute("UPDATE gaps SET end_ts = ? WHERE end_ts IS NULL", (time.time(),))
                        conn.execute("COMMIT")
                        in_tx = False
                        break
                    self._write(conn, kind, payload)
                if time.monotonic() >= next_flush:
                    if in_tx:
                        conn.execute("COMMIT")
                        in_tx = False
                    next_flush = time.monotonic() + self.flush_every_s
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            conn.execute("PRAGMA journal_mode=DELETE")
        except BaseException as exc:  # reported by close()
            self.error = exc
        finally:
            try:
                if in_tx:
                    conn.execute("COMMIT")
            except sqlite3.Error:
                pass
            conn.close()

    def _write(self, conn: sqlite3.Connection, kind: str, payload: Any) -> None:
        if kind == "sample":
            sample: Sample = payload
            sid = self._next_sample_id
            self._next_sample_id += 1
            conn.execute("INSERT INTO samples VALUES (?, ?, ?, ?)",
                         (sid, sample.wall_s, sample.late_ticks, len(sample.sessions)))
            if sample.sessions:
                conn.executemany(
                    "INSERT INTO sessions VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [(sid, s.pid, s.backend_type, s.state, s.wait_event_type, s.wait_event, s.query_id, s.datname,
                      s.usename, s.application_name, _ts(s.xact_start), _ts(s.query_start))
                     for s in sample.sessions],
                )
            self.samples_written += 1
        elif kind == "gap_start":
            conn.execute("INSERT INTO gaps (start_ts, end_ts, reason) VALUES (?, NULL, ?)", payload)
        elif kind == "gap_end":
            conn.execute("UPDATE gaps SET end_ts = ? WHERE end_ts IS NULL", (payload,))
        elif kind == "locks":
            snap: LockSnapshot = payload
            snap_id = self._next_snapshot_id
            self._next_snapshot_id += 1
            conn.execute("INSERT INTO lock_snapshots VALUES (?, ?, ?, ?, ?)",
                         (snap_id, snap.wall_s, len(snap.backends), snap.relation_locks, snap.main_table_locks))
            conn.executemany("INSERT INTO lock_snapshot_backends VALUES (?, ?, ?, ?, ?)",
                             [(snap_id, b.pid, b.relation_locks, b.main_table_locks, b.waiting_locks)
                              for b in snap.backends])
        elif kind == "blocking":
            wall_s, blocking = payload
            conn.executemany("INSERT INTO blocking VALUES (?, ?, ?)",
                             [(wall_s, pid, json.dumps(list(pids))) for pid, pids in blocking.items()])
        elif kind == "stat_lock":
            wall_s, interval_s, deltas = payload
            conn.executemany("INSERT INTO stat_lock VALUES (?, ?, ?, ?, ?)",
                             [(wall_s, interval_s, t, fp, w) for t, (fp, w) in deltas.items()])
        elif kind == "statement":
            conn.execute("INSERT OR REPLACE INTO statements VALUES (?, ?, ?)", payload)


# -- reading ---------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class GapRow:
    """A break in sampling.

    :ivar start_s: when it began (s since the epoch).
    :ivar end_s: when sampling resumed (None: never, the recording ended during it).
    :ivar reason: e.g. the connection error.
    """

    start_s: float
    end_s: float | None
    reason: str

    @property
    def duration_s(self) -> float | None:
        """Length of the break (s), or None when open."""
        return None if self.end_s is None else self.end_s - self.start_s


class Recording:
    """A recording opened for reading by :func:`open_recording`; every read turns SQLite errors into
    :class:`~lockscope.errors.RecordFileError`.

    :ivar path: the file.
    :ivar meta: its ``meta`` table.
    """

    def __init__(self, path: Path, conn: sqlite3.Connection, meta: dict[str, str]) -> None:
        self.path = path
        self._conn = conn
        self.meta = meta

    def close(self) -> None:
        """Close the file."""
        self._conn.close()

    def __enter__(self) -> Recording:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run a read-only query on the recording.

        :raises RecordFileError: if the file turns out to be corrupt.
        """
        try:
            return self._conn.execute(sql, params).fetchall()
        except sqlite3.DatabaseError as exc:
            raise RecordFileError(f"{self.path} is corrupt: {exc}") from None

    def gaps(self) -> list[GapRow]:
        """Breaks in sampling, in time order."""
        return [GapRow(float(a), None if b is None else float(b), str(r))
                for a, b, r in self.rows("SELECT start_ts, end_ts, reason FROM gaps ORDER BY start_ts")]

    def statement_texts(self) -> dict[int, str]:
        """query_id -> text."""
        return {int(q): str(t) for q, t in self.rows("SELECT query_id, query FROM statements")}


def open_recording(path: Path | str) -> Recording:
    """Open and validate a recording.

    :raises RecordFileError: missing or unreadable file, not SQLite, SQLite but not a lockscope recording,
        corrupt, or written with a newer schema.
    """
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            head = fh.read(len(_SQLITE_MAGIC))
    except FileNotFoundError:
        raise RecordFileError(f"{path}: no such recording") from None
    except IsADirectoryError:
        raise RecordFileError(f"{path} is a directory, not a lockscope watch recording") from None
    except OSError as exc:
        raise RecordFileError(f"cannot read {path}: {exc.strerror}") from None
    if head != _SQLITE_MAGIC:
        what = "an empty file" if not head else "not an SQLite database"
        raise RecordFileError(f"{path} is not a lockscope watch recording ({what})")
    try:
        # read-write mode (never create): a recording left by a killed writer may need its WAL recovered
        conn = sqlite3.connect(f"file:{urllib.parse.quote(str(path.resolve()))}?mode=rw", uri=True)
    except sqlite3.Error as exc:
        raise RecordFileError(f"cannot open {path}: {exc}") from None
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "meta" not in tables:
            raise RecordFileError(f"{path} is an SQLite database but not a lockscope watch recording (no meta table)")
        meta = {str(k): str(v) for k, v in conn.execute("SELECT key, value FROM meta")}
        if meta.get("format") != FORMAT:
            raise RecordFileError(f"{path} is an SQLite database but not a lockscope watch recording "
                                  f"(format {meta.get('format')!r})")
        try:
            version = int(meta.get("schema_version", ""))
        except ValueError:
            raise RecordFileError(f"{path}: invalid schema_version {meta.get('schema_version')!r}") from None
        if version > SCHEMA_VERSION:
            raise RecordFileError(f"{path} was written with recording schema {version}; this lockscope reads "
                                  f"schema {SCHEMA_VERSION} (upgrade lockscope)")
        missing = [t for t in _TABLES if t not in tables]
        if missing:
            raise RecordFileError(f"{path} is corrupt: missing table(s) {', '.join(missing)}")
        conn.execute("SELECT count(*) FROM samples").fetchone()
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise RecordFileError(f"{path} is corrupt: {exc}") from None
    except RecordFileError:
        conn.close()
        raise
    return Recording(path, conn, meta)
