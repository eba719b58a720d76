"""The forecast's accuracy, not its arithmetic: statements of different weight (a two-table join by primary key, a
20,000-row scan, a primary-key lookup) forecast on a scratch server, then run there with pgbench at 2 and 8
clients; the forecast TPS must be within 35 % of the measured.

The calibration is the built-in one, scaled to this machine by one low-contention figure measured here first
(pgbench -S with as many clients as cores: ``Calibration.scaled``), as for any machine class — not one client,
whose time on a VM is mostly the wake-up of an idle vCPU, which other work on the machine hides; each statement's
own cost comes from timed executions on the scratch server (``EXPLAIN ANALYZE``), as ``lockscope forecast --scratch
--setup`` does.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from lockscope.db import Session, connect, run_script
from lockscope.forecast.calibration import DEFAULT_CALIBRATION, Calibration
from lockscope.forecast.engine import ForecastReport, forecast_statement
from lockscope.lab.load import install_pg_stat_statements, measure_load
from lockscope.pgbench import pgbench_init
from lockscope.server import ScratchServer, ScratchSettings

# alone: the forecast is calibrated for os.cpu_count() cores and pgbench measured on them; a test of the run on the
# other xdist worker takes one of the two (a run with one did: joins at 2 clients measured at 0.43-0.53 of the forecast)
pytestmark = [pytest.mark.usefixtures("load_lock"), pytest.mark.alone]

SCHEMA = """
create table customers (id int primary key, email text unique, country text, city text, status text,
                        created_at timestamptz);
create index on customers (country); create index on customers (city); create index on customers (status);
create index on customers (created_at);
insert into customers select i, 'c' || i || '@example.com', 'country ' || i % 40, 'city ' || i % 400,
       (array['new', 'active', 'gone'])[1 + i % 3], timestamptz '2025-01-01' + i * interval '1 hour'
from generate_series(1, 2000) i;
create table orders (id int primary key, customer_id int not null references customers, amount int,
                     status text, channel text, created_at timestamptz, shipped_at timestamptz, ref text unique);
create index on orders (customer_id); create index on orders (customer_id, created_at); create index on orders (status);
create index on orders (channel); create index on orders (created_at); create index on orders (shipped_at);
create index on orders (status, created_at); create index on orders (channel, created_at);
insert into orders select i, 1 + i % 2000, i % 1000, (array['open', 'paid', 'shipped'])[1 + i % 3],
       (array['web', 'shop', 'phone'])[1 + i % 3], timestamptz '2025-01-01' + i * interval '1 minute',
       timestamptz '2025-01-02' + i * interval '1 minute', 'r' || i
from generate_series(1, 20000) i;
vacuum analyze;
"""
#: name: (the pgbench script, the same statement with its parameter bound for the forecast)
STATEMENTS = {
    "join": ("\\set id random(1, 20000)\nselect o.id, o.amount, c.email from orders o join customers c "
             "on c.id = o.customer_id where o.id = :id;\n",
             "select o.id, o.amount, c.email from orders o join customers c on c.id = o.customer_id where o.id = 7"),
    "scan": ("\\set lo random(1, 900)\nselect count(*) from orders where amount >= :lo;\n",
             "select count(*) from orders where amount >= 450"),
    "lookup": ("\\set id random(1, 2000)\nselect * from customers where id = :id;\n",
               "select * from customers where id = 7"),
}
CLIENTS = (2, 8)
TOLERANCE = 0.35
#: pgbench run of the calibration's figure (best of 2) and of each point (s): 2 s points put the 6 points at 0.86-1.13
#: of their forecast on a quiet machine (3 runs, 2026-11-27), as 3 s best-of-2 points did (0.78-1.26), in 16.5 s not 43
CAL_S = 2.0
POINT_S = 2.0
#: a point measured this many times at most before it counts as a miss
ATTEMPTS = 3


@pytest.fixture(scope="module")
def server() -> Iterator[ScratchServer]:
    with ScratchServer(None, ScratchSettings(max_locks_per_transaction=16, track_planning=False)) as srv:
        pgbench_init(srv, 1)
        install_pg_stat_statements(srv)
        run_script(srv.conninfo(), SCHEMA)
        yield srv


def _scaled_calibration(server: ScratchServer) -> Calibration:
    """The built-in calibration scaled so that it forecasts pgbench -S with the cores busy as measured here."""
    cores = os.cpu_count() or 1
    measured = max(measure_load(server, clients=cores, duration_s=CAL_S).tps for _ in range(2))
    with connect(server.conninfo()) as session:
        def tps(factor: float) -> float:
            report = forecast_statement(session, "SELECT abalance FROM pgbench_accounts WHERE aid = 1",
                                        calibration=DEFAULT_CALIBRATION.scaled(factor), cores=cores,
                                        clients=cores, exec_cost_ms=0.0)
            return report.measured.forecast.throughput_tps
        lo, hi = math.log(0.1), math.log(10.0)
        for _ in range(30):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if tps(math.exp(mid)) > measured else (lo, mid)
    return DEFAULT_CALIBRATION.scaled(math.exp((lo + hi) / 2))


def test_forecast_is_within_35_percent_of_pgbench(server: ScratchServer, tmp_path: Path) -> None:
    cal = _scaled_calibration(server)
    cores = os.cpu_count() or 1
    misses: list[str] = []
    seen: dict[str, int] = {}
    for name, (script, bound) in STATEMENTS.items():
        path = tmp_path / f"{name}.sql"
        path.write_text(script)
        def forecast_at(session: Session, clients: int, bound: str = bound) -> ForecastReport:
            return forecast_statement(session, bound, calibration=cal, cores=cores, clients=clients,
                                      scratch_conninfo=server.conninfo())

        with connect(server.conninfo()) as session:
            forecasts = {n: forecast_at(session, n) for n in CLIENTS}
        shape = forecasts[CLIENTS[0]].measured.statements[0][0]
        assert shape.own_s is not None and shape.own_source.startswith("timed on the scratch server")
        seen[name] = len(shape.main_table_locks)
        for n in CLIENTS:
            # a miss is measured again, forecast and load both (a CI run on this shared 2-core VM once measured
            # a scan at 0.59 of its forecast that other runs put within 10 %): ATTEMPTS misses in a row fail
            for attempt in range(ATTEMPTS):
                if attempt:
                    with connect(server.conninfo()) as session:
                        forecasts[n] = forecast_at(session, n)
                measured = measure_load(server, clients=n, duration_s=POINT_S, script_file=path,
                                        select_only=False).tps
                predicted = forecasts[n].measured.forecast.throughput_tps
                print(f"{name} at {n} clients: forecast {predicted:,.0f} TPS, measured {measured:,.0f} "
                      f"({predicted / measured:.2f})")
                if abs(predicted / measured - 1.0) <= TOLERANCE:
                    break
            else:
                misses.append(f"{name} at {n} clients: forecast {predicted:,.0f} TPS, measured {measured:,.0f}")
    # the join spills past the 16 fast-path slots; the others fit
    assert seen == {"join": 2, "scan": 0, "lookup": 0}
    assert not misses, "; ".join(misses)
