"""``lockscope watch --json`` (the watch's summary) and ``lockscope report --json`` (a recording's summary): one
schema, ``lockscope/watch/v1`` (docs/json-schema.md)."""

from __future__ import annotations

import datetime as _dt
from typing import TYPE_CHECKING, Any

from .. import __version__

if TYPE_CHECKING:
    from ..watch.engine import WatchSummary
    from ..watch.recorded import RecordingSummary

__all__ = ["SCHEMA", "watch_summary_to_dict"]

SCHEMA = "lockscope/watch/v1"


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
        "by_wait": dict(summary.by_wait),
        "gaps": [{"start_s": g.start_s, "end_s": g.end_s, "reason": g.reason} for g in summary.gaps],
        "top_statements": [{"queryid": s.query_id, "lockmanager_samples": s.lockmanager_samples,
                            "samples": s.samples, "query": s.text} for s in summary.top_statements],
    }
