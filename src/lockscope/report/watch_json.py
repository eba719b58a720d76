"""``lockscope watch --json`` (the watch's summary) and ``lockscope report --json`` (a recording's summary): one
schema, ``lockscope/watch/v1`` (docs/json-schema.md)."""

from __future__ import annotations

import datetime as _dt
from typing import TYPE_CHECKING, Any

from .. import __version__
from .forecast_json import interval_dict

if TYPE_CHECKING:
    from ..watch.engine import WatchSummary
    from ..watch.recorded import RecordingSummary
    from ..workload.transactions import TransactionLoad

__all__ = ["SCHEMA", "watch_summary_to_dict"]

SCHEMA = "lockscope/watch/v1"


def _main_lock_table(summary: WatchSummary | RecordingSummary) -> dict[str, Any] | None:
    """The server's main-lock-table figures of a live watch (None for a recording: not recorded)."""
    load: TransactionLoad | None = getattr(summary, "transactions", None)
    fp: float | None = getattr(summary, "fastpath_exceeded_per_s", None)
    if load is None and fp is None:
        return None
    held = load.held_main_per_s if load is not None else None
    return {"per_s": fp if fp is not None else held,
            "basis": "pg_stat_lock.fastpath_exceeded" if fp is not None else
            "pg_locks snapshots: held main-table locks per transaction x transactions/s",
            "fastpath_exceeded_per_s": fp, "held_per_s": held,
            "transactions_per_s": load.transactions_per_s if load is not None else None,
            "snapshots": load.snapshots if load is not None else 0,
            "transactions_seen": load.transactions_seen if load is not None else 0}


def _transactions(summary: WatchSummary | RecordingSummary) -> list[dict[str, Any]]:
    load: TransactionLoad | None = getattr(summary, "transactions", None)
    if load is None:
        return []
    return [{"statements": [{"query_id": q, "text": t} for q, t in zip(s.query_ids, s.texts, strict=True)],
             "single_statement": s.single_statement, "held_locks_per_transaction": s.held_locks_per_txn,
             "held_main_table_per_transaction": s.held_main_per_txn, "transactions_per_s": s.transactions_per_s,
             "transactions_per_s_basis": s.tps_basis, "main_lock_table_per_s": s.main_per_s,
             "observations": s.observations, "transactions_seen": s.transactions_seen}
            for s in load.shapes if s.held_main_per_txn > 0][:10]


def watch_summary_to_dict(summary: WatchSummary | RecordingSummary, *, source: str,
                          server: dict[str, Any] | None = None) -> dict[str, Any]:
    """The figures of a finished watch or of a recording as a JSON-ready dict.

    :param source: ``watch`` (a finished ``lockscope watch``) or ``recording`` (``lockscope report FILE``).
    :param server: what is known of the server (version, host, port, database, chosen_by).
    """
    record = getattr(summary, "record_path", None) if source == "watch" else getattr(summary, "path", None)
    return {
        "schema": SCHEMA,
        "lockscope_version": __version__,
        "written_at": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "source": source,
        "server": server or {},
        "recording": str(record) if record is not None else None,
        "end_reason": getattr(summary, "end_reason", None),
        "duration_s": summary.duration_s,
        "hz": summary.hz,
        "ticks": summary.ticks,
        "achieved_hz": summary.achieved_hz,
        "late_ticks": summary.late_ticks,
        "active_session_samples": summary.active_session_samples,
        "aas": summary.aas,
        "lockmanager_samples": summary.lockmanager_samples,
        "lockmanager_share": summary.lockmanager_samples / summary.active_session_samples
        if summary.active_session_samples else 0.0,
        "lockmanager_share_95": interval_dict(summary.lockmanager_interval),
        "by_wait": dict(summary.by_wait),
        "gaps": [{"start_s": g.start_s, "end_s": g.end_s, "reason": g.reason} for g in summary.gaps],
        "top_statements": [{"queryid": s.query_id, "lockmanager_samples": s.lockmanager_samples,
                            "samples": s.samples, "query": s.text} for s in summary.top_statements],
        "main_lock_table": _main_lock_table(summary),
        "transactions": _transactions(summary),
    }
