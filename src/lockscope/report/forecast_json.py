"""``lockscope forecast --json``: the :class:`~lockscope.forecast.engine.ForecastReport` as a JSON document (schema
:data:`SCHEMA`, documented in docs/forecast.md). Infinite rates (no main-table lock, no CPU demand) are ``null``."""

from __future__ import annotations

import math
from typing import Any

from ..forecast.engine import ForecastReport, ScenarioForecast, saturation_rate
from ..forecast.model import Forecast
from ..shapes import StatementShape
from ..watch.aas import ShareInterval
from ..workload.coverage import Coverage

__all__ = ["SCHEMA", "forecast_to_dict"]

#: Versioned schema name of the document.
SCHEMA = "lockscope/forecast/v1"


def _num(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _forecast(f: Forecast) -> dict[str, Any]:
    return {
        "clients": f.clients, "throughput_tps": _num(f.throughput_tps), "response_time_ms": f.response_time_ms,
        "ceiling_tps": _num(f.ceiling_tps), "cpu_ceiling_tps": _num(f.cpu_ceiling_tps),
        "binding_resource": f.binding_resource, "cpu_utilisation": f.cpu_utilisation,
        "partition_utilisation": list(f.partition_utilisation), "partition_wait_ms": f.partition_wait_ms,
        "lockmanager_share": f.lockmanager_share, "lockmanager_aas": f.lockmanager_aas,
        "hottest_partition": f.hottest_partition,
        "hottest_partition_saturation_tps": _num(f.hottest_partition_saturation_tps),
        "knee_clients": f.knee_clients, "lwlock_sleeps": f.lwlock_sleeps,
        "cpu_per_transaction_us": f.cpu_per_transaction_us, "convoy_wait_ms": f.convoy_wait_ms,
    }


def _statement(shape: StatementShape, f: Forecast) -> dict[str, Any]:
    return {
        "name": shape.name, "statement": shape.statement, "phase": shape.phase, "flags": shape.flags,
        "calls": shape.calls, "calls_per_s": shape.calls_per_s, "relation_locks": len(shape.locks),
        "fast_path_locks": shape.fast_path_count, "main_table_locks": len(shape.main_table_locks),
        "measured_main_table_locks": shape.measured_main_table_locks,
        "planned_relations": shape.planned_relations, "partition_load": list(shape.partition_load),
        "executor_relations": shape.executor_relations,
        "own_cost_us": None if shape.own_s is None else shape.own_s * 1e6, "own_cost_source": shape.own_source,
        "main_table": [{"relation": lk.relation, "relation_oid": lk.relation_oid, "role": lk.role, "mode": lk.mode,
                        "database_oid": lk.database_oid, "partition": lk.partition, "order": lk.order}
                       for lk in shape.main_table_locks],
        "forecast": _forecast(f),
    }


def _scenario(s: ScenarioForecast) -> dict[str, Any]:
    return {
        "label": s.label,
        "capacity": {"server_version_num": s.capacity.server_version_num,
                     "max_locks_per_transaction": s.capacity.max_locks_per_transaction,
                     "fast_path_slots": s.capacity.slots},
        "demands": {"cpu_us": s.demands.cpu_s * 1e6, "partition_us": [d * 1e6 for d in s.demands.partition_s],
                    "partition_acquisitions": list(s.demands.partition_acquisitions)},
        "main_table_locks_per_transaction": s.main_table_locks_per_transaction,
        "partition_locks_per_transaction": list(s.partition_locks_per_transaction),
        "rate_tps": s.rate_tps,
        "utilisation_basis": "measured rate" if s.rate_tps is not None else "predicted throughput",
        "cpu_utilisation_at_rate": s.cpu_utilisation_at_rate,
        "partition_utilisation_at_rate": list(s.partition_utilisation_at_rate),
        "hottest_partition_saturation_tps": _num(saturation_rate(s)),
        "forecast": _forecast(s.forecast),
        "statements": [_statement(shape, f) for shape, f in s.statements],
        "curve": [{"clients": f.clients, "throughput_tps": f.throughput_tps, "lockmanager_share": f.lockmanager_share,
                   "binding_resource": f.binding_resource} for f in s.curve],
    }


def coverage_dict(coverage: Coverage | None) -> dict[str, Any] | None:
    """The ``coverage`` object of the forecast and diagnose JSON (null without a workload interval): shares 0..1."""
    if coverage is None:
        return None
    return {"calls_share": coverage.calls_share, "time_share": coverage.time_share,
            "statements_modelled": coverage.statements_modelled, "standins": coverage.standins,
            "derived": coverage.derived,
            "uncovered": [{"queryid": u.queryid, "query": u.query, "calls_share": u.calls_share,
                           "time_share": u.time_share, "reason": u.reason} for u in coverage.uncovered]}


def forecast_to_dict(report: ForecastReport) -> dict[str, Any]:
    """The JSON document of a forecast (schema :data:`SCHEMA`)."""
    return {
        "schema": SCHEMA,
        "mode": report.mode,
        "server": {"version": report.server_version, "version_num": report.server_version_num,
                   "database": report.database, "database_oid": report.database_oid},
        "model": {"cores": report.cores, "clients": report.clients, "clients_source": report.clients_source,
                  "think_ms": report.think_s * 1000.0},
        "live": None if report.live is None else {
            "rate_tps": report.live.rate_tps, "population": report.live.population,
            "population_source": report.live.population_source, "aas": report.live.aas,
            "aas_cpu": report.live.aas_cpu, "lockmanager_share": report.live.lockmanager_share,
            "lockmanager_share_95": interval_dict(report.live.lockmanager_interval),
            "samples": report.live.samples, "think_ms": report.think_s * 1000.0},
        "model_vs_now": None if report.anchor is None else {
            "model_tps": report.anchor.model_tps, "measured_tps": report.anchor.measured_tps,
            "off": report.anchor.off, "reanchored": report.anchor.reanchored, "factor": report.anchor.factor,
            "anchored_tps": report.anchor.anchored_tps,
            "model_lockmanager_share": report.anchor.model_lockmanager_share,
            "measured_lockmanager_share": report.anchor.measured_lockmanager_share,
            "lockmanager_reproduced": report.anchor.lockmanager_reproduced,
            "sampled_lockmanager_share_too_uncertain": report.anchor.sampled_too_uncertain},
        "throughput_range_tps": None if report.throughput_range_tps is None else list(report.throughput_range_tps),
        "coverage": coverage_dict(report.coverage),
        "model_check": None if report.model_check is None else {
            "off": report.model_check.off, "reasons": list(report.model_check.reasons),
            "headline": report.model_check.headline},
        "gain": report.gain,
        "calibration": report.calibration.to_json(),
        "what_if": report.what_if_text,
        "notes": list(report.notes),
        "measured": _scenario(report.measured),
        "what_if_forecast": _scenario(report.what_if) if report.what_if is not None else None,
    }


def interval_dict(interval: ShareInterval | None) -> dict[str, Any] | None:
    """A sampled share's 95 % confidence interval as JSON (fractions, batches of one second), None when unknown."""
    if interval is None:
        return None
    return {"low": interval.low, "high": interval.high, "half_width": interval.half_width,
            "batches": interval.batches}
