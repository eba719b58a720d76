"""The ``lockscope watch`` engine: one connection, a steady sampling schedule, reconnect with backoff, and the
low-rate extras (pg_locks snapshot, pg_blocking_pids for Lock waiters, PG19 pg_stat_lock, statement texts).

Samples come from a *source* (``WatchConfig.source``): ``activity`` runs exactly one query per tick
(``sql/activity_sample*.sql``, no heavyweight lock, no lock-manager LWLock); ``pg_wait_sampling`` reads the
extension's in-server 10 ms history a few times a second (:mod:`lockscope.watch.wait_sampling`, its costs and
pitfalls there); ``auto`` picks pg_wait_sampling when it is usable in the database watched, else activity. The
extras run between reads on the same autocommit connection and are rate-limited:

==========================  ======================================  =============================================
extra                       when                                    cost on the server
==========================  ======================================  =============================================
pg_locks snapshot           ``locks_every_s`` (off by default,       every backend's fast-path LWLock, then all 16
                            >= 1 s), with the database's             lock-partition LWLocks shared, once
                            transaction count
pg_blocking_pids(pid)       only pids in wait_event_type 'Lock',     ProcArrayLock + all 16 partition LWLocks
                            at most once per second, <= 10 pids      shared, once per pid
pg_stat_lock (PG19)         once per second, when the view exists    reads cumulative statistics
statement texts             new query_ids waiting on LockManager,   pg_stat_statements (or pg_stat_get_activity)
                            at most every 5 s
==========================  ======================================  =============================================

The pg_locks snapshots also give the main-lock-table acquisitions/s the server holds: the client backends of the
watched database in a transaction, held main-table locks per transaction x transactions/s
(:mod:`lockscope.workload.transactions`; the database's transactions from ``audit_xact_counters.sql`` read with
each snapshot), the figure on PostgreSQL 13-18; on 19 ``pg_stat_lock.fastpath_exceeded`` per second is the
server's own count of them.

Nothing here prints: the live view and the Prometheus endpoint read :attr:`Watcher.state`.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from .. import __version__
from ..db import APPLICATION_NAME, Endpoint, Session, connect
from ..errors import BadInputError, DatabaseError, LockscopeError, RecordFileError
from ..rows import (
    BackendLockCountsRow,
    BlockingPidsRow,
    HeldLocksRow,
    QueryTextRow,
    StatLockRow,
    TransactionCountRow,
    WatchFeaturesRow,
)
from ..versions import PG14
from ..workload.transactions import TransactionLoad, transaction_load
from .aas import MAX_HZ, MIN_HZ, WaitTotals, achieved_hz, share
from .sampler import ActivityReader, Sample, Schedule
from .store import RecordWriter
from .wait_sampling import WaitSamplingInfo, WaitSamplingReader, detect, require
from .window import BackendLocks, LockSnapshot, RollingWindow, StatementStat

__all__ = [
    "MAX_HZ",
    "MIN_HZ",
    "MIN_LOCKS_EVERY_S",
    "SOURCES",
    "GapEvent",
    "WatchConfig",
    "WatchState",
    "WatchSummary",
    "Watcher",
    "stat_lock_deltas",
]

#: ``--locks-every`` minimum (s): a pg_locks snapshot takes all 16 lock-partition LWLocks.
MIN_LOCKS_EVERY_S = 1.0
#: pg_blocking_pids() at most this often (s) and for at most this many pids per call.
BLOCKING_EVERY_S = 1.0
BLOCKING_MAX_PIDS = 10
#: Statement texts looked up at most this often (s).
TEXTS_EVERY_S = 5.0
#: pg_locks snapshots kept for the transaction estimate of the summary (the live figure uses the window's).
HELD_SNAPSHOTS_KEPT = 600
#: ``WatchConfig.source`` choices: where active-session samples come from.
SOURCES = ("auto", "activity", "pg_wait_sampling")


@dataclass(frozen=True)
class WatchConfig:
    """What to watch and how.

    :ivar dsn: libpq conninfo or URI.
    :ivar hz: samples per second (1..100).
    :ivar duration_s: stop after this long (s); None = until :meth:`Watcher.stop`.
    :ivar record_path: SQLite recording to create, or None.
    :ivar locks_every_s: pg_locks snapshot interval (s, >= 1), or None (off).
    :ivar statement_timeout_ms: statement_timeout of the sampling session (ms).
    :ivar lock_timeout_ms: lock_timeout of the sampling session (ms).
    :ivar max_backoff_s: longest wait between reconnection attempts (s).
    :ivar window_s: span of the live figures (s).
    :ivar source: ``activity`` (poll pg_stat_get_activity at ``hz``), ``pg_wait_sampling`` (read the extension's
        history, keep ``hz`` walks per second; refused when the extension is not usable), or ``auto`` (the
        extension when usable, else activity).
    """

    dsn: str
    hz: float = 10.0
    duration_s: float | None = None
    record_path: Path | None = None
    locks_every_s: float | None = None
    statement_timeout_ms: int = 500
    lock_timeout_ms: int = 100
    max_backoff_s: float = 5.0
    window_s: int = 60
    source: str = "auto"

    def validate(self) -> None:
        """:raises BadInputError: for values out of range."""
        if self.source not in SOURCES:
            raise BadInputError(f"--source {self.source}: choose one of {', '.join(SOURCES)}")
        if not MIN_HZ <= self.hz <= MAX_HZ:
            raise BadInputError(f"--hz {self.hz:g}: sampling rate must be between {MIN_HZ:g} and {MAX_HZ:g} Hz")
        if self.locks_every_s is not None and self.locks_every_s < MIN_LOCKS_EVERY_S:
            raise BadInputError(f"--locks-every {self.locks_every_s:g}: at least {MIN_LOCKS_EVERY_S:g} s "
                                "(each pg_locks snapshot takes all 16 lock-partition LWLocks)")
        if self.duration_s is not None and self.duration_s <= 0:
            raise BadInputError("--duration must be positive")


@dataclass(frozen=True)
class GapEvent:
    """A break in sampling (connection lost or server restarted).

    :ivar start_s: last moment sampling worked (s since the epoch).
    :ivar end_s: when sampling resumed (s since the epoch), None while open.
    :ivar reason: the error, one line.
    """

    start_s: float
    end_s: float | None
    reason: str


@dataclass
class WatchState:
    """Live state shared with the view and the Prometheus collector (read from other threads).

    :ivar window: rolling per-second statistics.
    :ivar connected: True while sampling works.
    :ivar server_version: of the current connection.
    :ivar endpoint: where the current connection is (host or socket, port, database, user).
    :ivar backend_pid: pid of lockscope's own sampling backend (current connection).
    :ivar gaps: breaks so far.
    :ivar reconnect_attempts: failed attempts in the current break (count).
    :ivar next_attempt_s: monotonic time of the next attempt during a break.
    :ivar last_error: last error, one line.
    :ivar query_errors: sample queries that failed without losing the connection (count).
    :ivar locks: last pg_locks snapshot (``locks_every_s``), or None.
    :ivar blocking: last pg_blocking_pids result: pid -> blocking pids.
    :ivar fastpath_exceeded_per_s: last PG19 delta per second over all lock types, or None (no pg_stat_lock).
    :ivar fastpath_exceeded_total: PG19 fast-path overflows counted since the start, per locktype.
    :ivar has_stat_lock: the server has pg_stat_lock.fastpath_exceeded.
    :ivar pgss: pg_stat_statements is installed in the database watched.
    :ivar compute_query_id: the server's setting (None before PG 14).
    :ivar fastpath_slots: fast-path relation-lock slots per backend of the server (capacity model, count).
    :ivar source: the sample source in use, ``activity`` or ``pg_wait_sampling``.
    :ivar source_detail: one line about it (pg_wait_sampling: version, period, ring, CPU sampled or inferred).
    :ivar source_note: why ``auto`` chose ``activity`` (pg_wait_sampling missing or not loaded), else "".
    :ivar walks_lost: pg_wait_sampling collector walks lost to a ring wrap (count).
    :ivar transactions: what the pg_locks snapshots of the last ``window_s`` say of the watched database's
        transactions (held main-table locks per transaction x transactions/s), None without snapshots.
    """

    window: RollingWindow
    connected: bool = False
    server_version: str = ""
    endpoint: Endpoint | None = None
    backend_pid: int | None = None
    max_locks_per_transaction: int | None = None
    fastpath_slots: int | None = None
    gaps: list[GapEvent] = field(default_factory=list)
    reconnect_attempts: int = 0
    next_attempt_s: float | None = None
    last_error: str | None = None
    query_errors: int = 0
    locks: LockSnapshot | None = None
    blocking: dict[int, tuple[int, ...]] = field(default_factory=dict)
    blocking_wall_s: float | None = None
    fastpath_exceeded_per_s: float | None = None
    fastpath_exceeded_total: dict[str, int] = field(default_factory=dict)
    has_stat_lock: bool = False
    pgss: bool = False
    compute_query_id: str | None = None
    started_wall_s: float = field(default_factory=time.time)
    source: str = "activity"
    source_detail: str = "pg_stat_activity"
    source_note: str = ""
    walks_lost: int = 0
    transactions: TransactionLoad | None = None

    def note_query_error(self, exc: Exception) -> None:
        """Count a sample or extra query that failed while the connection stayed up, and keep its message."""
        self.query_errors += 1
        self.last_error = str(exc)


@dataclass(frozen=True)
class WatchSummary(WaitTotals):
    """A finished watch.

    :ivar duration_s: wall time watched (s).
    :ivar ticks: samples taken (count).
    :ivar late_ticks: ticks skipped because sampling ran late (count).
    :ivar hz: target rate (Hz).
    :ivar by_wait: wait label -> active-session samples (count).
    :ivar gaps: breaks in sampling.
    :ivar top_statements: by LockManager samples.
    :ivar record_path: the recording, or None.
    :ivar samples_recorded: samples written to it (count).
    :ivar end_reason: ``duration``, ``stopped``, ``interrupted``, ``terminated`` or an error.
    :ivar backends_seen: per database, the client backends seen running a statement during the watch (distinct
        pids, lockscope's own left out): in a closed loop, the connections doing work (count).
    :ivar fastpath_exceeded_per_s: PG 19 ``pg_stat_lock.fastpath_exceeded`` (all lock types) per second between the
        first and the last read, None without the view or two reads.
    :ivar transactions: the watched database's transactions as the pg_locks snapshots saw them (the last
        :data:`HELD_SNAPSHOTS_KEPT`; ``--locks-every``), None without snapshots.
    :ivar lockmanager_batches: per second of the watch, ``(active-session samples, of which on
        LWLock:LockManager)`` (counts): the batches of :attr:`lockmanager_interval`.
    """

    duration_s: float
    ticks: int
    late_ticks: int
    hz: float
    by_wait: dict[str, int]
    gaps: tuple[GapEvent, ...]
    top_statements: tuple[StatementStat, ...]
    record_path: Path | None
    samples_recorded: int
    end_reason: str
    server_version: str
    query_errors: int
    backends_seen: dict[str, int] = field(default_factory=dict)
    fastpath_exceeded_per_s: float | None = None
    transactions: TransactionLoad | None = None
    lockmanager_batches: tuple[tuple[int, int], ...] = ()

    @property
    def main_lock_table_per_s(self) -> float | None:
        """Main-lock-table acquisitions/s from the server: ``fastpath_exceeded`` per second on PG 19, else the
        held main-table locks per transaction x transactions/s of the snapshots; None without either."""
        if self.fastpath_exceeded_per_s is not None:
            return self.fastpath_exceeded_per_s
        return self.transactions.held_main_per_s if self.transactions is not None else None

    @property
    def achieved_hz(self) -> float:
        """Samples per second over the whole watch, gaps included (Hz): all ticks / wall time from start to stop."""
        return achieved_hz(self.ticks, self.duration_s)

    @property
    def lockmanager_share(self) -> float:
        """Fraction (0..1) of active-session samples waiting on LWLock:LockManager."""
        return share(self.lockmanager_samples, self.active_session_samples)


def stat_lock_deltas(previous: dict[str, tuple[int, int]], current: dict[str, tuple[int, int]]
                     ) -> dict[str, tuple[int, int]]:
    """Per-locktype increases of PG19 pg_stat_lock ``(fastpath_exceeded, waits)`` between two reads.

    A counter that went down (``pg_stat_reset_shared('lock')``, server restart) restarts from its current value.
    """
    out: dict[str, tuple[int, int]] = {}
    for locktype, (fp, waits) in current.items():
        pfp, pwaits = previous.get(locktype, (0, 0))
        out[locktype] = (fp - pfp if fp >= pfp else fp, waits - pwaits if waits >= pwaits else waits)
    return out


class Watcher:
    """Runs a watch in a background thread.

    Usage::

        watcher = Watcher(WatchConfig(dsn, hz=10, record_path=Path("run.db")))
        watcher.start()            # connects first: a bad DSN raises here
        watcher.wait()             # until duration_s, or call watcher.stop()
        summary = watcher.stop()

    :param config: what to watch.
    :raises BadInputError: for a bad config (on :meth:`start`).
    """

    def __init__(self, config: WatchConfig) -> None:
        self.config = config
        self.state = WatchState(RollingWindow(config.window_s))
        self.writer: RecordWriter | None = None
        self._stop = threading.Event()
        self._done = threading.Event()
        self._thread: threading.Thread | None = None
        self._session: Session | None = None
        self._end_reason = "stopped"
        self.error: BaseException | None = None
        self._start_mono = 0.0
        self._end_mono: float | None = None
        self._stat_lock_prev: dict[str, tuple[int, int]] | None = None
        self._stat_lock_prev_mono = 0.0
        self._stat_lock_span_s = 0.0
        self._held: deque[tuple[float, list[HeldLocksRow], int | None]] = deque(maxlen=HELD_SNAPSHOTS_KEPT)
        self._pgss_schema: str | None = None
        self._pgws_info: WaitSamplingInfo | None = None
        self._seen: dict[str, set[int]] = {}

    # -- life cycle ----------------------------------------------------------------------------------------------
    def start(self) -> Watcher:
        """Validate, connect (errors raised here: bad DSN, authentication, old server), create the recording,
        and start sampling in a thread.

        :raises BadInputError, RecordFileError, ConnectionFailedError, UnsupportedServerError:
        """
        self.config.validate()
        session = self._connect()
        try:
            if self.config.record_path is not None:
                facts = session.facts
                self.writer = RecordWriter(self.config.record_path, {
                    "lockscope_version": __version__,
                    "dsn": session.dsn_redacted,
                    "hz": self.config.hz,
                    "locks_every_s": self.config.locks_every_s,
                    "server_version": facts.server_version,
                    "server_version_num": facts.server_version_num,
                    "max_locks_per_transaction": facts.max_locks_per_transaction,
                    "max_connections": facts.max_connections,
                    "database": facts.database,
                    "backend_pid": session.backend_pid,
                    "source": self.state.source,
                    "source_detail": self.state.source_detail,
                })
        except BaseException:
            session.close()
            raise
        self._session = session
        self._start_mono = time.monotonic()
        self.state.started_wall_s = time.time()
        self._thread = threading.Thread(target=self._run, name="lockscope-watch", daemon=True)
        self._thread.start()
        return self

    def wait(self, timeout_s: float | None = None) -> bool:
        """Block until the watch ends by itself (duration reached) or ``timeout_s`` passes; True if it ended."""
        return self._done.wait(timeout_s)

    @property
    def finished(self) -> bool:
        """True once sampling has ended."""
        return self._done.is_set()

    def stop(self, reason: str = "stopped") -> WatchSummary:
        """Stop sampling, flush and close the recording, return the summary. Idempotent.

        :raises RecordFileError: if the recording could not be written.
        """
        if not self._done.is_set():
            self._end_reason = reason
        self._stop.set()
        if self._thread is not None:
            self._thread.join(30)
        if self._end_mono is None:
            self._end_mono = time.monotonic()
        if self.writer is not None:
            self.writer.close(self._end_reason)
        return self.summary()

    def summary(self, top: int = 10) -> WatchSummary:
        """The figures so far."""
        end = self._end_mono if self._end_mono is not None else time.monotonic()
        by_wait, statements = self.state.window.totals(top)
        return WatchSummary(
            duration_s=max(0.0, end - self._start_mono) if self._start_mono else 0.0,
            ticks=self.state.window.total_ticks,
            late_ticks=self.state.window.total_late_ticks,
            hz=self.config.hz,
            by_wait=by_wait,
            gaps=tuple(self.state.gaps),
            top_statements=statements,
            record_path=self.config.record_path,
            samples_recorded=self.writer.samples_written if self.writer is not None else 0,
            end_reason=self._end_reason,
            server_version=self.state.server_version,
            query_errors=self.state.query_errors,
            backends_seen={db: len(pids) for db, pids in list(self._seen.items())},
            fastpath_exceeded_per_s=(sum(self.state.fastpath_exceeded_total.values()) / self._stat_lock_span_s
                                     if self._stat_lock_span_s > 0 else None),
            transactions=self._transactions(None),
            lockmanager_batches=self.state.window.lockmanager_batches(),
        )

    # -- connection ---------------------------------------------------------------------------------------------
    def _connect(self) -> Session:
        cfg = self.config
        session = connect(cfg.dsn, sampler=True, statement_timeout_ms=cfg.statement_timeout_ms,
                          lock_timeout_ms=cfg.lock_timeout_ms)
        try:
            features = session.query_rows("watch_features", WatchFeaturesRow)[0]
        except BaseException:
            session.close()
            raise
        st = self.state
        st.server_version = session.facts.server_version
        st.endpoint = session.endpoint
        st.backend_pid = session.backend_pid
        st.max_locks_per_transaction = session.facts.max_locks_per_transaction
        st.fastpath_slots = session.facts.capacity.slots
        st.has_stat_lock = bool(features.has_stat_lock)
        self._pgss_schema = features.pgss_schema
        st.pgss = self._pgss_schema is not None
        st.compute_query_id = features.compute_query_id
        self._stat_lock_prev = None
        try:
            self._resolve_source(session)
        except BaseException:
            session.close()
            raise
        return session

    def _resolve_source(self, session: Session) -> None:
        """Pick the sample source for this connection (``auto``: pg_wait_sampling when usable).

        :raises DatabaseError: ``pg_wait_sampling`` was asked for and is not usable here.
        """
        st = self.state
        info: WaitSamplingInfo | None
        if self.config.source == "pg_wait_sampling":
            info, note = require(session), ""
        elif self.config.source == "auto":
            info, note = detect(session)
        else:
            info, note = None, ""
        self._pgws_info = info
        if info is None:
            st.source, st.source_detail = "activity", "pg_stat_activity"
            st.source_note = f"pg_wait_sampling not used: {note}" if note else ""
        else:
            st.source, st.source_detail, st.source_note = "pg_wait_sampling", info.describe(), ""

    def _reconnect(self, reason: str) -> Session | None:
        """Retry with exponential backoff until connected or stopped; the break is recorded as a gap."""
        st = self.state
        last_ok = st.window.last_wall_s or time.time()
        gap = GapEvent(last_ok, None, reason)
        st.gaps.append(gap)
        st.connected = False
        st.last_error = reason
        if self.writer is not None:
            self.writer.gap_started(last_ok, reason)
        delay = 0.1
        st.reconnect_attempts = 0
        while not self._stop.is_set() and not self._deadline_passed():
            try:
                session = self._connect()
            except LockscopeError as exc:
                st.reconnect_attempts += 1
                st.last_error = str(exc)
                st.next_attempt_s = time.monotonic() + delay
                self._stop.wait(min(delay, self._time_left()))
                delay = min(self.config.max_backoff_s, delay * 2)
                continue
            now = time.time()
            st.gaps[-1] = GapEvent(gap.start_s, now, reason)
            if self.writer is not None:
                self.writer.gap_ended(now)
            st.connected = True
            st.next_attempt_s = None
            return session
        return None

    def _time_left(self) -> float:
        if self.config.duration_s is None:
            return 3600.0
        return max(0.0, self._start_mono + self.config.duration_s - time.monotonic())

    def _deadline_passed(self) -> bool:
        return self.config.duration_s is not None and time.monotonic() >= self._start_mono + self.config.duration_s

    # -- sampling thread ----------------------------------------------------------------------------------------
    def _run(self) -> None:
        session = self._session
        try:
            while session is not None and not self._stop.is_set():
                reason = self._sample_until_broken(session)
                session.close()
                session = None
                if reason is None:  # stopped or duration reached
                    break
                session = self._reconnect(reason)
            if self._deadline_passed() and not self._stop.is_set():
                self._end_reason = "duration"
        except BaseException as exc:  # reported by the command via .error
            self.error = exc
            self._end_reason = f"error: {exc}"
        finally:
            if session is not None:
                session.close()
            self.state.connected = False
            self._end_mono = time.monotonic()
            self._done.set()

    def _sample_until_broken(self, session: Session) -> str | None:
        """Sample until stopped (None) or the connection breaks (the reason)."""
        cfg = self.config
        st = self.state
        st.connected = True
        source = self._make_source(session)
        writer = self.writer
        end = None if cfg.duration_s is None else self._start_mono + cfg.duration_s
        consecutive_errors = 0
        next_locks = time.monotonic() if cfg.locks_every_s else None
        next_blocking = 0.0
        next_stat_lock = time.monotonic()
        next_texts = time.monotonic() + 1.0
        while not self._stop.is_set():
            now = time.monotonic()
            if end is not None and now >= end:
                self._last_texts(session)
                return None
            try:
                samples = source.read()
            except DatabaseError as exc:
                if session.closed:
                    return str(exc)
                st.note_query_error(exc)
                consecutive_errors += 1
                if consecutive_errors >= 3:
                    return f"{consecutive_errors} failed samples in a row: {exc}"
                source.wait(self._stop)
                continue
            consecutive_errors = 0
            self._take(samples)
            sessions = samples[-1].sessions if samples else ()
            st.walks_lost = source.walks_lost
            # low-rate extras between ticks; a failure here never stops sampling
            try:
                if next_locks is not None and now >= next_locks:
                    next_locks = now + float(cfg.locks_every_s or 1.0)
                    self._locks_snapshot(session)
                if now >= next_blocking:
                    lock_waiters = [s.pid for s in sessions if s.wait_event_type == "Lock"]
                    if lock_waiters:
                        next_blocking = now + BLOCKING_EVERY_S
                        self._blocking(session, lock_waiters[:BLOCKING_MAX_PIDS])
                if st.has_stat_lock and now >= next_stat_lock:
                    next_stat_lock = now + 1.0
                    self._stat_lock(session, now)
                if now >= next_texts:
                    next_texts = now + TEXTS_EVERY_S
                    self._statement_texts(session)
                    if writer is not None and writer.error is not None:
                        raise RecordFileError(f"writing {writer.path} failed: {writer.error}")
            except DatabaseError as exc:
                if session.closed:
                    return str(exc)
                st.note_query_error(exc)
            source.wait(self._stop)
        return None

    def _note_backends(self, sample: Sample) -> None:
        for s in sample.sessions:
            if s.backend_type in (None, "client backend") and s.datname is not None \
                    and s.application_name != APPLICATION_NAME:
                self._seen.setdefault(s.datname, set()).add(s.pid)

    def _make_source(self, session: Session) -> _ActivitySource | _WaitSamplingSource:
        if self._pgws_info is not None:
            return _WaitSamplingSource(WaitSamplingReader(session, self._pgws_info, self.config.hz))
        return _ActivitySource(ActivityReader(session), self.config.hz)

    def _locks_snapshot(self, session: Session) -> None:
        rows = session.query_rows("watch_locks", BackendLockCountsRow)
        backends = tuple(sorted(
            (BackendLocks(r.pid, r.relation_locks, r.main_table_locks, r.waiting_locks) for r in rows),
            key=lambda b: (-b.main_table_locks, -b.relation_locks, b.pid)))
        snap = LockSnapshot(time.time(), backends)
        self.state.locks = snap
        try:
            count: int | None = session.query_rows("audit_xact_counters", TransactionCountRow)[0].transactions
        except (DatabaseError, IndexError):
            count = None
        self._held.append((time.monotonic(), [h for r in rows if (h := r.held()) is not None], count))
        self.state.transactions = self._transactions(float(self.config.window_s))
        if self.writer is not None:
            self.writer.add_lock_snapshot(snap)

    def _transactions(self, within_s: float | None) -> TransactionLoad | None:
        """The transaction estimate over the kept snapshots (those of the last ``within_s`` seconds when given),
        the database's transactions/s over the same span; None without snapshots. Shapes without
        pg_stat_statements calls/s get the database's rate x their share of the transactions seen."""
        kept = list(self._held)
        if within_s is not None and kept:
            kept = [k for k in kept if k[0] >= kept[-1][0] - within_s]
        if not kept:
            return None
        counted = [(t, n) for t, _, n in kept if n is not None]
        tps = None
        if len(counted) >= 2 and counted[-1][0] > counted[0][0] and counted[-1][1] >= counted[0][1]:
            tps = (counted[-1][1] - counted[0][1]) / (counted[-1][0] - counted[0][0])
        return transaction_load([rows for _, rows, _ in kept], transactions_per_s=tps, calls_per_s={}, texts={})

    def _blocking(self, session: Session, pids: list[int]) -> None:
        rows = session.query_rows("watch_blocking", BlockingPidsRow, [pids])
        blocking = {r.pid: tuple(int(p) for p in (r.blocking_pids or ())) for r in rows}
        wall = time.time()
        self.state.blocking = blocking
        self.state.blocking_wall_s = wall
        if self.writer is not None:
            self.writer.add_blocking(wall, blocking)

    def _stat_lock(self, session: Session, now_mono: float) -> None:
        rows = session.query_rows("watch_stat_lock", StatLockRow)
        current = {str(r.locktype): (int(r.fastpath_exceeded or 0), int(r.waits or 0)) for r in rows}
        previous, prev_mono = self._stat_lock_prev, self._stat_lock_prev_mono
        self._stat_lock_prev, self._stat_lock_prev_mono = current, now_mono
        if previous is None:
            return
        interval = max(1e-3, now_mono - prev_mono)
        self._stat_lock_span_s += interval
        deltas = stat_lock_deltas(previous, current)
        st = self.state
        for locktype, (fp, _) in deltas.items():
            st.fastpath_exceeded_total[locktype] = st.fastpath_exceeded_total.get(locktype, 0) + fp
        st.fastpath_exceeded_per_s = sum(fp for fp, _ in deltas.values()) / interval
        if self.writer is not None:
            self.writer.add_stat_lock(time.time(), interval, deltas)

    def _take(self, samples: list[Sample]) -> None:
        """Samples of one tick into the window, the backends seen and the recording."""
        for sample in samples:
            self.state.window.add(sample)
            self._note_backends(sample)
            if self.writer is not None:
                self.writer.add_sample(sample)

    def _last_texts(self, session: Session) -> None:
        """At the end of a timed run, the texts of statements seen waiting since the last lookup (a run shorter
        than :data:`TEXTS_EVERY_S` would otherwise keep only those of its first second); never raises."""
        try:
            self._statement_texts(session)
        except DatabaseError as exc:
            self.state.note_query_error(exc)

    def _statement_texts(self, session: Session) -> None:
        window = self.state.window
        missing = window.query_ids_waiting_without_text()
        if not missing:
            return
        found: dict[int, tuple[str, str]] = {}
        if self._pgss_schema is not None:
            schema = session.identifier(self._pgss_schema)
            for r in session.query_rows("watch_statements", QueryTextRow, [missing], fill={"schema": schema}):
                found[r.query_id] = (str(r.query), "pg_stat_statements")
        rest = [q for q in missing if q not in found]
        if rest and session.facts.server_version_num >= PG14:
            for r in session.query_rows("watch_activity_text", QueryTextRow, [rest]):
                found[r.query_id] = (str(r.query), "pg_stat_activity")
        for query_id, (text, source) in found.items():
            window.set_text(query_id, text)
            if self.writer is not None:
                self.writer.add_statement(query_id, text, source)



class _ActivitySource:
    """One pg_stat_get_activity read per tick at ``hz`` (:class:`~lockscope.watch.sampler.ActivityReader`)."""

    walks_lost = 0

    def __init__(self, reader: ActivityReader, hz: float) -> None:
        self.reader = reader
        self.schedule = Schedule(hz)
        self._skipped = 0

    def read(self) -> list[Sample]:
        """One tick: the active sessions now. :raises DatabaseError: if the read fails."""
        now = time.monotonic()
        sessions = self.reader.read()
        return [Sample(time.time(), now, sessions, self._skipped)]

    def wait(self, stop: threading.Event) -> None:
        """Until the next tick is due (late ticks are counted into the next sample)."""
        self._skipped = self.schedule.wait(stop)


class _WaitSamplingSource:
    """pg_wait_sampling's history ring read every :attr:`WaitSamplingReader.interval_s`."""

    def __init__(self, reader: WaitSamplingReader) -> None:
        self.reader = reader
        self._last_read = time.monotonic()

    @property
    def walks_lost(self) -> int:
        """Collector walks lost to ring wraps so far (count)."""
        return self.reader.walks_lost

    def read(self) -> list[Sample]:
        """The walks since the last read. :raises DatabaseError: if the read fails."""
        self._last_read = time.monotonic()
        return self.reader.read()

    def wait(self, stop: threading.Event) -> None:
        """Until the next read is due."""
        delay = self._last_read + self.reader.interval_s - time.monotonic()
        if delay > 0:
            stop.wait(delay)
