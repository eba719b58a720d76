"""``lockscope lab indexes``: TPS, planning time, lock footprint and LockManager waits vs extra indexes.

Reproduces PostgresAI #PostgresMarathon 2-004 / 2-005: ``pgbench -S`` (simple protocol) on pgbench_accounts with
0..N extra indexes, at several max_locks_per_transaction. A primary-key SELECT locks the table, its primary key and
every extra index at planning time (``plancat.c get_relation_info``), i.e. 2 + k relations; once they exceed the
backend's fast-path slots (16 on PG 13-17; on PG 18+ the 16 slots of each group, ``lock.c FAST_PATH_REL_GROUP``)
the rest go to the main lock table, whose partition LWLocks (``LWLock:LockManager``) the clients then queue on.

Per point (version, max_locks_per_transaction, extra indexes), on a server restarted with reset settings:
the footprint of ``SELECT abalance FROM pgbench_accounts WHERE aid = $1`` (relation locks, main-table locks,
measured and predicted), then pgbench with pg_stat_statements reset first (mean planning and execution time) and
pg_stat_activity sampled (LockManager share of active-session samples).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..db import connect
from ..demo import PK_SELECT, set_extra_indexes
from ..errors import BadInputError
from ..footprint import measure_footprint
from ..pgbench import pgbench_init
from ..server import ScratchSettings
from .load import install_pg_stat_statements, is_pk_select, measure_load_columns
from .options import check_options, pg_bins_parameter
from .runner import LabContext

__all__ = ["DEFAULT", "QUICK", "IndexesScenario", "summary"]

#: ``--quick``: about 1 minute on 2 cores.
QUICK: dict[str, Any] = dict(scale=1, extra_indexes=(0, 14, 15, 100), mlpts=(16, 128), clients=16,
                             duration_s=3.0, warmup_s=0.0)
#: The default profile: 0..30 step 1, 50 and 100 extra indexes x mlpt 16, 64, 128, 1024 (132 points, ~15 min).
DEFAULT: dict[str, Any] = dict(scale=10, extra_indexes=(*tuple(range(31)), 50, 100), mlpts=(16, 64, 128, 1024),
                               clients=16, duration_s=5.0, warmup_s=0.0)
_POINT_OVERHEAD_S = 1.2


@dataclass(frozen=True)
class IndexesScenario:
    """Configuration of the extra-index sweep.

    :ivar pg_bins: bin directories, one server each (None = embedded PostgreSQL 18).
    :ivar scale: pgbench scale factor (100,000 pgbench_accounts rows each).
    :ivar extra_indexes: extra-index counts to measure (ascending, distinct).
    :ivar mlpts: max_locks_per_transaction values.
    :ivar clients: pgbench clients (count).
    :ivar duration_s: pgbench run per point (s).
    :ivar warmup_s: unmeasured pgbench run before each point (s; 0 = none).
    :ivar sample_hz: wait-event sampling rate (Hz).
    :ivar profile: ``quick``, ``default`` or ``custom`` (recorded only).
    """

    pg_bins: tuple[Path | None, ...] = (None,)
    scale: int = DEFAULT["scale"]
    extra_indexes: tuple[int, ...] = DEFAULT["extra_indexes"]
    mlpts: tuple[int, ...] = DEFAULT["mlpts"]
    clients: int = DEFAULT["clients"]
    duration_s: float = DEFAULT["duration_s"]
    warmup_s: float = DEFAULT["warmup_s"]
    sample_hz: float = 10.0
    profile: str = "default"
    name: str = field(default="indexes", init=False)

    def __post_init__(self) -> None:
        check_options(pg_bins=self.pg_bins, mlpts=self.mlpts, scale=self.scale, clients=self.clients,
                      duration_s=self.duration_s, warmup_s=self.warmup_s, sample_hz=self.sample_hz)
        if not self.mlpts:
            raise BadInputError("--mlpt: no value")
        if not self.extra_indexes or min(self.extra_indexes) < 0 or max(self.extra_indexes) > 1000:
            raise BadInputError("extra indexes must be between 0 and 1000")

    def plan(self) -> tuple[int, float]:
        points = len(self.pg_bins) * len(self.extra_indexes) * len(self.mlpts)
        setup = len(self.pg_bins) * (5 + 0.3 * self.scale + 0.02 * self.scale * max(self.extra_indexes))
        return points, setup + points * (self.duration_s + self.warmup_s + _POINT_OVERHEAD_S)

    def parameters(self) -> dict[str, Any]:
        return {
            "profile": self.profile, "pg_bins": pg_bins_parameter(self.pg_bins),
            "scale": self.scale, "extra_indexes": list(self.extra_indexes),
            "max_locks_per_transaction": list(self.mlpts),
            "clients": self.clients, "duration_s": self.duration_s, "warmup_s": self.warmup_s,
            "sample_hz": self.sample_hz, "protocol": "simple", "transaction": "pgbench -S (select-only)",
            "statement": PK_SELECT,
        }

    def run(self, ctx: LabContext) -> None:
        """Measure every (version, extra indexes, mlpt) point; see the module docstring."""
        base = ScratchSettings(max_locks_per_transaction=self.mlpts[0], track_planning=True)
        for bin_dir in self.pg_bins:
            ctx.check_stop()
            with ctx.server(bin_dir, base) as (server, info):
                ctx.progress.step(f"PG {info.pg_version}: pgbench -i -s {self.scale}")
                pgbench_init(server, self.scale)
                install_pg_stat_statements(server)
                built = 0
                for k in self.extra_indexes:
                    ctx.check_stop()
                    if k > built:
                        ctx.progress.step(f"PG {info.pg_version}: creating extra indexes {built + 1}..{k}")
                        set_extra_indexes(server.conninfo(), k)
                        built = k
                    for mlpt in self.mlpts:
                        ctx.check_stop()
                        ctx.progress.step(f"PG {info.pg_version}: {k} extra indexes, "
                                          f"max_locks_per_transaction={mlpt}, {self.clients} clients")
                        server.configure(base.replace(max_locks_per_transaction=mlpt))
                        ctx.record(self._point(server, info, k, mlpt))

    def _point(self, server: Any, info: Any, k: int, mlpt: int) -> dict[str, Any]:
        with connect(server.conninfo()) as session:
            fp = measure_footprint(session, PK_SELECT, params=["1"])
            cap = session.facts.capacity
        e = fp.executions[0]
        row: dict[str, Any] = {
            "pg_version": info.pg_version, "pg_major": info.major, "max_locks_per_transaction": mlpt,
            "fast_path_slots": cap.slots, "extra_indexes": k, "clients": self.clients,
            "relation_locks": e.lock_count, "fastpath_locks": e.fastpath_count, "main_table_locks": e.main_table_count,
            "predicted_main_table_locks": e.predicted_main_table_count,
        }
        columns, _ = measure_load_columns(server, clients=self.clients, duration_s=self.duration_s,
                                          sample_hz=self.sample_hz, warmup_s=self.warmup_s,
                                          statement_filter=is_pk_select)
        return {**row, **columns}


def summary(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per (version, mlpt): first extra-index count spilling to the main lock table, the planning-time ratio at
    that step (after/before), and at the largest extra-index count TPS vs the largest mlpt and the top wait.

    :return: one dict per (pg_version, max_locks_per_transaction).
    """
    out = []
    keys = sorted({(r["pg_version"], r["max_locks_per_transaction"]) for r in rows},
                  key=lambda kv: (kv[0], kv[1]))
    for version, mlpt in keys:
        pts = sorted((r for r in rows if r["pg_version"] == version and r["max_locks_per_transaction"] == mlpt),
                     key=lambda r: r["extra_indexes"])
        by_k = {r["extra_indexes"]: r for r in pts}
        spill = next((r["extra_indexes"] for r in pts if r["main_table_locks"]), None)
        last_clean = max((r["extra_indexes"] for r in pts if not r["main_table_locks"]
                          and (spill is None or r["extra_indexes"] < spill)), default=None)
        step_ratio = math.nan
        if spill is not None and spill - 1 in by_k:
            before: Any = by_k[spill - 1].get("mean_plan_ms")
            after: Any = by_k[spill].get("mean_plan_ms")
            if _num(before) and _num(after):
                step_ratio = after / before
        kmax = pts[-1]["extra_indexes"]
        top_mlpt = max(r["max_locks_per_transaction"] for r in rows if r["pg_version"] == version)
        ref = next((r for r in rows if r["pg_version"] == version and r["max_locks_per_transaction"] == top_mlpt
                    and r["extra_indexes"] == kmax), None)
        tps_ratio = (pts[-1]["tps"] / ref["tps"]) if ref and _num(ref.get("tps")) and _num(pts[-1].get("tps")) \
            and ref["tps"] else math.nan
        out.append({
            "pg_version": version, "max_locks_per_transaction": mlpt, "fast_path_slots": pts[0].get("fast_path_slots"),
            "first_spill_extra_indexes": spill, "last_clean_extra_indexes": last_clean,
            "plan_ms_step_ratio": step_ratio, "max_extra_indexes": kmax, "tps_at_max": pts[-1].get("tps"),
            "tps_ratio_vs_mlpt": top_mlpt, "tps_ratio": tps_ratio,
            "lockmanager_share_at_max": pts[-1].get("lockmanager_share"), "top_wait_at_max": pts[-1].get("top_wait"),
            "main_table_locks_at_max": pts[-1].get("main_table_locks"),
        })
    return out


def _num(v: Any) -> bool:
    return isinstance(v, (int, float)) and math.isfinite(v) and v > 0
