"""``lockscope audit --html``: one self-contained file (inline CSS and SVG, no network, no scripts)."""

from __future__ import annotations

from ..audit.engine import AuditReport
from .html import escape, page, svg_bar_chart, table

__all__ = ["audit_html"]


def audit_html(report: AuditReport, *, max_bars: int = 40) -> str:
    """The report as HTML: findings, a footprint-per-table chart against the slot line, per-statement
    main-lock-table acquisitions/s, then the detailed tables."""
    cap = report.capacity
    body = [f"<p>PostgreSQL {escape(report.server_version)}, database <code>{escape(report.database)}</code>"
            f"{' (standby)' if report.in_recovery else ''}{' (embedded demo)' if report.demo else ''}; fast path "
            f"{escape(cap.describe())} per backend; shared lock table {report.shared_lock_table_entries:,} entries; "
            f"{report.relations:,} tables/partitions, {report.indexes:,} indexes. Findings: "
            + ", ".join(f"{report.count(s)} {s}" for s in ("high", "medium", "low", "info")) + ".</p>"]
    body.append("<h2>Findings</h2>")
    rows = [(f.severity, f.title, f.evidence, f.fix) for f in report.findings]
    classes = [["bad" if f.severity == "high" else "", "", "", ""] for f in report.findings]
    body.append(table(("severity", "finding", "evidence", "fix"), rows, left=4, classes=classes))
    tables = list(report.tables[:max_bars])
    if tables:
        body.append("<h2>Planner-lock footprint per table</h2>")
        series = {"pruned / plain": [t.pruned.locks for t in tables]}
        if any(t.unpruned for t in tables):
            series["unpruned"] = [t.unpruned.locks if t.unpruned else 0 for t in tables]
        body.append(svg_bar_chart([t.qualified.split(".")[-1][:24] for t in tables], series,
                                  title="relations locked by a one-table statement", ylabel="locks",
                                  hline=(cap.slots, f"{cap.slots} fast-path slots")))
        body.append(table(
            ("table", "kind", "indexes", "partitions", "pruned locks", "spilled", "unpruned locks", "spilled",
             "group overflow"),
            [(t.qualified, t.kind, t.indexes, t.partitions, t.pruned.locks, t.pruned.spilled,
              t.unpruned.locks if t.unpruned else "", t.unpruned.spilled if t.unpruned else "",
              ", ".join(f"{g}: {n}" for g, n in t.pruned.overflowing_groups.items()))
             for t in report.tables],
            left=2, classes=[["", "", "", "", "", "bad" if t.pruned.spilled else "ok", "",
                              "bad" if t.unpruned and t.unpruned.spilled else ""] for t in report.tables]))
    w = report.workload
    body.append("<h2>Statements</h2>")
    stmts = sorted((s for s in w.statements if not s.skipped_reason), key=lambda s: -s.main_lock_table_per_s)
    if stmts:
        top = stmts[:max_bars]
        body.append(svg_bar_chart([str(s.queryid)[-6:] for s in top],
                                  {"main-lock-table acquisitions/s": [s.main_lock_table_per_s for s in top]},
                                  title="main-lock-table acquisitions per second = calls/s x spilled locks per call",
                                  ylabel="acquisitions/s", xlabel="queryid (last digits)"))
        body.append(table(
            ("queryid", "role", "calls/s", "custom locks", "spilled", "generic build", "generic reuse",
             "spilled/call", "main-lock-table/s", "not measured because", "query"),
            [(s.queryid, s.rolname or "", f"{s.calls_per_s:,.1f}", s.custom.locks if s.custom else "",
              s.custom.spilled if s.custom else "", s.generic.locks if s.generic else "",
              s.generic_reuse.locks if s.generic_reuse else "", f"{s.spilled_per_call:g}",
              f"{s.main_lock_table_per_s:,.1f}", s.custom_reason or s.generic_reason or "", s.short_query)
             for s in stmts], left=2))
    else:
        body.append("<p class=muted>No statements audited.</p>")
    if report.index_findings:
        body.append("<h2>Indexes</h2>")
        body.append(table(("index", "table", "kind", "evidence", "droppable", "idx_scan", "MiB"),
                          [(f.qualified, f.table, f.kind, f.evidence,
                            "yes" if f.droppable else f"no: {f.protected_reason}", f.idx_scan,
                            f"{f.size_bytes / 2**20:.1f}") for f in report.index_findings], left=5))
    m = report.mlpt
    body.append("<h2>Settings</h2>")
    body.append(table(("item", "value"), [
        ("fast-path groups needed (hash-aware, real OIDs)", m.groups_needed or "more than 1024"),
        ("max_locks_per_transaction: smallest / recommended", f"{m.mlpt_min} / {m.mlpt_recommended}"),
        ("advice for", "PostgreSQL 18 (upgrade)" if m.upgrade else "this server"),
        ("lock shared memory now / after (MiB)", f"{m.shmem_now_bytes / 2**20:.1f} / "
         f"{(m.shmem_after_bytes or 0) / 2**20:.1f}"),
        ("main-lock-table acquisitions/s now / after", f"{m.main_per_s_now:,.0f} / {m.main_per_s_after:,.0f}"),
        ("shared lock table: entries / largest x sessions / spilled x sessions",
         f"{report.shared_lock.entries:,} / {report.shared_lock.need_all:,} / {report.shared_lock.need_spilled:,}"),
    ], left=2))
    if report.notes:
        body.append("<h2>Notes</h2><ul>" + "".join(f"<li>{escape(n)}</li>" for n in report.notes) + "</ul>")
    return page(f"lockscope audit: {report.database}", body)

