"""Active-session sampling of pg_stat_activity on a steady schedule, and wait-event summaries.

One query per tick on one autocommit connection (:func:`lockscope.db.connect` with ``sampler=True``): no
transaction is held between samples, and the sample reads ``pg_stat_get_activity(NULL)`` (backend status in shared
memory) rather than the pg_stat_activity view, so it takes no heavyweight lock and no lock-manager LWLock at all:
the view joins the shared catalogs pg_database and pg_authid, whose locks are never fast-path
(``lock.c EligibleForRelationFastPath``), so every read of the view would put 6 locks into the main lock table.
Sampling at 10-100 Hz therefore does not stall the backends it watches (unlike pg_locks or pg_blocking_pids,
pg-lock-internals.md section 6). Database and role names are resolved from a cache (:class:`ActivityReader`).
"""

from __future__ import annotations

import datetime as _dt
import threading
import time
import weakref
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from ..db import Session, connect
from ..rows import ActivityRow, NameRow
from .aas import CPU, LOCK_MANAGER, aas, share

__all__ = [
    "CPU",
    "LOCK_MANAGER",
    "ActiveSession",
    "ActivityReader",
    "BackgroundSampler",
    "Sample",
    "Schedule",
    "WaitSummary",
    "read_activity",
    "sample_stream",
    "summarize",
    "wait_label",
]

@dataclass(frozen=True)
class ActiveSession:
    """One active backend in one sample (a pg_stat_activity row with ``state = 'active'``).

    :ivar query_id: pg_stat_activity.query_id (PG 14+ with compute_query_id), else None.
    """

    pid: int
    backend_type: str | None
    state: str | None
    wait_event_type: str | None
    wait_event: str | None
    query_id: int | None
    datname: str | None
    usename: str | None
    application_name: str | None
    xact_start: _dt.datetime | None
    query_start: _dt.datetime | None

    @property
    def wait(self) -> str:
        """``type:event`` (e.g. ``LWLock:LockManager``) or ``CPU`` when not waiting."""
        return wait_label(self.wait_event_type, self.wait_event)


def wait_label(wait_event_type: str | None, wait_event: str | None) -> str:
    """``type:event``, or :data:`CPU` when the session is not waiting."""
    if not wait_event_type:
        return CPU
    return f"{wait_event_type}:{wait_event}"


@dataclass(frozen=True)
class Sample:
    """One tick.

    :ivar wall_s: wall-clock time of the tick (s since the epoch).
    :ivar monotonic_s: monotonic time of the tick (s).
    :ivar sessions: the active sessions seen.
    :ivar late_ticks: ticks skipped just before this one because sampling ran late (count).
    """

    wall_s: float
    monotonic_s: float
    sessions: tuple[ActiveSession, ...]
    late_ticks: int = 0


class ActivityReader:
    """Reads the active sessions of one :class:`~lockscope.db.Session`, cheaply enough for 100 Hz.

    The SQL text (``sql/activity_sample*.sql``) is loaded once; database and role names come from a cache filled
    from ``sql/watch_names.sql``, re-read only when an unknown oid appears, at most once per second (those
    catalogs are shared relations, whose locks always go to the main lock table).

    :param session: a sampling session (``connect(..., sampler=True)``).
    """

    #: Seconds between two name look-ups at most.
    NAMES_REFRESH_S = 1.0

    def __init__(self, session: Session) -> None:
        self.session = session
        self._names: dict[tuple[str, int], str] = {}
        self._names_read_s = float("-inf")

    def _refresh_names(self) -> None:
        now = time.monotonic()
        if now - self._names_read_s < self.NAMES_REFRESH_S:
            return
        self._names_read_s = now
        rows = self.session.query_rows("watch_names", NameRow)
        self._names = {(str(r.kind), r.oid): str(r.name) for r in rows}

    def read(self) -> tuple[ActiveSession, ...]:
        """One read: the active sessions other than ours (``state = 'active'``).

        :raises DatabaseError: if the query fails (e.g. connection lost, statement_timeout).
        """
        rows = self.session.query_rows("activity_sample", ActivityRow)
        names = self._names
        out = []
        for row in rows:
            datid, usesysid = row.datid, row.usesysid
            if (datid and ("database", datid) not in names) or (usesysid and ("role", usesysid) not in names):
                self._refresh_names()
                names = self._names
            out.append(ActiveSession(
                pid=row.pid, backend_type=row.backend_type, state=row.state, wait_event_type=row.wait_event_type,
                wait_event=row.wait_event, query_id=row.query_id,
                datname=names.get(("database", datid)) if datid else None,
                usename=names.get(("role", usesysid)) if usesysid else None,
                application_name=row.application_name, xact_start=row.xact_start, query_start=row.query_start))
        return tuple(out)


_readers: weakref.WeakKeyDictionary[Session, ActivityReader] = weakref.WeakKeyDictionary()


def read_activity(session: Session) -> tuple[ActiveSession, ...]:
    """One pg_stat_activity read: the active sessions other than ours (via a per-session :class:`ActivityReader`).

    :raises DatabaseError: if the query fails (e.g. connection lost).
    """
    reader = _readers.get(session)
    if reader is None:
        reader = _readers[session] = ActivityReader(session)
    return reader.read()


class Schedule:
    """Ticks at a steady rate: tick n is due at ``start + n / hz``; a tick that is more than one period late is
    skipped and counted, never silently dropped.

    :param hz: ticks per second (> 0).
    """

    def __init__(self, hz: float) -> None:
        if hz <= 0:
            raise ValueError("hz must be positive")
        self.period_s = 1.0 / hz
        self.start_s = time.monotonic()
        self.n = 0
        self.late_ticks_total = 0

    def wait(self, stop: threading.Event | None = None) -> int:
        """Sleep until the next due tick; return how many ticks were skipped before it (count)."""
        self.n += 1
        due = self.start_s + self.n * self.period_s
        now = time.monotonic()
        skipped = 0
        if now > due + self.period_s:
            skipped = int((now - due) / self.period_s)
            self.n += skipped
            due = self.start_s + self.n * self.period_s
            self.late_ticks_total += skipped
        delay = due - time.monotonic()
        if delay > 0:
            if stop is not None:
                stop.wait(delay)
            else:
                time.sleep(delay)
        return skipped


def sample_stream(session: Session, hz: float, *, duration_s: float | None = None,
                  stop: threading.Event | None = None) -> Iterator[Sample]:
    """Yield one :class:`Sample` per tick until ``duration_s`` passes or ``stop`` is set.

    :param hz: sampling rate (Hz).
    :param duration_s: how long (s); None = until stopped.
    :raises DatabaseError: on a failed read (the caller decides whether to reconnect).
    """
    schedule = Schedule(hz)
    end = None if duration_s is None else schedule.start_s + duration_s
    skipped = 0
    while True:
        if stop is not None and stop.is_set():
            return
        now = time.monotonic()
        if end is not None and now >= end:
            return
        sessions = read_activity(session)
        yield Sample(time.time(), now, sessions, skipped)
        skipped = schedule.wait(stop)


@dataclass(frozen=True)
class WaitSummary:
    """Wait events over a set of samples.

    :ivar samples: ticks (count).
    :ivar active_session_samples: active sessions summed over ticks (count).
    :ivar by_wait: ``type:event`` (or ``CPU``) -> active-session samples (count).
    :ivar late_ticks: skipped ticks (count).
    """

    samples: int
    active_session_samples: int
    by_wait: dict[str, int]
    late_ticks: int

    @property
    def aas(self) -> float:
        """Average active sessions (sessions), :func:`lockscope.watch.aas.aas`."""
        return aas(self.active_session_samples, self.samples)

    @property
    def lockmanager_samples(self) -> int:
        """Active-session samples waiting on ``LWLock:LockManager`` (count)."""
        return self.by_wait.get(LOCK_MANAGER, 0)

    @property
    def lockmanager_share(self) -> float:
        """Fraction (0..1) of active-session samples waiting on ``LWLock:LockManager``."""
        return share(self.lockmanager_samples, self.active_session_samples)

    def top(self, n: int = 5) -> list[tuple[str, int]]:
        """The ``n`` most frequent waits, most first."""
        return Counter(self.by_wait).most_common(n)


def summarize(samples: Sequence[Sample], *, client_backends_only: bool = True) -> WaitSummary:
    """Summarise samples into AAS and wait-event counts.

    :param client_backends_only: count only ``backend_type = 'client backend'`` (the sessions that run queries).
    """
    counts: Counter[str] = Counter()
    total = 0
    for sample in samples:
        for s in sample.sessions:
            if client_backends_only and s.backend_type not in (None, "client backend"):
                continue
            counts[s.wait] += 1
            total += 1
    return WaitSummary(len(samples), total, dict(counts), sum(s.late_ticks for s in samples))


class BackgroundSampler:
    """Samples a server in a thread while something else runs (the lab's and the tests' wait-event figures).

    Usage::

        with BackgroundSampler(conninfo, hz=10) as sampler:
            run_pgbench(...)
        summarize(sampler.samples).lockmanager_share

    :param conninfo: where to sample.
    :param hz: rate (Hz, 1..100).
    """

    def __init__(self, conninfo: str, hz: float = 10.0) -> None:
        self.conninfo = conninfo
        self.hz = hz
        self.samples: list[Sample] = []
        self.error: BaseException | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="lockscope-sampler", daemon=True)

    def _run(self) -> None:
        try:
            with connect(self.conninfo, sampler=True, statement_timeout_ms=1000) as session:
                for sample in sample_stream(session, self.hz, stop=self._stop):
                    self.samples.append(sample)
        except BaseException as exc:  # reported by stop()
            self.error = exc

    def __enter__(self) -> BackgroundSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> list[Sample]:
        """Stop sampling and return the samples.

        :raises LockscopeError: if sampling failed.
        """
        self._stop.set()
        self._thread.join(10)
        if self.error is not None:
            raise self.error
        return self.samples
