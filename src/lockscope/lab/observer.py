"""``lockscope lab observer``: the observer-effect comparison of ``lockscope watch`` as a lab scenario.

Wraps :func:`lockscope.lab.observer_effect.measure_observer_effect` (PostgresAI #PostgresMarathon 2-007): pgbench on the
contended load (100 extra indexes at max_locks_per_transaction 16, 16 clients) with no observer, with
``lockscope watch`` at 10 and 100 Hz, and with a ~100 Hz ``pg_blocking_pids()`` loop. One point is one round (every
condition once, the baseline first), so Ctrl-C stops between rounds; a condition's TPS ratio is taken against the
same round's baseline and the summary reports the median over rounds.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..demo_load import DEMO_EXTRA_INDEXES, DEMO_MLPT
from ..errors import BadInputError
from ..server import ScratchSettings
from .observer_effect import BASELINE, DEFAULT_CONDITIONS, measure_observer_effect
from .options import check_options, pg_bins_parameter
from .runner import LabContext

__all__ = ["DEFAULT", "QUICK", "ObserverScenario", "summary"]

#: ``--quick``: 2 rounds of 3 s per condition (about 1 minute).
QUICK: dict[str, Any] = dict(clients=16, duration_s=3.0, rounds=2)
#: Default: 5 rounds of 10 s per condition (about 5 minutes).
DEFAULT: dict[str, Any] = dict(clients=16, duration_s=10.0, rounds=5)


@dataclass(frozen=True)
class ObserverScenario:
    """Configuration of the observer-effect comparison.

    :ivar pg_bins: bin directories (None = embedded PostgreSQL 18).
    :ivar clients: pgbench clients (count).
    :ivar duration_s: pgbench run per condition and round (s).
    :ivar rounds: rounds (count).
    :ivar conditions: observer conditions (``lockscope.lab.observer_effect.CONDITIONS``); None = its defaults.
    :ivar hz: unused placeholder for a future single-rate run (None).
    """

    pg_bins: tuple[Path | None, ...] = (None,)
    clients: int = DEFAULT["clients"]
    duration_s: float = DEFAULT["duration_s"]
    rounds: int = DEFAULT["rounds"]
    conditions: tuple[str, ...] | None = None
    hz: float | None = None
    profile: str = "default"
    name: str = field(default="observer", init=False)

    def __post_init__(self) -> None:
        check_options(pg_bins=self.pg_bins, clients=self.clients, duration_s=self.duration_s)
        if not 1 <= self.rounds <= 50:
            raise BadInputError("--rounds must be between 1 and 50")

    def _conditions(self) -> tuple[str, ...]:
        return self.conditions or tuple(DEFAULT_CONDITIONS)

    def plan(self) -> tuple[int, float]:
        points = len(self.pg_bins) * self.rounds
        per_round = len(self._conditions()) * (self.duration_s + 2.5)
        return points, len(self.pg_bins) * 15 + points * per_round

    def parameters(self) -> dict[str, Any]:
        return {
            "profile": self.profile, "pg_bins": pg_bins_parameter(self.pg_bins),
            "clients": self.clients, "duration_s": self.duration_s, "rounds": self.rounds,
            "conditions": list(self._conditions()), "extra_indexes": DEMO_EXTRA_INDEXES,
            "max_locks_per_transaction": DEMO_MLPT, "transaction": "pgbench -S (select-only)",
        }

    def run(self, ctx: LabContext) -> None:
        """One :func:`measure_observer_effect` round per point; see the module docstring."""
        for bin_dir in self.pg_bins:
            ctx.check_stop()
            with ctx.server(bin_dir, ScratchSettings(max_locks_per_transaction=DEMO_MLPT)) as (server, info):
                for r in range(self.rounds):
                    ctx.check_stop()
                    prefix = f"PG {info.pg_version}: round {r + 1}/{self.rounds}: "

                    def say(msg: str, prefix: str = prefix) -> None:
                        ctx.progress.step(prefix + msg)

                    result = measure_observer_effect(
                        server, clients=self.clients, duration_s=self.duration_s, rounds=1,
                        conditions=self._conditions(), prepare=(r == 0), warmup_s=3.0 if r == 0 else 0.0,
                        progress=say)
                    base = result.tps[BASELINE][0]
                    rows = [{
                        "pg_version": info.pg_version, "pg_major": info.major, "round": r + 1, "condition": cond,
                        "clients": result.clients, "max_locks_per_transaction": result.max_locks_per_transaction,
                        "extra_indexes": result.extra_indexes, "tps": result.tps[cond][0],
                        "tps_ratio": result.tps[cond][0] / base if base else math.nan,
                        "observer_hz": result.observer_hz[cond][0],
                        "lockmanager_share": result.lockmanager_share if cond == "watch_10hz" else math.nan,
                    } for cond in result.conditions]
                    ctx.rows.extend(rows[:-1])
                    ctx.record(rows[-1])


def summary(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per (version, condition): median TPS, median TPS ratio to the baseline and the cost in %."""
    out = []
    for version, cond in dict.fromkeys((r["pg_version"], r["condition"]) for r in rows):
        pts = [r for r in rows if r["pg_version"] == version and r["condition"] == cond]
        ratios = [r["tps_ratio"] for r in pts if isinstance(r["tps_ratio"], float) and math.isfinite(r["tps_ratio"])]
        ratio = statistics.median(ratios) if ratios else math.nan
        out.append({"pg_version": version, "condition": cond, "rounds": len(pts),
                    "median_tps": statistics.median(r["tps"] for r in pts),
                    "median_tps_ratio": ratio, "cost_pct": (1 - ratio) * 100 if ratios else math.nan,
                    "median_observer_hz": statistics.median(r["observer_hz"] for r in pts)})
    return out
