"""A statement whose execution time is unknown (issue 27): no pg_stat_statements figure, no --exec-cost, a server
lockscope does not time on. Its execution is estimated from the plan's total cost times the calibration's
execution time per cost unit, and the forecast is a range with both ends stated, not a lower-bound point.

The plan's cost is the server's own (``EXPLAIN``), and the estimate must be the cost times the calibration's
figure: checked against ``EXPLAIN (FORMAT JSON)``'s ``Total Cost`` read here.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import psycopg
import pytest

from lockscope.db import Session, connect
from lockscope.forecast.calibration import DEFAULT_CALIBRATION
from lockscope.forecast.engine import forecast_statement
from lockscope.report.forecast_json import forecast_to_dict
from lockscope.server import ScratchServer

SCAN = "select count(*), max(length(note)) from unknown_cost.notes where note like '%7%'"


@pytest.fixture()
def notes_session(pg18: ScratchServer) -> Iterator[Session]:
    with psycopg.connect(pg18.conninfo(), autocommit=True) as admin:
        admin.execute("DROP SCHEMA IF EXISTS unknown_cost CASCADE")
        admin.execute("CREATE SCHEMA unknown_cost; CREATE TABLE unknown_cost.notes (id int PRIMARY KEY, note text);"
                      "INSERT INTO unknown_cost.notes SELECT g, 'note ' || g FROM generate_series(1, 50000) g;"
                      "ANALYZE unknown_cost.notes")
        try:
            with connect(pg18.conninfo()) as session:
                yield session
        finally:
            admin.execute("DROP SCHEMA unknown_cost CASCADE")


def test_an_unknown_execution_time_is_estimated_from_the_plan_cost_and_forecast_as_a_range(
        pg18: ScratchServer, notes_session: Session) -> None:
    with psycopg.connect(pg18.conninfo()) as conn:
        row = conn.execute(f"EXPLAIN (FORMAT JSON) {SCAN}").fetchone()  # type: ignore[arg-type]
    assert row is not None
    doc = row[0] if not isinstance(row[0], str) else json.loads(row[0])
    cost = float(doc[0]["Plan"]["Total Cost"])
    report = forecast_statement(notes_session, SCAN, calibration=DEFAULT_CALIBRATION, cores=2, clients=16)
    note = next(n for n in report.notes if n.startswith("the statement's own cost"))
    estimate_ms = cost * DEFAULT_CALIBRATION.exec_s_per_cost_unit * 1e3
    assert f"{cost:,.2f} units" in note and f"= {estimate_ms:.3f} ms" in note
    err = DEFAULT_CALIBRATION.cost_estimate_error
    assert f"between {estimate_ms / err:.3f} and {estimate_ms * err:.3f} ms" in note
    # both ends of the range forecast; the point between them; a 50,000-row scan is not a primary-key lookup
    span = report.throughput_range_tps
    assert span is not None and span[0] < report.measured.forecast.throughput_tps < span[1]
    assert span[1] / span[0] > 2
    shape = report.measured.statements[0][0]
    assert shape.own_s is not None and shape.own_s > 10 * DEFAULT_CALIBRATION.base_exec_s
    assert forecast_to_dict(report)["throughput_range_tps"] == list(span)


def test_a_calibration_file_from_before_the_cost_unit_still_loads_and_the_built_in_figure_stands_in() -> None:
    from lockscope.forecast.calibration import Calibration
    from lockscope.forecast.engine import OwnCost

    doc = {k: v for k, v in DEFAULT_CALIBRATION.to_json().items()
           if k not in ("exec_s_per_cost_unit", "cost_estimate_error")}
    older = Calibration.from_json(doc | {"schema": "lockscope/calibration/v2"})
    assert older.exec_s_per_cost_unit == 0.0 and older.cost_estimate_error == 0.0
    own = OwnCost(20e-6, None, "20 µs planning", plan_cost=1000.0).with_exec_floor(older)
    assert own.exec_s == pytest.approx(1000.0 * DEFAULT_CALIBRATION.exec_s_per_cost_unit)
    assert "the built-in calibration's: yours has none" in own.source
