"""The forecast model (pure): exact MVA against hand-computed networks, the asymptotic bounds, partition placement,
calls-weighted aggregation, and the calibration's defaults and JSON file."""

from __future__ import annotations

import itertools
import json
import math
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
    forecast,
    forecast_curve,
    hold_stretch,
    workload_demands,
)

ZERO16 = (0.0,) * 16
ONE_PARTITION = (24,) + (0,) * 15  # 24 main-table locks, all in partition 0
SPREAD = (2,) * 8 + (1,) * 8  # the same 24 over the 16 partitions


def cpu_only(d: float) -> Demands:
    return Demands(cpu_s=d, partition_s=ZERO16)


def test_single_centre() -> None:
    """One single-server centre, D = 10 ms: R(n) = D (1 + Q(n-1)) with Q(n-1) = n - 1, so R = n D, X = 1 / D."""
    for f in forecast_curve(cpu_only(0.010), 1, [1, 2, 5, 40]):
        assert f.throughput_tps == pytest.approx(100.0)
        assert f.response_time_ms == pytest.approx(10.0 * f.clients)
        assert f.cpu_utilisation == pytest.approx(1.0)
        assert f.binding_resource == CPU and f.hottest_partition is None
        assert f.lockmanager_share == 0.0 and f.partition_wait_ms == 0.0
        assert f.hottest_partition_saturation_tps == math.inf


def test_two_balanced_centres() -> None:
    """CPU (1 core) and partition 3, 1 s each. By hand: n=1 R=2 X=1/2 Q=1/2 each; n=2 R_k=3/2 R=3 X=2/3 Q=1;
    n=3 R_k=2 R=4 X=3/4 (balanced network: X = N / (D (N + K - 1)))."""
    demands = Demands(cpu_s=1.0, partition_s=(0.0,) * 3 + (1.0,) + (0.0,) * 12)
    curve = forecast_curve(demands, 1, [1, 2, 3, 9])
    assert [f.throughput_tps for f in curve] == pytest.approx([1 / 2, 2 / 3, 3 / 4, 9 / 10])
    assert [f.response_time_ms for f in curve] == pytest.approx([2000.0, 3000.0, 4000.0, 10000.0])
    # partition wait = R_p - D_p: n=2: 0.5 s of 3 s
    assert curve[1].partition_wait_ms == pytest.approx(500.0)
    assert curve[1].lockmanager_share == pytest.approx(1 / 6)
    assert curve[1].lockmanager_aas == pytest.approx(2 / 6)
    assert curve[1].partition_utilisation[3] == pytest.approx(2 / 3)
    assert curve[0].binding_resource == CPU  # a tie goes to the CPU
    assert curve[0].ceiling_tps == pytest.approx(1.0) and curve[0].knee_clients == pytest.approx(2.0)
    assert curve[0].hottest_partition == 3


def test_seidmann_multi_server_cpu() -> None:
    """C = 2 cores, D = 2 s: a queueing part of 1 s and a delay of 1 s. By hand: n=1 R=2 X=0.5 Q=0.5; n=2
    R_q=1.5 R=2.5 X=0.8 Q=1.2; n=3 R_q=2.2 R=3.2 X=0.9375; n -> inf: X -> C / D = 1."""
    curve = forecast_curve(cpu_only(2.0), 2, [1, 2, 3, 2000])
    assert [f.throughput_tps for f in curve[:3]] == pytest.approx([0.5, 0.8, 0.9375])
    assert curve[3].throughput_tps == pytest.approx(1.0, rel=1e-3)
    assert curve[0].ceiling_tps == pytest.approx(1.0) and curve[0].cpu_ceiling_tps == pytest.approx(1.0)
    assert curve[2].cpu_utilisation == pytest.approx(0.9375)


def test_bounds_as_clients_grow() -> None:
    """X(N) never exceeds min(N / D_total, ceiling), grows with N, and tends to the ceiling; binding resource and
    ceiling are the largest demand per server."""
    demands = Demands(cpu_s=4e-4, partition_s=(1e-4, 3e-4) + (0.0,) * 14)  # cpu 2e-4 per core < 3e-4
    clients = [1, 2, 4, 8, 16, 64, 256, 1024]
    curve = forecast_curve(demands, 2, clients)
    assert ceiling_tps(demands, 2) == pytest.approx(1 / 3e-4)
    for n, f in zip(clients, curve, strict=True):
        assert f.throughput_tps <= min(n / demands.total_s, f.ceiling_tps) * (1 + 1e-12)
        # a lone client spends as long at the CPU as at the partitions: no queue binds yet
        assert f.binding_resource == ("cpu" if n == 1 else "partition 1") and f.hottest_partition == 1
    assert all(a.throughput_tps <= b.throughput_tps * (1 + 1e-12) for a, b in itertools.pairwise(curve))
    assert curve[0].throughput_tps == pytest.approx(1 / demands.total_s)
    assert curve[-1].throughput_tps == pytest.approx(1 / 3e-4, rel=1e-3)
    assert curve[-1].partition_utilisation[1] == pytest.approx(1.0, rel=1e-3)
    assert curve[-1].lockmanager_share > 0.99
    assert curve[0].knee_clients == pytest.approx(8e-4 / 3e-4)


def test_partition_demand_counts_acquisitions_and_release_pass() -> None:
    """Demand on partition p = (n_p + 1 if n_p > 0) x hold (lock.c LockAcquireExtended, LockReleaseAll);
    CPU = base + fast-path cost x all locks + extra x main-table locks."""
    cal = Calibration(base_cpu_s=50e-6, fastpath_lock_cpu_s=1e-6, main_table_lock_extra_cpu_s=0.5e-6,
                      lwlock_hold_s=2e-6)
    d = class_demands(TransactionClass("q", fast_path_locks=16, partition_load=SPREAD), cal)
    assert d.cpu_s == pytest.approx(50e-6 + 40 * 1e-6 + 24 * 0.5e-6)
    assert d.partition_s == pytest.approx((6e-6,) * 8 + (4e-6,) * 8)
    none = class_demands(TransactionClass("fast", fast_path_locks=3, partition_load=(0,) * 16), cal)
    assert none.partition_s == ZERO16 and none.cpu_s == pytest.approx(53e-6)


def test_spread_partitions_give_a_higher_ceiling() -> None:
    """24 main-table locks in one partition: 25 acquisitions there; spread over 16: at most 3. Same CPU."""
    one = class_demands(TransactionClass("one", 16, ONE_PARTITION), DEFAULT_CALIBRATION)
    spread = class_demands(TransactionClass("spread", 16, SPREAD), DEFAULT_CALIBRATION)
    assert one.cpu_s == pytest.approx(spread.cpu_s)
    assert ceiling_tps(spread, 2) > ceiling_tps(one, 2)
    f_one, f_spread = forecast(one, 2, 16), forecast(spread, 2, 16)
    assert f_spread.throughput_tps > f_one.throughput_tps
    assert f_one.binding_resource == "partition 0"
    assert f_one.lockmanager_share > f_spread.lockmanager_share
    # one partition: nearly every backend waits there, the run queue is short, holds are not stretched
    assert f_one.hottest_partition_saturation_tps == pytest.approx(1 / (25 * DEFAULT_CALIBRATION.lwlock_hold_s))
    # a lone client never waits; with 2 clients on 2 cores no hold is stretched; with 16 the holds are
    f1, f2, f16 = forecast_curve(spread, 2, [1, 2, 16])
    assert f1.lockmanager_share == 0 and f1.binding_resource == CPU
    assert f2.hottest_partition_saturation_tps == pytest.approx(1 / (3 * DEFAULT_CALIBRATION.lwlock_hold_s))
    assert f16.hottest_partition_saturation_tps < f2.hottest_partition_saturation_tps / 2


def test_holds_on_cpu_are_counted_once_and_stretched_by_the_run_queue() -> None:
    """Simultaneous resource possession: a lone client's response time is its CPU demand (the hold is CPU work);
    processor sharing: beyond the cores the hold lasts runnable / cores times longer (hold_stretch), so the
    LockManager share of spread locks climbs with clients while plain MVA centres would let it fall."""
    assert (hold_stretch(0, 2), hold_stretch(2, 2), hold_stretch(8, 2)) == (1.0, 1.0, 4.0)
    on_cpu = class_demands(TransactionClass("spread", 16, SPREAD), DEFAULT_CALIBRATION)
    plain = Demands(on_cpu.cpu_s, on_cpu.partition_s, on_cpu.cpu_saturated_factor, holds_on_cpu=False)
    assert forecast(on_cpu, 2, 1).response_time_ms == pytest.approx(on_cpu.cpu_s * 1000)
    assert forecast(plain, 2, 1).response_time_ms == pytest.approx((on_cpu.cpu_s + sum(on_cpu.partition_s)) * 1000)
    shares = [f.lockmanager_share for f in forecast_curve(on_cpu, 2, [2, 4, 8, 16, 32])]
    assert shares == sorted(shares) and shares[-1] > 0.5
    assert forecast(plain, 2, 32).lockmanager_share < 0.05


def test_default_calibration_against_the_one_partition_measurement() -> None:
    """pg-lock-internals.md 6b (PG 18.6, 2 cores, 16 clients): 24 spilled locks in one partition gave 12.1-12.2k
    TPS (the hold time is calibrated on it, so TPS matches by construction) and LockManager 86% of active-session
    samples, which the model was NOT fitted to: it predicts 89% (82% before holds counted as CPU work and stretched
    by the run queue)."""
    f = forecast(class_demands(TransactionClass("one", 16, ONE_PARTITION), DEFAULT_CALIBRATION), 2, 16)
    assert 12_100 <= f.throughput_tps <= 12_200
    assert f.lockmanager_share == pytest.approx(0.89, abs=0.01)


def test_workload_is_calls_weighted() -> None:
    cal = Calibration(base_cpu_s=10e-6, fastpath_lock_cpu_s=0.0, main_table_lock_extra_cpu_s=0.0, lwlock_hold_s=1e-6)
    a = TransactionClass("a", 0, (4,) + (0,) * 15, calls=3)  # cpu 10 µs, p0 5 µs
    b = TransactionClass("b", 0, (0, 1) + (0,) * 14, calls=1)  # cpu 10 µs, p1 2 µs
    d = workload_demands([a, b], cal)
    assert d.cpu_s == pytest.approx(10e-6)
    assert d.partition_s[:3] == pytest.approx((3 / 4 * 5e-6, 1 / 4 * 2e-6, 0.0))
    assert workload_demands([a], cal) == class_demands(a, cal)
    with pytest.raises(ValueError):
        workload_demands([], cal)


@pytest.mark.parametrize("bad", [
    lambda: TransactionClass("x", -1, (0,) * 16),
    lambda: TransactionClass("x", 0, (0,) * 15),
    lambda: TransactionClass("x", 0, (0,) * 16, calls=0),
    lambda: Demands(cpu_s=0.0, partition_s=ZERO16),
    lambda: Demands(cpu_s=-1.0, partition_s=ZERO16),
    lambda: forecast(cpu_only(1.0), 0, 1),
    lambda: forecast(cpu_only(1.0), 1, 0),
])
def test_bad_model_input(bad: object) -> None:
    with pytest.raises(ValueError):
        bad()  # type: ignore[operator]


def test_default_calibration_figures() -> None:
    """Derived from published-benchmarks.md 'Measured here' (2 / 35,400, 2 / 26,200, 2 / 24,100 s per transaction)
    and 6b (1 / (12,150 x 25) s per acquisition)."""
    cal = DEFAULT_CALIBRATION
    assert cal.fastpath_lock_cpu_s == pytest.approx((2 / 26_200 - 2 / 35_400) / 30)
    assert cal.base_cpu_s == pytest.approx(2 / 35_400 - 2 * cal.fastpath_lock_cpu_s)
    assert cal.main_table_lock_extra_cpu_s == pytest.approx((2 / 24_100 - 2 / 26_200) / 16)
    assert cal.lwlock_hold_s == pytest.approx(1 / (12_150 * 25))
    assert (round(cal.base_cpu_s * 1e6, 2), round(cal.fastpath_lock_cpu_s * 1e6, 3),
            round(cal.main_table_lock_extra_cpu_s * 1e6, 3), round(cal.lwlock_hold_s * 1e6, 2)) \
        == (55.17, 0.661, 0.416, 3.29)
    assert cal.cpus == 2


def test_calibration_json_round_trip(tmp_path: Path) -> None:
    cal = Calibration(base_cpu_s=4e-5, fastpath_lock_cpu_s=1e-6, main_table_lock_extra_cpu_s=5e-7,
                      lwlock_hold_s=2e-6, cpus=8, source="lockscope lab ceiling on test")
    path = tmp_path / "calibration.json"
    save_calibration(cal, path)
    doc = json.loads(path.read_text())
    assert doc["schema"] == SCHEMA == "lockscope/calibration/v1"
    assert load_calibration(path) == cal
    assert load_calibration(path) != DEFAULT_CALIBRATION


@pytest.mark.parametrize(("content", "message"), [
    ("{", "not JSON"),
    ('{"schema": "lockscope/other/v1"}', "not a calibration file"),
    ('[1, 2]', "not a calibration file"),
    ('{"schema": "lockscope/calibration/v1", "base_cpu_s": 1}', "missing fields"),
    ('{"schema": "lockscope/calibration/v1", "base_cpu_s": 1, "fastpath_lock_cpu_s": 0, '
     '"main_table_lock_extra_cpu_s": 0, "lwlock_hold_s": 0, "extra": 1}', "unknown fields"),
    ('{"schema": "lockscope/calibration/v1", "base_cpu_s": -1, "fastpath_lock_cpu_s": 0, '
     '"main_table_lock_extra_cpu_s": 0, "lwlock_hold_s": 0}', "base_cpu_s"),
    ('{"schema": "lockscope/calibration/v1", "base_cpu_s": "1", "fastpath_lock_cpu_s": 0, '
     '"main_table_lock_extra_cpu_s": 0, "lwlock_hold_s": 0}', "base_cpu_s"),
    ('{"schema": "lockscope/calibration/v1", "base_cpu_s": 1, "fastpath_lock_cpu_s": 0, '
     '"main_table_lock_extra_cpu_s": 0, "lwlock_hold_s": 0, "cpus": 0}', "cpus"),
])
def test_bad_calibration_file(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "c.json"
    path.write_text(content)
    with pytest.raises(BadInputError, match=message):
        load_calibration(path)
    with pytest.raises(BadInputError, match="cannot read"):
        load_calibration(tmp_path / "missing.json")
