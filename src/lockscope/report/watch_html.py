"""``lockscope report FILE --html OUT``: one self-contained HTML file (inline CSS, inline SVG, no scripts) with
the AAS stacked-area chart by wait event over time, the LockManager timeline, and the top statements."""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..watch.aas import sampled_error
from ..watch.recorded import RecordingSummary
from ..watch.sampler import CPU, LOCK_MANAGER
from .html import escape, page, svg_figure, table
from .watch_terminal import FASTPATH_EXCEEDED_CAVEAT

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["recording_html"]

_COLORS = {CPU: "#4caf50", LOCK_MANAGER: "#d62728", "other": "#bbbbbb"}
_PALETTE = ["#9467bd", "#ff7f0e", "#1f77b4", "#17becf", "#8c564b", "#e377c2", "#bcbd22", "#7f7f7f"]


def _xaxis(ax: Axes, rec: RecordingSummary, *, label: bool = True) -> None:
    if label:
        ax.set_xlabel(f"seconds since {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(rec.start_s))}"
                      + (f" (buckets of {rec.bucket_s:g} s)" if rec.bucket_s > 1 else ""))
    ax.set_xlim(0, max(1.0, rec.duration_s))
    for gap in rec.gaps:
        end = gap.end_s if gap.end_s is not None else rec.end_s
        ax.axvspan(gap.start_s - rec.start_s, end - rec.start_s, color="#999999", alpha=0.25, lw=0)


def _use_agg() -> None:
    """Select matplotlib's non-interactive Agg backend (no display) before pyplot is imported."""
    import matplotlib

    matplotlib.use("Agg")


def _nan(values: Sequence[float | None]) -> list[float]:
    return [math.nan if v is None else v for v in values]


def aas_chart(rec: RecordingSummary) -> str:
    """Stacked-area chart of AAS by wait event over time (inline SVG); gaps shaded grey."""
    _use_agg()
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(11.0, 4.0))
    labels = list(rec.aas_series)
    # LockManager at the bottom, CPU next, the rest above
    labels.sort(key=lambda lb: (lb != LOCK_MANAGER, lb != CPU, lb == "other"))
    colors, k = [], 0
    for label in labels:
        if label in _COLORS:
            colors.append(_COLORS[label])
        else:
            colors.append(_PALETTE[k % len(_PALETTE)])
            k += 1
    xs = [x + rec.bucket_s / 2 for x in rec.bucket_starts_s]
    ys = [[0.0 if v is None else v for v in rec.aas_series[label]] for label in labels]
    if xs and ys:
        ax.stackplot(xs, ys, labels=labels, colors=colors, step=None)
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.set_ylabel("average active sessions")
    ax.set_title("AAS by wait event", fontsize=10)
    _xaxis(ax, rec)
    fig.tight_layout()
    return svg_figure(fig)


def lockmanager_chart(rec: RecordingSummary) -> str:
    """LWLock:LockManager timeline: waiting sessions (AAS) and share of active-session samples; main-table locks
    from pg_locks snapshots and PG19 fastpath_exceeded/s when recorded."""
    _use_agg()
    import matplotlib.pyplot as plt

    extra = bool(rec.locks) or bool(rec.fastpath_exceeded)
    fig, axes = plt.subplots(2 if extra else 1, 1, figsize=(11.0, 5.2 if extra else 3.4), sharex=True,
                             squeeze=False)
    ax = axes[0][0]
    xs = [x + rec.bucket_s / 2 for x in rec.bucket_starts_s]
    ax.plot(xs, _nan(rec.lockmanager_aas), color=_COLORS[LOCK_MANAGER], lw=1.2,
            label="sessions waiting on LWLock:LockManager (AAS)")
    ax.set_ylabel("sessions")
    ax2 = ax.twinx()
    ax2.plot(xs, [math.nan if v is None else 100 * v for v in rec.lockmanager_share], color="#555555", lw=0.8,
             ls="--", label="share of active-session samples (%)")
    ax2.set_ylabel("% of active-session samples")
    ax2.set_ylim(0, 100)
    lines = ax.get_legend_handles_labels()[0] + ax2.get_legend_handles_labels()[0]
    ax.legend(lines, [ln.get_label() for ln in lines], fontsize=8, loc="upper left")
    ax.set_title("LWLock:LockManager timeline", fontsize=10)
    ax.set_ylim(bottom=0)
    _xaxis(ax, rec, label=not extra)
    if extra:
        bx = axes[1][0]
        if rec.locks:
            bx.plot([t for t, _, _ in rec.locks], [m for _, _, m in rec.locks], color="#d62728", marker=".", lw=1,
                    label="relation locks in the main lock table (pg_locks)")
            bx.plot([t for t, _, _ in rec.locks], [r for _, r, _ in rec.locks], color="#1f77b4", marker=".", lw=1,
                    label="relation locks, all (pg_locks)")
        if rec.fastpath_exceeded:
            bx.plot([t for t, _ in rec.fastpath_exceeded], [v for _, v in rec.fastpath_exceeded], color="#ff7f0e",
                    lw=1, label="pg_stat_lock.fastpath_exceeded per second (PG19)")
        bx.set_ylabel("count")
        bx.set_ylim(bottom=0)
        bx.legend(fontsize=8, loc="upper left")
        _xaxis(bx, rec)
    fig.tight_layout()
    return svg_figure(fig)


def _locks_every(value: object) -> str:
    """``pg_locks snapshots every 5 s``, or ``no pg_locks snapshots`` when ``--locks-every`` was off (the
    recording's meta value is then missing, empty or ``None``)."""
    try:
        seconds = float(str(value))
    except ValueError:
        return "no pg_locks snapshots (--locks-every off)"
    if not seconds > 0:
        return "no pg_locks snapshots (--locks-every off)"
    return f"pg_locks snapshots every {seconds:g} s"


def recording_html(rec: RecordingSummary) -> str:
    """The complete HTML document for a recording."""
    meta = rec.meta
    started = time.strftime("%Y-%m-%d %H:%M:%S %Z", time.localtime(rec.start_s)) if rec.ticks else "-"
    facts = [
        ("server", f"PostgreSQL {meta.get('server_version', '?')} ({meta.get('dsn', '')}), "
                   f"max_locks_per_transaction {meta.get('max_locks_per_transaction', '?')}"),
        ("period", f"{started}, {rec.duration_s:.1f} s"),
        ("samples", f"{rec.ticks:,} at {rec.achieved_hz:.1f} Hz (target {rec.hz:g} Hz), "
                    f"{rec.late_ticks:,} late ticks"),
        ("average active sessions", f"{rec.aas:.2f}"),
        (LOCK_MANAGER, f"{100 * rec.lockmanager_share_total:.1f}% of active-session samples "
                       f"({rec.lockmanager_samples:,}){sampled_error(rec.lockmanager_interval)}"),
        ("top wait event", rec.top_wait_event or "none (CPU only)"),
        ("gaps", "none" if not rec.gaps else f"{len(rec.gaps)}: " + "; ".join(
            f"{g.duration_s:.1f} s ({g.reason})" if g.duration_s is not None else f"open ({g.reason})"
            for g in rec.gaps)),
        ("recorded by", f"lockscope {meta.get('lockscope_version', '?')}, " + _locks_every(meta.get("locks_every_s"))),
    ]
    if rec.fastpath_exceeded:
        facts.append(("pg_stat_lock.fastpath_exceeded",
                      f"{rec.fastpath_exceeded_total:,} in the recording, peak "
                      f"{max(v for _, v in rec.fastpath_exceeded):,.0f}/s (PostgreSQL 19): {FASTPATH_EXCEEDED_CAVEAT}"))
    body = [f'<p class="muted">{escape(rec.path.name)}</p>', table(["", ""], facts, left=2)]
    body.append("<h2>Average active sessions by wait event</h2>")
    body.append(aas_chart(rec) if rec.ticks else "<p>No samples.</p>")
    body.append("<h2>LWLock:LockManager timeline</h2>")
    body.append(lockmanager_chart(rec) if rec.ticks else "<p>No samples.</p>")
    body.append("<h2>Wait events</h2>")
    total = rec.active_session_samples
    body.append(table(["wait event", "samples", "AAS", "share"], [
        (label, f"{n:,}", f"{n / rec.ticks:.2f}", f"{100 * n / total:.1f}%")
        for label, n in list(rec.by_wait.items())[:15]], left=1))
    body.append("<h2>Top statements by LockManager samples</h2>")
    if rec.top_statements:
        lm = rec.lockmanager_samples
        body.append(table(["query_id", "LockManager samples", "% of LockManager", "samples (any wait)", "statement"], [
            ("-" if s.query_id is None else s.query_id, f"{s.lockmanager_samples:,}",
             f"{100 * s.lockmanager_samples / lm:.0f}%" if lm else "-", f"{s.samples:,}",
             " ".join((s.text or "(text unknown)").split())[:300])
            for s in rec.top_statements], left=1))
    else:
        body.append("<p>No session waited on LWLock:LockManager.</p>")
    if rec.gaps:
        body.append("<h2>Gaps</h2>")
        body.append(table(["from", "to", "seconds", "reason"], [
            (time.strftime("%H:%M:%S", time.localtime(g.start_s)),
             "-" if g.end_s is None else time.strftime("%H:%M:%S", time.localtime(g.end_s)),
             "-" if g.duration_s is None else f"{g.duration_s:.1f}", g.reason) for g in rec.gaps], left=1))
    return page("lockscope watch report", body)
