"""The calibration fit: :class:`~lockscope.forecast.calibration.Calibration` from the points ``lockscope lab ceiling``
measures (:mod:`lockscope.lab.ceiling` runs them; this module names them and turns their rows into costs, pure).

Each point is a pgbench run (a results row: ``point``, ``clients``, ``max_locks_per_transaction``, ``tps`` and the
machine figures ``cpu_us_per_transaction``, ``context_switches_per_transaction``, ``lockmanager_share``, ``aas``);
of the repeats of a point the best TPS is kept (other load only ever slows a run down).

- **Single-client slopes** (1 / TPS; the idle round trip cancels in differences): fast-path lock = (generic_200 -
  generic_2) / 198 at max_locks_per_transaction 1024 (all fast-path); main-table extra = (generic_200 at 16 - at
  1024) / 184; planned relation = (index_101 - index_1) / 100 at 1024 - a fast-path lock; executor relation =
  (scan_200 - scan_2) / 198 at 1024 - two fast-path locks (a partition and its index, when measured).
- **Cores busy** (C clients, CPU per transaction from ``/proc/stat``): base = pk_select_simple - 2 fast-path
  locks; idle round trip = 1 / TPS of pk_select_simple alone - its CPU at C; generic base = pk_select_prepared
  alone - the round trip - 2 fast-path locks, unless that is below :data:`GENERIC_FLOOR` of the base (the two
  protocols' round trips differ on a VM whose idle vCPUs wake slowly): then the published ratio
  :data:`lockscope.forecast.calibration.GENERIC_BASE_RATIO` of the base; coherence = (generic_spread - generic_16 -
  S (fast-path + main-table extra)) / the spread's acquisitions; growth per doubling: CPU of pk_select_simple and
  generic_16 at N clients over at C, per log2(N / C).
- **Contention** (N clients): LWLock sleeps per transaction = half the extra context switches of generic_one and
  generic_spread over generic_16; hold = sleeps of generic_one / (X (S + 1)^2 v(N)) (the model's sleeps,
  :func:`lockscope.forecast.model.convoy_factor`); sleep CPU = (generic_one - generic_spread CPU) / their sleeps'
  difference; wake-up latency = :func:`fit_wake_latency` of generic_one's LockManager time per transaction
  (LockManager share x AAS / TPS).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..errors import LockscopeError
from ..lockpart import NUM_LOCK_PARTITIONS, transaction_traffic
from .calibration import Calibration, published_generic_base_s
from .model import Demands, convoy_factor, forecast

__all__ = [
    "BIG",
    "BIG_INDEXES",
    "CEILING_MLPT",
    "FILLERS",
    "GENERIC_FLOOR",
    "WIDE_MLPT",
    "CeilingRows",
    "fit_calibration",
    "fit_wake_latency",
]

#: max_locks_per_transaction of the calibration server: one group of 16 slots on PG 18 (16 slots on 13-17).
CEILING_MLPT = 16
#: Fast-path slots at :data:`CEILING_MLPT` (the filler tables that take them).
FILLERS = 16
#: max_locks_per_transaction of the slope points: 64 groups of 16 on PG 18, room for every lock in the fast path.
WIDE_MLPT = 1024
#: Below this fraction of the base CPU, the single-client generic base is taken as unmeasurable (fraction).
GENERIC_FLOOR = 0.25
#: Locks of the big generic-plan point (parent + BIG - 1 partitions): the slopes span BIG - 2 locks.
BIG = 200
#: Extra indexes of the big planning point (plus the primary key).
BIG_INDEXES = 100


def _figure(row: dict[str, Any], key: str, default: float) -> float:
    value = row.get(key)
    return float(value) if isinstance(value, int | float) and math.isfinite(value) else default


@dataclass(frozen=True)
class CeilingRows:
    """The measured rows of a ``lab ceiling`` run and the figures read from them.

    :ivar rows: results rows (dicts, as ``results.json`` holds them).
    :ivar cores: the machine's cores (count).
    :ivar clients: N, the clients of the contended points (count).
    """

    rows: Sequence[dict[str, Any]]
    cores: int
    clients: int

    def best(self, point: str, clients: int, mlpt: int = CEILING_MLPT) -> dict[str, Any]:
        """The repeat with the best TPS of a point.

        :raises LockscopeError: the point was not measured.
        """
        good = [r for r in self.rows if r.get("point") == point and r.get("clients") == clients
                and r.get("max_locks_per_transaction", mlpt) == mlpt
                and isinstance(r.get("tps"), int | float) and math.isfinite(r["tps"]) and r["tps"] > 0]
        if not good:
            raise LockscopeError(f"lab ceiling: no TPS measured for {point} with {clients} clients at "
                                 f"max_locks_per_transaction {mlpt}")
        return max(good, key=lambda r: float(r["tps"]))

    def has(self, point: str) -> bool:
        """True when the run measured ``point``."""
        return any(r.get("point") == point for r in self.rows)

    def alone(self, point: str, mlpt: int) -> float:
        """1 / TPS of the point with one client (s per transaction)."""
        return 1.0 / float(self.best(point, 1, mlpt)["tps"])

    def busy(self, point: str, clients: int) -> float:
        """CPU per transaction of the point with ``clients`` clients (s): busy core time per transaction
        (``/proc/stat``), else cores / TPS."""
        row = self.best(point, clients)
        return _figure(row, "cpu_us_per_transaction", self.cores / float(row["tps"]) * 1e6) * 1e-6

    def sleeps(self, point: str) -> float:
        """LWLock sleeps per transaction of the point with N clients: half its context switches per transaction
        beyond generic_16's (a sleep switches the sleeper out and back in), at least 0."""
        def switches(p: str) -> float:
            return _figure(self.best(p, self.clients), "context_switches_per_transaction", 0.0)
        return max(0.0, (switches(point) - switches("generic_16")) / 2)


def fit_wake_latency(calibration: Calibration, cpu_s: float, acquisitions: int, lockmanager_s: float, *,
                     cores: int, clients: int) -> float:
    """The wake-up latency (s) that makes the model's LockManager time per transaction equal ``lockmanager_s`` for a
    transaction of CPU ``cpu_s`` whose main-table locks take ONE partition ``acquisitions`` times (bisection; the
    time grows with the latency). 0 when even a zero latency predicts more.

    :raises ValueError: non-positive cpu or acquisitions.
    """
    if cpu_s <= 0 or acquisitions < 1:
        raise ValueError("cpu_s and acquisitions must be positive")
    load = (float(acquisitions),) + (0.0,) * (NUM_LOCK_PARTITIONS - 1)

    def predicted(latency: float) -> float:
        costs = replace(calibration, wake_latency_s=latency)
        return forecast(Demands(cpu_s, load, costs), cores, clients).partition_wait_ms / 1000.0

    if predicted(0.0) >= lockmanager_s:
        return 0.0
    lo, hi = 0.0, 0.01
    for _ in range(60):
        mid = (lo + hi) / 2
        if predicted(mid) < lockmanager_s:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def _slopes(r: CeilingRows) -> dict[str, float]:
    """Fast-path lock, main-table extra, planned relation and executor relation (s), single-client slopes."""
    fast = max(0.0, (r.alone(f"generic_{BIG}", WIDE_MLPT) - r.alone("generic_2", WIDE_MLPT)) / (BIG - 2))
    executor = 0.0
    if r.has(f"scan_{BIG}"):
        executor = max(0.0, (r.alone(f"scan_{BIG}", WIDE_MLPT) - r.alone("scan_2", WIDE_MLPT)) / (BIG - 2)
                       - 2 * fast)
    return {
        "fastpath_lock_cpu_s": fast,
        "main_table_lock_extra_cpu_s": max(0.0, (r.alone(f"generic_{BIG}", CEILING_MLPT)
                                                 - r.alone(f"generic_{BIG}", WIDE_MLPT)) / (BIG - FILLERS)),
        "planned_relation_cpu_s": max(0.0, (r.alone(f"index_{BIG_INDEXES + 1}", WIDE_MLPT)
                                            - r.alone("index_1", WIDE_MLPT)) / BIG_INDEXES - fast),
        "executor_relation_cpu_s": executor,
    }


def _spread_load(spilled: int) -> tuple[int, ...]:
    """The spread script's spilled locks, round robin over the 16 partitions."""
    per_part = [0] * NUM_LOCK_PARTITIONS
    for i in range(spilled):
        per_part[i % NUM_LOCK_PARTITIONS] += 1
    return tuple(per_part)


def _busy_costs(r: CeilingRows, slopes: dict[str, float], spilled: int) -> dict[str, float]:
    """Base and generic base CPU, idle round trip, coherence and growth (cores busy)."""
    at, cores, fast = r.cores, r.cores, slopes["fastpath_lock_cpu_s"]
    cpu_pk = r.busy("pk_select_simple", at)
    round_trip = max(0.0, r.alone("pk_select_simple", CEILING_MLPT) - cpu_pk) if cores > 1 else 0.0
    spilled_cost = spilled * (fast + slopes["main_table_lock_extra_cpu_s"])
    spread = transaction_traffic(_spread_load(spilled)).total
    coherence = max(0.0, (r.busy("generic_spread", at) - r.busy("generic_16", at) - spilled_cost)
                    / spread) if cores > 1 else 0.0
    growth = 0.0
    if r.clients > at:
        ratios = [r.busy(p, r.clients) / r.busy(p, at) - 1.0 for p in ("pk_select_simple", "generic_16")]
        growth = max(0.0, sum(ratios) / len(ratios) / math.log2(r.clients / at))
    base = max(1e-9, cpu_pk - 2 * fast)
    generic = r.alone("pk_select_prepared", CEILING_MLPT) - round_trip - 2 * fast
    if generic < GENERIC_FLOOR * base:
        # the single-client round trip is not the same for the two protocols (a VM whose idle vCPU wakes slowly
        # burns tens of µs per round trip, more after a longer server step): the published ratio stands in
        generic = published_generic_base_s(base)
    return {"base_cpu_s": base, "idle_round_trip_s": round_trip, "generic_base_cpu_s": generic,
            "coherence_cpu_s": coherence, "cpu_growth_per_doubling": growth}


def _contention(r: CeilingRows, spilled: int) -> dict[str, float]:
    """Hold and sleep CPU from the one-partition and spread points with N clients."""
    one = r.best("generic_one", r.clients)
    sleeps_one, sleeps_spread = r.sleeps("generic_one"), r.sleeps("generic_spread")
    # sleeps = a^2 X h v(N): the hold as it is with the calibration's own cores busy
    v = convoy_factor(Calibration(0.0, 0.0, 0.0, 0.0, cpus=r.cores), float(r.clients))
    hold = sleeps_one / (float(one["tps"]) * (spilled + 1) ** 2 * v)
    cpu_one, cpu_spread = r.busy("generic_one", r.clients), r.busy("generic_spread", r.clients)
    sleep_cpu = max(0.0, (cpu_one - cpu_spread) / (sleeps_one - sleeps_spread)) if sleeps_one > sleeps_spread else 0.0
    return {"lwlock_hold_s": hold, "sleep_cpu_s": sleep_cpu}


def _statement_times(steady_ms: tuple[float, float], explain_ms: tuple[float, float] | None) -> dict[str, float]:
    explain = explain_ms or steady_ms
    return {"base_plan_s": steady_ms[0] / 1000.0, "base_exec_s": steady_ms[1] / 1000.0,
            "explain_plan_extra_s": max(0.0, explain[0] - steady_ms[0]) / 1000.0,
            "explain_exec_extra_s": max(0.0, explain[1] - steady_ms[1]) / 1000.0}


def _checks(r: CeilingRows, calibration: Calibration, cpu_one: float, spilled: int,
            lockmanager_one_s: float) -> dict[str, Any]:
    """The fit's own figures and the model against the one-partition and spread points (results.json extras)."""
    one, spread = r.best("generic_one", r.clients), r.best("generic_spread", r.clients)
    spread_load = tuple(float(n) for n in transaction_traffic(_spread_load(spilled)).per_partition)
    spread_pred = forecast(Demands(cpu_one, spread_load, calibration), r.cores, r.clients)
    one_pred = forecast(Demands(cpu_one, (float(spilled + 1),) + (0.0,) * 15, calibration), r.cores, r.clients)
    x_one, x_spread = float(one["tps"]), float(spread["tps"])
    return {
        "cpu_per_transaction_us_alone": {p: r.alone(p, CEILING_MLPT) * 1e6 for p in (
            "pk_select_simple", "pk_select_prepared", "generic_16", "generic_spread", "generic_one",
            f"generic_{BIG}")},
        "cpu_per_transaction_us_alone_at_mlpt_1024": {p: r.alone(p, WIDE_MLPT) * 1e6 for p in (
            "generic_2", f"generic_{BIG}", "index_1", f"index_{BIG_INDEXES + 1}")},
        "cpu_per_transaction_us_busy": {f"{p}, {n} clients": r.busy(p, n) * 1e6 for p in (
            "pk_select_simple", "generic_16", "generic_spread") for n in sorted({r.cores, r.clients})},
        "lwlock_sleeps_per_transaction": {"generic_one": r.sleeps("generic_one"),
                                          "generic_spread": r.sleeps("generic_spread")},
        "one_partition_tps": x_one, "spread_tps": x_spread,
        "one_partition_lockmanager_ms": lockmanager_one_s * 1e3,
        "one_partition_predicted_tps": one_pred.throughput_tps,
        "one_partition_predicted_lockmanager_share": one_pred.lockmanager_share,
        "one_partition_measured_lockmanager_share": _figure(one, "lockmanager_share", math.nan),
        "spread_predicted_tps": spread_pred.throughput_tps,
        "spread_ratio_predicted_over_measured": spread_pred.throughput_tps / x_spread,
        "spread_predicted_lockmanager_share": spread_pred.lockmanager_share,
        "spread_measured_lockmanager_share": _figure(spread, "lockmanager_share", math.nan),
        "one_over_spread_measured": x_one / x_spread,
    }


def fit_calibration(rows: Sequence[dict[str, Any]], *, spilled: int, clients: int, cores: int,
                    server_version: str, base_statement_ms: tuple[float, float] = (0.0, 0.0),
                    base_explain_ms: tuple[float, float] | None = None) -> tuple[Calibration, dict[str, Any]]:
    """The calibration from the measured points (module docstring), and the checks.

    :param spilled: S, the locks the one-partition and spread scripts spill (count).
    :param clients: N of the contended points (count).
    :param cores: the machine's cores (count).
    :param base_statement_ms: the base statement's own (planning, execution) time in ms as pg_stat_statements
        records it, one client.
    :param base_explain_ms: the same by ``EXPLAIN (ANALYZE, SUMMARY)`` (the explain extras are the differences).
    :raises LockscopeError: a point is missing.
    """
    r = CeilingRows(rows, cores, clients)
    slopes = _slopes(r)
    calibration = Calibration(
        **slopes, **_busy_costs(r, slopes, spilled), **_contention(r, spilled),
        **_statement_times(base_statement_ms, base_explain_ms), cpus=cores,
        source=f"lockscope lab ceiling on this machine ({cores} cores, PostgreSQL {server_version}, "
               f"{clients} clients, {spilled} spilled locks)")
    one = r.best("generic_one", clients)
    lockmanager_one = _figure(one, "lockmanager_share", 0.0) * _figure(one, "aas", 0.0) / float(one["tps"])
    cpu_one = r.busy("generic_16", cores) + spilled * (slopes["fastpath_lock_cpu_s"]
                                                     + slopes["main_table_lock_extra_cpu_s"])
    if lockmanager_one > 0:
        calibration = replace(calibration, wake_latency_s=fit_wake_latency(
            calibration, cpu_one, spilled + 1, lockmanager_one, cores=cores, clients=clients))
    return calibration, _checks(r, calibration, cpu_one, spilled, lockmanager_one)
