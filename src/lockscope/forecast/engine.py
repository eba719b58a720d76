"""The forecast engine: measured lock footprints -> lock partitions -> the queueing model, with what-ifs.

Three inputs, one output (:class:`ForecastReport`):

- **one statement** (:func:`forecast_statement`): probed with :func:`lockscope.footprint.measure_footprint`
  (EXPLAIN only); the steady-state transaction is the last execution probed (the simple protocol's only one; with
  the prepared protocol the plan that keeps being used once the plan cache has settled).
- **a live workload** (:func:`forecast_workload`): pg_stat_statements rates and each top statement's measured
  footprint, read by the workload reader lockscope audit uses too (:func:`lockscope.workload.statements.read_workload`
  and :func:`~lockscope.workload.probes.probe_statements`); a call takes the custom plan's locks, or the cached generic
  plan's when the custom plan could not be probed. Each call is taken as its own transaction, and the report says
  so: a transaction may hold more than its statements (``transaction.STATEMENTS_ONLY_CAVEAT``).
- **a script's transactions** (:func:`lockscope.forecast.transactions.forecast_script`, ``--workload FILE``): each
  transaction one class whose locks accumulate.

Each relation lock becomes a :class:`LockSite`: its fast-path flag (measured for a statement; for the workload the
capacity model's flag over the measured locks in acquisition order, checked against the measured count) and, for
main-table locks, its lock partition (:func:`lockscope.lockpart.lock_partition` of ``(database OID, relation
OID)``; database 0 for a shared catalog, ``pg_class.relisshared``, as lmgr.c ``SetLocktagRelationOid`` builds the
tag). A statement becomes a :class:`~lockscope.forecast.model.TransactionClass`; the mix is solved by
:func:`lockscope.forecast.model.forecast_curve`.

What-ifs (:class:`WhatIf`) re-run the same model on changed footprints: ``drop_indexes`` removes those indexes'
locks and ``max_locks_per_transaction`` / ``assume_major`` change the capacity, after which the fast-path flags
of the remaining locks are predicted in their order (:meth:`lockscope.capacity.CapacityModel.predict`, lock.c
``LockAcquireExtended``); ``plan_cache_mode`` probes the statement again with the prepared protocol in that mode
(statement) or takes the custom / cached generic plan's footprint (workload).
"""

from __future__ import annotations

import datetime
import functools
import math
import os
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ..capacity import MIN_MAX_LOCKS_PER_TRANSACTION, CapacityModel
from ..catalog import database_facts, read_catalog, read_settings, relation_facts, resolve_indexes
from ..db import time_on_scratch
from ..errors import BadInputError, DatabaseError
from ..explain import ExplainedPlan, read_explain
from ..footprint import explain_access, measure_footprint
from ..lockpart import NUM_LOCK_PARTITIONS
from ..rows import ClockRow, PopulationRow, StatementTimesRow
from ..shapes import StatementShape, apply_what_if, shape_from_footprint
from ..statement import bind_params, check_statement
from ..transaction import STATEMENTS_ONLY_CAVEAT
from ..versions import PG14, check_assumed_major
from ..vocab import FootprintSource, PlanCacheMode
from ..watch.sampler import BackgroundSampler
from ..workload.coverage import Coverage, coverage_of
from ..workload.probes import probe_statements, shape_from_plan
from ..workload.statements import StatementRates, read_workload
from .calibration import DEFAULT_CALIBRATION, Calibration
from .cpu import WALL_TIME, Deflation, KcacheWindow, OnCpu, deflation
from .honesty import ModelCheck, check_model, other_waits
from .live import ANCHOR_TOLERANCE, Anchor, LivePoint, anchor_costs, live_point
from .model import Demands, Forecast, TransactionClass, forecast_curve, idle_round_trip_s, workload_demands

if TYPE_CHECKING:
    from ..db import Session
    from ..footprint import Footprint
    from ..watch.sampler import Sample
    from ..workload.probes import StatementAudit
    from ..workload.statements import Workload

__all__ = [
    "ForecastReport",
    "LiveForecast",
    "OwnCost",
    "PresentCalibration",
    "ScenarioForecast",
    "WhatIf",
    "connections_doing_work",
    "curve_clients",
    "default_cores",
    "forecast_live",
    "forecast_shapes",
    "forecast_statement",
    "forecast_workload",
    "present_calibration",
    "saturation_rate",
    "server_clock",
    "statement_on_cpu",
    "statement_own_cost",
    "transaction_class",
    "workload_own_cost",
]

def default_cores() -> int:
    """This machine's CPUs (``os.cpu_count()``, at least 1)."""
    return max(1, os.cpu_count() or 1)


@dataclass(frozen=True)
class WhatIf:
    """Changes forecast beside the measured state (all optional).

    :ivar drop_indexes: index names as given (``--drop-index``).
    :ivar max_locks_per_transaction: another max_locks_per_transaction (``--mlpt``).
    :ivar plan_cache_mode: ``auto``, ``force_custom_plan`` or ``force_generic_plan``.
    :ivar assume_major: another major version (``versions.SUPPORTED_MAJORS``), same relations.
    """

    drop_indexes: tuple[str, ...] = ()
    max_locks_per_transaction: int | None = None
    plan_cache_mode: PlanCacheMode | None = None
    assume_major: int | None = None

    def __post_init__(self) -> None:
        mlpt = self.max_locks_per_transaction
        if mlpt is not None and mlpt < MIN_MAX_LOCKS_PER_TRANSACTION:
            raise BadInputError(f"--mlpt: max_locks_per_transaction is at least {MIN_MAX_LOCKS_PER_TRANSACTION}")
        if self.plan_cache_mode is not None and self.plan_cache_mode not in tuple(PlanCacheMode):
            raise BadInputError(f"--plan-cache-mode {self.plan_cache_mode!r}: use {', '.join(PlanCacheMode)}")
        if self.assume_major is not None:
            check_assumed_major(self.assume_major)

    @property
    def any(self) -> bool:
        """True when any change is asked for."""
        return bool(self.drop_indexes) or any(v is not None for v in (
            self.max_locks_per_transaction, self.plan_cache_mode, self.assume_major))

    def describe(self) -> str:
        """One line, e.g. ``drop index a, max_locks_per_transaction 128``."""
        parts = []
        if self.drop_indexes:
            parts.append("drop index " + ", ".join(self.drop_indexes))
        if self.max_locks_per_transaction is not None:
            parts.append(f"max_locks_per_transaction {self.max_locks_per_transaction}")
        if self.plan_cache_mode is not None:
            parts.append(f"plan_cache_mode {self.plan_cache_mode}")
        if self.assume_major is not None:
            parts.append(f"PostgreSQL {self.assume_major}")
        return ", ".join(parts) or "none"

    def capacity(self, measured: CapacityModel) -> CapacityModel:
        """The capacity model after the change (the measured one when neither mlpt nor version changes)."""
        version = measured.server_version_num if self.assume_major is None else self.assume_major * 10000
        return CapacityModel(version, self.max_locks_per_transaction or measured.max_locks_per_transaction)


@dataclass(frozen=True)
class ScenarioForecast:
    """The forecast of one state (measured, or a what-if).

    :ivar label: ``measured`` or ``what-if: ...``.
    :ivar capacity: the fast-path capacity assumed.
    :ivar statements: each statement with its own forecast (alone, at the report's clients).
    :ivar demands: the workload's (calls-weighted) demands.
    :ivar forecast: the workload at the report's clients.
    :ivar curve: the workload at 1.. clients (for the plot).
    :ivar rate_tps: the measured rate of the workload (calls/s; None for a probed statement).
    :ivar cpu_utilisation_at_rate: CPU busy fraction at ``rate_tps`` (or at the predicted throughput), with the CPU
        per transaction at the report's clients.
    :ivar partition_utilisation_at_rate: 16 partition-LWLock busy fractions (``X a_p lwlock_hold_s``) at
        ``rate_tps`` (or at the predicted throughput).
    """

    label: str
    capacity: CapacityModel
    statements: tuple[tuple[StatementShape, Forecast], ...]
    demands: Demands
    forecast: Forecast
    curve: tuple[Forecast, ...]
    rate_tps: float | None
    cpu_utilisation_at_rate: float
    partition_utilisation_at_rate: tuple[float, ...]

    @property
    def main_table_locks_per_transaction(self) -> float:
        """Calls-weighted main-table locks per transaction (count)."""
        total = sum(s.calls for s, _ in self.statements)
        return sum(s.calls * len(s.main_table_locks) for s, _ in self.statements) / total if total else 0.0

    @property
    def partition_locks_per_transaction(self) -> tuple[float, ...]:
        """Calls-weighted main-table locks per partition per transaction (16 values)."""
        total = sum(s.calls for s, _ in self.statements)
        return tuple(sum(s.calls * s.partition_load[p] for s, _ in self.statements) / total if total else 0.0
                     for p in range(NUM_LOCK_PARTITIONS))


@dataclass(frozen=True)
class ForecastReport:
    """Everything ``lockscope forecast`` shows.

    :ivar mode: ``statement`` or ``workload``.
    :ivar server_version: e.g. ``18.6``.
    :ivar database: database name.
    :ivar database_oid: its OID.
    :ivar cores: C of the model (count).
    :ivar clients: N of the model (count).
    :ivar clients_source: how N was chosen (``--clients``, ``active backends``, ``default``).
    :ivar calibration: the costs used.
    :ivar measured: the forecast of the measured state.
    :ivar what_if: the what-if's forecast, or None.
    :ivar what_if_text: the what-if in words (``none`` without one).
    :ivar notes: what was skipped or approximated.
    :ivar live: the measured operating point (workload mode with samples), else None.
    :ivar anchor: the model against it ("model vs now"), else None.
    :ivar think_s: each client's time between calls outside the server used by the model (s).
    :ivar coverage: the share of the interval's calls and execution time in the model (workload mode), else None.
    :ivar model_check: the first estimate of the present more than 25 % off, with the reasons found
        (:mod:`lockscope.forecast.honesty`), else None.
    :ivar throughput_range_tps: ``(low, high)`` predicted TPS of the measured state at ``clients`` when the
        statement's execution time is an estimate with a range (:meth:`OwnCost.with_exec_floor`), else None.
    """

    mode: str
    server_version: str
    server_version_num: int
    database: str
    database_oid: int
    cores: int
    clients: int
    clients_source: str
    calibration: Calibration
    measured: ScenarioForecast
    what_if: ScenarioForecast | None
    what_if_text: str
    notes: tuple[str, ...] = ()
    live: LivePoint | None = None
    anchor: Anchor | None = None
    think_s: float = 0.0
    coverage: Coverage | None = None
    model_check: ModelCheck | None = None
    throughput_range_tps: tuple[float, float] | None = None

    @property
    def gain(self) -> dict[str, float] | None:
        """The what-if against the measured state at the report's clients: ``tps`` (relative change), and
        ``lockmanager_share`` and ``cpu_us`` before and after; None without a what-if."""
        if self.what_if is None:
            return None
        a, b = self.measured.forecast, self.what_if.forecast
        return {"tps": b.throughput_tps / a.throughput_tps - 1.0 if a.throughput_tps > 0 else 0.0,
                "lockmanager_share_before": a.lockmanager_share, "lockmanager_share_after": b.lockmanager_share,
                "cpu_us_before": a.cpu_per_transaction_us, "cpu_us_after": b.cpu_per_transaction_us}


def server_clock(session: Session) -> datetime.datetime:
    """The server's clock now (``clock_timestamp()``), the start of an interval.

    :raises DatabaseError: the query failed.
    """
    return session.query_rows("forecast_clock", ClockRow)[0].now


def connections_doing_work(session: Session, since: datetime.datetime) -> int:
    """The current database's client backends (lockscope's left out) that ran a statement since ``since`` (a
    :func:`server_clock` value) or run one now (count, ``sql/forecast_population.sql``): in a closed loop, the
    population of clients.

    :raises DatabaseError: the query failed.
    """
    return session.query_rows("forecast_population", PopulationRow, [since])[0].connections


def transaction_class(shape: StatementShape, own_factor: float = 1.0,
                      loaded_clients: float | None = None) -> TransactionClass:
    """A statement shape as one transaction class of the model; ``own_factor`` multiplies its own cost (the
    re-anchoring to the live operating point, :mod:`lockscope.forecast.live`); ``loaded_clients``: the clients of
    the live load its own cost was measured under, when it was (:attr:`StatementShape.own_under_load`)."""
    return TransactionClass(shape.name, fast_path_locks=shape.fast_path_count, partition_load=shape.partition_load,
                            calls=shape.calls, planned_relations=shape.planned_relations, plans=shape.plans,
                            executor_relations=shape.executor_relations,
                            own_s=None if shape.own_s is None else shape.own_s * own_factor, own_at=shape.own_at,
                            own_at_clients=loaded_clients if shape.own_under_load else None)


# -- the model -----------------------------------------------------------------------------------------------------
def curve_clients(clients: int) -> tuple[int, ...]:
    """Client counts of the plotted curve: 1 .. max(32, 2 x clients), at most 1024."""
    top = min(1024, max(32, 2 * clients))
    return tuple(range(1, top + 1))


def forecast_shapes(label: str, shapes: Sequence[StatementShape], capacity: CapacityModel, calibration: Calibration,
                    *, cores: int, clients: int, rate_tps: float | None = None, think_s: float = 0.0,
                    own_factor: float = 1.0, loaded_clients: float | None = None) -> ScenarioForecast:
    """Solve the model for the statements (each alone and as a calls-weighted mix).

    :param rate_tps: the measured rate of the mix (calls/s) for the utilisation at the current rate; None: the
        utilisations at the predicted throughput with ``clients`` clients.
    :param think_s: each client's time between calls outside the server (s).
    :param own_factor: multiplies every statement's own cost (the live re-anchoring).
    :param loaded_clients: the clients of the live load the statements' own costs were measured under (those
        measured there: :func:`transaction_class`), None without a live load.
    :raises BadInputError: no statement.
    """
    if not shapes:
        raise BadInputError("nothing to forecast: no statement with a measured footprint")
    each = []
    for s in shapes:
        d = workload_demands([transaction_class(s, own_factor, loaded_clients)], calibration)
        each.append((s, forecast_curve(d, cores, [clients], think_s=think_s)[0]))
    demands = workload_demands([transaction_class(s, own_factor, loaded_clients) for s in shapes], calibration)
    points = curve_clients(clients)
    curve = forecast_curve(demands, cores, sorted(set(points) | {clients}), think_s=think_s)
    at = next(f for f in curve if f.clients == clients)
    x = at.throughput_tps if rate_tps is None else rate_tps
    return ScenarioForecast(
        label=label, capacity=capacity, statements=tuple(each), demands=demands, forecast=at,
        curve=tuple(f for f in curve if f.clients in points), rate_tps=rate_tps,
        cpu_utilisation_at_rate=x * at.cpu_per_transaction_us * 1e-6 / cores,
        partition_utilisation_at_rate=tuple(x * d for d in demands.partition_s))


@dataclass(frozen=True)
class OwnCost:
    """A statement's own planning and execution time per call, and where they come from.

    :ivar plan_s: planning time (s), None when unknown.
    :ivar exec_s: execution time (s), None when unknown.
    :ivar source: the source of each, in words.
    :ivar plan_by_explain: ``plan_s`` is EXPLAIN's "Planning Time" (one call, its own instrumentation), not a
        steady-state mean (pg_stat_statements).
    :ivar exec_by_explain: ``exec_s`` is ``EXPLAIN ANALYZE``'s "Execution Time".
    :ivar plan_cost: the plan's total cost (planner cost units, EXPLAIN), None when not read.
    :ivar exec_range_s: ``(low, high)`` execution time (s) when it is an estimate (:meth:`with_exec_floor`), else
        None.
    :ivar queryid: the pg_stat_statements query identifier when the times are its means (wall time), else None.
    :ivar under_load: the execution time is pg_stat_statements' mean over calls of the running load (the present),
        so its CPU already holds that load's growth (:attr:`lockscope.forecast.model.TransactionClass.own_at_clients`).
    """

    plan_s: float | None
    exec_s: float | None
    source: str
    plan_by_explain: bool = False
    exec_by_explain: bool = False
    plan_cost: float | None = None
    exec_range_s: tuple[float, float] | None = None
    queryid: int | None = None
    under_load: bool = False

    def deflated(self, on_cpu: OnCpu) -> OwnCost:
        """The pg_stat_statements times as on-CPU times: multiplied by ``on_cpu.factor``
        (:mod:`lockscope.forecast.cpu`; a planning time from EXPLAIN alone is kept), the source saying so."""
        if on_cpu.factor == 1.0:
            return replace(self, source=f"{self.source}; {on_cpu.source}")
        f = on_cpu.factor  # planning timed by EXPLAIN alone is not wall time under load: kept
        return replace(self, plan_s=None if self.plan_s is None or self.plan_by_explain else self.plan_s * f,
                       exec_s=None if self.exec_s is None else self.exec_s * f,
                       source=f"{self.source}, x {f:.2f} to CPU ({on_cpu.source})")

    def with_exec_floor(self, calibration: Calibration) -> OwnCost:
        """When the execution time is unknown (issue 27): estimated from the plan's total cost times the
        calibration's execution time per cost unit (``lab ceiling``; :data:`DEFAULT_CALIBRATION`'s when the
        calibration has none), with the range its error factor gives, both ends stated; without a plan cost, the
        base statement's execution (a lower bound) up to the same estimate. Unchanged when the time is known."""
        if self.exec_s is not None or self.plan_s is None:
            return self
        unit = calibration if calibration.exec_s_per_cost_unit > 0 else DEFAULT_CALIBRATION
        if not self.plan_cost or unit.exec_s_per_cost_unit <= 0:
            return replace(self, exec_s=calibration.base_exec_s, exec_by_explain=False)
        estimate = self.plan_cost * unit.exec_s_per_cost_unit
        err = max(1.0, unit.cost_estimate_error)
        low, high = max(calibration.base_exec_s, estimate / err), max(calibration.base_exec_s, estimate * err)
        which = "" if unit is calibration else " (the built-in calibration's: yours has none)"
        source = (f"{self.source.split('; execution time unknown')[0]}; execution time unknown (not in "
                  f"pg_stat_statements; give --exec-cost, or --scratch --setup with data to time it): estimated "
                  f"from the plan's cost, {self.plan_cost:,.2f} units x {unit.exec_s_per_cost_unit * 1e9:,.1f} ns"
                  f"{which} = {estimate * 1e3:.3f} ms, between {low * 1e3:.3f} and {high * 1e3:.3f} ms (statement "
                  f"shapes spread by x {err:.2f} around one figure per unit)")
        return replace(self, exec_s=max(calibration.base_exec_s, estimate), exec_by_explain=False, source=source,
                       exec_range_s=(low, high))

    def steady(self, calibration: Calibration) -> OwnCost:
        """The times as a steady-state mean (what pg_stat_statements records, the basis of
        :meth:`Calibration.overhead_s`): EXPLAIN's figures less what EXPLAIN adds to the base statement's
        (:attr:`Calibration.explain_plan_extra_s`, :attr:`Calibration.explain_exec_extra_s`), at least 0."""
        plan = self.plan_s
        if plan is not None and self.plan_by_explain:
            plan = max(0.0, plan - calibration.explain_plan_extra_s)
        exec_s = self.exec_s
        if exec_s is not None and self.exec_by_explain:
            exec_s = max(0.0, exec_s - calibration.explain_exec_extra_s)
        return OwnCost(plan, exec_s, self.source, plan_cost=self.plan_cost, queryid=self.queryid)

    def recorded(self, times: StatementTimesRow, window: str, planning: str) -> OwnCost:
        """This cost with pg_stat_statements' means of ``times`` (one window of the statement's calls, named in
        the source by ``window``): its mean execution time, and its mean planning time when it has plannings
        (track_planning), else this cost's planning time, said by ``planning``.

        :raises ValueError: ``times`` has no calls with an execution time.
        """
        if not times.calls or times.mean_exec_ms is None:
            raise ValueError("pg_stat_statements' times without calls")
        exec_ms, plan_s, by_explain = float(times.mean_exec_ms), self.plan_s, self.plan_by_explain
        if times.mean_plan_ms is not None and times.plans:
            plan_s, by_explain = float(times.mean_plan_ms) / 1000.0, False
            planning = f"{1000.0 * plan_s:.3f} ms planning (pg_stat_statements, {times.plans:,} plannings)"
        return replace(self, plan_s=plan_s, exec_s=exec_ms / 1000.0, plan_by_explain=by_explain,
                       exec_by_explain=False, exec_range_s=None, under_load=True,
                       source=f"pg_stat_statements on this server {window}: {exec_ms:.3f} ms execution over "
                              f"{times.calls:,} calls, {planning}")

    def own_s(self, plans: bool) -> float | None:
        """Per call (s): execution, plus planning when the call plans; None when the execution time is unknown."""
        if self.exec_s is None:
            return None
        return self.exec_s + ((self.plan_s or 0.0) if plans else 0.0)

    def apply(self, shape: StatementShape) -> StatementShape:
        """``shape`` with this cost (its planning only if the shape plans)."""
        return shape.with_own_cost(self.own_s(shape.plans), self.source, under_load=self.under_load)


#: EXPLAIN (SUMMARY) runs of a statement for its planning time; the first (cold catalog caches) is not counted.
_EXPLAIN_RUNS = 6
_UNKNOWN_EXEC = ("execution time unknown (not in pg_stat_statements; give --exec-cost, or --scratch --setup with data "
                 "to time it): the base statement's (pgbench -S) execution stands in, a lower bound")


def statement_own_cost(session: Session, text: str, *, exec_cost_ms: float | None = None,
                       scratch_conninfo: str | None = None) -> OwnCost:
    """A statement's own planning and execution time per call, with their source:

    - ``exec_cost_ms`` given (``--exec-cost``): that execution time, with the planning time of ``EXPLAIN
      (SUMMARY)`` (nothing executed);
    - ``scratch_conninfo`` (a server lockscope started, ``--scratch``): the medians of 20 timed executions
      (``EXPLAIN (ANALYZE)`` in transactions rolled back, :func:`lockscope.db.time_on_scratch`);
    - else pg_stat_statements, when the statement has run on this server (found by the query identifier ``EXPLAIN
      (VERBOSE)`` shows, PG 14+ with compute_query_id): its mean execution time, and its mean planning time with
      track_planning, else EXPLAIN's;
    - else the execution time is unknown, and the source says so (the base statement's cost stands in).

    :param text: the statement with its parameters bound (what EXPLAIN can run).
    :raises StatementError, LockBlockedError, DatabaseError: from the probes.
    """

    if scratch_conninfo is not None and exec_cost_ms is None:
        timed_plan_ms, timed_exec_ms = time_on_scratch(scratch_conninfo, text)
        return OwnCost(timed_plan_ms / 1000.0, timed_exec_ms / 1000.0,
                       f"timed on the scratch server (EXPLAIN ANALYZE, median of 20): {timed_exec_ms:.3f} ms "
                       f"execution, {timed_plan_ms:.3f} ms planning", plan_by_explain=True, exec_by_explain=True)
    options = "SUMMARY, VERBOSE, FORMAT JSON" if session.facts.server_version_num >= PG14 else "SUMMARY, FORMAT JSON"
    access = explain_access(session, check_statement(text))
    if access.source is FootprintSource.DERIVED:  # never an EXPLAIN the server would refuse (and log)
        grants = " ".join(dict.fromkeys(g.grant for g in access.gaps))
        return OwnCost(None, exec_cost_ms / 1000.0 if exec_cost_ms is not None else None,
                       f"planning unknown: this role may not EXPLAIN the statement ({grants}, or the EXPLAIN helper, "
                       f"docs/privileges.md); " + (f"--exec-cost {exec_cost_ms:g} ms execution" if exec_cost_ms
                                                  is not None else _UNKNOWN_EXEC))
    plans: list[ExplainedPlan] = []
    # the first planning fills the session's catalog caches: it is not counted
    with access.explaining(session), session.probe_transaction():
        for _ in range(_EXPLAIN_RUNS):
            plans.append(read_explain(str(session.run_user_text(f"EXPLAIN ({options}) {text}")[0][0])))
    times = [p.planning_time_ms for p in plans if p.planning_time_ms is not None]
    plan_ms = statistics.median(times[1:]) if len(times) > 1 else None
    planning = (f"{plan_ms:.3f} ms planning (EXPLAIN on this server, median of {len(times) - 1})"
                if plan_ms is not None else "planning unknown")
    if exec_cost_ms is not None:
        return OwnCost(None if plan_ms is None else plan_ms / 1000.0, exec_cost_ms / 1000.0,
                       f"--exec-cost {exec_cost_ms:g} ms execution, {planning}", plan_by_explain=True)
    recorded = _recorded_times(session, plans[-1].query_id)
    if recorded is not None and recorded.calls and recorded.mean_exec_ms is not None:
        own = OwnCost(None if plan_ms is None else plan_ms / 1000.0, None, "", plan_by_explain=True,
                      queryid=plans[-1].query_id)
        return own.recorded(recorded, "since its reset", planning)
    return OwnCost(None if plan_ms is None else plan_ms / 1000.0, None, f"{planning}; {_UNKNOWN_EXEC}",
                   plan_by_explain=True, plan_cost=plans[-1].total_cost)


#: Seconds of wait-event samples behind a statement's deflation to CPU in statement mode.
STATEMENT_SAMPLE_S = 2.0


def statement_on_cpu(session: Session, dsn: str, queryid: int, cores: int,
                     seconds: float) -> tuple[OnCpu, LivePoint, StatementTimesRow | None]:
    """The on-CPU factor of one statement's pg_stat_statements times, from ``seconds`` of the present (20 Hz
    samples of ``dsn``'s client backends, pg_stat_kcache over the same seconds when installed):
    :func:`lockscope.forecast.cpu.deflation`, and the statement's pg_stat_statements row over the same seconds.

    :return: the factor; the present's operating point over those seconds (its ``rate_tps``: the statement's
        calls/s by pg_stat_statements' count before and after; its population: the client backends that ran a
        statement in those seconds, :func:`connections_doing_work`; its sampled LockManager share); the
        statement's calls and times in those seconds (:func:`_window_times`; None when pg_stat_statements cannot
        be read).
    :raises DatabaseError, ConnectionFailedError: a catalog read or the sampling connection failed.
    """
    kcache = KcacheWindow()
    kcache.start(session)
    before, since = _recorded_times(session, queryid), server_clock(session)
    with BackgroundSampler(dsn, hz=20.0) as sampler:
        time.sleep(seconds)
    samples = sampler.stop()
    window = _window_times(before, _recorded_times(session, queryid))
    on_kcache = kcache.stop(session)
    calls = window.calls or 0 if window is not None else 0
    live = live_point(samples, max(calls, 0) / seconds, session.facts.database, own_pids=(session.backend_pid,),
                      connections=connections_doing_work(session, since))
    on = deflation(live, samples, session.facts.database, cores, kcache=on_kcache).of(queryid)
    note = f"; {kcache.note}" if kcache.note else ""
    return OnCpu(on.factor, f"{on.source}, over {seconds:g} s of the present{note}"), live, window


def _window_times(before: StatementTimesRow | None, after: StatementTimesRow | None) -> StatementTimesRow | None:
    """A statement's pg_stat_statements row over a window: ``after`` less ``before`` (calls, plannings, total
    times in ms), its means those of the window's own calls and plannings (None without any). None when either
    row could not be read."""
    if before is None or after is None or after.calls is None:
        return None
    calls, plans = after.calls - (before.calls or 0), (after.plans or 0) - (before.plans or 0)
    exec_ms = (after.total_exec_ms or 0.0) - (before.total_exec_ms or 0.0)
    plan_ms = (after.total_plan_ms or 0.0) - (before.total_plan_ms or 0.0)
    return StatementTimesRow(calls, exec_ms / calls if calls > 0 else None,
                             plan_ms / plans if plans > 0 and plan_ms > 0 else None, plans, exec_ms, plan_ms)


#: Calls of the statement in the sampled seconds from which their own pg_stat_statements mean is its cost in
#: statement mode (count); fewer: the mean since pg_stat_statements' reset.
MIN_WINDOW_CALLS = 10
#: Statement mode: the samples' time in the server per call (AAS / calls/s) and pg_stat_statements' mean disagree
#: when one is more than this many times the other (a note says so).
SERVER_TIME_DISAGREES = 2.0


def _window_cost(own: OwnCost, window: StatementTimesRow | None, seconds: float) -> tuple[OwnCost, str]:
    """Statement mode with samples: the statement's cost from pg_stat_statements' means over the sampled seconds
    (``window``, :func:`_window_times`), the seconds of the deflation and the think time; the mean since the reset
    (``own``) when they hold fewer than :data:`MIN_WINDOW_CALLS` calls, the source saying why. The planning time
    is the window's where it has plannings (track_planning), else ``own``'s.

    :return: the cost, and its window in words (for the notes).
    """
    calls = window.calls or 0 if window is not None else 0
    if window is None or calls < MIN_WINDOW_CALLS or window.mean_exec_ms is None:
        return replace(own, source=f"{own.source} (the {seconds:g} s sampled hold {max(calls, 0)} of its calls, "
                                   f"fewer than {MIN_WINDOW_CALLS}: the mean since the reset stands)"), \
            "since its reset"
    planning = "planning unknown" if own.plan_s is None else (
        f"{1000.0 * own.plan_s:.3f} ms planning ("
        f"{'EXPLAIN on this server' if own.plan_by_explain else 'pg_stat_statements since its reset'})")
    return own.recorded(window, f"over the {seconds:g} s sampled (the seconds of the deflation and the think "
                                "time)", planning), "over the same seconds"


def _server_time_note(live: LivePoint | None, wall_s: float | None, window: str) -> list[str]:
    """A note when the two measures of a call's time in the server disagree by more than
    :data:`SERVER_TIME_DISAGREES` either way: the samples' (AAS / calls/s, Little's law; the deflation rests on
    it) and pg_stat_statements' mean wall time
    (``wall_s``: execution + planning, before the deflation; the cost rests on it)."""
    if live is None or live.rate_tps <= 0 or live.aas <= 0 or not wall_s:
        return []
    ratio = live.server_time_s / wall_s
    if 1.0 / SERVER_TIME_DISAGREES <= ratio <= SERVER_TIME_DISAGREES:
        return []
    return [f"the two measures of the time in the server per call disagree (x {ratio:.2f}): the samples give "
            f"{1000.0 * live.server_time_s:.3f} ms ({live.aas:.2f} active sessions / {live.rate_tps:,.0f} "
            f"calls/s), pg_stat_statements {1000.0 * wall_s:.3f} ms of execution and planning ({window}); the cost "
            "is pg_stat_statements', the deflation to CPU the samples': the forecast is less sure (the samples "
            "also count the database's other statements and the "
            "time before and after execution; a sampler misses some short calls)"]


def _statement_anchor(shape: StatementShape, live: LivePoint | None, capacity: CapacityModel, calibration: Calibration,
                      cores: int, think_s: float) -> Anchor | None:
    """The model at the sampled seconds' population against them (statement mode, no re-anchoring: factor 1):
    its :attr:`Anchor.lockmanager_reproduced` is the guard on the LockManager share the report prints. None
    without samples or without a backend seen running."""
    if live is None or live.samples == 0 or live.aas == 0:
        return None
    at = forecast_shapes("now", [shape], capacity, calibration, cores=cores, clients=live.population,
                         think_s=think_s, loaded_clients=live.population).forecast
    return Anchor(at.throughput_tps, live.rate_tps, 1.0, at.throughput_tps, at.lockmanager_share,
                  live.lockmanager_share, live.lockmanager_interval)


def _statement_calibration(shape: StatementShape, live: LivePoint, capacity: CapacityModel,
                           calibration: Calibration, cores: int, in_server_s: float | None) -> PresentCalibration:
    """Statement mode's :func:`present_calibration` at the sampled seconds' population.

    :param in_server_s: pg_stat_statements' mean execution + planning (wall) time of the statement's calls in the
        sampled seconds (s): a call's time in the server is at least that, so where the samples give less (AAS /
        calls/s; a 20 Hz sampler on a busy machine misses short calls), that time is taken instead.
    """
    if live.rate_tps > 0 and in_server_s is not None and live.server_time_s < in_server_s:
        live = replace(live, aas=in_server_s * live.rate_tps)

    def at_present(cal: Calibration, think_s: float) -> Forecast:
        return forecast_shapes("now", [shape], capacity, cal, cores=cores, clients=live.population,
                               think_s=think_s, loaded_clients=live.population).forecast

    return present_calibration(live, calibration, cores, at_present)


def _statement_think(think_s: float | None, live: LivePoint | None, present: PresentCalibration | None,
                     cores: int) -> tuple[float, list[str]]:
    """Statement mode's think time (s) and the note saying where it comes from: ``think_s`` when given; else the
    sampled seconds' (``present``, :func:`present_calibration`: workload mode's think time); else 0 (a probe alone
    has no clients to measure: no note)."""
    if think_s is not None:
        also = f" (the sampled seconds give {present.think_s * 1000:.3f} ms)" if present is not None else ""
        return think_s, [f"think time {think_s * 1000:.3f} ms, as given{also}"] if live is not None else []
    if live is None or present is None:
        return 0.0, []
    if live.rate_tps <= 0:
        return 0.0, ["think time 0: the sampled seconds saw no call of the statement (no load running it: "
                     "nothing to measure the time between calls by)"]
    if live.cores_saturated(cores):
        return 0.0, [f"think time 0 from the sampled seconds: their backends on CPU fill the cores "
                     f"({live.aas_cpu:.2f} sessions for {cores}): the time a call spends outside the active "
                     "state is then the wait for a core, which the model has"]
    if present.round_trip_from_present:
        return 0.0, []  # the round trip's note says it
    return present.think_s, [
        f"think time {present.think_s * 1000:.3f} ms from the sampled seconds, as in workload mode: "
        f"{live.population} connections / {live.rate_tps:,.0f} calls/s = {live.population / live.rate_tps * 1000:.3f}"
        f" ms a call, less {present.think_less}, {present.model_response_s * 1000:.3f} ms"]


def _recorded_times(session: Session, query_id: int | None) -> StatementTimesRow | None:
    """What pg_stat_statements recorded of the statement with this query identifier in this database
    (``sql/forecast_statement_times.sql``); None without an identifier, without pg_stat_statements in this
    database, or when it cannot be read (e.g. not in shared_preload_libraries, no access): the caller's cost then
    comes from elsewhere.

    :raises DatabaseError: the settings cannot be read (``audit_settings.sql``).
    """
    if query_id is None:
        return None
    schema = read_settings(session).pgss_schema
    if schema is None:
        return None
    try:
        return session.query_rows("forecast_statement_times", StatementTimesRow, [query_id],
                                  fill={"schema": session.identifier(schema)})[0]
    except DatabaseError:
        return None


def _check_model(cores: int, clients: int) -> None:
    if cores < 1 or clients < 1:
        raise BadInputError("--cores and --clients must be at least 1")


def forecast_statement(session: Session, sql: str, *, calibration: Calibration, cores: int, clients: int | None,
                       what_if: WhatIf = WhatIf(), params: Sequence[str] = (), param_types: Sequence[str] = (),
                       protocol: str = "simple", plan_cache_mode: PlanCacheMode | None = None,
                       exec_cost_ms: float | None = None, scratch_conninfo: str | None = None,
                       think_s: float | None = None, dsn: str | None = None, sample_s: float = STATEMENT_SAMPLE_S,
                       progress: Callable[[str], None] = lambda _msg: None) -> ForecastReport:
    """Probe one statement (EXPLAIN only) and forecast it, and the what-if beside it.

    :param clients: N, or None for the default (16 on a probe: a statement has no live rate).
    :param protocol: ``simple`` or ``prepared`` (extended is measured as simple).
    :param plan_cache_mode: the mode of the measured prepared executions (default: the server's setting).
    :param exec_cost_ms: the statement's execution time (ms, ``--exec-cost``), else found
        (:func:`statement_own_cost`).
    :param scratch_conninfo: the server is a scratch server lockscope started: the statement may be timed there.
    :param think_s: each client's time between calls outside the server (s); None: the sampled seconds' (with
        ``dsn``, :func:`present_calibration`, as workload mode takes it), else 0. A given value wins; the notes say
        which.
    :param dsn: the same server, for the wait-event sampler: when the statement's cost is pg_stat_statements' mean
        (wall time), it is that mean over ``sample_s`` seconds of samples (:func:`_window_cost`; since the reset
        when they hold too few calls), deflated to CPU by those samples and pg_stat_kcache
        (:func:`statement_on_cpu`), a note saying when the samples' time in the server per call disagrees with
        it (:func:`_server_time_note`); None: the mean since the reset, not deflated, and the source says so.
    :raises BadInputError, StatementError, UnsupportedStatementError, DatabaseError: from the probe or bad input.
    """

    n = clients or 16
    _check_model(cores, n)
    facts = session.facts
    db_oid, _ = database_facts(session)
    drops = resolve_indexes(session, what_if.drop_indexes)
    mode = plan_cache_mode or facts.plan_cache_mode
    shape, own = _probe_statement(session, sql, db_oid, calibration=calibration, params=params,
                                  param_types=param_types, protocol=protocol,
                                  plan_cache_mode=mode if protocol == "prepared" else PlanCacheMode.AUTO,
                                  exec_cost_ms=exec_cost_ms, scratch_conninfo=scratch_conninfo, progress=progress)
    sampled = _sampled_cost(session, dsn, shape, own, cores, sample_s, progress)
    shape, own, live = sampled.shape, sampled.own, sampled.live
    loaded = live.population if live is not None and live.population else None
    present = (_statement_calibration(shape, live, facts.capacity, calibration, cores, sampled.in_server_s)
               if live is not None and loaded else None)
    bounds = present.notes if present is not None else ()
    calibration = present.calibration if present is not None else calibration
    think, think_note = _statement_think(think_s, live, present, cores)
    notes = [f"the statement's own cost: {own.source}", *bounds, *think_note, *sampled.notes]
    waits = other_waits(live)
    if waits is not None:
        notes.append(f"{waits}: the forecast has no term for them, and the sampled seconds' deflation to CPU "
                     "leaves them out of the statement's cost")
    progress("solving the model")
    measured = forecast_shapes("measured", [shape], facts.capacity, calibration, cores=cores, clients=n,
                               think_s=think, loaded_clients=loaded)
    span = _throughput_span(shape, own, facts.capacity, calibration, cores=cores, clients=n, think_s=think)
    after = None
    if what_if.any:
        probe = functools.partial(measure_footprint, session, sql, params=params, param_types=param_types,
                                  protocol="prepared")
        changed = _statement_what_if(session, shape, own, what_if, drops, probe, notes, progress)
        after = forecast_shapes(f"what-if: {what_if.describe()}", [changed], what_if.capacity(facts.capacity),
                                calibration, cores=cores, clients=n, think_s=think, loaded_clients=loaded)
    return ForecastReport(mode="statement", server_version=facts.server_version,
                          server_version_num=facts.server_version_num, database=facts.database,
                          database_oid=db_oid, cores=cores, clients=n,
                          clients_source="--clients" if clients else "default (a probed statement has no live rate)",
                          calibration=calibration, measured=measured, what_if=after,
                          what_if_text=what_if.describe(), notes=tuple(notes), think_s=think,
                          throughput_range_tps=span, live=live,
                          anchor=_statement_anchor(shape, live, facts.capacity, calibration, cores, think))


@dataclass(frozen=True)
class _SampledCost:
    """A probed statement's own cost after the sampled seconds (:func:`_sampled_cost`).

    :ivar shape: the statement's shape with that cost applied.
    :ivar own: the cost (deflated to CPU where sampled).
    :ivar live: the sampled seconds' operating point, None without samples.
    :ivar in_server_s: pg_stat_statements' wall time per call over the samples (s), None without samples.
    :ivar notes: the note when the two measures of the time in the server disagree.
    """

    shape: StatementShape
    own: OwnCost
    live: LivePoint | None
    in_server_s: float | None
    notes: tuple[str, ...]


def _sampled_cost(session: Session, dsn: str | None, shape: StatementShape, own: OwnCost, cores: int,
                  sample_s: float, progress: Callable[[str], None]) -> _SampledCost:
    """Statement mode's cost from pg_stat_statements: its mean over ``sample_s`` seconds of samples of ``dsn``
    (:func:`_window_cost`), deflated to CPU by them (:func:`statement_on_cpu`); not deflated, and said so, without
    ``dsn``; unchanged when the cost is not pg_stat_statements' (no queryid)."""
    if own.queryid is None:
        return _SampledCost(shape, own, None, None, ())
    live, disagree, in_server = None, [], None
    on_cpu = OnCpu(1.0, "not deflated to CPU: no --dsn to sample the wait states of")
    if dsn is not None and sample_s > 0:
        progress(f"sampling wait states for {sample_s:g} s (pg_stat_statements' wall time -> CPU)")
        on_cpu, live, times = statement_on_cpu(session, dsn, own.queryid, cores, sample_s)
        own, window = _window_cost(own, times, sample_s)
        in_server = own.own_s(shape.plans)
        disagree = _server_time_note(live, in_server, window)
    own = own.deflated(on_cpu)
    return _SampledCost(own.apply(shape), own, live, in_server, tuple(disagree))


def _throughput_span(shape: StatementShape, own: OwnCost, capacity: CapacityModel, calibration: Calibration, *,
                     cores: int, clients: int, think_s: float) -> tuple[float, float] | None:
    """The forecast throughput at both ends of an estimated execution time's range (TPS, low first); None when
    the execution time is not estimated."""
    if own.exec_range_s is None:
        return None
    ends = [forecast_shapes("measured", [replace(own, exec_s=e).apply(shape)], capacity, calibration,
                            cores=cores, clients=clients, think_s=think_s).forecast.throughput_tps
            for e in own.exec_range_s]
    return min(ends), max(ends)


def _probe_statement(session: Session, sql: str, db_oid: int, *, calibration: Calibration, params: Sequence[str],
                     param_types: Sequence[str], protocol: str, plan_cache_mode: PlanCacheMode,
                     exec_cost_ms: float | None,
                     scratch_conninfo: str | None, progress: Callable[[str], None]) -> tuple[StatementShape, OwnCost]:
    """The statement's measured shape (its footprint with its own cost applied) and that own cost."""
    progress("probing the statement")
    fp = measure_footprint(session, sql, params=params, param_types=param_types, protocol=protocol,
                           plan_cache_mode=plan_cache_mode)
    shared = _shared_of(session, [lk.relation_oid for e in fp.executions for lk in e.locks])
    progress("the statement's own cost")
    own = statement_own_cost(session, bind_params(check_statement(sql), params, session.literal),
                             exec_cost_ms=exec_cost_ms,
                             scratch_conninfo=scratch_conninfo).steady(calibration).with_exec_floor(calibration)
    return own.apply(shape_from_footprint(fp, db_oid, shared)), own


def _statement_what_if(session: Session, shape: StatementShape, own: OwnCost, what_if: WhatIf,
                       drops: dict[str, int], probe: Callable[..., Footprint], notes: list[str],
                       progress: Callable[[str], None]) -> StatementShape:
    """The probed statement's shape under the what-if: probed again in the what-if's plan_cache_mode (``probe``
    with ``plan_cache_mode=``), the dropped indexes' locks removed, the flags predicted again in order."""
    missing = [name for name, oid in drops.items() if oid not in {lk.relation_oid for lk in shape.locks}]
    if missing:
        notes.append(f"--drop-index {', '.join(missing)}: not locked by this statement (no change)")
    base = shape
    if what_if.plan_cache_mode is not None:
        progress(f"probing the statement in plan_cache_mode {what_if.plan_cache_mode}")
        other = probe(plan_cache_mode=what_if.plan_cache_mode)
        db_oid, _ = database_facts(session)
        shared = _shared_of(session, [lk.relation_oid for e in other.executions for lk in e.locks])
        base = own.apply(shape_from_footprint(other, db_oid, shared))
    model = what_if.capacity(session.facts.capacity)
    return apply_what_if(base, model, frozenset(drops.values()),
                         repredict=bool(drops) or model != session.facts.capacity)


def _shared_of(session: Session, oids: Sequence[int]) -> frozenset[int]:
    return frozenset(oid for oid, (shared, _) in relation_facts(session, oids).items() if shared)


def forecast_workload(
    session: Session,
    *,
    calibration: Calibration,
    cores: int,
    clients: int | None,
    what_if: WhatIf = WhatIf(),
    interval_s: float = 10.0,
    top_n: int = 50,
    dsn: str | None = None,
    progress: Callable[[str], None] = lambda _msg: None,
) -> ForecastReport:
    """Forecast the database's workload from pg_stat_statements (read-only; ``lockscope audit``'s reader), after
    reproducing the operating point measured over the interval (:mod:`lockscope.forecast.live`).

    :param clients: N, or None: the population measured now (the connections that ran statements in the
        interval), else 16.
    :param interval_s: seconds between the two pg_stat_statements snapshots (0 = rates since the reset: no live
        point, no re-anchoring).
    :param top_n: statements kept, the busiest first (count).
    :param dsn: the same server, for the wait-event sampler of the interval (None: no sampling, no live point).
    :raises BadInputError: pg_stat_statements unusable or no statement with a footprint.
    :raises DatabaseError: a catalog query failed.
    """

    facts = session.facts
    db_oid, _ = database_facts(session)
    drops = resolve_indexes(session, what_if.drop_indexes)
    progress("reading pg_stat_statements" + (f" ({interval_s:g} s interval)" if interval_s else ""))
    kcache = KcacheWindow()
    workload, rows, samples, since = _sampled_workload(session, dsn, interval_s, top_n, kcache)
    progress("reading the catalog")
    audits = probe_statements(session, read_catalog(session), rows, progress=progress)
    rate = sum(a.calls_per_s for a in audits if a.weighted_plans()) if interval_s > 0 or workload.since_s else None
    live = live_point(samples, rate or 0.0, facts.database, own_pids=(session.backend_pid,),
                      connections=connections_doing_work(session, since) if since is not None else None) \
        if samples and rate else None
    notes = [*workload.notes, f"{STATEMENTS_ONLY_CAVEAT}: each statement is forecast as its own transaction; give "
                              "the application's transactions with --workload FILE (BEGIN ... COMMIT blocks) to "
                              "forecast them as they hold their locks"]
    on_cpu = deflation(live, samples, facts.database, cores, own_pids=(session.backend_pid,),
                       kcache=kcache.stop(session) if since is not None else None)
    if kcache.note:
        notes.append(kcache.note)
    measured_shapes, whatif_shapes = _workload_shapes(
        session, audits, what_if, frozenset(drops.values()), db_oid, notes, deflate=on_cpu, interval_s=interval_s)
    cover = coverage_of(workload, audits, {int(s.name) for s in measured_shapes})
    progress("solving the model")
    solved = forecast_live(measured_shapes, whatif_shapes if what_if.any else None, live=live, rate_tps=rate,
                           calibration=calibration, cores=cores, clients=clients, capacity=facts.capacity,
                           after_capacity=what_if.capacity(facts.capacity),
                           after_label=f"what-if: {what_if.describe()}", notes=notes)
    return ForecastReport(mode="workload", server_version=facts.server_version,
                          server_version_num=facts.server_version_num, database=facts.database,
                          database_oid=db_oid, cores=cores, clients=solved.clients,
                          clients_source=solved.clients_source, calibration=solved.calibration,
                          measured=solved.measured,
                          what_if=solved.after, what_if_text=what_if.describe(), notes=tuple(notes), live=live,
                          anchor=solved.anchor, think_s=solved.think_s, coverage=cover,
                          model_check=check_model(solved.anchor, live, cover, measured_shapes))


def _sampled_workload(session: Session, dsn: str | None, interval_s: float, top_n: int,
                      kcache: KcacheWindow) -> tuple[Workload, list[StatementRates], list[Sample],
                                                     datetime.datetime | None]:
    """pg_stat_statements over the interval with wait events sampled during it (10 Hz, ``dsn``'s own
    connection) and pg_stat_kcache's first snapshot at its start (``kcache``; the caller takes the second):
    (the workload read, its rows, the samples, the server's clock at the interval's start).

    :raises BadInputError: pg_stat_statements is not usable.
    """

    sampler = BackgroundSampler(dsn, hz=10.0) if dsn is not None and interval_s > 0 else None
    since: list[datetime.datetime] = []

    def start_sampling() -> None:
        since.append(server_clock(session))
        kcache.start(session)
        if sampler is not None:
            sampler.__enter__()

    try:
        workload, rows = read_workload(session, read_settings(session), interval_s=interval_s, top_n=top_n,
                                       during_interval=start_sampling)
    finally:
        samples = sampler.stop() if sampler is not None and since else []
    if not workload.available:
        raise BadInputError("; ".join(workload.notes) or "pg_stat_statements is not available")
    return workload, rows, list(samples), since[0] if since else None


@dataclass(frozen=True)
class LiveForecast:
    """A workload forecast made at its live operating point (:func:`forecast_live`).

    :ivar measured: the measured state, solved at ``clients``.
    :ivar after: the what-if, with the same population, think time and re-anchoring (None: no what-if).
    :ivar clients: N (count).
    :ivar clients_source: where N comes from (for reports).
    :ivar think_s: each connection's time between calls outside the server (s).
    :ivar anchor: the model against the measured point (None: no live point).
    :ivar calibration: the calibration solved with: the given one as far as the present bounds it
        (:func:`present_calibration`).
    """

    measured: ScenarioForecast
    after: ScenarioForecast | None
    clients: int
    clients_source: str
    think_s: float
    anchor: Anchor | None
    calibration: Calibration = DEFAULT_CALIBRATION


def forecast_live(measured_shapes: Sequence[StatementShape], after_shapes: Sequence[StatementShape] | None, *,
                  live: LivePoint | None, rate_tps: float | None, calibration: Calibration, cores: int,
                  clients: int | None, capacity: CapacityModel, after_capacity: CapacityModel, after_label: str,
                  notes: list[str]) -> LiveForecast:
    """Reproduce the live operating point, then forecast (``lockscope forecast`` on a workload and ``lockscope
    diagnose`` alike): the population and think time come from ``live`` (:mod:`lockscope.forecast.live`), the
    model is solved there first and re-anchored by one factor on the statements' own costs when it is more than
    25 % off the measured calls/s (a "model vs now" note is added to ``notes``), and the what-if is solved with
    the same population, think time and factor.

    :param clients: N given by the user, else the live population, else 16.
    :raises BadInputError: no statement, or cores/clients < 1.
    """
    population = live.population if live is not None else None
    n = clients or population or 16
    _check_model(cores, n)
    think = 0.0
    anchor = None
    if live is not None and population:
        def at_present(cal: Calibration, think_s: float) -> Forecast:
            demands = workload_demands([transaction_class(s, 1.0, population) for s in measured_shapes], cal)
            return forecast_curve(demands, cores, [population], think_s=think_s)[0]

        present = present_calibration(live, calibration, cores, at_present)
        calibration, think = present.calibration, present.think_s
        notes.extend(present.notes)

        def solve(factor: float) -> Forecast:
            demands = workload_demands([transaction_class(s, factor, population) for s in measured_shapes],
                                       calibration)
            return forecast_curve(demands, cores, [population], think_s=think)[0]

        anchor = anchor_costs(solve, live.rate_tps, live.lockmanager_share, live.lockmanager_interval)
        notes.append(_anchor_note(anchor, live, think))
    factor = anchor.factor if anchor is not None else 1.0
    measured = forecast_shapes("measured", measured_shapes, capacity, calibration, cores=cores, clients=n,
                               rate_tps=rate_tps, think_s=think, own_factor=factor, loaded_clients=population)
    after = forecast_shapes(after_label, after_shapes, after_capacity, calibration, cores=cores, clients=n,
                            rate_tps=rate_tps, think_s=think, own_factor=factor,
                            loaded_clients=population) if after_shapes else None
    source = "--clients" if clients else (live.population_source if live is not None else
                                          "default (no live operating point: no samples or no calls)")
    return LiveForecast(measured, after, n, source, think, anchor, calibration)


@dataclass(frozen=True)
class PresentCalibration:
    """The calibration as far as the present bounds it (:func:`present_calibration`).

    :ivar calibration: the calibration to solve with: the given one, or a copy scaled to the cores' bound and/or
        with the idle round trip the measured calls leave room for (its ``source`` says so).
    :ivar think_s: each connection's think time at the present (s, >= 0): :func:`_present_think` with that
        calibration, 0 when the round trip was taken from the present (the whole time between calls beyond the
        model's CPU is then round trip).
    :ivar notes: one line for the report per bound applied (empty: the calibration as given).
    :ivar round_trip_from_present: the idle round trip is the present's (the think time is then 0).
    :ivar model_response_s: what Little's law took off the measured cycle for the think time (s): the model's
        response at the live population with think time 0 up to the cores, the sampled time in the server beyond.
    :ivar think_less: what ``model_response_s`` is, in words.
    """

    calibration: Calibration
    think_s: float
    notes: tuple[str, ...] = ()
    round_trip_from_present: bool = False
    model_response_s: float = 0.0
    think_less: str = ""


#: Calibration scale factors tried by the cores' bound: a machine at most this much faster than the calibration's.
FASTEST_SCALE = 1e-2


def present_calibration(live: LivePoint, calibration: Calibration, cores: int,
                        solve: Callable[[Calibration, float], Forecast]) -> PresentCalibration:
    """The calibration's machine figures, bounded by what the present proves of this machine.

    The statements' own costs are this server's (pg_stat_statements over the sampled seconds); the rest of a
    transaction's CPU (protocol, parse, commit, a local client's), the idle round trip and the LWLock costs are the
    calibration's, measured by ``lab ceiling`` on another machine unless given. Two bounds of the present hold
    whatever the machine (2026-12-06, a VM faster than the built-in calibration's: 10,051 calls/s forecast
    against 30,126 measured at one client, 61,549 against 101,327 at two; BENCHMARKS.md "Forecast on unseen
    applications, on another machine"):

    - **the cores**: the measured calls/s cannot exceed the model's CPU ceiling C / D(N) at the live population
      (``Forecast.cpu_ceiling_tps``). Where it does, the machine (or a client that runs elsewhere) is faster than
      the calibration's by a factor the ceiling alone does not tell: every time figure of the calibration is
      scaled (:meth:`Calibration.scaled`, the largest factor in [:data:`FASTEST_SCALE`, 1], bisection) until the
      model at the live population, with the think time the scaled calibration leaves, does the measured
      calls/s. Only this proof triggers it; a model slower than the present below its ceiling is left as it is
      (and says so: :mod:`lockscope.forecast.honesty`);
    - **the time between calls**: below the cores a call costs the model its CPU, the idle round trip
      (:func:`idle_round_trip_s`, fading as the clients fill the cores) and the think time, whose sum Little's law
      measures as population / calls/s (:func:`_present_think` takes the think time as what is left beyond the
      model's response). Where the model's response alone is longer than the measured cycle, the think time is
      0 and the model, still charging the whole round trip, is too slow: the round trip is then what the measured
      time per call leaves beyond the model's response at the present with no round trip and no think time,
      scaled back to a lone client's figure by the same fade.

    Both only ever lower the calibration's figures, never raise them.

    :param solve: the model at the live population with the given calibration and think time (s; the statements'
        own costs as measured, factor 1).
    :return: the calibration and think time to solve with, with a note per bound applied.
    """
    notes: list[str] = []
    at = solve(calibration, 0.0)
    if live.rate_tps > at.cpu_ceiling_tps > 0:
        lo, hi = FASTEST_SCALE, 1.0  # the throughput (and the ceiling above it) rises as the factor falls
        for _ in range(40):
            mid = (lo + hi) / 2
            scaled = calibration.scaled(mid)
            if solve(scaled, _present_think(live, scaled, cores, solve)[0]).throughput_tps >= live.rate_tps:
                lo = mid
            else:
                hi = mid
        source = f"{calibration.source}; scaled x {lo:.3g} to the cores' bound of the present"
        notes.append(
            f"calibration scaled x {lo:.3g} to the present: {live.rate_tps:,.0f} calls/s measured exceed what its "
            f"CPU per transaction ({at.cpu_per_transaction_us:.1f} µs) allows on {cores} cores "
            f"({at.cpu_ceiling_tps:,.0f}); this machine is faster than the calibration's ({calibration.source}), "
            "or the clients run elsewhere (lockscope lab ceiling measures a machine like this one)")
        calibration = calibration.scaled(lo, source=source)
    think, response, how = _present_think(live, calibration, cores, solve)
    unit = idle_round_trip_s(replace(calibration, idle_round_trip_s=1.0), live.population, cores)
    trip = calibration.idle_round_trip_s * unit
    if think > 0 or trip <= 0 or live.rate_tps <= 0 or live.cores_saturated(cores):
        return PresentCalibration(calibration, think, tuple(notes), model_response_s=response, think_less=how)
    per_call = live.population / live.rate_tps
    without = solve(replace(calibration, idle_round_trip_s=0.0), 0.0).throughput_tps
    left = max(0.0, per_call - live.population / without) if without > 0 else 0.0
    if left >= trip:
        return PresentCalibration(calibration, think, tuple(notes), model_response_s=response, think_less=how)
    lone = left / unit
    notes.append(
        f"idle round trip from the present: the calibration's {trip * 1e6:.1f} µs per call at {live.population} "
        f"connections is more than the measured time between calls leaves beyond the model's CPU "
        f"({live.population} / {live.rate_tps:,.0f} calls/s = {per_call * 1e6:.1f} µs, the model's response "
        f"without a round trip {live.population / without * 1e6:.1f} µs): the model takes {left * 1e6:.1f} µs "
        f"({lone * 1e6:.1f} µs for a lone client) and think time 0 (this machine or network wakes faster than the "
        "calibration's)")
    adjusted = replace(calibration, idle_round_trip_s=lone,
                       source=f"{calibration.source}; idle round trip {lone * 1e6:.1f} µs from the present")
    return PresentCalibration(adjusted, 0.0, tuple(notes), round_trip_from_present=True,
                              model_response_s=live.population / without if without > 0 else response,
                              think_less=how)


def _present_think(live: LivePoint, calibration: Calibration, cores: int,
                   solve: Callable[[Calibration, float], Forecast]) -> tuple[float, float, str]:
    """Each connection's think time at the present, what Little's law took off the measured cycle for it, and
    what that is in words (s, s, text); population = calls/s x (response + think) for the closed loop.

    - Up to the cores (each backend can have a core: the model has no queue for them) the response is the model's
      own at the live population with think time 0 (its CPU, the idle round trip), so that what the model charges
      a call is not counted again as think time: the rest of a transaction's CPU, a local client's included,
      happens outside the server's active state (2026-12-06, pgbench -S at 2 clients on 2 cores: 17.5 µs a call
      outside it by the samples, 13.6 µs of which the model's CPU already held; the forecast was 0.75 of the TPS).
      Where the sampled time in the server is longer than that response, it is taken instead: the model then
      lacks time the server spent (a statement not in the model, a cost too low), and a think time that absorbed
      it would make the first estimate reproduce the present whatever the model misses (no silent re-anchoring).
    - Beyond the cores the response is the sampled time in the server (AAS / calls/s, the run queue included;
      :meth:`LivePoint.think_s`): the model's own queue for the cores is an estimate, and a residual against it
      made short statements' forecasts 1.3-1.8x high at 4-32 clients in the same run.

    0 when the backends sampled on CPU fill the cores (at least :data:`lockscope.forecast.live.SATURATED` of them:
    the time outside the active state is then the wait for a core, which the model has) or the response alone is
    longer than the measured cycle."""
    if live.population > cores:
        return live.think_s(cores), live.server_time_s, "the sampled time in the server"
    x0 = solve(calibration, 0.0).throughput_tps
    response = live.population / x0 if x0 > 0 else math.inf
    how = "the model's own response at that population (its CPU and idle round trip)"
    if live.rate_tps > 0 and live.server_time_s > response:
        response, how = live.server_time_s, "the sampled time in the server (more than the model's own response)"
    if live.rate_tps <= 0 or live.cores_saturated(cores):
        return 0.0, response, how
    return max(0.0, live.population / live.rate_tps - response), response, how


def _anchor_note(anchor: Anchor, live: LivePoint, think_s: float) -> str:
    head = (f"model vs now: {anchor.model_tps:,.0f} calls/s forecast at the measured {live.population} connections "
            f"(think time {think_s * 1000:.2f} ms) against {anchor.measured_tps:,.0f} measured "
            f"({100 * anchor.off:+.0f} %)")
    if anchor.reanchored:
        return (head + f": beyond {100 * ANCHOR_TOLERANCE:.0f} %, every statement's own cost was multiplied by "
                f"{anchor.factor:.3g} so that the model reproduces it ({anchor.anchored_tps:,.0f}) before any what-if")
    return head + ": within tolerance, costs as measured"


def workload_own_cost(audit: StatementAudit, on_cpu: OnCpu = WALL_TIME) -> OwnCost:
    """A workload statement's own cost from pg_stat_statements over the interval: mean execution and planning
    time, times ``on_cpu`` (:func:`lockscope.forecast.cpu.deflation`: wall time in the backend under the load of
    the moment -> CPU)."""
    if audit.mean_exec_ms is None:
        return OwnCost(None, None, "unknown (no pg_stat_statements times): the base statement's cost stands in")
    deflate = on_cpu.factor
    plan = None if audit.mean_plan_ms is None else audit.mean_plan_ms * deflate / 1000.0
    source = (f"pg_stat_statements over the interval: {audit.mean_exec_ms:.3f} ms execution"
              + (f", {audit.mean_plan_ms:.3f} ms planning" if audit.mean_plan_ms is not None else
                 ", planning not recorded (track_planning off)")
              + (f", x {deflate:.2f} to CPU ({on_cpu.source})" if deflate != 1.0 else ""))
    return OwnCost(plan, audit.mean_exec_ms * deflate / 1000.0, source, under_load=True)


def _workload_shapes(session: Session, audits: Sequence[StatementAudit], what_if: WhatIf, drops: frozenset[int],
                     db_oid: int, notes: list[str], *, deflate: Deflation,
                     interval_s: float) -> tuple[list[StatementShape], list[StatementShape]]:
    """The measured state's shapes (one per plan of the phase split, each with its own cost) and the what-if's."""
    oids = [o for a in audits for p in (a.custom, a.generic, a.generic_reuse) if p is not None
            for o in p.relation_oids]
    relations = relation_facts(session, oids)
    model = session.facts.capacity
    after_model = what_if.capacity(model)
    measured: list[StatementShape] = []
    changed: list[StatementShape] = []
    skipped = 0
    for a in audits:
        weight = a.calls_per_s if interval_s > 0 or a.calls_per_s > 0 else float(a.calls)
        plans = a.weighted_plans()
        if not plans or weight <= 0:
            skipped += 1
            continue
        if a.standins_note:
            notes.append(f"query {a.queryid}: {a.standins_note}")
        own = workload_own_cost(a, deflate.of(a.queryid))
        shapes = [own.apply(shape_from_plan(a, plan, model, db_oid, relations, calls=weight * share, share=share))
                  for plan, share in plans]  # the phase split (workload/phases.py): planned calls and reuses
        for shape in shapes:
            if shape.measured_main_table_locks is not None and \
                    shape.measured_main_table_locks != len(shape.main_table_locks):
                notes.append(f"query {a.queryid}: {shape.measured_main_table_locks} main-table locks measured, "
                             f"{len(shape.main_table_locks)} predicted (another session's strong lock?); the model "
                             "uses the predicted set")
        measured.extend(shapes)
        if a.basis == "unknown":
            notes.append(f"query {a.queryid}: the plan-cache phase of its calls is unknown (no track_planning, no "
                         "pg_locks snapshot): forecast with every call taking the plan that spills more")
        if what_if.any:
            forced = {"force_generic_plan": a.generic_reuse, "force_custom_plan": a.custom}.get(
                what_if.plan_cache_mode or "")
            bases = ([own.apply(shape_from_plan(a, forced, model, db_oid, relations, calls=weight))]
                     if forced is not None else shapes)
            changed.extend(apply_what_if(b, after_model, drops) for b in bases)
    if skipped:
        notes.append(f"{skipped} statements without a measured footprint or calls in the interval left out")
    if not measured:
        raise BadInputError("no statement in pg_stat_statements with calls and a measured footprint to forecast")
    unknown = sum(1 for s in measured if s.own_s is None)
    if unknown:
        notes.append(f"{unknown} statement plans without their own times: the base statement's cost stands in")
    return measured, changed


def saturation_rate(scenario: ScenarioForecast) -> float:
    """Rate (transactions/s) at which the hottest partition LWLock would be held all the time, 1 / max_p a_p h
    (``inf``: none used); the same as ``Forecast.hottest_partition_saturation_tps``. Sleepers convoy on a
    partition long before: the LockManager share of the forecast says when."""
    top = max(scenario.demands.partition_s)
    return 1.0 / top if top > 0 else math.inf
