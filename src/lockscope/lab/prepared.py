"""``lockscope lab prepared``: the execution-by-execution lock table of the seeds, from the footprint engine.

PostgresAI #PostgresMarathon 2-008..2-011 (pg-lock-internals.md section 4): ``events`` with 12 monthly range
partitions x 3 indexes and the prepared ``select event_id, event_data from events where event_time = $1``:

- auto: 8, 8, 8, 8, 8, 52, 13, 13 (custom plans 1-5, the generic plan BUILT at execution 6 locking every partition
  and index, ``plancache.c choose_custom_plan``; then reused: executor locks on parent + 12 partitions);
- force_generic_plan: 52 then 13; force_custom_plan: 8 always;
- with rows loaded (``--rows-per-partition``) auto builds the generic plan at execution 6 and rejects it: 8 again;
- ``t`` (unpartitioned, 5 indexes), prepared ``select from t`` with an int parameter: 6 locks for executions
  1-6, 1 from execution 7 (the generic plan's executor locks: the table only).

Each (case, plan_cache_mode) is one point; each execution is one row.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..db import connect, run_script
from ..demo import EVENTS_PARAM, EVENTS_SQL, EVENTS_STATEMENT, T5_SQL, load_events_rows
from ..errors import BadInputError
from ..footprint import Footprint, measure_footprint
from ..server import ScratchSettings
from ..versions import DEFAULT_MAX_LOCKS_PER_TRANSACTION
from ..vocab import PlanCacheMode
from .options import check_options, pg_bins_parameter
from .runner import LabContext

__all__ = ["CASES", "DEFAULT", "QUICK", "PreparedScenario"]

#: (case, statement) in the order measured.
CASES = (
    ("events (12 partitions x 3 indexes, empty)", EVENTS_STATEMENT),
    ("t (5 indexes)", "select from t"),
)
WITH_DATA = "events (12 partitions x 3 indexes, with data)"
_MODES = (PlanCacheMode.AUTO, PlanCacheMode.FORCE_GENERIC_PLAN, PlanCacheMode.FORCE_CUSTOM_PLAN)
#: ``--quick``: empty tables only (about 10 s).
QUICK: dict[str, Any] = dict(rows_per_partition=0)
#: Default: also auto mode with 100,000 rows per partition (about 30 s).
DEFAULT: dict[str, Any] = dict(rows_per_partition=100_000)


@dataclass(frozen=True)
class PreparedScenario:
    """Configuration of the prepared-statement lock table.

    :ivar pg_bins: bin directories (None = embedded PostgreSQL 18).
    :ivar mlpt: max_locks_per_transaction (count; the seeds used 64).
    :ivar executions: executions per statement (count, 1..100).
    :ivar rows_per_partition: rows loaded per events partition for the auto run with data (count; 0 = skip).
    """

    pg_bins: tuple[Path | None, ...] = (None,)
    mlpt: int = DEFAULT_MAX_LOCKS_PER_TRANSACTION
    executions: int = 8
    rows_per_partition: int = DEFAULT["rows_per_partition"]
    profile: str = "default"
    name: str = field(default="prepared", init=False)

    def __post_init__(self) -> None:
        check_options(pg_bins=self.pg_bins, mlpts=(self.mlpt,))
        if not 1 <= self.executions <= 100:
            raise BadInputError("--executions must be between 1 and 100")
        if not 0 <= self.rows_per_partition <= 10_000_000:
            raise BadInputError("--rows-per-partition must be between 0 and 10000000")

    def plan(self) -> tuple[int, float]:
        per = len(CASES) * len(_MODES) + (1 if self.rows_per_partition else 0)
        points = len(self.pg_bins) * per
        return points, len(self.pg_bins) * (4 + 12 * self.rows_per_partition / 400_000) + points * 0.5

    def parameters(self) -> dict[str, Any]:
        return {
            "profile": self.profile, "pg_bins": pg_bins_parameter(self.pg_bins),
            "max_locks_per_transaction": self.mlpt, "executions": self.executions,
            "rows_per_partition": self.rows_per_partition, "events_statement": EVENTS_STATEMENT,
            "events_param": EVENTS_PARAM, "t_statement": "select from t ($1 int, unused)",
        }

    def run(self, ctx: LabContext) -> None:
        """Probe every (version, case, mode); see the module docstring."""
        settings = ScratchSettings(max_locks_per_transaction=self.mlpt)
        for bin_dir in self.pg_bins:
            ctx.check_stop()
            with ctx.server(bin_dir, settings) as (server, info):
                run_script(server.conninfo(), EVENTS_SQL + T5_SQL)
                for case, statement in CASES:
                    for mode in _MODES:
                        ctx.check_stop()
                        ctx.progress.step(f"PG {info.pg_version}: {case}, {mode}")
                        with connect(server.conninfo()) as session:
                            fp = self._probe(session, statement, mode)
                        self._record(ctx, info, case, fp)
                if self.rows_per_partition:
                    ctx.check_stop()
                    ctx.progress.step(f"PG {info.pg_version}: loading {self.rows_per_partition:,} rows into each "
                                      "events partition")
                    load_events_rows(server.conninfo(), self.rows_per_partition)
                    with connect(server.conninfo()) as session:
                        fp = self._probe(session, EVENTS_STATEMENT, PlanCacheMode.AUTO)
                    self._record(ctx, info, WITH_DATA, fp)

    def _probe(self, session: Any, statement: str, mode: PlanCacheMode) -> Footprint:
        if statement == EVENTS_STATEMENT:
            return measure_footprint(session, statement, params=[EVENTS_PARAM], protocol="prepared",
                                     plan_cache_mode=mode, executions=self.executions)
        return measure_footprint(session, statement, params=["1"], param_types=["int"], protocol="prepared",
                                 plan_cache_mode=mode, executions=self.executions)

    def _record(self, ctx: LabContext, info: Any, case: str, fp: Footprint) -> None:
        rows = [{
            "pg_version": info.pg_version, "pg_major": info.major, "case": case,
            "plan_cache_mode": fp.plan_cache_mode, "max_locks_per_transaction": self.mlpt,
            "fast_path_slots": fp.capacity.slots, "execution": e.number, "phase": e.phase,
            "plan_type": e.plan_type or "", "relation_locks": e.lock_count, "fastpath_locks": e.fastpath_count,
            "main_table_locks": e.main_table_count, "predicted_main_table_locks": e.predicted_main_table_count,
            "mismatches": len(e.mismatches),
        } for e in fp.executions]
        for row in rows[:-1]:
            ctx.rows.append(row)
        ctx.record(rows[-1])


def lock_sequences(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per (version, case, mode): the lock counts of executions 1..N as ``8,8,8,8,8,52,13,13``."""
    out: dict[tuple[str, str, str], list[int]] = {}
    for r in sorted(rows, key=lambda r: r["execution"]):
        out.setdefault((r["pg_version"], r["case"], r["plan_cache_mode"]), []).append(int(r["relation_locks"]))
    return [{"pg_version": v, "case": c, "plan_cache_mode": m, "locks": ",".join(map(str, seq)),
             "main_table": sum(int(r["main_table_locks"]) for r in rows
                               if (r["pg_version"], r["case"], r["plan_cache_mode"]) == (v, c, m))}
            for (v, c, m), seq in out.items()]
