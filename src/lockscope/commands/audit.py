"""``lockscope audit``: rank a database's tables and statements by lock-manager risk, and say what to change."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from rich.console import Console

from ..errors import EXIT_SPILL, BadInputError
from ._common import add_parser, positive_int

#: ``--fail-on`` levels; the exit code when findings at or above the level exist is ``errors.EXIT_SPILL`` (6).
FAIL_ON_LEVELS = ("low", "medium", "high")


def _non_negative(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative: {text}")
    return value


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``audit`` sub-command."""
    p = add_parser(
        sub, "audit",
        help="rank a database's tables and statements by lock-manager risk, and say exactly what to change",
        description="Read a database's catalog and pg_stat_statements (read-only, one connection) and rank tables "
                    "and statements by fast-path overflow: planner-lock footprint per table against the capacity "
                    "model with the real OIDs, each top statement's measured footprint (EXPLAIN only) and its "
                    "main-lock-table acquisitions per second, shared lock table risk, droppable indexes, "
                    "max_locks_per_transaction, plan_cache_mode and partitioning advice. Without --dsn, a demo "
                    "database on an embedded PostgreSQL 18 is audited while a short workload runs on it.",
    )
    p.add_argument("--dsn", help="libpq conninfo or URI of the database to audit (default: the embedded demo)")
    p.add_argument("--interval", type=_non_negative, default=10.0, metavar="S",
                   help="seconds between the two pg_stat_statements snapshots for calls/s (default 10; 0 = rates "
                        "since the last pg_stat_statements reset)")
    p.add_argument("--top", type=positive_int, default=200, metavar="N",
                   help="statements audited, the top N by calls (default 200)")
    p.add_argument("--probe-rate", type=_non_negative, default=20.0, metavar="HZ",
                   help="EXPLAIN probes per second at most; each reads pg_locks once (default 20; 0 = unpaced)")
    p.add_argument("--unused-days", type=_non_negative, default=7.0, metavar="D",
                   help="statistics age in days from which idx_scan = 0 counts as unused (default 7; demo 0)")
    p.add_argument("--no-statements", action="store_true", help="skip pg_stat_statements (catalog only)")
    p.add_argument("--html", type=Path, metavar="FILE", help="write a self-contained HTML report")
    p.add_argument("--json", type=Path, metavar="FILE",
                   help="write the report as JSON (schema lockscope/audit/v1, docs/audit.md); - for stdout")
    p.add_argument("--sql", type=Path, metavar="FILE",
                   help="write the recommended changes as a reviewable SQL script (never run by lockscope)")
    p.add_argument("--fail-on", choices=FAIL_ON_LEVELS, metavar="LEVEL",
                   help=f"exit {EXIT_SPILL} when findings at LEVEL (low, medium, high) or above exist")
    p.add_argument("--limit", type=positive_int, default=15, metavar="N",
                   help="rows per table in the terminal summary (default 15)")
    p.add_argument("--lock-timeout", type=positive_int, default=200, metavar="MS",
                   help="lock_timeout of each probe transaction in ms (default 200)")
    p.add_argument("--statement-timeout", type=positive_int, default=5000, metavar="MS",
                   help="statement_timeout of each probe and catalog query in ms (default 5000)")
    p.add_argument("--pg-bin", metavar="DIR", type=Path,
                   help="demo only: bin directory of a PostgreSQL 13+ for the scratch server (default: embedded 18)")
    p.add_argument("--mlpt", metavar="N", type=positive_int, default=16,
                   help="demo only: max_locks_per_transaction of the scratch server (default 16: one group of 16 "
                        "fast-path slots, the PostgreSQL 13-17 capacity)")
    p.set_defaults(handler=run)


def _write(path: Path, text: str, console: Console, what: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise BadInputError(f"cannot write {what} to {path}: {exc.strerror}") from None
    console.print(f"wrote {path}")


def run(args: argparse.Namespace, console: Console) -> int:
    """Audit (a user's database or the demo), render, write the requested files, return the exit code."""
    from ..audit import AuditOptions, run_audit
    from ..report.audit_html import audit_html
    from ..report.audit_json import audit_to_dict
    from ..report.audit_sql import audit_sql_script
    from ..report.audit_terminal import render_audit

    if args.dsn is not None and (args.pg_bin is not None or args.mlpt != 16):
        raise BadInputError("--pg-bin and --mlpt apply to the embedded demo only, not to --dsn")
    if args.mlpt < 10:
        raise BadInputError("--mlpt: max_locks_per_transaction is at least 10")
    for path in (args.html, args.sql, args.json):
        if path is not None and str(path) != "-" and not path.resolve().parent.is_dir():
            raise BadInputError(f"cannot write {path}: no such directory")
    demo = args.dsn is None
    options = AuditOptions(
        interval_s=args.interval, top_n=args.top, probe_rate_hz=args.probe_rate,
        unused_min_age_s=(0.0 if demo and args.unused_days == 7.0 else args.unused_days * 86400),
        statements=not args.no_statements,
    )
    json_to_stdout = args.json is not None and str(args.json) == "-"
    status_console = Console(stderr=True) if json_to_stdout else console
    with status_console.status("lockscope audit: connecting ...") as status:
        def progress(msg: str) -> None:
            status.update(f"lockscope audit: {msg} ...")

        if demo:
            report = _run_demo(args, options, progress)
        else:
            from ..db import connect

            with connect(args.dsn, lock_timeout_ms=args.lock_timeout,
                         statement_timeout_ms=args.statement_timeout) as session:
                report = run_audit(session, options, progress=progress)
    if json_to_stdout:
        console.print_json(json.dumps(audit_to_dict(report), default=str))
    else:
        console.print(render_audit(report, limit=args.limit))
        if args.json is not None:
            _write(args.json, json.dumps(audit_to_dict(report), indent=2, default=str), console, "JSON")
    if args.html is not None:
        _write(args.html, audit_html(report), status_console, "HTML")
    if args.sql is not None:
        _write(args.sql, audit_sql_script(report), status_console, "SQL")
    if args.fail_on is not None and report.at_or_above(args.fail_on):
        return EXIT_SPILL
    return 0


def _run_demo(args: argparse.Namespace, options: object, progress: object) -> object:
    from ..audit import run_audit
    from ..audit.demo import DemoWorkload, create_demo_database
    from ..db import connect
    from ..server import ScratchServer, ScratchSettings

    progress("starting the embedded PostgreSQL")  # type: ignore[operator]
    with ScratchServer(args.pg_bin, ScratchSettings(max_locks_per_transaction=args.mlpt)) as server:
        progress("creating the demo database")  # type: ignore[operator]
        create_demo_database(server)
        workload = DemoWorkload(server, duration_s=max(args.interval, 1.0))
        with connect(server.conninfo(), lock_timeout_ms=args.lock_timeout,
                     statement_timeout_ms=args.statement_timeout) as session:
            try:
                report = run_audit(session, options, progress=progress,  # type: ignore[arg-type]
                                   during_interval=workload.start, demo=True)
            finally:
                workload.join()
    if workload.error is not None:
        from dataclasses import replace

        report = replace(report, notes=(*report.notes, f"demo workload failed: {workload.error}"))
    return report
