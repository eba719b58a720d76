"""``lockscope footprint``: the relation-lock footprint of one statement."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from rich.console import Console

from ..capacity import CapacityModel
from ..errors import EXIT_SPILL, BadInputError
from ..versions import SUPPORTED_MAJORS, check_assumed_major
from ._common import (
    add_json_option,
    add_parser,
    add_probe_rate_option,
    add_protocol_option,
    add_scratch_options,
    add_target_options,
    add_timeout_options,
    positive_int,
)
from ._output import check_writable, make_console, print_probe_cost, read_text, target_line, write_json

#: Executions probed with --protocol prepared when --executions is not given.
DEFAULT_EXECUTIONS = 7

_PLAN_CACHE_HELP = (
    "plan_cache_mode of the prepared executions: auto (PostgreSQL's default: 5 custom plans, then a generic plan "
    "is built at execution 6 and kept if it is cheaper), force_custom_plan (plan every execution with its "
    "values), force_generic_plan (build the generic plan at execution 1, reuse it after), or all (the three side "
    "by side); implies --protocol prepared when given (default auto)")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``footprint`` sub-command."""
    fp = add_parser(
        sub, "footprint",
        help="relation locks a statement takes, per plan-cache phase, fast-path vs main lock table",
        description="Measure the relation-lock footprint of one statement from pg_locks (EXPLAIN only, in a "
                    "READ ONLY transaction that is always rolled back) with the capacity model's prediction "
                    "beside it. The server: --dsn, else the PG* environment, else libpq's defaults (the local "
                    "socket), as for psql; --scratch starts an empty scratch PostgreSQL 18 instead (use --setup to "
                    "create tables on it). The first line names the server; the last line on stderr gives the "
                    "pg_locks reads (one per probed execution, 2 per second at most on your server).",
        exit_codes=(0, 1, 2, 3, 4, EXIT_SPILL, 130, 143),
    )
    fp.add_argument("sql", metavar="SQL", nargs="?",
                    help="one SELECT/INSERT/UPDATE/DELETE/MERGE ($1..$n parameters allowed); '-' reads stdin")
    fp.add_argument("-f", "--file", type=Path, help="read the statement from a file")
    add_target_options(fp, what="probe", scratch="an empty scratch PostgreSQL (see --setup)")
    fp.add_argument("--setup", metavar="FILE", type=Path,
                    help="SQL script run on the scratch server before probing (with --scratch only)")
    add_scratch_options(fp, mlpt_default="PostgreSQL's own: 64 on 13-18, 128 on 19")
    fp.add_argument("--param", action="append", default=[], metavar="VALUE",
                    help="value for $1, $2, ... in order (repeat the option)")
    fp.add_argument("--param-type", action="append", default=[], metavar="TYPE",
                    help="declared type of $1, $2, ... for PREPARE (prepared protocol)")
    add_protocol_option(
        fp, default="simple",
        meaning="how the statement is sent, as pgbench -M: simple and extended plan every execution with its "
                "values (one EXPLAIN shows the footprint; extended is measured as simple: the same locks); "
                "prepared runs PREPARE once, then EXPLAIN EXECUTE for executions 1..N, each through the plan "
                "cache (custom, generic-build, generic-reuse)")
    fp.add_argument("--plan-cache-mode", choices=("auto", "force_custom_plan", "force_generic_plan", "all"),
                    help=_PLAN_CACHE_HELP)
    fp.add_argument("--executions", type=positive_int, metavar="N",
                    help=f"executions probed with --protocol prepared, 1..100 (default {DEFAULT_EXECUTIONS})")
    fp.add_argument("--assume-version", type=int, metavar="MAJOR",
                    help=f"also predict for this major version ({SUPPORTED_MAJORS[0]}..{SUPPORTED_MAJORS[-1]}) with "
                         "the same relations")
    fp.add_argument("--assume-mlpt", type=positive_int, metavar="N",
                    help="also predict for this max_locks_per_transaction")
    add_timeout_options(fp)
    add_probe_rate_option(fp)
    add_json_option(fp, schema="lockscope/footprint/v1")
    fp.add_argument("-v", "--verbose", action="store_true", help="list every locked relation")
    fp.add_argument("--fail-on-spill", action="store_true",
                    help=f"exit {EXIT_SPILL} when any execution puts a lock in the main lock table")
    fp.set_defaults(handler=run)


def _read_statement(args: argparse.Namespace) -> str:
    if args.file is not None:
        if args.sql:
            raise BadInputError("give the statement either as SQL or with --file, not both")
        return read_text(args.file, "statement file")
    if args.sql == "-":
        return sys.stdin.read()
    if args.sql is None:
        raise BadInputError("no statement given: lockscope footprint 'select ...' (or --file FILE, or - for stdin)")
    return str(args.sql)


def _assumed_model(args: argparse.Namespace, facts_version: int, facts_mlpt: int) -> CapacityModel | None:
    if args.assume_version is None and args.assume_mlpt is None:
        return None
    version = facts_version
    if args.assume_version is not None:
        version = args.assume_version * 10000
    return CapacityModel(version, args.assume_mlpt or facts_mlpt)


def _check_options(args: argparse.Namespace) -> tuple[str, str]:
    """Refuse option combinations that would be ignored; return (protocol, plan_cache_mode) to measure with."""
    given = args.protocol
    mode = args.plan_cache_mode
    if given is None:  # --plan-cache-mode or --executions alone imply the prepared protocol
        given = "prepared" if mode is not None or args.executions is not None else args.protocol_default
    protocol = "simple" if given == "extended" else given
    if mode is not None and protocol != "prepared":
        raise BadInputError(f"--plan-cache-mode applies to --protocol prepared, not {given}: with {given}, "
                            "every execution is planned with its values")
    if args.executions is not None and protocol != "prepared":
        raise BadInputError(f"--executions applies to --protocol prepared: with {given}, every execution "
                            "is planned afresh and one probe shows the footprint")
    if args.executions is not None and args.executions > 100:
        raise BadInputError("--executions: at most 100")
    if args.param_type and protocol != "prepared":
        raise BadInputError("--param-type applies to --protocol prepared")
    if args.assume_version is not None:
        check_assumed_major(args.assume_version)
    if args.assume_mlpt is not None and args.assume_mlpt < 10:
        raise BadInputError("--assume-mlpt: max_locks_per_transaction is at least 10")
    if args.mlpt is not None and args.mlpt < 10:
        raise BadInputError("--mlpt: max_locks_per_transaction is at least 10")
    return protocol, mode or "auto"


def run(args: argparse.Namespace, console: Console) -> int:
    """Measure, render (table or JSON), and return the exit code."""
    from ..footprint import measure_all_modes, measure_footprint
    from ..lab.install import resolve_pg_bin
    from ..report.jsonout import footprints_to_dict
    from ..report.terminal import render_footprints
    from ..server import ScratchSettings
    from ..statement import check_param_count, check_statement
    from ..target import choose_target, open_target

    # everything the user gave is checked before any server is started or contacted
    protocol, mode = _check_options(args)
    checked = check_statement(_read_statement(args))
    check_param_count(checked, args.param, args.param_type if protocol == "prepared" else ())
    check_writable(args.json)
    choice = choose_target(args.dsn, scratch=args.scratch, scratch_only={
        "--setup": args.setup, "--pg-bin": args.pg_bin, "--mlpt": args.mlpt})
    setup = read_text(args.setup, "set-up script") if args.setup is not None else None
    pg_bin = resolve_pg_bin(args.pg_bin) if args.pg_bin else None
    to_stdout = args.json is not None and str(args.json) == "-"
    info = make_console(stderr=True) if to_stdout else console
    with open_target(choice.dsn, pg_bin=pg_bin, settings=ScratchSettings(max_locks_per_transaction=args.mlpt),
                     setup_sql=setup, lock_timeout_ms=args.lock_timeout, statement_timeout_ms=args.statement_timeout,
                     pg_locks_rate_hz=choice.pg_locks_rate_hz(args.probe_rate)) as target:
        facts = target.session.facts
        info.print(target_line("footprint", target.session.endpoint.label(),
                               choice.describe(facts.max_locks_per_transaction)), markup=False, highlight=False)
        assume = _assumed_model(args, facts.server_version_num, facts.max_locks_per_transaction)
        kwargs: dict[str, Any] = {"params": args.param, "param_types": args.param_type,
                                  "executions": args.executions or DEFAULT_EXECUTIONS, "assume": assume}
        if mode == "all":
            footprints = measure_all_modes(target.session, checked.text, **kwargs)
        else:
            footprints = (measure_footprint(target.session, checked.text, protocol=protocol,
                                            plan_cache_mode=mode, **kwargs),)
        endpoint = target.session.endpoint
        cost = target.session.probe_cost
    if args.json is not None:
        doc = footprints_to_dict(footprints)
        doc["server"].update(host=endpoint.host, port=endpoint.port, database=endpoint.database,
                             user=endpoint.user, chosen_by=choice.source)
        doc["probe_cost"] = cost.to_dict()
        write_json(args.json, doc, info, stdout=console)
    if not to_stdout:
        console.print(render_footprints(footprints, verbose=args.verbose))
    print_probe_cost("footprint", cost)
    if args.fail_on_spill and any(fp.spilled for fp in footprints):
        return EXIT_SPILL
    return 0
