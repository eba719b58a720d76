"""``lockscope forecast``: the TPS ceiling a statement's or a workload's relation locks allow, and what binds it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rich.console import Console

from ..errors import BadInputError
from ..versions import SUPPORTED_MAJORS
from ._common import (
    add_json_option,
    add_parser,
    add_probe_rate_option,
    add_protocol_option,
    add_scratch_options,
    add_target_options,
    add_timeout_options,
    non_negative_float,
    positive_int,
)
from ._output import (
    check_writable,
    make_console,
    print_probe_cost,
    read_text,
    steps,
    target_line,
    write_json,
    write_text,
)

#: Scratch server max_locks_per_transaction: PostgreSQL's default (13-18); ``--mlpt`` is a what-if here.
SCRATCH_MLPT = 64


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``forecast`` sub-command."""
    p = add_parser(
        sub, "forecast",
        help="predicted TPS ceiling from lock partitions and cores, the binding resource, and what-ifs",
        description="Forecast the throughput a workload's relation locks allow: each main-table lock's lock "
                    "partition (0..15, the server's own hash), locks per partition per transaction, a queueing "
                    "model of the cores and the 16 lock-partition LWLocks (docs/forecast.md), the binding resource, "
                    "partition utilisation and the predicted LockManager share of active sessions. Input: one "
                    "statement (--statement, probed with EXPLAIN only), or the database's pg_stat_statements "
                    "workload (read-only, as lockscope audit reads it). The server: --dsn, else the PG* environment, "
                    "else libpq's defaults (the local socket), as for psql; --scratch starts a scratch PostgreSQL "
                    "18 instead (--statement only; --setup creates its tables). "
                    "What-ifs (--drop-index, --mlpt, --plan-cache-mode, --assume-version) are forecast beside the "
                    "measured state. The first line names the server.",
        exit_codes=(0, 1, 2, 3, 4, 130, 143),
    )
    p.add_argument("--statement", metavar="SQL",
                   help="forecast this one statement ($1..$n allowed; '-' reads stdin) instead of the workload")
    p.add_argument("-f", "--file", type=Path, metavar="FILE", help="read the statement from a file")
    add_target_options(p, what="forecast", scratch="a scratch PostgreSQL (with --statement; see --setup)")
    p.add_argument("--setup", metavar="FILE", type=Path,
                   help="SQL script run on the scratch server before probing (with --scratch only)")
    add_scratch_options(p, mlpt_default="", mlpt=False)
    p.add_argument("--param", action="append", default=[], metavar="VALUE",
                   help="value for $1, $2, ... of --statement in order (repeat the option)")
    p.add_argument("--param-type", action="append", default=[], metavar="TYPE",
                   help="declared type of $1, $2, ... for PREPARE (prepared protocol)")
    add_protocol_option(p, default="simple",
                        meaning="how --statement is sent, as pgbench -M: simple and extended plan every execution; "
                                "prepared probes executions 1..7 through the plan cache in the server's "
                                "plan_cache_mode and forecasts the last")
    p.add_argument("--clients", type=positive_int, metavar="N",
                   help="concurrent clients of the model (default: the workload's connections that ran statements "
                        "during --interval, or 16 for --statement)")
    p.add_argument("--exec-cost", type=non_negative_float, metavar="MS",
                   help="--statement's execution time in ms (default: pg_stat_statements when it has run on the "
                        "server, timed executions on a --scratch server, else unknown and said so)")
    p.add_argument("--cores", type=positive_int, metavar="N",
                   help="cores of the model (default: this machine's, os.cpu_count())")
    p.add_argument("--calibration", type=Path, metavar="FILE",
                   help="costs measured by 'lockscope lab ceiling' (calibration.json; default: the documented "
                        "defaults, docs/forecast.md)")
    what = p.add_argument_group("what-ifs (forecast beside the measured state)")
    what.add_argument("--drop-index", action="append", default=[], metavar="NAME",
                      help="remove this index's locks (repeat the option)")
    what.add_argument("--mlpt", type=positive_int, metavar="N",
                      help="another max_locks_per_transaction: the capacity model predicts the fast-path flags "
                           "of the measured locks in order (the scratch server itself runs with "
                           f"{SCRATCH_MLPT})")
    what.add_argument("--plan-cache-mode", choices=("auto", "force_custom_plan", "force_generic_plan"),
                      help="another plan_cache_mode: --statement is probed again with the prepared protocol in "
                           "this mode; a workload statement takes its custom or cached generic plan's locks")
    what.add_argument("--assume-version", type=int, metavar="MAJOR",
                      help=f"another major version ({SUPPORTED_MAJORS[0]}..{SUPPORTED_MAJORS[-1]}) with the same "
                           "relations")
    wl = p.add_argument_group("workload (without --statement)")
    wl.add_argument("--interval", type=non_negative_float, default=10.0, metavar="S",
                    help="seconds between the two pg_stat_statements snapshots for calls/s (default 10; 0 = rates "
                         "since the last reset)")
    wl.add_argument("--top", type=positive_int, default=50, metavar="N",
                    help="statements forecast, the top N by calls (default 50)")
    add_probe_rate_option(p)
    add_timeout_options(p)
    add_json_option(p, schema="lockscope/forecast/v1, docs/forecast.md")
    p.add_argument("--html", type=Path, metavar="FILE",
                   help="write a self-contained HTML report with the predicted TPS vs clients plot")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="list every main-table lock with its relation, mode and lock partition")
    p.set_defaults(handler=run)


def _statement(args: argparse.Namespace) -> str | None:
    if args.file is not None:
        if args.statement is not None:
            raise BadInputError("give the statement either with --statement or with --file, not both")
        return read_text(args.file, "statement file")
    if args.statement == "-":
        return sys.stdin.read()
    return None if args.statement is None else str(args.statement)


def run(args: argparse.Namespace, console: Console) -> int:
    """Probe, forecast, render (table, JSON, HTML); return the exit code."""
    from ..forecast.calibration import DEFAULT_CALIBRATION, load_calibration
    from ..forecast.engine import WhatIf, default_cores, forecast_statement, forecast_workload
    from ..lab.install import resolve_pg_bin
    from ..report.forecast_html import forecast_html
    from ..report.forecast_json import forecast_to_dict
    from ..report.forecast_terminal import render_forecast
    from ..server import ScratchSettings
    from ..statement import check_param_count, check_statement
    from ..target import choose_target, open_target

    # everything the user gave is checked before any server is started or contacted
    sql = _statement(args)
    what_if = WhatIf(drop_indexes=tuple(args.drop_index), max_locks_per_transaction=args.mlpt,
                     plan_cache_mode=args.plan_cache_mode, assume_major=args.assume_version)
    protocol = args.protocol or args.protocol_default
    protocol = "simple" if protocol == "extended" else protocol
    if sql is None:
        for option, value in (("--param", args.param), ("--param-type", args.param_type),
                              ("--protocol", args.protocol)):
            if value:
                raise BadInputError(f"{option} applies to --statement")
    else:
        checked = check_statement(sql)
        check_param_count(checked, args.param, args.param_type if protocol == "prepared" else ())
        sql = checked.text
        if args.param_type and protocol != "prepared":
            raise BadInputError("--param-type applies to --protocol prepared")
    calibration = load_calibration(args.calibration) if args.calibration is not None else DEFAULT_CALIBRATION
    check_writable(args.json, args.html)
    choice = choose_target(args.dsn, scratch=args.scratch,
                           scratch_only={"--setup": args.setup, "--pg-bin": args.pg_bin})
    if choice.scratch and sql is None:
        raise BadInputError("a scratch server has no workload: give --statement SQL (with --setup FILE for its "
                            "tables), or --dsn for a database with pg_stat_statements")
    setup = read_text(args.setup, "set-up script") if args.setup is not None else None
    pg_bin = resolve_pg_bin(args.pg_bin) if args.pg_bin else None
    cores = args.cores or default_cores()
    to_stdout = args.json is not None and str(args.json) == "-"
    info = make_console(stderr=True) if to_stdout else console
    with steps(make_console(stderr=True), "lockscope forecast") as step:
        if choice.scratch:
            step("starting a scratch PostgreSQL")
        with open_target(choice.dsn, pg_bin=pg_bin, settings=ScratchSettings(max_locks_per_transaction=SCRATCH_MLPT),
                         setup_sql=setup, lock_timeout_ms=args.lock_timeout,
                         statement_timeout_ms=args.statement_timeout,
                         pg_locks_rate_hz=choice.pg_locks_rate_hz(args.probe_rate)) as target:
            session = target.session
            info.print(target_line("forecast", session.endpoint.label(),
                                   choice.describe(session.facts.max_locks_per_transaction)),
                       markup=False, highlight=False)
            if sql is not None:
                report = forecast_statement(session, sql, calibration=calibration, cores=cores, clients=args.clients,
                                            what_if=what_if, params=args.param, param_types=args.param_type,
                                            protocol=protocol, exec_cost_ms=args.exec_cost,
                                            scratch_conninfo=target.server.conninfo() if target.server else None,
                                            progress=step)
            else:
                report = forecast_workload(session, calibration=calibration, cores=cores, clients=args.clients,
                                           what_if=what_if, interval_s=args.interval, top_n=args.top,
                                           dsn=choice.dsn, progress=step)
            endpoint = session.endpoint
            cost = session.probe_cost
    if args.json is not None:
        doc = forecast_to_dict(report)
        doc["server"].update(host=endpoint.host, port=endpoint.port, user=endpoint.user, chosen_by=choice.source)
        doc["probe_cost"] = cost.to_dict()
        write_json(args.json, doc, info, stdout=console)
    if not to_stdout:
        console.print(render_forecast(report, verbose=args.verbose))
    if args.html is not None:
        write_text(args.html, forecast_html(report), info, "HTML")
    print_probe_cost("forecast", cost)
    return 0
