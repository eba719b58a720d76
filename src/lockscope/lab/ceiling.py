"""``lockscope lab ceiling``: calibrate the forecast model (:mod:`lockscope.forecast`) on this machine.

One scratch server (PostgreSQL 18 by default) at ``max_locks_per_transaction`` 16, so a backend has one group of 16
fast-path slots (postinit.c ``InitializeFastPathLocks``) and every relation lock beyond the first 16 goes to the
main lock table (lock.c ``LockAcquireExtended``), with ``plan_cache_mode = force_generic_plan`` (it changes only
the prepared points: the simple protocol has no plan cache). pgbench custom scripts whose lock counts lockscope
controls:

- ``generic_k``: ``SELECT * FROM cal_gK WHERE k = :k`` with ``-M prepared`` on a list-partitioned table of empty
  partitions without indexes. Reusing the cached generic plan, plancache.c ``CheckCachedPlan`` ->
  ``AcquireExecutorLocks`` locks the parent and every partition (``LockRelationOid``, range-table order = the
  partition bound order) and nothing else: no parse, no planning, and run-time pruning leaves one partition to
  scan. So ``generic_2`` (parent + 1 partition) vs ``generic_200`` (parent + 199) at max_locks_per_transaction
  1024 (64 groups: all fast-path) is the cost of a fast-path relation lock as a cached generic plan takes it, and
  ``generic_200`` at 16 slots (184 spilled) vs at 1024 the extra cost of a main-table lock; 15 filler partitions
  followed by S more spill exactly those S.
- Which lock partition the S spilled locks land in is chosen: many small tables are created and those whose
  ``lock_partition(database OID, OID)`` (:func:`lockscope.lockpart.lock_partition`) is ``p`` are attached after the
  fillers ("one partition", ``generic_one``), or S tables over all 16 partitions (``generic_spread``). The spilled
  set is checked with the footprint engine (the prepared protocol, execution 2 = generic-plan reuse).
- ``pk_select``: pgbench's own ``-S`` (simple protocol, and ``-M prepared``) on a scale-1 database: the base CPU of
  a planned and of a cached-generic-plan primary-key lookup.
- ``index_k``: ``SELECT * FROM cal_ixK WHERE id = 1`` (simple protocol) on an empty table with a primary key and
  k - 1 more indexes (k = 1 and 101, at max_locks_per_transaction 1024: all fast-path): the planner opens every
  index (plancat.c ``get_relation_info``), so the slope minus a lock is the planning cost of one more relation.
- ``scan_k``: ``SELECT * FROM cal_sK WHERE v = :v`` with ``-M prepared`` on a list-partitioned table of k - 1
  partitions of 1,000 rows with an index on ``v`` (not the partition key): the cached generic plan runs an index
  scan on every partition (nothing to prune with), and its executor locks each partition and its index, so
  ``scan_200`` vs ``scan_2`` minus two fast-path locks per partition is the executor's cost of one more relation
  initialised and scanned (execMain.c ``InitPlan``, nodeIndexscan.c ``ExecInitIndexScan``: the index opened, a
  B-tree descent, the scan ended).
- The base statement's own planning and execution time: ``EXPLAIN (ANALYZE, SUMMARY)`` of pgbench -S's statement,
  median of 200, one client (:func:`lockscope.db.time_on_scratch`): splits the base CPU into the statement's own
  cost and the rest of a transaction, so a statement whose own times are known is forecast with them.
- The execution time of one planner cost unit (:mod:`lockscope.lab.cost_unit`): five statements of different
  shapes on pgbench's tables, timed like the base statement (median of 20) with their plans' total costs; the
  median seconds per unit and how far the shapes spread around it (``exec_s_per_cost_unit``,
  ``cost_estimate_error``): a statement whose execution time is unknown is forecast from its plan's cost.
- The lock and main-table counts of ``generic_200`` and ``index_101`` at both settings are checked with the
  footprint engine before they are measured (0 and 184 / 86 main-table locks).

Single-client points give the per-lock and per-relation slopes (1 / TPS; a lone client's idle round trip cancels
in the differences). Points with as many clients as cores (``pk_select_simple``, ``generic_16``,
``generic_spread``) give the CPU per transaction with every core busy, read from ``/proc/stat`` over the run: the
base costs, the idle round trip (1 / TPS alone minus that CPU) and the coherence cost of main-table acquisitions
when two cores use the same partitions. Points with N clients give the CPU growth per doubling of clients and, from
the context switches per transaction, the LWLock sleeps of the one-partition and spread scripts: the hold (the
one-partition sleeps over ``X (S + 1)^2``), the CPU of a sleep, and the wake-up latency that makes the model
reproduce the one-partition LockManager time. Each point is measured ``repeats`` times, interleaved, and the best
TPS kept. The result is ``calibration.json`` (schema ``lockscope/calibration/v2``) in the results directory, read
by ``lockscope forecast --calibration``; :func:`fit_calibration` says how each figure is derived.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..db import Session, connect, load_script, run_script, time_on_scratch
from ..errors import BadInputError, LockscopeError
from ..forecast.calibration import SCHED_TICK_S, save_calibration
from ..forecast.fit import BIG, BIG_INDEXES, CEILING_MLPT, FILLERS, WIDE_MLPT, fit_calibration
from ..lockpart import NUM_LOCK_PARTITIONS, lock_partition
from ..pgbench import pgbench_init
from ..rows import ClassNameRow, DatabaseFactsRow
from ..server import ScratchServer, ScratchSettings
from ..vocab import PlanCacheMode, PlanPhase
from .cost_unit import measure_cost_unit
from .load import install_pg_stat_statements, is_pk_select, measure_load, measure_load_columns
from .options import check_options, pg_bins_parameter
from .runner import LabContext

__all__ = ["CALIBRATION_FILE", "DEFAULT", "QUICK", "CeilingScenario", "kernel_tick_s"]

#: Written into the results directory.
CALIBRATION_FILE = "calibration.json"
#: ``--quick``: about 1.5 minutes on 2 cores.
QUICK: dict[str, Any] = dict(clients=8, duration_s=2.0, spilled=24, repeats=2)
#: The default profile: about 7 minutes.
DEFAULT: dict[str, Any] = dict(clients=16, duration_s=4.0, spilled=24, repeats=4)
#: pgbench -S's statement, timed for the base statement's own planning and execution time.
BASE_STATEMENT = "SELECT abalance FROM pgbench_accounts WHERE aid = 1"
#: Small tables created to pick the spilled ones from (enough for 24 in one partition at 1/16 each, with margin).
_POOL_FACTOR = 40
_POINT_OVERHEAD_S = 1.5


@dataclass(frozen=True)
class CeilingScenario:
    """Configuration of the calibration run.

    :ivar pg_bins: the server's bin directory (one; None = embedded PostgreSQL 18).
    :ivar clients: clients of the contended points (count).
    :ivar duration_s: pgbench run per point (s).
    :ivar spilled: main-table locks per transaction in the contended points (count, 1..64).
    :ivar partition: the lock partition the one-partition locks hash to (0..15).
    :ivar repeats: each point is measured this many times, interleaved; the best TPS is kept (other load on the
        machine only ever slows a point down).
    :ivar sample_hz: wait-event sampling rate (Hz).
    """

    pg_bins: tuple[Path | None, ...] = (None,)
    clients: int = DEFAULT["clients"]
    duration_s: float = DEFAULT["duration_s"]
    spilled: int = DEFAULT["spilled"]
    partition: int = 5
    repeats: int = DEFAULT["repeats"]
    warmup_s: float = 0.0
    sample_hz: float = 10.0
    profile: str = "default"
    name: str = field(default="ceiling", init=False)

    def __post_init__(self) -> None:
        check_options(pg_bins=self.pg_bins, mlpts=(CEILING_MLPT,), scale=1, clients=self.clients,
                      duration_s=self.duration_s, warmup_s=self.warmup_s, sample_hz=self.sample_hz)
        if len(self.pg_bins) != 1:
            raise BadInputError("lab ceiling calibrates one server: give --pg-bin at most once")
        if not 1 <= self.spilled <= 64:
            raise BadInputError("--spilled must be between 1 and 64")
        if not 0 <= self.partition < NUM_LOCK_PARTITIONS:
            raise BadInputError("--partition must be between 0 and 15")
        if not 1 <= self.repeats <= 10:
            raise BadInputError("--repeats must be between 1 and 10")

    def _points(self) -> list[tuple[str, int, int]]:
        """(point, clients, max_locks_per_transaction), in the order measured: the wide block first (one restart),
        then the 16-slot block; repeats interleaved within each block."""
        wide = [(p, 1, WIDE_MLPT) for p in ("generic_2", f"generic_{BIG}", "index_1", f"index_{BIG_INDEXES + 1}",
                                            "scan_2", f"scan_{BIG}")]
        single = [(p, 1, CEILING_MLPT) for p in ("pk_select_simple", "pk_select_prepared", f"generic_{BIG}",
                                                 "generic_16", "generic_spread", "generic_one")]
        cores = os.cpu_count() or 1
        busy = [(p, cores, CEILING_MLPT) for p in ("pk_select_simple", "generic_16", "generic_spread")]
        contended = [(p, self.clients, CEILING_MLPT)
                     for p in ("generic_16", "pk_select_simple", "generic_one", "generic_spread")]
        return wide * self.repeats + single * self.repeats + busy * self.repeats + contended * self.repeats

    def plan(self) -> tuple[int, float]:
        points = len(self._points())
        return points, 8 + points * (self.duration_s + self.warmup_s + _POINT_OVERHEAD_S)

    def parameters(self) -> dict[str, Any]:
        return {
            "profile": self.profile, "pg_bins": pg_bins_parameter(self.pg_bins),
            "max_locks_per_transaction": CEILING_MLPT, "clients": self.clients, "duration_s": self.duration_s,
            "spilled": self.spilled, "partition": self.partition, "repeats": self.repeats,
            "sample_hz": self.sample_hz, "cores": os.cpu_count(),
        }

    # -- run ---------------------------------------------------------------------------------------------------
    def run(self, ctx: LabContext) -> None:
        """Set up the tables and scripts, verify the spilled sets, measure every point, fit and write the
        calibration (see the module docstring)."""
        settings = ScratchSettings(max_locks_per_transaction=CEILING_MLPT, track_planning=False,
                                   extra={"plan_cache_mode": "force_generic_plan"})
        with ctx.server(self.pg_bins[0], settings) as (server, info):
            ctx.progress.step(f"PG {info.pg_version}: pgbench -i -s 1 and the calibration tables")
            pgbench_init(server, 1)
            install_pg_stat_statements(server)
            explain_ms = time_on_scratch(server.conninfo(), BASE_STATEMENT, runs=200)
            cost_unit = measure_cost_unit(server.conninfo())
            ctx.extras["cost_unit"] = {"exec_s_per_cost_unit": cost_unit.exec_s_per_cost_unit,
                                       "error_factor": cost_unit.error_factor,
                                       "points": [list(p) for p in cost_unit.points]}
            steady_ms = _base_steady_ms(server, self.duration_s)
            ctx.extras["base_statement_ms"] = {"statement": BASE_STATEMENT, "explain": list(explain_ms),
                                               "pg_stat_statements": list(steady_ms)}
            one, spread = self._tables(server)
            scripts = self._scripts(ctx.out_dir)
            ctx.extras["one_partition_tables"] = list(one)
            ctx.extras["spread_tables"] = list(spread)
            ctx.extras["verification"] = self._verify(server, one, spread)
            ctx.extras["verification"][f"mlpt_{CEILING_MLPT}"] = self._verify_counts(server, CEILING_MLPT)
            current = CEILING_MLPT
            for point, clients, mlpt in self._points():
                ctx.check_stop()
                if mlpt != current:
                    server.configure(settings.replace(max_locks_per_transaction=mlpt))
                    current = mlpt
                    ctx.extras.setdefault("verification", {})[f"mlpt_{mlpt}"] = self._verify_counts(server, mlpt)
                ctx.progress.step(f"{point}, {clients} client{'s' if clients > 1 else ''}, "
                                  f"max_locks_per_transaction {mlpt}")
                ctx.record(self._measure(server, info, point, clients, mlpt, scripts))
            calibration, checks = fit_calibration(ctx.rows, spilled=self.spilled, clients=self.clients,
                                                  cores=os.cpu_count() or 1, server_version=info.pg_version,
                                                  base_statement_ms=steady_ms, base_explain_ms=explain_ms)
            calibration = replace(calibration, exec_s_per_cost_unit=cost_unit.exec_s_per_cost_unit,
                                  cost_estimate_error=cost_unit.error_factor, sched_tick_s=kernel_tick_s())
            save_calibration(calibration, ctx.out_dir / CALIBRATION_FILE)
            ctx.extras["calibration"] = calibration.to_json()
            ctx.extras["checks"] = checks

    def _tables(self, server: ScratchServer) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """Create the tables, pick the S spilled ones by lock partition, attach them after the fillers."""
        pool = self.spilled * _POOL_FACTOR
        run_script(server.conninfo(), load_script("scenario_ceiling", fillers=FILLERS - 1, pool=pool, big=BIG,
                                                  big_parts=BIG - 1, big_ix=BIG_INDEXES + 1, big_indexes=BIG_INDEXES))
        with connect(server.conninfo()) as session:
            db = session.query_rows("forecast_database", DatabaseFactsRow)[0].database_oid
            rows = session.query_rows("lab_ceiling_pool", ClassNameRow)
        by_part: dict[int, list[str]] = {}
        for r in rows:
            by_part.setdefault(lock_partition(db, r.oid), []).append(r.relname)
        one = by_part.get(self.partition, [])[: self.spilled]
        if len(one) < self.spilled:
            raise LockscopeError(f"only {len(one)} of {pool} tables hash to partition {self.partition}")
        spread: list[str] = []
        depth = 0
        while len(spread) < self.spilled:
            for p in range(NUM_LOCK_PARTITIONS):
                free = [t for t in by_part.get(p, []) if t not in one]
                if len(spread) < self.spilled and depth < len(free):
                    spread.append(free[depth])
            depth += 1
        attach = []
        for parent, chosen in (("cal_gone", one), ("cal_gspread", spread)):
            attach += [f"ALTER TABLE {parent} ATTACH PARTITION {name} FOR VALUES IN ({FILLERS + i});"
                       for i, name in enumerate(chosen)]
        run_script(server.conninfo(), "".join(attach) + "ANALYZE;")
        return tuple(one), tuple(spread)

    def _scripts(self, out: Path) -> dict[str, Path]:
        parents = {"generic_2": "cal_g2", "generic_16": "cal_g16", "generic_one": "cal_gone",
                   "generic_spread": "cal_gspread"}
        parents[f"generic_{BIG}"] = f"cal_g{BIG}"
        texts = {name: f"\\set k 1\nSELECT * FROM {parent} WHERE k = :k;\n" for name, parent in parents.items()}
        for k in (2, BIG):
            texts[f"scan_{k}"] = f"\\set v random(1, 1000)\nSELECT * FROM cal_s{k} WHERE v = :v;\n"
        texts["index_1"] = "SELECT * FROM cal_ix1 WHERE id = 1;\n"
        texts[f"index_{BIG_INDEXES + 1}"] = f"SELECT * FROM cal_ix{BIG_INDEXES + 1} WHERE id = 1;\n"
        folder = out / "scripts"
        folder.mkdir(exist_ok=True)
        out_paths = {}
        for name, text in texts.items():
            path = folder / f"{name}.sql"
            path.write_text(text, encoding="utf-8")
            out_paths[name] = path
        return out_paths

    def _verify(self, server: ScratchServer, one: Sequence[str], spread: Sequence[str]) -> dict[str, Any]:
        """The spilled set of each contended script is exactly the chosen tables: the footprint engine on the
        script's statement, prepared, execution 2 (the cached generic plan reused).

        :raises LockscopeError: a different spilled set (the calibration would be meaningless).
        """
        from ..footprint import measure_footprint

        out: dict[str, Any] = {}
        with connect(server.conninfo()) as session:
            db = session.query_rows("forecast_database", DatabaseFactsRow)[0].database_oid
            for label, parent, chosen in (("one", "cal_gone", one), ("spread", "cal_gspread", spread)):
                oids = _oids(session, chosen)
                want = set(oids.values())
                fp = measure_footprint(session, f"SELECT * FROM {parent} WHERE k = $1", params=["1"],
                                       protocol="prepared", plan_cache_mode=PlanCacheMode.FORCE_GENERIC_PLAN,
                                       executions=2)
                steady = fp.executions[-1]
                got = {lk.relation_oid for lk in steady.locks if not lk.fastpath}
                parts = sorted({lock_partition(db, o) for o in want})
                if steady.phase is not PlanPhase.GENERIC_REUSE or got != want \
                        or steady.lock_count != FILLERS + len(chosen):
                    raise LockscopeError(f"{label}: the spilled set differs from the chosen tables ({len(got)} "
                                         f"spilled, {len(want)} chosen, {steady.lock_count} locks, {steady.phase})")
                out[label] = {"locks": steady.lock_count, "spilled": len(want), "partitions": parts,
                              "footprint_matches": True}
        return out

    def _verify_counts(self, server: ScratchServer, mlpt: int) -> dict[str, Any]:
        """Locks and main-table locks of the big scripts at this setting, measured with the footprint engine
        (at the wide setting nothing may spill; at 16 slots exactly locks - 16 spill).

        :raises LockscopeError: another count.
        """
        from ..footprint import measure_footprint

        out: dict[str, Any] = {}
        with connect(server.conninfo()) as session:
            gen = measure_footprint(session, f"SELECT * FROM cal_g{BIG} WHERE k = $1", params=["1"],
                                    protocol="prepared", plan_cache_mode=PlanCacheMode.FORCE_GENERIC_PLAN,
                                    executions=2).executions[-1]
            idx = measure_footprint(session, f"SELECT * FROM cal_ix{BIG_INDEXES + 1} WHERE id = 1").executions[0]
        for name, e, locks in ((f"generic_{BIG}", gen, BIG), (f"index_{BIG_INDEXES + 1}", idx, BIG_INDEXES + 2)):
            want = 0 if mlpt == WIDE_MLPT else locks - FILLERS
            if e.lock_count != locks or e.main_table_count != want:
                raise LockscopeError(f"{name} at max_locks_per_transaction {mlpt}: {e.lock_count} locks, "
                                     f"{e.main_table_count} in the main table; expected {locks} and {want}")
            out[name] = {"locks": e.lock_count, "main_table_locks": e.main_table_count}
        return out

    def _measure(self, server: ScratchServer, info: Any, point: str, clients: int, mlpt: int,
                 scripts: dict[str, Path]) -> dict[str, Any]:
        locks = {"pk_select_simple": 2, "pk_select_prepared": 2, "generic_2": 2, "generic_16": FILLERS,
                 "generic_one": FILLERS + self.spilled, "generic_spread": FILLERS + self.spilled,
                 f"generic_{BIG}": BIG, "index_1": 2, f"index_{BIG_INDEXES + 1}": BIG_INDEXES + 2,
                 "scan_2": 3, f"scan_{BIG}": 2 * BIG - 1}[point]
        spilled = 0 if mlpt == WIDE_MLPT else max(0, locks - FILLERS)
        options: dict[str, Any] = dict(clients=clients, duration_s=self.duration_s, sample_hz=self.sample_hz,
                                       warmup_s=self.warmup_s)
        if point.startswith("pk_select"):
            options.update(protocol="prepared" if point.endswith("prepared") else "simple", select_only=True)
        else:
            options.update(script_file=scripts[point], select_only=False,
                           protocol="prepared" if point.startswith(("generic", "scan")) else "simple")
        columns, _ = measure_load_columns(server, **options)
        return {"pg_version": info.pg_version, "point": point, "clients": clients,
                "max_locks_per_transaction": mlpt, "relation_locks": locks, "main_table_locks": spilled, **columns}


def kernel_tick_s(configs: Sequence[Path] | None = None) -> float:
    """The scheduler tick of the kernel this runs on (s): ``1 / CONFIG_HZ`` from its build configuration
    (``/proc/config.gz``, else ``/boot/config-<release>``), :data:`SCHED_TICK_S` when none is readable or none
    gives ``CONFIG_HZ``.

    :param configs: the configuration files to try, in order (plain text, or gzip when the name ends in ``.gz``).
    """
    import gzip

    for path in configs if configs is not None else (Path("/proc/config.gz"),
                                                     Path("/boot") / f"config-{os.uname().release}"):
        try:
            raw = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
        except (OSError, EOFError, gzip.BadGzipFile):
            continue
        for line in raw.decode("ascii", "replace").splitlines():
            if line.startswith("CONFIG_HZ="):
                hz = line.partition("=")[2].strip()
                if hz.isdigit() and int(hz) > 0:
                    return 1.0 / int(hz)
    return SCHED_TICK_S


def _base_steady_ms(server: ScratchServer, duration_s: float) -> tuple[float, float]:
    """The base statement's mean planning and execution time (ms) as pg_stat_statements records them: pgbench -S,
    one client, with ``track_planning`` on for the database during the run (off again after: it costs a
    spinlock per planning)."""
    run_script(server.conninfo(), "ALTER DATABASE postgres SET pg_stat_statements.track_planning = on")
    try:
        load = measure_load(server, clients=1, duration_s=max(2.0, duration_s), statement_filter=is_pk_select)
    finally:
        run_script(server.conninfo(), "ALTER DATABASE postgres RESET pg_stat_statements.track_planning")
    plan = load.mean_plan_ms if math.isfinite(load.mean_plan_ms) else 0.0
    return plan, load.mean_exec_ms if math.isfinite(load.mean_exec_ms) else 0.0


def _oids(session: Session, names: Sequence[str]) -> dict[str, int]:
    return {r.relname: r.oid for r in session.query_rows("lab_ceiling_oids", ClassNameRow, [list(names)])}

