"""Footprints as JSON-ready dicts, schema ``lockscope/footprint/v2`` (documented in docs/json-schema.md).

Adding keys keeps the version; renaming or removing one bumps it.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Sequence
from typing import Any

from .. import __version__
from ..capacity import CapacityModel
from ..footprint import Execution, Footprint, RelationLock
from ..transaction import TransactionExecution, TransactionFootprint

__all__ = ["FOOTPRINT_SCHEMA", "TRANSACTIONS_SCHEMA", "capacity_to_dict", "footprints_to_dict",
           "transaction_to_dict", "transactions_to_dict"]

FOOTPRINT_SCHEMA = "lockscope/footprint/v2"
#: Transaction footprints (``footprint`` with BEGIN ... COMMIT, a pgbench script, or DDL on a scratch server).
TRANSACTIONS_SCHEMA = "lockscope/transactions/v1"


def capacity_to_dict(model: CapacityModel | None) -> dict[str, Any] | None:
    """``{server_version_num, max_locks_per_transaction, fast_path_groups, fast_path_slots, hashed_groups}``."""
    if model is None:
        return None
    return {
        "server_version_num": model.server_version_num,
        "max_locks_per_transaction": model.max_locks_per_transaction,
        "fast_path_groups": model.groups,
        "fast_path_slots": model.slots,
        "hashed_groups": model.hashed,
    }


def _relation(lock: RelationLock) -> dict[str, Any]:
    return {
        "oid": lock.relation_oid,
        "relation": lock.relation,
        "role": lock.role,
        "mode": lock.mode,
        "fastpath": lock.fastpath,
        "predicted_fastpath": lock.predicted_fastpath,
        "assumed_fastpath": lock.assumed_fastpath,
        "fast_path_group": lock.fast_path_group,
        "order": lock.order,
        "order_rule": lock.order_rule,
        "lock_partition": lock.lock_partition,
        "source": lock.source,
        "detail": lock.detail,
    }


def _execution(e: Execution) -> dict[str, Any]:
    """One execution, totals first: what a real execution holds (``locks``, ``fastpath``, ``main_table``, exact or a
    lower bound), then its breakdown (``explain``: what EXPLAIN takes, measured; ``execution``: what running it
    adds, modelled) and every lock in ``relations`` (its ``source`` says which part)."""
    added = e.executor_index_locks + e.execution_locks
    return {
        "number": e.number,
        "phase": e.phase,
        "plan_type": e.plan_type,
        "locks": e.real_lock_count,
        "fastpath": e.real_fastpath_count,
        "main_table": e.real_main_table_count,
        "exact": e.exact,
        "unknowns": list(e.unknowns),
        "at_most": list(e.at_most),
        "notes": list(e.notes),
        "assumed_main_table": e.real_assumed_main_table_count,
        "main_table_locks_per_partition": list(e.real_partition_load),
        "explain": {
            "locks": e.lock_count,
            "fastpath": e.fastpath_count,
            "main_table": e.main_table_count,
            "predicted_main_table": e.predicted_main_table_count,
            "mismatches": len(e.mismatches),
        },
        "execution": {"locks": len(added), "main_table": sum(not lk.fastpath for lk in added)},
        "query_phases": [{"query": what, "phase": phase} for what, phase in e.query_phases],
        "relations": [_relation(lock) for lock in e.real_locks],
        "plan": list(e.plan.lines),
    }


def _header(schema: str, first: Footprint | TransactionFootprint) -> dict[str, Any]:
    """The keys every footprint document opens with: ``schema``, ``lockscope_version``, ``measured_at`` (UTC ISO
    8601), ``server``, ``capacity`` and ``assumed`` (of ``first``, the document's first footprint)."""
    return {
        "schema": schema,
        "lockscope_version": __version__,
        "measured_at": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "server": {"server_version_num": first.server_version_num, "server_version": first.server_version},
        "capacity": capacity_to_dict(first.capacity),
        "assumed": capacity_to_dict(first.assumed),
    }


def footprints_to_dict(footprints: Sequence[Footprint]) -> dict[str, Any]:
    """One JSON document for one statement measured under one or more plan_cache_modes.

    :param footprints: non-empty, all of the same statement and server.
    :return: a dict with ``schema``, ``lockscope_version``, ``measured_at`` (UTC ISO 8601), ``server``,
        ``capacity``, ``assumed``, ``statement``, ``protocol``, ``params``, ``spilled``, ``exact``,
        ``mismatch_count``, ``order_note``, ``source`` (``measured``, ``helper`` or ``derived``: EXPLAIN denied, the
        locks derived from the catalog), ``helper`` (the EXPLAIN helper used, or null), ``privileges`` (what the role
        lacks: relation, privilege, the GRANT that lifts it), ``helper_privileges`` (what the EXPLAIN helper's owner
        lacks, when the helper could not be used) and ``runs`` (one per plan_cache_mode, each with
        ``executions``).
    """
    first = footprints[0]
    return {
        **_header(FOOTPRINT_SCHEMA, first),
        "statement": first.statement,
        "protocol": first.protocol,
        "params": list(first.params),
        "param_types": list(first.param_types),
        "spilled": any(fp.spilled for fp in footprints),
        "exact": all(fp.exact for fp in footprints),
        "mismatch_count": sum(fp.mismatch_count for fp in footprints),
        "order_note": first.order_note,
        "source": first.source,
        "helper": first.helper or None,
        "privileges": [{"relation": g.relation, "privilege": g.privilege, "grant": g.grant,
                        "column_level": g.column_level} for g in first.privilege_gaps],
        "helper_privileges": [{"relation": g.relation, "privilege": g.privilege, "grant": g.grant}
                              for g in first.helper_gaps],
        "runs": [
            {"plan_cache_mode": fp.plan_cache_mode, "executions": [_execution(e) for e in fp.executions]}
            for fp in footprints
        ],
    }


def _transaction_execution(e: TransactionExecution) -> dict[str, Any]:
    return {
        "number": e.number,
        "locks": e.lock_count,
        "main_table": e.main_table_count,
        "exact": e.exact,
        "unknowns": list(e.unknowns),
        "first_spill": e.first_spill,
        "main_table_locks_per_partition": list(e.partition_load),
        "statements": [{
            "number": s.number, "line": s.line, "phase": s.execution.phase, "held_after": s.held_after,
            "main_after": s.main_after, "lock_entries": dict(s.lock_entries),
            "query_phases": [{"query": what, "phase": phase} for what, phase in s.execution.query_phases],
            "locks": [_relation(lk) for lk in s.locks],
        } for s in e.steps],
    }


def transaction_to_dict(fp: TransactionFootprint) -> dict[str, Any]:
    """One transaction footprint: ``line``, ``explicit``, ``method``, ``protocol``, ``plan_cache_mode``,
    ``statements``, ``spilled``, ``notes`` and ``executions`` (each with its ``statements``: docs/json-schema.md)."""
    return {
        "line": fp.line, "explicit": fp.explicit, "method": fp.method, "protocol": fp.protocol,
        "plan_cache_mode": fp.plan_cache_mode, "statements": list(fp.statements), "spilled": fp.spilled,
        "exact": fp.exact, "notes": list(fp.notes), "unknowns": list(fp.unknowns),
        "executions": [_transaction_execution(e) for e in fp.executions],
    }


def transactions_to_dict(footprints: Sequence[TransactionFootprint],
                         executed: Sequence[TransactionFootprint | None] | None = None) -> dict[str, Any]:
    """One JSON document for a script's transactions (schema :data:`TRANSACTIONS_SCHEMA`, docs/json-schema.md).

    :param footprints: one per transaction (the model, or the executed run for DDL on a scratch server).
    :param executed: on a scratch server, the executed run beside each model (None where it is the footprint).
    :return: ``schema``, ``lockscope_version``, ``measured_at``, ``server``, ``capacity``, ``assumed``,
        ``spilled`` and ``transactions`` (each: ``line``, ``explicit``, ``method``, ``protocol``,
        ``plan_cache_mode``, ``statements``, ``spilled``, ``notes``, ``executions`` with their ``statements``,
        and ``executed``: the same for the run on the scratch server, or None).
    """
    first = footprints[0]
    return {
        **_header(TRANSACTIONS_SCHEMA, first),
        "spilled": any(fp.spilled for fp in footprints),
        "transactions": [{**transaction_to_dict(fp), "executed": transaction_to_dict(t) if t is not None else None}
                         for fp, t in zip(footprints, executed or [None] * len(footprints), strict=True)],
    }
