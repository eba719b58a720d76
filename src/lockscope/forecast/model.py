"""Throughput forecast for relation-lock traffic: mean-value analysis of a closed network (pure).

The network (docs/forecast.md gives the assumptions, the measurements behind each rule and where they fail):

- ``N`` clients, think time 0 (each client submits its next transaction as soon as the last one returns, as pgbench
  does), one transaction class after aggregation (below).
- **CPU**, ``C`` cores. Residence per transaction ``R_cpu(n) = D(n) max(1, (1 + Q_cpu(n - 1)) / C)``: no queueing
  while the backends that want a core are no more than the cores, processor sharing beyond (exact for C = 1, and
  as N grows, X -> C / D). ``D(n)`` is the CPU per transaction at n clients:
  ``D_C (1 + growth x log2(max(n, C) / C)) + coherence x A x min(1, (n - 1) / (C - 1)) + sleep_cpu x k(n)``,
  with ``D_C`` the class's CPU with every core busy (:func:`class_demands`), ``A`` its partition-LWLock
  acquisitions and ``k(n)`` its LWLock sleeps (below). The part of ``D_C`` measured under a load of ``n0``
  clients (pg_stat_statements of the present: :attr:`Demands.loaded_cpu_s`) already holds ``growth(n0)``: it
  grows by ``growth(n) / growth(n0)`` only.
- **Idle round trip**: a lone client pays ``idle_round_trip_s`` per transaction for waking idle cores, fading
  linearly to 0 at C clients (a pure delay).
- **16 lock partitions** (lwlock.h ``NUM_LOCK_PARTITIONS``). Partition p is acquired exclusively ``a_p`` times per
  transaction (lock.c ``LockAcquireExtended`` per main-table lock, one ``LockReleaseAll`` pass;
  :func:`lockscope.lockpart.transaction_traffic`). Holding it is CPU work (in ``D``); an acquisition finds it held
  with probability ``U_p = X a_p h`` (arrival theorem, X of the previous population, ``h`` =
  ``lwlock_hold_s``), and then the backend **sleeps** on its semaphore (lwlock.c ``LWLockAcquire``): ``k_p =
  a_p U_p`` sleeps per transaction, ``k = sum_p k_p``. Each sleep lasts until the release wakes it
  (``LWLockWakeup``) and it runs again: ``wake(n) = L max(1, Q_cpu / C) + max(0, Q_cpu - C) / C x D(n) / (1 + k)``
  (the wake-up latency ``L``, stretched by processor sharing, plus the wait behind the runnable backends beyond the
  cores, each running a burst of its transaction's CPU split by its sleeps). Sleeping is time at the partition,
  what pg_stat_activity shows as ``LWLock:LockManager``, and frees the core for others. A partition is also a
  single-server queue of service ``a_p h`` (``W_p = a_p h Q_p(n - 1)``): it binds only when ``X a_p h``
  approaches 1.
- **Convoy**: the hold ``h`` and the wake-up latency ``L`` are multiplied by ``v(m)`` (:func:`convoy_factor`),
  growing with ``m`` = the backends in the server (the arriving one and those there at the previous
  population), the coherence CPU per acquisition by ``v(min(m, C))`` (only running backends move cache lines),
  relative to the calibration's machine: with many cores the curve peaks and falls past the peak.

Per population n = 1..N: ``R = Z(n) + R_cpu + sum_p (W_p + k_p wake)``, ``X = n / R``, ``Q_cpu = X R_cpu``,
``Q_p = X (W_p + a_p h)``. Cost O(N x 16).

**Preempted holders** (:func:`convoy_lockmanager_s`): with more runnable backends than cores, the kernel
preempts a backend at a scheduler tick, now and then while it holds a partition LWLock; every backend that needs
that partition then sleeps until the holder runs again, a tick later (BENCHMARKS.md, "what a sampled
LWLock:LockManager is"). That time ``V`` per transaction is in the LockManager share and AAS, not in ``R``: the
sleepers free the cores for other runnable work, so on saturated cores it takes the place of the wait for a core.

What a sampler of active sessions sees: a backend in a statement is either on a core (its CPU, ``D``) or asleep on
a partition (``LockManager``); the queue for a core after the client's query arrives is idle time (the backend
has not read the query yet). So the predicted **LockManager share** is ``LM / (LM + D)`` with ``LM`` the
partition time per transaction plus ``V``, and the binding resource is the partition with the most time when the
partition time exceeds ``D``, else the CPU.

Several transaction classes (statements with their call counts, e.g. from pg_stat_statements) are aggregated into
one class: calls-weighted means of the CPU, of ``a_p`` and of ``a_p^2`` (the sleeps go with ``a_p^2``)
(:func:`workload_demands`); throughput is transactions of the mix per second.
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
    "convoy_factor",
    "convoy_lockmanager_s",
    "forecast",
    "forecast_curve",
    "idle_round_trip_s",
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
    :ivar executor_relations: relations the executor initialises and scans (count >= 1; every partition of an
        unpruned scan, one after run-time pruning).
    :ivar own_s: the statement's own planning and execution time per call, measured (s), or None when unknown (the
        base statement's, pgbench -S, stands in).
    :ivar own_at: ``(locks, planned relations, main-table locks, executor relations)`` of the footprint ``own_s`` was
        measured with: a what-if that changes them moves the cost by the calibrated per-lock and per-relation
        figures.
    :ivar own_at_clients: the clients ``own_s`` was measured under (pg_stat_statements of the present, deflated to
        CPU: the cost already holds that many clients' CPU growth), None when measured alone or unknown (the growth
        applies to all of it).
    :raises ValueError: a negative count, not 16 partition counts, or calls <= 0.
    """

    name: str
    fast_path_locks: int
    partition_load: tuple[int, ...]
    calls: float = 1.0
    planned_relations: int = 0
    plans: bool = True
    executor_relations: int = 1
    own_s: float | None = None
    own_at: tuple[int, int, int, int] | None = None
    own_at_clients: float | None = None

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
    """What one (possibly aggregated) transaction class asks of the machine.

    :ivar cpu_s: CPU per transaction with every core busy and no lock contention (s, ``D_C``; > 0).
    :ivar partition_acquisitions: exclusive acquisitions of each lock-partition LWLock per transaction (16 values
        >= 0; :func:`lockscope.lockpart.transaction_traffic`).
    :ivar costs: the machine's costs (hold, sleeps, wake-up, coherence, growth, idle round trip).
    :ivar partition_acquisitions_sq: per partition the mean of ``a_p^2`` (16 values; None = ``a_p^2``, one class);
        a workload's LWLock sleeps go with it.
    :ivar loaded_cpu_s: the part of ``cpu_s`` measured under ``loaded_clients`` clients (s; 0..cpu_s): its CPU
        growth is that of the clients beyond those (:meth:`cpu_at`).
    :ivar loaded_clients: the clients ``loaded_cpu_s`` was measured under (count), None when none was.
    :raises ValueError: not 16 values, a negative or non-finite value, or no CPU demand.
    """

    cpu_s: float
    partition_acquisitions: tuple[float, ...]
    costs: Calibration
    partition_acquisitions_sq: tuple[float, ...] | None = None
    loaded_cpu_s: float = 0.0
    loaded_clients: float | None = None

    def __post_init__(self) -> None:
        values = list(self.partition_acquisitions) + list(self.partition_acquisitions_sq or ())
        if len(self.partition_acquisitions) != NUM_LOCK_PARTITIONS or (
                self.partition_acquisitions_sq is not None
                and len(self.partition_acquisitions_sq) != NUM_LOCK_PARTITIONS):
            raise ValueError(f"partition acquisitions must have {NUM_LOCK_PARTITIONS} values")
        if not all(math.isfinite(v) and v >= 0 for v in values) or not math.isfinite(self.cpu_s):
            raise ValueError("demands must be finite and >= 0")
        if not self.cpu_s > 0:
            raise ValueError(f"a transaction must demand some CPU, got cpu_s={self.cpu_s}")

    @property
    def partition_s(self) -> tuple[float, ...]:
        """Hold time of each partition LWLock per transaction (16 values, s): ``a_p x lwlock_hold_s``."""
        return tuple(a * self.costs.lwlock_hold_s for a in self.partition_acquisitions)

    @property
    def acquisitions(self) -> float:
        """Partition-LWLock acquisitions per transaction (count)."""
        return sum(self.partition_acquisitions)

    def squares(self) -> tuple[float, ...]:
        """Mean ``a_p^2`` per partition (16 values)."""
        if self.partition_acquisitions_sq is not None:
            return self.partition_acquisitions_sq
        return tuple(a * a for a in self.partition_acquisitions)

    def cpu_at(self, clients: int, cpus: int, sleeps: float = 0.0, convoy: float = 1.0) -> float:
        """CPU per transaction with ``clients`` clients on ``cpus`` cores and ``sleeps`` LWLock sleeps per
        transaction (s; the module docstring's ``D(n)``); ``convoy`` multiplies the coherence cost of the
        partition acquisitions (:func:`convoy_factor` of the running backends: only cores move cache lines)."""
        c = self.costs

        def growth(n: float) -> float:
            return 1.0 + c.cpu_growth_per_doubling * math.log2(max(n, cpus) / cpus)

        concurrent = min(1.0, (clients - 1) / (cpus - 1)) if cpus > 1 else 0.0
        cpu = self.cpu_s
        if self.loaded_clients is not None:  # it already holds the growth of the clients it was measured under
            cpu -= self.loaded_cpu_s * (1.0 - 1.0 / growth(self.loaded_clients))
        return (cpu * growth(clients) + c.coherence_cpu_s * convoy * self.acquisitions * concurrent
                + c.sleep_cpu_s * sleeps)


def convoy_lockmanager_s(demands: Demands, cpus: int, *, throughput_tps: float, runnable: float, in_server: float,
                         population: int, think_s: float, cpu_s: float, wake_s: float) -> float:
    """Time per transaction asleep on lock-partition LWLocks behind a holder the kernel preempted (s): what a
    sampler sees as ``LWLock:LockManager`` when there are more runnable backends than cores (BENCHMARKS.md, "what a
    sampled LWLock:LockManager is": a few sleeps per hundred transactions, each of milliseconds).

    PostgreSQL followed: lock.c ``LockAcquireExtended`` holds the partition LWLock exclusively while it enters the
    lock in the shared tables (``SetupLockInTable``, ``LockCheckConflicts``, ``GrantLock``), ``LockReleaseAll``
    once per partition; an acquirer that finds it held queues itself and sleeps on its semaphore (lwlock.c
    ``LWLockAcquire`` -> ``LWLockQueueSelf``, ``PGSemaphoreLock``, wait event reported around the sleep by
    ``LWLockReportWaitStart``/``End``) until the holder's ``LWLockRelease`` -> ``LWLockWakeup`` posts it (proc.c
    ``PGPROC.sem``); the woken backend then waits for a core before it runs and clears the wait event. Kernel
    behaviour assumed (Linux, CFS/EEVDF, ``CONFIG_PREEMPT_NONE``/voluntary): a running backend is preempted only at
    a scheduler tick, and only when another task is runnable on its core; the preempted one runs again one tick
    later. Per partition p, with ``t`` = :attr:`Calibration.sched_tick_s`, ``h`` = the CPU of one main-table lock
    (``fastpath_lock_cpu_s + main_table_lock_extra_cpu_s``: the hold is part of it, so this is an upper bound):

    - stalls/s ``E_p = P x X a_p h / t``: each core ticks 1/t times a second, at a tick the running backend holds
      p with probability ``X a_p h / C`` (the fraction of core time spent holding it), and is preempted when
      another backend waits for that core, ``P = 1 - (1 - 1/C)^(r - 1)`` (each of the other ``r - 1`` runnable
      backends is on the holder's core with probability 1/C);
    - waiters per stall ``B_p = min((m - 1 + (N - m) min(1, t / Z)) min(1, a_p / 2), C t / D)``: the other
      backends in the server, and the clients outside it (think time Z) that send their next call during the
      stall, whose transaction touches p (one main-table lock in p is 2 acquisitions: the lock and the release
      pass), at most the transactions the cores run in one tick;
    - each sleeps for the rest of the stall, ``t - B_p D / (2 C)`` (they reach p as the cores run them), then waits
      ``wake_s`` for a core.

    Returns ``sum_p E_p B_p (sleep + wake_s) / X``. 0 without a tick, a main-table lock or throughput.

    :param throughput_tps: X (TPS).
    :param runnable: backends at the CPU, running or waiting for a core (count).
    :param in_server: backends in the server, ``m`` (count).
    :param population: N, the clients (count).
    :param think_s: Z, each client's time between calls outside the server (s).
    :param cpu_s: D, CPU per transaction (s).
    :param wake_s: a woken sleeper's wait for a core (s; the model's wake-up term).
    """
    costs = demands.costs
    tick, hold = costs.sched_tick_s, costs.fastpath_lock_cpu_s + costs.main_table_lock_extra_cpu_s
    if tick <= 0 or hold <= 0 or throughput_tps <= 0 or cpus < 1:
        return 0.0
    preempted = 1.0 - (1.0 - 1.0 / cpus) ** max(0.0, runnable - 1.0)
    arriving = max(0.0, population - in_server) * (min(1.0, tick / think_s) if think_s > 0 else 1.0)
    others = max(0.0, in_server - 1.0) + arriving
    asleep = 0.0
    for a in demands.partition_acquisitions:
        if a <= 0:
            continue
        stalls_per_s = preempted * throughput_tps * a * hold / tick
        waiters = min(others * min(1.0, a / 2.0), cpus * tick / cpu_s)
        asleep += stalls_per_s * waiters * (max(0.0, tick - waiters * cpu_s / (2.0 * cpus)) + wake_s)
    return asleep / throughput_tps


def convoy_factor(costs: Calibration, contenders: float) -> float:
    """How much the partition LWLocks' hold, coherence and wake-up costs grow with the backends that contend for
    them, relative to the calibration's machine: ``(1 + k (m - 1)) / (1 + k (m_cal - 1))`` with ``k`` =
    :attr:`Calibration.convoy_per_core`, ``m`` = ``contenders`` >= 1 (the backends in the server: on a core,
    waiting for one, or asleep on a partition) and ``m_cal`` = :attr:`Calibration.cpus` (its figures were
    measured with all of its cores busy).

    Every contender adds cache-line transfers to each acquisition (lwlock.c ``LWLockAttemptLock``'s atomics on the
    lock word) and work under the wait-list spinlock (``LWLockQueueSelf``, ``LWLockWakeup``, ``LWLockDequeueSelf``),
    so the hold, the CPU per acquisition and the time until a woken sleeper runs grow with them: past the
    throughput peak the curve falls. 1.0 with ``k`` = 0.
    """
    k = costs.convoy_per_core
    m = max(1.0, contenders)
    return (1.0 + k * (m - 1.0)) / (1.0 + k * (max(1, costs.cpus) - 1.0))


def class_demands(cls: TransactionClass, calibration: Calibration) -> Demands:
    """The demands of one transaction class and its partition acquisitions (lock.c ``LockAcquireExtended`` and
    ``LockReleaseAll``). CPU per transaction ``D_C``:

    - the statement's own cost measured (``own_s``): ``overhead + own_s`` (:meth:`Calibration.overhead_s`: the rest
      of a transaction), moved by the calibrated figures for every lock, planned relation, main-table lock and
      executor relation a what-if adds or removes against the measured footprint (``own_at``);
    - unknown: the base statement's (``base_cpu_s``, or ``generic_base_s`` when a cached generic plan is reused)
      ``+ fastpath_lock_cpu_s x locks + planned_relation_cpu_s x planned relations + main_table_lock_extra_cpu_s x
      main-table locks + executor_relation_cpu_s x (executor relations - 1)``.
    """
    c = calibration
    if cls.own_s is not None:
        locks0, planned0, main0, executor0 = cls.own_at or (cls.locks, cls.planned_relations, cls.main_table_locks,
                                                            cls.executor_relations)
        cpu = (c.overhead_s(cls.plans) + cls.own_s + c.fastpath_lock_cpu_s * (cls.locks - locks0)
               + c.planned_relation_cpu_s * (cls.planned_relations - planned0)
               + c.main_table_lock_extra_cpu_s * (cls.main_table_locks - main0)
               + c.executor_relation_cpu_s * (cls.executor_relations - executor0))
    else:
        base = c.base_cpu_s if cls.plans else c.generic_base_s
        cpu = (base + c.fastpath_lock_cpu_s * cls.locks + c.planned_relation_cpu_s * cls.planned_relations
               + c.main_table_lock_extra_cpu_s * cls.main_table_locks
               + c.executor_relation_cpu_s * max(0, cls.executor_relations - 1))
    traffic = transaction_traffic(cls.partition_load)
    loaded = cls.own_s if cls.own_s is not None and cls.own_at_clients is not None else 0.0
    return Demands(cpu_s=max(cpu, 1e-12), partition_acquisitions=tuple(float(n) for n in traffic.per_partition),
                   costs=calibration, loaded_cpu_s=min(loaded, max(cpu, 1e-12)),
                   loaded_clients=cls.own_at_clients if loaded else None)


def workload_demands(classes: Iterable[TransactionClass], calibration: Calibration) -> Demands:
    """Calls-weighted mean demands of several transaction classes: ``D = sum_i calls_i D_i / sum_i calls_i``, the
    same for ``a_p`` and ``a_p^2``.

    :raises ValueError: no class given.
    """
    classes = list(classes)
    if not classes:
        raise ValueError("a workload needs at least one transaction class")
    total_calls = sum(c.calls for c in classes)
    each = [(c.calls / total_calls, class_demands(c, calibration)) for c in classes]
    if len(each) == 1:
        return each[0][1]
    squares = [(w, d.squares()) for w, d in each]
    under = {d.loaded_clients for _, d in each if d.loaded_clients is not None}
    loaded_clients = under.pop() if len(under) == 1 else None  # one present measured them all, else none counts
    return Demands(
        cpu_s=sum(w * d.cpu_s for w, d in each),
        partition_acquisitions=tuple(sum(w * d.partition_acquisitions[p] for w, d in each)
                                     for p in range(NUM_LOCK_PARTITIONS)),
        costs=calibration,
        partition_acquisitions_sq=tuple(sum(w * sq[p] for w, sq in squares) for p in range(NUM_LOCK_PARTITIONS)),
        loaded_cpu_s=sum(w * d.loaded_cpu_s for w, d in each) if loaded_clients is not None else 0.0,
        loaded_clients=loaded_clients,
    )


def _check_cpus(cpus: int) -> None:
    if cpus < 1:
        raise ValueError(f"cpus must be >= 1, got {cpus}")


def ceiling_tps(demands: Demands, cpus: int) -> float:
    """Asymptotic throughput bound without contention (TPS): ``min(C / D_C, 1 / max_p a_p h)``.

    :raises ValueError: cpus < 1.
    """
    _check_cpus(cpus)
    top = max(demands.partition_s)
    return min(cpus / demands.cpu_s, 1.0 / top if top > 0 else math.inf)


@dataclass(frozen=True)
class Forecast:
    """The network's steady state with ``clients`` clients (module docstring).

    :ivar clients: N (count).
    :ivar cpus: C (count).
    :ivar throughput_tps: X(N), transactions per second.
    :ivar response_time_ms: R(N) = N / X(N) - think time, ms per transaction (Little's law).
    :ivar cpu_utilisation: X D(N) / C (fraction 0..1).
    :ivar partition_utilisation: X a_p h per partition: the fraction of time each partition LWLock is held
        (16 fractions 0..1).
    :ivar partition_wait_ms: time per transaction at the partitions: queued and asleep on their LWLocks, without
        the convoy behind preempted holders (ms).
    :ivar lockmanager_share: LM / (LM + D(N)), LM = partition wait + convoy wait: the predicted LockManager share
        of active-session samples (fraction 0..1).
    :ivar lockmanager_aas: X x LM: predicted average active sessions on ``LWLock:LockManager`` (sessions).
    :ivar binding_resource: ``partition N`` (the one with the most time) when the time at the partitions exceeds
        the CPU per transaction, else ``cpu``.
    :ivar ceiling_tps: ``min(C / D(N), 1 / max_p a_p h)`` (TPS).
    :ivar cpu_ceiling_tps: C / D(N) (TPS).
    :ivar hottest_partition: the partition with the most LWLock acquisitions per transaction (lowest on a tie),
        None when no main-table lock.
    :ivar hottest_partition_saturation_tps: the throughput at which the hottest partition LWLock would be held all
        the time, 1 / max_p a_p h (TPS; ``inf`` when no main-table lock).
    :ivar knee_clients: (D(N) + Z) / (D(N) / C): where the light-load bound meets the CPU ceiling (clients).
    :ivar lwlock_sleeps: LWLock sleeps per transaction, k(N) (count).
    :ivar cpu_per_transaction_us: D(N) (µs).
    :ivar convoy_wait_ms: time per transaction asleep behind a preempted holder of a partition LWLock
        (:func:`convoy_lockmanager_s`, ms).
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
    lwlock_sleeps: float = 0.0
    cpu_per_transaction_us: float = 0.0
    convoy_wait_ms: float = 0.0


@dataclass(frozen=True)
class _State:
    """The network after population n - 1 (what the arrival theorem gives population n): throughput, the
    backends at the CPU, at each partition and in the server."""

    x: float = 0.0
    q_cpu: float = 0.0
    in_server: float = 0.0
    q_part: tuple[float, ...] = (0.0,) * NUM_LOCK_PARTITIONS


@dataclass(frozen=True)
class _Step:
    """One population's solution (module docstring's quantities, seconds per transaction)."""

    n: int
    state: _State
    held: tuple[float, ...]
    at_part: tuple[float, ...]
    sleeps: float
    cpu_s: float
    round_trip_s: float
    response_s: float
    convoy_s: float = 0.0

    @property
    def lm_s(self) -> float:
        return sum(self.at_part)


def _step(demands: Demands, cpus: int, n: int, prev: _State, think_s: float) -> _Step:
    """Population ``n`` from population ``n - 1``'s state (MVA with the load-dependent terms of the module
    docstring)."""
    costs = demands.costs
    convoy = convoy_factor(costs, prev.in_server + 1.0)  # the arriving backend and those in the server before it
    held = tuple(d * convoy for d in demands.partition_s)
    sleeps_p = [min(a, sq * prev.x * costs.lwlock_hold_s * convoy)
                for a, sq in zip(demands.partition_acquisitions, demands.squares(), strict=True)]
    sleeps = sum(sleeps_p)
    cpu_n = demands.cpu_at(n, cpus, sleeps, convoy_factor(costs, min(prev.in_server + 1.0, cpus)))
    wake = (costs.wake_latency_s * convoy * max(1.0, prev.q_cpu / cpus)
            + max(0.0, prev.q_cpu - cpus) / cpus * cpu_n / (1.0 + sleeps))
    round_trip = idle_round_trip_s(costs, n, cpus)
    r_cpu = cpu_n * max(1.0, (1.0 + prev.q_cpu) / cpus)
    at_part = tuple(d * q + k * wake for d, q, k in zip(held, prev.q_part, sleeps_p, strict=True))
    response = think_s + round_trip + r_cpu + sum(at_part)
    x = n / response
    if x * cpu_n > cpus:  # the approximation overshot the cores' ceiling (large n): the rest is CPU queue
        x = cpus / cpu_n
        r_cpu += n / x - response
        response = n / x
    state = _State(x, x * r_cpu, x * (response - think_s),
                   tuple(x * (d * q + d) for d, q in zip(held, prev.q_part, strict=True)))
    # the convoy's sleepers would otherwise wait for a core: their sleep comes out of the time in the server
    # that is neither CPU nor partition queue, the round trip and the run queue (so X (LM + D) never exceeds the
    # clients)
    queued = round_trip + r_cpu - cpu_n
    convoy = min(max(0.0, queued), convoy_lockmanager_s(
        demands, cpus, throughput_tps=x, runnable=state.q_cpu, in_server=state.in_server, population=n,
        think_s=think_s, cpu_s=cpu_n, wake_s=wake))
    return _Step(n, state, held, at_part, sleeps, cpu_n, round_trip, response, convoy)


def idle_round_trip_s(costs: Calibration, clients: float, cpus: int) -> float:
    """What each transaction pays for waking idle cores with ``clients`` backends on ``cpus`` cores (s): the
    calibration's lone-client round trip, fading linearly to 0 once the clients fill the cores."""
    return costs.idle_round_trip_s * max(0.0, (cpus - clients) / (cpus - 1)) if cpus > 1 else 0.0


def _forecast_of(step: _Step, cpus: int, think_s: float, hottest: int | None) -> Forecast:
    x, cpu_n, lm = step.state.x, step.cpu_s, step.lm_s
    sampled = lm + step.convoy_s  # what a sampler sees as LWLock:LockManager
    top_hold = max(step.held)
    cpu_ceiling = cpus / cpu_n
    return Forecast(
        clients=step.n, cpus=cpus, throughput_tps=x, response_time_ms=(step.response_s - think_s) * 1000.0,
        cpu_utilisation=min(1.0, x * cpu_n / cpus),
        partition_utilisation=tuple(min(1.0, x * d) for d in step.held),
        partition_wait_ms=lm * 1000.0, lockmanager_share=sampled / (sampled + cpu_n), lockmanager_aas=x * sampled,
        binding_resource=partition_name(step.at_part.index(max(step.at_part))) if lm > cpu_n else CPU,
        ceiling_tps=min(cpu_ceiling, 1.0 / top_hold if top_hold > 0 else math.inf), cpu_ceiling_tps=cpu_ceiling,
        hottest_partition=hottest, hottest_partition_saturation_tps=1.0 / top_hold if top_hold > 0 else math.inf,
        knee_clients=(cpu_n + step.round_trip_s) / (cpu_n / cpus), lwlock_sleeps=step.sleeps,
        cpu_per_transaction_us=cpu_n * 1e6, convoy_wait_ms=step.convoy_s * 1000.0)


def forecast_curve(demands: Demands, cpus: int, clients: Sequence[int], *,
                   think_s: float = 0.0) -> tuple[Forecast, ...]:
    """Forecasts for several client counts from one pass up to the largest (same order as ``clients``).

    :param demands: the (aggregated) transaction class (:func:`class_demands`, :func:`workload_demands`).
    :param cpus: C, cores (>= 1).
    :param clients: client counts (each >= 1).
    :param think_s: each client's time between a call's end and its next one, outside the server (s >= 0; 0 = a
        pgbench-like closed loop): a pure delay (the application's work, the network).
    :raises ValueError: cpus < 1, a client count < 1 or a negative think time.
    """
    if not think_s >= 0:
        raise ValueError(f"think time must be >= 0, got {think_s}")
    _check_cpus(cpus)
    wanted = list(clients)
    if not wanted or min(wanted) < 1:
        raise ValueError(f"client counts must be >= 1, got {wanted}")
    acq = demands.partition_acquisitions
    hottest = acq.index(max(acq)) if max(acq) > 0 else None
    results: dict[int, Forecast] = {}
    targets = set(wanted)
    state = _State()
    for n in range(1, max(wanted) + 1):
        step = _step(demands, cpus, n, state, think_s)
        state = step.state
        if n in targets:
            results[n] = _forecast_of(step, cpus, think_s, hottest)
    return tuple(results[n] for n in wanted)


def forecast(demands: Demands, cpus: int, clients: int, *, think_s: float = 0.0) -> Forecast:
    """The forecast for ``clients`` clients on ``cpus`` cores (see :func:`forecast_curve`).

    :raises ValueError: cpus < 1, clients < 1 or a negative think time.
    """
    return forecast_curve(demands, cpus, [clients], think_s=think_s)[0]
