"""Calibration of the forecast model: per-transaction CPU costs and the partition-LWLock hold time.

:class:`Calibration` holds the four costs the model (:mod:`lockscope.forecast.model`) turns into service demands;
:data:`DEFAULT_CALIBRATION` derives them from published and locally measured figures
(``shared/reference/published-benchmarks.md`` and ``pg-lock-internals.md`` section 6b, each cited below);
``lockscope lab ceiling`` measures them on the machine at hand and writes them with :func:`save_calibration`
(JSON, schema :data:`SCHEMA`), read back with :func:`load_calibration`.

Derivation of the defaults (all on one 2-core machine, PostgreSQL 18.6, pgbench ``-S`` on ``-s10``, 8 clients;
published-benchmarks.md, "Measured here"; CPU per transaction = cores / TPS, which holds when the cores are busy
and counts the pgbench client's CPU too, as it shares the cores):

- 0 extra indexes, mlpt 64: 35,400 TPS → 2 / 35,400 = 56.50 µs per transaction, with 2 fast-path relation locks
  (pgbench_accounts and its primary key).
- 30 extra indexes, mlpt 128 (all 32 locks fast-path): 26,200 TPS → 76.34 µs; the 30 extra fast-path relations
  cost (76.34 - 56.50) / 30 = 0.661 µs each (the planner opens every index: plancat.c ``get_relation_info``; the
  figure is per relation planned and locked, not the lock alone).
- base CPU = 56.50 - 2 x 0.661 = 55.17 µs.
- 30 extra indexes, mlpt 16 (16 of 32 locks in the main lock table): 24,100 TPS → 82.99 µs; the 16 main-table
  locks cost (82.99 - 76.34) / 16 = 0.416 µs each on top of a fast-path lock (8 clients on 2 cores: little
  partition contention, so the difference is taken as CPU).
- LWLock hold time per partition acquisition: 24 main-table locks of one statement all in ONE lock partition,
  16 clients, 12.1-12.2k TPS with LockManager 86% of active-session samples (pg-lock-internals.md 6b): that
  partition is the bottleneck, so 1 / 12,150 TPS = 82.3 µs of partition time per transaction over 24 + 1
  acquisitions (lock.c ``LockAcquireExtended`` and one ``LockReleaseAll`` pass) = 3.29 µs each. This is an
  effective hold under contention on 2 cores (holder preemption and wake-up included), far above an uncontended
  LWLock critical section (well under 1 µs).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lockscope.errors import BadInputError

__all__ = ["DEFAULT_CALIBRATION", "GENERIC_BASE_RATIO", "SCHEMA", "Calibration", "load_calibration", "save_calibration"]

#: Versioned schema name of a calibration JSON file.
SCHEMA = "lockscope/calibration/v1"

# -- published / measured figures the defaults come from (published-benchmarks.md; pg-lock-internals.md 6b) ------
_MEASURED_CORES = 2
_TPS_0_EXTRA_INDEXES = 35_400.0  # "Measured here": 0 extra indexes, mlpt=64
_TPS_30_EXTRA_ALL_FASTPATH = 26_200.0  # "Measured here": 30 extra indexes, mlpt=128
_TPS_30_EXTRA_16_SPILLED = 24_100.0  # "Measured here": 30 extra indexes, mlpt=16 (32 relations, 16 slots)
_BASE_FASTPATH_LOCKS = 2  # pgbench_accounts + pgbench_accounts_pkey
_EXTRA_INDEXES = 30
_SPILLED_AT_MLPT16 = 32 - 16
_TPS_ONE_PARTITION = 12_150.0  # 6b: 24 spilled locks all in one partition, 12.1-12.2k TPS
_ONE_PARTITION_ACQUISITIONS = 24 + 1  # n_p acquisitions + one LockReleaseAll pass
_TPS_1_CLIENT_SIMPLE = 17_201.0  # Langote, PG15devel, unpartitioned, 1 client, pgbench -S simple
_TPS_1_CLIENT_PREPARED = 32_234.0  # same, -M prepared

#: Base CPU of a cached generic plan relative to a planned statement: Langote's single-client pgbench -S,
#: simple 17,201 TPS vs prepared 32,234 TPS (published-benchmarks.md), i.e. 0.534.
GENERIC_BASE_RATIO = _TPS_1_CLIENT_SIMPLE / _TPS_1_CLIENT_PREPARED


@dataclass(frozen=True)
class Calibration:
    """Costs per transaction the forecast model needs (seconds; all >= 0).

    :ivar base_cpu_s: CPU per transaction apart from its relation locks (parse, plan and execute the statement,
        the client's share of the cores when it runs on the same machine).
    :ivar fastpath_lock_cpu_s: CPU per relation locked through the fast path (the lock and the per-relation
        planning work that comes with it; lock.c ``FastPathGrantRelationLock``).
    :ivar main_table_lock_extra_cpu_s: extra CPU per relation lock that goes to the main lock table instead
        (shared hash insert of LOCK/PROCLOCK and its release), excluding the time holding the partition LWLock.
    :ivar lwlock_hold_s: time a backend holds a lock-partition LWLock per exclusive acquisition (lock.c
        ``LockAcquireExtended``; one ``LockReleaseAll`` pass counts as one acquisition).
    :ivar cpus: cores of the machine the figures were measured on (count, >= 1).
    :ivar source: where the figures come from (free text, for reports).
    :ivar generic_base_cpu_s: ``base_cpu_s`` of a transaction that reuses a cached generic plan (no parse, no
        planning: plancache.c ``GetCachedPlan`` -> ``CheckCachedPlan``); None = ``base_cpu_s`` x
        :data:`GENERIC_BASE_RATIO` (Langote's single-client pgbench ``-S`` simple vs prepared).
    :ivar planned_relation_cpu_s: CPU per relation the planner opens beyond the two of the base statement (a
        table and its primary key), on top of its lock: plancat.c ``get_relation_info`` reads every index of each
        relation. 0 means ``fastpath_lock_cpu_s`` already includes that work (the defaults).
    :ivar saturated_cpu_factor: CPU per transaction with every core busy / with one client (> 0): measured by
        ``lab ceiling`` as ``cores / TPS`` of a no-spill script with N clients over its single-client ``1 / TPS``;
        1 for the defaults, whose costs come from 8-client runs already.
    """

    base_cpu_s: float
    fastpath_lock_cpu_s: float
    main_table_lock_extra_cpu_s: float
    lwlock_hold_s: float
    cpus: int = _MEASURED_CORES
    source: str = "defaults"
    generic_base_cpu_s: float | None = None
    planned_relation_cpu_s: float = 0.0
    saturated_cpu_factor: float = 1.0

    def __post_init__(self) -> None:
        for name in ("base_cpu_s", "fastpath_lock_cpu_s", "main_table_lock_extra_cpu_s", "lwlock_hold_s",
                     "planned_relation_cpu_s", "generic_base_cpu_s"):
            value = getattr(self, name)
            if value is None and name == "generic_base_cpu_s":
                continue
            if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value) \
                    or value < 0:
                raise BadInputError(f"calibration {name} must be a finite number of seconds >= 0, got {value!r}")
        factor = self.saturated_cpu_factor
        if not isinstance(factor, int | float) or isinstance(factor, bool) or not 0 < factor < math.inf:
            raise BadInputError(f"calibration saturated_cpu_factor must be a number > 0, got {factor!r}")
        if not isinstance(self.cpus, int) or isinstance(self.cpus, bool) or self.cpus < 1:
            raise BadInputError(f"calibration cpus must be an integer >= 1, got {self.cpus!r}")

    @property
    def generic_base_s(self) -> float:
        """Base CPU of a cached-generic-plan transaction (s): ``generic_base_cpu_s`` or its default."""
        if self.generic_base_cpu_s is not None:
            return self.generic_base_cpu_s
        return self.base_cpu_s * GENERIC_BASE_RATIO

    def scaled(self, factor: float, *, cpus: int | None = None, source: str | None = None) -> Calibration:
        """All CPU costs and the hold time multiplied by ``factor`` (a machine ``factor`` times slower, > 0), e.g. to
        move a calibration to another machine class from one low-contention figure measured there.

        :raises BadInputError: factor not a positive finite number.
        """
        if not 0 < factor < math.inf:
            raise BadInputError(f"scale factor must be a positive number, got {factor!r}")
        return Calibration(
            base_cpu_s=self.base_cpu_s * factor, fastpath_lock_cpu_s=self.fastpath_lock_cpu_s * factor,
            main_table_lock_extra_cpu_s=self.main_table_lock_extra_cpu_s * factor,
            lwlock_hold_s=self.lwlock_hold_s * factor, cpus=self.cpus if cpus is None else cpus,
            source=self.source if source is None else source,
            generic_base_cpu_s=None if self.generic_base_cpu_s is None else self.generic_base_cpu_s * factor,
            planned_relation_cpu_s=self.planned_relation_cpu_s * factor,
            saturated_cpu_factor=self.saturated_cpu_factor)

    def to_json(self) -> dict[str, Any]:
        """The JSON document (schema :data:`SCHEMA`) of this calibration."""
        return {
            "schema": SCHEMA,
            "base_cpu_s": self.base_cpu_s,
            "fastpath_lock_cpu_s": self.fastpath_lock_cpu_s,
            "main_table_lock_extra_cpu_s": self.main_table_lock_extra_cpu_s,
            "lwlock_hold_s": self.lwlock_hold_s,
            "generic_base_cpu_s": self.generic_base_cpu_s,
            "planned_relation_cpu_s": self.planned_relation_cpu_s,
            "saturated_cpu_factor": self.saturated_cpu_factor,
            "cpus": self.cpus,
            "source": self.source,
        }

    @classmethod
    def from_json(cls, doc: object) -> Calibration:
        """A calibration from its JSON document.

        :raises BadInputError: not an object of schema :data:`SCHEMA`, a missing or unknown field, a bad value.
        """
        if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
            found = doc.get("schema") if isinstance(doc, dict) else type(doc).__name__
            raise BadInputError(f"not a calibration file: schema {found!r}, expected {SCHEMA!r}")
        fields = {"base_cpu_s", "fastpath_lock_cpu_s", "main_table_lock_extra_cpu_s", "lwlock_hold_s"}
        missing = sorted(fields - doc.keys())
        unknown = sorted(doc.keys() - fields - {"schema", "cpus", "source", "generic_base_cpu_s",
                                                "planned_relation_cpu_s", "saturated_cpu_factor"})
        if missing or unknown:
            raise BadInputError(f"calibration file: missing fields {missing}, unknown fields {unknown}")
        source = doc.get("source", "calibration file")
        if not isinstance(source, str):
            raise BadInputError(f"calibration source must be text, got {source!r}")
        return cls(base_cpu_s=doc["base_cpu_s"], fastpath_lock_cpu_s=doc["fastpath_lock_cpu_s"],
                   main_table_lock_extra_cpu_s=doc["main_table_lock_extra_cpu_s"],
                   lwlock_hold_s=doc["lwlock_hold_s"], cpus=doc.get("cpus", _MEASURED_CORES), source=source,
                   generic_base_cpu_s=doc.get("generic_base_cpu_s"),
                   planned_relation_cpu_s=doc.get("planned_relation_cpu_s", 0.0),
                   saturated_cpu_factor=doc.get("saturated_cpu_factor", 1.0))


def _defaults() -> Calibration:
    cpu_0 = _MEASURED_CORES / _TPS_0_EXTRA_INDEXES
    cpu_fast = _MEASURED_CORES / _TPS_30_EXTRA_ALL_FASTPATH
    cpu_spilled = _MEASURED_CORES / _TPS_30_EXTRA_16_SPILLED
    fastpath = (cpu_fast - cpu_0) / _EXTRA_INDEXES
    return Calibration(
        base_cpu_s=cpu_0 - _BASE_FASTPATH_LOCKS * fastpath,
        fastpath_lock_cpu_s=fastpath,
        main_table_lock_extra_cpu_s=(cpu_spilled - cpu_fast) / _SPILLED_AT_MLPT16,
        lwlock_hold_s=1.0 / (_TPS_ONE_PARTITION * _ONE_PARTITION_ACQUISITIONS),
        cpus=_MEASURED_CORES,
        source="defaults: published-benchmarks.md 'Measured here' (2 cores, PG 18.6, pgbench -S) and "
               "pg-lock-internals.md 6b (24 locks in one partition, 12.1-12.2k TPS)",
    )


#: base 55.17 µs, fast-path 0.661 µs, main-table extra 0.416 µs, hold 3.29 µs; 2 cores (see the module docstring).
DEFAULT_CALIBRATION = _defaults()


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
