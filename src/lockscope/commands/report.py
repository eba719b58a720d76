"""``lockscope report``: render a ``lockscope watch --record`` recording (terminal, or one HTML file)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._common import FILE_ONLY_CODES, add_json_option, add_parser
from ._output import check_writable, make_console, note, write_json, write_text

if TYPE_CHECKING:
    from rich.console import Console


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``report`` sub-command."""
    p = add_parser(
        sub, "report",
        help="render a lockscope watch recording: AAS by wait event, LockManager timeline, top statements",
        description="Read a recording made by `lockscope watch --record FILE` and print its figures; with --html, "
                    "write one self-contained HTML file (inline SVG charts, no scripts, no network): an AAS "
                    "stacked-area chart by wait event over time, the LWLock:LockManager timeline (with pg_locks "
                    "main-table lock counts and PG19 fastpath_exceeded when recorded), gaps, and the top "
                    "statements by LockManager samples. A recording still being written can be read.",
        exit_codes=FILE_ONLY_CODES,
    )
    p.add_argument("file", type=Path, metavar="FILE", help="the recording (SQLite file written by lockscope watch)")
    p.add_argument("--html", type=Path, metavar="FILE", help="write the HTML report to FILE")
    add_json_option(p, schema="lockscope/watch/v1, as lockscope watch --json")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace, console: Console) -> int:
    """Validate and summarise the recording; print it, or write the HTML."""
    from ..report.watch_html import recording_html
    from ..report.watch_terminal import render_recording
    from ..watch.recorded import load_summary

    check_writable(args.html, args.json)
    summary = load_summary(args.file)
    to_stdout = args.json is not None and str(args.json) == "-"
    info = make_console(stderr=True) if to_stdout else console
    if args.html is not None:
        write_text(args.html, recording_html(summary), info, "HTML")
        note(info, f"{summary.ticks:,} samples, {summary.duration_s:.0f} s, LWLock:LockManager "
                   f"{100 * summary.lockmanager_share_total:.1f}% of active-session samples")
    elif not to_stdout:
        console.print(render_recording(summary))
    if args.json is not None:
        from ..report.watch_json import watch_summary_to_dict

        server: dict[str, Any] = {k: summary.meta[k] for k in ("server_version", "database", "dsn")
                                  if k in summary.meta}
        write_json(args.json, watch_summary_to_dict(summary, source="recording", server=server), info,
                   stdout=console)
    return 0
