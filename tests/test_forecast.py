"""``lockscope forecast`` and ``lockscope lab ceiling`` on real servers: lock partitions of measured spilled locks,
exact what-ifs, a calibration written by the lab and read by the forecast, one-line errors."""

from __future__ import annotations

import io
import json
import math
import os
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from lockscope.db import Session, connect, run_script
from lockscope.footprint import measure_footprint
from lockscope.forecast.calibration import DEFAULT_CALIBRATION, Calibration, load_calibration
from lockscope.forecast.engine import ForecastReport, ScenarioForecast, WhatIf, forecast_statement
from lockscope.lockpart import lock_partition, transaction_traffic
from lockscope.report.forecast_json import forecast_to_dict
from lockscope.report.forecast_terminal import render_forecast
from lockscope.server import ScratchServer, ScratchSettings
from lockscope.shapes import StatementShape

from .helpers import one_line_error, run

#: A table with its primary key and 24 more indexes: 26 relations, 10 beyond the 16 slots at mlpt 16 (PG 18).
SCHEMA = """
create table fc (id int primary key, a int);
do $$ begin for i in 1..24 loop execute format('create index fc_i%s on fc (a)', lpad(i::text, 2, '0')); end loop;
end $$;
"""
STATEMENT = "select * from fc where id = $1"


@pytest.fixture(scope="module")
def server16() -> Iterator[ScratchServer]:
    with ScratchServer(None, ScratchSettings(max_locks_per_transaction=16)) as server:
        run_script(server.conninfo(), SCHEMA)
        yield server


@pytest.fixture()
def session16(server16: ScratchServer) -> Iterator[Session]:
    with connect(server16.conninfo()) as session:
        yield session


def _database_oid(session: Session) -> int:
    return int(session.oracle_rows("select oid::int8 from pg_database where datname = current_database()")[0][0])


def test_statement_partitions_are_the_lock_partitions_of_the_measured_spilled_locks(session16: Session) -> None:
    report = forecast_statement(session16, STATEMENT, params=["1"], calibration=DEFAULT_CALIBRATION, cores=2,
                                clients=16)
    db = _database_oid(session16)
    assert report.database_oid == db
    (shape, f), = report.measured.statements
    measured = measure_footprint(session16, STATEMENT, params=["1"]).executions[0]
    spilled = {lk.relation_oid for lk in measured.locks if not lk.fastpath}
    assert len(shape.locks) == 26
    assert len(shape.main_table_locks) == 10 == len(spilled)
    assert {lk.relation_oid for lk in shape.main_table_locks} == spilled
    for lk in shape.main_table_locks:
        assert lk.database_oid == db
        assert lk.partition == lock_partition(db, lk.relation_oid)
    load = [0] * 16
    for oid in spilled:
        load[lock_partition(db, oid)] += 1
    assert shape.partition_load == tuple(load)
    assert sum(report.measured.partition_locks_per_transaction) == 10
    # the model charges each partition the transaction's LWLock traffic there (lockpart.transaction_traffic, its
    # counts checked by hand in tests/test_lockpart.py) at the calibration's hold: the measured locks, not a copy
    hold = DEFAULT_CALIBRATION.lwlock_hold_s
    traffic = transaction_traffic(load).per_partition
    assert report.measured.demands.partition_s == pytest.approx([n * hold for n in traffic])
    assert sum(traffic) > 10 and all((t > 0) == (n > 0) for t, n in zip(traffic, load, strict=True))
    assert f.hottest_partition == load.index(max(load))  # the most locks; the lowest partition on a tie


def test_drop_index_what_if_removes_exactly_the_locks_the_server_then_spills(server16: ScratchServer) -> None:
    drops = ("fc_i03", "fc_i11", "fc_i24")
    with connect(server16.conninfo()) as session:
        report = forecast_statement(session, STATEMENT, params=["1"], calibration=DEFAULT_CALIBRATION, cores=2,
                                    clients=8, what_if=WhatIf(drop_indexes=drops))
        assert report.what_if is not None
        (before, _), = report.measured.statements
        (after, _), = report.what_if.statements
        assert len(before.main_table_locks) == 10
        assert len(after.locks) == 23
        assert len(after.main_table_locks) == 7  # 26 - 3 relations, 16 fast-path slots
        # mlpt 1024 on PG 18: 64 groups of 16, 26 relations cannot fill one group
        wide = forecast_statement(session, STATEMENT, params=["1"], calibration=DEFAULT_CALIBRATION, cores=2,
                                  clients=8, what_if=WhatIf(max_locks_per_transaction=1024))
        assert wide.what_if is not None
        assert len(wide.what_if.statements[0][0].main_table_locks) == 0
        assert wide.what_if.forecast.binding_resource == "cpu"
    # drop them for real and measure: the server spills exactly the predicted set
    run_script(server16.conninfo(), "".join(f"drop index {name};" for name in drops))
    try:
        with connect(server16.conninfo()) as session:
            remeasured = measure_footprint(session, STATEMENT, params=["1"]).executions[0]
        assert {lk.relation_oid for lk in remeasured.locks if not lk.fastpath} == \
            {lk.relation_oid for lk in after.main_table_locks}
    finally:
        run_script(server16.conninfo(), "".join(f"create index {name} on fc (a);" for name in drops))


def test_cli_statement_json_and_html(tmp_path: Path) -> None:
    setup = tmp_path / "setup.sql"
    setup.write_text(SCHEMA)
    html = tmp_path / "f.html"
    proc = run("forecast", "--scratch", "--statement", STATEMENT, "--param", "1", "--setup", str(setup),
               "--clients", "8", "--cores", "4", "--assume-mlpt", "16", "--drop-index", "fc_i01", "--json", "-",
               "--html", str(html))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["schema"] == "lockscope/forecast/v1"
    assert doc["model"] == {"cores": 4, "clients": 8, "clients_source": "--clients", "think_ms": 0.0}
    measured = doc["measured"]["statements"][0]
    assert measured["relation_locks"] == 26 and measured["main_table_locks"] == 0  # scratch server at mlpt 64
    what_if = doc["what_if_forecast"]["statements"][0]
    assert what_if["relation_locks"] == 25 and what_if["main_table_locks"] == 9
    assert doc["what_if_forecast"]["capacity"]["max_locks_per_transaction"] == 16
    assert all(m["partition"] == lock_partition(doc["server"]["database_oid"], m["relation_oid"])
               for m in what_if["main_table"])
    text = html.read_text()
    assert text.startswith("<!DOCTYPE html>") and "<svg" in text and "http://" not in text.split("<svg", 1)[0]


@pytest.mark.slow
@pytest.mark.alone  # the fit needs the one-partition point's LWLock sleeps: a quick test on the other core
# took the CPU they show up in (lwlock_hold_s fitted 0 in 1 of 3 fresh-clone runs on 2026-11-27)
def test_lab_ceiling_quick_writes_a_calibration_that_forecast_loads(tmp_path: Path) -> None:
    out = tmp_path / "ceiling"
    proc = run("lab", "ceiling", "--quick", "--duration", "1", "--repeats", "1", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    calibration = load_calibration(out / "calibration.json")
    assert calibration.cpus == (os.cpu_count() or 1)
    assert calibration.base_cpu_s > 0 and calibration.cpu_growth_per_doubling >= 0
    assert calibration.lwlock_hold_s > 0  # the one-partition point sleeps
    results = json.loads((out / "results.json").read_text())
    assert results["extras"]["verification"]["one"]["partitions"] == [5]
    assert results["extras"]["verification"]["spread"]["partitions"] == list(range(16))
    cores = os.cpu_count() or 1
    assert {(r["point"], r["clients"]) for r in results["rows"]} >= {("generic_one", 8), ("generic_spread", 8),
                                                                     ("pk_select_simple", cores)}
    assert all(r["context_switches_per_transaction"] > 0 and r["cpu_us_per_transaction"] > 0
               for r in results["rows"])  # /proc/stat read over every point
    proc = run("forecast", "--scratch", "--statement", "select 1", "--calibration", str(out / "calibration.json"),
               "--json", "-")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["calibration"] == calibration.to_json()


@pytest.mark.parametrize(("args", "message"), [
    (("forecast", "--scratch"), "a scratch server has no workload: give a statement (SQL, -f FILE or -"),
    (("forecast", "--param", "1"), "--param applies to a statement (SQL, -f FILE or -)"),
    (("forecast", "--statement", "select 1", "--mlpt", "5"), "--mlpt: max_locks_per_transaction is at least 10"),
    (("forecast", "--statement", "select 1", "--calibration", "/nonexistent/cal.json"),
     "cannot read calibration file /nonexistent/cal.json"),
    (("forecast", "--statement", "select $1"), "parameter"),
    (("forecast", "--statement", "select 1", "--assume-version", "9"), "--assume-version 9"),
    (("forecast", "--statement", "select 1", "--clients", "0"), "must be at least 1"),
    (("forecast", "--statement", "select 1", "--json", "/nonexistent/dir/f.json"), "cannot write"),
    (("lab", "ceiling", "--partition", "16"), "--partition must be between 0 and 15"),
])
def test_cli_bad_input_is_one_line(args: tuple[str, ...], message: str) -> None:
    proc = run(*args)
    assert proc.returncode == 2, proc.stderr
    assert message in one_line_error(proc)


def test_cli_bad_calibration_and_unknown_index(tmp_path: Path) -> None:
    bad = tmp_path / "cal.json"
    bad.write_text('{"schema": "lockscope/calibration/v2", "base_cpu_s": -1}')
    proc = run("forecast", "--statement", "select 1", "--calibration", str(bad))
    assert proc.returncode == 2 and "calibration file: missing fields" in one_line_error(proc)
    bad.write_text('{"schema": "lockscope/calibration/v1", "base_cpu_s": 1}')  # an earlier lockscope's file
    proc = run("forecast", "--statement", "select 1", "--calibration", str(bad))
    assert proc.returncode == 2 and "run lockscope lab ceiling again" in one_line_error(proc)
    proc = run("forecast", "--scratch", "--statement", "select 1", "--drop-index", "no_such_index")
    assert proc.returncode == 2
    assert one_line_error(proc, progress="lockscope ") == \
        "lockscope: error: --drop-index no_such_index: no such relation in database postgres"


#: A real ``lab ceiling`` run (2-core VM, PostgreSQL 18.6, 2026-11-26): its rows and the calibration it wrote.
CEILING_RUN = Path(__file__).resolve().parent.parent / "benchmarks" / "results" / "calibration-2026-11-26" / "ceiling"


def test_fit_of_a_recorded_lab_ceiling_reproduces_its_points() -> None:
    """The measured rows of a real ``lab ceiling`` run, fitted: every figure is finite and >= 0, the costs every
    transaction pays are > 0, and it is the calibration that run wrote. The fitted model gives back what was
    measured within 10 %: pgbench -S (2 relation locks, all fast path) with 1, 2 (the cores) and 16 clients, and
    the 24 spilled locks in one partition and spread over the 16 (16 clients), the one partition the slower in
    both. A slowed copy of every row changes nothing (the best TPS of a point is kept)."""
    from lockscope.forecast.fit import fit_calibration
    from lockscope.forecast.model import TransactionClass, class_demands, forecast

    doc = json.loads((CEILING_RUN / "results.json").read_text())
    p, base_ms = doc["parameters"], doc["extras"]["base_statement_ms"]

    def fit(rows: list[dict[str, Any]]) -> tuple[Calibration, dict[str, Any]]:
        return fit_calibration(rows, spilled=p["spilled"], clients=p["clients"], cores=p["cores"],
                               server_version=doc["servers"][0]["pg_version"],
                               base_statement_ms=tuple(base_ms["pg_stat_statements"]),
                               base_explain_ms=tuple(base_ms["explain"]))

    cal, checks = fit(doc["rows"])
    figures = {k: v for k, v in cal.to_json().items() if isinstance(v, float)}
    assert all(math.isfinite(v) and v >= 0 for v in figures.values()), figures
    paid = ("base_cpu_s", "generic_base_cpu_s", "fastpath_lock_cpu_s", "planned_relation_cpu_s",
            "executor_relation_cpu_s", "idle_round_trip_s", "lwlock_hold_s", "sleep_cpu_s", "wake_latency_s")
    assert all(figures[k] > 0 for k in paid), figures
    assert figures == pytest.approx({k: v for k, v in load_calibration(CEILING_RUN / "calibration.json").to_json()
                                     .items() if isinstance(v, float)}, rel=1e-9)

    def measured(point: str, clients: int) -> float:
        return max(r["tps"] for r in doc["rows"] if (r["point"], r["clients"], r["max_locks_per_transaction"])
                   == (point, clients, 16))

    pk_select = class_demands(TransactionClass("pgbench -S", fast_path_locks=2, partition_load=(0,) * 16), cal)
    for clients in (1, 2, 16):
        assert forecast(pk_select, p["cores"], clients).throughput_tps == \
            pytest.approx(measured("pk_select_simple", clients), rel=0.1), clients
    assert checks["one_partition_predicted_tps"] == pytest.approx(measured("generic_one", 16), rel=0.1)
    assert checks["spread_predicted_tps"] == pytest.approx(measured("generic_spread", 16), rel=0.1)
    assert checks["one_partition_predicted_tps"] < checks["spread_predicted_tps"]
    assert measured("generic_one", 16) < measured("generic_spread", 16)
    slowed = [{**r, "tps": r["tps"] / 3} for r in doc["rows"]]
    assert fit(doc["rows"] + slowed)[0] == cal


def _pgbench_select_planned(scenario: ScenarioForecast) -> StatementShape:
    """pgbench -S's statement as its planned shape. A statement's calls come as one shape per plan-cache phase
    (workload/phases.py): simple-protocol pgbench plans every call, but a 2 s interval's counters can leave a sliver of
    "reuses" (calls counted at the end of execution, plans at planning): the planned shape carries the calls."""
    return max((sh for sh, _ in scenario.statements
                if sh.statement.lower() == "select abalance from pgbench_accounts where aid = $1"),
               key=lambda sh: sh.calls_per_s or 0.0)


@pytest.fixture(scope="module")
def pgbench20() -> Iterator[ScratchServer]:
    """pgbench's tables (scale 1) with 20 extra indexes on pgbench_accounts (22 relations: 6 in the main table at
    mlpt 16), pg_stat_statements preloaded: the live loads' server."""
    from lockscope.demo import set_extra_indexes
    from lockscope.lab.load import install_pg_stat_statements
    from lockscope.pgbench import pgbench_init

    with ScratchServer(None, ScratchSettings(max_locks_per_transaction=16)) as server:
        pgbench_init(server, 1)
        install_pg_stat_statements(server)
        set_extra_indexes(server.conninfo(), 20)
        yield server


def test_workload_forecast_reads_pg_stat_statements_rates_and_partitions(pgbench20: ScratchServer,
                                                                          load_lock: None) -> None:
    """forecast of a live pgbench load (2 clients, 6 s): a load, it takes ``load_lock``."""
    from lockscope.forecast.engine import forecast_workload
    from lockscope.pgbench import start_pgbench

    server = pgbench20
    with start_pgbench(server, clients=2, duration_s=6), connect(server.conninfo()) as session:
        report = forecast_workload(session, calibration=DEFAULT_CALIBRATION, cores=2, clients=None,
                                   interval_s=2, what_if=WhatIf(drop_indexes=("pgbench_accounts_extra_1",)),
                                   dsn=server.conninfo())
        db = _database_oid(session)
    pk = _pgbench_select_planned(report.measured)
    assert pk.calls_per_s is not None and pk.calls_per_s > 0 and pk.flags == "predicted"
    assert len(pk.locks) == 22 and len(pk.main_table_locks) == 6 == pk.measured_main_table_locks
    assert all(lk.partition == lock_partition(db, lk.relation_oid) for lk in pk.main_table_locks)
    assert report.measured.rate_tps == pytest.approx(sum(s.calls_per_s or 0 for s, _ in report.measured.statements))
    # the population is the connections that ran statements over the interval: pgbench's 2, whatever the
    # instant; the model is compared with the measured calls/s before it forecasts
    assert report.live is not None and report.live.population == report.clients == 2
    assert report.clients_source.startswith("client backends that ran statements in the interval")
    assert report.anchor is not None and report.anchor.measured_tps == pytest.approx(report.measured.rate_tps)
    assert any(n.startswith("model vs now") for n in report.notes)
    assert report.what_if is not None
    assert len(_pgbench_select_planned(report.what_if).main_table_locks) == 5


def test_statement_mode_takes_each_clients_think_time_from_the_sampled_seconds(pgbench20: ScratchServer,
                                                                               load_lock: None) -> None:
    """Statement mode with --dsn (issue 27, round 4): a short statement (pgbench -S's) under pgbench -S with 2
    clients, whose cycle is mostly outside the server (pgbench, the protocol round trip), forecast 1 s into a 4 s
    load from 2 s of samples: each client's think time comes from those seconds as in workload mode (Little's
    law), the notes and the JSON say so, and the forecast is closer to pgbench's TPS than the same model with
    think time 0 (ratios within this one run)."""
    import time

    from lockscope.forecast.model import forecast_curve
    from lockscope.pgbench import start_pgbench

    run_script(pgbench20.conninfo(), "select pg_stat_statements_reset()")
    with start_pgbench(pgbench20, clients=2, duration_s=4) as load, connect(pgbench20.conninfo()) as session:
        time.sleep(1.0)
        report = forecast_statement(session, "select abalance from pgbench_accounts where aid = 1",
                                    calibration=DEFAULT_CALIBRATION, cores=os.cpu_count() or 1, clients=2,
                                    dsn=pgbench20.conninfo(), sample_s=2.0)
        measured = load.wait().tps
    assert report.live is not None and report.live.population == 2  # counted by the server
    # the cost is pg_stat_statements' mean over the same 2 s as the samples (round 5), not since the reset
    assert report.notes[0].startswith("the statement's own cost: pg_stat_statements on this server over the 2 s "
                                      "sampled (the seconds of the deflation and the think time): "), report.notes
    assert report.measured.statements[0][0].own_source.startswith("pg_stat_statements on this server over the 2 s")
    assert report.think_s > 0, report.notes
    said = [n for n in report.notes if n.startswith("think time")]
    assert len(said) == 1 and "from the sampled seconds, as in workload mode" in said[0], report.notes
    assert forecast_to_dict(report)["model"]["think_ms"] == pytest.approx(1000 * report.think_s)
    assert "think time" in _rendered(render_forecast(report))
    with_think = report.measured.forecast.throughput_tps
    without = forecast_curve(report.measured.demands, report.cores, [2])[0].throughput_tps
    assert abs(with_think / measured - 1) < abs(without / measured - 1), (with_think, without, measured)


def test_statement_mode_think_time_given_wins_and_none_when_the_cores_are_saturated() -> None:
    """Statement mode's think time: the sampled seconds' (4 connections at 1,000 calls/s: a 4 ms cycle, 1 ms of
    it active in the server: beyond the 2 cores the sampled time in the server is taken off, 3 ms outside; the
    model's own queue for the cores is not); a given one wins (the note names the sampled figure beside it); 0
    when the backends sampled on CPU fill the cores (1.8 sessions for 2 cores), said so; no samples, no note."""
    from lockscope.forecast.engine import _statement_think, present_calibration
    from lockscope.forecast.live import LivePoint
    from lockscope.forecast.model import Demands, forecast_curve

    live = LivePoint(rate_tps=1000.0, population=4, population_source="counted", aas=1.0, aas_cpu=1.0,
                     lockmanager_share=0.0, samples=40)

    def solve(cal: Calibration, think_s: float) -> Any:
        demands = Demands(cpu_s=0.0005, partition_acquisitions=(0.0,) * 16, costs=cal)
        return forecast_curve(demands, 2, [4], think_s=think_s)[0]

    flat = Calibration(base_cpu_s=0.0, fastpath_lock_cpu_s=0.0, main_table_lock_extra_cpu_s=0.0, lwlock_hold_s=0.0,
                       convoy_per_core=0.0)
    present = present_calibration(live, flat, 2, solve)
    assert present.calibration == flat and present.notes == ()
    assert present.model_response_s == pytest.approx(0.001)
    think, said = _statement_think(None, live, present, 2)
    assert think == pytest.approx(0.003, rel=1e-3) and len(said) == 1
    assert "3.000 ms from the sampled seconds" in said[0], said
    assert "less the sampled time in the server, 1.000 ms" in said[0], said
    think, said = _statement_think(0.0005, live, present, 2)
    assert think == 0.0005 and said == ["think time 0.500 ms, as given (the sampled seconds give 3.000 ms)"]
    busy = replace(live, aas_cpu=1.8)
    think, said = _statement_think(None, busy, present_calibration(busy, flat, 2, solve), 2)
    assert think == 0.0 and len(said) == 1 and "fill the cores (1.80 sessions for 2)" in said[0]
    assert _statement_think(None, None, None, 2) == (0.0, [])
    assert _statement_think(0.0005, None, None, 2) == (0.0005, [])


def test_statement_mode_cost_window_and_the_two_measures_of_server_time() -> None:
    """Statement mode's cost window (round 5): pg_stat_statements' row over the sampled seconds is the row after
    less the row before (12 calls, 30 ms of execution: 2.5 ms a call; 12 plannings, 1.2 ms: 0.1 ms each); with
    fewer than 10 calls in those seconds the mean since the reset stands, said so; a note when the samples' time
    per call (AAS / calls/s) and the mean are more than 2x apart, none within."""
    from lockscope.forecast.engine import OwnCost, _server_time_note, _window_cost, _window_times
    from lockscope.forecast.live import LivePoint
    from lockscope.rows import StatementTimesRow

    before = StatementTimesRow(100, 5.0, 0.5, 100, 500.0, 50.0)
    window = _window_times(before, StatementTimesRow(112, 4.732, 0.457, 112, 530.0, 51.2))
    assert window is not None and (window.calls, window.plans) == (12, 12)
    assert window.mean_exec_ms == pytest.approx(2.5) and window.mean_plan_ms == pytest.approx(0.1)
    assert _window_times(None, before) is None
    since = OwnCost(0.0005, 0.005, "pg_stat_statements on this server since its reset: ...", queryid=7)
    got, words = _window_cost(since, window, 2.0)
    assert (got.exec_s, got.plan_s, words) == (pytest.approx(0.0025), pytest.approx(0.0001), "over the same seconds")
    assert got.source == ("pg_stat_statements on this server over the 2 s sampled (the seconds of the deflation and "
                          "the think time): 2.500 ms execution over 12 calls, 0.100 ms planning "
                          "(pg_stat_statements, 12 plannings)")
    few = StatementTimesRow(9, 2.5, None, 0, 22.5, 0.0)
    got, words = _window_cost(since, few, 2.0)
    assert (got.exec_s, words) == (0.005, "since its reset")
    assert got.source.endswith("(the 2 s sampled hold 9 of its calls, fewer than 10: the mean since the reset "
                               "stands)")
    live = LivePoint(rate_tps=1000.0, population=4, population_source="counted", aas=1.0, aas_cpu=1.0,
                     lockmanager_share=0.0, samples=40)  # 1 ms a call in the server by the samples
    assert _server_time_note(live, 0.0019, "over the same seconds") == []
    assert _server_time_note(live, 0.0005, "over the same seconds") == []
    said = _server_time_note(live, 0.0025, "over the same seconds")
    assert len(said) == 1 and said[0].startswith("the two measures of the time in the server per call disagree "
                                                 "(x 0.40): the samples give 1.000 ms"), said
    assert "pg_stat_statements 2.500 ms of execution and planning (over the same seconds)" in said[0]
    assert len(_server_time_note(live, 0.0004, "since its reset")) == 1
    assert _server_time_note(None, 0.0025, "since its reset") == []


def _statement_mode_under_load(server: ScratchServer, clients: int) -> ForecastReport:
    """``lockscope forecast "SQL" --dsn ...`` of pgbench -S's statement while pgbench -S runs with ``clients``
    (1 s in: pg_stat_statements then has thousands of its calls; 4 s of samples), as a user runs statement mode."""
    import time

    from lockscope.pgbench import start_pgbench

    run_script(server.conninfo(), "select pg_stat_statements_reset()")
    with start_pgbench(server, clients=clients, duration_s=9), connect(server.conninfo()) as session:
        time.sleep(1.0)
        return forecast_statement(session, "select abalance from pgbench_accounts where aid = 1",
                                  calibration=DEFAULT_CALIBRATION, cores=os.cpu_count() or 1, clients=clients,
                                  dsn=server.conninfo(), sample_s=4.0)


@pytest.mark.alone  # the sampled LockManager share is what the machine gives this load alone
def test_statement_mode_lockmanager_share_only_where_the_sampled_seconds_reproduce_it(load_lock: None) -> None:
    """Statement mode with --dsn (issue 27): the model's LockManager share is printed as a forecast only when
    within 10 points of the share sampled over the same seconds (the refusal's words: also
    ``test_the_lockmanager_refusal_says_why``) (the workload mode's guard, ``model_vs_now``). The
    demo's load (pgbench -S, 100 extra indexes on pgbench_accounts: 86 locks in the main table, 16 clients on
    this machine's 2 cores): the sampled share of 4 s swings between runs on this VM (0.12-0.62 in six runs; the
    same load 15-85 % in BENCHMARKS.md), the model's (partition queues and the convoy behind preempted holders) does
    not: up to six loads until one is more than 10 points from the model, refused, each judged by the same rule
    (six at most). One client: nothing waits on LockManager, and 4 s without a wait sample do not vouch for the
    model's share either (a bursty wait could hide in 8 half-second looks): refused as too uncertain."""
    from lockscope.demo import set_extra_indexes
    from lockscope.lab.load import install_pg_stat_statements
    from lockscope.pgbench import pgbench_init

    with ScratchServer(None, ScratchSettings(max_locks_per_transaction=16, max_connections=60)) as server:
        pgbench_init(server, 1)
        install_pg_stat_statements(server)
        set_extra_indexes(server.conninfo(), 100)
        tries = []
        for _ in range(6):
            tries.append(_statement_mode_under_load(server, 16))
            a = tries[-1].anchor
            assert a is not None and a.factor == 1.0  # statement mode compares, it does not re-anchor
            if abs(a.measured_lockmanager_share - a.model_lockmanager_share) > 0.10:
                break
        light = _statement_mode_under_load(server, 1)
        cli = _statement_mode_cli(server, clients=2, interval="3s")
    # the CLI's --interval sets statement mode's sampled seconds (default 2 s: 4 or 5 half-second batches); 3 s
    # give 6 or 7 whatever rate the sampler achieves on a busy machine
    assert cli["live"]["samples"] > 0, cli["live"]
    assert cli["live"]["lockmanager_share_95"] is not None and 6 <= cli["live"]["lockmanager_share_95"]["batches"] <= 7
    for report in [*tries, light]:
        assert report.live is not None and report.live.samples >= 60 and report.anchor is not None
        assert report.live.population == report.clients  # counted by the server, not guessed from samples
        doc = forecast_to_dict(report)
        assert doc["live"]["lockmanager_share"] == doc["model_vs_now"]["measured_lockmanager_share"]
        assert doc["measured"]["forecast"]["convoy_wait_ms"] >= 0.0  # the preempted holders' part, in the JSON
        off = abs(report.anchor.model_lockmanager_share - report.live.lockmanager_share)
        sampled = doc["live"]["lockmanager_share_95"]  # 4 s of samples: half-second batches
        # at 16 clients every half-second batch sees active sessions; one client's backend is active part of the
        # time, and on a slow machine half the batches can miss it (then the interval is wider, not absent)
        assert sampled is not None and sampled["batches"] >= (6 if report.clients > 1 else 3)
        reproduced = off <= 0.10 and sampled["half_width"] <= 0.10
        assert doc["model_vs_now"]["sampled_lockmanager_share_too_uncertain"] is (sampled["half_width"] > 0.10)
        assert doc["model_vs_now"]["lockmanager_reproduced"] is reproduced
        assert ("LockManager share not forecast" in _rendered(render_forecast(report))) is (not reproduced)
    heavy = tries[-1]
    assert heavy.anchor is not None
    if abs(heavy.anchor.measured_lockmanager_share - heavy.anchor.model_lockmanager_share) > 0.10:
        assert forecast_to_dict(heavy)["model_vs_now"]["lockmanager_reproduced"] is False
        assert "cannot reproduce it" in _rendered(render_forecast(heavy))
    else:  # six loads, each within 10 points of the model (since 2026-12-06 the usual case on this VM)
        assert len(tries) == 6
        assert all(t.anchor is not None and (t.anchor.lockmanager_reproduced or t.anchor.sampled_too_uncertain)
                   for t in tries)
    assert light.live is not None and light.live.lockmanager_share == 0.0
    assert light.live.lockmanager_interval is not None and light.live.lockmanager_interval.half_width > 0.10
    assert forecast_to_dict(light)["model_vs_now"]["sampled_lockmanager_share_too_uncertain"] is True
    assert forecast_to_dict(light)["model_vs_now"]["lockmanager_reproduced"] is False
    assert "the sample is too short" in _rendered(render_forecast(light))


def test_the_lockmanager_refusal_says_why() -> None:
    """The two refusals of the LockManager share, in words: 72 % sampled (+-4) where the model gives 20 %, more
    than 10 points apart; 30 % sampled +-25 where the model gives 28 %, within but too uncertain to show it."""
    from lockscope.forecast.live import Anchor
    from lockscope.watch.aas import ShareInterval

    apart = Anchor(10_000.0, 10_000.0, 1.0, 10_000.0, 0.20, 0.72, ShareInterval(0.72, 0.04, 9))
    assert not apart.lockmanager_reproduced and not apart.sampled_too_uncertain
    assert apart.lockmanager_refusal().startswith("LockManager share not forecast: 72% sampled now")
    assert "the model gives 20% at the same operating point and cannot reproduce it (more than 10 points apart)" \
        in apart.lockmanager_refusal()
    short = Anchor(10_000.0, 10_000.0, 1.0, 10_000.0, 0.28, 0.30, ShareInterval(0.30, 0.25, 4))
    assert not short.lockmanager_reproduced and short.sampled_too_uncertain
    assert "but the sample is too short to show it within 10 points: sample longer" in short.lockmanager_refusal()


def _statement_mode_cli(server: ScratchServer, *, clients: int, interval: str) -> dict[str, Any]:
    """``lockscope forecast --dsn ... --statement ... --interval ...`` while pgbench -S runs (1 s in)."""
    import time

    from lockscope.pgbench import start_pgbench

    with start_pgbench(server, clients=clients, duration_s=6):
        time.sleep(1.0)
        proc = run("forecast", "--dsn", server.conninfo(), "--statement",
                   "select abalance from pgbench_accounts where aid = 1", "--interval", interval, "--json", "-")
    assert proc.returncode == 0, proc.stderr
    doc: dict[str, Any] = json.loads(proc.stdout)
    return doc


def _rendered(renderable: object) -> str:
    from rich.console import Console

    console = Console(width=250, record=True, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


@pytest.mark.parametrize(("clients", "mend"), [(1, "idle round trip from the present"),
                                               (4, "calibration scaled x ")])
def test_a_calibration_of_a_slower_machine_is_bounded_by_the_present(pgbench20: ScratchServer, load_lock: None,
                                                                     clients: int, mend: str) -> None:
    """Statement mode with --dsn on a machine the calibration was not measured on (issue 27; 2026-12-06 this VM
    was 3x faster than the built-in calibration's at one client): a calibration whose machine wakes 20x slower
    (one client: the idle round trip alone makes the model 3x too slow) or is 15x slower in everything (four
    clients on 2 cores: its CPU ceiling is below what the server does; 5x was not enough on a VM that did
    11,148 calls/s there, 2026-12-07). The present bounds it: the forecast of
    the present is within 25 % of pgbench's TPS over the same load, the note says which bound moved the
    calibration, and the report's calibration names it. The same load with the calibration as given, bound off,
    would be below the load and further from it: checked on the model itself (same shapes, the calibration as given)."""
    import time

    from lockscope.forecast.engine import forecast_shapes
    from lockscope.pgbench import start_pgbench

    slow = (replace(DEFAULT_CALIBRATION, idle_round_trip_s=20 * DEFAULT_CALIBRATION.idle_round_trip_s)
            if clients == 1 else DEFAULT_CALIBRATION.scaled(15.0))
    run_script(pgbench20.conninfo(), "select pg_stat_statements_reset()")
    with start_pgbench(pgbench20, clients=clients, duration_s=5, select_only=True) as load, \
            connect(pgbench20.conninfo()) as session:
        time.sleep(1.0)
        report = forecast_statement(session, "select abalance from pgbench_accounts where aid = 1",
                                    calibration=slow, cores=2, clients=clients, dsn=pgbench20.conninfo(),
                                    sample_s=2.0)
        measured = load.wait().tps
    said = [n for n in report.notes if n.startswith(mend)]
    assert len(said) == 1, report.notes
    assert "of the present" in report.calibration.source or "from the present" in report.calibration.source
    forecast = report.measured.forecast.throughput_tps
    assert abs(forecast / measured - 1) <= 0.25, (forecast, measured, report.notes)
    assert report.live is not None
    as_given = forecast_shapes("as given", [report.measured.statements[0][0]], report.measured.capacity, slow,
                               cores=2, clients=clients, think_s=0.0,
                               loaded_clients=clients).forecast.throughput_tps
    # as given it is below what the server does, and further from it than the bounded forecast (how far below
    # depends on the machine: 0.75 of pgbench's TPS on a busy 2-core VM, 2026-12-07)
    assert as_given < measured and abs(as_given / measured - 1) > abs(forecast / measured - 1), \
        (as_given, forecast, measured)


def test_waits_the_model_lacks_are_said() -> None:
    """27 active sessions sampled, 1.3 on CPU and 0.1 % on LockManager (umami's session detail at 32 clients,
    2026-12-06): 95 % wait on events the model has no term for; 2 on CPU of 2.5 with 15 % on LockManager leave 5 %,
    under the line."""
    from lockscope.forecast.honesty import other_waits
    from lockscope.forecast.live import LivePoint

    slow = LivePoint(4_288.0, 32, "server", 27.15, 1.325, 0.001, 1_076)
    assert other_waits(slow) == ("95 % of the sampled active sessions wait on events the model lacks (neither CPU "
                                 "nor LWLock:LockManager)")
    assert other_waits(LivePoint(7_500.0, 32, "server", 2.5, 2.0, 0.15, 400)) is None
    assert other_waits(LivePoint(0.0, 0, "server", 0.0, 0.0, 0.0, 0)) is None
