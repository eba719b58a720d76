"""``lockscope watch``: sample pg_stat_activity and catch LWLock:LockManager waits live."""

from __future__ import annotations

import argparse
import re
import time
from pathlib import Path

from rich.console import Console

from ..errors import BadInputError
from ._common import add_parser, positive_int

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|min|h)?\s*$")
_UNITS = {None: 1.0, "ms": 0.001, "s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}

DESCRIPTION = """\
Sample pg_stat_activity on one connection at --hz (1-100 per second, steady schedule; late ticks are counted)
and show live: average active sessions (AAS) by wait class, the LWLock:LockManager share over the last minute,
the top statements by LockManager samples (query_id joined to pg_stat_statements text when available) and the
sample rate achieved. Ctrl-C stops cleanly and prints a summary (exit 0).

Without --dsn, lockscope starts its own embedded PostgreSQL 18 and runs a contended demo load on it (pgbench
select-only, 100 extra indexes on pgbench_accounts, 16 clients, max_locks_per_transaction 16) for --duration
(default 60 s), so `lockscope watch` alone shows LockManager contention live.

Observer cost: each sample is one query of pg_stat_get_activity(NULL), which takes no heavyweight lock and no
lock-manager LWLock (the pg_stat_activity view would put 6 shared-catalog locks in the main lock table per
sample). The session is autocommit with a short statement_timeout (no transaction is ever held between samples);
pg_blocking_pids() runs only for backends waiting on a heavyweight lock (wait_event_type 'Lock'), at most once per
second. Measured on the contended demo load (2 cores): at 10 Hz the watch process and its backend used 0.67% of
the machine's CPU; see BENCHMARKS.md ("watch: observer effect").

On connection loss or a server restart, lockscope reconnects with backoff, records the gap and keeps going.
--record writes an SQLite file (schema in docs/watch.md) committed every second; SIGTERM and Ctrl-C flush and
close it; a killed process loses at most the last second. Render it with `lockscope report FILE --html OUT`.
"""


def parse_duration(text: str) -> float:
    """argparse type: ``90``, ``90s``, ``1.5m``, ``2h``, ``500ms`` -> seconds (> 0)."""
    match = _DURATION.match(text)
    if not match:
        raise argparse.ArgumentTypeError(f"not a duration: {text!r} (e.g. 60s, 5m, 1h)")
    seconds = float(match.group(1)) * _UNITS[match.group(2)]
    if seconds <= 0:
        raise argparse.ArgumentTypeError(f"duration must be positive: {text!r}")
    return seconds


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``watch`` sub-command."""
    p = add_parser(sub, "watch",
                   help="sample pg_stat_activity at up to 100 Hz and catch LWLock:LockManager waits live",
                   description=DESCRIPTION)
    p.add_argument("--dsn", help="libpq conninfo or URI of the server to watch (default: an embedded PostgreSQL "
                                 "18 running the contended demo load)")
    p.add_argument("--hz", type=_number, default=10.0, metavar="N",
                   help="samples per second, 1 to 100 (default 10)")
    p.add_argument("--duration", type=parse_duration, metavar="TIME",
                   help="stop after this long, e.g. 60s, 5m, 1h (default: until Ctrl-C; 60s for the demo)")
    p.add_argument("--record", type=Path, metavar="FILE",
                   help="record every sample to a new SQLite file (committed every second)")
    p.add_argument("--locks-every", type=_number, metavar="SECONDS",
                   help="also take a pg_locks snapshot every SECONDS (minimum 1; default off): per backend its "
                        "relation locks and how many are not fast-path (in the main lock table). COST: each "
                        "snapshot takes every backend's fast-path LWLock and then all 16 lock-partition LWLocks "
                        "in shared mode while it copies the lock table, stalling backends that are acquiring or "
                        "releasing main-table locks meanwhile (the contended ones); measured on the contended demo "
                        "load: "
                        "one snapshot per second added ~0.1%% of a 2-core machine's CPU, its TPS effect below the "
                        "noise (BENCHMARKS.md)")
    p.add_argument("--prometheus", metavar="[HOST:]PORT",
                   help="serve the figures as Prometheus metrics on HOST:PORT (host default 127.0.0.1), "
                        "e.g. lockscope_active_sessions, lockscope_lockmanager_waiting_sessions, "
                        "lockscope_main_table_relation_locks (with --locks-every)")
    p.add_argument("--statement-timeout", type=positive_int, default=500, metavar="MS",
                   help="statement_timeout of lockscope's own queries in ms (default 500)")
    p.add_argument("--no-live", action="store_true",
                   help="no live view (also when stdout is not a terminal); print only the summary")
    demo = p.add_argument_group("demo load (without --dsn only)")
    demo.add_argument("--pg-bin", metavar="DIR", type=Path,
                      help="bin directory of a PostgreSQL 13+ installation (default: the embedded PostgreSQL 18)")
    demo.add_argument("--mlpt", type=positive_int, metavar="N",
                      help="max_locks_per_transaction of the demo server (default 16)")
    demo.add_argument("--demo-indexes", type=int, metavar="N",
                      help="extra indexes on pgbench_accounts (default 100)")
    demo.add_argument("--demo-clients", type=positive_int, metavar="N", help="pgbench clients (default 16)")
    p.set_defaults(handler=run)


def _check(args: argparse.Namespace) -> None:
    from ..watch.engine import MAX_HZ, MIN_HZ, MIN_LOCKS_EVERY_S

    if not MIN_HZ <= args.hz <= MAX_HZ:
        raise BadInputError(f"--hz {args.hz:g}: sampling rate must be between {MIN_HZ:g} and {MAX_HZ:g} Hz")
    if args.locks_every is not None and args.locks_every < MIN_LOCKS_EVERY_S:
        raise BadInputError(f"--locks-every {args.locks_every:g}: at least {MIN_LOCKS_EVERY_S:g} s (each pg_locks "
                            "snapshot takes all 16 lock-partition LWLocks)")
    if args.dsn is not None:
        given = [name for name in ("pg_bin", "mlpt", "demo_indexes", "demo_clients") if getattr(args, name) is not None]
        if given:
            raise BadInputError(f"--{given[0].replace('_', '-')} applies to the demo server only, not to --dsn")
    if args.demo_indexes is not None and args.demo_indexes < 0:
        raise BadInputError("--demo-indexes must not be negative")
    if args.record is not None and args.record.exists() and (args.record.is_dir() or args.record.stat().st_size):
        from ..errors import RecordFileError

        raise RecordFileError(f"{args.record} already exists; lockscope watch never overwrites a file "
                              "(choose a new --record name)")


def run(args: argparse.Namespace, console: Console) -> int:
    """Watch a server (or the demo), render live, print the summary; exit 0 also on Ctrl-C."""
    from ..watch.prometheus import parse_listen

    _check(args)
    listen = parse_listen(args.prometheus) if args.prometheus else None
    if args.dsn is not None:
        from ..db import redact_dsn

        return _watch(args, console, args.dsn, redact_dsn(args.dsn) or "libpq defaults", args.duration, listen)
    return _demo(args, console, listen)


def _demo(args: argparse.Namespace, console: Console, listen: tuple[str, int] | None) -> int:
    from ..server import ScratchServer, ScratchSettings
    from ..lab.demo_load import DEMO_CLIENTS, DEMO_EXTRA_INDEXES, DEMO_MLPT, prepare_contended_schema, start_demo_load

    duration = args.duration if args.duration is not None else 60.0
    mlpt = args.mlpt or DEMO_MLPT
    indexes = DEMO_EXTRA_INDEXES if args.demo_indexes is None else args.demo_indexes
    clients = args.demo_clients or DEMO_CLIENTS
    with console.status("lockscope watch: starting an embedded PostgreSQL for the demo load ...") as status:
        server = ScratchServer(args.pg_bin, ScratchSettings(max_locks_per_transaction=mlpt,
                                                            max_connections=max(100, clients + 20)))
        server.start()
    try:
        with console.status("lockscope watch: preparing the demo load ...") as status:
            prepare_contended_schema(server, extra_indexes=indexes, mlpt=None,
                                     progress=lambda msg: status.update(f"lockscope watch demo: {msg} ..."))
        target = (f"demo: PostgreSQL {server.major} (scratch), pgbench -S -c{clients}, {indexes} extra indexes, "
                  f"mlpt {mlpt}")
        with start_demo_load(server, duration_s=duration + 5, clients=clients):
            time.sleep(0.5)
            return _watch(args, console, server.conninfo(), target, duration, listen)
    finally:
        server.stop()


def _watch(args: argparse.Namespace, console: Console, dsn: str, target: str, duration: float | None,
           listen: tuple[str, int] | None) -> int:
    from rich.live import Live

    from ..report.watch_terminal import LiveHeader, render_live, render_summary
    from ..watch.engine import WatchConfig, Watcher
    from ..watch.prometheus import PrometheusExporter

    config = WatchConfig(dsn=dsn, hz=args.hz, duration_s=duration, record_path=args.record,
                         locks_every_s=args.locks_every, statement_timeout_ms=args.statement_timeout)
    watcher = Watcher(config)
    exporter = PrometheusExporter(watcher.state, *listen) if listen else None
    try:
        watcher.start()
    except BaseException:
        if exporter is not None:
            exporter.close()
        raise
    header = LiveHeader(target=target, hz=args.hz, duration_s=duration,
                        record=str(args.record) if args.record else None,
                        prometheus_url=exporter.url if exporter else None,
                        started_monotonic_s=time.monotonic())
    live = console.is_terminal and not args.no_live
    reason = "stopped"
    terminated: BaseException | None = None
    try:
        if live:
            with Live(render_live(watcher.state, header), console=console, refresh_per_second=2,
                      transient=False) as view:
                while not watcher.wait(0.5):
                    view.update(render_live(watcher.state, header))
                view.update(render_live(watcher.state, header))
        else:
            if not args.no_live:
                console.print(f"lockscope watch: {target}, {args.hz:g} Hz"
                              + (f", recording {args.record}" if args.record else "")
                              + (f", metrics {exporter.url}" if exporter else ""))
            while not watcher.wait(1.0):
                pass
        reason = "duration"
    except KeyboardInterrupt:
        reason = "interrupted"
    except SystemExit as exc:  # SIGTERM (cli.py turns it into SystemExit(143))
        reason = "terminated"
        terminated = exc
    finally:
        summary = watcher.stop(reason)
        if exporter is not None:
            exporter.close()
    if watcher.error is not None:
        raise watcher.error
    console.print(render_summary(summary))
    if terminated is not None:
        raise terminated
    return 0
