"""The live operating point: what the server does now, which the model must reproduce before it extrapolates.

A forecast of a live workload starts from what was measured over the interval (pg_stat_statements snapshots and
wait-event samples of the same seconds):

- **calls/s** of the audited statements (pg_stat_statements deltas);
- **the population**: the connections doing work, i.e. the client backends of the database seen running a
  statement during the interval (distinct pids over the samples) — in a closed loop the population is the clients,
  not the few caught active at one instant;
- **average active sessions** and their split by wait state (CPU = not waiting, LockManager, the rest);
- **think time**: each connection's time between calls outside the server, from Little's law: population = calls/s
  x (response + think time), the response the model's own at that population
  (:func:`lockscope.forecast.engine.present_calibration`; :meth:`LivePoint.think_s` is the older reading, with the
  sampled server time AAS / calls/s as the response).

:func:`anchor_costs` then solves the model at that population and think time with the statements' own costs
(pg_stat_statements times, deflated to CPU by the sampled CPU share and the run queue); when the model's calls/s is
more than 25 % off the measured, every statement's own cost is multiplied by one factor (bisection) until the model
reproduces it — the only re-anchoring, reported with the "model vs now" row.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..watch.aas import CPU, ShareInterval, sampled_error, share_interval
from ..watch.engine import WatchSummary
from ..watch.sampler import ActiveSession, Sample
from .model import Forecast

__all__ = ["ANCHOR_TOLERANCE", "LOCKMANAGER_TOLERANCE", "SATURATED", "Anchor", "LivePoint", "anchor_costs",
           "counts_toward", "live_from_watch", "live_point", "sampled_on_cpu"]

#: The model must reproduce the measured calls/s within this fraction, else its costs are re-anchored.
ANCHOR_TOLERANCE = 0.25
#: The model's LockManager share at the operating point must be within this of the sampled one (fraction, 10 pp)
#: for its LockManager shares to be printed as a forecast (issue 27).
LOCKMANAGER_TOLERANCE = 0.10
#: Sampled backends on CPU per core from which the cores count as saturated (no think time is inferred).
SATURATED = 0.9
_LOCK_MANAGER = "LWLock:LockManager"


@dataclass(frozen=True)
class LivePoint:
    """The measured operating point.

    :ivar rate_tps: calls/s of the audited statements over the interval.
    :ivar population: connections doing work (count): client backends of the database seen active in the interval.
    :ivar population_source: how ``population`` was found (for reports).
    :ivar aas: average active sessions of the database's client backends (sessions).
    :ivar aas_cpu: of which on CPU, not waiting (sessions).
    :ivar lockmanager_share: active-session samples waiting on LWLock:LockManager (fraction 0..1).
    :ivar samples: wait-event samples behind the figures (count; 0 = none taken).
    :ivar lockmanager_interval: the sampled LockManager share's 95 % confidence interval (batch means over the
        seconds sampled, :func:`lockscope.watch.aas.share_interval`); None when too few batches saw an active
        session.
    """

    rate_tps: float
    population: int
    population_source: str
    aas: float
    aas_cpu: float
    lockmanager_share: float
    samples: int
    lockmanager_interval: ShareInterval | None = None

    @property
    def server_time_s(self) -> float:
        """Mean time a call spends in the server (s): AAS / calls/s (Little's law)."""
        return self.aas / self.rate_tps if self.rate_tps > 0 else 0.0

    def cores_saturated(self, cores: int) -> bool:
        """True when the backends sampled on CPU fill the cores (at least :data:`SATURATED` per core): no think
        time is inferred then (:meth:`think_s`)."""
        return self.aas_cpu >= SATURATED * cores

    def think_s(self, cores: int, round_trip_s: float = 0.0) -> float:
        """Each connection's time between calls outside the server (s, >= 0): population / calls/s - server
        time (Little's law for the closed loop), minus ``round_trip_s``, what the model itself charges each call
        for waking idle cores at this population (:func:`lockscope.forecast.model.idle_round_trip_s`; that time is
        inside the measured gap, and would otherwise count twice). 0 when the sampled backends on CPU fill the
        cores (at least :data:`SATURATED` of them): a call's time that the sampler does not see as active is then
        the wait for a core before the backend reads the query, which the model has, not the client's think time."""
        if self.rate_tps <= 0 or self.cores_saturated(cores):
            return 0.0
        return max(0.0, self.population / self.rate_tps - self.server_time_s - round_trip_s)

    def cpu_deflation(self, cores: int) -> float:
        """The factor (0..1] that turns a statement's wall time in the server (pg_stat_statements, under the load
        of the moment) into its CPU: the CPU share of the active time, times the cores over the sessions sampled
        on CPU when these are more (:func:`sampled_on_cpu`; per statement: :mod:`lockscope.forecast.cpu`)."""
        return sampled_on_cpu(self.aas_cpu, self.aas, self.aas_cpu, cores)


def sampled_on_cpu(cpu_samples: float, active_samples: float, aas_cpu: float, cores: int) -> float:
    """The sampled on-CPU factor (0..1]: the share of active samples without a wait event, ``cpu_samples /
    active_samples``, times ``min(1, cores / aas_cpu)`` (backends sampled on CPU beyond the cores are in the run
    queue). 1.0 without active samples; at least 1e-3.

    :param aas_cpu: average active sessions without a wait event, all statements (sessions).
    :param cores: cores of the server (>= 1).
    """
    if active_samples <= 0:
        return 1.0
    share = cpu_samples / active_samples
    return max(1e-3, min(1.0, share * min(1.0, cores / aas_cpu) if aas_cpu > 0 else share))


def counts_toward(session: ActiveSession, database: str, own_pids: Sequence[int] = ()) -> bool:
    """True for a client backend of ``database`` that is not lockscope's (``own_pids``, application_name
    ``lockscope``): the sessions whose samples make the operating point."""
    return (session.backend_type in (None, "client backend") and session.datname == database
            and session.pid not in own_pids and session.application_name != "lockscope")


def live_point(samples: Sequence[Sample], rate_tps: float, database: str, *, own_pids: Sequence[int] = (),
               connections: int | None = None) -> LivePoint:
    """The operating point from wait-event samples of the interval (client backends of ``database`` only).

    :param own_pids: lockscope's own backends, left out.
    :param connections: the database's client backends that ran statements in the interval, counted by the server
        (:func:`lockscope.forecast.engine.connections_doing_work`): the population when given (> 0); else the
        distinct backends the samples caught, which misses some when calls are short.
    """
    pids: set[int] = set()
    active = cpu = lm = 0
    batches: dict[int, list[int]] = {}
    batch_s = _batch_s(samples)
    for sample in samples:
        batch = batches.setdefault(int(sample.wall_s / batch_s), [0, 0])
        for s in sample.sessions:
            if not counts_toward(s, database, own_pids):
                continue
            pids.add(s.pid)
            active += 1
            cpu += s.wait == CPU
            lm += s.wait == _LOCK_MANAGER
            batch[0] += 1
            batch[1] += s.wait == _LOCK_MANAGER
    n = len(samples)
    if connections:
        population, source = max(connections, len(pids)), _COUNTED
    elif pids:
        population, source = len(pids), f"client backends seen running statements in {n} samples"
    else:
        population, source = 1, "no backend seen active: 1"
    return LivePoint(rate_tps, population, source, active / n if n else 0.0, cpu / n if n else 0.0,
                     lm / active if active else 0.0, n,
                     share_interval([(a, w) for a, w in batches.values()]))


def _batch_s(samples: Sequence[Sample]) -> float:
    """The batch length of a sampled share's interval (s): one second, half a second when the samples span less
    than 4 s (statement mode's 2 s still give 4 batches)."""
    span = samples[-1].wall_s - samples[0].wall_s if samples else 0.0
    return 1.0 if span >= 4.0 else 0.5


_COUNTED = "client backends that ran statements in the interval (pg_stat_activity.state_change)"


def live_from_watch(summary: WatchSummary, rate_tps: float, database: str,
                    connections: int | None = None) -> LivePoint | None:
    """The operating point from a finished watch of the same interval (``lockscope diagnose``): the population is
    ``connections`` (counted by the server) or the client backends of ``database`` the watch saw running
    statements, whichever is larger; AAS, CPU and the LockManager share are the watch's (every database it
    sampled). None when the watch took no sample or no backend of the database ran.
    """
    seen = summary.backends_seen.get(database, 0)
    population = max(connections or 0, seen)
    if summary.ticks == 0 or population == 0:
        return None
    source = _COUNTED if connections else f"client backends seen running statements in {summary.ticks} samples"
    return LivePoint(rate_tps, population, source,
                     summary.aas, summary.by_wait.get(CPU, 0) / summary.ticks, summary.lockmanager_share,
                     summary.ticks, summary.lockmanager_interval)


@dataclass(frozen=True)
class Anchor:
    """The model against the measured operating point.

    :ivar model_tps: the model's calls/s at the measured population with the first-estimate costs.
    :ivar measured_tps: the measured calls/s.
    :ivar factor: the factor the statements' own costs were multiplied by (1 = not re-anchored).
    :ivar anchored_tps: the model's calls/s after re-anchoring (= ``model_tps`` when the factor is 1).
    :ivar model_lockmanager_share: the model's LockManager share at the operating point (after re-anchoring).
    :ivar measured_lockmanager_share: the sampled one.
    :ivar measured_lockmanager_interval: the sampled share's 95 % confidence interval (:class:`LivePoint`), None
        when unknown.
    """

    model_tps: float
    measured_tps: float
    factor: float
    anchored_tps: float
    model_lockmanager_share: float
    measured_lockmanager_share: float
    measured_lockmanager_interval: ShareInterval | None = None

    @property
    def off(self) -> float:
        """Model / measured - 1 before re-anchoring (fraction; 0.3 = 30 % high)."""
        return self.model_tps / self.measured_tps - 1.0 if self.measured_tps > 0 else 0.0

    @property
    def lockmanager_reproduced(self) -> bool:
        """True when the model's LockManager share at the operating point is within :data:`LOCKMANAGER_TOLERANCE`
        of the sampled one: only then are the model's LockManager shares (now, after a what-if) a forecast.
        On a machine with fewer cores than runnable tasks the sampled share is mostly sleeps that last until a
        preempted holder of the partition LWLock runs again (BENCHMARKS.md, "what a sampled LWLock:LockManager
        is"); the model has them only as far as its own run queue of backends preempts holders
        (:func:`lockscope.forecast.model.convoy_lockmanager_s`), not the other tasks on the cores, and the sampled
        share of the same load moves by tens of points between runs. False also when the sampled share is itself
        known to no better than :data:`LOCKMANAGER_TOLERANCE` (its 95 % interval's half width,
        :attr:`sampled_too_uncertain`): such a sample cannot show the model within 10 points."""
        return self.lockmanager_within and not self.sampled_too_uncertain

    @property
    def lockmanager_within(self) -> bool:
        """True when the model's LockManager share at the operating point is within :data:`LOCKMANAGER_TOLERANCE`
        of the sampled one, whatever the sample's own uncertainty."""
        return abs(self.model_lockmanager_share - self.measured_lockmanager_share) <= LOCKMANAGER_TOLERANCE

    @property
    def sampled_too_uncertain(self) -> bool:
        """True when the sampled LockManager share's 95 % interval is wider than +-:data:`LOCKMANAGER_TOLERANCE`
        (too few seconds sampled for how bursty the waits are)."""
        interval = self.measured_lockmanager_interval
        return interval is not None and interval.half_width > LOCKMANAGER_TOLERANCE

    def lockmanager_refusal(self) -> str:
        """Why the LockManager share is not forecast, in words (for reports; meaningful when not reproduced)."""
        error = sampled_error(self.measured_lockmanager_interval)
        sampled = f"{100 * self.measured_lockmanager_share:.0f}% sampled now{error}"
        model = f"the model gives {100 * self.model_lockmanager_share:.0f}% at the same operating point"
        if not self.lockmanager_within:
            return (f"LockManager share not forecast: {sampled}, {model} and cannot reproduce it (more than "
                    f"{100 * LOCKMANAGER_TOLERANCE:.0f} points apart)")
        return (f"LockManager share not forecast: {sampled}, {model}, but the sample is too short to show it within "
                f"{100 * LOCKMANAGER_TOLERANCE:.0f} points: sample longer")

    @property
    def reanchored(self) -> bool:
        """True when the first estimate was more than :data:`ANCHOR_TOLERANCE` off and the costs were scaled."""
        return self.factor != 1.0


def anchor_costs(solve: Callable[[float], Forecast], measured_tps: float,
                 measured_lockmanager_share: float,
                 measured_lockmanager_interval: ShareInterval | None = None) -> Anchor:
    """Compare the model with the measured calls/s and find the one factor on the statements' own costs that
    reproduces it when the first estimate is more than :data:`ANCHOR_TOLERANCE` off.

    :param solve: the model at the operating point with every statement's own cost multiplied by the argument.
    :param measured_tps: the measured calls/s (> 0 to anchor).
    :param measured_lockmanager_share: the sampled LockManager share (fraction), and
        ``measured_lockmanager_interval`` its 95 % interval (None: unknown).
    :return: the :class:`Anchor`; the factor stays 1 within tolerance, or when no factor in 1e-3..1e3 reaches the
        measured rate (the model then says how far it is).
    """
    first = solve(1.0)
    if measured_tps <= 0 or abs(first.throughput_tps / measured_tps - 1.0) <= ANCHOR_TOLERANCE:
        return Anchor(first.throughput_tps, measured_tps, 1.0, first.throughput_tps, first.lockmanager_share,
                      measured_lockmanager_share, measured_lockmanager_interval)
    lo, hi = math.log(1e-3), math.log(1e3)  # throughput falls as the own costs grow
    if solve(math.exp(lo)).throughput_tps < measured_tps or solve(math.exp(hi)).throughput_tps > measured_tps:
        return Anchor(first.throughput_tps, measured_tps, 1.0, first.throughput_tps, first.lockmanager_share,
                      measured_lockmanager_share, measured_lockmanager_interval)
    for _ in range(50):
        mid = (lo + hi) / 2
        if solve(math.exp(mid)).throughput_tps > measured_tps:
            lo = mid
        else:
            hi = mid
    factor = math.exp((lo + hi) / 2)
    at = solve(factor)
    return Anchor(first.throughput_tps, measured_tps, factor, at.throughput_tps, at.lockmanager_share,
                  measured_lockmanager_share, measured_lockmanager_interval)
