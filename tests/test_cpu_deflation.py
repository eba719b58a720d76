"""The deflation of pg_stat_statements' wall time to on-CPU time (lockscope/forecast/cpu.py, issue 27), on real
servers under real load: a CPU-bound scan run by 16 pgbench clients on this machine's cores, forecast in statement
mode from pg_stat_statements while the load runs. Its wall time then holds the run queue; the deflated cost must be
closer to the same statement's cost with one client (measured in the same test, the oracle) than the wall time is.
Two sources: the sampled wait states (embedded PostgreSQL 18) and pg_stat_kcache (Debian's
postgresql-15-pg-stat-kcache 2.2, preloaded, ``pg_stat_kcache.linux_hz`` high enough that its getrusage figures
are used for millisecond calls)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from lockscope.db import connect, run_script
from lockscope.forecast.calibration import DEFAULT_CALIBRATION
from lockscope.forecast.cpu import KcacheWindow, OnCpu, deflation
from lockscope.forecast.engine import forecast_statement
from lockscope.forecast.live import LivePoint
from lockscope.pgbench import run_pgbench, start_pgbench
from lockscope.server import ScratchServer, ScratchSettings

PG15_BIN = Path("/usr/lib/postgresql/15/bin")
SCAN = "select count(*) from cpu_scan where g % 7 = 3"
SETUP = ("create extension if not exists pg_stat_statements; "
         "create table cpu_scan as select g from generate_series(1, 40000) g; vacuum analyze cpu_scan")
CLIENTS = 16
#: The oracle's run, one client (s; pgbench's shortest).
ONE_CLIENT_S = 1
#: From the 16 clients' start to the forecast's sampling (s).
RAMP_S = 1.0


def _scan_mean_ms(conninfo: str) -> tuple[float, int]:
    """pg_stat_statements' mean execution time of the scan (ms) and its calls (the server as the oracle)."""
    with connect(conninfo) as s:
        row = s.oracle_rows("select sum(total_exec_time) / sum(calls), sum(calls)::int from pg_stat_statements "
                            "where query like 'select count(*) from cpu_scan%'")[0]
    return float(row[0]), int(row[1])


def _reset(conninfo: str) -> None:
    run_script(conninfo, "select pg_stat_statements_reset()")


def _deflated_vs_wall(server: ScratchServer, tmp: Path) -> tuple[float, float, float, str]:
    """(one client's mean ms, the 16 clients' wall mean ms, the forecast's deflated execution ms, its source)."""
    script = tmp / "scan.sql"
    script.write_text(SCAN + ";\n")
    script.chmod(0o644)
    _reset(server.conninfo())
    run_pgbench(server, clients=1, duration_s=ONE_CLIENT_S, script=SCAN + ";\n")
    one_ms, _ = _scan_mean_ms(server.conninfo())
    _reset(server.conninfo())
    with start_pgbench(server, clients=CLIENTS, duration_s=9, select_only=False, extra_args=["-f", str(script)]):
        time.sleep(RAMP_S)
        with connect(server.conninfo()) as session:
            report = forecast_statement(session, SCAN, calibration=DEFAULT_CALIBRATION, cores=2, clients=CLIENTS,
                                        dsn=server.conninfo(), sample_s=2.0)
        wall_ms, calls = _scan_mean_ms(server.conninfo())
    shape = report.measured.statements[0][0]
    assert calls > 0 and shape.own_s is not None
    plan_ms = 0.0  # the scan's planning (EXPLAIN alone) is in own_s, not deflated: take it out again
    source = report.notes[0]
    if "ms planning (EXPLAIN" in source:
        plan_ms = float(source.split(" ms planning (EXPLAIN")[0].rsplit(", ", 1)[-1])
    return one_ms, wall_ms, 1000.0 * shape.own_s - plan_ms, source


@pytest.fixture(scope="module")
def pg18_pgss() -> Iterator[ScratchServer]:
    with ScratchServer(None, ScratchSettings(max_connections=60)) as server:
        run_script(server.conninfo(), SETUP)
        yield server


@pytest.fixture(scope="module")
def pg15_kcache() -> Iterator[ScratchServer]:
    if not Path("/usr/share/postgresql/15/extension/pg_stat_kcache.control").exists():
        pytest.fail("pg_stat_kcache is not installed for PostgreSQL 15: run scripts/test.sh (it installs Debian's "
                    "postgresql-15-pg-stat-kcache)", pytrace=False)
    settings = ScratchSettings(max_connections=60, extra={
        "shared_preload_libraries": "pg_stat_statements,pg_stat_kcache",
        "pg_stat_kcache.linux_hz": "100000"})
    with ScratchServer(PG15_BIN, settings) as server:
        run_script(server.conninfo(), SETUP + "; create extension pg_stat_kcache")
        yield server


def _check_closer_to_one_client(server: ScratchServer, tmp: Path, source: str) -> None:
    one_ms, wall_ms, deflated_ms, said = _deflated_vs_wall(server, tmp)
    assert f"to CPU ({source}:" in said, said
    # 16 clients on this machine's cores: the wall time holds the run queue (well above the lone cost) ...
    assert wall_ms > 1.3 * one_ms, (one_ms, wall_ms)
    # ... which the deflation takes out: closer to the lone cost than the wall time, within 2x of it
    assert abs(deflated_ms / one_ms - 1) < abs(wall_ms / one_ms - 1), (one_ms, wall_ms, deflated_ms, said)
    assert 0.5 < deflated_ms / one_ms < 2.0, (one_ms, wall_ms, deflated_ms, said)


def test_sampled_deflation_of_a_cpu_bound_scan(pg18_pgss: ScratchServer, scratch_base: Path,
                                                load_lock: None) -> None:
    _check_closer_to_one_client(pg18_pgss, scratch_base, "sampled")


def test_kcache_deflation_of_a_cpu_bound_scan(pg15_kcache: ScratchServer, scratch_base: Path,
                                              load_lock: None) -> None:
    _check_closer_to_one_client(pg15_kcache, scratch_base, "pg_stat_kcache")


def test_kcache_detection(pg15_kcache: ScratchServer, pg18_pgss: ScratchServer) -> None:
    """Created and preloaded: read; not created: silently absent (the sampled factor stands)."""
    with connect(pg15_kcache.conninfo()) as s:
        window = KcacheWindow()
        window.start(s)
        s.oracle_rows(SCAN)
        assert window.note is None
        got = window.stop(s)
        scan_id = s.oracle_rows("select queryid from pg_stat_statements where query like 'select count(*) from "
                                "cpu_scan%'")[0][0]
    assert window.note is None
    on = got[scan_id]
    assert 0 < on.factor <= 1 and on.source.startswith("pg_stat_kcache: ")
    with connect(pg18_pgss.conninfo()) as s:
        window = KcacheWindow()
        window.start(s)
        assert window.stop(s) == {} and window.note is None


def test_deflation_without_samples_or_activity() -> None:
    """No live point: the wall time, said so; a live point with nobody active: the wall time, said so; the
    sampled factor is the CPU share times cores / sessions on CPU (4 of 8 active samples on CPU, 4 sessions on
    CPU for 2 cores: 0.5 x 0.5)."""
    none = deflation(None, (), "postgres", 2)
    assert none.of(1).factor == 1.0 and "wall time as measured" in none.of(1).source
    idle = deflation(LivePoint(0.0, 1, "", 0.0, 0.0, 0.0, 10), (), "postgres", 2)
    assert idle.overall.factor == 1.0 and "no client backend" in idle.overall.source
    busy = deflation(LivePoint(100.0, 16, "", 8.0, 4.0, 0.5, 10), (), "postgres", 2,
                     kcache={7: OnCpu(0.3, "pg_stat_kcache: x")})
    assert busy.overall.factor == pytest.approx(0.25)
    assert busy.of(7).factor == 0.3 and busy.of(8) == busy.overall and busy.of(None) == busy.overall
