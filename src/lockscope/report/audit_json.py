"""An :class:`~lockscope.audit.AuditReport` as a JSON-ready dict, schema ``lockscope/audit/v1`` (docs/audit.md).

Adding keys keeps the version; renaming or removing one bumps it.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any

from .. import __version__
from ..audit.advice import GranularityAdvice, MlptAdvice, SharedLockRisk
from ..audit.engine import AuditReport
from ..audit.indexes import IndexFinding
from ..audit.lockbudget import TRANSIENT_ENTRIES, LockBudgetAudit
from ..audit.partitions import LockPartitionLoad
from ..audit.tables import FootprintCase
from ..audit.transactions import TransactionsSeen
from ..workload.phases import PhaseSplit
from ..workload.probes import PlanFootprint, StatementAudit
from ..workload.statements import Workload
from .jsonout import capacity_to_dict, transaction_to_dict

__all__ = ["AUDIT_SCHEMA", "audit_to_dict"]

AUDIT_SCHEMA = "lockscope/audit/v1"


def _case(c: FootprintCase | None) -> dict[str, Any] | None:
    if c is None:
        return None
    return {"case": c.case, "locks": c.locks, "spilled": c.spilled, "fits": c.fits,
            "overflowing_groups": {str(g): n for g, n in c.overflowing_groups.items()},
            "partition_oid": c.partition_oid, "relation_oids": list(c.relation_oids)}


def _plan(p: PlanFootprint | None) -> dict[str, Any] | None:
    if p is None:
        return None
    return {"phase": p.phase, "locks": p.locks, "spilled": p.spilled, "predicted_spilled": p.predicted_spilled,
            "measured": p.measured, "relation_oids": list(p.relation_oids), "roles": list(p.roles),
            "source": p.source, "grants": list(p.grants)}


def _partition_load(load: LockPartitionLoad | None) -> dict[str, Any] | None:
    if load is None:
        return None
    return {
        "database_oid": load.database_oid,
        "statements_measured": load.statements_measured,
        "acquisitions_per_s": [round(v, 3) for v in load.acquisitions_per_s],
        "release_passes_per_s": [round(v, 3) for v in load.release_passes_per_s],
        "lwlock_acquisitions_per_s": [round(v, 3) for v in load.lwlock_acquisitions_per_s],
        "hottest_partition": load.hottest_partition,
        "hottest_lwlock_acquisitions_per_s": round(load.hottest_per_s, 3),
        "imbalance": round(load.imbalance, 3), "verdict": load.verdict,
        "statements": [{"queryid": st.queryid, "query": st.query, "calls_per_s": round(st.calls_per_s, 3),
                        "locks_per_call": st.locks_per_call, "acquisitions_per_s": round(st.acquisitions_per_s, 3),
                        "share": round(st.share, 4)} for st in load.statements],
        "relations": [{"relation_oid": r.relation_oid, "relation": r.relation, "role": r.role,
                       "database_oid": r.database_oid, "acquisitions_per_s": round(r.acquisitions_per_s, 3),
                       "statements": r.statements} for r in load.relations],
    }


def _split(split: PhaseSplit | None) -> dict[str, Any] | None:
    """A statement's calls by plan-cache phase (workload/phases.py), with the basis of every figure."""
    if split is None:
        return None
    return {"basis": split.basis, "calls_per_s": round(split.calls_per_s, 3),
            "planned_per_s": None if split.planned_per_s is None else round(split.planned_per_s, 3),
            "reused_per_s": None if split.reused_per_s is None else round(split.reused_per_s, 3),
            "reused_fraction": split.reused_fraction,
            "main_table_per_call": split.main_table_per_call, "main_table_per_call_low": split.main_table_per_call_low,
            "held_main_table_per_call": split.held_main_table_per_call,
            "held_observations": split.held_observations}


def audit_to_dict(report: AuditReport) -> dict[str, Any]:
    """The whole report (see docs/audit.md for every key)."""
    return {
        "schema": AUDIT_SCHEMA,
        "lockscope_version": __version__,
        "audited_at": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "demo": report.demo,
        "server": _server(report),
        "capacity": capacity_to_dict(report.capacity),
        "catalog": {"relations": report.relations, "indexes": report.indexes},
        "summary": {s: report.count(s) for s in ("high", "medium", "low", "info")},
        "findings": [
            {"severity": f.severity, "kind": f.kind, "subject": f.subject, "title": f.title,
             "evidence": f.evidence, "fix": f.fix, "sql": list(f.sql)}
            for f in report.findings
        ],
        "tables": [
            {"oid": t.oid, "table": t.qualified, "kind": t.kind, "indexes": t.indexes, "partitions": t.partitions,
             "all_relations": t.all_relations, "pruned": _case(t.pruned), "unpruned": _case(t.unpruned)}
            for t in report.tables
        ],
        "statements": _statements(report.workload),
        "lock_partition_load": _partition_load(report.partition_load),
        "indexes": [_index(f, report.names) for f in report.index_findings],
        "drop_plans": [
            {"table": report.names.get(p.table_oid), "indexes": [report.names.get(o) for o in p.index_oids],
             "spilled_before": p.before_spilled, "spilled_after": p.after_spilled, "sufficient": p.sufficient,
             "exact": p.exact}
            for p in report.drop_plans
        ],
        "max_locks_per_transaction": _mlpt(report.mlpt),
        "shared_lock_table": _shared_lock(report.shared_lock),
        "partition_granularity": [_granularity(g) for g in report.granularity],
        "transactions": _transactions(report.transactions),
        "lock_budget": _lock_budget(report.lock_budget),
        "privileges": {"derived": report.privileges.derived, "helper": report.privileges.helper,
                       "grants": list(report.privileges.grants)},
        "notes": list(report.notes),
        "timings_s": {k: round(v, 3) for k, v in report.timings_s.items()},
    }


def _server(report: AuditReport) -> dict[str, Any]:
    """The audited server's version and settings."""
    return {
        "server_version": report.server_version, "server_version_num": report.server_version_num,
        "database": report.database, "in_recovery": report.in_recovery,
        "max_connections": report.max_connections, "max_backends": report.max_backends,
        "max_prepared_transactions": report.max_prepared_transactions,
        "plan_cache_mode": report.plan_cache_mode, "enable_partition_pruning": report.enable_partition_pruning,
        "shared_lock_table_entries": report.shared_lock_table_entries,
        "stats_age_s": round(report.stats_age_s, 1), "stats_since": report.stats_since_source,
    }


def _statements(w: Workload) -> dict[str, Any]:
    """The pg_stat_statements workload and its audited statements."""
    return {
        "available": w.available, "entries": w.entries, "hidden": w.hidden, "top_n": w.top_n,
        "interval_s": round(w.interval_s, 3), "since_reset_s": w.since_s,
        "pg_stat_lock_fastpath_exceeded": w.pg_stat_lock_fastpath_exceeded,
        "track_planning": w.track_planning, "lock_snapshots": w.lock_snapshots,
        "items": [_statement(s) for s in w.statements],
    }


def _statement(s: StatementAudit) -> dict[str, Any]:
    """One audited statement: its rates, footprints per plan and phase split."""
    return {"queryid": s.queryid, "role": s.rolname, "query": s.query, "kind": s.kind, "calls": s.calls,
            "calls_per_s": round(s.calls_per_s, 3), "generic_plan_calls": s.generic_plan_calls,
            "custom_plan_calls": s.custom_plan_calls, "params": list(s.params),
            "param_sources": list(s.param_sources), "custom": _plan(s.custom), "custom_reason": s.custom_reason,
            "generic": _plan(s.generic), "generic_reuse": _plan(s.generic_reuse),
            "generic_reason": s.generic_reason, "spilled_per_call": s.spilled_per_call, "basis": s.basis,
            "phase_split": _split(s.split),
            "main_lock_table_per_s": round(s.main_lock_table_per_s, 3),
            "main_lock_table_per_s_low": round(s.main_lock_table_per_s_low, 3),
            "non_pruning": [c.qualified for c in s.non_pruning], "generic_locks_more": s.generic_locks_more,
            "skipped_reason": s.skipped_reason}


def _index(f: IndexFinding, names: dict[int, str]) -> dict[str, Any]:
    """One index finding; ``other`` names the index it duplicates or is made redundant by."""
    return {"oid": f.index_oid, "index": f.qualified, "table": f.table, "kind": f.kind, "evidence": f.evidence,
            "droppable": f.droppable, "protected_reason": f.protected_reason, "idx_scan": f.idx_scan,
            "size_bytes": f.size_bytes, "partitioned": f.partitioned,
            "other": names.get(f.other_oid) if f.other_oid else None}


def _mlpt(m: MlptAdvice) -> dict[str, Any]:
    """The max_locks_per_transaction advice."""
    return {
        "target_version_num": m.target_version_num, "current": m.current_mlpt,
        "groups_needed": m.groups_needed, "smallest": m.mlpt_min,
        "recommended": m.mlpt_recommended, "change_needed": m.change_needed,
        "upgrade": m.upgrade, "shmem_now_bytes": m.shmem_now_bytes,
        "shmem_after_bytes": m.shmem_after_bytes,
        "main_lock_table_per_s_now": round(m.main_per_s_now, 3),
        "main_lock_table_per_s_after": round(m.main_per_s_after, 3),
    }


def _shared_lock(r: SharedLockRisk) -> dict[str, Any]:
    """The largest footprints x sessions against the shared lock table."""
    return {
        "entries": r.entries, "sessions": r.sessions,
        "largest_locks": r.largest_locks, "largest_subject": r.largest_subject,
        "largest_spilled": r.largest_spilled, "need_all": r.need_all,
        "need_spilled": r.need_spilled, "severity": r.severity,
    }


def _lock_budget(a: LockBudgetAudit | None) -> dict[str, Any] | None:
    """The database's own lock budget: pg_dump, DDL on partitioned tables, connections, against the lock table."""
    if a is None:
        return None
    b, d, c = a.budget, a.dump, a.connections
    return {
        "budget": {"entries": b.entries, "free_entries": b.free_entries, "held_entries": b.held_entries,
                   "is_floor": b.is_floor, "max_locks_per_transaction": b.max_locks_per_transaction,
                   "max_backends": b.max_backends, "max_prepared_transactions": b.max_prepared_transactions},
        "pg_dump": None if d is None else {
            "tables": d.tables, "catalogs": d.catalogs, "fast_path": d.fast_path,
            "transient_entries": TRANSIENT_ENTRIES, "need_entries": d.need_entries,
            "verdict": a.verdict(d.need_entries), "smallest_mlpt": b.smallest_mlpt(d.need_entries),
            "schemas": d.schemas, "largest_schema": d.largest_schema,
            "largest_schema_need_entries": d.largest_schema_need},
        "partitioned_tables": [
            {"table": p.qualified, "relations": p.relations, "partitioned": p.partitioned,
             "create_index_entries": p.create_index_entries,
             "alter_entries": p.alter_entries, "verdict": a.verdict(p.create_index_entries),
             "smallest_mlpt": b.smallest_mlpt(p.create_index_entries),
             "unpruned_dml": {"relations": p.dml_relations, "need_entries": p.dml_entries, "leaves": p.leaves,
                              "verdict": a.verdict(p.dml_entries),
                              "partitions_per_transaction": p.dml_partitions_fit(b.free_entries),
                              "smallest_mlpt": b.smallest_mlpt(p.dml_entries)} if p.dml_relations else None}
            for p in a.partitions],
        "statement": {"subject": a.statement.subject, "spilled": a.statement.spilled,
                      "need_entries": a.statement.need_entries, "verdict": a.verdict(a.statement.need_entries)}
        if a.statement is not None else None,
        "connections": {"largest_locks": c.largest_locks, "subject": c.subject, "sessions": c.sessions,
                        "need_entries": c.need_entries, "verdict": a.verdict(c.need_entries)},
    }


def _granularity(g: GranularityAdvice) -> dict[str, Any]:
    """A partitioned table's granularity options."""
    return {"table": g.qualified, "current": g.current_label, "partitions": g.partitions,
            "unpruned_locks": g.unpruned_locks,
            "options": [{"label": o.label, "partitions": o.partitions, "unpruned_locks": o.unpruned_locks,
                         "generic_reuse_locks": o.generic_reuse_locks, "fits": o.fits} for o in g.options]}


def _transactions(t: TransactionsSeen) -> dict[str, Any]:
    """The workload's transactions: measured on the scratch server (each with its executed run), or the caveat;
    and what the pg_locks snapshots showed."""
    held = None
    if t.held is not None:
        held = {"most_main_table": t.held.most_main, "snapshots": t.held.snapshots,
                "statements": [{"queryid": h.queryid, "query": h.query, "footprint_locks": h.footprint_locks,
                                "footprint_main_table": h.footprint_main, "held_locks": h.held_locks,
                                "held_main_table": h.held_main, "observations": h.observations}
                               for h in t.held.statements]}
    return {"measured": bool(t.measured), "caveat": t.caveat, "held": held,
            "items": [{**transaction_to_dict(ta.model), "executed": transaction_to_dict(ta.truth),
                       "transactions_per_s": ta.transactions_per_s} for ta in t.measured]}
