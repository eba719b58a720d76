"""Rich renderables for ``lockscope audit`` (nothing here prints): top risks first, with evidence and the fix."""

from __future__ import annotations

from rich.console import Group, JustifyMethod, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from ..audit.engine import AuditReport
from ..audit.partitions import LockPartitionLoad
from ..lockpart import NUM_LOCK_PARTITIONS

__all__ = ["render_audit"]

_STYLE = {"high": "bold white on red", "medium": "bold yellow", "low": "cyan", "info": "dim"}


def _header(report: AuditReport) -> Panel:
    w = report.workload
    lines = Text()
    lines.append(f"PostgreSQL {report.server_version}", style="bold")
    lines.append(f"  database {report.database}{'  (standby)' if report.in_recovery else ''}"
                 f"{'  (embedded demo)' if report.demo else ''}\n")
    lines.append(f"fast path: {report.capacity.describe()} per backend (max_locks_per_transaction "
                 f"{report.capacity.max_locks_per_transaction}); shared lock table {report.shared_lock_table_entries:,}"
                 f" entries; max_connections {report.max_connections}; plan_cache_mode {report.plan_cache_mode}\n")
    lines.append(f"catalog: {report.relations:,} tables/partitions, {report.indexes:,} indexes; ")
    if w.available:
        rate = f"{w.interval_s:.1f} s interval" if w.interval_s else "since reset"
        lines.append(f"pg_stat_statements: {w.entries:,} entries, {len(w.statements)} audited (rates {rate})\n")
    else:
        lines.append("pg_stat_statements: not available\n")
    summary = Text("findings: ")
    for sev in ("high", "medium", "low", "info"):
        summary.append(f" {report.count(sev)} {sev} ", style=_STYLE[sev] if report.count(sev) else "dim")
    lines.append_text(summary)
    lines.append(f"   ({report.timings_s.get('total', 0):.1f} s)", style="dim")
    return Panel(lines, title="lockscope audit", title_align="left")


def _findings(report: AuditReport, limit: int) -> Table:
    table = Table(title="Top risks", title_justify="left", header_style="bold", show_lines=True, expand=True)
    table.add_column("sev", no_wrap=True)
    table.add_column("finding / evidence", ratio=3)
    table.add_column("fix", ratio=2)
    for f in [f for f in report.findings if f.severity != "info"][:limit]:
        body = Text(f.title, style="bold")
        body.append("\n" + f.evidence, style="")
        table.add_row(Text(f.severity, style=_STYLE[f.severity]), body, Text(f.fix))
    return table


def _tables(report: AuditReport, limit: int) -> Table:
    cap = report.capacity
    table = Table(title=f"Planner-lock footprint per table (capacity {cap.describe()})", title_justify="left",
                  header_style="bold")
    columns: tuple[tuple[str, JustifyMethod], ...] = (
        ("table", "left"), ("kind", "left"), ("indexes", "right"), ("partitions", "right"), ("pruned locks", "right"),
        ("spilled", "right"), ("unpruned locks", "right"), ("spilled", "right"))
    for col, just in columns:
        table.add_column(col, justify=just)
    for t in report.tables[:limit]:
        u = t.unpruned
        table.add_row(
            t.qualified, t.kind, str(t.indexes), str(t.partitions or ""), str(t.pruned.locks),
            Text(str(t.pruned.spilled), style="bold red" if t.pruned.spilled else "green"),
            str(u.locks) if u else "", Text(str(u.spilled), style="bold red" if u.spilled else "green") if u else "",
        )
    if len(report.tables) > limit:
        table.caption = f"{len(report.tables) - limit} more tables in --json / --html"
    return table


def _statements(report: AuditReport, limit: int) -> Table:
    table = Table(title="Statements by main-lock-table acquisitions/s", title_justify="left", header_style="bold")
    columns: tuple[tuple[str, JustifyMethod], ...] = (
        ("queryid", "right"), ("calls/s", "right"), ("custom", "right"), ("generic build/reuse", "right"),
        ("reusing a cached plan", "right"), ("spilled/call", "right"), ("main-lock-table/s", "right"),
        ("query", "left"))
    stmts = sorted((s for s in report.workload.statements if not s.skipped_reason),
                   key=lambda s: (-s.main_lock_table_per_s, -s.calls_per_s))
    # PG 19 pg_stat_statements: calls that ran a generic / a custom plan (counters, no probing)
    plan_calls = any(s.generic_plan_calls is not None for s in stmts)
    if plan_calls:
        columns = (*columns[:4], ("generic/custom calls", "right"), *columns[4:])
    # the phase split's basis of every figure (workload/phases.py)
    for col, just in columns:
        table.add_column(col, justify=just)
    for s in stmts[:limit]:
        custom = f"{s.custom.locks}/{s.custom.spilled}" if s.custom else Text("not measured", style="dim")
        generic = (f"{s.generic.locks}/{s.generic_reuse.locks if s.generic_reuse else '-'}" if s.generic
                   else Text("not measured", style="dim"))
        rate = s.main_lock_table_per_s
        calls: tuple[str, ...] = ()
        if plan_calls:
            calls = ("-" if s.generic_plan_calls is None else f"{s.generic_plan_calls:,}/{s.custom_plan_calls or 0:,}",)
        frac = s.split.reused_fraction if s.split is not None else None
        reuse = (Text("unknown", style="yellow") if s.basis == "unknown" else
                 f"{100 * frac:.1f}% ({s.basis})" if frac is not None else "-")
        shown = (f"{s.main_lock_table_per_s_low:,.0f}-{rate:,.0f}" if s.basis == "unknown"
                 and s.main_lock_table_per_s_low < rate else f"{rate:,.0f}")
        table.add_row(str(s.queryid), f"{s.calls_per_s:,.1f}", custom, generic, *calls, reuse,
                      f"{s.spilled_per_call:.3g}", Text(shown, style="bold red" if rate else "green"),
                      s.short_query[:70])
    return table


def _transactions(report: AuditReport, limit: int) -> Table:
    """The workload script's transactions, measured on the scratch server: run for real (rolled back) and by
    EXPLAIN only, at the execution holding the most main-table locks and once the plan caches settled."""
    table = Table(title="Transactions of the workload script (scratch server, executions 1.."
                        f"{len(report.transactions.measured[0].truth.executions)})", title_justify="left",
                  header_style="bold")
    columns: tuple[tuple[str, JustifyMethod], ...] = (
        ("line", "right"), ("statements", "right"), ("most main: locks/main", "right"), ("first spill", "right"),
        ("settled: locks/main", "right"), ("EXPLAIN model", "right"), ("tx/s", "right"), ("statement 1", "left"))
    for col, just in columns:
        table.add_column(col, justify=just)
    for ta in report.transactions.measured[:limit]:
        peak, steady = ta.peak, ta.steady
        model = ta.model_execution(peak.number)
        table.add_row(str(ta.truth.line), str(len(ta.truth.statements)),
                      Text(f"{peak.lock_count}/{peak.main_table_count} (exec {peak.number})",
                           style="bold red" if peak.main_table_count else "green"),
                      f"statement {peak.first_spill}" if peak.first_spill else "-",
                      f"{steady.lock_count}/{steady.main_table_count}",
                      f"{model.lock_count}/{model.main_table_count}",
                      "-" if ta.transactions_per_s is None else f"{ta.transactions_per_s:,.1f}",
                      " ".join(ta.truth.statements[0].split())[:60])
    return table


def _partition_load(load: LockPartitionLoad, limit: int) -> RenderableType:
    """Per-partition LWLock demand, then the statements and relations loading the hottest partition."""
    if load.hottest_partition is None:
        return Text(f"Lock-partition load: no audited statement puts a lock in the main lock table "
                    f"(0 LWLock:LockManager acquisitions/s on all {NUM_LOCK_PARTITIONS} partitions; "
                    f"{load.statements_measured} statements measured)", style="green")
    hot = load.hottest_partition
    lw = load.lwlock_acquisitions_per_s
    top = max(lw)
    parts = Table(title=f"Lock-partition load: LWLock:LockManager acquisitions/s per partition "
                        f"(database OID {load.database_oid}; LockTagHashCode % {NUM_LOCK_PARTITIONS})",
                  title_justify="left", header_style="bold")
    for col in ("partition", "lock acquisitions/s", "release passes/s", "LWLock acquisitions/s", "of all", ""):
        parts.add_column(col, justify="left" if not col else "right")
    total = sum(lw)
    for p in range(len(lw)):
        bar = "#" * round(20 * lw[p] / top) if top else ""
        style = "bold red" if p == hot else ""
        parts.add_row(Text(str(p), style=style), f"{load.acquisitions_per_s[p]:,.1f}",
                      f"{load.release_passes_per_s[p]:,.1f}", Text(f"{lw[p]:,.1f}", style=style),
                      f"{lw[p] / total:.0%}" if total else "-", Text(bar, style=style or "dim"))
    hottest = Text(f"hottest: partition {hot}, {lw[hot]:,.1f} LWLock acquisitions/s of {total:,.1f}; {load.verdict}",
                   style="bold red" if load.imbalance >= 2 else "")
    stmts = Table(title=f"Statements loading partition {hot}", title_justify="left", header_style="bold")
    stmt_cols: tuple[tuple[str, JustifyMethod], ...] = (
        ("queryid", "right"), ("calls/s", "right"), (f"locks in p{hot}/call", "right"), ("acquisitions/s", "right"),
        (f"of p{hot}", "right"), ("query", "left"))
    for col, just in stmt_cols:
        stmts.add_column(col, justify=just)
    for st in load.statements[:limit]:
        stmts.add_row(str(st.queryid), f"{st.calls_per_s:,.1f}", f"{st.locks_per_call:g}",
                      f"{st.acquisitions_per_s:,.1f}", f"{st.share:.0%}", " ".join(st.query.split())[:70])
    rels = Table(title=f"Relations whose main-table lock lands in partition {hot}", title_justify="left",
                 header_style="bold")
    rel_cols: tuple[tuple[str, JustifyMethod], ...] = (
        ("relation", "left"), ("role", "left"), ("acquisitions/s", "right"), ("statements", "right"))
    for col, just in rel_cols:
        rels.add_column(col, justify=just)
    for r in load.relations[:limit]:
        rels.add_row(Text(r.relation + (" (shared catalog)" if r.database_oid == 0 else "")), r.role,
                     f"{r.acquisitions_per_s:,.1f}", str(r.statements))
    if len(load.relations) > limit:
        rels.caption = f"{len(load.relations) - limit} more relations in --json"
    return Group(parts, hottest, stmts, rels)


def render_audit(report: AuditReport, *, limit: int = 15) -> RenderableType:
    """The terminal report: header, top risks (evidence and fix), tables, statements, the workload script's
    transactions, lock-partition load, notes."""
    parts: list[RenderableType] = [_header(report), _findings(report, limit), _tables(report, limit)]
    if report.workload.statements:
        parts.append(_statements(report, limit))
    if report.transactions.measured:
        parts.append(_transactions(report, limit))
    if report.partition_load is not None:
        parts.append(_partition_load(report.partition_load, limit))
    if report.notes:
        parts.append(Panel("\n".join(f"- {n}" for n in report.notes), title="notes", title_align="left",
                           border_style="dim"))
    return Group(*parts)
