"""``lockscope diagnose``: which statements wait on LWLock:LockManager, what they spill where, and the fix."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import EXIT_SPILL, EXIT_UNJUDGED, BadInputError
from ..pgbin.cache import resolve_pg_bin
from ._common import (
    add_demo_load_options,
    add_hz_option,
    add_json_option,
    add_parser,
    add_probe_rate_option,
    add_target_options,
    add_timeout_options,
    add_top_option,
    choose_command_target,
    non_negative_float,
    parse_duration,
    positive_int,
)
from ._output import check_writable, make_console, note, print_probe_cost, steps, target_line, write_json, write_text

#: ``--fail-on`` levels: ``contention`` = the diagnosis found LWLock:LockManager contention; ``risk`` = contention
#: or the risk of it (main-lock-table acquisitions/s at or above the risk rate without measured contention).
FAIL_ON_LEVELS = ("contention", "risk")
#: Sampling time when --duration is not given (s).
DEFAULT_DURATION_S = 30.0

if TYPE_CHECKING:
    from rich.console import Console

    from ..db import ProbeCost
    from ..diagnose import DiagnoseOptions, Diagnosis

DESCRIPTION = """\
Sample wait events like `lockscope watch` (read-only, one sampling connection, same observer cost) for
--duration, with two pg_stat_statements snapshots around it; then, like `lockscope audit`, read the catalog and
measure the footprints of the statements that carried the LWLock:LockManager waits (EXPLAIN only; each probe reads
pg_locks once, paced at --probe-rate, 2 reads per second by default on your server: the custom plan with values
from pg_stats, EXPLAIN (GENERIC_PLAN) for $n texts). It names the relations whose locks spill to
the main lock table and their lock partitions (0..15), the plan-cache phase that spills (custom plan, generic plan
build at execution 6, cached generic plan reuse), and ranks the audit's fixes (drop a droppable index set,
max_locks_per_transaction, plan_cache_mode, partitioning) by their effect on main-lock-table acquisitions/s
(calls/s x spilled locks per call, before and after). The main-lock-table rate it states is the server's: PG 19
pg_stat_lock.fastpath_exceeded, 13-18 pg_locks snapshots of the backends in a transaction (one a second: held
main-table locks per transaction x transactions/s); the transactions whose statements fill the fast path together
are named with their fixes (fewer statements per transaction, max_locks_per_transaction, plan_cache_mode for a
foreign-key check on a partitioned table), the statements' footprints kept beside as the model. The last line is
the verdict.

CI gate: --fail-on contention exits 6 when the status is contention; --fail-on risk also when it is risk; both
exit 7, judging nothing, when the sampled LockManager share's 95 % interval spans the contention line and the
gate's outcome depends on which side is true (sample longer).

The server: --dsn (or psql's -h -p -U -d), else the PG* environment, else libpq's defaults (the local socket),
as for psql. With
--demo, lockscope starts its own embedded PostgreSQL 18 with the contended demo load of `lockscope watch --demo`
(pgbench select-only, 100 extra indexes on pgbench_accounts, 16 clients, max_locks_per_transaction 16); it never
starts a server or a load otherwise. The first line names the server; the last line on stderr says how many
pg_locks reads the probes made and how long they took (docs/safety.md).
"""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``diagnose`` sub-command."""
    p = add_parser(sub, "diagnose",
                   help="which statements wait on LWLock:LockManager, which relations spill, and the fix",
                   description=DESCRIPTION, exit_codes=(0, 1, 2, 3, 4, EXIT_SPILL, EXIT_UNJUDGED, 130, 143))
    add_target_options(p, what="diagnose", scratch="a scratch PostgreSQL running the contended demo load",
                       flag="--demo")
    p.add_argument("--duration", type=parse_duration, metavar="TIME",
                   help="sampling time, also the pg_stat_statements interval for calls/s, e.g. 30s, 2m (default "
                        f"{DEFAULT_DURATION_S:g}s)")
    add_hz_option(p)
    p.add_argument("--source", choices=("auto", "activity", "pg_wait_sampling"), default="auto",
                   help="where wait samples come from, as for lockscope watch (default auto)")
    add_top_option(p, what="audited (by calls in the interval)")
    add_probe_rate_option(p)
    p.add_argument("--unused-days", type=non_negative_float, metavar="D",
                   help="statistics age in days from which idx_scan = 0 counts as unused (default 7; 0 on the demo)")
    p.add_argument("--cores", type=positive_int, metavar="N",
                   help="cores of the forecast model (default: this machine's)")
    p.add_argument("--html", type=Path, metavar="FILE", help="write a self-contained HTML report")
    add_json_option(p, schema="lockscope/diagnose/v2, docs/diagnose.md")
    add_timeout_options(p, what="probe transaction and catalog query")
    p.add_argument("--fail-on", choices=FAIL_ON_LEVELS, metavar="LEVEL",
                   help=f"CI gate: exit {EXIT_SPILL} when the status is LEVEL or worse: contention (LWLock:LockManager "
                        "share and waiting sessions above the problem line), risk (contention, or main-lock-table "
                        f"acquisitions/s at or above the risk rate); exit {EXIT_UNJUDGED}, judging nothing, when "
                        "the seconds sampled cannot decide (the LockManager share's 95 %% interval spans the "
                        "contention line)")
    add_demo_load_options(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace, console: Console) -> int:
    """Diagnose (a user's server or the demo), print, write the requested files; exit 0 (6 with --fail-on)."""
    from ..diagnose import DiagnoseOptions
    from ..forecast.engine import default_cores
    from ..report.diagnose_html import diagnose_html
    from ..report.diagnose_json import diagnose_to_dict
    from ..report.diagnose_terminal import render_diagnosis

    if args.mlpt is not None and args.mlpt < 10:
        raise BadInputError("--mlpt: max_locks_per_transaction is at least 10")
    check_writable(args.html, args.json)
    choice = choose_command_target(args, scratch_flag="--demo", scratch_only={
        "--pg-bin": args.pg_bin, "--mlpt": args.mlpt, "--demo-indexes": args.demo_indexes,
        "--demo-clients": args.demo_clients})
    unused_days = args.unused_days if args.unused_days is not None else (0.0 if choice.scratch else 7.0)
    options = DiagnoseOptions(duration_s=args.duration or DEFAULT_DURATION_S, hz=args.hz, source=args.source,
                              top_n=args.top, unused_min_age_s=unused_days * 86400, cores=args.cores or default_cores())
    rate = choice.pg_locks_rate_hz(args.probe_rate)
    to_stdout = args.json is not None and str(args.json) == "-"
    info = make_console(stderr=True) if to_stdout else console
    if choice.dsn is not None:
        diagnosis, cost = _diagnose(args, options, choice.dsn, choice.describe(0), info, rate, demo=False)
    else:
        diagnosis, cost = _demo(args, options, info, rate)
    if not to_stdout:
        console.print(render_diagnosis(diagnosis))
    if args.json is not None:
        write_json(args.json, {**diagnose_to_dict(diagnosis), "probe_cost": cost.to_dict()}, info, stdout=console)
    if args.html is not None:
        write_text(args.html, diagnose_html(diagnosis), info, "HTML")
    print_probe_cost("diagnose", cost)
    return _gate(args.fail_on, diagnosis)


def _gate(fail_on: str | None, diagnosis: Diagnosis) -> int:
    """``--fail-on``'s exit code: 6 when the status is the level or worse; 7 (judging nothing, the reason on one
    line) when the samples cannot decide between a status that meets it and one that does not."""
    from ..diagnose.engine import status_doubt

    if fail_on is None:
        return 0
    levels = FAIL_ON_LEVELS[:FAIL_ON_LEVELS.index(fail_on) + 1]
    met = diagnosis.status in levels
    other = diagnosis.status_otherwise
    if other is not None and (other in levels) != met:
        note(make_console(stderr=True), f"lockscope diagnose: --fail-on {fail_on} judged nothing: the status is "
             f"{diagnosis.status} or {other}: {status_doubt(diagnosis.watch)}")
        return EXIT_UNJUDGED
    if met:
        note(make_console(stderr=True), f"lockscope diagnose: --fail-on {fail_on}: status {diagnosis.status}")
        return EXIT_SPILL
    return 0


def _diagnose(args: argparse.Namespace, options: DiagnoseOptions, dsn: str, source: str, info: Console,
              rate_hz: float, *, demo: bool) -> tuple[Diagnosis, ProbeCost]:
    from ..db import connect
    from ..diagnose import run_diagnose

    with steps(make_console(stderr=True), "lockscope diagnose") as step, \
            connect(dsn, lock_timeout_ms=args.lock_timeout, statement_timeout_ms=args.statement_timeout,
                    pg_locks_rate_hz=rate_hz) as session:
        note(info, target_line("diagnose", session.endpoint.label(), source))
        return run_diagnose(session, dsn, options, progress=step, demo=demo), session.probe_cost


def _demo(args: argparse.Namespace, options: DiagnoseOptions, info: Console,
          rate_hz: float) -> tuple[Diagnosis, ProbeCost]:
    from ..demo_load import demo_load

    pg_bin = resolve_pg_bin(args.pg_bin) if args.pg_bin else None
    # the load covers the sampling; the probes run after it
    with demo_load(pg_bin=pg_bin, mlpt=args.mlpt, extra_indexes=args.demo_indexes, clients=args.demo_clients,
                   duration_s=options.duration_s,
                   progress=steps(make_console(stderr=True), "lockscope diagnose demo")) as running:
        return _diagnose(args, options, running.conninfo, running.source, info, rate_hz, demo=True)
