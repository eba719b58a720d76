"""``lockscope footprint``: the relation-lock footprint of one statement."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from rich.console import Console

from ..capacity import CapacityModel
from ..errors import EXIT_SPILL, BadInputError
from ._common import add_parser, add_server_options, positive_int


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``footprint`` sub-command."""
    fp = add_parser(
        sub, "footprint",
        help="relation locks a statement takes, per plan-cache phase, fast-path vs main lock table",
        description="Measure the relation-lock footprint of one statement from pg_locks (EXPLAIN only, in a "
                    "READ ONLY transaction that is always rolled back) with the capacity model's prediction "
                    "beside it. Without --dsn, a scratch PostgreSQL 18 is started (use --setup to create tables).",
    )
    fp.add_argument("sql", metavar="SQL", nargs="?",
                    help="one SELECT/INSERT/UPDATE/DELETE/MERGE ($1..$n parameters allowed); '-' reads stdin")
    fp.add_argument("-f", "--file", type=Path, help="read the statement from a file")
    fp.add_argument("--dsn", help="libpq conninfo or URI of the server to probe (default: a scratch server)")
    fp.add_argument("--setup", metavar="FILE", type=Path,
                    help="SQL script run on the scratch server before probing (not allowed with --dsn)")
    add_server_options(fp)
    fp.add_argument("--param", action="append", default=[], metavar="VALUE",
                    help="value for $1, $2, ... in order (repeat the option)")
    fp.add_argument("--param-type", action="append", default=[], metavar="TYPE",
                    help="declared type of $1, $2, ... for PREPARE (prepared protocol)")
    fp.add_argument("--protocol", choices=("simple", "prepared"), default="simple")
    fp.add_argument("--plan-cache-mode", default="auto",
                    choices=("auto", "force_custom_plan", "force_generic_plan", "all"))
    fp.add_argument("--executions", type=positive_int, default=7,
                    help="executions probed with the prepared protocol (default 7)")
    fp.add_argument("--assume-version", type=int, metavar="MAJOR",
                    help="also predict for this major version (13..19) with the same relations")
    fp.add_argument("--assume-mlpt", type=positive_int, metavar="N",
                    help="also predict for this max_locks_per_transaction")
    fp.add_argument("--lock-timeout", type=positive_int, default=200, metavar="MS",
                    help="lock_timeout of the probe transaction in ms (default 200)")
    fp.add_argument("--statement-timeout", type=positive_int, default=5000, metavar="MS",
                    help="statement_timeout of the probe transaction in ms (default 5000)")
    fp.add_argument("--json", action="store_true", help="print JSON (schema lockscope/footprint/v1)")
    fp.add_argument("-v", "--verbose", action="store_true", help="list every locked relation")
    fp.add_argument("--fail-on-spill", action="store_true",
                    help=f"exit {EXIT_SPILL} when any execution puts a lock in the main lock table")
    fp.set_defaults(handler=run)


def _read_statement(args: argparse.Namespace) -> str:
    if args.file is not None:
        if args.sql:
            raise BadInputError("give the statement either as SQL or with --file, not both")
        try:
            return args.file.read_text(encoding="utf-8")
        except OSError as exc:
            raise BadInputError(f"cannot read {args.file}: {exc.strerror}") from None
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


def run(args: argparse.Namespace, console: Console) -> int:
    """Measure, render (table or JSON), and return the exit code."""
    from ..footprint import measure_all_modes, measure_footprint
    from ..report.jsonout import footprints_to_dict
    from ..report.terminal import render_footprints
    from ..server import ScratchSettings
    from ..statement import check_statement
    from ..target import open_target

    sql = _read_statement(args)
    check_statement(sql)  # refuse bad input before starting or connecting to any server
    if args.assume_version is not None and not 13 <= args.assume_version <= 99:
        raise BadInputError(f"--assume-version {args.assume_version}: give a major version, 13 or later")
    if args.assume_mlpt is not None and args.assume_mlpt < 10:
        raise BadInputError("--assume-mlpt: max_locks_per_transaction is at least 10")
    setup = None
    if args.setup is not None:
        try:
            setup = args.setup.read_text(encoding="utf-8")
        except OSError as exc:
            raise BadInputError(f"cannot read {args.setup}: {exc.strerror}") from None
    if args.dsn is not None and args.mlpt != 64:
        raise BadInputError("--mlpt applies to the scratch server only, not to --dsn")
    with open_target(args.dsn, pg_bin=args.pg_bin, settings=ScratchSettings(max_locks_per_transaction=args.mlpt),
                     setup_sql=setup, lock_timeout_ms=args.lock_timeout,
                     statement_timeout_ms=args.statement_timeout) as target:
        facts = target.session.facts
        assume = _assumed_model(args, facts.server_version_num, facts.max_locks_per_transaction)
        kwargs: dict[str, Any] = {"params": args.param, "param_types": args.param_type,
                                  "executions": args.executions, "assume": assume}
        if args.plan_cache_mode == "all":
            footprints = measure_all_modes(target.session, sql, **kwargs)
        else:
            footprints = (measure_footprint(target.session, sql, protocol=args.protocol,
                                            plan_cache_mode=args.plan_cache_mode, **kwargs),)
    if args.json:
        console.print_json(json.dumps(footprints_to_dict(footprints)))
    else:
        console.print(render_footprints(footprints, verbose=args.verbose))
    if args.fail_on_spill and any(fp.spilled for fp in footprints):
        return EXIT_SPILL
    return 0
