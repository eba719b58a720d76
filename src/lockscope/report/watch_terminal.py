"""Rich renderables for ``lockscope watch`` (live view, final summary) and ``lockscope report`` (terminal)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from ..watch.aas import sampled_error
from ..watch.engine import WatchState, WatchSummary
from ..watch.recorded import RecordingSummary
from ..watch.sampler import LOCK_MANAGER
from ..watch.window import WAIT_CLASSES, LiveStats, StatementStat, wait_class
from ..workload.transactions import TransactionLoad

__all__ = ["CLASS_STYLES", "FASTPATH_EXCEEDED_CAVEAT", "LiveHeader", "render_live", "render_recording",
           "render_summary"]

#: Display style of each wait class.
CLASS_STYLES = {"CPU": "green", "LockManager": "bold red", "LWLock": "magenta", "Lock": "dark_orange",
                "IO": "blue", "IPC": "cyan", "Client": "grey50", "other": "white"}
_SPARK = " ▁▂▃▄▅▆▇█"
#: What PG 19's pg_stat_lock.fastpath_exceeded counts, shown wherever watch and report show it (lock.c
#: LockAcquireExtended counts every weak relation lock request whose fast-path group is full; pgstat.c flushes a
#: backend's counts at most once a second, and 10 s after it goes idle). docs/watch.md "Reading fastpath_exceeded".
FASTPATH_EXCEEDED_CAVEAT = ("lock requests that found their fast-path group full: the statements' spilled locks "
                            "plus the catalog locks of new sessions' cache builds, not only spilled locks; each "
                            "backend reports at most once a second, its last second 10 s after it goes idle")


@dataclass(frozen=True)
class LiveHeader:
    """What the live view says about the run itself.

    :ivar target: e.g. the redacted DSN, or the demo's description.
    :ivar hz: target rate (Hz).
    :ivar duration_s: planned duration (s) or None.
    :ivar record: recording path, or None.
    :ivar prometheus_url: metrics URL, or None.
    :ivar started_monotonic_s: when the watch started (time.monotonic()).
    """

    target: str
    hz: float
    duration_s: float | None
    record: str | None
    prometheus_url: str | None
    started_monotonic_s: float


def _clock(seconds: float) -> str:
    seconds = max(0, int(seconds))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}" if seconds >= 3600 else \
        f"{seconds // 60:02d}:{seconds % 60:02d}"


def _sparkline(values: Sequence[float | None], top: float) -> Text:
    text = Text()
    for v in values:
        if v is None:
            text.append("·", style="grey37")
        else:
            level = 0 if top <= 0 else min(len(_SPARK) - 1, round(v / top * (len(_SPARK) - 1)))
            text.append(_SPARK[level] if v > 0 else "▁", style="red" if level >= 4 else "yellow")
    return text


def _aas_bar(by_class: dict[str, float], width: int = 56) -> Text:
    total = sum(by_class.values())
    scale = max(16.0, total)  # chars per session: width / scale
    text = Text()
    used = 0
    for cls in WAIT_CLASSES:
        n = round(by_class.get(cls, 0.0) / scale * width)
        n = min(n, width - used)
        if n:
            text.append("█" * n, style=CLASS_STYLES[cls])
            used += n
    text.append("░" * (width - used), style="grey23")
    return text


def _statements_table(statements: Sequence[StatementStat], lm_total: int, title: str) -> Table:
    table = Table(title=title, title_justify="left", expand=False, show_edge=False, pad_edge=False)
    table.add_column("query_id", justify="right", no_wrap=True, min_width=20)
    table.add_column("LM samples", justify="right", no_wrap=True, min_width=10)
    table.add_column("% of LM", justify="right", no_wrap=True, min_width=7)
    table.add_column("statement", overflow="ellipsis", no_wrap=True, ratio=1, min_width=20)
    for st in statements:
        share = f"{100.0 * st.lockmanager_samples / lm_total:.0f}%" if lm_total else "-"
        text = " ".join((st.text or "(text not known yet)").split())
        table.add_row("-" if st.query_id is None else str(st.query_id), f"{st.lockmanager_samples:,}", share, text)
    return table


def render_live(state: WatchState, header: LiveHeader, *, now_wall_s: float | None = None) -> RenderableType:
    """The live view: status line, AAS bar by wait class, LockManager share over the last minute with a
    per-second sparkline, top wait events, top statements by LockManager samples, and the low-rate extras."""
    now_wall = time.time() if now_wall_s is None else now_wall_s
    stats = state.window.snapshot(now_wall, recent_s=5.0, top=5)
    elapsed = time.monotonic() - header.started_monotonic_s
    return Group(*_live_status(state, header, stats, elapsed), *_live_aas(stats), _live_lockmanager(stats),
                 *_live_waits(state, stats), *_live_extras(state, now_wall),
                 Text("Ctrl-C stops and prints a summary", style="grey50"))


def _live_status(state: WatchState, header: LiveHeader, stats: LiveStats, elapsed: float) -> list[RenderableType]:
    """The status line, where the samples go, and a lost connection."""
    parts: list[RenderableType] = []
    line = Text()
    line.append("lockscope watch ", style="bold")
    line.append(f"{header.target} · PostgreSQL {state.server_version or '?'} · ")
    line.append(f"{header.hz:g} Hz (achieved {stats.achieved_hz:.1f}) · ")
    line.append(_clock(elapsed) + (f" / {_clock(header.duration_s)}" if header.duration_s else "") + " · ")
    line.append(f"samples {stats.total_ticks:,} · late {stats.total_late_ticks:,} · gaps {len(state.gaps)}")
    parts.append(line)
    if header.record or header.prometheus_url:
        sinks = Text(style="grey62")
        if header.record:
            sinks.append(f"recording {header.record}  ")
        if header.prometheus_url:
            sinks.append(f"metrics {header.prometheus_url}")
        parts.append(sinks)
    if not state.connected:
        warn = Text(style="bold yellow")
        warn.append("connection lost; reconnecting")
        if state.reconnect_attempts:
            warn.append(f" (attempt {state.reconnect_attempts + 1})")
        if state.last_error:
            warn.append(f": {state.last_error}", style="yellow")
        parts.append(warn)
    return parts


def _live_aas(stats: LiveStats) -> list[RenderableType]:
    """The recent AAS bar by wait class and its legend."""
    recent_total = sum(stats.recent_aas_by_class.values())
    bar = Text(f"AAS last {stats.recent_s:g} s {recent_total:5.1f}  ")
    bar.append_text(_aas_bar(stats.recent_aas_by_class))
    legend = Text("  ")
    for cls in WAIT_CLASSES:
        value = stats.recent_aas_by_class.get(cls)
        if value:
            legend.append("■ ", style=CLASS_STYLES[cls])
            legend.append(f"{cls} {value:.1f}  ")
    return [bar, legend]


def _live_lockmanager(stats: LiveStats) -> Text:
    """The LockManager share of the window with its per-second sparkline."""
    lm = Text()
    share = stats.lockmanager_share
    lm.append("LWLock:LockManager ", style="bold")
    lm.append(f"{100 * share:.0f}%", style="bold red" if share >= 0.2 else ("yellow" if share > 0.05 else "green"))
    lm.append(f" of active-session samples, last {stats.window_s:.0f} s (AAS {stats.lockmanager_aas:.1f})  ")
    series = stats.lockmanager_aas_per_s
    lm.append_text(_sparkline(series, max([v for v in series if v is not None] + [1.0])))
    return lm


def _live_waits(state: WatchState, stats: LiveStats) -> list[RenderableType]:
    """The top wait events and the top statements by LockManager samples."""
    parts: list[RenderableType] = []
    waits = Table(title=f"wait events, last {stats.window_s:.0f} s", title_justify="left", show_edge=False,
                  pad_edge=False)
    waits.add_column("wait event")
    waits.add_column("AAS", justify="right")
    waits.add_column("share", justify="right")
    aas_total = stats.aas
    for label, value in sorted(stats.aas_by_wait.items(), key=lambda kv: -kv[1])[:6]:
        style = CLASS_STYLES[wait_class(label)]
        waits.add_row(Text(label, style=style), f"{value:.2f}", f"{100 * value / aas_total:.0f}%" if aas_total else "-")
    statements = _statements_table(stats.top_statements, stats.lockmanager_samples,
                                   f"top statements by LockManager samples, last {stats.window_s:.0f} s")
    parts.append(Group(waits, statements) if stats.top_statements else waits)
    if not stats.top_statements and stats.lockmanager_samples and state.compute_query_id in ("off", None):
        parts.append(Text("(no query_id: compute_query_id is off or the server is PostgreSQL 13)", style="grey62"))
    return parts


def _live_extras(state: WatchState, now_wall: float) -> list[RenderableType]:
    """The low-rate extras, when present: the last pg_locks snapshot, blocked sessions, pg_stat_lock."""
    parts: list[RenderableType] = []
    if state.locks is not None:
        snap = state.locks
        locks = Text()
        locks.append("pg_locks ", style="bold")
        locks.append(f"{now_wall - snap.wall_s:.0f} s ago: {len(snap.backends)} backends, "
                     f"{snap.relation_locks:,} relation locks, ")
        locks.append(f"{snap.main_table_locks:,} in the main lock table", style="red" if snap.main_table_locks else "")
        top = [b for b in snap.backends[:3] if b.relation_locks]
        if top:
            locks.append("; most: " + ", ".join(
                f"pid {b.pid} {b.relation_locks} ({b.main_table_locks} main)" for b in top))
        parts.append(locks)
    if state.blocking and state.blocking_wall_s and now_wall - state.blocking_wall_s < 10:
        blocked = Text("blocked (pg_blocking_pids): ", style="bold dark_orange")
        blocked.append(", ".join(f"pid {pid} by {list(by)}" for pid, by in list(state.blocking.items())[:5]))
        parts.append(blocked)
    if state.transactions is not None:
        parts.append(_held_line(state.transactions))
    if state.fastpath_exceeded_per_s is not None:
        fp = Text(f"pg_stat_lock.fastpath_exceeded {state.fastpath_exceeded_per_s:,.0f}/s", style="bold")
        fp.append(f", {sum(state.fastpath_exceeded_total.values()):,} since start", style="bold")
        fp.append(f" ({FASTPATH_EXCEEDED_CAVEAT})", style="grey62")
        parts.append(fp)
    return parts


def _held_line(load: TransactionLoad) -> Text:
    """``main-lock-table acquisitions held 67,569/s: 17 per transaction x 3,975 transactions/s (pg_locks snapshots
    of the last 60 s)``, the top transaction's first statement after it."""
    line = Text("main-lock-table acquisitions (held) ", style="bold")
    line.append(f"{load.held_main_per_s:,.0f}/s", style="red" if load.held_main_per_s else "")
    top = next((s for s in load.shapes if s.held_main_per_txn > 0), None)
    if top is not None:
        line.append(f": {top.held_main_per_txn:.0f} per transaction of {len(top.statements)} statement"
                    f"{'s' if len(top.statements) > 1 else ''} x {top.transactions_per_s:,.0f}/s "
                    f"({' '.join(top.texts[0].split())[:60] if top.texts else '?'} ...)")
    tps = f", {load.transactions_per_s:,.0f} transactions/s" if load.transactions_per_s is not None else ""
    line.append(f" [{load.snapshots} pg_locks snapshots{tps}]", style="grey62")
    return line


def _waits_table(by_wait: dict[str, int], ticks: int, title: str, n: int = 8) -> Table:
    total = sum(by_wait.values())
    table = Table(title=title, title_justify="left")
    table.add_column("wait event", justify="left")
    table.add_column("samples", justify="right")
    table.add_column("AAS", justify="right")
    table.add_column("share", justify="right")
    for label, count in sorted(by_wait.items(), key=lambda kv: -kv[1])[:n]:
        table.add_row(Text(label, style=CLASS_STYLES[wait_class(label)]), f"{count:,}",
                      f"{count / ticks:.2f}" if ticks else "-", f"{100 * count / total:.1f}%" if total else "-")
    return table


def render_summary(summary: WatchSummary) -> RenderableType:
    """The summary printed when a watch ends."""
    facts = Table.grid(padding=(0, 2))
    facts.add_column(style="bold")
    facts.add_column()
    facts.add_row("watched", f"{summary.duration_s:.1f} s, PostgreSQL {summary.server_version or '?'} "
                             f"(ended: {summary.end_reason})")
    facts.add_row("samples", f"{summary.ticks:,} at {summary.achieved_hz:.1f} Hz (target {summary.hz:g}), "
                             f"{summary.late_ticks:,} late ticks, {summary.query_errors} failed queries")
    facts.add_row("AAS", f"{summary.aas:.2f} active sessions")
    share = summary.lockmanager_share
    facts.add_row(LOCK_MANAGER, Text(f"{100 * share:.1f}% of active-session samples"
                                     f"{sampled_error(summary.lockmanager_interval)}",
                                     style="bold red" if share >= 0.2 else ""))
    gaps = "none" if not summary.gaps else "; ".join(
        f"{(g.end_s - g.start_s):.1f} s ({g.reason})" if g.end_s else f"open ({g.reason})" for g in summary.gaps)
    facts.add_row("gaps", gaps)
    if summary.record_path is not None:
        facts.add_row("recording", f"{summary.record_path} ({summary.samples_recorded:,} samples)")
    if summary.fastpath_exceeded_per_s is not None:
        facts.add_row("fastpath_exceeded", f"{summary.fastpath_exceeded_per_s:,.0f}/s (pg_stat_lock, PostgreSQL 19: "
                                           "the server's count of main-lock-table acquisitions)")
    if summary.transactions is not None:
        facts.add_row("main-lock-table", _held_line(summary.transactions))
    parts: list[RenderableType] = [facts]
    if summary.by_wait:
        parts.append(_waits_table(summary.by_wait, summary.ticks, "wait events"))
    if summary.top_statements:
        parts.append(_statements_table(summary.top_statements, summary.by_wait.get(LOCK_MANAGER, 0),
                                       "top statements by LockManager samples"))
    return Group(*parts)


def render_recording(rec: RecordingSummary) -> RenderableType:
    """``lockscope report FILE`` without ``--html``: the recording's figures in the terminal."""
    facts = Table.grid(padding=(0, 2))
    facts.add_column(style="bold")
    facts.add_column()
    started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(rec.start_s)) if rec.ticks else "-"
    facts.add_row("recording", f"{rec.path} (lockscope {rec.meta.get('lockscope_version', '?')})")
    facts.add_row("server", f"PostgreSQL {rec.meta.get('server_version', '?')}, {rec.meta.get('dsn', '')}, "
                            f"max_locks_per_transaction {rec.meta.get('max_locks_per_transaction', '?')}")
    facts.add_row("period", f"{started}, {rec.duration_s:.1f} s")
    facts.add_row("samples", f"{rec.ticks:,} at {rec.achieved_hz:.1f} Hz (target {rec.hz:g}), "
                             f"{rec.late_ticks:,} late ticks")
    facts.add_row("AAS", f"{rec.aas:.2f} active sessions")
    facts.add_row(LOCK_MANAGER, f"{100 * rec.lockmanager_share_total:.1f}% of active-session samples"
                                f"{sampled_error(rec.lockmanager_interval)}")
    facts.add_row("gaps", "none" if not rec.gaps else "; ".join(
        f"{g.duration_s:.1f} s ({g.reason})" if g.duration_s is not None else f"open ({g.reason})"
        for g in rec.gaps))
    if rec.locks:
        facts.add_row("pg_locks", f"{len(rec.locks)} snapshots, max {max(m for _, _, m in rec.locks):,} "
                                  "main-table relation locks")
    if rec.fastpath_exceeded:
        peak = max(v for _, v in rec.fastpath_exceeded)
        facts.add_row("fastpath_exceeded", Text.assemble(
            f"{rec.fastpath_exceeded_total:,} in the recording, peak {peak:,.0f}/s (pg_stat_lock, PostgreSQL 19) ",
            (f"({FASTPATH_EXCEEDED_CAVEAT})", "grey62")))
    parts: list[RenderableType] = [facts]
    if rec.by_wait:
        parts.append(_waits_table(rec.by_wait, rec.ticks, "wait events"))
    if rec.top_statements:
        parts.append(_statements_table(rec.top_statements, rec.lockmanager_samples,
                                       "top statements by LockManager samples"))
    return Group(*parts)

