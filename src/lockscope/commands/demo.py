"""``lockscope demo``: the seed experiments on a scratch server, with an HTML report."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from rich.console import Console

from ..errors import BadInputError, ModelMismatchError
from ._common import add_parser


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``demo`` sub-command."""
    demo = add_parser(
        sub, "demo",
        help="reproduce the seed experiments on a scratch PostgreSQL and write lockscope-demo.html",
        description="Start a scratch PostgreSQL and reproduce the published lock-footprint experiments: "
                    "the 12-partition prepared statement (8/52/13), the 5-index table (6 then 1), the "
                    "pgbench_accounts extra-index cliff at max_locks_per_transaction 16 and 64, and 40 "
                    "partitions with and without plan-time pruning.",
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
    demo.set_defaults(handler=run)


def run(args: argparse.Namespace, console: Console) -> int:
    """Run the demo, print its tables, write the HTML (and JSON)."""
    from ..demo import run_demo
    from ..report.demo_render import demo_to_dict, render_demo, write_demo_html

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
