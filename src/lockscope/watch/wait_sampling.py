"""``lockscope watch --source pg_wait_sampling``: active-session samples from the pg_wait_sampling extension.

pg_wait_sampling (Postgres Professional) runs a background worker, the *collector*, that walks every PGPROC every
``pg_wait_sampling.history_period`` ms (default 10) and appends each sampled process's wait event and query id to
an in-memory ring of ``pg_wait_sampling.history_size`` items (default 5000), all items of one walk sharing one
timestamp (``collector.c probe_waits``). Sampling happens inside the server at 100 Hz with no client round trip per
sample; lockscope reads the ring about twice a second and turns each collector walk into one
:class:`~lockscope.watch.sampler.Sample`, so the live view, the recording, the report and the Prometheus metrics
work unchanged.

What lockscope has to correct for (the extension's pitfalls):

- **Reading costs heavyweight locks.** Every read of history or profile (``pg_wait_sampling.c receive_array``,
  all released versions through 1.1.x and the 1.2 development branch) takes two *user* locks in ExclusiveLock
  mode. User locks are never fast-path (``lock.c EligibleForRelationFastPath`` admits only relation locks), so each
  read puts 2 locks in the main lock table and takes a lock-partition LWLock exclusively 4 times (acquire and
  release of each) -- the very LWLocks a LockManager-bound server queues on -- and a second concurrent reader waits
  on ``Lock:userlock`` while the collector copies the whole ring to the first. lockscope reads at most
  :data:`MAX_READS_PER_S` times a second (4 partition-LWLock acquisitions each; the contended demo load, ~86
  main-table locks per transaction at ~6,000 transactions per second, makes about a million) and calls
  ``pg_wait_sampling_get_history()`` directly, not the view (no relation lock).
- **The ring is small.** It holds ``history_size`` items shared by every process sampled, idle backends and
  background processes included: 5000 items / (22 processes x 100 walks/s) is about 2.3 s. lockscope reads at
  least 3 times per ring turnover (:func:`read_interval_s`) and counts walks lost to a wrap as late ticks (the
  ``ring_oldest`` of a read newer than the last walk read).
- **Versions before 1.1.6 do not sample CPU.** Their collector skips processes that are not waiting
  (``wait_event_info = 0``), so "on CPU" is missing from the ring. lockscope infers it as the CPU sampler of 1.1.6
  (``pg_wait_sampling.sample_cpu``) records it: a live client backend or worker absent from a walk was not waiting.
  A pid is *live* at a walk when it was alive at the previous read (``pg_stat_get_activity``) or first appears at
  or before the walk, and is alive at this read or appears again at or after the walk. With ``sample_cpu = on``
  the ring's own CPU items are used instead.
- **Which processes are sessions.** The ring has every process; lockscope counts, as its activity sampler does
  with ``state = 'active'``, only backends that report a state (client backends, parallel and autovacuum workers,
  walsenders, background workers with a database), and leaves out ``Client:ClientRead`` (idle and idle-in-
  transaction sessions), ``Activity:*`` (background main loops) and its own backend. The ring has no state, so a
  backend between statements that is not yet back in ClientRead (state ``idle``, no wait event) counts as CPU
  here, not at all with ``--source activity``; an ``active`` session in ClientRead is dropped here. On a
  CPU-saturated server the first makes the CPU share higher and the LockManager share lower than with
  ``--source activity`` (BENCHMARKS.md, "watch: pg_wait_sampling cross-check").
- **query ids.** The ring's ``queryid`` is ``Query.queryId``, computed by core (``compute_query_id``) or by
  pg_stat_statements, so it joins ``pg_stat_statements.queryid``; it is 0 with ``pg_wait_sampling.profile_queries
  = off``, for utility statements without one, and when nothing computes query ids (lockscope shows None).
  Only top-level statements are tracked by default (``profile_queries = top``).
- **Time.** Walk timestamps are the server's clock; lockscope shifts them to its own by the difference between
  ``statement_timestamp()`` and its clock at the read.

The rate lockscope keeps is ``--hz``: one collector walk per ``1/hz`` time slot (all of them with ``--hz 100``).
"""

from __future__ import annotations

import datetime as _dt
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from ..db import Session
from ..errors import DatabaseError
from ..rows import NameRow, ProcessRow, WaitHistoryRow, WaitSamplingFeaturesRow
from .sampler import ActiveSession, Sample

__all__ = [
    "MAX_READS_PER_S",
    "MIN_READS_PER_S",
    "NOT_SESSIONS",
    "WaitSamplingInfo",
    "WaitSamplingReader",
    "detect",
    "installed_in",
    "is_session_wait",
    "read_interval_s",
    "require",
    "scratch_preload",
]

#: Reads of the ring per second at most (each read: 2 main-lock-table user locks) and at least.
MAX_READS_PER_S = 10.0
MIN_READS_PER_S = 2.0
#: Wait types that are never an active session: background processes' main loops.
NOT_SESSIONS = frozenset({"Activity"})


@dataclass(frozen=True)
class WaitSamplingInfo:
    """pg_wait_sampling as found in the database watched.

    :ivar schema: the extension's schema (its functions live there).
    :ivar extversion: extension version (SQL level, e.g. ``1.1``).
    :ivar history_size: items in the ring (count).
    :ivar history_period_ms: collector walk period for the history (ms).
    :ivar profile_period_ms: collector walk period for the profile (ms).
    :ivar profile_queries: ``pg_wait_sampling.profile_queries`` (``on``/``top``/``all``/``off``).
    :ivar sample_cpu: ``pg_wait_sampling.sample_cpu`` (1.1.6+), or None when the setting does not exist (the
        collector records waiting processes only; lockscope infers CPU).
    """

    schema: str
    extversion: str
    history_size: int
    history_period_ms: int
    profile_period_ms: int
    profile_queries: str
    sample_cpu: bool | None

    @property
    def cpu_inferred(self) -> bool:
        """True when lockscope infers CPU samples (the collector does not record them)."""
        return not self.sample_cpu

    def describe(self) -> str:
        """One line: ``pg_wait_sampling 1.1 (history every 10 ms, ring 5000 items, CPU inferred)``."""
        cpu = "CPU inferred" if self.cpu_inferred else "CPU sampled"
        return (f"pg_wait_sampling {self.extversion} (history every {self.history_period_ms} ms, ring "
                f"{self.history_size} items, {cpu})")


def _setting_int(value: object) -> int | None:
    try:
        return int(str(value))
    except (TypeError, ValueError):
        return None


def detect(session: Session) -> tuple[WaitSamplingInfo | None, str]:
    """pg_wait_sampling in the database of ``session``, or None and the reason it cannot be used.

    :raises DatabaseError: if the catalog query fails.
    """
    row = session.query_rows("wait_sampling_features", WaitSamplingFeaturesRow)[0]
    if row.schema is None:
        return None, ("the extension pg_wait_sampling is not created in this database "
                      "(CREATE EXTENSION pg_wait_sampling)")
    period = _setting_int(row.history_period)
    size = _setting_int(row.history_size)
    if period is None or size is None:
        return None, ("pg_wait_sampling is created but not loaded: add it to shared_preload_libraries and restart "
                      "the server")
    cpu = row.sample_cpu
    return WaitSamplingInfo(
        schema=str(row.schema),
        extversion=str(row.extversion),
        history_size=size,
        history_period_ms=period,
        profile_period_ms=_setting_int(row.profile_period) or period,
        profile_queries=str(row.profile_queries or "on"),
        sample_cpu=None if cpu is None else str(cpu) == "on",
    ), ""


def require(session: Session) -> WaitSamplingInfo:
    """:func:`detect`, failing when pg_wait_sampling cannot be used.

    :raises DatabaseError: naming what is missing (exit 3).
    """
    info, reason = detect(session)
    if info is None:
        raise DatabaseError(f"--source pg_wait_sampling: {reason}")
    return info


def read_interval_s(info: WaitSamplingInfo, items_per_walk: float) -> float:
    """Seconds between two reads of the ring: a third of the time the ring takes to turn over at
    ``items_per_walk`` processes sampled per walk, between ``1/MAX_READS_PER_S`` and ``1/MIN_READS_PER_S``."""
    walks = info.history_size / max(1.0, items_per_walk)
    turnover_s = walks * info.history_period_ms / 1000.0
    return min(1.0 / MIN_READS_PER_S, max(1.0 / MAX_READS_PER_S, turnover_s / 3.0))


def is_session_wait(event_type: str | None, event: str | None) -> bool:
    """A wait that an *active* session can be in: not ``Client:ClientRead`` (idle) nor a background main loop."""
    if event_type is None:
        return True
    if event_type in NOT_SESSIONS:
        return False
    return not (event_type == "Client" and event == "ClientRead")


def _is_session(proc: ProcessRow) -> bool:
    """Reports a state (client backends and workers); auxiliary processes report none."""
    return proc.state is not None


def _by_walk(rows: list[WaitHistoryRow]) -> list[tuple[_dt.datetime, list[WaitHistoryRow]]]:
    """History items grouped by collector walk (their common timestamp), oldest first."""
    walks: list[tuple[_dt.datetime, list[WaitHistoryRow]]] = []
    for r in rows:
        if walks and walks[-1][0] == r.ts:
            walks[-1][1].append(r)
        else:
            walks.append((r.ts, [r]))
    return walks


@dataclass(frozen=True)
class _Seen:
    """Which backends were alive around a read: alive at the read before and after, and the first and last walk
    (index) each pid has an item in."""

    alive_before: set[int]
    alive_now: set[int]
    first: dict[int, int]
    last: dict[int, int]
    walks: int

    @classmethod
    def of(cls, walks: list[tuple[_dt.datetime, list[WaitHistoryRow]]], alive_before: set[int],
           alive_now: set[int]) -> _Seen:
        first: dict[int, int] = {}
        last: dict[int, int] = {}
        for i, (_, items) in enumerate(walks):
            for r in items:
                first.setdefault(r.pid, i)
                last[r.pid] = i
        return cls(alive_before, alive_now, first, last, len(walks))

    @property
    def candidates(self) -> set[int]:
        return self.alive_before | self.alive_now

    def alive_at(self, pid: int, i: int) -> bool:
        """Alive through walk ``i``: before it (alive at the last read, or an item at or before it) and after it
        (alive now, or an item at or after it)."""
        return ((pid in self.alive_before or self.first.get(pid, self.walks) <= i)
                and (pid in self.alive_now or self.last.get(pid, -1) >= i))


class WaitSamplingReader:
    """Turns pg_wait_sampling's history ring into :class:`Sample` ticks, one per kept collector walk.

    :param session: a sampling session (``connect(..., sampler=True)``) in a database with the extension.
    :param info: from :func:`detect`.
    :param hz: walks kept per second (one per ``1/hz`` slot).
    :raises DatabaseError: on a failed read.
    """

    NAMES_REFRESH_S = 1.0

    def __init__(self, session: Session, info: WaitSamplingInfo, hz: float) -> None:
        self.session = session
        self.info = info
        self.hz = hz
        self._fill = {"pgws_schema": session.identifier(info.schema)}
        self._last_ts: _dt.datetime | None = None
        self._last_slot = -1
        self._alive: set[int] = set()
        self._procs: dict[int, ProcessRow] = {}
        self._names: dict[tuple[str, int], str] = {}
        self._names_read_s = float("-inf")
        self.items_per_walk = 0.0
        self.walks_read = 0
        self.walks_lost = 0
        self.reads = 0
        self.interval_s = 1.0 / MIN_READS_PER_S
        self._prime()

    # -- reads ---------------------------------------------------------------------------------------------------
    def _read_ring(self) -> tuple[list[WaitHistoryRow], float]:
        since = self._last_ts or _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)
        before = time.time()
        rows = self.session.query_rows("wait_sampling_history", WaitHistoryRow, [since], fill=self._fill)
        self.reads += 1
        offset = before - rows[0].server_now.timestamp() if rows else 0.0
        return rows, offset

    def _read_procs(self) -> None:
        self._procs = {r.pid: r for r in self.session.query_rows("wait_sampling_procs", ProcessRow)}

    def _prime(self) -> None:
        """First read: where the ring ends now (nothing before it is replayed) and how fast it turns over."""
        rows, _ = self._read_ring()
        self._read_procs()
        self._alive = set(self._procs)
        if rows:
            self._last_ts = rows[-1].ts
            walks = len({r.ts for r in rows})
            self.items_per_walk = len(rows) / max(1, walks)
        else:
            self._last_ts = None
        self.interval_s = read_interval_s(self.info, self.items_per_walk or 1.0)

    def _name(self, kind: str, oid: int | None) -> str | None:
        if not oid:
            return None
        if (kind, oid) not in self._names and time.monotonic() - self._names_read_s >= self.NAMES_REFRESH_S:
            self._names_read_s = time.monotonic()
            self._names = {(str(r.kind), r.oid): str(r.name)
                           for r in self.session.query_rows("watch_names", NameRow)}
        return self._names.get((kind, oid))

    def read(self) -> list[Sample]:
        """The walks recorded since the last read, as samples (oldest first), decimated to ``hz``.

        Walks lost to a ring wrap are added to the first sample's ``late_ticks`` (in ticks at ``hz``).

        :raises DatabaseError: if a query fails.
        """
        rows, offset = self._read_ring()
        alive_before = self._alive
        self._read_procs()
        alive_now = set(self._procs)
        self._alive = alive_now
        if not rows:
            return []
        lost_s = 0.0
        if self._last_ts is not None:
            oldest = rows[0].ring_oldest
            if oldest is not None and oldest > self._last_ts and int(rows[0].ring_items) >= self.info.history_size:
                lost_s = (oldest - self._last_ts).total_seconds()
        walks = _by_walk(rows)
        self._last_ts = walks[-1][0]
        self.walks_read += len(walks)
        self.items_per_walk = len(rows) / len(walks)
        self.interval_s = read_interval_s(self.info, self.items_per_walk)
        seen = _Seen.of(walks, alive_before, alive_now)
        now_wall = time.time()
        now_mono = time.monotonic()
        samples: list[Sample] = []
        late = round(lost_s * self.hz)
        if lost_s:
            self.walks_lost += round(lost_s * 1000.0 / self.info.history_period_ms)
        for i, (ts, items) in enumerate(walks):
            wall = ts.timestamp() + offset
            slot = int(wall * self.hz)
            if slot <= self._last_slot:
                continue
            self._last_slot = slot
            sessions = self._walk_sessions(i, items, seen)
            samples.append(Sample(wall, now_mono - (now_wall - wall), tuple(sessions), late))
            late = 0
        return samples

    def _walk_sessions(self, i: int, items: list[WaitHistoryRow], seen: _Seen) -> list[ActiveSession]:
        """The active sessions of walk ``i``: the items that are sessions' waits, and, when CPU is inferred, the
        sessions alive through that walk that the collector found on CPU (no item), by pid."""
        sessions: list[ActiveSession] = []
        present: set[int] = set()
        for r in items:
            present.add(r.pid)
            if r.event_type is None and self.info.cpu_inferred:
                continue  # cannot happen before 1.1.6; with sample_cpu off a NULL is never written
            proc = self._procs.get(r.pid)
            if proc is None or not _is_session(proc) or not is_session_wait(r.event_type, r.event):
                continue
            sessions.append(self._session(r.pid, proc, r.event_type, r.event, r.queryid))
        if self.info.cpu_inferred:
            for pid in seen.candidates - present:
                proc = self._procs.get(pid)
                if proc is not None and _is_session(proc) and seen.alive_at(pid, i):
                    sessions.append(self._session(pid, proc, None, None, None))
        sessions.sort(key=lambda s: s.pid)
        return sessions

    def _session(self, pid: int, proc: ProcessRow, event_type: str | None, event: str | None,
                 queryid: int | None) -> ActiveSession:
        return ActiveSession(
            pid=pid, backend_type=proc.backend_type, state="active", wait_event_type=event_type, wait_event=event,
            query_id=int(queryid) if queryid else None, datname=self._name("database", proc.datid),
            usename=self._name("role", proc.usesysid), application_name=proc.application_name,
            xact_start=proc.xact_start, query_start=proc.query_start)


def installed_in(bin_dir: Path) -> bool:
    """True when the PostgreSQL installation of ``bin_dir`` has pg_wait_sampling (its control file and library,
    found through that installation's ``pg_config``)."""
    try:
        out = subprocess.run([str(bin_dir / "pg_config"), "--sharedir", "--pkglibdir"], capture_output=True,
                             text=True, timeout=30, check=False).stdout.split("\n")
    except (OSError, subprocess.TimeoutExpired):
        return False
    if len(out) < 2:
        return False
    return (Path(out[0]) / "extension" / "pg_wait_sampling.control").exists() and \
        (Path(out[1]) / "pg_wait_sampling.so").exists()


def scratch_preload(bin_dir: Path) -> dict[str, str]:
    """Settings that preload pg_wait_sampling (with pg_stat_statements) on a scratch server of ``bin_dir``, for
    :class:`~lockscope.server.ScratchSettings` ``extra``; empty when the installation does not have it."""
    if not installed_in(bin_dir):
        return {}
    return {"shared_preload_libraries": "pg_stat_statements,pg_wait_sampling"}
