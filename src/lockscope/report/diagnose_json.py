"""``lockscope diagnose --json``: schema ``lockscope/diagnose/v2`` (docs/diagnose.md)."""

from __future__ import annotations

from typing import Any

from ..diagnose.engine import Culprit, Diagnosis, Fix
from ..diagnose.transactions import TransactionFinding
from ..forecast.model import Forecast
from .forecast_json import coverage_dict, interval_dict

__all__ = ["SCHEMA", "diagnose_to_dict"]

SCHEMA = "lockscope/diagnose/v2"


def _forecast(f: Forecast | None) -> dict[str, Any] | None:
    if f is None:
        return None
    return {"clients": f.clients, "throughput_tps": f.throughput_tps, "lockmanager_share": f.lockmanager_share,
            "cpu_per_transaction_us": f.cpu_per_transaction_us, "binding_resource": f.binding_resource,
            "ceiling_tps": f.ceiling_tps}


def _model_vs_now(d: Diagnosis) -> dict[str, Any] | None:
    live, anchor = d.live, d.anchor
    if live is None:
        return None
    out: dict[str, Any] = {"population": live.population, "population_source": live.population_source,
                           "think_time_ms": d.think_s * 1000.0, "measured_calls_per_s": live.rate_tps,
                           "measured_lockmanager_share": live.lockmanager_share,
                           "measured_lockmanager_share_95": interval_dict(live.lockmanager_interval)}
    if anchor is not None:
        out.update(model_calls_per_s=anchor.model_tps, off=anchor.off, reanchored=anchor.reanchored,
                   cost_factor=anchor.factor, anchored_calls_per_s=anchor.anchored_tps,
                   model_lockmanager_share=anchor.model_lockmanager_share,
                   lockmanager_reproduced=anchor.lockmanager_reproduced)
    return out


def _culprit(c: Culprit) -> dict[str, Any]:
    return {
        "query_id": c.query_id, "text": c.text, "lockmanager_samples": c.lockmanager_samples, "samples": c.samples,
        "lockmanager_fraction": c.lockmanager_fraction, "calls_per_s": c.calls_per_s,
        "spilled_per_call": c.spilled_per_call, "main_lock_table_per_s": c.main_per_s,
        "phase_split": c.phase_split,
        "tables": list(c.tables), "not_measured_reason": c.reason or None,
        "phases": [{"phase": p.phase, "locks": p.locks, "spilled": p.spilled, "lock_partitions": list(p.partitions),
                    "measured": p.measured} for p in c.phases],
        "spilled_locks": [{"relation": lk.relation, "relation_oid": lk.relation_oid, "role": lk.role,
                           "mode": lk.mode, "lock_partition": lk.partition} for lk in c.spilled],
        "partition_load": list(c.shape.partition_load) if c.shape is not None else None,
    }


def _fix(f: Fix) -> dict[str, Any]:
    return {"kind": f.kind, "title": f.title, "action": f.action, "detail": f.detail, "sql": list(f.sql),
            "restart": f.restart, "basis": "model" if f.transaction is None else "server",
            "transaction": f.transaction, "main_lock_table_per_s_before": f.main_per_s_before,
            "main_lock_table_per_s_after": f.main_per_s_after, "culprit_spills_after": list(f.culprit_spills_after)}


def _main_lock_table(d: Diagnosis) -> dict[str, Any]:
    s = d.server
    return {"per_s": d.main_lock_table_per_s, "basis": s.basis or "model", "server_per_s": s.main_per_s,
            "held_per_s": s.held_main_per_s, "model_per_s": d.main_per_s, "transactions_per_s": s.transactions_per_s,
            "snapshots": s.snapshots, "transactions_seen": s.transactions_seen,
            "kind": None if s.main_per_s is None else "counted" if s.counted else "estimate",
            "low_per_s": s.low_per_s, "high_per_s": s.high_per_s, "completed_by_footprints": s.completed,
            "model_vs_server": s.model_note or None}


def _transaction(f: TransactionFinding) -> dict[str, Any]:
    shape = f.shape
    return {
        "describe": f.describe(),
        "statements": [{"query_id": q, "text": t, "spilled_alone": sp}
                       for q, t, sp in zip(shape.query_ids, shape.texts, f.statement_spills, strict=True)],
        "single_statement": shape.single_statement, "tables": list(f.tables),
        "held_locks_per_transaction": shape.held_locks_per_txn,
        "held_main_table_per_transaction": shape.held_main_per_txn,
        "model_spilled_per_transaction": f.model_spilled_per_txn,
        "relations": len(shape.relation_oids), "main_table_relations": list(f.main_relations),
        "transactions_per_s": shape.transactions_per_s, "transactions_per_s_basis": shape.tps_basis,
        "main_lock_table_per_s": shape.main_per_s, "observations": shape.observations,
        "transactions_seen": shape.transactions_seen,
        "foreign_keys": [{"constraint": k.constraint, "table": k.table, "referenced": k.referenced,
                          "partitioned": k.partitioned, "main_table_locks": k.main_locks} for k in f.foreign_keys],
        "relations_beyond_statements": f.unexplained, "cause": f.cause or None,
    }


def diagnose_to_dict(d: Diagnosis) -> dict[str, Any]:
    """The diagnosis as a JSON-ready dict."""
    w = d.watch
    return {
        "schema": SCHEMA,
        "server": {"version": d.server_version, "database": d.database, "database_oid": d.database_oid,
                   "max_locks_per_transaction": d.capacity.max_locks_per_transaction,
                   "fast_path_slots": d.capacity.slots},
        "status": d.status,
        "status_otherwise": d.status_otherwise,
        "verdict": d.verdict,
        "watch": {"duration_s": w.duration_s, "ticks": w.ticks, "achieved_hz": w.achieved_hz, "hz": w.hz,
                  "active_session_samples": w.active_session_samples, "aas": w.aas,
                  "lockmanager_samples": w.lockmanager_samples, "lockmanager_share": w.lockmanager_share,
                  "lockmanager_share_95": interval_dict(w.lockmanager_interval), "by_wait": dict(w.by_wait),
                  "late_ticks": w.late_ticks, "gaps": len(w.gaps)},
        "statements_measured": d.statements_measured,
        "main_lock_table_per_s": d.main_lock_table_per_s,
        "main_lock_table": _main_lock_table(d),
        "transactions": [_transaction(f) for f in d.transactions],
        "partition_per_s": list(d.partition_per_s),
        "partition_per_s_after_first_fix": list(d.partition_per_s_after) if d.partition_per_s_after else None,
        "culprits": [_culprit(c) for c in d.culprits],
        "spilled_relations": [{"relation": r.relation, "relation_oid": r.relation_oid, "role": r.role,
                               "lock_partition": r.partition, "acquisitions_per_s": r.acquisitions_per_s,
                               "statements": r.statements} for r in d.spilled_relations],
        "fixes": [_fix(f) for f in d.fixes],
        "forecast": {"clients": d.clients, "model_vs_now": _model_vs_now(d), "before": _forecast(d.forecast_before),
                     "after_first_fix": _forecast(d.forecast_after)},
        "notes": list(d.notes),
        "coverage": coverage_dict(d.coverage),
        "model_check": None if d.model_check is None else {
            "off": d.model_check.off, "reasons": list(d.model_check.reasons), "headline": d.model_check.headline},
        "timings_s": d.timings_s,
    }
