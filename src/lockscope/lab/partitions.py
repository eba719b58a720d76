"""``lockscope lab partitions``: prepared-statement TPS and locks per execution vs partition count.

Reproduces Amit Langote's and Fujii Masao's shapes: ``pgbench -i --partitions=P``, then ``pgbench -S -M prepared``
in each plan_cache_mode. Reusing a cached generic plan locks the parent and EVERY partition, pruned or not
(``plancache.c CheckCachedPlan -> AcquireExecutorLocks``; the "don't lock pruned partitions" commit 525392d572 was
reverted), so with force_generic_plan an execution takes P + 1 relation locks and TPS falls with P; a custom plan
prunes at plan time and locks one partition (plus indexes).

Per point (version, P, plan_cache_mode), on a server restarted with ``plan_cache_mode`` in its configuration
(so every pgbench session uses it): the footprint of the prepared primary-key SELECT over 7 executions (the
steady-state execution's locks and the most any execution took), then pgbench with pg_stat_statements and
wait-event sampling as in ``lab indexes``.

max_locks_per_transaction is raised for a point when ``clients`` sessions each holding 2 P + 4 locks would not
fit the shared lock table (``lock.c NLOCKENTS``); the value used is in every row.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..capacity import _next_power_of_2
from ..db import connect
from ..demo import PK_SELECT
from ..errors import BadInputError
from ..footprint import measure_footprint
from ..pgbench import pgbench_init
from ..server import ScratchSettings
from ..versions import DEFAULT_MAX_LOCKS_PER_TRANSACTION
from ..vocab import PlanCacheMode
from .load import install_pg_stat_statements, is_pk_select, measure_load_columns
from .options import check_options, pg_bins_parameter
from .runner import LabContext

__all__ = ["DEFAULT", "MODES", "QUICK", "PartitionsScenario", "required_mlpt"]

#: Modes in the order the lab measures them.
MODES = (PlanCacheMode.FORCE_GENERIC_PLAN, PlanCacheMode.FORCE_CUSTOM_PLAN, PlanCacheMode.AUTO)
#: ``--quick``: 0, 32, 256 partitions x 3 modes, 1 client, 3 s (about 1 minute).
QUICK: dict[str, Any] = dict(scale=1, partitions=(0, 32, 256), modes=MODES, clients=1, duration_s=3.0)
#: Default: 0, 8, 32, 128, 512, 2048 partitions x 3 modes, 1 client (as Langote), 10 s (about 5 minutes).
DEFAULT: dict[str, Any] = dict(scale=1, partitions=(0, 8, 32, 128, 512, 2048), modes=MODES, clients=1,
                               duration_s=10.0)
_POINT_OVERHEAD_S = 1.5


def required_mlpt(partitions: int, clients: int, base_mlpt: int, max_connections: int = 100) -> int:
    """max_locks_per_transaction (power of two, >= ``base_mlpt``) at which ``clients`` backends each holding the
    locks of building a generic plan (parent, its index, every partition and its index: 2 P + 4) fit the shared
    lock table, ``NLOCKENTS = mlpt * (MaxBackends + max_prepared_transactions)`` with MaxBackends taken as
    ``max_connections + 20`` (lock.c, postinit.c InitializeMaxBackends).
    """
    needed = math.ceil(clients * (2 * partitions + 4) * 1.25 / (max_connections + 20))
    return max(base_mlpt, _next_power_of_2(max(needed, 1)))


@dataclass(frozen=True)
class PartitionsScenario:
    """Configuration of the partition sweep.

    :ivar pg_bins: bin directories (None = embedded PostgreSQL 18).
    :ivar scale: pgbench scale factor.
    :ivar partitions: partition counts (0 = not partitioned).
    :ivar modes: plan_cache_mode values.
    :ivar clients: pgbench clients (count).
    :ivar duration_s: pgbench run per point (s).
    :ivar mlpt: max_locks_per_transaction (raised per point when needed, see :func:`required_mlpt`).
    :ivar warmup_s: unmeasured pgbench run before each point (s).
    :ivar sample_hz: wait-event sampling rate (Hz).
    """

    pg_bins: tuple[Path | None, ...] = (None,)
    scale: int = DEFAULT["scale"]
    partitions: tuple[int, ...] = DEFAULT["partitions"]
    modes: tuple[PlanCacheMode, ...] = DEFAULT["modes"]
    clients: int = DEFAULT["clients"]
    duration_s: float = DEFAULT["duration_s"]
    mlpt: int = DEFAULT_MAX_LOCKS_PER_TRANSACTION
    warmup_s: float = 0.0
    sample_hz: float = 10.0
    profile: str = "default"
    name: str = field(default="partitions", init=False)

    def __post_init__(self) -> None:
        check_options(pg_bins=self.pg_bins, mlpts=(self.mlpt,), scale=self.scale, clients=self.clients,
                      duration_s=self.duration_s, warmup_s=self.warmup_s, sample_hz=self.sample_hz)
        if not self.partitions or min(self.partitions) < 0 or max(self.partitions) > 8192:
            raise BadInputError("--partitions values must be between 0 and 8192")
        if max(self.partitions) > self.scale * 100_000:
            raise BadInputError("more partitions than pgbench_accounts rows: raise --scale")
        bad = [m for m in self.modes if m not in tuple(PlanCacheMode)]
        if bad or not self.modes:
            raise BadInputError(f"unknown plan_cache_mode {bad[0] if bad else ''!r}: use {', '.join(MODES)}")
        object.__setattr__(self, "modes", tuple(PlanCacheMode(m) for m in self.modes))  # --plan-cache-modes text

    def plan(self) -> tuple[int, float]:
        points = len(self.pg_bins) * len(self.partitions) * len(self.modes)
        setup = len(self.pg_bins) * sum(3 + 0.01 * p + 0.3 * self.scale for p in self.partitions)
        return points, setup + points * (self.duration_s + self.warmup_s + _POINT_OVERHEAD_S)

    def parameters(self) -> dict[str, Any]:
        return {
            "profile": self.profile, "pg_bins": pg_bins_parameter(self.pg_bins),
            "scale": self.scale, "partitions": list(self.partitions), "plan_cache_modes": list(self.modes),
            "clients": self.clients, "duration_s": self.duration_s, "warmup_s": self.warmup_s,
            "max_locks_per_transaction": self.mlpt, "sample_hz": self.sample_hz, "protocol": "prepared",
            "transaction": "pgbench -S -M prepared", "statement": PK_SELECT,
        }

    def run(self, ctx: LabContext) -> None:
        """Measure every (version, partitions, mode) point; see the module docstring."""
        base = ScratchSettings(max_locks_per_transaction=self.mlpt, track_planning=True)
        for bin_dir in self.pg_bins:
            ctx.check_stop()
            with ctx.server(bin_dir, base) as (server, info):
                install_pg_stat_statements(server)
                for parts in self.partitions:
                    ctx.check_stop()
                    mlpt = required_mlpt(parts, self.clients, self.mlpt)
                    server.configure(base.replace(max_locks_per_transaction=mlpt))
                    ctx.progress.step(f"PG {info.pg_version}: pgbench -i -s {self.scale} --partitions={parts}")
                    pgbench_init(server, self.scale, partitions=parts)
                    for mode in self.modes:
                        ctx.check_stop()
                        ctx.progress.step(f"PG {info.pg_version}: {parts} partitions, {mode}, "
                                          f"{self.clients} client(s)")
                        server.configure(base.replace(max_locks_per_transaction=mlpt, plan_cache_mode=mode))
                        ctx.record(self._point(server, info, parts, mode, mlpt))

    def _point(self, server: Any, info: Any, parts: int, mode: PlanCacheMode, mlpt: int) -> dict[str, Any]:
        with connect(server.conninfo()) as session:
            fp = measure_footprint(session, PK_SELECT, params=["1"], protocol="prepared", plan_cache_mode=mode,
                                   executions=7)
            slots = session.facts.capacity.slots
        steady = fp.executions[-1]
        peak = max(fp.executions, key=lambda e: e.lock_count)
        row: dict[str, Any] = {
            "pg_version": info.pg_version, "pg_major": info.major, "partitions": parts, "plan_cache_mode": mode,
            "max_locks_per_transaction": mlpt, "fast_path_slots": slots, "clients": self.clients,
            "locks_per_execution": steady.lock_count, "main_table_locks": steady.main_table_count,
            "steady_phase": steady.phase, "steady_plan_type": steady.plan_type or "",
            "peak_locks": peak.lock_count, "peak_execution": peak.number,
            "locks_by_execution": ",".join(str(e.lock_count) for e in fp.executions),
        }
        columns, _ = measure_load_columns(server, clients=self.clients, duration_s=self.duration_s,
                                          protocol="prepared", sample_hz=self.sample_hz, warmup_s=self.warmup_s,
                                          statement_filter=is_pk_select)
        return {**row, **columns}


def summary(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per (version, mode): TPS at the most partitions vs at 32 (or the fewest > 0), and whether the steady
    generic-plan execution locked exactly P + 1 relations at every P.
    """
    out = []
    for version, mode in sorted({(r["pg_version"], r["plan_cache_mode"]) for r in rows}):
        pts = sorted((r for r in rows if r["pg_version"] == version and r["plan_cache_mode"] == mode),
                     key=lambda r: r["partitions"])
        parted = [r for r in pts if r["partitions"] > 0]
        ref = next((r for r in parted if r["partitions"] == 32), parted[0] if parted else None)
        top = parted[-1] if parted else None
        ratio = top["tps"] / ref["tps"] if top and ref and top is not ref and ref.get("tps") else math.nan
        out.append({
            "pg_version": version, "plan_cache_mode": mode,
            "reference_partitions": ref["partitions"] if ref else None, "tps_reference": ref["tps"] if ref else None,
            "max_partitions": top["partitions"] if top else None, "tps_max": top["tps"] if top else None,
            "tps_ratio": ratio,
            "locks_equal_p_plus_1": all(r["locks_per_execution"] == r["partitions"] + 1 for r in pts),
            "locks_per_execution": ",".join(f"{r['partitions']}:{r['locks_per_execution']}" for r in pts),
        })
    return out
