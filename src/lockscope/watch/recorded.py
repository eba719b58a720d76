"""What ``lockscope report`` shows: a recording (:mod:`lockscope.watch.store`) folded into time buckets.

All active sessions are counted (as the live view does); a wait label is ``type:event`` or ``CPU``.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

from .aas import CPU, LOCK_MANAGER, WaitTotals, aas, achieved_hz, share
from .store import GapRow, Recording, open_recording
from .window import StatementStat

__all__ = ["RecordingSummary", "load_summary", "summarize_recording"]

_LABEL = ("CASE WHEN x.wait_event_type IS NULL THEN 'CPU' "
          "ELSE x.wait_event_type || ':' || coalesce(x.wait_event, '') END")
#: 1 for a session sample on LWLock:LockManager, else 0 (never NULL, also for a sample on CPU).
_ON_LOCK_MANAGER = "CASE WHEN x.wait_event_type = 'LWLock' AND x.wait_event = 'LockManager' THEN 1 ELSE 0 END"


@dataclass(frozen=True)
class RecordingSummary(WaitTotals):
    """A recording, summarised.

    :ivar path: the file.
    :ivar meta: its meta table (server_version, hz, dsn ...).
    :ivar start_s: first sample (s since the epoch; 0 if none).
    :ivar end_s: last sample (s since the epoch).
    :ivar ticks: samples (count).
    :ivar late_ticks: ticks skipped because sampling ran late (count).
    :ivar by_wait: wait label -> active-session samples (count), most first.
    :ivar top_statements: by LockManager samples, most first.
    :ivar gaps: breaks in sampling.
    :ivar bucket_s: width of a timeline bucket (s).
    :ivar bucket_starts_s: start of each bucket, seconds from ``start_s``.
    :ivar aas_series: wait label -> AAS per bucket (None: no sample in the bucket); the 8 largest labels, the
        rest summed as ``other``.
    :ivar lockmanager_aas: AAS on LWLock:LockManager per bucket.
    :ivar lockmanager_share: share (0..1) of active-session samples on LWLock:LockManager per bucket.
    :ivar locks: pg_locks snapshots: (seconds from start, relation locks, main-table locks).
    :ivar fastpath_exceeded: PG19 pg_stat_lock: (seconds from start, fastpath_exceeded per second).
    :ivar fastpath_exceeded_total: PG19 pg_stat_lock.fastpath_exceeded increase over the recording, all lock types
        (count; 0 without pg_stat_lock). Every weak lock request that found its fast-path group full, transient
        catalog locks of relcache/catcache builds included (docs/watch.md, "Reading fastpath_exceeded").
    :ivar blocking_reads: pg_blocking_pids results recorded (count).
    :ivar lockmanager_batches: per second of the recording, ``(active-session samples, of which on
        LWLock:LockManager)`` (counts): the batches of :attr:`lockmanager_interval`.
    """

    path: Path
    meta: dict[str, str]
    start_s: float
    end_s: float
    ticks: int
    late_ticks: int
    by_wait: dict[str, int]
    top_statements: tuple[StatementStat, ...]
    gaps: tuple[GapRow, ...]
    bucket_s: float
    bucket_starts_s: tuple[float, ...]
    aas_series: dict[str, tuple[float | None, ...]]
    lockmanager_aas: tuple[float | None, ...]
    lockmanager_share: tuple[float | None, ...]
    locks: tuple[tuple[float, int, int], ...]
    fastpath_exceeded: tuple[tuple[float, float], ...]
    blocking_reads: int
    fastpath_exceeded_total: int = 0
    lockmanager_batches: tuple[tuple[int, int], ...] = ()

    @property
    def duration_s(self) -> float:
        """First to last sample (s)."""
        return max(0.0, self.end_s - self.start_s)

    @property
    def hz(self) -> float:
        """Target rate (Hz)."""
        return float(self.meta.get("hz", "nan"))

    @property
    def achieved_hz(self) -> float:
        """Samples per second, first to last sample, gaps included (Hz): the ticks after the first one / the time
        from the first to the last sample."""
        return achieved_hz(self.ticks - 1, self.duration_s) if self.ticks > 1 else 0.0

    @property
    def lockmanager_share_total(self) -> float:
        """Fraction (0..1) of all active-session samples on LWLock:LockManager."""
        return share(self.lockmanager_samples, self.active_session_samples)

    @property
    def top_wait(self) -> str | None:
        """The most frequent wait label (``CPU`` included), or None without samples."""
        return next(iter(self.by_wait), None)

    @property
    def top_wait_event(self) -> str | None:
        """The most frequent wait event (``CPU`` excluded), or None."""
        return next((w for w in self.by_wait if w != CPU), None)


def summarize_recording(rec: Recording, *, max_buckets: int = 600, series: int = 8,
                        top: int = 10) -> RecordingSummary:
    """Fold a recording into at most ``max_buckets`` time buckets.

    :raises RecordFileError: if the file is corrupt.
    """
    row = rec.rows("SELECT count(*), min(ts), max(ts), coalesce(sum(late_ticks), 0) FROM samples")[0]
    ticks, start, end, late = int(row[0]), float(row[1] or 0.0), float(row[2] or 0.0), int(row[3])
    span = max(0.0, end - start)
    bucket_s = float(max(1, math.ceil(span / max_buckets))) if span > 0 else 1.0
    n_buckets = int(span // bucket_s) + 1 if ticks else 0
    ticks_per = [0] * n_buckets
    for k, n in rec.rows("SELECT CAST((ts - ?) / ? AS INTEGER), count(*) FROM samples GROUP BY 1", (start, bucket_s)):
        ticks_per[min(int(k), n_buckets - 1)] += int(n)
    by_wait: Counter[str] = Counter()
    per_label: dict[str, list[int]] = defaultdict(lambda: [0] * n_buckets)
    for k, label, n in rec.rows(
            f"SELECT CAST((s.ts - ?) / ? AS INTEGER), {_LABEL}, count(*) FROM sessions x "
            "JOIN samples s ON s.id = x.sample_id GROUP BY 1, 2", (start, bucket_s)):
        by_wait[str(label)] += int(n)
        per_label[str(label)][min(int(k), n_buckets - 1)] += int(n)
    ordered = [label for label, _ in by_wait.most_common()]
    keep = ordered[:series]
    if LOCK_MANAGER in by_wait and LOCK_MANAGER not in keep:
        keep = [*keep[:-1], LOCK_MANAGER]
    rest = [label for label in ordered if label not in keep]

    def aas_per_bucket(counts: list[int]) -> tuple[float | None, ...]:
        return tuple(aas(c, t) if t else None for c, t in zip(counts, ticks_per, strict=False))

    aas_series = {label: aas_per_bucket(per_label[label]) for label in keep}
    if rest:
        other = [sum(per_label[label][i] for label in rest) for i in range(n_buckets)]
        aas_series["other"] = aas_per_bucket(other)
    totals_per = [sum(per_label[label][i] for label in ordered) for i in range(n_buckets)]
    lm = per_label.get(LOCK_MANAGER, [0] * n_buckets)
    lm_share = tuple(share(m, t) if ticks_per[i] else None
                     for i, (m, t) in enumerate(zip(lm, totals_per, strict=False)))
    texts = rec.statement_texts()
    statements = tuple(
        StatementStat(None if q is None else int(q), int(n), int(total), texts.get(int(q)) if q is not None else None)
        for q, n, total in rec.rows(
            f"SELECT x.query_id, sum({_ON_LOCK_MANAGER}) AS lm, count(*) "
            "FROM sessions x GROUP BY x.query_id HAVING lm > 0 ORDER BY lm DESC, x.query_id LIMIT ?", (top,))
    )
    locks = tuple((float(ts) - start, int(r), int(m)) for ts, r, m in rec.rows(
        "SELECT ts, relation_locks, main_table_locks FROM lock_snapshots ORDER BY ts"))
    fastpath = tuple((float(ts) - start, float(fp) / float(iv) if iv else 0.0) for ts, iv, fp in rec.rows(
        "SELECT ts, max(interval_s), sum(fastpath_exceeded) FROM stat_lock GROUP BY ts ORDER BY ts"))
    fastpath_total = int(rec.rows("SELECT coalesce(sum(fastpath_exceeded), 0) FROM stat_lock")[0][0])
    blocking = int(rec.rows("SELECT count(*) FROM blocking")[0][0])
    return RecordingSummary(
        path=rec.path, meta=dict(rec.meta), start_s=start, end_s=end, ticks=ticks, late_ticks=late,
        by_wait=dict(by_wait.most_common()), top_statements=statements, gaps=tuple(rec.gaps()),
        bucket_s=bucket_s, bucket_starts_s=tuple(i * bucket_s for i in range(n_buckets)),
        aas_series=aas_series, lockmanager_aas=aas_per_bucket(lm), lockmanager_share=lm_share,
        locks=locks, fastpath_exceeded=fastpath, blocking_reads=blocking, fastpath_exceeded_total=fastpath_total,
        lockmanager_batches=_lockmanager_batches(rec),
    )


def _lockmanager_batches(rec: Recording) -> tuple[tuple[int, int], ...]:
    """Per second of sampling, in time order: (active-session samples, of which on LWLock:LockManager)."""
    return tuple((int(n), int(lm)) for _, n, lm in rec.rows(
        f"SELECT CAST(s.ts AS INTEGER), count(*), sum({_ON_LOCK_MANAGER}) "
        "FROM sessions x JOIN samples s ON s.id = x.sample_id GROUP BY 1 ORDER BY 1"))


def load_summary(path: Path | str, **kwargs: int) -> RecordingSummary:
    """Open, validate and summarise a recording.

    :raises RecordFileError: missing, foreign, corrupt or newer-schema file.
    """
    with open_recording(path) as rec:
        return summarize_recording(rec, **kwargs)
