"""From wall time to on-CPU time: the one path by which a statement's cost from pg_stat_statements (mean planning and
execution time, i.e. wall time in the backend) becomes the CPU the model charges it, shared by ``lockscope forecast``
(statement and workload modes) and ``lockscope diagnose``.

Under load, pg_stat_statements' times hold more than the statement's CPU: the waits of the backend (a sampler of
pg_stat_activity sees a wait event) and, when more backends want a core than there are cores, the time spent
runnable in the run queue (sampled as "CPU": no wait event). The model adds both back itself (its processor
sharing and its partition waits), so taking the wall time as CPU counts them twice and, at 16 clients on 2 cores,
under-forecasts a CPU-bound statement by 2-4x (issue 27: forecast / measured 0.47 and 0.23).

The factor (0..1] that multiplies a statement's wall time, by source, best first:

1. **pg_stat_kcache** (2.2+, created in the database and preloaded): the user + system CPU that getrusage recorded
   around the statement's planning and execution, over the statement's pg_stat_statements wall time of the same
   window (two snapshots). Exact, except that pg_stat_kcache.c ``pgsk_compute_counters`` records an execution
   shorter than ``3 / pg_stat_kcache.linux_hz`` s with its wall time as CPU: where the statement's mean time is
   below that, the figure is the wall time again and the sampled factor is used (the report says so).
2. **sampled** wait states of the same seconds: the share of the statement's active samples that show no wait
   event (its own when the statement, by ``query_id``, was caught in at least :data:`MIN_STATEMENT_SAMPLES`
   active samples, else that of every client backend of the database), times ``min(1, cores / AAS on CPU)``: of
   the backends sampled on CPU, only ``cores`` can run at once; the rest is the run queue.
3. none: no sample, no pg_stat_kcache: the wall time as measured (factor 1), and the source says so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..errors import DatabaseError
from ..rows import KcacheCpuRow, KcacheSchemaRow
from ..watch.aas import CPU
from .live import LivePoint, counts_toward, sampled_on_cpu

if TYPE_CHECKING:
    from ..db import Session
    from ..watch.sampler import Sample

__all__ = ["MIN_STATEMENT_SAMPLES", "WALL_TIME", "Deflation", "KcacheWindow", "OnCpu", "deflation",
           "sampled_on_cpu"]

#: Active samples of one statement (by query_id) from which its own CPU share is used (count).
MIN_STATEMENT_SAMPLES = 20


@dataclass(frozen=True)
class OnCpu:
    """The share of a statement's wall time in the server that was on a core.

    :ivar factor: on-CPU time / wall time (0..1].
    :ivar source: how it was found, in words (for the report's notes).
    """

    factor: float
    source: str


#: No deflation: the wall time as measured.
WALL_TIME = OnCpu(1.0, "wall time as measured (no wait-event samples, no pg_stat_kcache)")


@dataclass(frozen=True)
class Deflation:
    """Each statement's on-CPU factor (by pg_stat_statements queryid) and the one for a statement not listed.

    :ivar overall: the factor of every client backend of the database (or :data:`WALL_TIME`).
    :ivar by_queryid: ``(queryid, OnCpu)`` pairs: pg_stat_kcache's, or the statement's own sampled factor.
    """

    overall: OnCpu = WALL_TIME
    by_queryid: tuple[tuple[int, OnCpu], ...] = field(default=())

    def of(self, queryid: int | None) -> OnCpu:
        """The factor for a statement (its own when listed, else :attr:`overall`)."""
        return dict(self.by_queryid).get(queryid, self.overall) if queryid is not None else self.overall


def deflation(live: LivePoint | None, samples: Sequence[Sample], database: str, cores: int, *,
              own_pids: Sequence[int] = (), kcache: Mapping[int, OnCpu] | None = None) -> Deflation:
    """The deflation of an interval: pg_stat_kcache's factor where it has one (``kcache``,
    :meth:`KcacheWindow.stop`), else the statement's own sampled factor when it was caught in at least
    :data:`MIN_STATEMENT_SAMPLES` active samples, else the database's sampled factor (``live``), else none.

    :param live: the interval's operating point (:func:`lockscope.forecast.live.live_point`), None without one.
    :param samples: the interval's wait-event samples (the statements' own shares; may be empty, e.g. diagnose).
    :param database: the database whose client backends count (:func:`lockscope.forecast.live.counts_toward`).
    """
    overall = WALL_TIME
    if live is not None and live.aas <= 0:
        overall = OnCpu(1.0, f"no client backend of the database active in the {live.samples} samples: wall time "
                             "as measured")
    elif live is not None:
        overall = OnCpu(sampled_on_cpu(live.aas_cpu, live.aas, live.aas_cpu, cores),
                        f"sampled: {100 * live.aas_cpu / live.aas:.0f} % of active samples on CPU, "
                        f"{live.aas_cpu:.1f} sessions on CPU for {cores} cores")
    own: dict[int, OnCpu] = {}
    if live is not None:
        active: dict[int, int] = {}
        cpu: dict[int, int] = {}
        for sample in samples:
            for s in sample.sessions:
                if s.query_id is None or not counts_toward(s, database, own_pids):
                    continue
                active[s.query_id] = active.get(s.query_id, 0) + 1
                cpu[s.query_id] = cpu.get(s.query_id, 0) + (s.wait == CPU)
        for qid, n in active.items():
            if n >= MIN_STATEMENT_SAMPLES:
                own[qid] = OnCpu(sampled_on_cpu(cpu[qid], n, live.aas_cpu, cores),
                                 f"sampled: {100 * cpu[qid] / n:.0f} % of its {n} active samples on CPU, "
                                 f"{live.aas_cpu:.1f} sessions on CPU for {cores} cores")
    own.update(kcache or {})
    return Deflation(overall, tuple(sorted(own.items())))


class KcacheWindow:
    """pg_stat_kcache's CPU over a window: ``start(session)`` before, ``stop(session)`` after.

    :ivar note: why pg_stat_kcache, created in the database, is not used for some or all statements (not
        preloaded, too old, cannot be read, calls shorter than it resolves), else None.
    """

    def __init__(self) -> None:
        self._schema: KcacheSchemaRow | None = None
        self._before: dict[int, KcacheCpuRow] = {}
        self.note: str | None = None

    def start(self, session: Session) -> None:
        """Detect pg_stat_kcache (``sql/forecast_kcache_schema.sql``) and take the first snapshot of the database's
        statements (``sql/forecast_kcache.sql``).

        :raises DatabaseError: the catalog read failed.
        """
        rows = session.query_rows("forecast_kcache_schema", KcacheSchemaRow)
        if not rows:  # not created: the usual case, no note
            return
        row = rows[0]
        if row.linux_hz is None or row.pgss_schema is None:
            self.note = ("pg_stat_kcache is created but not loaded (shared_preload_libraries)" if row.linux_hz is None
                         else "pg_stat_kcache is created but pg_stat_statements is not")
            return
        self._schema = row
        self._before = self._read(session)

    def _read(self, session: Session) -> dict[int, KcacheCpuRow]:
        schema = self._schema
        if schema is None or schema.pgss_schema is None:
            return {}
        try:
            rows = session.query_rows("forecast_kcache", KcacheCpuRow,
                                      fill={"kcache": session.identifier(schema.kcache_schema),
                                            "pgss": session.identifier(schema.pgss_schema)})
        except DatabaseError as exc:
            self._schema = None
            self.note = f"pg_stat_kcache {schema.version} cannot be read (2.2 or later is needed): {exc}"
            return {}
        return {r.queryid: r for r in rows}

    def stop(self, session: Session) -> dict[int, OnCpu]:
        """The on-CPU factor of each statement that ran in the window: CPU over wall time of the
        window's calls; left out where the window's mean time per call is below pg_stat_kcache's ``3 / linux_hz``
        (those calls' CPU was recorded as their wall time, :data:`note` says how many).

        :raises DatabaseError: the catalog read failed.
        """
        if self._schema is None:
            return {}
        hz = _int(self._schema.linux_hz)
        after = self._read(session)
        out: dict[int, OnCpu] = {}
        short = 0
        for qid, a in after.items():
            b = self._before.get(qid)
            calls, wall_ms = a.calls - (b.calls if b else 0), a.wall_ms - (b.wall_ms if b else 0.0)
            cpu_s = a.cpu_s - (b.cpu_s if b else 0.0)
            if calls <= 0 or wall_ms <= 0:
                continue
            if hz is None or hz <= 0 or wall_ms / calls < 3000.0 / hz:
                short += 1
                continue
            out[qid] = OnCpu(max(1e-3, min(1.0, 1000.0 * cpu_s / wall_ms)),
                             f"pg_stat_kcache: {1000.0 * cpu_s / calls:.3f} ms CPU per call of "
                             f"{wall_ms / calls:.3f} ms")
        if short:
            self.note = (f"pg_stat_kcache: {short} statements' calls are shorter than 3 / pg_stat_kcache.linux_hz "
                         f"({self._schema.linux_hz} Hz), which it records with their wall time as CPU: their "
                         "sampled factor is used")
        return out


def _int(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None
