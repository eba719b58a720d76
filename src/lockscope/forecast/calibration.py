"""Calibration of the forecast model: the machine's costs per transaction, per lock and per LWLock sleep.

:class:`Calibration` holds the costs the model (:mod:`lockscope.forecast.model`) turns into service demands;
``lockscope lab ceiling`` measures them on the machine at hand (:func:`lockscope.forecast.fit.fit_calibration`) and
writes them with :func:`save_calibration` (JSON, schema :data:`SCHEMA`), read back with :func:`load_calibration`.

:data:`DEFAULT_CALIBRATION` is one such measurement: ``lockscope lab ceiling`` (default profile) on a 2-core x86_64
VM, PostgreSQL 18.6, 2026-11-26 (benchmarks/results/calibration-2026-11-26/ceiling; BENCHMARKS.md, "forecast:
calibration"). Prefer a calibration measured on a machine like production.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from lockscope.errors import BadInputError

__all__ = ["CONVOY_PER_CORE", "DEFAULT_CALIBRATION", "GENERIC_BASE_RATIO", "SCHED_TICK_S", "SCHEMA", "Calibration",
           "load_calibration", "published_generic_base_s", "save_calibration"]

#: Versioned schema name of a calibration JSON file (v1, before the LWLock sleep model, is refused; v2, before
#: statement costs and the convoy term, is read with those figures at 0).
SCHEMA = "lockscope/calibration/v3"
_OLDER = "lockscope/calibration/v2"
_MEASURED_CORES = 2
#: Base CPU of a cached generic plan relative to a planned statement when a calibration does not give it:
#: Langote's single-client pgbench -S, simple 17,201 TPS vs prepared 32,234 TPS (published-benchmarks.md), 0.534.
GENERIC_BASE_RATIO = 17_201.0 / 32_234.0
#: :attr:`Calibration.convoy_per_core` where a calibration cannot measure it (``lab ceiling`` runs with as many
#: clients as a few cores; v2 files): fitted, one factor per machine class, on Vondra's published join curves with
#: 100 partitions (benchmarks/forecast_real.py --published; BENCHMARKS.md "forecast: real statements"): 0.06 on a
#: 2-socket AMD EPYC, 0.10 on a 2-socket Intel Xeon; their mean.
CONVOY_PER_CORE = 0.07
#: :attr:`Calibration.sched_tick_s` when a calibration does not give it: 4 ms, Linux's Kconfig default
#: ``CONFIG_HZ_250`` (and this VM's kernel, 6.18).
SCHED_TICK_S = 0.004
_SECONDS = ("base_cpu_s", "fastpath_lock_cpu_s", "main_table_lock_extra_cpu_s", "lwlock_hold_s",
            "planned_relation_cpu_s", "idle_round_trip_s", "coherence_cpu_s", "sleep_cpu_s", "wake_latency_s",
            "base_plan_s", "base_exec_s", "executor_relation_cpu_s", "explain_plan_extra_s", "explain_exec_extra_s",
            "exec_s_per_cost_unit")
_REQUIRED = ("base_cpu_s", "fastpath_lock_cpu_s", "main_table_lock_extra_cpu_s", "lwlock_hold_s")


def published_generic_base_s(base_cpu_s: float) -> float:
    """The base CPU of a cached-generic-plan transaction (s) when it is not measured: :data:`GENERIC_BASE_RATIO`
    of a planned one's ``base_cpu_s`` (s)."""
    return base_cpu_s * GENERIC_BASE_RATIO


@dataclass(frozen=True)
class Calibration:
    """The machine's costs the forecast model needs (seconds, all >= 0, unless said otherwise).

    CPU figures are per transaction of a pgbench-like closed loop with every core busy (core-seconds of the whole
    machine, the client's share included when it runs on the same machine), measured by ``lab ceiling`` from
    ``/proc/stat`` over the run.

    :ivar base_cpu_s: CPU of a planned primary-key lookup apart from its two relation locks (parse, plan, execute,
        the client's round trip).
    :ivar fastpath_lock_cpu_s: CPU per relation lock taken through the fast path (lock.c
        ``FastPathGrantRelationLock``; slope of a cached generic plan over 2 vs 200 partitions).
    :ivar main_table_lock_extra_cpu_s: extra CPU of a relation lock in the main lock table with one backend running
        (shared hash insert of LOCK/PROCLOCK and its release, lock.c ``LockAcquireExtended``/``LockReleaseAll``).
    :ivar lwlock_hold_s: how long an exclusive acquisition keeps a lock-partition LWLock from others, as seen by
        them: the probability that an acquisition finds partition p held is ``X x a_p x lwlock_hold_s`` (X
        transactions/s, a_p acquisitions of p per transaction). Fitted from the LWLock sleeps (context switches) of
        the one-partition point; also the service time of the partition centres.
    :ivar cpus: cores of the machine the figures were measured on (count, >= 1).
    :ivar source: where the figures come from (free text, for reports).
    :ivar generic_base_cpu_s: ``base_cpu_s`` of a transaction that reuses a cached generic plan (no parse, no
        planning: plancache.c ``GetCachedPlan`` -> ``CheckCachedPlan``); None = ``base_cpu_s`` x
        :data:`GENERIC_BASE_RATIO`.
    :ivar planned_relation_cpu_s: CPU per relation the planner opens beyond the base statement's two, on top of its
        lock (plancat.c ``get_relation_info`` reads every index of each relation).
    :ivar idle_round_trip_s: what a lone client's transaction costs beyond its CPU while cores are idle: waking an
        idle core for the backend and again for the client (scheduler wake-up, inter-processor interrupt, on a VM
        a halted vCPU); fades out as clients reach the cores.
    :ivar cpu_growth_per_doubling: CPU per transaction grows by this fraction per doubling of clients beyond the
        cores (count >= 0: more backends share the caches, each finds less of its own working set).
    :ivar coherence_cpu_s: CPU per main-table partition acquisition (locks and release passes) once two or more
        cores run backends that use the same lock partitions: the LWLock word, the lock hash bucket and the
        LOCK/PROCLOCK lines move between cores.
    :ivar sleep_cpu_s: CPU per LWLock sleep: the semaphore wait and the wake-up, two context switches (lwlock.c
        ``LWLockAcquire`` -> ``PGSemaphoreLock``).
    :ivar wake_latency_s: time from an LWLock release that wakes a sleeper (lwlock.c ``LWLockWakeup``) until the
        sleeper runs, with no more runnable backends than cores.
    :ivar base_plan_s: planning time of the base statement (pgbench -S) as pg_stat_statements records it (mean,
        ``track_planning``), one client, steady state (s). With :attr:`base_exec_s` it splits ``base_cpu_s`` into
        the statement's own plan and execution and the rest of a transaction (protocol, parse, the client,
        commit), which any statement pays: a statement whose own times are known costs ``base_cpu_s -
        base_plan_s - base_exec_s`` + its own.
    :ivar base_exec_s: execution time of the base statement, the same way (s).
    :ivar explain_plan_extra_s: what ``EXPLAIN (ANALYZE, SUMMARY)``'s "Planning Time" of the base statement (median
        of 200, its own session) exceeds :attr:`base_plan_s` by (s, >= 0): taken off a statement's EXPLAIN
        planning time to make it a steady-state figure.
    :ivar explain_exec_extra_s: the same for "Execution Time" (s, >= 0; instrumentation, a colder cache).
    :ivar executor_relation_cpu_s: CPU per relation the executor initialises and scans beyond the first (an empty
        partition's scan node: ``ExecInitNode``, the relation opened, the scan started; slope of a cached generic
        plan that scans every partition, minus the same plan with run-time pruning, over 198 partitions).
    :ivar exec_s_per_cost_unit: execution time of one planner cost unit (s; 0 = not measured, a calibration from
        before issue 27): the median over a few statement shapes on pgbench's tables, in memory
        (:mod:`lockscope.lab.cost_unit`). A statement whose execution time is unknown is estimated as its plan's
        total cost times this.
    :ivar cost_estimate_error: how far one shape's own seconds per unit was from the median, either way (a factor
        >= 1; 0 = not measured): the estimate's range is the estimate divided and multiplied by it.
    :ivar convoy_per_core: growth of the partition LWLocks' hold, coherence and wake-up costs per backend in the
        server beyond the first (count >= 0; :func:`lockscope.forecast.model.convoy_factor`):
        lwlock.c ``LWLockAttemptLock``'s atomics on the lock word, ``LWLockQueueSelf`` and ``LWLockWakeup`` under
        the wait-list spinlock. ``lab ceiling`` on a few cores cannot separate it: :data:`CONVOY_PER_CORE`, fitted
        on published many-core curves, stands in; it puts a peak in the curve and the fall past it.
    :ivar sched_tick_s: the kernel's scheduler tick on the machine where the lab ran (s, ``1 / CONFIG_HZ``; read
        by ``lab ceiling`` from the kernel's build configuration, :data:`SCHED_TICK_S` when it cannot be read):
        how long a backend preempted while holding a lock-partition LWLock stays off its core
        (:func:`lockscope.forecast.model.convoy_lockmanager_s`). Not a machine-speed figure: :meth:`scaled`
        keeps it.
    """

    base_cpu_s: float
    fastpath_lock_cpu_s: float
    main_table_lock_extra_cpu_s: float
    lwlock_hold_s: float
    cpus: int = _MEASURED_CORES
    source: str = "defaults"
    generic_base_cpu_s: float | None = None
    planned_relation_cpu_s: float = 0.0
    idle_round_trip_s: float = 0.0
    cpu_growth_per_doubling: float = 0.0
    coherence_cpu_s: float = 0.0
    sleep_cpu_s: float = 0.0
    wake_latency_s: float = 0.0
    base_plan_s: float = 0.0
    base_exec_s: float = 0.0
    explain_plan_extra_s: float = 0.0
    explain_exec_extra_s: float = 0.0
    executor_relation_cpu_s: float = 0.0
    convoy_per_core: float = CONVOY_PER_CORE
    exec_s_per_cost_unit: float = 0.0
    cost_estimate_error: float = 0.0
    sched_tick_s: float = SCHED_TICK_S

    def __post_init__(self) -> None:
        for name in (*_SECONDS, "generic_base_cpu_s", "cpu_growth_per_doubling", "convoy_per_core",
                     "cost_estimate_error", "sched_tick_s"):
            value = getattr(self, name)
            if value is None and name == "generic_base_cpu_s":
                continue
            if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value) \
                    or value < 0:
                unit = "number" if name in ("cpu_growth_per_doubling", "convoy_per_core", "cost_estimate_error") \
                    else "number of seconds"
                raise BadInputError(f"calibration {name} must be a finite {unit} >= 0, got {value!r}")
        if not isinstance(self.cpus, int) or isinstance(self.cpus, bool) or self.cpus < 1:
            raise BadInputError(f"calibration cpus must be an integer >= 1, got {self.cpus!r}")

    @property
    def generic_base_s(self) -> float:
        """Base CPU of a cached-generic-plan transaction (s): ``generic_base_cpu_s`` or its default."""
        if self.generic_base_cpu_s is not None:
            return self.generic_base_cpu_s
        return published_generic_base_s(self.base_cpu_s)

    def overhead_s(self, plans: bool) -> float:
        """What a transaction costs beyond its statement's own planning and execution (s): ``base_cpu_s -
        base_plan_s - base_exec_s`` for a planned statement, ``generic_base_s - base_exec_s`` for a reused cached
        plan (no planning), at least 0."""
        if plans:
            return max(0.0, self.base_cpu_s - self.base_plan_s - self.base_exec_s)
        return max(0.0, self.generic_base_s - self.base_exec_s)

    def scaled(self, factor: float, *, cpus: int | None = None, source: str | None = None) -> Calibration:
        """Every time figure multiplied by ``factor`` (a machine ``factor`` times slower, > 0), e.g. to move a
        calibration to another machine class from one low-contention figure measured there; the growth per
        doubling is a ratio and stays.

        :raises BadInputError: factor not a positive finite number.
        """
        if not 0 < factor < math.inf:
            raise BadInputError(f"scale factor must be a positive number, got {factor!r}")
        times: dict[str, Any] = {name: getattr(self, name) * factor for name in _SECONDS}
        return Calibration(**times, cpus=self.cpus if cpus is None else cpus,
                           source=self.source if source is None else source,
                           generic_base_cpu_s=None if self.generic_base_cpu_s is None
                           else self.generic_base_cpu_s * factor,
                           cpu_growth_per_doubling=self.cpu_growth_per_doubling,
                           convoy_per_core=self.convoy_per_core, sched_tick_s=self.sched_tick_s)

    def to_json(self) -> dict[str, Any]:
        """The JSON document (schema :data:`SCHEMA`) of this calibration."""
        return {"schema": SCHEMA, **{f.name: getattr(self, f.name) for f in fields(self)}}

    @classmethod
    def from_json(cls, doc: object) -> Calibration:
        """A calibration from its JSON document.

        :raises BadInputError: not an object of schema :data:`SCHEMA` (a v1 file is named as such), a missing or
            unknown field, a bad value.
        """
        if isinstance(doc, dict) and doc.get("schema") == "lockscope/calibration/v1":
            raise BadInputError("calibration file of an earlier lockscope (lockscope/calibration/v1, before the "
                                "LWLock sleep model): run lockscope lab ceiling again")
        if not isinstance(doc, dict) or doc.get("schema") not in (SCHEMA, _OLDER):
            found = doc.get("schema") if isinstance(doc, dict) else type(doc).__name__
            raise BadInputError(f"not a calibration file: schema {found!r}, expected {SCHEMA!r}")
        known = {f.name for f in fields(cls)}
        missing = sorted(set(_REQUIRED) - doc.keys())
        unknown = sorted(doc.keys() - known - {"schema"})
        if missing or unknown:
            raise BadInputError(f"calibration file: missing fields {missing}, unknown fields {unknown}")
        source = doc.get("source", "calibration file")
        if not isinstance(source, str):
            raise BadInputError(f"calibration source must be text, got {source!r}")
        values = {k: v for k, v in doc.items() if k in known}
        values["source"] = source
        values.setdefault("cpus", _MEASURED_CORES)
        return cls(**values)


#: ``lockscope lab ceiling`` (default profile, 16 clients, 24 spilled locks) on a 2-core x86_64 VM, PostgreSQL
#: 18.6, 2026-11-26 13:46 UTC, a quiet machine (BENCHMARKS.md "forecast: calibration"): base 33.61 µs, generic
#: base 17.94 µs (the published ratio: this VM's single-client round trip, 77 µs, differs between the
#: protocols), fast-path lock 0.223 µs, main-table extra 0.000 µs, planned relation 0.681 µs,
#: executor relation 3.85 µs, +5.1 % CPU per doubling of clients, coherence 0.000 µs, hold
#: 1.12 ns, sleep 61.7 µs, wake-up 9.4 µs; pgbench -S's own plan 13.1 µs and execution
#: 6.9 µs (pg_stat_statements), EXPLAIN adds 4.9 and 2.1 µs.
DEFAULT_CALIBRATION = Calibration(
    base_cpu_s=3.360990787068806e-05, fastpath_lock_cpu_s=2.2329767512087415e-07, main_table_lock_extra_cpu_s=0.0,
    lwlock_hold_s=1.1159180118385185e-09, cpus=2, generic_base_cpu_s=1.7935224461242955e-05,
    planned_relation_cpu_s=6.810082379682745e-07, idle_round_trip_s=7.711110898966278e-05,
    cpu_growth_per_doubling=0.05145638781025933, coherence_cpu_s=0.0, sleep_cpu_s=6.165785269311715e-05,
    wake_latency_s=9.362144321374917e-06, base_plan_s=1.306709049246523e-05, base_exec_s=6.905646134327576e-06,
    explain_plan_extra_s=4.932909507534769e-06, explain_exec_extra_s=2.0943538656724235e-06,
    executor_relation_cpu_s=3.852591343804044e-06, convoy_per_core=0.07,
    # the planner cost unit (benchmarks/cost_unit.py, the same VM and PostgreSQL 18.6, 2026-11-27, load average
    # 13: BENCHMARKS.md "forecast: planner cost units"): 7.07 µs of execution per cost unit, shapes spread x 4.35
    exec_s_per_cost_unit=7.0651e-06, cost_estimate_error=4.35,
    source="defaults: lockscope lab ceiling on a 2-core x86_64 VM, PostgreSQL 18.6, 2026-11-26 "
           "(benchmarks/results/calibration-2026-11-26/ceiling)")


def save_calibration(calibration: Calibration, path: Path | str) -> None:
    """Write ``calibration`` as JSON (schema :data:`SCHEMA`) to ``path``.

    :raises BadInputError: the file cannot be written.
    """
    try:
        Path(path).write_text(json.dumps(calibration.to_json(), indent=2) + "\n", encoding="utf-8")
    except OSError as exc:
        raise BadInputError(f"cannot write calibration file {path}: {exc.strerror or exc}") from None


def load_calibration(path: Path | str) -> Calibration:
    """Read a calibration JSON file written by :func:`save_calibration` (``lockscope lab ceiling``).

    :raises BadInputError: unreadable file, not JSON, wrong schema, missing/unknown fields or bad values.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise BadInputError(f"cannot read calibration file {path}: {exc.strerror or exc}") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadInputError(f"calibration file {path} is not JSON: {exc.msg} at line {exc.lineno}") from None
    return Calibration.from_json(doc)
