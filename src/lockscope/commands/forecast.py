"""``lockscope forecast``: the TPS ceiling a statement's or a workload's relation locks allow, and what binds it."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import EXIT_SPILL, EXIT_UNJUDGED, BadInputError
from ..pgbin.cache import resolve_pg_bin
from ..vocab import PlanCacheMode
from ._common import (
    MLPT_DEFAULT_HELP,
    add_assume_options,
    add_interval_option,
    add_json_option,
    add_parser,
    add_probe_rate_option,
    add_protocol_option,
    add_scratch_options,
    add_statement_input,
    add_target_options,
    add_timeout_options,
    add_top_option,
    add_workload_option,
    check_assume_options,
    check_mlpt_option,
    choose_command_target,
    cost_ms,
    interval_s,
    positive_int,
    read_statement_input,
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

    from ..db import Endpoint, ProbeCost
    from ..forecast.calibration import Calibration
    from ..forecast.engine import ForecastReport, WhatIf
    from ..target import TargetChoice

def fail_on_condition(text: str) -> tuple[str, float, float | None]:
    """argparse type of ``forecast --fail-on``: ``partition`` or ``headroom:F[@TPS]`` -> (name, F, TPS or None)."""
    name, sep, value = text.strip().partition(":")
    if name == "partition" and not sep:
        return name, 0.0, None
    if name == "headroom" and sep:
        factor, at, rate = value.partition("@")
        try:
            f = float(factor)
            tps = float(rate) if at else None
        except ValueError:
            f, tps = float("nan"), None
        if f > 0 and (tps is None or tps > 0):
            return name, f, tps
    raise argparse.ArgumentTypeError(f"not a condition: {text!r} (partition, headroom:F or headroom:F@TPS, e.g. "
                                     "headroom:2)")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``forecast`` sub-command."""
    p = add_parser(
        sub, "forecast",
        help="predicted TPS ceiling from lock partitions and cores, the binding resource, and what-ifs",
        description="Forecast the throughput a workload's relation locks allow: each main-table lock's lock "
                    "partition (0..15, the server's own hash), locks per partition per transaction, a queueing "
                    "model of the cores and the 16 lock-partition LWLocks (docs/forecast.md), the binding resource, "
                    "partition utilisation and the predicted LockManager share of active sessions. Input: one "
                    "statement (SQL, -f FILE or -, probed with EXPLAIN only), the transactions of a --workload "
                    "script (each one class whose locks accumulate, EXPLAIN only), or the database's "
                    "pg_stat_statements workload (read-only, as lockscope audit reads it; statements only: a "
                    "transaction may hold more than its statements). The server: --dsn (or psql's -h -p -U -d), "
                    "else the PG* environment, else libpq's defaults (the local socket), as for psql; --scratch "
                    "starts a scratch PostgreSQL 18 instead (a statement or a --workload script; --setup creates "
                    "its tables, --mlpt sets its max_locks_per_transaction). What-ifs (--drop-index, --assume-mlpt, "
                    "--plan-cache-mode, --assume-version) are forecast beside the measured state. The first line "
                    "names the server.",
        exit_codes=(0, 1, 2, 3, 4, EXIT_SPILL, EXIT_UNJUDGED, 130, 143),
    )
    add_statement_input(p, several=False, what="forecast instead of the pg_stat_statements workload")
    p.add_argument("--statement", dest="statement_alias", metavar="SQL", help=argparse.SUPPRESS)  # before issue 21
    add_target_options(p, what="forecast", scratch="a scratch PostgreSQL (with a statement or --workload; see --setup)")
    p.add_argument("--setup", metavar="FILE", type=Path,
                   help="SQL script run on the scratch server before probing (with --scratch only)")
    add_scratch_options(p, mlpt_default=MLPT_DEFAULT_HELP)
    p.add_argument("--param", action="append", default=[], metavar="VALUE",
                   help="value for $1, $2, ... of the statement in order (repeat the option)")
    p.add_argument("--param-type", action="append", default=[], metavar="TYPE",
                   help="declared type of $1, $2, ... for PREPARE (prepared protocol)")
    add_protocol_option(p, default="simple",
                        meaning="how the statement is sent, as pgbench -M: simple and extended plan every "
                                "execution; prepared probes executions 1..7 through the plan cache in the server's "
                                "plan_cache_mode and forecasts the last")
    _add_model_options(p)
    add_probe_rate_option(p)
    add_timeout_options(p)
    _add_output_options(p)
    p.set_defaults(handler=run)


def _add_model_options(p: argparse.ArgumentParser) -> None:
    """The model's inputs (clients, costs, cores, calibration), the what-ifs and the workload options."""
    p.add_argument("--clients", type=positive_int, metavar="N",
                   help="concurrent clients of the model (default: the workload's connections that ran statements "
                        "during --interval, or 16 for a statement)")
    p.add_argument("--exec-cost", type=cost_ms, metavar="DURATION",
                   help="the statement's execution time (500us, 2ms, 1.5s; a bare number is ms) (default: "
                        "pg_stat_statements when it has run on the server, timed executions on a --scratch server, "
                        "else unknown and said so)")
    p.add_argument("--cores", type=positive_int, metavar="N",
                   help="cores of the model (default: this machine's, os.cpu_count())")
    p.add_argument("--calibration", type=Path, metavar="FILE",
                   help="costs measured by 'lockscope lab ceiling' (calibration.json; default: the documented "
                        "defaults, docs/forecast.md)")
    what = p.add_argument_group("what-ifs (forecast beside the measured state)")
    what.add_argument("--drop-index", action="append", default=[], metavar="NAME",
                      help="remove this index's locks (repeat the option)")
    what.add_argument("--plan-cache-mode", choices=[m.value for m in PlanCacheMode],
                      help="another plan_cache_mode: the statement is probed again with the prepared protocol in "
                           "this mode; a workload statement takes its custom or cached generic plan's locks")
    add_assume_options(what)
    wl = p.add_argument_group("workload (without a statement)")
    add_workload_option(wl, use="forecast instead of the pg_stat_statements workload, each transaction as one class "
                                "whose relation locks accumulate, probed with EXPLAIN only (never run) on any server")
    add_interval_option(wl, also="; with a statement and --dsn, the seconds of wait-event samples "
                        "of its running load (default 2s; longer narrows the sampled LockManager share's interval)")
    add_top_option(wl, what="forecast")


def _add_output_options(p: argparse.ArgumentParser) -> None:
    """``--json``, ``--html``, ``-v`` and the ``--fail-on`` gate."""
    add_json_option(p, schema="lockscope/forecast/v1, docs/forecast.md")
    p.add_argument("--html", type=Path, metavar="FILE",
                   help="write a self-contained HTML report with the predicted TPS vs clients plot")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="list every main-table lock with its relation, mode and lock partition")
    p.add_argument("--fail-on", action="append", default=[], type=fail_on_condition, metavar="CONDITION",
                   help=f"CI gate on the measured state (repeat for several): exit {EXIT_SPILL} on partition (the "
                        "binding resource at --clients is a lock-partition LWLock, not the CPU) or headroom:F "
                        "(the predicted throughput at --clients is below F x the workload's measured rate; "
                        "headroom:F@TPS compares with TPS instead, and is the form a single statement needs); "
                        f"exit {EXIT_UNJUDGED}, judging nothing, when the model's first estimate of the present is "
                        "more than 25 %% off the measured calls/s")


def failed_conditions(report: ForecastReport, conditions: list[tuple[str, float, float | None]]) -> list[str]:
    """The ``--fail-on`` conditions the measured state meets, in words (empty: the gate passes)."""
    from ..report.forecast_terminal import binding_text

    fc = report.measured.forecast
    out = []
    for name, factor, tps in conditions:
        if name == "partition" and fc.binding_resource.startswith("partition"):
            out.append(f"partition: the binding resource at {fc.clients} clients is {binding_text(fc)}")
        elif name == "headroom":
            rate = tps if tps is not None else report.measured.rate_tps
            if rate is None:
                continue  # refused before the forecast (_check_fail_on)
            if fc.throughput_tps < factor * rate:
                out.append(f"headroom:{factor:g}: predicted {fc.throughput_tps:,.0f} TPS at {fc.clients} clients, "
                           f"below {factor:g} x {rate:,.0f} TPS")
    return out


def run(args: argparse.Namespace, console: Console) -> int:
    """Probe, forecast, render (table, JSON, HTML); return the exit code."""
    from ..forecast.calibration import DEFAULT_CALIBRATION, load_calibration
    from ..forecast.engine import WhatIf, default_cores

    # everything the user gave is checked before any server is started or contacted
    sql, protocol = _checked_statement(args)
    script = _checked_script(args, sql, protocol)
    what_if = WhatIf(drop_indexes=tuple(args.drop_index), max_locks_per_transaction=args.assume_mlpt,
                     plan_cache_mode=PlanCacheMode(args.plan_cache_mode) if args.plan_cache_mode else None,
                     assume_major=args.assume_version)
    calibration = load_calibration(args.calibration) if args.calibration is not None else DEFAULT_CALIBRATION
    check_writable(args.json, args.html)
    choice = choose_command_target(args, scratch_only={"--setup": args.setup, "--pg-bin": args.pg_bin,
                                                      "--mlpt": args.mlpt})
    if choice.scratch and sql is None and script is None:
        raise BadInputError("a scratch server has no workload: give a statement (SQL, -f FILE or -; with --setup "
                            "FILE for its tables) or --workload FILE, or --dsn for a database with pg_stat_statements")
    setup = read_text(args.setup, "set-up script") if args.setup is not None else None
    cores = args.cores or default_cores()
    to_stdout = args.json is not None and str(args.json) == "-"
    info = make_console(stderr=True) if to_stdout else console
    report, endpoint, cost = _forecast(args, choice, info, sql=sql, script=script, setup=setup, protocol=protocol,
                                       what_if=what_if, calibration=calibration, cores=cores)
    _render(args, report, choice, endpoint, cost, console=console, info=info, to_stdout=to_stdout)
    print_probe_cost("forecast", cost)
    if args.fail_on and report.model_check is not None:
        # always printed, -q or not, on one line: a CI log must say why the gate did not pass
        make_console(stderr=True, errors=True).print(
            "lockscope forecast: --fail-on judged nothing: " + report.model_check.headline, markup=False,
            highlight=False, soft_wrap=True)
        return EXIT_UNJUDGED
    failed = failed_conditions(report, args.fail_on)
    if failed:
        note(make_console(stderr=True), "lockscope forecast: --fail-on " + "; ".join(failed))
        return EXIT_SPILL
    return 0


def _checked_statement(args: argparse.Namespace) -> tuple[str | None, str]:
    """The statement (None: the workload) and the protocol it is probed with, after every check of the options.

    :raises BadInputError: for options that contradict each other or do not apply.
    """
    from ..statement import check_param_count, check_statement

    if args.statement_alias is not None:  # --statement SQL, the spelling before issue 21
        if args.sql is not None:
            raise BadInputError("give the statement once: SQL (or --statement SQL, its old spelling)")
        args.sql = args.statement_alias
    sql = read_statement_input(args, command="forecast", required=False)
    check_assume_options(args)
    check_mlpt_option(args.mlpt)
    if sql is not None and any(name == "headroom" and tps is None for name, _, tps in args.fail_on):
        raise BadInputError("--fail-on headroom:F needs a rate for a single statement: headroom:F@TPS (e.g. "
                            "headroom:2@5000)")
    protocol = args.protocol or args.protocol_default
    protocol = "simple" if protocol == "extended" else protocol
    if sql is None:
        scripted = args.workload is not None  # --protocol applies to a --workload script too
        for option, value in (("--param", args.param), ("--param-type", args.param_type),
                              ("--protocol", None if scripted else args.protocol)):
            if value:
                raise BadInputError(f"{option} applies to a statement (SQL, -f FILE or -)")
        return None, protocol
    checked = check_statement(sql)
    check_param_count(checked, args.param, args.param_type if protocol == "prepared" else ())
    if args.param_type and protocol != "prepared":
        raise BadInputError("--param-type applies to --protocol prepared")
    return checked.text, protocol


def _checked_script(args: argparse.Namespace, sql: str | None, protocol: str) -> str | None:
    """The ``--workload`` script's text (None without one), read as it will be probed.

    :raises BadInputError: a statement given too, ``--exec-cost`` or ``--fail-on headroom:F`` without a rate, an
        unreadable file or a script lockscope cannot read (its line named).
    """
    from ..script import read_script

    if args.workload is None:
        return None
    if sql is not None:
        raise BadInputError("give a statement (SQL, -f FILE or -) or --workload FILE, not both")
    if args.exec_cost is not None:
        raise BadInputError("--exec-cost applies to a statement: the statements of a --workload script are timed "
                            "one by one (pg_stat_statements, or a --scratch server)")
    if any(name == "headroom" and tps is None for name, _, tps in args.fail_on):
        raise BadInputError("--fail-on headroom:F needs a rate for a --workload script: headroom:F@TPS (e.g. "
                            "headroom:2@5000)")
    text = read_text(args.workload, "workload file")
    read_script(text, protocol=protocol, where=str(args.workload))
    return text


def _forecast(args: argparse.Namespace, choice: TargetChoice, info: Console, *, sql: str | None,
              script: str | None, setup: str | None, protocol: str, what_if: WhatIf, calibration: Calibration,
              cores: int) -> tuple[ForecastReport, Endpoint, ProbeCost]:
    """Open the target (starting a scratch server if chosen) and forecast the statement, the script's transactions
    or the workload."""
    from ..forecast.engine import STATEMENT_SAMPLE_S, forecast_statement, forecast_workload
    from ..forecast.transactions import forecast_script
    from ..server import ScratchSettings
    from ..target import open_target

    pg_bin = resolve_pg_bin(args.pg_bin) if args.pg_bin else None
    with steps(make_console(stderr=True), "lockscope forecast") as step:
        if choice.scratch:
            step("starting a scratch PostgreSQL")
        with open_target(choice.dsn, pg_bin=pg_bin, settings=ScratchSettings(max_locks_per_transaction=args.mlpt),
                         setup_sql=setup, lock_timeout_ms=args.lock_timeout,
                         statement_timeout_ms=args.statement_timeout,
                         pg_locks_rate_hz=choice.pg_locks_rate_hz(args.probe_rate)) as target:
            session = target.session
            note(info, target_line("forecast", session.endpoint.label(),
                                   choice.describe(session.facts.max_locks_per_transaction)))
            scratch_conninfo = target.server.conninfo() if target.server else None
            if script is not None:
                report = forecast_script(session, script, calibration=calibration, cores=cores, clients=args.clients,
                                         where=str(args.workload), what_if=what_if, protocol=protocol,
                                         scratch_conninfo=scratch_conninfo, progress=step)
            elif sql is not None:
                report = forecast_statement(session, sql, calibration=calibration, cores=cores, clients=args.clients,
                                            what_if=what_if, params=args.param, param_types=args.param_type,
                                            protocol=protocol, exec_cost_ms=args.exec_cost,
                                            scratch_conninfo=scratch_conninfo, dsn=choice.dsn, progress=step,
                                            sample_s=STATEMENT_SAMPLE_S if args.interval is None else args.interval)
            else:
                report = forecast_workload(session, calibration=calibration, cores=cores, clients=args.clients,
                                           what_if=what_if, top_n=args.top,
                                           interval_s=interval_s(args),
                                           dsn=choice.dsn, progress=step)
            return report, session.endpoint, session.probe_cost


def _render(args: argparse.Namespace, report: ForecastReport, choice: TargetChoice, endpoint: Endpoint,
            cost: ProbeCost, *, console: Console, info: Console, to_stdout: bool) -> None:
    """The JSON document (``--json``), the terminal tables (unless the JSON goes to stdout) and ``--html``."""
    from ..report.forecast_html import forecast_html
    from ..report.forecast_json import forecast_to_dict
    from ..report.forecast_terminal import render_forecast

    if args.json is not None:
        doc = forecast_to_dict(report)
        doc["server"].update(host=endpoint.host, port=endpoint.port, user=endpoint.user, chosen_by=choice.source)
        doc["probe_cost"] = cost.to_dict()
        write_json(args.json, doc, info, stdout=console)
    if not to_stdout:
        console.print(render_forecast(report, verbose=args.verbose))
    if args.html is not None:
        write_text(args.html, forecast_html(report), info, "HTML")
