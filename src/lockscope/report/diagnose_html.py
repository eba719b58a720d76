"""``lockscope diagnose --html``: one self-contained file (inline CSS and SVG, no network, no scripts).

The verdict and the summary cards first, then the pictures (average active sessions by wait event, the statements
by main-lock-table acquisitions/s, the tables' planner-lock footprints against the fast-path line, the 16 lock
partitions now and after the first fix), then the statements that waited, the ranked fixes with their SQL, and
the audit's findings.
"""

from __future__ import annotations

from ..diagnose.engine import Culprit, Diagnosis, Fix, forecast_lines
from ..diagnose.transactions import TransactionFinding
from ..lockpart import NUM_LOCK_PARTITIONS
from ..watch.aas import sampled_error
from .audit_html import findings_html, statements_chart, tables_chart
from .html import SEVERITY_COLORS, cards, escape, page, svg_columns, svg_hbars, svg_stack, table, wait_color

__all__ = ["diagnose_html"]


def _waits(d: Diagnosis) -> str:
    items = list(d.aas_by_wait.items())
    if not items:
        return '<p class="muted">No active session was sampled.</p>'
    parts, k = [], 0
    for label, aas in items[:10]:
        fixed = label in ("LWLock:LockManager", "CPU")
        parts.append((label, aas, wait_color(label, k)))
        k += 0 if fixed else 1
    rest = sum(a for _, a in items[10:])
    if rest > 0:
        parts.append(("other", rest, "#bbbbbb"))
    return svg_stack(parts, title=f"Average active sessions by wait event ({d.watch.aas:.2f} in all, "
                                  f"{d.watch.ticks:,} samples over {d.watch.duration_s:.0f} s)", unit="sessions")


def _partitions(d: Diagnosis) -> str:
    if not any(d.partition_per_s):
        return (f'<p class="ok">No main-table lock: the {NUM_LOCK_PARTITIONS} lock partitions are idle '
                "(0 acquisitions/s).</p>")
    series = [("now", list(d.partition_per_s), SEVERITY_COLORS["high"])]
    if d.partition_per_s_after is not None and d.fixes:
        series.append((f"after: {d.fixes[0].title}"[:70], list(d.partition_per_s_after), SEVERITY_COLORS["after"]))
    return svg_columns([str(p) for p in range(NUM_LOCK_PARTITIONS)], series,
                       title=("Main-lock-table acquisitions per second by lock partition (LWLock:LockManager "
                              f"0..{NUM_LOCK_PARTITIONS - 1})"),
                       unit="acquisitions/s", xlabel=f"lock partition (LockTagHashCode % {NUM_LOCK_PARTITIONS})")


def _culprit(c: Culprit, total_lm: int) -> str:
    head = (f'<div class="item high"><div class="t">query_id {escape(c.query_id)}: '
            f"{c.lockmanager_samples:,} LockManager samples ({100 * c.lockmanager_fraction:.0f}% of {total_lm:,})"
            "</div>")
    text = f"<pre>{escape(c.text or '(text unknown)')}</pre>"
    if c.shape is None:
        return head + text + f'<div class="e">Not measured: {escape(c.reason)}</div></div>'
    facts = (f'<div class="e">{c.calls_per_s or 0:,.1f} calls/s x {c.spilled_per_call:g} spilled locks per call = '
             f"<b>{c.main_per_s:,.0f} main-lock-table acquisitions/s</b>; locks "
             f"{escape(', '.join(c.tables[:3]))} and {len(c.shape.locks) - len(c.tables)} indexes</div>")
    phases = table(("plan-cache phase", "relation locks", "in the main lock table", "lock partitions"),
                   [(p.describe + ("" if p.measured else " (derived from the build)"), p.locks, p.spilled,
                     ", ".join(str(x) for x in p.partitions) or "-") for p in c.phases], left=1,
                   classes=[["", "", "bad" if p.spilled else "ok", ""] for p in c.phases])
    by_part: dict[int, list[str]] = {}
    for lk in c.spilled:
        by_part.setdefault(lk.partition, []).append(lk.relation.split(".")[-1])
    spills = table(("lock partition", "spilled relations"),
                   [(p, ", ".join(sorted(names))) for p, names in sorted(by_part.items())], left=2)
    return head + text + facts + phases + "<h3>Spilled relations by lock partition</h3>" + spills + "</div>"


def _transaction(i: int, f: TransactionFinding) -> str:
    shape = f.shape
    head = (f'<div class="item {"high" if f.beyond_model else "medium"}"><div class="t">{i}. {escape(f.describe())}'
            "</div>")
    facts = (f'<div class="e">{shape.held_locks_per_txn:.0f} relation locks held per transaction, '
             f"{shape.held_main_per_txn:.0f} in the main lock table, x {shape.transactions_per_s:,.0f} transactions/s "
             f"({escape(shape.tps_basis)}) = <b>{shape.main_per_s:,.0f} main-lock-table acquisitions/s</b>; "
             f"{shape.observations} complete of {shape.transactions_seen} transactions seen</div>")
    cause = f'<div class="e">Why: {escape(f.cause)}</div>' if f.cause else ""
    stmts = table(("#", "statement", "main-table locks alone (model)"),
                  [(k, t or "(text unknown)", "-" if sp is None else f"{sp:g}")
                   for k, (t, sp) in enumerate(zip(shape.texts, f.statement_spills, strict=True), 1)], left=2)
    main = (f'<div class="e">In the main lock table: {escape(", ".join(f.main_relations))}</div>'
            if f.main_relations else "")
    return head + facts + cause + stmts + main + "</div>"


def _transactions(d: Diagnosis) -> list[str]:
    """The transactions holding main-table locks, with why the server and the model differ; [] without any."""
    if not d.transactions:
        return []
    out = [f"<h2>Transactions holding main-table locks ({len(d.transactions)})</h2>"]
    if d.server.model_note:
        out.append(f'<p class="muted">{escape(d.server.model_note)}</p>')
    out.extend(_transaction(i, f) for i, f in enumerate(d.transactions, 1))
    return out


def _fix(i: int, f: Fix) -> str:
    basis = "the statements' footprints" if f.transaction is None else "the server's figure"
    effect = ("not predicted (needs re-partitioning)" if f.main_per_s_after is None else
              f"{f.main_per_s_before:,.0f} &rarr; <b>{f.main_per_s_after:,.0f}</b> main-lock-table acquisitions/s "
              f"({basis})")
    sql = '<pre class="long">' + escape("\n".join(f.sql)) + "</pre>" if f.sql else ""
    return (f'<div class="item {"medium" if f.restart else "low"}"><div class="t">{i}. {escape(f.title)}'
            f"{' (restart)' if f.restart else ''}</div><div class=\"e\">{effect}</div>"
            f'<div class="e">{escape(f.detail)}</div>{sql}</div>')


def _fix_chart(d: Diagnosis) -> str:
    known = [f for f in d.fixes if f.main_per_s_after is not None]
    if not known or d.main_lock_table_per_s <= 0:
        return ""
    rows = [("now (the model: the statements' footprints)", d.main_per_s, SEVERITY_COLORS["high"])]
    if d.server.main_per_s is not None:
        rows.insert(0, ("now (the server, " + ("counted)" if d.server.counted else "estimate)"), d.server.main_per_s,
                        SEVERITY_COLORS["high"]))
    rows += [(f"{i}. {f.title}" + (" (model)" if f.transaction is None else " (server)"),
              float(f.main_per_s_after or 0.0), SEVERITY_COLORS["after"])
             for i, f in enumerate(d.fixes, 1) if f.main_per_s_after is not None]
    return svg_hbars(rows, title="Expected main-lock-table acquisitions/s after each fix", unit="acquisitions/s",
                     label_chars=60)


def _cards(d: Diagnosis) -> str:
    """The headline cards: the sampled LockManager share (with its interval), AAS, main-lock-table rates, the
    statements measured and the forecast LockManager share (or why it is not forecast)."""
    w = d.watch
    after = d.fixes[0].main_per_s_after if d.fixes else None
    items = [(f"{100 * d.lockmanager_share:.0f}%", "of active-session samples wait on LWLock:LockManager"
              + sampled_error(w.lockmanager_interval), d.status == "contention"),
             (f"{d.lockmanager_aas:.1f} / {w.aas:.1f}", "sessions waiting on LockManager / active (AAS)", False),
             (f"{d.main_lock_table_per_s:,.0f}", "main-lock-table acquisitions/s now"
              + (f" (the server: {d.server.describe()})" if d.server.main_per_s is not None else " (the model)"),
              d.main_lock_table_per_s > 0)]
    if d.server.main_per_s is not None:
        items.append((f"{d.main_per_s:,.0f}", "acquisitions/s in the model (each statement's footprint alone)",
                      False))
    if after is not None:
        items.append((f"{after:,.0f}", "acquisitions/s after the first fix", False))
    items.append((str(d.statements_measured), "statements measured", False))
    if d.forecast_before is not None and d.anchor is not None and not d.anchor.lockmanager_reproduced:
        items.append(("not forecast", f"LockManager share at {d.clients} connections: the model gives "
                      f"{100 * d.anchor.model_lockmanager_share:.0f}% where {100 * d.lockmanager_share:.0f}% is "
                      "sampled now" + (" (the sample too short to tell)" if d.anchor.sampled_too_uncertain else ""),
                      False))
    elif d.forecast_before is not None:
        fc = f"{100 * d.forecast_before.lockmanager_share:.0f}%"
        if d.forecast_after is not None:
            fc += f" → {100 * d.forecast_after.lockmanager_share:.0f}%"
        items.append((fc, f"forecast LockManager share at {d.clients} connections (now → fixed)", False))
    return cards(items)


def diagnose_html(d: Diagnosis) -> str:
    """The complete HTML document for a diagnosis."""
    w = d.watch
    body = [f'<p class="muted">PostgreSQL {escape(d.server_version)}, database <code>{escape(d.database)}</code>; '
            f"fast path {escape(d.capacity.describe())} per backend (max_locks_per_transaction "
            f"{d.capacity.max_locks_per_transaction}); sampled {w.duration_s:.1f} s at {w.achieved_hz:.1f} Hz "
            f"({w.ticks:,} samples, {w.late_ticks:,} late).</p>"]
    headline = f"{escape(d.model_check.headline)}<br>" if d.model_check is not None else ""
    body.append(f'<div class="verdict {escape(d.status)}">{headline}{escape(d.verdict)}</div>')
    if d.coverage is not None:
        body.append(f"<p>{escape(d.coverage.text())}</p>")
    body.append(_cards(d))
    body.extend(f"<p>{escape(line)}</p>" for line in forecast_lines(d))
    body.append("<h2>Summary</h2>")
    body.append(_waits(d))
    audit = d.audit
    if audit is not None and audit.workload.available:
        highlight = frozenset(c.query_id for c in d.culprits if c.query_id is not None)
        body.append(statements_chart(audit.workload.statements, highlight=highlight))
    body.append(_partitions(d))
    if audit is not None:
        body.append(tables_chart(audit, limit=12))
    body.extend(_transactions(d))
    body.append(f"<h2>Statements that waited on LockManager ({len(d.culprits)})</h2>")
    if d.culprits:
        body.extend(_culprit(c, w.lockmanager_samples) for c in d.culprits)
    else:
        body.append('<p class="ok">No statement waited on LWLock:LockManager.</p>')
    body.append(f"<h2>Fixes, ranked ({len(d.fixes)})</h2>")
    if d.fixes:
        body.append(_fix_chart(d))
        body.extend(_fix(i, f) for i, f in enumerate(d.fixes, 1))
    else:
        body.append('<p class="muted">Nothing to fix.</p>' if d.status == "healthy" else
                    '<p class="muted">The audit has no fix for these spills; see the findings.</p>')
    if d.spilled_relations:
        body.append(f"<h2>Relations in the main lock table ({len(d.spilled_relations)})</h2>")
        body.append(table(("relation", "role", "lock partition", "acquisitions/s", "statements"),
                          [(r.relation, r.role, r.partition, f"{r.acquisitions_per_s:,.0f}", r.statements)
                           for r in d.spilled_relations], left=2))
    if audit is not None:
        body.append("<h2>Audit findings</h2>")
        body.append(findings_html(audit.findings))
    if d.notes:
        body.append("<h2>Notes</h2><ul>" + "".join(f"<li>{escape(n)}</li>" for n in d.notes) + "</ul>")
    return page(f"lockscope diagnose: {d.database}", body)
