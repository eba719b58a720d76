"""The ``lockscope`` command: parse arguments, call one engine, render, map errors to one line + exit code."""

from __future__ import annotations

import argparse
import json
import signal
import sys
from pathlib import Path
from typing import Any, Callable, Sequence

from rich.console import Console

from . import __version__
from .capacity import CapacityModel
from .errors import EXIT_SPILL, BadInputError, LockscopeError, ModelMismatchError

__all__ = ["main", "build_parser"]

EXIT_CODES = f"""exit codes:
  0  success
  1  internal lockscope error
  2  bad input (options, statement refused before reaching a server)
  3  the database said no (connection, invalid SQL, blocked by a lock, unsupported server)
  4  the scratch server could not be started or stopped
  5  measured fast-path flags differ from the capacity model (demo)
  {EXIT_SPILL}  --fail-on-spill: an execution put locks in the main lock table
  130 interrupted (Ctrl-C); 143 terminated (SIGTERM)"""


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {text}")
    return value


def _add_server_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--pg-bin", metavar="DIR", type=Path,
                   help="bin directory of a PostgreSQL 13+ installation for the scratch server "
                        "(default: the embedded PostgreSQL 18)")
    p.add_argument("--mlpt", metavar="N", type=_positive_int, default=64,
                   help="max_locks_per_transaction of the scratch server (default 64)")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``lockscope`` command (sub-commands: footprint, demo)."""
    parser = argparse.ArgumentParser(
        prog="lockscope",
        description="See, predict, reproduce and fix PostgreSQL lock-manager contention (LWLock:LockManager).",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"lockscope {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    fp = sub.add_parser(
        "footprint",
        help="relation locks a statement takes, per plan-cache phase, fast-path vs main lock table",
        description="Measure the relation-lock footprint of one statement from pg_locks (EXPLAIN only, in a "
                    "READ ONLY transaction that is always rolled back) with the capacity model's prediction "
                    "beside it. Without --dsn, a scratch PostgreSQL 18 is started (use --setup to create tables).",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    fp.add_argument("sql", metavar="SQL", nargs="?",
                    help="one SELECT/INSERT/UPDATE/DELETE/MERGE ($1..$n parameters allowed); '-' reads stdin")
    fp.add_argument("-f", "--file", type=Path, help="read the statement from a file")
    fp.add_argument("--dsn", help="libpq conninfo or URI of the server to probe (default: a scratch server)")
    fp.add_argument("--setup", metavar="FILE", type=Path,
                    help="SQL script run on the scratch server before probing (not allowed with --dsn)")
    _add_server_options(fp)
    fp.add_argument("--param", action="append", default=[], metavar="VALUE",
                    help="value for $1, $2, ... in order (repeat the option)")
    fp.add_argument("--param-type", action="append", default=[], metavar="TYPE",
                    help="declared type of $1, $2, ... for PREPARE (prepared protocol)")
    fp.add_argument("--protocol", choices=("simple", "prepared"), default="simple")
    fp.add_argument("--plan-cache-mode", default="auto",
                    choices=("auto", "force_custom_plan", "force_generic_plan", "all"))
    fp.add_argument("--executions", type=_positive_int, default=7,
                    help="executions probed with the prepared protocol (default 7)")
    fp.add_argument("--assume-version", type=int, metavar="MAJOR",
                    help="also predict for this major version (13..19) with the same relations")
    fp.add_argument("--assume-mlpt", type=_positive_int, metavar="N",
                    help="also predict for this max_locks_per_transaction")
    fp.add_argument("--lock-timeout", type=_positive_int, default=200, metavar="MS",
                    help="lock_timeout of the probe transaction in ms (default 200)")
    fp.add_argument("--statement-timeout", type=_positive_int, default=5000, metavar="MS",
                    help="statement_timeout of the probe transaction in ms (default 5000)")
    fp.add_argument("--json", action="store_true", help="print JSON (schema lockscope/footprint/v1)")
    fp.add_argument("-v", "--verbose", action="store_true", help="list every locked relation")
    fp.add_argument("--fail-on-spill", action="store_true",
                    help=f"exit {EXIT_SPILL} when any execution puts a lock in the main lock table")
    fp.set_defaults(handler=_cmd_footprint)

    demo = sub.add_parser(
        "demo",
        help="reproduce the seed experiments on a scratch PostgreSQL and write lockscope-demo.html",
        description="Start a scratch PostgreSQL and reproduce the published lock-footprint experiments: "
                    "the 12-partition prepared statement (8/52/13), the 5-index table (6 then 1), the "
                    "pgbench_accounts extra-index cliff at max_locks_per_transaction 16 and 64, and 40 "
                    "partitions with and without plan-time pruning.",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    demo.add_argument("--pg-bin", metavar="DIR", type=Path,
                      help="bin directory of a PostgreSQL 13+ installation (default: the embedded PostgreSQL 18)")
    demo.add_argument("--html", type=Path, default=Path("lockscope-demo.html"),
                      help="where to write the HTML report (default lockscope-demo.html)")
    demo.add_argument("--json", type=Path, help="also write the results as JSON")
    demo.add_argument("--rows-per-partition", type=int, default=1_000_000, metavar="N",
                      help="rows loaded per partition for the 'with data' run (default 1000000; 0 skips it)")
    demo.add_argument("--max-extra-indexes", type=int, default=30, metavar="N",
                      help="extra indexes on pgbench_accounts in the cliff scenario (default 30)")
    demo.set_defaults(handler=_cmd_demo)
    return parser


# -- commands ---------------------------------------------------------------------------------------------------
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
        if not 13 <= args.assume_version <= 99:
            raise BadInputError(f"--assume-version {args.assume_version}: give a major version, 13 or later")
        version = args.assume_version * 10000
    return CapacityModel(version, args.assume_mlpt or facts_mlpt)


def _cmd_footprint(args: argparse.Namespace, console: Console) -> int:
    from .footprint import measure_all_modes, measure_footprint
    from .report.jsonout import footprints_to_dict
    from .report.terminal import render_footprints
    from .server import ScratchSettings
    from .target import open_target

    sql = _read_statement(args)
    from .statement import check_statement

    check_statement(sql)  # refuse bad input before starting or connecting to any server
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


def _cmd_demo(args: argparse.Namespace, console: Console) -> int:
    from .demo import run_demo
    from .report.demo_render import demo_to_dict, render_demo, write_demo_html

    if args.rows_per_partition < 0 or args.max_extra_indexes < 0:
        raise BadInputError("--rows-per-partition and --max-extra-indexes must not be negative")
    with console.status("lockscope demo: starting a scratch PostgreSQL ...") as status:
        result = run_demo(
            pg_bin=args.pg_bin,
            rows_per_partition=args.rows_per_partition,
            max_extra_indexes=args.max_extra_indexes,
            progress=lambda msg: status.update(f"lockscope demo: {msg} ..."),
        )
    console.print(render_demo(result))
    write_demo_html(result, args.html)
    console.print(f"wrote {args.html}")
    if args.json is not None:
        args.json.write_text(json.dumps(demo_to_dict(result), indent=2))
        console.print(f"wrote {args.json}")
    if result.mismatch_count:
        raise ModelMismatchError(f"{result.mismatch_count} lock(s) differ from the capacity model (see above)")
    return 0


# -- entry point ------------------------------------------------------------------------------------------------
def _on_sigterm(signum: int, frame: Any) -> None:
    raise SystemExit(143)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``lockscope`` command; returns the exit code (see ``lockscope --help``)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    console = Console()
    errors = Console(stderr=True)
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    handler: Callable[[argparse.Namespace, Console], int] = args.handler
    try:
        return handler(args, console)
    except LockscopeError as exc:
        errors.print(f"lockscope: error: {exc}", style="bold red", markup=False, highlight=False, soft_wrap=True)
        return exc.exit_code
    except KeyboardInterrupt:
        errors.print("lockscope: interrupted; scratch servers stopped", style="yellow")
        return 130
    finally:
        signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
