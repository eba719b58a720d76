"""The forecast model (pure): exact MVA against hand-computed networks, the asymptotic bounds, partition placement,
calls-weighted aggregation, and the calibration's defaults and JSON file."""

from __future__ import annotations

import json
import math
import re
from dataclasses import replace
from pathlib import Path

import pytest

from lockscope.errors import BadInputError
from lockscope.forecast.calibration import (
    DEFAULT_CALIBRATION,
    SCHEMA,
    Calibration,
    load_calibration,
    save_calibration,
)
from lockscope.forecast.model import (
    CPU,
    Demands,
    TransactionClass,
    ceiling_tps,
    class_demands,
    convoy_lockmanager_s,
    forecast,
    forecast_curve,
    workload_demands,
)
from lockscope.report.forecast_terminal import binding_text

ZERO16 = (0.0,) * 16
ZERO16_INT = (0,) * 16
#: The README's primary-key lookup on a table with 17 indexes at mlpt 16: 3 main-table locks, 2 in partition 4 and
#: 1 in partition 14.
README_LOAD = tuple(2 if p == 4 else 1 if p == 14 else 0 for p in range(16))
ONE_PARTITION = (24,) + (0,) * 15  # 24 main-table locks, all in partition 0
SPREAD = (2,) * 8 + (1,) * 8  # the same 24 over the 16 partitions
#: A fixed input for the shape tests (they must not move with each recalibration): a 2-core VM's ``lab ceiling``
#: of 2026-11-24 (its LWLock hold, 27.8 ns, long enough for one lock partition to bind at 2 cores) with the built-in
#: convoy factor.
HELD = Calibration(
    base_cpu_s=23.23e-6, fastpath_lock_cpu_s=0.145e-6, main_table_lock_extra_cpu_s=0.032e-6, lwlock_hold_s=27.8e-9,
    cpus=2, generic_base_cpu_s=17.16e-6, planned_relation_cpu_s=0.542e-6, idle_round_trip_s=5.37e-6,
    cpu_growth_per_doubling=0.093, coherence_cpu_s=0.210e-6, sleep_cpu_s=4.39e-6, wake_latency_s=35.5e-6,
    convoy_per_core=0.07, source="a 2-core VM, 2026-11-24")


def costs(**kw: float) -> Calibration:
    """A calibration with only the given costs (everything else 0, no convoy)."""
    base = dict(base_cpu_s=0.0, fastpath_lock_cpu_s=0.0, main_table_lock_extra_cpu_s=0.0, lwlock_hold_s=0.0,
                convoy_per_core=0.0)
    return Calibration(**{**base, **kw})  # type: ignore[arg-type]


def cpu_only(d: float, **kw: float) -> Demands:
    return Demands(cpu_s=d, partition_acquisitions=ZERO16, costs=costs(**kw))


def test_single_core() -> None:
    """One core, D = 10 ms: R(n) = D (1 + Q(n-1)) with Q(n-1) = n - 1, so R = n D, X = 1 / D."""
    for f in forecast_curve(cpu_only(0.010), 1, [1, 2, 5, 40]):
        assert f.throughput_tps == pytest.approx(100.0)
        assert f.response_time_ms == pytest.approx(10.0 * f.clients)
        assert f.cpu_utilisation == pytest.approx(1.0)
        assert f.binding_resource == CPU and f.hottest_partition is None
        assert f.lockmanager_share == 0.0 and f.partition_wait_ms == 0.0 and f.lwlock_sleeps == 0.0
        assert f.hottest_partition_saturation_tps == math.inf


def test_cores_serve_without_queueing_up_to_c_clients() -> None:
    """C = 2 cores, D = 2 s. By hand: n=1 R=2 X=0.5 Q=1; n=2 R = 2 max(1, 2/2) = 2, X=1, Q=2; n=3 R = 2 x 3/2 = 3,
    X=1: from C clients on, X = C / D exactly."""
    curve = forecast_curve(cpu_only(2.0), 2, [1, 2, 3, 2000])
    assert [f.throughput_tps for f in curve] == pytest.approx([0.5, 1.0, 1.0, 1.0])
    assert [f.response_time_ms for f in curve[:3]] == pytest.approx([2000.0, 2000.0, 3000.0])
    assert curve[0].ceiling_tps == pytest.approx(1.0) and curve[0].cpu_ceiling_tps == pytest.approx(1.0)
    assert curve[0].cpu_utilisation == pytest.approx(0.5) and curve[2].cpu_utilisation == pytest.approx(1.0)


def test_idle_round_trip_fades_out_at_the_cores() -> None:
    """C = 3, D = 3 s, idle round trip 1 s: n=1 R = 1 + 3 (X = 1/4); n=2 the round trip is half (0.5 s) and the
    CPU has room (Q(1) = 3/4: (1 + 3/4) / 3 < 1): R = 3.5, X = 4/7; n=3: no round trip, (1 + 12/7) / 3 < 1: X = 1."""
    curve = forecast_curve(cpu_only(3.0, idle_round_trip_s=1.0), 3, [1, 2, 3])
    assert [f.throughput_tps for f in curve] == pytest.approx([1 / 4, 4 / 7, 1.0])
    assert curve[0].knee_clients == pytest.approx(3 * 4 / 3)


def test_cpu_grows_per_doubling_beyond_the_cores() -> None:
    """growth 0.5 per doubling: D(n) = D (1 + 0.5 log2(max(n, C) / C)); at 8 clients on 2 cores D doubles."""
    d = cpu_only(1e-3, cpu_growth_per_doubling=0.5)
    assert d.cpu_at(1, 2) == d.cpu_at(2, 2) == pytest.approx(1e-3)
    assert d.cpu_at(8, 2) == pytest.approx(2e-3)
    f = forecast(d, 2, 8)
    assert f.cpu_per_transaction_us == pytest.approx(2000.0) and f.cpu_ceiling_tps == pytest.approx(1000.0)


def test_coherence_needs_two_running_cores() -> None:
    """coherence x acquisitions x min(1, (n - 1) / (C - 1)): nothing for a lone client or on one core."""
    load = class_demands(TransactionClass("spread", 16, SPREAD), costs(base_cpu_s=1e-5, coherence_cpu_s=1e-7))
    assert load.acquisitions == 40
    assert load.cpu_at(1, 4) == pytest.approx(1e-5)
    assert load.cpu_at(2, 4) == pytest.approx(1e-5 + 40e-7 / 3)
    assert load.cpu_at(4, 4) == load.cpu_at(64, 4) == pytest.approx(1e-5 + 40e-7)
    assert load.cpu_at(8, 1) == pytest.approx(1e-5)


def test_lwlock_sleeps_by_hand() -> None:
    """One core, D = 1 s, partition 0 acquired twice (one lock and the release pass), hold 0.1 s, wake-up 0.5 s.
    n=1: nobody else holds it, R = 1, X = 1, Q_p = X a h = 0.2, Q_cpu = 1. n=2: sleeps k = a^2 X(1) h = 0.4,
    wake = 0.5 max(1, 1) = 0.5, R_cpu = 1 x (1 + 1) = 2, at the partition 2 x 0.1 x 0.2 + 0.4 x 0.5 = 0.24:
    R = 2.24, X = 2 / 2.24; LockManager share 0.24 / (0.24 + 1)."""
    d = Demands(1.0, (2.0, *ZERO16[1:]), costs(lwlock_hold_s=0.1, wake_latency_s=0.5))
    f1, f2 = forecast_curve(d, 1, [1, 2])
    assert f1.throughput_tps == pytest.approx(1.0) and f1.lockmanager_share == 0.0 and f1.lwlock_sleeps == 0.0
    assert f2.lwlock_sleeps == pytest.approx(0.4)
    assert f2.response_time_ms == pytest.approx(2240.0)
    assert f2.throughput_tps == pytest.approx(2 / 2.24)
    assert f2.partition_wait_ms == pytest.approx(240.0)
    assert f2.lockmanager_share == pytest.approx(0.24 / 1.24)
    assert f2.lockmanager_aas == pytest.approx(2 / 2.24 * 0.24)
    assert f2.partition_utilisation[0] == pytest.approx(2 / 2.24 * 0.2)
    assert f2.binding_resource == CPU and f2.hottest_partition == 0
    assert f2.hottest_partition_saturation_tps == pytest.approx(5.0)
    # a sleep costs CPU too
    g = forecast_curve(Demands(1.0, (2.0, *ZERO16[1:]), costs(lwlock_hold_s=0.1, sleep_cpu_s=0.25)), 1, [2])[0]
    assert g.cpu_per_transaction_us == pytest.approx(1.1e6)


def test_partition_acquisitions_count_locks_and_the_release_pass() -> None:
    """a_p = n_p + 1 if n_p > 0 (lock.c LockAcquireExtended, LockReleaseAll); CPU = base + fast-path cost x all
    locks + planned relations + extra x main-table locks; a reused generic plan has its own base."""
    cal = Calibration(base_cpu_s=50e-6, fastpath_lock_cpu_s=1e-6, main_table_lock_extra_cpu_s=0.5e-6,
                      lwlock_hold_s=2e-6, generic_base_cpu_s=20e-6, planned_relation_cpu_s=3e-6)
    d = class_demands(TransactionClass("q", fast_path_locks=16, partition_load=SPREAD, planned_relations=2), cal)
    assert d.cpu_s == pytest.approx(50e-6 + 40 * 1e-6 + 24 * 0.5e-6 + 2 * 3e-6)
    assert d.partition_acquisitions == (3.0,) * 8 + (2.0,) * 8
    assert d.partition_s == pytest.approx((6e-6,) * 8 + (4e-6,) * 8)
    none = class_demands(TransactionClass("fast", fast_path_locks=3, partition_load=(0,) * 16, plans=False), cal)
    assert none.partition_s == ZERO16 and none.cpu_s == pytest.approx(23e-6)


def test_one_partition_convoys_where_the_same_locks_spread_do_not() -> None:
    """24 main-table locks in one partition: 25 acquisitions there, sleeps go with a_p^2 (625 vs 8 x 9 + 8 x 4);
    spread over 16 partitions the same locks sleep 4-5 times less and the CPU binds (:data:`HELD`)."""
    one = class_demands(TransactionClass("one", 16, ONE_PARTITION), HELD)
    spread = class_demands(TransactionClass("spread", 16, SPREAD), HELD)
    assert one.cpu_s == pytest.approx(spread.cpu_s)
    assert ceiling_tps(spread, 2) >= ceiling_tps(one, 2)
    f_one, f_spread = forecast(one, 2, 16), forecast(spread, 2, 16)
    assert f_one.lwlock_sleeps > 4 * f_spread.lwlock_sleeps
    assert f_spread.throughput_tps > f_one.throughput_tps
    assert f_one.binding_resource == "partition 0" and f_one.lockmanager_share > 0.5
    assert f_one.lockmanager_share > f_spread.lockmanager_share
    # 25 acquisitions of partition 0 per transaction: with as many backends as the calibration's cores it
    # saturates at 1 / (25 h); more backends convoy on it and it saturates earlier
    at_cores = forecast(one, 2, 2)
    assert at_cores.hottest_partition_saturation_tps == pytest.approx(1 / (25 * 27.8e-9), rel=0.05)
    assert f_one.hottest_partition_saturation_tps < 0.9 * at_cores.hottest_partition_saturation_tps
    # a lone client never sleeps; the share climbs with clients beyond the cores
    shares = [f.lockmanager_share for f in forecast_curve(spread, 2, [1, 2, 4, 8, 16, 32])]
    assert shares[0] == 0 and shares == sorted(shares)


def test_convoy_by_hand() -> None:
    """convoy_per_core 0.5 on a 2-core calibration: with m backends in the server the hold grows by (1 + 0.5 (m -
    1)) / 1.5. One core, D = 1 s, partition 0 acquired twice, hold 0.1 s: n=1 (nobody else in the server) holds
    2 x 0.1 / 1.5 per transaction; n=2 (one backend in the server at n=1) holds 2 x 0.1."""
    d = Demands(1.0, (2.0, *ZERO16[1:]), costs(lwlock_hold_s=0.1, convoy_per_core=0.5))
    f1, f2 = forecast_curve(d, 1, [1, 2])
    assert f1.hottest_partition_saturation_tps == pytest.approx(1.5 / 0.2)
    assert f2.hottest_partition_saturation_tps == pytest.approx(1 / 0.2)


def test_preempted_holder_convoy_by_hand() -> None:
    """The time asleep behind a preempted holder (issue 27): 2 cores, tick 4 ms, a main-table lock's CPU 1 µs,
    D = 1 ms, partition 0 acquired twice per transaction, X = 1,000/s, 3 backends runnable and in the server, think
    time 0. Another backend on the holder's core: 1 - 0.5^2 = 0.75; stalls/s 0.75 x 1,000 x 2 x 1 µs / 4 ms =
    0.375; waiters min(2, 2 x 4 ms / 1 ms) = 2, each asleep 4 ms - 2 x 1 ms / 4 = 3.5 ms, then 0.5 ms for a core:
    0.375 x 2 x 4 ms = 3 ms asleep per second, 3 µs per transaction. With think time 2 ms and 16 clients, the 13
    outside send their next call within the tick: min(15, 8) = 8 waiters, each asleep 4 ms - 8 x 1 ms / 4 = 2 ms:
    0.375 x 8 x 2.5 ms = 7.5 ms per second."""
    d = Demands(1e-3, (2.0, *ZERO16[1:]), costs(fastpath_lock_cpu_s=1e-6, sched_tick_s=4e-3))
    at = dict(throughput_tps=1000.0, runnable=3.0, in_server=3.0, cpu_s=1e-3, wake_s=0.5e-3)
    assert convoy_lockmanager_s(d, 2, population=3, think_s=0.0, **at) == pytest.approx(3e-6)
    assert convoy_lockmanager_s(d, 2, population=16, think_s=2e-3, **at) == pytest.approx(7.5e-6)
    # one backend runnable: nobody preempts the holder; no tick: no convoy
    assert convoy_lockmanager_s(d, 2, population=3, think_s=0.0, **{**at, "runnable": 1.0}) == 0.0
    no_tick = replace(d, costs=replace(d.costs, sched_tick_s=0.0))
    assert convoy_lockmanager_s(no_tick, 2, population=3, think_s=0.0, **at) == 0.0


def test_preempted_holder_convoy_adds_to_the_share_not_to_the_throughput() -> None:
    """pgbench -S with 100 extra indexes (86 main-table locks over the 16 partitions) at 16 clients on 2 cores: the
    convoy behind a preempted holder is in the LockManager share and AAS, and the throughput is the same without
    it (the sleep takes the place of the wait for a core: the cores stay busy)."""
    cls = TransactionClass("pgbench -S, 100 extra indexes", 16, (6,) * 6 + (5,) * 10, planned_relations=100)
    with_tick = forecast_curve(class_demands(cls, DEFAULT_CALIBRATION), 2, [1, 4, 16, 32])
    without = forecast_curve(class_demands(cls, replace(DEFAULT_CALIBRATION, sched_tick_s=0.0)), 2, [1, 4, 16, 32])
    assert [f.throughput_tps for f in with_tick] == [f.throughput_tps for f in without]
    assert [f.convoy_wait_ms for f in without] == [0.0] * 4
    assert with_tick[0].convoy_wait_ms == 0.0  # one client: nobody to preempt it, nobody to wait
    assert with_tick[2].lockmanager_share > without[2].lockmanager_share + 0.3
    assert with_tick[3].lockmanager_aas > with_tick[2].lockmanager_aas > without[2].lockmanager_aas


def test_preempted_holder_convoy_never_outnumbers_the_clients() -> None:
    """The README's statement (a primary-key lookup on a table with 17 indexes at mlpt 16: 16 fast-path locks, 3 in
    the main lock table, 2 in partition 4 and 1 in 14; its own cost 100 µs) at 1000 clients on 64 cores: the sessions
    on LockManager and on the CPU are at most the 1000 clients (uncapped, the convoy had read an AAS of 1,392), and at
    2 clients on 2
    cores, where nobody waits for a core, nobody sleeps behind a preempted holder."""
    cls = TransactionClass("select * from orders where id = 42", 16, README_LOAD, planned_relations=16, own_s=100e-6)
    (wide,) = forecast_curve(class_demands(cls, DEFAULT_CALIBRATION), 64, [1000])
    assert wide.convoy_wait_ms > 0
    assert wide.lockmanager_aas + wide.throughput_tps * wide.cpu_per_transaction_us / 1e6 <= 1000
    (pair,) = forecast_curve(class_demands(cls, DEFAULT_CALIBRATION), 2, [2])
    assert pair.convoy_wait_ms == pytest.approx(0.0, abs=1e-9)


def test_binding_text_names_the_convoy_when_it_makes_the_share() -> None:
    """The README's statement with an own cost of 300 µs at 400 clients on 64 cores: the CPU binds, yet most active
    sessions sleep behind preempted holders; the binding text must not say the backends wait less on the lock
    partitions than on the cores without naming that convoy. At 1 ms the share is under half: the plain CPU text."""
    texts = []
    for own_s in (300e-6, 1e-3):
        cls = TransactionClass("select * from orders where id = 42", 16, README_LOAD, planned_relations=16, own_s=own_s)
        (f,) = forecast_curve(class_demands(cls, DEFAULT_CALIBRATION), 64, [400])
        assert f.binding_resource == CPU
        texts.append(binding_text(f))
    assert re.fullmatch(r"CPU: backends spend more time on the cores than queued on any lock partition's LWLock; "
                        r"most of the LockManager share \(([5-9]\d)%\) is the convoy behind lock holders the kernel "
                        r"preempted \(400 clients on 64 cores\)", texts[0]), texts[0]
    assert texts[1] == "CPU: backends spend more time on the cores than waiting on any lock partition"


def test_a_cost_measured_under_load_grows_only_beyond_its_clients() -> None:
    """CPU growth 10 % per doubling of the clients beyond the cores; 2 cores; a transaction of 100 µs overhead
    (base statement 130 µs, of which 20 planning and 10 execution) and 1 ms of its own. Timed alone, the own cost
    grows with the overhead: at 8 clients (two doublings) 1.1 ms x 1.2 = 1.32 ms. Measured by pg_stat_statements
    under a load of 8 clients it already holds that growth: 0.1 x 1.2 + 1 = 1.12 ms at 8 clients, and at 16
    clients 0.1 x 1.3 + 1 x 1.3 / 1.2 = 1.2133 ms."""
    cal = costs(base_cpu_s=130e-6, base_plan_s=20e-6, base_exec_s=10e-6, cpu_growth_per_doubling=0.1)
    alone = TransactionClass("q", 1, ZERO16_INT, own_s=1e-3)
    loaded = replace(alone, own_at_clients=8)
    assert class_demands(alone, cal).cpu_at(8, 2) == pytest.approx(1.32e-3)
    assert class_demands(loaded, cal).cpu_at(8, 2) == pytest.approx(1.12e-3)
    assert class_demands(loaded, cal).cpu_at(16, 2) == pytest.approx(1.2133e-3, rel=1e-4)
    # a mix of both: only the loaded class's own cost is spared (weights 1:1)
    mix = workload_demands([alone, loaded], cal)
    assert mix.cpu_at(8, 2) == pytest.approx((1.32e-3 + 1.12e-3) / 2)


@pytest.mark.parametrize("own_us", [5, 20, 35])
def test_throughput_never_exceeds_the_cores_at_a_thousand_clients(own_us: int) -> None:
    """The README's statement at 1000 clients on 64 cores with a small own cost: the approximate MVA overshot (the
    run queue of population n - 1 too short for n) above the cores' bound, with the CPU as the binding resource
    (at 2000 clients lockscope printed 8.6 million TPS beside a CPU ceiling of 660,000). X <= C / D holds."""
    cls = TransactionClass("select * from orders where id = 42", 16, README_LOAD, planned_relations=16,
                           own_s=own_us * 1e-6)
    (f,) = forecast_curve(class_demands(cls, DEFAULT_CALIBRATION), 64, [1000])
    assert f.throughput_tps * f.cpu_per_transaction_us / 1e6 <= 64 * (1 + 1e-9)


def test_kernel_tick_from_the_build_configuration(tmp_path: Path) -> None:
    """``lab ceiling`` reads the scheduler tick from the kernel's configuration (plain or gzip), the first file that
    gives CONFIG_HZ; none: the built-in 4 ms."""
    import gzip

    from lockscope.lab.ceiling import kernel_tick_s

    plain, packed, empty = tmp_path / "config-x", tmp_path / "config.gz", tmp_path / "config-y"
    plain.write_text("# CONFIG_HZ_100 is not set\nCONFIG_HZ_1000=y\nCONFIG_HZ=1000\n")
    packed.write_bytes(gzip.compress(b"CONFIG_HZ_250=y\nCONFIG_HZ=250\n"))
    empty.write_text("CONFIG_PREEMPT_NONE=y\n")
    assert kernel_tick_s([tmp_path / "missing", plain]) == pytest.approx(0.001)
    assert kernel_tick_s([packed, plain]) == pytest.approx(0.004)
    assert kernel_tick_s([empty, tmp_path / "missing"]) == 0.004


def test_many_cores_peak_and_fall() -> None:
    """With the built-in convoy, a statement whose generic plan spills 1,000 locks over the 16 partitions peaks on
    64 cores and falls past the peak; without it the curve only rises to a plateau (hold 27.8 ns as above)."""
    spilled = TransactionClass("generic 1000", 16, (62,) * 8 + (63,) * 8, plans=False, executor_relations=1000)
    clients = [1, 8, 16, 32, 64, 128, 256]
    with_convoy = [f.throughput_tps for f in forecast_curve(class_demands(spilled, HELD), 64, clients)]
    peak = with_convoy.index(max(with_convoy))
    assert 0 < peak < len(clients) - 1
    assert with_convoy[-1] < 0.8 * with_convoy[peak]
    flat = replace(HELD, convoy_per_core=0.0)
    without = [f.throughput_tps for f in forecast_curve(class_demands(spilled, flat), 64, clients)]
    assert without == sorted(without)


def test_workload_is_calls_weighted() -> None:
    cal = Calibration(base_cpu_s=10e-6, fastpath_lock_cpu_s=0.0, main_table_lock_extra_cpu_s=0.0, lwlock_hold_s=1e-6)
    a = TransactionClass("a", 0, (4,) + (0,) * 15, calls=3)  # 5 acquisitions of p0
    b = TransactionClass("b", 0, (0, 1) + (0,) * 14, calls=1)  # 2 of p1
    d = workload_demands([a, b], cal)
    assert d.cpu_s == pytest.approx(10e-6)
    assert d.partition_acquisitions[:3] == pytest.approx((3 / 4 * 5, 1 / 4 * 2, 0.0))
    assert d.squares()[:3] == pytest.approx((3 / 4 * 25, 1 / 4 * 4, 0.0))
    assert d.partition_s[:3] == pytest.approx((3 / 4 * 5e-6, 1 / 4 * 2e-6, 0.0))
    assert workload_demands([a], cal) == class_demands(a, cal)
    with pytest.raises(ValueError):
        workload_demands([], cal)


@pytest.mark.parametrize("bad", [
    lambda: TransactionClass("x", -1, (0,) * 16),
    lambda: TransactionClass("x", 0, (0,) * 15),
    lambda: TransactionClass("x", 0, (0,) * 16, calls=0),
    lambda: Demands(cpu_s=0.0, partition_acquisitions=ZERO16, costs=costs()),
    lambda: Demands(cpu_s=-1.0, partition_acquisitions=ZERO16, costs=costs()),
    lambda: Demands(cpu_s=1.0, partition_acquisitions=ZERO16[1:], costs=costs()),
    lambda: Demands(cpu_s=1.0, partition_acquisitions=(-1.0, *ZERO16[1:]), costs=costs()),
    lambda: forecast(cpu_only(1.0), 0, 1),
    lambda: forecast(cpu_only(1.0), 1, 0),
])
def test_bad_model_input(bad: object) -> None:
    with pytest.raises(ValueError):
        bad()  # type: ignore[operator]


def test_default_calibration_is_the_recorded_lab_ceiling() -> None:
    """The built-in calibration is the one a recorded ``lab ceiling`` run wrote (its results directory is named in
    the source), apart from the source text."""
    cal = DEFAULT_CALIBRATION
    run = re.search(r"benchmarks/results/[^ ,;)]+/ceiling", cal.source)
    assert run, cal.source
    root = Path(__file__).parent.parent
    recorded = load_calibration(root / run.group(0) / "calibration.json")
    # the planner cost unit is benchmarks/cost_unit.py's recorded fit (BENCHMARKS.md), not the ceiling run's
    assert replace(recorded, source=cal.source, exec_s_per_cost_unit=cal.exec_s_per_cost_unit,
                   cost_estimate_error=cal.cost_estimate_error) == cal
    fit = f"fit: {cal.exec_s_per_cost_unit * 1e9:.1f} ns per cost unit, error factor {cal.cost_estimate_error:.2f}"
    assert fit in (root / "BENCHMARKS.md").read_text()


def test_calibration_json_round_trip(tmp_path: Path) -> None:
    cal = Calibration(base_cpu_s=4e-5, fastpath_lock_cpu_s=1e-6, main_table_lock_extra_cpu_s=5e-7,
                      lwlock_hold_s=2e-6, cpus=8, source="lockscope lab ceiling on test", base_plan_s=1e-5,
                      executor_relation_cpu_s=3e-6, convoy_per_core=0.5)
    path = tmp_path / "calibration.json"
    save_calibration(cal, path)
    assert json.loads(path.read_text())["schema"] == SCHEMA
    assert load_calibration(path) == cal
    assert load_calibration(path) != DEFAULT_CALIBRATION


def test_a_file_of_the_previous_schema_reads_without_the_statement_costs(tmp_path: Path) -> None:
    """A v2 file (before the statement costs) still forecasts: its statements cost the base statement's, and the
    convoy is the built-in one (a few cores cannot measure it)."""
    path = tmp_path / "v2.json"
    path.write_text('{"schema": "lockscope/calibration/v2", "base_cpu_s": 2e-5, "fastpath_lock_cpu_s": 1e-7, '
                    '"main_table_lock_extra_cpu_s": 0, "lwlock_hold_s": 1e-8}')
    cal = load_calibration(path)
    assert cal.base_plan_s == cal.base_exec_s == cal.executor_relation_cpu_s == 0.0
    assert cal.overhead_s(True) == pytest.approx(2e-5)
    assert cal.convoy_per_core == DEFAULT_CALIBRATION.convoy_per_core > 0


@pytest.mark.parametrize(("content", "message"), [
    ("{", "not JSON"),
    ('{"schema": "lockscope/other/v1"}', "not a calibration file"),
    ('[1, 2]', "not a calibration file"),
    ('{"schema": "lockscope/calibration/v1", "base_cpu_s": 1}', "earlier lockscope .* run lockscope lab ceiling"),
    ('{"schema": "lockscope/calibration/v2", "base_cpu_s": 1}', "missing fields"),
    ('{"schema": "lockscope/calibration/v2", "base_cpu_s": 1, "fastpath_lock_cpu_s": 0, '
     '"main_table_lock_extra_cpu_s": 0, "lwlock_hold_s": 0, "extra": 1}', "unknown fields"),
    ('{"schema": "lockscope/calibration/v2", "base_cpu_s": -1, "fastpath_lock_cpu_s": 0, '
     '"main_table_lock_extra_cpu_s": 0, "lwlock_hold_s": 0}', "base_cpu_s"),
    ('{"schema": "lockscope/calibration/v2", "base_cpu_s": "1", "fastpath_lock_cpu_s": 0, '
     '"main_table_lock_extra_cpu_s": 0, "lwlock_hold_s": 0}', "base_cpu_s"),
    ('{"schema": "lockscope/calibration/v2", "base_cpu_s": 1, "fastpath_lock_cpu_s": 0, '
     '"main_table_lock_extra_cpu_s": 0, "lwlock_hold_s": 0, "cpus": 0}', "cpus"),
])
def test_bad_calibration_file(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "c.json"
    path.write_text(content)
    with pytest.raises(BadInputError, match=message):
        load_calibration(path)
    with pytest.raises(BadInputError, match="cannot read"):
        load_calibration(tmp_path / "missing.json")


def test_think_time_by_littles_law_unless_the_cores_are_saturated() -> None:
    """10 connections, 1,000 calls/s, 1 session active on average: each call is 1 ms in the server, so each
    connection spends 9 ms outside it between calls. With the sampled backends on CPU filling both cores, the
    unseen time is the wait for a core (the model's), not think time."""
    from lockscope.forecast.live import LivePoint

    idle_cores = LivePoint(1000.0, 10, "test", aas=1.0, aas_cpu=0.5, lockmanager_share=0.0, samples=100)
    assert idle_cores.server_time_s == pytest.approx(0.001)
    assert idle_cores.think_s(2) == pytest.approx(0.009)
    busy_cores = replace(idle_cores, aas=2.0, aas_cpu=1.9)
    assert busy_cores.think_s(2) == 0.0
    assert busy_cores.think_s(8) == pytest.approx(0.008)
