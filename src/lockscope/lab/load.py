"""What one point of a load scenario measures: pgbench with pg_stat_statements reset first and wait events
sampled (:func:`measure_load`), and the figures it returns (:class:`LoadFigures`).

Load goes only to a :class:`~lockscope.server.ScratchServer` lockscope started.
"""

from __future__ import annotations

import math
import os
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from ..db import Session, connect, run_script
from ..errors import LockscopeError, ScratchServerError
from ..pgbench import PgbenchResult, run_pgbench
from ..rows import LabStatementRow, StatementsResetRow
from ..server import ScratchServer
from ..watch.aas import CPU, share
from ..watch.sampler import BackgroundSampler, Sample, WaitSummary, summarize
from .results import Row

__all__ = [
    "LoadFigures",
    "MachineCounters",
    "StatementFigures",
    "install_pg_stat_statements",
    "is_pk_select",
    "machine_figures",
    "measure_load",
    "measure_load_columns",
    "read_statements",
    "reset_statements",
]


@dataclass(frozen=True)
class StatementFigures:
    """pg_stat_statements figures of one statement over one point (counters reset before the point).

    :ivar query: normalised query text.
    :ivar calls: executions (count).
    :ivar plans: plannings (count; 0 when a cached generic plan was reused).
    :ivar mean_plan_ms: mean planning time per planning (ms; NaN without plannings).
    :ivar mean_exec_ms: mean execution time (ms).
    :ivar total_plan_ms: total planning time (ms).
    :ivar total_exec_ms: total execution time (ms).
    :ivar queryid: pg_stat_statements ``queryid`` (= pg_stat_activity ``query_id``), None if unknown.
    :ivar rows: rows retrieved or affected, summed over the calls (count).
    :ivar shared_blks_hit: shared buffer hits, summed over the calls (blocks).
    :ivar shared_blks_read: shared blocks read into shared buffers, summed over the calls (blocks).
    :ivar waits: active-session samples of client backends running this statement (pg_stat_activity ``query_id``
        = ``queryid``) by wait label (``type:event`` or ``CPU``; count); empty without query ids.
    :ivar client_backends: distinct client backends sampled while active in this statement (count; a lower bound
        of the backends that ran it: one never caught active by the sampler is not counted).
    """

    query: str
    calls: int
    plans: int
    mean_plan_ms: float
    mean_exec_ms: float
    total_plan_ms: float
    total_exec_ms: float
    queryid: int | None = None
    rows: int = 0
    shared_blks_hit: int = 0
    shared_blks_read: int = 0
    waits: dict[str, int] = field(default_factory=dict)
    client_backends: int = 0


@dataclass(frozen=True)
class LoadFigures:
    """What one concurrent pgbench run measured.

    :ivar tps: transactions per second (without connection time).
    :ivar latency_ms: mean transaction latency (ms).
    :ivar transactions: transactions processed (count).
    :ivar failed: failed transactions (count).
    :ivar mean_plan_ms: mean planning time per statement execution (ms; total planning / calls; NaN if unknown).
    :ivar mean_exec_ms: mean execution time per statement execution (ms; NaN if unknown).
    :ivar statement_calls: statement executions seen by pg_stat_statements (count).
    :ivar samples: active-session sampling ticks (count).
    :ivar active_session_samples: active client sessions summed over ticks (count).
    :ivar aas: average active sessions (sessions).
    :ivar lockmanager_share: fraction (0..1) of active-session samples waiting on ``LWLock:LockManager``.
    :ivar cpu_share: fraction (0..1) of active-session samples not waiting (CPU).
    :ivar top_wait: the most sampled wait event (``type:event``; CPU excluded), or ``""``.
    :ivar top_wait_share: its fraction (0..1) of active-session samples.
    :ivar waits: ``type:event`` (or ``CPU``) -> active-session samples (count).
    :ivar statements: per-statement pg_stat_statements figures.
    :ivar cpu_busy_fraction: the machine's cores busy during the pgbench run (fraction 0..1 of all cores, from
        ``/proc/stat``; the backends, pgbench and the sampler together; NaN where not readable).
    :ivar cpu_us_per_transaction: busy core time per transaction (µs; the same counters / transactions).
    :ivar context_switches_per_transaction: the machine's context switches per transaction (count; ``/proc/stat``
        ``ctxt``: pgbench-backend round trips, LWLock sleeps and wake-ups, preemptions).
    :ivar client_backends: distinct client backends sampled while active (count; a lower bound of the backends
        that ran statements).
    :ivar aas_by_class: average active sessions by wait-event class (``wait_event_type``, or ``CPU`` when not
        waiting) -> sessions; the classes sum to ``aas``.
    """

    tps: float
    latency_ms: float
    transactions: int
    failed: int
    mean_plan_ms: float
    mean_exec_ms: float
    statement_calls: int
    samples: int
    active_session_samples: int
    aas: float
    lockmanager_share: float
    cpu_share: float
    top_wait: str
    top_wait_share: float
    waits: dict[str, int] = field(default_factory=dict)
    statements: tuple[StatementFigures, ...] = ()
    cpu_busy_fraction: float = math.nan
    cpu_us_per_transaction: float = math.nan
    context_switches_per_transaction: float = math.nan
    client_backends: int = 0
    aas_by_class: dict[str, float] = field(default_factory=dict)

    def row(self) -> Row:
        """The flat part of these figures for a results row (``waits`` as ``a=1;b=2`` text; the lab's columns, so
        ``client_backends`` and ``aas_by_class`` are left out)."""
        out = {k: v for k, v in asdict(self).items()
               if k not in ("waits", "statements", "client_backends", "aas_by_class")}
        out["waits"] = ";".join(f"{k}={v}" for k, v in sorted(self.waits.items(), key=lambda kv: -kv[1]))
        return out


def reset_statements(session: Session) -> None:
    """``pg_stat_statements_reset()`` (needs the extension in the session's database)."""
    session.query_rows("lab_statements_reset", StatementsResetRow)


def read_statements(session: Session) -> tuple[StatementFigures, ...]:
    """pg_stat_statements rows of the session's database since the last reset, busiest first (lockscope's
    own sampling and probing statements left out)."""
    out = []
    for r in session.query_rows("lab_statements", LabStatementRow):
        plans = int(r.plans or 0)
        out.append(StatementFigures(
            query=" ".join(r.query.split()),
            calls=r.calls,
            plans=plans,
            mean_plan_ms=float(r.mean_plan_ms) if plans else math.nan,
            mean_exec_ms=float(r.mean_exec_ms),
            total_plan_ms=float(r.total_plan_ms),
            total_exec_ms=float(r.total_exec_ms),
            queryid=r.queryid,
            rows=int(r.rows or 0),
            shared_blks_hit=int(r.shared_blks_hit or 0),
            shared_blks_read=int(r.shared_blks_read or 0),
        ))
    return tuple(out)


@dataclass(frozen=True)
class MachineCounters:
    """The machine's cumulative CPU and scheduler counters (``/proc/stat``, Linux).

    :ivar busy_s: core-seconds not idle and not waiting for I/O, summed over cores (s).
    :ivar total_s: core-seconds of every kind (s).
    :ivar context_switches: context switches since boot (count).
    """

    busy_s: float
    total_s: float
    context_switches: int

    @classmethod
    def read(cls, path: Path = Path("/proc/stat")) -> MachineCounters | None:
        """The counters now; None where ``/proc/stat`` is not readable (not Linux)."""
        try:
            lines = path.read_text(encoding="ascii").splitlines()
        except OSError:
            return None
        ticks = float(os.sysconf("SC_CLK_TCK")) if hasattr(os, "sysconf") else 100.0
        busy = total = 0.0
        switches = 0
        for line in lines:
            fields = line.split()
            if fields and fields[0] == "cpu":
                values = [float(v) for v in fields[1:9]]  # user nice system idle iowait irq softirq steal
                total = sum(values) / ticks
                busy = (total - values[3] / ticks - values[4] / ticks)
            elif fields and fields[0] == "ctxt":
                switches = int(fields[1])
        return cls(busy, total, switches)


def machine_figures(before: MachineCounters | None, after: MachineCounters | None,
                    transactions: int) -> dict[str, float]:
    """CPU busy fraction, busy core-µs and context switches per transaction between two readings (NaN where
    unknown): the :class:`LoadFigures` fields ``cpu_busy_fraction``, ``cpu_us_per_transaction`` and
    ``context_switches_per_transaction``."""
    if before is None or after is None or after.total_s <= before.total_s:
        return {}
    busy = after.busy_s - before.busy_s
    out = {"cpu_busy_fraction": busy / (after.total_s - before.total_s)}
    if transactions > 0:
        out["cpu_us_per_transaction"] = busy / transactions * 1e6
        out["context_switches_per_transaction"] = (after.context_switches - before.context_switches) / transactions
    return out


def _client_sessions(samples: Sequence[Sample]) -> list[tuple[int, int | None, str]]:
    """(pid, query_id, wait label) of every active client-backend session in the samples."""
    return [(s.pid, s.query_id, s.wait) for sample in samples for s in sample.sessions
            if s.backend_type in (None, "client backend")]


def _by_statement(statements: Sequence[StatementFigures], samples: Sequence[Sample]) -> tuple[StatementFigures, ...]:
    """The statements with their sampled waits and backends (matched on ``queryid`` = ``query_id``)."""
    waits: dict[int, Counter[str]] = {}
    pids: dict[int, set[int]] = {}
    for pid, query_id, wait in _client_sessions(samples):
        if query_id is not None:
            waits.setdefault(query_id, Counter())[wait] += 1
            pids.setdefault(query_id, set()).add(pid)
    return tuple(replace(s, waits=dict(waits.get(s.queryid, {})), client_backends=len(pids.get(s.queryid, ())))
                 if s.queryid is not None else s for s in statements)


def _aas_by_class(summary: WaitSummary) -> dict[str, float]:
    """AAS by wait-event class: the part of ``type:event`` before the colon, ``CPU`` as is."""
    counts: Counter[str] = Counter()
    for label, n in summary.by_wait.items():
        counts[label.split(":", 1)[0]] += n
    return {k: n / summary.samples if summary.samples else 0.0 for k, n in sorted(counts.items())}


def _wait_figures(summary: WaitSummary) -> dict[str, Any]:
    total = summary.active_session_samples
    waits = {k: v for k, v in summary.by_wait.items() if k != CPU}
    top = max(waits.items(), key=lambda kv: kv[1]) if waits else ("", 0)
    return {
        "samples": summary.samples,
        "active_session_samples": total,
        "aas": summary.aas,
        "lockmanager_share": summary.lockmanager_share,
        "cpu_share": share(summary.by_wait.get(CPU, 0), total),
        "top_wait": top[0],
        "top_wait_share": share(top[1], total),
        "waits": dict(summary.by_wait),
    }


def measure_load(
    server: ScratchServer,
    *,
    clients: int,
    duration_s: float,
    protocol: str = "simple",
    select_only: bool = True,
    script_file: Path | None = None,
    sample_hz: float = 10.0,
    warmup_s: float = 0.0,
    statement_filter: Callable[[StatementFigures], bool] = lambda s: True,
    extra_args: Sequence[str] = (),
) -> LoadFigures:
    """Run pgbench on the scratch server while sampling wait events, with pg_stat_statements reset first.

    :param clients: ``-c`` (count).
    :param duration_s: ``-T`` (s).
    :param protocol: ``simple``, ``extended`` or ``prepared``.
    :param select_only: built-in select-only transaction (``-S``); ignored with ``script_file``.
    :param script_file: a pgbench script (``-f``) instead of the built-in transaction.
    :param sample_hz: pg_stat_activity sampling rate (Hz).
    :param warmup_s: an unmeasured pgbench run first (s; 0 = none): fills caches after the restart.
    :param statement_filter: which pg_stat_statements rows make up the planning/execution means.
    :param extra_args: more pgbench arguments (e.g. ``-f a.sql@5 -f b.sql@3`` for a weighted mix; a script there
        also turns ``select_only`` off).
    :raises ScratchServerError: if pgbench fails.
    """
    extra: list[str] = ["-f", str(script_file)] if script_file is not None else []
    extra += extra_args
    only = select_only and script_file is None and "-f" not in extra_args
    if warmup_s >= 1:
        run_pgbench(server, clients=clients, duration_s=warmup_s, protocol=protocol, select_only=only,
                    extra_args=extra)
    with connect(server.conninfo()) as session:
        reset_statements(session)
    with BackgroundSampler(server.conninfo(), hz=sample_hz) as sampler:
        before = MachineCounters.read()
        result: PgbenchResult = run_pgbench(server, clients=clients, duration_s=duration_s, protocol=protocol,
                                            select_only=only, extra_args=extra)
        after = MachineCounters.read()
    waits = summarize(sampler.samples)
    with connect(server.conninfo()) as session:
        statements = _by_statement(tuple(s for s in read_statements(session) if statement_filter(s)),
                                   sampler.samples)
    return _load_figures(result, statements, waits, machine_figures(before, after, result.transactions),
                         len({pid for pid, _, _ in _client_sessions(sampler.samples)}))


def _load_figures(result: PgbenchResult, statements: tuple[StatementFigures, ...], waits: WaitSummary,
                  machine: dict[str, float], client_backends: int) -> LoadFigures:
    """One run's figures: pgbench's, the statements' planning and execution means, waits, the machine's."""
    calls = sum(s.calls for s in statements)
    return LoadFigures(
        tps=result.tps, latency_ms=result.latency_ms, transactions=result.transactions, failed=result.failed,
        mean_plan_ms=sum(s.total_plan_ms for s in statements) / calls if calls else math.nan,
        mean_exec_ms=sum(s.total_exec_ms for s in statements) / calls if calls else math.nan,
        statement_calls=calls, statements=statements, **_wait_figures(waits),
        cpu_busy_fraction=machine.get("cpu_busy_fraction", math.nan),
        cpu_us_per_transaction=machine.get("cpu_us_per_transaction", math.nan),
        context_switches_per_transaction=machine.get("context_switches_per_transaction", math.nan),
        client_backends=client_backends, aas_by_class=_aas_by_class(waits),
    )


def install_pg_stat_statements(server: ScratchServer) -> None:
    """``CREATE EXTENSION pg_stat_statements`` on the scratch server.

    :raises ScratchServerError: when the installation lacks it (the lab's planning figures need it).
    """
    try:
        run_script(server.conninfo(), "create extension if not exists pg_stat_statements")
    except LockscopeError as exc:
        raise ScratchServerError(f"pg_stat_statements is not usable with {server.bin_dir}: {exc}") from None


def is_pk_select(s: StatementFigures) -> bool:
    """The pgbench_accounts primary-key SELECT of ``pgbench -S`` (:data:`lockscope.demo.PK_SELECT`), as
    pg_stat_statements normalises it."""
    return s.query.lower().startswith("select abalance from pgbench_accounts where aid =")


def measure_load_columns(server: ScratchServer, **options: Any) -> tuple[Row, LoadFigures | None]:
    """:func:`measure_load` for a results row: its figures as columns (:meth:`LoadFigures.row`) with ``error``
    empty, or, when pgbench failed, ``tps`` NaN and ``error`` the one-line reason (the run goes on).

    :param options: :func:`measure_load`'s keyword arguments.
    :return: (columns to add to the row, the figures or None when pgbench failed).
    """
    try:
        load = measure_load(server, **options)
    except ScratchServerError as exc:
        return {"tps": math.nan, "error": str(exc)}, None
    return {**load.row(), "error": ""}, load
