"""The ``--sql`` script: every recommended change as a reviewable statement with its evidence. Never executed."""

from __future__ import annotations

import datetime as _dt

from .. import __version__
from ..audit.engine import AuditReport

__all__ = ["audit_sql_script"]


def audit_sql_script(report: AuditReport) -> str:
    """A SQL script with one commented statement per recommended change, highest severity first.

    ``DROP INDEX CONCURRENTLY`` cannot run inside a transaction block: run the script statement by statement
    (e.g. ``psql -f``, without ``--single-transaction``).
    """
    now = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    lines = [
        f"-- lockscope {__version__} audit of database {report.database} on PostgreSQL {report.server_version}, {now}",
        f"-- fast-path capacity: {report.capacity.describe()}; findings: "
        + ", ".join(f"{report.count(s)} {s}" for s in ("high", "medium", "low")),
        "-- REVIEW BEFORE RUNNING. lockscope never runs this script. DROP INDEX CONCURRENTLY cannot run inside a",
        "-- transaction block: run it statement by statement (psql -f, without --single-transaction).",
        "",
    ]
    seen: set[str] = set()
    count = 0
    for f in report.findings:
        for stmt in f.sql:
            key = stmt.strip().splitlines()[-1]
            if key in seen:
                continue
            seen.add(key)
            count += 1
            lines.append(f"-- [{f.severity}] {f.title}")
            lines.append(stmt.rstrip())
            lines.append("")
    if count == 0:
        lines.append("-- nothing to change")
    return "\n".join(lines) + "\n"
