"""``lockscope audit --html``: one self-contained file (inline CSS and SVG, no network, no scripts).

Summary first (what to do, the counts, the charts), then the findings grouped by severity as cards whose long
texts wrap, then the detail tables, each scrolling inside itself so the page fits a 1300-pixel window.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..audit.engine import SEVERITIES, AuditReport, Finding
from ..audit.lockbudget import LockBudgetAudit, budget_lines
from ..audit.partitions import LockPartitionLoad
from ..lockpart import NUM_LOCK_PARTITIONS
from ..workload.probes import StatementAudit
from .html import SEVERITY_COLORS, cards, escape, page, svg_columns, svg_hbars, table

__all__ = ["audit_html", "findings_html", "lock_budget_section", "partition_chart", "partition_section",
           "statements_chart", "tables_chart"]

_SEVERITY_TITLES = {"high": "High risk", "medium": "Medium risk", "low": "Low risk", "info": "Information"}


def tables_chart(report: AuditReport, *, limit: int = 20) -> str:
    """Tables' planner-lock footprint (one-table statement, pruned/plain) against the fast-path capacity line;
    the unpruned footprint of a partitioned table as the second bar. Bars over the line are red."""
    cap = report.capacity
    tables = sorted(report.tables, key=lambda t: -max(t.pruned.locks, t.unpruned.locks if t.unpruned else 0))[:limit]
    if not tables:
        return '<p class="muted">No tables.</p>'
    rows = [(t.qualified, float(t.pruned.locks),
             SEVERITY_COLORS["high"] if t.pruned.spilled else SEVERITY_COLORS["plain"]) for t in tables]
    unpruned = [float(t.unpruned.locks) if t.unpruned else None for t in tables]
    more = f" (largest {limit} of {len(report.tables)})" if len(report.tables) > limit else ""
    return svg_hbars(rows, title=f"Planner locks of a one-table statement per table{more}", unit="relation locks",
                     ref=(float(cap.slots), f"{cap.slots} fast-path slots"),
                     after=unpruned if any(u is not None for u in unpruned) else None,
                     after_label="unpruned (all partitions)", now_label="plain, or pruned to one partition")


def statements_chart(statements: Sequence[StatementAudit], *, limit: int = 15,
                     highlight: frozenset[int] = frozenset()) -> str:
    """Statements by main-lock-table acquisitions/s (calls/s x spilled locks per call), largest first."""
    top = sorted((s for s in statements if s.main_lock_table_per_s > 0), key=lambda s: -s.main_lock_table_per_s)
    if not top:
        return ('<p class="ok">No audited statement puts locks in the main lock table at a measurable rate '
                "(0 main-lock-table acquisitions/s).</p>")
    rows = [(f"{s.queryid}: {s.short_query}", s.main_lock_table_per_s,
             SEVERITY_COLORS["high"] if s.queryid in highlight or not highlight else SEVERITY_COLORS["medium"])
            for s in top[:limit]]
    return svg_hbars(rows, title="Main-lock-table acquisitions per second by statement (calls/s x spilled locks)",
                     unit="acquisitions/s", label_chars=60)


def partition_chart(load: LockPartitionLoad) -> str:
    """LWLock:LockManager acquisitions/s per lock partition (16 columns: main-table lock acquisitions and
    ``LockReleaseAll`` passes, :mod:`lockscope.audit.partitions`); empty when nothing is in the main table."""
    if load.hottest_partition is None:
        return ""
    return svg_columns([str(p) for p in range(NUM_LOCK_PARTITIONS)],
                       [("lock acquisitions", list(load.acquisitions_per_s), SEVERITY_COLORS["high"]),
                        ("release passes", list(load.release_passes_per_s), SEVERITY_COLORS["medium"])],
                       title=("LWLock:LockManager acquisitions per second by lock partition "
                              f"(0..{NUM_LOCK_PARTITIONS - 1})"),
                       unit="acquisitions/s", xlabel=f"lock partition (LockTagHashCode % {NUM_LOCK_PARTITIONS})")


def partition_section(load: LockPartitionLoad, *, max_rows: int = 200) -> str:
    """The lock-partition load: the hottest partition, the statements and relations loading it (the chart is in
    the summary)."""
    hot = load.hottest_partition
    if hot is None:
        return ('<p class="ok">No audited statement puts a lock in the main lock table: 0 LWLock:LockManager '
                f"acquisitions/s on all {NUM_LOCK_PARTITIONS} partitions ({load.statements_measured} statements "
                "measured).</p>")
    out = [f'<p>Hottest: <b>partition {hot}</b>, {load.hottest_per_s:,.1f} LWLock acquisitions/s = '
           f"{load.imbalance:.1f} x the mean of the {NUM_LOCK_PARTITIONS} (1 = even spread; database OID "
           f"{load.database_oid}). "
           "Every backend running these statements takes this partition's LWLock exclusively for each lock.</p>",
           table(("query", "queryid", "calls/s", f"locks in p{hot}/call", "acquisitions/s", f"of p{hot}"),
                 [(" ".join(st.query.split())[:200], st.queryid, f"{st.calls_per_s:,.1f}", f"{st.locks_per_call:g}",
                   f"{st.acquisitions_per_s:,.1f}", f"{st.share:.0%}") for st in load.statements[:max_rows]],
                 left=1),
           table(("relation", "role", "acquisitions/s", "statements"),
                 [(r.relation + (" (shared catalog)" if r.database_oid == 0 else ""), r.role,
                   f"{r.acquisitions_per_s:,.1f}", r.statements) for r in load.relations[:max_rows]], left=2)]
    return "".join(out)


def _item(f: Finding) -> str:
    return (f'<div class="item {escape(f.severity)}"><div class="t"><span class="sev {escape(f.severity)}">'
            f"{escape(f.severity)}</span>{escape(f.title)}</div><div class=\"e\">{escape(f.evidence)}</div>"
            f'<div class="f"><b>Fix:</b> {escape(f.fix)}</div></div>')


def findings_html(findings: Sequence[Finding], *, info_as_table: bool = True) -> str:
    """Findings grouped by severity: cards for high/medium/low, a compact table for info."""
    out = []
    for sev in SEVERITIES:
        group = [f for f in findings if f.severity == sev]
        if not group:
            continue
        out.append(f"<h3>{_SEVERITY_TITLES[sev]} ({len(group)})</h3>")
        if sev == "info" and info_as_table:
            out.append(table(("finding", "evidence", "fix"), [(f.title, f.evidence, f.fix) for f in group], left=3))
        else:
            out.extend(_item(f) for f in group)
    return "".join(out) or '<p class="ok">No findings.</p>'


def _first_steps(report: AuditReport) -> str:
    todo = [f for f in report.findings if f.severity in ("high", "medium")][:3]
    if not todo:
        return ('<div class="verdict ok">Nothing high or medium: no table or statement spills out of the fast path '
                f"at {escape(report.capacity.describe())}.</div>")
    worst = todo[0].severity
    items = "".join(f"<li><b>{escape(f.fix)}</b> <span class=\"muted\">({escape(f.title)})</span></li>" for f in todo)
    return f'<div class="verdict {worst}"><b>Do first:</b><ol>{items}</ol></div>'


def audit_html(report: AuditReport, *, max_rows: int = 200) -> str:
    """The report as HTML: summary (first steps, counts, charts), findings by severity, detail tables (with the
    lock-partition load)."""
    cap = report.capacity
    w = report.workload
    body = [f'<p class="muted">PostgreSQL {escape(report.server_version)}, database <code>{escape(report.database)}'
            f"</code>{' (standby)' if report.in_recovery else ''}{' (embedded demo)' if report.demo else ''}; "
            f"max_locks_per_transaction {cap.max_locks_per_transaction}; shared lock table "
            f"{report.shared_lock_table_entries:,} entries; {report.relations:,} tables/partitions, "
            f"{report.indexes:,} indexes; plan_cache_mode {escape(report.plan_cache_mode)}.</p>"]
    body.append(_first_steps(report))
    body.append(cards(_summary_cards(report)))
    body.append("<h2>Summary</h2>")
    body.append(tables_chart(report))
    body.append(statements_chart(w.statements) if w.available else
                f'<p class="muted">Statements not audited: {escape(" ".join(w.notes))}</p>')
    if report.partition_load is not None:
        body.append(partition_chart(report.partition_load))
    body.append("<h2>Findings</h2>")
    body.append(findings_html(report.findings))
    body.append("<h2>Tables</h2>")
    body.append(_tables_table(report, max_rows))
    body.append("<h2>Statements</h2>")
    body.extend(_statements_section(report, max_rows))
    if report.partition_load is not None:
        body.append("<h2>Lock-partition load</h2>")
        body.append(partition_section(report.partition_load, max_rows=max_rows))
    if report.index_findings:
        body.append("<h2>Indexes</h2>")
        body.append(table(("index", "table", "kind", "evidence", "droppable", "idx_scan", "MiB"),
                          [(f.qualified, f.table, f.kind, f.evidence,
                            "yes" if f.droppable else f"no: {f.protected_reason}", f.idx_scan,
                            f"{f.size_bytes / 2**20:.1f}") for f in report.index_findings[:max_rows]], left=5))
    body.append("<h2>Settings</h2>")
    body.append(_settings_table(report))
    if report.lock_budget is not None:
        body.append("<h2>Lock table budget</h2>")
        body.append(lock_budget_section(report.lock_budget))
    if report.notes:
        body.append("<h2>Notes</h2><ul>" + "".join(f"<li>{escape(n)}</li>" for n in report.notes) + "</ul>")
    return page(f"lockscope audit: {report.database}", body)


def _summary_cards(report: AuditReport) -> list[tuple[str, str, bool]]:
    """The summary cards: findings by severity, capacity, spilling tables, main-lock-table rate now and after."""
    m = report.mlpt
    spilling = sum(1 for t in report.tables if t.pruned.spilled)
    summary = [(str(report.count(s)), f"{s} findings", s == "high" and report.count(s) > 0)
               for s in ("high", "medium", "low")]
    summary += [(report.capacity.describe().split(" (")[0], "fast-path capacity per backend", False),
                (f"{spilling}", f"of {len(report.tables)} tables spill", spilling > 0),
                (f"{m.main_per_s_now:,.0f}", "main-lock-table acquisitions/s", m.main_per_s_now > 0)]
    if m.change_needed and m.mlpt_recommended is not None:
        summary.append((f"{m.main_per_s_after:,.0f}", f"acquisitions/s at max_locks_per_transaction "
                        f"{m.mlpt_recommended}", False))
    return summary


def _tables_table(report: AuditReport, max_rows: int) -> str:
    """Per table: pruned and unpruned footprints, spills and fast-path group overflow."""
    return table(
        ("table", "kind", "indexes", "partitions", "pruned locks", "spilled", "unpruned locks", "spilled",
         "group overflow"),
        [(t.qualified, t.kind, t.indexes, t.partitions, t.pruned.locks, t.pruned.spilled,
          t.unpruned.locks if t.unpruned else "", t.unpruned.spilled if t.unpruned else "",
          ", ".join(f"{g}: {n}" for g, n in t.pruned.overflowing_groups.items()))
         for t in report.tables[:max_rows]],
        left=2, classes=[["", "", "", "", "", "bad" if t.pruned.spilled else "ok", "",
                          "bad" if t.unpruned and t.unpruned.spilled else ""] for t in report.tables[:max_rows]])


def _statements_section(report: AuditReport, max_rows: int) -> list[str]:
    """The audited statements by main-lock-table acquisitions/s (a line, then the table), or a line saying there
    are none (body fragments)."""
    w = report.workload
    stmts = sorted((s for s in w.statements if not s.skipped_reason), key=lambda s: -s.main_lock_table_per_s)
    if not stmts:
        return ['<p class="muted">No statements audited.</p>']
    rate = f"{w.interval_s:.1f} s interval" if w.interval_s else "since the last reset"
    intro = (f'<p class="muted">{w.entries:,} pg_stat_statements entries, {len(stmts)} audited; calls/s over '
             f"the {rate}.</p>")
    return [intro, table(
        ("query", "queryid", "role", "calls/s", "custom locks", "spilled", "generic build", "generic reuse",
         "spilled/call", "main-lock-table/s", "not measured because"),
        [(s.short_query, s.queryid, s.rolname or "", f"{s.calls_per_s:,.1f}", s.custom.locks if s.custom else "",
          s.custom.spilled if s.custom else "", s.generic.locks if s.generic else "",
          s.generic_reuse.locks if s.generic_reuse else "", f"{s.spilled_per_call:g}",
          f"{s.main_lock_table_per_s:,.1f}", s.custom_reason or s.generic_reason or "")
         for s in stmts[:max_rows]], left=3,
        classes=[["", "", "", "", "", "bad" if s.custom and s.custom.spilled else "", "", "", "",
                  "bad" if s.main_lock_table_per_s else ""] for s in stmts[:max_rows]])]


def lock_budget_section(audit: LockBudgetAudit) -> str:
    """The lock table and what pg_dump, DDL on each partitioned table and the connections need from it."""
    head = f"<p>Shared lock table: {escape(audit.budget.describe())}.</p>"
    return head + table(("need", "entries", "verdict", "made of"),
                        [(b.what, f"{b.need_entries:,}", b.verdict, b.detail) for b in budget_lines(audit)], left=1)


def _settings_table(report: AuditReport) -> str:
    """The max_locks_per_transaction advice and the shared lock table as item/value rows."""
    m = report.mlpt
    return table(("item", "value"), [
        ("fast-path groups needed (hash-aware, real OIDs)", m.groups_needed or "more than 1024"),
        ("max_locks_per_transaction: smallest / recommended", f"{m.mlpt_min} / {m.mlpt_recommended}"),
        ("advice for", "PostgreSQL 18 (upgrade)" if m.upgrade else "this server"),
        ("lock shared memory now / after (MiB)", f"{m.shmem_now_bytes / 2**20:.1f} / "
         f"{(m.shmem_after_bytes or 0) / 2**20:.1f}"),
        ("main-lock-table acquisitions/s now / after", f"{m.main_per_s_now:,.0f} / {m.main_per_s_after:,.0f}"),
        ("shared lock table: entries / largest x sessions / spilled x sessions",
         f"{report.shared_lock.entries:,} / {report.shared_lock.need_all:,} / {report.shared_lock.need_spilled:,}"),
    ], left=2)
