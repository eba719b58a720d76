"""Throughput forecast for relation-lock traffic: exact mean-value analysis of a closed queueing network (pure).

The network (docs/forecast.md gives the assumptions and where they fail):

- ``N`` clients, think time 0 (each client submits its next transaction as soon as the last one returns, as pgbench
  does), one transaction class after aggregation (below).
- One CPU centre with ``C`` cores, a multi-server station. Exact MVA has no closed form for multi-server
  stations; we use **Seidmann's approximation** (Seidmann, Schweitzer and Shalev-Oren, "Computerized closed
  queueing network models of flexible manufacturing systems", Large Scale Systems 12, 1987; also Menascé and
  Almeida, "Capacity Planning for Web Services", 2002, ch. 9): a C-server station of demand D is replaced by a
  single-server queueing station of demand D / C in series with a pure delay of demand D (C - 1) / C. It is
  exact for C = 1 and as N -> infinity (throughput -> C / D), and under-estimates throughput in between (C = 2,
  D = 2 s, N = 2: 0.8 TPS instead of the exact 1.0).
- 16 lock-partition LWLock centres (lwlock.h ``NUM_LOCK_PARTITIONS``), single-server FCFS queueing stations. Time
  spent queueing at one is what pg_stat_activity shows as ``LWLock:LockManager``; time holding one is on-CPU
  work (no wait event). Two consequences (``Demands.holds_on_cpu``, set for every calibrated demand):

  - *simultaneous resource possession*: the hold is part of the CPU demand, so a backend's response time counts
    only its wait at a partition, not its own hold (a lone client never waits);
  - *processor sharing*: with more runnable backends than cores, a holder gets ``C / runnable`` of a core, so
    its hold lasts ``max(1, runnable / C)`` times its CPU time (:func:`hold_stretch`; ``runnable`` = the
    customers at the CPU centre at the previous population). Every backend needing that partition waits the
    longer hold: this is why a spilled workload's LockManager share climbs with clients beyond the cores even
    when its locks are spread over all 16 partitions.

Demands per transaction (:func:`class_demands`, from a :class:`~lockscope.forecast.calibration.Calibration`):

- CPU: ``base + fastpath_lock_cpu_s x (all relation locks) + planned_relation_cpu_s x (relations planned
  beyond the base two) + main_table_lock_extra_cpu_s x (main-table locks)``, where base is ``base_cpu_s`` for a
  planned statement and ``generic_base_cpu_s`` for a reused cached generic plan.
- partition p: ``(n_p + [n_p > 0]) x lwlock_hold_s``: one exclusive acquisition per main-table lock in p (lock.c
  ``LockAcquireExtended``) and one at transaction end if the backend holds any (lock.c ``LockReleaseAll``), see
  :func:`lockscope.lockpart.transaction_traffic`. Fast-path locks touch no partition LWLock.

Several transaction classes (statements with their call counts, e.g. from pg_stat_statements) are aggregated
into one class whose demand at each centre is the calls-weighted mean of the classes' demands
(:func:`workload_demands`); throughput is then transactions of the mix per second. This is exact for the
utilisation laws and the asymptotic bounds, an approximation for response times at finite N (a multi-class MVA
would keep the classes apart).

Algorithm (single-class MVA, Reiser and Lavenberg 1980): for n = 1..N,
``R_k(n) = D_k (1 + Q_k(n - 1))`` at queueing centres, ``R_k = D_k`` at the delay, ``X(n) = n / sum_k R_k(n)``,
``Q_k(n) = X(n) R_k(n)``; with holds on the CPU a partition contributes ``W_p(n) = D_p(n) Q_p(n - 1)`` to the
response time and ``Q_p(n) = X(n) (W_p(n) + D_p(n))`` (an approximation: exact MVA has no possession or
load-dependent holds). Cost O(N x 17).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from lockscope.forecast.calibration import Calibration
from lockscope.lockpart import NUM_LOCK_PARTITIONS, transaction_traffic

__all__ = [
    "CPU",
    "Demands",
    "Forecast",
    "TransactionClass",
    "ceiling_tps",
    "class_demands",
    "contention_ramp",
    "forecast",
    "forecast_curve",
    "hold_stretch",
    "partition_name",
    "workload_demands",
]

#: Name of the CPU centre in :attr:`Forecast.binding_resource`.
CPU = "cpu"


def partition_name(partition: int) -> str:
    """Name of a lock-partition centre, e.g. ``partition 5`` (0..15)."""
    return f"partition {partition}"


@dataclass(frozen=True)
class TransactionClass:
    """One transaction class: a statement run as its own transaction, with its relation locks.

    :ivar name: label (e.g. the statement's query id or text).
    :ivar fast_path_locks: relation locks taken through the fast path per transaction (count >= 0).
    :ivar partition_load: main-table relation locks per lock partition (16 counts >= 0;
        :func:`lockscope.lockpart.partition_load`).
    :ivar calls: weight of the class in a workload (calls, > 0; e.g. pg_stat_statements ``calls``).
    :ivar planned_relations: relations the planner opens beyond the base statement's two (count >= 0; 0 when the
        statement is not planned, i.e. a cached generic plan is reused).
    :ivar plans: False when the transaction reuses a cached generic plan (base CPU
        :attr:`Calibration.generic_base_s` instead of ``base_cpu_s``).
    :raises ValueError: a negative count, not 16 partition counts, or calls <= 0.
    """

    name: str
    fast_path_locks: int
    partition_load: tuple[int, ...]
    calls: float = 1.0
    planned_relations: int = 0
    plans: bool = True

    def __post_init__(self) -> None:
        if self.fast_path_locks < 0:
            raise ValueError(f"{self.name}: fast_path_locks must be >= 0, got {self.fast_path_locks}")
        if len(self.partition_load) != NUM_LOCK_PARTITIONS or min(self.partition_load) < 0:
            raise ValueError(f"{self.name}: partition_load must be {NUM_LOCK_PARTITIONS} counts >= 0")
        if not self.calls > 0 or not math.isfinite(self.calls):
            raise ValueError(f"{self.name}: calls must be > 0, got {self.calls}")
        if self.planned_relations < 0:
            raise ValueError(f"{self.name}: planned_relations must be >= 0, got {self.planned_relations}")

    @property
    def main_table_locks(self) -> int:
        """Main-table relation locks per transaction (count)."""
        return sum(self.partition_load)

    @property
    def locks(self) -> int:
        """All relation locks per transaction (count)."""
        return self.fast_path_locks + self.main_table_locks


@dataclass(frozen=True)
class Demands:
    """Service demands of one (possibly aggregated) transaction class: seconds of service per transaction.

    :ivar cpu_s: CPU demand of a lone client (s; the whole demand, to be shared by the cores).
    :ivar partition_s: demand on each lock-partition LWLock (16 values, s): acquisitions x hold time on an idle
        machine.
    :ivar cpu_saturated_factor: CPU demand once the cores are busy / ``cpu_s`` (> 0; 1 = no change): context
        switches, cache misses and the client's own CPU, hidden in idle time with one client, cost throughput
        once every core is busy. The demand with n clients is ``cpu_s x (1 + (f - 1) x min(1, (n - 1) / C))``.
    :ivar holds_on_cpu: True when holding a partition LWLock is CPU work already in ``cpu_s`` (a calibration's
        demands): a backend's response time then counts only the *wait* at a partition, not its own hold
        (simultaneous resource possession), and a hold is stretched in wall-clock time by processor sharing
        when more backends are runnable than there are cores (:func:`hold_stretch`). False: plain MVA centres.
    """

    cpu_s: float
    partition_s: tuple[float, ...]
    cpu_saturated_factor: float = 1.0
    holds_on_cpu: bool = False

    def __post_init__(self) -> None:
        if len(self.partition_s) != NUM_LOCK_PARTITIONS:
            raise ValueError(f"partition_s must have {NUM_LOCK_PARTITIONS} values")
        if self.cpu_s < 0 or min(self.partition_s) < 0 or not all(map(math.isfinite, (self.cpu_s,
                                                                                       *self.partition_s))):
            raise ValueError("demands must be finite and >= 0")
        if self.cpu_s + sum(self.partition_s) <= 0:
            raise ValueError("a transaction must demand some service (all demands are 0)")
        if not 0 < self.cpu_saturated_factor < math.inf:
            raise ValueError("cpu_saturated_factor must be a positive number")

    @property
    def cpu_saturated_s(self) -> float:
        """CPU demand once every core is busy (s)."""
        return self.cpu_s * self.cpu_saturated_factor

    def cpu_at(self, clients: int, cpus: int) -> float:
        """CPU demand with ``clients`` clients on ``cpus`` cores (s; see ``cpu_saturated_factor``)."""
        return self.cpu_s * (1.0 + (self.cpu_saturated_factor - 1.0) * contention_ramp(clients, cpus))

    @property
    def total_s(self) -> float:
        """Total demand = response time of a lone client (s; holds on the CPU are counted once)."""
        return self.cpu_s + (0.0 if self.holds_on_cpu else sum(self.partition_s))


def hold_stretch(runnable: float, cpus: int) -> float:
    """Wall-clock time of a lock hold over its CPU time: ``max(1, runnable / cpus)``.

    Processor sharing: with more runnable backends than cores each gets ``cpus / runnable`` of a core, so a
    critical section of h CPU-seconds lasts ``h x runnable / cpus`` (the mean of a holder preempted with
    probability h / quantum and waiting ``(runnable - cpus) / cpus`` quanta; Linux's fair scheduler,
    kernel/sched/fair.c). Every backend that needs that partition meanwhile waits (lwlock.c ``LWLockAcquire``
    sleeps on its semaphore).
    """
    return max(1.0, runnable / cpus)


def contention_ramp(clients: int, cpus: int) -> float:
    """How far contention has set in with ``clients`` clients on ``cpus`` cores: ``min(1, (clients - 1) / cpus)``
    (0 for a lone client, 1 once there are more clients than cores)."""
    return min(1.0, max(0, clients - 1) / cpus)


def class_demands(cls: TransactionClass, calibration: Calibration) -> Demands:
    """Service demands of one transaction class under a calibration (see the module docstring for the formulas;
    lock.c ``LockAcquireExtended`` and ``LockReleaseAll`` for the partition acquisitions)."""
    base = calibration.base_cpu_s if cls.plans else calibration.generic_base_s
    cpu = (base + calibration.fastpath_lock_cpu_s * cls.locks
           + calibration.planned_relation_cpu_s * cls.planned_relations
           + calibration.main_table_lock_extra_cpu_s * cls.main_table_locks)
    traffic = transaction_traffic(cls.partition_load)
    return Demands(cpu_s=cpu, partition_s=tuple(n * calibration.lwlock_hold_s for n in traffic.per_partition),
                   cpu_saturated_factor=calibration.saturated_cpu_factor, holds_on_cpu=True)


def workload_demands(classes: Iterable[TransactionClass], calibration: Calibration) -> Demands:
    """Calls-weighted mean demands of several transaction classes: ``D_k = sum_i calls_i D_ik / sum_i calls_i``.

    :raises ValueError: no class given.
    """
    classes = list(classes)
    if not classes:
        raise ValueError("a workload needs at least one transaction class")
    total_calls = sum(c.calls for c in classes)
    each = [(c.calls / total_calls, class_demands(c, calibration)) for c in classes]
    return Demands(
        cpu_s=sum(w * d.cpu_s for w, d in each),
        partition_s=tuple(sum(w * d.partition_s[p] for w, d in each) for p in range(NUM_LOCK_PARTITIONS)),
        cpu_saturated_factor=calibration.saturated_cpu_factor,
        holds_on_cpu=True,
    )


def _check_cpus(cpus: int) -> None:
    if cpus < 1:
        raise ValueError(f"cpus must be >= 1, got {cpus}")


def ceiling_tps(demands: Demands, cpus: int) -> float:
    """Asymptotic throughput bound (TPS): ``min(C / D_cpu, 1 / max_p D_p)``; ``inf`` parts are ignored.

    :raises ValueError: cpus < 1.
    """
    _check_cpus(cpus)
    cpu = cpus / demands.cpu_saturated_s if demands.cpu_s > 0 else math.inf
    top = max(demands.partition_s)
    return min(cpu, 1.0 / top if top > 0 else math.inf)


@dataclass(frozen=True)
class Forecast:
    """The network's steady state with ``clients`` clients (MVA, Seidmann for the CPU).

    ``D_cpu`` and ``D_p`` below are the demands at N clients: the CPU's with the saturation factor, each
    partition's hold stretched by the run queue (:func:`hold_stretch`) when the holds are CPU work.

    :ivar clients: N (count).
    :ivar cpus: C (count).
    :ivar throughput_tps: X(N), transactions per second.
    :ivar response_time_ms: R(N) = N / X(N), ms per transaction (Little's law, think time 0).
    :ivar cpu_utilisation: X D_cpu / C (fraction 0..1).
    :ivar partition_utilisation: X D_p per partition (16 fractions 0..1).
    :ivar partition_wait_ms: time per transaction waiting for partition LWLocks held by others (ms).
    :ivar lockmanager_share: partition_wait / R: the predicted LockManager share of active-session samples
        (fraction 0..1; every client is active with think time 0).
    :ivar lockmanager_aas: N x lockmanager_share: predicted AAS of ``LWLock:LockManager`` (sessions).
    :ivar binding_resource: where the transactions spend their time at N: ``partition N`` (the one with the most
        time) when the time at the lock partitions exceeds the time at the CPU (queueing included), else ``cpu``.
        As N grows this is the bottleneck centre (largest demand per server) of plain MVA.
    :ivar ceiling_tps: the asymptotic bound ``min(C / D_cpu, 1 / max_p D_p)`` (TPS).
    :ivar cpu_ceiling_tps: C / D_cpu (TPS; ``inf`` without CPU demand).
    :ivar hottest_partition: the partition with the most LWLock acquisitions per transaction (lowest on a tie), None
        when no main-table lock.
    :ivar hottest_partition_saturation_tps: the throughput at which the hottest partition LWLock is busy all the
        time, 1 / max_p D_p (TPS; ``inf`` when no main-table lock).
    :ivar knee_clients: N* = D_total / D_max (D_max = largest demand per server; holds on the CPU counted once):
        the client count where the light-load bound N / D_total meets the ceiling; past it, more clients only add
        waiting.
    """

    clients: int
    cpus: int
    throughput_tps: float
    response_time_ms: float
    cpu_utilisation: float
    partition_utilisation: tuple[float, ...]
    partition_wait_ms: float
    lockmanager_share: float
    lockmanager_aas: float
    binding_resource: str
    ceiling_tps: float
    cpu_ceiling_tps: float
    hottest_partition: int | None
    hottest_partition_saturation_tps: float
    knee_clients: float


def _binding(cpu_per_server_s: float, partition_s: Sequence[float]) -> tuple[str, float]:
    best_name, best = CPU, cpu_per_server_s
    for p, d in enumerate(partition_s):
        if d > best:
            best_name, best = partition_name(p), d
    return best_name, best


def forecast_curve(demands: Demands, cpus: int, clients: Sequence[int]) -> tuple[Forecast, ...]:
    """Forecasts for several client counts from one MVA pass up to the largest (same order as ``clients``).

    With ``demands.holds_on_cpu`` (every calibrated demand) the partition centres follow
    :func:`hold_stretch` of the CPU's runnable backends at the previous population and count only waiting in the
    response time; the ceiling, binding resource and hottest partition's saturation rate are then those of the
    demands at that client count.

    :param demands: the (aggregated) transaction class (:func:`class_demands`, :func:`workload_demands`).
    :param cpus: C, cores (>= 1).
    :param clients: client counts (each >= 1).
    :raises ValueError: cpus < 1 or a client count < 1.
    """
    _check_cpus(cpus)
    wanted = list(clients)
    if not wanted or min(wanted) < 1:
        raise ValueError(f"client counts must be >= 1, got {wanted}")
    top_idle = max(demands.partition_s)
    hottest = demands.partition_s.index(top_idle) if top_idle > 0 else None
    on_cpu = demands.holds_on_cpu

    results: dict[int, Forecast] = {}
    targets = set(wanted)
    q_cpu = 0.0  # customers queueing at the CPU's Seidmann queueing part
    runnable = 0.0  # customers at the CPU (queueing part and delay part): runnable backends
    q_part = [0.0] * NUM_LOCK_PARTITIONS
    for n in range(1, max(wanted) + 1):
        cpu_n = demands.cpu_at(n, cpus)
        stretch = hold_stretch(runnable, cpus) if on_cpu else 1.0
        part_n = [d * stretch for d in demands.partition_s]
        r_cpu = cpu_n / cpus * (1.0 + q_cpu)
        delay_s = cpu_n * (cpus - 1) / cpus
        # a partition: wait for the customers there (arrival theorem); plain centres add the own service
        waits = [d * qk for d, qk in zip(part_n, q_part, strict=True)]
        response = delay_s + r_cpu + sum(waits) + (0.0 if on_cpu else sum(part_n))
        x = n / response
        q_cpu = x * r_cpu
        runnable = x * (r_cpu + delay_s)
        q_part = [x * (w + d) for w, d in zip(waits, part_n, strict=True)]
        if n in targets:
            wait = sum(waits)
            top = max(part_n)
            _, d_max = _binding(cpu_n / cpus, part_n)
            at_part = [w + (0.0 if on_cpu else d) for w, d in zip(waits, part_n, strict=True)]
            binding = (partition_name(at_part.index(max(at_part))) if sum(at_part) > r_cpu + delay_s else CPU)
            cpu_ceiling = cpus / cpu_n if cpu_n > 0 else math.inf
            results[n] = Forecast(
                clients=n,
                cpus=cpus,
                throughput_tps=x,
                response_time_ms=response * 1000.0,
                cpu_utilisation=x * cpu_n / cpus,
                partition_utilisation=tuple(min(1.0, x * d) for d in part_n),
                partition_wait_ms=wait * 1000.0,
                lockmanager_share=wait / response,
                lockmanager_aas=n * wait / response,
                binding_resource=binding,
                ceiling_tps=min(cpu_ceiling, 1.0 / top if top > 0 else math.inf),
                cpu_ceiling_tps=cpu_ceiling,
                hottest_partition=hottest,
                hottest_partition_saturation_tps=1.0 / top if top > 0 else math.inf,
                knee_clients=(cpu_n + (0.0 if on_cpu else sum(part_n))) / d_max,
            )
    return tuple(results[n] for n in wanted)


def forecast(demands: Demands, cpus: int, clients: int) -> Forecast:
    """The forecast for ``clients`` clients on ``cpus`` cores (see :func:`forecast_curve`).

    :raises ValueError: cpus < 1 or clients < 1.
    """
    return forecast_curve(demands, cpus, [clients])[0]
