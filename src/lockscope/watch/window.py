"""Rolling per-second statistics of active-session samples: what the live view and the Prometheus endpoint show.

Samples are added from the sampling thread; :meth:`RollingWindow.snapshot` is called from others (live view,
Prometheus). Everything here counts *all* active sessions (``state = 'active'``: client backends, parallel workers,
autovacuum workers ...), as active-session-history tools do.
"""

from __future__ import annotations

import threading
from collections import Counter, deque
from dataclasses import dataclass, field

from .aas import CPU, LOCK_MANAGER, aas, achieved_hz, share
from .sampler import Sample

__all__ = [
    "WAIT_CLASSES",
    "BackendLocks",
    "LiveStats",
    "LockSnapshot",
    "RollingWindow",
    "StatementStat",
    "wait_class",
]

#: Wait classes the live view shows, in display order: ``LWLock:LockManager`` is split from other LWLock waits.
WAIT_CLASSES = ("CPU", "LockManager", "LWLock", "Lock", "IO", "IPC", "Client", "other")


def wait_class(label: str) -> str:
    """The display class of a wait label (``type:event`` or ``CPU``): the wait_event_type, except that
    ``LWLock:LockManager`` is its own class and rarer types are ``other``."""
    if label == CPU:
        return "CPU"
    if label == LOCK_MANAGER:
        return "LockManager"
    kind = label.split(":", 1)[0]
    return kind if kind in WAIT_CLASSES else "other"


@dataclass(frozen=True)
class BackendLocks:
    """One backend in a pg_locks snapshot.

    :ivar relation_locks: relation locks held or awaited (count).
    :ivar main_table_locks: of those, not fast-path, i.e. in the main lock table (count).
    :ivar waiting_locks: of those, not granted (count).
    """

    pid: int
    relation_locks: int
    main_table_locks: int
    waiting_locks: int


@dataclass(frozen=True)
class LockSnapshot:
    """One pg_locks snapshot (``--locks-every``).

    :ivar wall_s: when (s since the epoch).
    :ivar backends: per backend, most main-table locks first.
    """

    wall_s: float
    backends: tuple[BackendLocks, ...]

    @property
    def relation_locks(self) -> int:
        """Relation locks over all backends (count)."""
        return sum(b.relation_locks for b in self.backends)

    @property
    def main_table_locks(self) -> int:
        """Relation locks in the main lock table over all backends (count)."""
        return sum(b.main_table_locks for b in self.backends)


@dataclass(frozen=True)
class StatementStat:
    """A statement (by query_id) in the window.

    :ivar query_id: pg_stat_activity.query_id, or None for sessions without one.
    :ivar lockmanager_samples: active-session samples waiting on LWLock:LockManager (count).
    :ivar samples: active-session samples of this statement, any wait (count).
    :ivar text: statement text (pg_stat_statements, else pg_stat_activity), or None if unknown.
    """

    query_id: int | None
    lockmanager_samples: int
    samples: int
    text: str | None


@dataclass(frozen=True)
class LiveStats:
    """A snapshot of the rolling window.

    :ivar window_s: seconds the figures cover (s, up to the window length).
    :ivar ticks: samples taken in the window (count).
    :ivar achieved_hz: samples per second over the last 10 complete seconds that had samples (Hz; the current
        second's count while there is no complete one).
    :ivar aas_by_wait: wait label -> average active sessions over the window (sessions).
    :ivar recent_aas_by_class: wait class -> AAS over the last ``recent_s`` seconds (sessions).
    :ivar lockmanager_aas_per_s: per second, oldest first, AAS waiting on LWLock:LockManager (None: no sample).
    :ivar top_statements: by LockManager samples, most first.
    :ivar total_ticks: samples since the start (count).
    :ivar total_late_ticks: ticks skipped because sampling ran late, since the start (count).
    """

    window_s: float
    ticks: int
    achieved_hz: float
    aas_by_wait: dict[str, float]
    recent_s: float
    recent_aas_by_class: dict[str, float]
    lockmanager_aas_per_s: tuple[float | None, ...]
    top_statements: tuple[StatementStat, ...]
    total_ticks: int
    total_late_ticks: int
    lockmanager_samples: int
    active_session_samples: int

    @property
    def aas(self) -> float:
        """Average active sessions over the window (sessions)."""
        return sum(self.aas_by_wait.values())

    @property
    def lockmanager_share(self) -> float:
        """Fraction (0..1) of the window's active-session samples waiting on LWLock:LockManager."""
        return share(self.lockmanager_samples, self.active_session_samples)

    @property
    def lockmanager_aas(self) -> float:
        """Sessions waiting on LWLock:LockManager, averaged over the window (sessions)."""
        return self.aas_by_wait.get(LOCK_MANAGER, 0.0)


@dataclass
class _Bucket:
    second: int
    ticks: int = 0
    waits: Counter[str] = field(default_factory=Counter)
    waits_db: Counter[tuple[str, str]] = field(default_factory=Counter)
    lm_by_stmt: Counter[int | None] = field(default_factory=Counter)
    by_stmt: Counter[int | None] = field(default_factory=Counter)


class RollingWindow:
    """Per-second buckets of the last ``window_s`` seconds, plus run totals.

    :param window_s: seconds kept (s, >= 10).
    """

    def __init__(self, window_s: int = 60) -> None:
        self.window_s = max(10, int(window_s))
        self._buckets: deque[_Bucket] = deque()
        self._lock = threading.Lock()
        self.total_ticks = 0
        self.total_late_ticks = 0
        self.total_waits: Counter[str] = Counter()
        self.total_waits_db: Counter[tuple[str, str]] = Counter()
        self.total_lm_by_stmt: Counter[int | None] = Counter()
        self.total_by_stmt: Counter[int | None] = Counter()
        self.texts: dict[int, str] = {}
        self.first_wall_s: float | None = None
        self.last_wall_s: float | None = None
        self._lm_by_second: list[list[int]] = []  # [second, active-session samples, LockManager samples]

    def add(self, sample: Sample) -> None:
        """Count one sample (called by the sampling thread)."""
        second = int(sample.wall_s)
        with self._lock:
            if not self._buckets or self._buckets[-1].second != second:
                self._buckets.append(_Bucket(second))
                while self._buckets and self._buckets[0].second <= second - self.window_s:
                    self._buckets.popleft()
            bucket = self._buckets[-1]
            if not self._lm_by_second or self._lm_by_second[-1][0] != second:
                self._lm_by_second.append([second, 0, 0])
            per_second = self._lm_by_second[-1]
            per_second[1] += len(sample.sessions)
            bucket.ticks += 1
            self.total_ticks += 1
            self.total_late_ticks += sample.late_ticks
            if self.first_wall_s is None:
                self.first_wall_s = sample.wall_s
            self.last_wall_s = sample.wall_s
            for s in sample.sessions:
                label = s.wait
                bucket.waits[label] += 1
                bucket.waits_db[(s.datname or "", label)] += 1
                bucket.by_stmt[s.query_id] += 1
                self.total_waits[label] += 1
                self.total_waits_db[(s.datname or "", label)] += 1
                self.total_by_stmt[s.query_id] += 1
                if label == LOCK_MANAGER:
                    per_second[2] += 1
                    bucket.lm_by_stmt[s.query_id] += 1
                    self.total_lm_by_stmt[s.query_id] += 1

    def lockmanager_batches(self) -> tuple[tuple[int, int], ...]:
        """Per second of the whole run: ``(active-session samples, of which waiting on LWLock:LockManager)``
        (counts), the batches of :func:`lockscope.watch.aas.share_interval`."""
        with self._lock:
            return tuple((active, lm) for _, active, lm in self._lm_by_second)

    def query_ids_waiting_without_text(self) -> list[int]:
        """query_ids seen waiting on LWLock:LockManager in the window whose text is not known yet."""
        with self._lock:
            ids = {q for b in self._buckets for q in b.lm_by_stmt if q is not None}
        return sorted(q for q in ids if q not in self.texts)

    def set_text(self, query_id: int, text: str) -> None:
        """Remember a statement text for a query_id."""
        self.texts[query_id] = text

    def totals(self, top: int = 10) -> tuple[dict[str, int], tuple[StatementStat, ...]]:
        """Run totals: wait label -> active-session samples (count), and the top statements by LockManager
        samples."""
        with self._lock:
            waits = dict(self.total_waits)
            statements = tuple(
                StatementStat(q, n, self.total_by_stmt.get(q, n), self.texts.get(q) if q is not None else None)
                for q, n in self.total_lm_by_stmt.most_common(top)
            )
        return waits, statements

    def totals_by_database(self) -> dict[tuple[str, str], int]:
        """Run totals per (database name, wait label): active-session samples (count); "" for sessions without a
        database (e.g. physical walsenders)."""
        with self._lock:
            return dict(self.total_waits_db)

    def aas_by_database(self, now_wall_s: float, span_s: int = 10) -> dict[tuple[str, str], float]:
        """AAS per (database name, wait label) over the last ``span_s`` seconds ending at ``now_wall_s``."""
        now = int(now_wall_s)
        with self._lock:
            buckets = [b for b in self._buckets if b.second > now - span_s]
            ticks = sum(b.ticks for b in buckets)
            waits: Counter[tuple[str, str]] = Counter()
            for b in buckets:
                waits.update(b.waits_db)
        return {k: aas(v, ticks) for k, v in waits.items()} if ticks else {}

    def snapshot(self, now_wall_s: float, *, recent_s: float = 5.0, top: int = 5,
                 span_s: int | None = None) -> LiveStats:
        """Figures over the window ending at ``now_wall_s`` (s since the epoch).

        :param recent_s: span of ``recent_aas_by_class`` (s).
        :param top: statements returned (count).
        :param span_s: span of the aggregated figures (s; default and at most the window length).
        """
        now = int(now_wall_s)
        span = self.window_s if span_s is None else max(1, min(int(span_s), self.window_s))
        with self._lock:
            buckets = [b for b in self._buckets if b.second > now - span]
            ticks = sum(b.ticks for b in buckets)
            waits: Counter[str] = Counter()
            lm_by_stmt: Counter[int | None] = Counter()
            by_stmt: Counter[int | None] = Counter()
            for b in buckets:
                waits.update(b.waits)
                lm_by_stmt.update(b.lm_by_stmt)
                by_stmt.update(b.by_stmt)
            recent = [b for b in buckets if b.second > now - recent_s]
            recent_ticks = sum(b.ticks for b in recent)
            recent_classes: Counter[str] = Counter()
            for b in recent:
                for label, n in b.waits.items():
                    recent_classes[wait_class(label)] += n
            last10 = [b for b in buckets if b.second > now - 11 and b.second < now]
            by_second = {b.second: b for b in buckets}
            lm_series = tuple(
                aas(by_second[s].waits.get(LOCK_MANAGER, 0), by_second[s].ticks)
                if s in by_second and by_second[s].ticks else None
                for s in range(now - self.window_s + 1, now + 1)
            )
            total_ticks, total_late = self.total_ticks, self.total_late_ticks
        span_10 = len({b.second for b in last10})
        achieved = achieved_hz(sum(b.ticks for b in last10), span_10) if span_10 else achieved_hz(ticks, 1.0)
        window_s = float(len({b.second for b in buckets}))
        statements = tuple(
            StatementStat(q, n, by_stmt.get(q, n), self.texts.get(q) if q is not None else None)
            for q, n in lm_by_stmt.most_common(top)
        )
        return LiveStats(
            window_s=window_s,
            ticks=ticks,
            achieved_hz=achieved,
            aas_by_wait={k: aas(v, ticks) for k, v in waits.items()} if ticks else {},
            recent_s=recent_s,
            recent_aas_by_class={k: aas(v, recent_ticks) for k, v in recent_classes.items()} if recent_ticks else {},
            lockmanager_aas_per_s=lm_series,
            top_statements=statements,
            total_ticks=total_ticks,
            total_late_ticks=total_late,
            lockmanager_samples=waits.get(LOCK_MANAGER, 0),
            active_session_samples=sum(waits.values()),
        )
