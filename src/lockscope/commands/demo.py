"""``lockscope demo``: the seed experiments on a scratch server, with an HTML report."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import BadInputError, ModelMismatchError
from ..pgbin.cache import resolve_pg_bin
from ._common import add_json_option, add_parser, add_scratch_options, non_negative_int
from ._output import check_writable, make_console, note, steps, write_json, write_text

if TYPE_CHECKING:
    from rich.console import Console


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``demo`` sub-command."""
    demo = add_parser(
        sub, "demo",
        help="reproduce the seed experiments on a scratch PostgreSQL and write lockscope-demo.html",
        description="Start a scratch PostgreSQL (never your server) and reproduce the published lock-footprint "
                    "experiments: the 12-partition prepared statement (8/52/13), the 5-index table (6 then 1), "
                    "the pgbench_accounts extra-index cliff at max_locks_per_transaction 16 and 64, and 40 "
                    "partitions with and without plan-time pruning. Progress goes to stderr (a line per step "
                    "outside a terminal); the tables to stdout.",
        exit_codes=(0, 1, 2, 3, 4, 5, 130, 143),
    )
    add_scratch_options(demo, mlpt=False, mlpt_default="")
    demo.add_argument("--html", type=Path, metavar="FILE",
                      help="where to write the HTML report (default lockscope-demo.html)")
    add_json_option(demo, schema="lockscope/demo/v2")
    demo.add_argument("--rows-per-partition", type=non_negative_int, metavar="N",
                      help="rows loaded per partition for the 'with data' run (default 1000000; 0 skips it)")
    demo.add_argument("--max-extra-indexes", type=non_negative_int, default=30, metavar="N",
                      help="extra indexes on pgbench_accounts in the cliff scenario (default 30)")
    demo.set_defaults(handler=run)


def run(args: argparse.Namespace, console: Console) -> int:
    """Run the demo, print its tables, write the HTML (and JSON)."""
    from ..demo import run_demo
    from ..report.demo_render import demo_html, demo_to_dict, render_demo

    if args.max_extra_indexes > 1000:
        raise BadInputError("--max-extra-indexes: at most 1000")
    html = args.html if args.html is not None else Path("lockscope-demo.html")
    rows = args.rows_per_partition if args.rows_per_partition is not None else 1_000_000
    check_writable(html, args.json)
    pg_bin = resolve_pg_bin(args.pg_bin) if args.pg_bin else None
    to_stdout = args.json is not None and str(args.json) == "-"
    info = make_console(stderr=True) if to_stdout else console
    note(info, f"lockscope demo: a scratch PostgreSQL started by lockscope ({pg_bin or 'embedded PostgreSQL 18'})")
    with steps(make_console(stderr=True), "lockscope demo") as step:
        step("starting a scratch PostgreSQL")
        result = run_demo(pg_bin=pg_bin, rows_per_partition=rows,
                          max_extra_indexes=args.max_extra_indexes, progress=step)
    if not to_stdout:
        console.print(render_demo(result))
    write_text(html, demo_html(result), info, "HTML")
    if args.json is not None:
        write_json(args.json, demo_to_dict(result), info, stdout=console)
    if result.mismatch_count:
        raise ModelMismatchError(f"{result.mismatch_count} lock(s) differ from the capacity model (see above)")
    return 0
