"""The execution time of one planner cost unit on this machine, for statements whose execution time is unknown
(issue 27): ``lockscope lab ceiling`` times a few statements of different shapes on its pgbench tables (scale 1,
in memory) and fits one factor.

The planner's cost (``costsize.c``: ``seq_page_cost`` 1 per page read, ``cpu_tuple_cost`` 0.01 per row,
``cpu_operator_cost`` 0.0025 per operator, ``random_page_cost`` 4, ...) is an estimate of work in arbitrary units; on
a machine whose data is cached, execution time per unit differs between shapes (a page "read" from shared buffers
costs far less than four rows' worth of CPU). So the factor is the median over the shapes of execution seconds per
unit, and its error the largest ratio between one shape's own factor and the median (both directions), stated
with every estimate made from it.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from ..db import time_and_cost_on_scratch

__all__ = ["COST_UNIT_STATEMENTS", "CostUnitFit", "measure_cost_unit"]

#: Statements of different shapes over pgbench's tables (scale 1: 100,000 accounts): a primary-key lookup, an
#: index range with an aggregate, a sequential scan with a filter, a join with a grouped aggregate, a top-N sort.
COST_UNIT_STATEMENTS = (
    "SELECT abalance FROM pgbench_accounts WHERE aid = 4242",
    "SELECT sum(abalance) FROM pgbench_accounts WHERE aid BETWEEN 1000 AND 11000",
    "SELECT count(*) FROM pgbench_accounts WHERE abalance <> 0 OR filler LIKE '%x%'",
    "SELECT b.bid, count(*) FROM pgbench_accounts a JOIN pgbench_branches b ON b.bid = a.bid GROUP BY b.bid",
    "SELECT aid FROM pgbench_accounts ORDER BY abalance DESC, aid LIMIT 10",
)


@dataclass(frozen=True)
class CostUnitFit:
    """The fit of execution time to planner cost.

    :ivar exec_s_per_cost_unit: median execution seconds per cost unit (s).
    :ivar error_factor: the largest ratio between a statement's own seconds per unit and the median, either way
        (>= 1).
    :ivar points: ``(statement, cost units, execution s)`` measured.
    """

    exec_s_per_cost_unit: float
    error_factor: float
    points: tuple[tuple[str, float, float], ...]


def fit_cost_unit(points: tuple[tuple[str, float, float], ...]) -> CostUnitFit:
    """The median seconds per unit of ``points`` and its error factor (see :class:`CostUnitFit`).

    :raises ValueError: no point with a positive cost and time.
    """
    rates = [s / c for _, c, s in points if c > 0 and s > 0]
    if not rates:
        raise ValueError("no statement with a positive cost and execution time")
    rate = statistics.median(rates)
    return CostUnitFit(rate, max(max(r / rate, rate / r) for r in rates), points)


def measure_cost_unit(conninfo: str, statements: tuple[str, ...] = COST_UNIT_STATEMENTS,
                      runs: int = 20) -> CostUnitFit:
    """Time ``statements`` on a scratch server lockscope started (``EXPLAIN (ANALYZE, TIMING OFF)``, median of
    ``runs``, rolled back) with their plans' total costs, and fit one factor.

    :raises StatementError: a statement failed; :raises ConnectionFailedError: the server is unreachable.
    """
    points = []
    for text in statements:
        _, exec_ms, cost = time_and_cost_on_scratch(conninfo, text, runs=runs)
        points.append((text, cost, exec_ms / 1000.0))
    return fit_cost_unit(tuple(points))
