"""Rich renderables for ``lockscope diagnose`` (nothing here prints): waits, culprits, spills, fixes, verdict."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from ..diagnose.engine import Culprit, Diagnosis, forecast_lines
from ..diagnose.transactions import BASES, TransactionFinding
from ..lockpart import NUM_LOCK_PARTITIONS
from ..watch.aas import sampled_error

__all__ = ["main_table_line", "render_diagnosis", "short_text"]

_VERDICT_STYLE = {"contention": "bold white on red", "risk": "bold yellow", "healthy": "bold green"}


def short_text(text: str, limit: int = 100) -> str:
    """The text on one line, at most ``limit`` characters."""
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 3] + "..."


def main_table_line(d: Diagnosis) -> str:
    """``main-lock-table acquisitions 67,569/s from the server (estimate: pg_locks snapshots x 3,975 transactions/s,
    95 % 61,000-70,100/s), 0/s in the model (each statement's footprint alone)``; ``counted:
    pg_stat_lock.fastpath_exceeded`` on 19."""
    s = d.server
    model = f"{d.main_per_s:,.0f}/s in the model (each statement's footprint alone)"
    if s.main_per_s is None:
        return f"main-lock-table acquisitions {model}; the server gave no figure"
    if s.basis == BASES[0]:
        source = "counted: pg_stat_lock.fastpath_exceeded"
    else:
        source = "estimate: pg_locks snapshots" + (f" x {s.transactions_per_s:,.0f} transactions/s"
                                                   if s.transactions_per_s is not None else "")
        if s.low_per_s is not None and s.high_per_s is not None:
            source += f", 95 % {s.low_per_s:,.0f}-{s.high_per_s:,.0f}/s"
        if s.completed:
            source += f"; {s.completed} statement(s) seen part-way through planning completed by their footprints"
    return f"main-lock-table acquisitions {s.main_per_s:,.0f}/s from the server ({source}),\n{model}"


def _header(d: Diagnosis) -> Panel:
    w = d.watch
    lines = Text()
    lines.append(f"PostgreSQL {d.server_version}", style="bold")
    lines.append(f"  database {d.database}; fast path {d.capacity.describe()} per backend "
                 f"(max_locks_per_transaction {d.capacity.max_locks_per_transaction})\n")
    lines.append(f"sampled {w.duration_s:.1f} s: {w.ticks:,} samples at {w.achieved_hz:.1f} Hz, "
                 f"{w.aas:.2f} average active sessions, ")
    lines.append(f"{100 * d.lockmanager_share:.1f}% waiting on LWLock:LockManager"
                 f"{sampled_error(d.watch.lockmanager_interval)}",
                 style="bold red" if d.status == "contention" else "")
    lines.append(f"\n{d.statements_measured} statements measured; {main_table_line(d)}")
    for line in forecast_lines(d):
        lines.append("\n" + line)
    return Panel(lines, title="lockscope diagnose", title_align="left")



def _waits(d: Diagnosis) -> Table:
    t = Table(title="Average active sessions by wait event", title_justify="left", header_style="bold")
    t.add_column("wait event")
    t.add_column("AAS", justify="right")
    t.add_column("share", justify="right")
    total = d.watch.active_session_samples
    for label, aas in list(d.aas_by_wait.items())[:8]:
        n = d.watch.by_wait.get(label, 0)
        t.add_row(label, f"{aas:.2f}", f"{100 * n / total:.1f}%" if total else "-",
                  style="red" if label == "LWLock:LockManager" else "")
    return t


def _phases(c: Culprit) -> str:
    return "; ".join(f"{p.phase} {p.spilled}/{p.locks}" + (" (derived)" if not p.measured else "")
                     for p in c.phases) or "-"


def _culprits(d: Diagnosis) -> Table:
    t = Table(title="Statements carrying the LockManager waits", title_justify="left", header_style="bold",
              show_lines=True)
    t.add_column("query_id", no_wrap=True)
    t.add_column("LockManager samples", justify="right")
    t.add_column("calls/s", justify="right")
    t.add_column("spilled/call", justify="right")
    t.add_column("main-lock-table/s", justify="right")
    t.add_column("phases: spilled/locks")
    t.add_column("lock partitions")
    t.add_column("statement", ratio=1)
    for c in d.culprits:
        parts = sorted({lk.partition for lk in c.spilled})
        t.add_row(str(c.query_id), f"{c.lockmanager_samples:,} ({100 * c.lockmanager_fraction:.0f}%)",
                  "-" if c.calls_per_s is None else f"{c.calls_per_s:,.1f}",
                  (f"{c.spilled_per_call:.3g}" + (f"\n{c.phase_split}" if c.phase_split else ""))
                  if c.shape is not None else "-",
                  f"{c.main_per_s:,.0f}" if c.shape is not None else "-", _phases(c),
                  f"{len(parts)} of {NUM_LOCK_PARTITIONS}" if parts else "-",
                  short_text(c.text or "(text unknown)") + (f"\n[not measured: {c.reason}]" if c.reason else ""))
    return t


def _statements(f: TransactionFinding, limit: int = 6) -> str:
    shape = f.shape
    lines = [f"{i}. " + short_text(t or "(text unknown)", 70) + ("" if sp is None else f"  [alone: {sp:g}]")
             for i, (t, sp) in enumerate(zip(shape.texts, f.statement_spills, strict=True), 1)]
    if len(lines) > limit:
        lines = [*lines[:limit - 1], f"... {len(lines) - limit + 1} more", lines[-1]]
    return "\n".join(lines)


def _transactions(d: Diagnosis) -> Table:
    t = Table(title="Transactions holding main-table locks (pg_locks snapshots)", title_justify="left",
              header_style="bold", show_lines=True)
    t.add_column("#", justify="right")
    t.add_column("statements (main-table locks of each alone: the model)", ratio=1)
    t.add_column("held per transaction: locks / main table", justify="right")
    t.add_column("transactions/s", justify="right")
    t.add_column("main-lock-table/s", justify="right")
    t.add_column("why more than its statements alone", ratio=1)
    for i, f in enumerate(d.transactions, 1):
        shape = f.shape
        t.add_row(str(i), _statements(f), f"{shape.held_locks_per_txn:.0f} / {shape.held_main_per_txn:.0f}",
                  f"{shape.transactions_per_s:,.0f}\n({shape.tps_basis})", f"{shape.main_per_s:,.0f}",
                  f.cause or "-")
    return t


def _spilled(d: Diagnosis, limit: int = 12) -> Table:
    t = Table(title=f"Relations they spill ({len(d.spilled_relations)})", title_justify="left", header_style="bold")
    t.add_column("relation")
    t.add_column("role")
    t.add_column("partition", justify="right")
    t.add_column("acquisitions/s", justify="right")
    for r in d.spilled_relations[:limit]:
        t.add_row(r.relation, r.role, str(r.partition), f"{r.acquisitions_per_s:,.0f}")
    if len(d.spilled_relations) > limit:
        t.add_row(f"... {len(d.spilled_relations) - limit} more (--json or --html for all)", "", "", "")
    return t


def _fixes(d: Diagnosis) -> Table:
    t = Table(title="Fixes, ranked", title_justify="left", header_style="bold", show_lines=True)
    t.add_column("#", justify="right")
    t.add_column("fix")
    t.add_column("main-lock-table acquisitions/s", justify="right")
    t.add_column("why", ratio=1)
    for i, f in enumerate(d.fixes, 1):
        effect = (f"{f.main_per_s_before:,.0f} -> {f.main_per_s_after:,.0f}" if f.main_per_s_after is not None
                  else "not predicted") + (" (model)" if f.transaction is None else " (server)")
        t.add_row(str(i), f.title + (" (restart)" if f.restart else ""), effect, f.detail)
    return t


def render_diagnosis(d: Diagnosis) -> Group:
    """Header, waits, culprits, spilled relations, fixes, notes, and the verdict line last."""
    parts: list[RenderableType] = [_header(d), _waits(d)]
    if d.culprits:
        parts.append(_culprits(d))
    if d.transactions:
        parts.append(_transactions(d))
    if d.spilled_relations:
        parts.append(_spilled(d))
    if d.fixes:
        parts.append(_fixes(d))
    if d.coverage is not None:
        parts.append(Text(d.coverage.text(), style="bold" if d.coverage.uncovered else ""))
    for note in d.notes:
        parts.append(Text(f"note: {note}", style="dim"))
    if d.model_check is not None:  # the verdict's first line, not a note
        parts.append(Text(d.model_check.headline, style="bold red"))
    parts.append(Text(d.verdict, style=_VERDICT_STYLE.get(d.status, "bold")))
    return Group(*parts)
