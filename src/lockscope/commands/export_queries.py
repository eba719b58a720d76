"""``lockscope export-queries``: lockscope's lock signals as metric definitions for postgres_exporter or pgwatch."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from ._common import FILE_ONLY_CODES, add_parser
from ._output import check_writable, make_console, write_text

if TYPE_CHECKING:
    from rich.console import Console

DESCRIPTION = (
    "Print ready metric definitions that postgres_exporter (custom queries file, --extend.query-path) or pgwatch "
    "(pgwatch 3 metrics YAML with a 'lockscope' preset) run on their own, with no lockscope process: main-lock-table "
    "relation locks per database and per backend from pg_locks, active sessions by wait event (the "
    "LWLock:LockManager AAS) from pg_stat_get_activity, the fast-path slots per backend, and PostgreSQL 19 "
    "pg_stat_lock.fastpath_exceeded. Reading pg_locks takes every backend's fast-path LWLock and all 16 "
    "lock-partition LWLocks while it copies the main lock table: its interval is 60 s (postgres_exporter "
    "cache_seconds, pgwatch preset); do not scrape it more often. Nothing connects to a server."
)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``export-queries`` sub-command."""
    from ..exporters import FORMATS

    p = add_parser(sub, "export-queries",
                   help="print lock metric definitions for postgres_exporter or pgwatch (no lockscope process)",
                   description=DESCRIPTION, exit_codes=FILE_ONLY_CODES)
    p.add_argument("--format", required=True, choices=FORMATS,
                   help="postgres_exporter: custom queries YAML; pgwatch: pgwatch 3 metrics YAML")
    p.add_argument("--output", "-o", type=Path, metavar="FILE|-", default=Path("-"),
                   help="write to FILE instead of standard output (-)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace, console: Console) -> int:
    """Render the definitions; YAML alone on stdout (or in FILE, with a note on stderr)."""
    from ..exporters import render

    check_writable(args.output)
    text = render(args.format)
    if str(args.output) == "-":
        text = text.rstrip("\n")  # the console ends what it prints with a newline
    write_text(args.output, text, make_console(stderr=True), "metric definitions", stdout=console)
    return 0
