"""``lockscope watch``: sample pg_stat_activity and catch LWLock:LockManager waits live."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import BadInputError
from ..pgbin.cache import resolve_pg_bin
from ..watch import DEFAULT_PORT
from ._common import (
    add_demo_load_options,
    add_hz_option,
    add_json_option,
    add_parser,
    add_target_options,
    add_timeout_options,
    choose_command_target,
    parse_duration,
)
from ._output import check_writable, make_console, note, steps, target_line, write_json

if TYPE_CHECKING:  # the live view and the exporter's libraries load only when watch runs
    from rich.console import Console

    from ..report.watch_terminal import LiveHeader
    from ..watch.engine import Watcher
    from ..watch.prometheus import PrometheusExporter

DESCRIPTION = """\
Sample pg_stat_activity on one connection at --hz (1-100 per second, steady schedule; late ticks are counted)
and show live: average active sessions (AAS) by wait class, the LWLock:LockManager share over the last minute,
the top statements by LockManager samples (query_id joined to pg_stat_statements text when available) and the
sample rate achieved. Ctrl-C stops cleanly and prints a summary (exit 130, as every command); --json writes the
summary as JSON too.

The server: --dsn (or psql's -h -p -U -d), else the PG* environment, else libpq's defaults (the local socket), as
for psql. With --demo, lockscope starts its own embedded PostgreSQL 18 and runs a contended demo load on it
(pgbench select-only, 100 extra indexes on pgbench_accounts, 16 clients, max_locks_per_transaction 16) for
--duration (default 60 s), so `lockscope watch --demo` shows LockManager contention live; it never starts a server
or a load otherwise.

Observer cost: each sample is one query of pg_stat_get_activity(NULL), which takes no heavyweight lock and no
lock-manager LWLock (the pg_stat_activity view would put 6 shared-catalog locks in the main lock table per
sample). The session is autocommit with a short statement_timeout (no transaction is ever held between samples);
pg_blocking_pids() runs only for backends waiting on a heavyweight lock (wait_event_type 'Lock'), at most once per
second. Measured on the contended demo load (2 cores): at 10 Hz the watch process and its backend used 0.67% of
the machine's CPU; see BENCHMARKS.md ("watch: observer effect").

--source pg_wait_sampling reads the pg_wait_sampling extension's history instead (sampled inside the server
every 10 ms, no client query per sample; lockscope reads the ring 2-10 times a second and keeps --hz samples per
second); --source auto (the default) uses it when it is created in the database watched and preloaded, else
pg_stat_activity. Each read of the ring takes two heavyweight user locks (main lock table); see docs/monitoring.md.

On connection loss or a server restart, lockscope reconnects with backoff, records the gap and keeps going.
--record writes an SQLite file (schema in docs/watch.md) committed every second; SIGTERM and Ctrl-C flush and
close it; a killed process loses at most the last second. Render it with `lockscope report FILE --html OUT`.
"""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``watch`` sub-command."""
    p = add_parser(sub, "watch",
                   help="sample pg_stat_activity at up to 100 Hz and catch LWLock:LockManager waits live",
                   description=DESCRIPTION, exit_codes=(0, 1, 2, 3, 4, 130, 143))
    add_target_options(p, what="watch", scratch="a scratch PostgreSQL running the contended demo load",
                       flag="--demo")
    add_hz_option(p)
    p.add_argument("--source", choices=("auto", "activity", "pg_wait_sampling"), default="auto",
                   help="where samples come from: pg_stat_activity polled at --hz (activity), the pg_wait_sampling "
                        "extension's 10 ms in-server history (pg_wait_sampling; an error when it is not created in "
                        "the database or not preloaded), or pg_wait_sampling when usable else activity (auto, "
                        "the default)")
    p.add_argument("--duration", type=parse_duration, metavar="TIME",
                   help="stop after this long, e.g. 60s, 5m, 1h (default: until Ctrl-C; 60s with --demo)")
    add_json_option(p, schema="lockscope/watch/v1: the summary, written when the watch ends")
    p.add_argument("--record", type=Path, metavar="FILE",
                   help="record every sample to a new SQLite file (committed every second)")
    p.add_argument("--locks-every", type=parse_duration, metavar="TIME",
                   help="also take a pg_locks snapshot every TIME, e.g. 5s, 1m (minimum 1s; default off): per "
                        "backend its "
                        "relation locks and how many are not fast-path (in the main lock table). COST: each "
                        "snapshot takes every backend's fast-path LWLock and then all 16 lock-partition LWLocks "
                        "in shared mode while it copies the lock table, stalling backends that are acquiring or "
                        "releasing main-table locks meanwhile (the contended ones); measured on the contended demo "
                        "load: one snapshot per second added ~0.1%% of a 2-core machine's CPU, its TPS effect "
                        "below the noise (BENCHMARKS.md)")
    p.add_argument("--prometheus", metavar="[HOST:]PORT", nargs="?", const=f"127.0.0.1:{DEFAULT_PORT}",
                   help="serve the figures as Prometheus metrics (docs/monitoring.md) on HOST:PORT; alone: "
                        f"127.0.0.1:{DEFAULT_PORT} (host default 127.0.0.1: give 0.0.0.0 or an address only where "
                        "the network may read the metrics; they carry no SQL text unless "
                        "--prometheus-query-text), e.g. lockscope_activity_active_sessions, "
                        "lockscope_lockmanager_waiting_sessions, lockscope_locks_relation_main_table (with "
                        "--locks-every)")
    p.add_argument("--prometheus-query-text", action="store_true",
                   help="also export lockscope_statement_info{queryid,query} with the statements' text (first 200 "
                        "characters; with literals when pg_stat_statements is missing): off by default, the "
                        "series name statements by queryid only")
    add_timeout_options(p, what="lockscope query")
    p.add_argument("--no-live", action="store_true",
                   help="no live view (also when stdout is not a terminal); print only the summary")
    add_demo_load_options(p)
    p.set_defaults(handler=run)


def _check(args: argparse.Namespace) -> None:
    from ..watch.engine import MIN_LOCKS_EVERY_S

    check_writable(args.json)
    if args.prometheus_query_text and not args.prometheus:
        raise BadInputError("--prometheus-query-text applies to --prometheus")
    if args.locks_every is not None and args.locks_every < MIN_LOCKS_EVERY_S:
        raise BadInputError(f"--locks-every {args.locks_every:g}: at least {MIN_LOCKS_EVERY_S:g} s (each pg_locks "
                            "snapshot takes all 16 lock-partition LWLocks)")
    if args.mlpt is not None and args.mlpt < 10:
        raise BadInputError("--mlpt: max_locks_per_transaction is at least 10")
    if args.record is not None and args.record.exists() and (args.record.is_dir() or args.record.stat().st_size):
        from ..errors import RecordFileError

        raise RecordFileError(f"{args.record} already exists; lockscope watch never overwrites a file "
                              "(choose a new --record name)")


def run(args: argparse.Namespace, console: Console) -> int:
    """Watch a server (or the demo), render live, print the summary; exit 130 on Ctrl-C (after the summary)."""
    from ..watch.prometheus import parse_listen

    _check(args)
    choice = choose_command_target(args, scratch_flag="--demo", scratch_only={
        "--pg-bin": args.pg_bin, "--mlpt": args.mlpt, "--demo-indexes": args.demo_indexes,
        "--demo-clients": args.demo_clients})
    listen = parse_listen(args.prometheus) if args.prometheus else None
    if choice.dsn is not None:
        return _watch(args, console, choice.dsn, choice.describe(0), args.duration, listen)
    return _demo(args, console, listen)


def _demo(args: argparse.Namespace, console: Console, listen: tuple[str, int] | None) -> int:
    from ..demo_load import demo_load

    duration = args.duration if args.duration is not None else 60.0
    pg_bin = resolve_pg_bin(args.pg_bin) if args.pg_bin else None
    with demo_load(pg_bin=pg_bin, mlpt=args.mlpt, extra_indexes=args.demo_indexes, clients=args.demo_clients,
                   duration_s=duration, wait_sampling=args.source != "activity",
                   progress=steps(make_console(stderr=True), "lockscope watch demo")) as running:
        return _watch(args, console, running.conninfo, running.source, duration, listen)


def _watch(args: argparse.Namespace, console: Console, dsn: str, target: str, duration: float | None,
           listen: tuple[str, int] | None) -> int:
    from ..report.watch_terminal import LiveHeader, render_summary
    from ..watch.engine import WatchConfig, Watcher
    from ..watch.prometheus import PrometheusExporter

    config = WatchConfig(dsn=dsn, hz=args.hz, duration_s=duration, record_path=args.record,
                         locks_every_s=args.locks_every, statement_timeout_ms=args.statement_timeout,
                         lock_timeout_ms=args.lock_timeout, source=args.source)
    watcher = Watcher(config)
    exporter = PrometheusExporter(watcher.state, *listen, query_text=args.prometheus_query_text) if listen else None
    try:
        watcher.start()
    except BaseException:
        if exporter is not None:
            exporter.close()
        raise
    endpoint = watcher.state.endpoint
    to_stdout = args.json is not None and str(args.json) == "-"
    info = make_console(stderr=True) if to_stdout else console
    if endpoint is not None:
        note(info, target_line("watch", endpoint.label(), target))
    state = watcher.state
    note(info, f"lockscope watch: samples from {state.source_detail}"
         + (f" ({state.source_note})" if state.source_note else ""))
    header = LiveHeader(target=target, hz=args.hz, duration_s=duration,
                        record=str(args.record) if args.record else None,
                        prometheus_url=exporter.url if exporter else None,
                        started_monotonic_s=time.monotonic())
    live = console.is_terminal and not args.no_live and not to_stdout  # --json -: stdout is the JSON's
    reason, terminated = "stopped", None
    try:
        reason, terminated = _until_done(args, watcher, console, info, header, live, exporter)
    finally:
        summary = watcher.stop(reason)
        if exporter is not None:
            exporter.close()
    if watcher.error is not None:
        raise watcher.error
    if not to_stdout:
        console.print(render_summary(summary))
    if args.json is not None:
        from ..report.watch_json import watch_summary_to_dict

        server = {"version": summary.server_version}
        if endpoint is not None:
            server.update(host=endpoint.host, port=str(endpoint.port), database=endpoint.database)
        write_json(args.json, watch_summary_to_dict(summary, source="watch", server=server), info, stdout=console)
    if terminated is not None:
        raise terminated
    if reason == "interrupted":
        note(make_console(stderr=True), "lockscope watch: interrupted (Ctrl-C): summary above, recording closed")
        return 130
    return 0


def _until_done(args: argparse.Namespace, watcher: Watcher, console: Console, info: Console, header: LiveHeader,
                live: bool, exporter: PrometheusExporter | None) -> tuple[str, BaseException | None]:
    """Wait for the watch to end, with the live view on a terminal: (the end reason, a SIGTERM to re-raise)."""
    from rich.live import Live

    from ..report.watch_terminal import render_live

    try:
        if live:
            with Live(render_live(watcher.state, header), console=console, refresh_per_second=2,
                      transient=False) as view:
                while not watcher.wait(0.5):
                    view.update(render_live(watcher.state, header))
                view.update(render_live(watcher.state, header))
        else:
            if not args.no_live:
                note(info, f"lockscope watch: sampling at {args.hz:g} Hz"
                     + (f", recording {args.record}" if args.record else "")
                     + (f", metrics {exporter.url}" if exporter else "")
                     + (f" for {args.duration:g} s" if args.duration else ", Ctrl-C to stop"))
            while not watcher.wait(1.0):
                pass
        return "duration", None
    except KeyboardInterrupt:
        return "interrupted", None
    except SystemExit as exc:  # SIGTERM (cli.py turns it into SystemExit(143))
        return "terminated", exc
