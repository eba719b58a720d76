"""``lockscope audit``: rank a database's tables and statements by lock-manager risk, and say what to change."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import EXIT_SPILL, BadInputError
from ..pgbin.cache import resolve_pg_bin
from ._common import (
    add_interval_option,
    add_json_option,
    add_parser,
    add_probe_rate_option,
    add_scratch_options,
    add_target_options,
    add_timeout_options,
    add_top_option,
    add_workload_option,
    check_mlpt_option,
    choose_command_target,
    interval_s,
    non_negative_float,
    positive_int,
)
from ._output import (
    check_writable,
    make_console,
    note,
    print_probe_cost,
    read_text,
    steps,
    target_line,
    write_json,
    write_text,
)

if TYPE_CHECKING:
    from rich.console import Console

    from ..audit import AuditOptions, AuditReport
    from ..db import ProbeCost

#: ``--fail-on`` levels; the exit code when findings at or above the level exist is ``errors.EXIT_SPILL`` (6).
FAIL_ON_LEVELS = ("low", "medium", "high")
#: max_locks_per_transaction of the demo server when --mlpt is not given: one group of 16 fast-path slots (the
#: PostgreSQL 13-17 capacity), so that the demo's findings show.
DEMO_MLPT = 16


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``audit`` sub-command."""
    p = add_parser(
        sub, "audit",
        help="rank a database's tables and statements by lock-manager risk, and say exactly what to change",
        description="Read a database's catalog and pg_stat_statements (read-only, one connection) and rank tables "
                    "and statements by fast-path overflow: planner-lock footprint per table against the capacity "
                    "model with the real OIDs, each top statement's measured footprint (EXPLAIN only) and its "
                    "main-lock-table acquisitions per second, shared lock table risk, droppable indexes, "
                    "max_locks_per_transaction, plan_cache_mode and partitioning advice. The server: --dsn (or "
                    "psql's -h -p -U -d), else the PG* environment, else libpq's defaults (the local socket), as "
                    "for psql; with --demo, a demo database on a scratch PostgreSQL 18, audited while a short "
                    "workload runs on it; with --scratch --setup schema.sql [--workload queries.sql], your schema "
                    "on a scratch server, the workload run there by pgbench, then audited, its transactions "
                    "measured execution by execution: a CI gate with no live server (lockscope never starts a "
                    "server otherwise). With pg_stat_statements alone (a server of yours, the demo), statements are "
                    "known and transactions are not: the report says that a transaction may hold more than its "
                    "statements, and what the pg_locks snapshots of the interval show of it. The first line names the "
                    "server; the last line on stderr gives the probes' pg_locks reads and their time "
                    "(docs/safety.md).",
        exit_codes=(0, 1, 2, 3, 4, EXIT_SPILL, 130, 143),
    )
    add_target_options(p, what="audit", scratch="a demo database on a scratch PostgreSQL with a short workload",
                       flag="--demo", also_scratch="your schema (--setup) and workload (--workload) on a scratch "
                                                   "PostgreSQL, audited there: no live server needed")
    p.add_argument("--setup", metavar="FILE", type=Path,
                   help="with --scratch: SQL script (your schema, e.g. pg_dump -s) run on the scratch server first")
    add_workload_option(p, use="with --scratch: run for real on the scratch server by pgbench (-M prepared, 2 "
                               "clients) during the --interval, so that pg_stat_statements has them with their "
                               "rates; then audited, and each transaction measured there execution by execution "
                               "(run for real and rolled back, and by EXPLAIN only)")
    add_interval_option(p)
    add_top_option(p)
    add_probe_rate_option(p)
    p.add_argument("--unused-days", type=non_negative_float, metavar="D",
                   help="statistics age in days from which idx_scan = 0 counts as unused (default 7; 0 on the "
                        "demo, whose statistics are seconds old)")
    p.add_argument("--no-statements", action="store_true", help="skip pg_stat_statements (catalog only)")
    p.add_argument("--html", type=Path, metavar="FILE", help="write a self-contained HTML report")
    add_json_option(p, schema="lockscope/audit/v1, docs/audit.md")
    p.add_argument("--sql", type=Path, metavar="FILE|-",
                   help="write the recommended changes as a reviewable SQL script (never run by lockscope); "
                        "- for standard output")
    p.add_argument("--fail-on", choices=FAIL_ON_LEVELS, metavar="LEVEL",
                   help=f"CI gate: exit {EXIT_SPILL} when findings at LEVEL (low, medium, high) or above exist")
    p.add_argument("--limit", type=positive_int, default=15, metavar="N",
                   help="rows per table in the terminal summary (default 15)")
    add_timeout_options(p, what="probe transaction and catalog query")
    add_scratch_options(p.add_argument_group("scratch server (with --demo or --scratch only)"),
                        mlpt_default=f"{DEMO_MLPT}: one group of 16 fast-path slots, so the demo's findings show")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace, console: Console) -> int:
    """Audit (a user's database or the demo), render, write the requested files, return the exit code."""
    from ..audit import AuditOptions, run_audit
    from ..report.audit_html import audit_html
    from ..report.audit_json import audit_to_dict
    from ..report.audit_sql import audit_sql_script
    from ..report.audit_terminal import render_audit

    stdout_outputs = _check_options(args)
    check_writable(args.html, args.sql, args.json)
    workload = read_text(args.workload, "workload file") if args.workload is not None else None
    if workload is not None and not workload.strip():
        raise BadInputError(f"--workload {args.workload}: the file is empty")
    setup = read_text(args.setup, "set-up script") if args.setup is not None else None
    empty = args.scratch_empty
    if empty:
        args.scratch = True
    choice = choose_command_target(args, scratch_flag="--scratch" if empty else "--demo",
                                   scratch_only={"--pg-bin": args.pg_bin, "--mlpt": args.mlpt})
    unused_days = args.unused_days if args.unused_days is not None else (0.0 if choice.scratch else 7.0)
    interval = max(interval_s(args), 1.0) if empty and workload else interval_s(args)
    options = AuditOptions(interval_s=interval, top_n=args.top, unused_min_age_s=unused_days * 86400,
                           statements=not args.no_statements)
    rate = choice.pg_locks_rate_hz(args.probe_rate)
    info = make_console(stderr=True) if stdout_outputs else console
    progress = make_console(stderr=True)
    with steps(progress, "lockscope audit") as step:
        if empty:
            report, cost = _run_scratch(args, options, step, info, rate, setup or "", workload)
        elif choice.scratch:
            report, cost = _run_demo(args, options, step, info, rate)
        else:
            from ..db import connect

            with connect(choice.dsn or "", lock_timeout_ms=args.lock_timeout,
                         statement_timeout_ms=args.statement_timeout, pg_locks_rate_hz=rate) as session:
                note(info, target_line("audit", session.endpoint.label(), choice.describe(0)))
                report = run_audit(session, options, progress=step)
                cost = session.probe_cost
    if not stdout_outputs:
        console.print(render_audit(report, limit=args.limit))
    if args.json is not None:
        write_json(args.json, {**audit_to_dict(report), "probe_cost": cost.to_dict()}, info, stdout=console)
    if args.html is not None:
        write_text(args.html, audit_html(report), info, "HTML")
    if args.sql is not None:
        write_text(args.sql, audit_sql_script(report), info, "SQL", stdout=console)
    print_probe_cost("audit", cost)
    if args.fail_on is not None and report.at_or_above(args.fail_on):
        note(make_console(stderr=True), f"lockscope audit: --fail-on {args.fail_on}: "
                                        f"{report.at_or_above(args.fail_on)} finding(s) at {args.fail_on} or above")
        return EXIT_SPILL
    return 0


def _check_options(args: argparse.Namespace) -> list[str]:
    """The options that contradict each other or do not apply; returns the outputs that go to standard output.

    :raises BadInputError: for the first problem found.
    """
    if args.scratch and args.scratch_empty:
        raise BadInputError("give --demo or --scratch, not both")
    if args.setup is not None and not args.scratch_empty:
        raise BadInputError("--setup applies to --scratch (your schema on a scratch server)")
    if args.workload is not None and not args.scratch_empty:
        raise BadInputError("--workload applies to --scratch (run on a scratch server, never on yours)")
    if args.scratch_empty and args.setup is None:
        raise BadInputError("--scratch needs --setup FILE (your schema); for the demo database use --demo")
    check_mlpt_option(args.mlpt)
    stdout_outputs = [name for name, path in (("--json", args.json), ("--sql", args.sql))
                      if path is not None and str(path) == "-"]
    if len(stdout_outputs) > 1:
        raise BadInputError("only one of --json and --sql can be - (standard output)")
    return stdout_outputs


def _run_scratch(args: argparse.Namespace, options: AuditOptions, progress: Callable[[str], None],
                 info: Console, rate_hz: float, setup: str, workload: str | None) -> tuple[AuditReport, ProbeCost]:
    """``audit --scratch --setup FILE [--workload FILE]``: the schema on a scratch server; the workload (a pgbench
    script) run by pgbench there during the pg_stat_statements interval, as the demo's; then the audit, with the
    script's transactions measured there."""
    from ..audit import run_audit
    from ..audit.demo import DemoWorkload
    from ..audit.transactions import ScriptWorkload
    from ..db import connect, run_script
    from ..server import ScratchServer, ScratchSettings

    pg_bin = resolve_pg_bin(args.pg_bin) if args.pg_bin else None
    progress("starting a scratch PostgreSQL")
    with ScratchServer(pg_bin, ScratchSettings(max_locks_per_transaction=args.mlpt)) as server:
        progress("running the set-up script")
        run_script(server.conninfo(), setup)
        load = None
        if workload:
            run_script(server.conninfo(), "create extension if not exists pg_stat_statements; "
                                          "select pg_stat_statements_reset()")
            load = DemoWorkload(server, duration_s=options.interval_s, script=workload)
        with connect(server.conninfo(), lock_timeout_ms=args.lock_timeout,
                     statement_timeout_ms=args.statement_timeout, pg_locks_rate_hz=rate_hz) as session:
            note(info, target_line("audit", session.endpoint.label(),
                                   f"your schema on a scratch server started by lockscope, "
                                   f"max_locks_per_transaction {session.facts.max_locks_per_transaction}"))
            try:
                script = ScriptWorkload(workload, server.conninfo(), str(args.workload),
                                        args.statement_timeout) if workload else None
                report = run_audit(session, options if load else _no_statements(options), progress=progress,
                                   during_interval=load.start if load else None, script=script)
            finally:
                if load is not None:
                    load.join()
            cost = session.probe_cost
        if load is not None and load.error is not None:
            raise load.error
    return report, cost


def _no_statements(options: AuditOptions) -> AuditOptions:
    from dataclasses import replace

    return replace(options, statements=False)


def _run_demo(args: argparse.Namespace, options: AuditOptions, progress: Callable[[str], None],
              info: Console, rate_hz: float) -> tuple[AuditReport, ProbeCost]:
    from dataclasses import replace

    from ..audit import run_audit
    from ..audit.demo import DemoWorkload, create_demo_database
    from ..db import connect
    from ..server import ScratchServer, ScratchSettings

    mlpt = args.mlpt or DEMO_MLPT
    pg_bin = resolve_pg_bin(args.pg_bin) if args.pg_bin else None
    progress("starting a scratch PostgreSQL")
    with ScratchServer(pg_bin, ScratchSettings(max_locks_per_transaction=mlpt)) as server:
        progress("creating the demo database")
        create_demo_database(server)
        workload = DemoWorkload(server, duration_s=max(interval_s(args), 1.0))
        with connect(server.conninfo(), lock_timeout_ms=args.lock_timeout,
                     statement_timeout_ms=args.statement_timeout, pg_locks_rate_hz=rate_hz) as session:
            note(info, target_line("audit", session.endpoint.label(),
                                   f"demo database on a scratch server started by lockscope, "
                                   f"max_locks_per_transaction {mlpt}"))
            try:
                report = run_audit(session, options, progress=progress, during_interval=workload.start, demo=True)
            finally:
                workload.join()
            cost = session.probe_cost
    if workload.error is not None:
        report = replace(report, notes=(*report.notes, f"demo workload failed: {workload.error}"))
    return report, cost
