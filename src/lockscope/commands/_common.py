"""Options every sub-command shares, declared once so they mean the same thing everywhere.

- ``--dsn DSN`` / ``--scratch`` (``--demo``): the target, chosen as psql chooses it: ``--dsn``, else the PG*
  environment, else libpq's defaults; a scratch server only when asked (:func:`lockscope.target.choose_target`).
- ``--probe-rate HZ``: pg_locks reads per second at most (default 2 on a server the user named).
- ``--pg-bin DIR|MAJOR`` and ``--mlpt N``: the scratch server (a bin directory, or a major installed with
  ``lockscope lab install``); ``--mlpt`` defaults to "not given", and each command says what it then uses.
- ``--json FILE|-``, ``--html FILE``: output files; ``-`` is standard output.
- ``--hz N``: sampling rate in samples per second wherever lockscope samples wait events.
- ``--protocol simple|extended|prepared``: the choices of ``pgbench -M``, with the same meaning.
- ``--lock-timeout TIME``, ``--statement-timeout TIME``: lockscope's own session limits (a bare number is ms, as in
  postgresql.conf; ``200ms``, ``5s`` as everywhere).
- Every time option takes one duration syntax (:func:`parse_duration`: ``500ms``, ``10s``, ``5m``, ``1h``; a bare
  number is seconds, except the two PostgreSQL timeouts above).
- Statement input: positional ``SQL``, ``-f FILE`` or ``-`` (standard input) (:func:`add_statement_input`).
- ``-h HOST -p PORT -U USER -d DBNAME``: psql's connection options, merged into the conninfo (:func:`target_dsn`);
  so every sub-command's help option is ``--help`` only.
- ``-q/--quiet``: results only (no progress, no notes); ``--fail-on``: the CI gate (exit 6) of each judging command.
- Number parsers: :func:`positive_int`, :func:`non_negative_int`, :func:`non_negative_float`,
  :func:`positive_float`.

Each sub-command's ``--help`` ends with only the exit codes it can return (:func:`exit_codes_text`).
"""

from __future__ import annotations

import argparse
import re
import textwrap
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NoReturn

from ..capacity import MIN_MAX_LOCKS_PER_TRANSACTION
from ..errors import EXIT_SPILL, EXIT_UNJUDGED, BadInputError
from ..versions import (
    DEFAULT_MAX_LOCKS_PER_TRANSACTION,
    DEFAULT_MAX_LOCKS_PER_TRANSACTION_PG19,
    SUPPORTED_MAJORS,
    check_assumed_major,
)
from ..watch.aas import MAX_HZ, MIN_HZ

__all__ = [
    "EXIT_CODES",
    "FILE_ONLY_CODES",
    "MLPT_DEFAULT_HELP",
    "PROTOCOLS",
    "OneLineErrorParser",
    "add_demo_load_options",
    "add_hz_option",
    "add_json_option",
    "add_parser",
    "add_probe_rate_option",
    "add_protocol_option",
    "add_scratch_options",
    "add_statement_input",
    "add_target_options",
    "add_timeout_options",
    "check_mlpt_option",
    "exit_codes_text",
    "non_negative_duration",
    "non_negative_float",
    "non_negative_int",
    "parse_duration",
    "positive_float",
    "positive_int",
    "read_statement_input",
    "sample_rate",
    "target_dsn",
    "timeout_ms",
]

#: Every exit code lockscope returns, with its meaning.
_EXIT_MEANINGS: dict[int, str] = {
    0: "success",
    1: "internal lockscope error",
    2: "bad input (options, files, a statement refused before reaching a server)",
    3: "the database said no (connection, invalid SQL, blocked by a lock, unsupported server)",
    4: "the scratch server could not be installed, started or stopped",
    5: "measured fast-path flags differ from the capacity model",
    EXIT_SPILL: "the --fail-on condition was met (CI gate)",
    EXIT_UNJUDGED: "--fail-on judged nothing: the model does not reproduce the present (CI gate, never a pass)",
    130: "interrupted (Ctrl-C)",
    143: "terminated (SIGTERM)",
}

#: The exit codes of a command that only reads files or prints help.
FILE_ONLY_CODES = (0, 1, 2, 130, 143)


def exit_codes_text(codes: Iterable[int]) -> str:
    """The ``exit codes:`` epilog listing ``codes`` (a subset of lockscope's) with their meanings."""
    lines = ["exit codes:"]
    for code in sorted(set(codes)):
        lines.append(f"  {code:<3} {_EXIT_MEANINGS[code]}")
    return "\n".join(lines)


#: The top-level epilog: every code.
EXIT_CODES = exit_codes_text(_EXIT_MEANINGS)

#: ``--protocol`` choices: those of ``pgbench -M``.
PROTOCOLS = ("simple", "extended", "prepared")


# -- number parsers ---------------------------------------------------------------------------------------------------
def _parsed(text: str, kind: Callable[[str], float], what: str) -> float:
    try:
        return kind(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"not {what}: {text!r}") from None


def positive_int(text: str) -> int:
    """argparse type: a whole number >= 1."""
    if "," in text:
        raise argparse.ArgumentTypeError(f"one whole number, not a list: {text!r}")
    value = int(_parsed(text, int, "a whole number"))
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {text}")
    return value


def non_negative_int(text: str) -> int:
    """argparse type: a whole number >= 0."""
    value = int(_parsed(text, int, "a whole number"))
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative: {text}")
    return value


def non_negative_float(text: str) -> float:
    """argparse type: a number >= 0."""
    value = _parsed(text, float, "a number")
    if not value >= 0:  # also refuses nan
        raise argparse.ArgumentTypeError(f"must not be negative: {text}")
    return value


def positive_float(text: str) -> float:
    """argparse type: a number > 0 (finite)."""
    value = _parsed(text, float, "a number")
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number: {text}")
    return value


_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?|\.\d+)\s*(us|ms|s|m|min|h|d)?\s*$")
_UNITS = {"us": 1e-6, "ms": 0.001, "s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0, "d": 86400.0}
#: The duration syntax, for help texts and messages.
DURATION_SYNTAX = "500ms, 10s, 5m, 1h"


def _duration_s(text: str, *, bare: str | None, zero: bool) -> float:
    match = _DURATION.match(text)
    if not match:
        raise argparse.ArgumentTypeError(f"not a duration: {text!r} (e.g. {DURATION_SYNTAX})")
    unit = match.group(2)
    if unit is None:
        if bare is None:
            raise argparse.ArgumentTypeError(f"give a unit: {text!r} (e.g. {DURATION_SYNTAX})")
        unit = bare
    seconds = float(match.group(1)) * _UNITS[unit]
    if seconds < 0 or (seconds == 0 and not zero):
        raise argparse.ArgumentTypeError(f"duration must be positive: {text!r}")
    return seconds


def parse_duration(text: str) -> float:
    """argparse type: a duration > 0 in seconds: ``500ms``, ``90s``, ``1.5m``, ``2h``, ``1d``; a bare number is
    seconds (``90``)."""
    return _duration_s(text, bare="s", zero=False)


def non_negative_duration(text: str) -> float:
    """argparse type: :func:`parse_duration` that also takes 0 (``--interval 0``, ``--warmup 0``)."""
    return _duration_s(text, bare="s", zero=True)


def duration_with_unit(text: str) -> float:
    """argparse type: :func:`parse_duration` without bare numbers (``--time-limit``, which used to count minutes:
    ``30`` is refused rather than read as 30 seconds)."""
    return _duration_s(text, bare=None, zero=False)


def cost_ms(text: str) -> float:
    """argparse type: a time >= 0 in milliseconds (``--exec-cost``): a duration, a bare number being ms."""
    return _duration_s(text, bare="ms", zero=True) * 1000.0


def timeout_ms(text: str) -> int:
    """argparse type: ``--lock-timeout`` / ``--statement-timeout`` in whole milliseconds (>= 1): a duration, a bare
    number being ms as in postgresql.conf (``200``, ``200ms``, ``5s``)."""
    ms = round(_duration_s(text, bare="ms", zero=False) * 1000)
    if ms < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1 ms: {text!r}")
    return ms


# -- parsers and shared options ---------------------------------------------------------------------------------------
class OneLineErrorParser(argparse.ArgumentParser):
    """An argument parser whose errors are one line on stderr, like every other lockscope error (exit 2).

    Options are never abbreviated (``allow_abbrev=False``, also for every sub-command): ``footprint --statement``
    would otherwise be read as ``--statement-timeout``.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        """Print ``lockscope: error: MESSAGE (see PROG --help)`` and exit 2."""
        self.exit(2, f"lockscope: error: {message} (see '{self.prog} --help')\n")


def add_help_option(p: argparse.ArgumentParser) -> None:
    """``--help`` alone: ``-h`` is psql's ``--host`` in lockscope (:func:`add_target_options`)."""
    p.add_argument("--help", action="help", help="show this help and exit")


def add_quiet_option(p: argparse.ArgumentParser) -> None:
    """``-q/--quiet``: results only (stdout, files), no progress, no notes, no first line naming the server."""
    p.add_argument("-q", "--quiet", action="store_true",
                   help="results only: no progress, no notes on standard error, no first line naming the server "
                        "(errors are still printed)")


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser], name: str, *, help: str,
               description: str, exit_codes: Iterable[int], quiet: bool = True) -> argparse.ArgumentParser:
    """A sub-command parser whose epilog lists the exit codes it can return, with ``--help`` (never ``-h``: psql's
    host option) and ``-q/--quiet``.

    A one-paragraph ``description`` is wrapped at 100 columns; one with line breaks is kept as written.
    """
    if "\n" not in description:
        description = textwrap.fill(description, 100)
    p = sub.add_parser(name, help=help, description=description, epilog=exit_codes_text(exit_codes),
                       formatter_class=argparse.RawDescriptionHelpFormatter, add_help=False)
    add_help_option(p)
    if quiet:
        add_quiet_option(p)
    return p


def point_h_to_help(p: argparse.ArgumentParser) -> None:
    """In a parser without psql's ``-h HOST`` (a command that connects to no server of yours), ``-h`` is one line
    saying so and pointing to ``--help`` (never help printed with exit 0 in place of the command). Applied to every
    sub-command parser once all are registered (:func:`lockscope.cli.build_parser`)."""
    if "-h" not in p._option_string_actions:
        p.add_argument("-h", action=_PointTo, nargs=0, help=argparse.SUPPRESS,
                       const=f"-h: {p.prog} connects to no server of yours (-h HOST is psql's host option in the "
                             "commands that do); for help use --help")


#: psql's connection options: (short, long, libpq keyword, metavar).
LIBPQ_OPTIONS = (("-h", "--host", "host", "HOST"), ("-p", "--port", "port", "PORT"),
                 ("-U", "--username", "user", "USER"), ("-d", "--dbname", "dbname", "DBNAME"))


def add_target_options(p: argparse.ArgumentParser, *, what: str, scratch: str, flag: str = "--scratch",
                       also_scratch: str | None = None) -> None:
    """``--dsn``, psql's ``-h -p -U -d``, and ``--scratch`` (or ``--demo``): which server, as ``psql`` chooses it.

    :param what: what the command does to the server, e.g. ``"probe"``.
    :param scratch: what ``flag`` runs instead of a server, e.g. ``"an empty scratch PostgreSQL 18"``.
    :param flag: ``--scratch`` (a scratch server: footprint, forecast) or ``--demo`` (a scratch server with a
        demo load: watch, audit, diagnose; ``--scratch`` is then refused with a pointer to ``--demo``).
    :param also_scratch: with ``flag="--demo"``: ``--scratch`` is a second choice (dest ``scratch_empty``), what it
        runs (audit: your schema on a scratch server).
    """
    g = p.add_argument_group("connection (as psql: --dsn, else -h/-p/-U/-d and the PG* environment, else libpq's "
                             "defaults; ~/.pgpass, PGSSLMODE and the other PG* variables apply)")
    g.add_argument("--dsn", metavar="DSN",
                   help=f"libpq conninfo or URI of the server to {what}. Without --dsn, the server psql would use: "
                        "the PG* environment (PGHOST, PGPORT, PGDATABASE, PGUSER, PGSERVICE, PGHOSTADDR), else "
                        "libpq's defaults (the local socket, your OS user name as user and database). lockscope "
                        f"starts a server only with {flag}")
    for short, long, keyword, metavar in LIBPQ_OPTIONS:
        g.add_argument(short, long, metavar=metavar, dest=f"libpq_{keyword}",
                       help=f"libpq {keyword}, as psql {short} (added to --dsn, which must not name it too)")
    g.add_argument(flag, action="store_true", dest="scratch",
                   help=f"use {scratch} instead of a server of yours (never started otherwise)")
    if also_scratch is not None:
        g.add_argument("--scratch", action="store_true", dest="scratch_empty", help=f"use {also_scratch}")
    elif flag != "--scratch":
        p.add_argument("--scratch", action=_PointTo, nargs=0, help=argparse.SUPPRESS,
                       const=f"--scratch: use {flag} ({scratch})")


def choose_command_target(args: argparse.Namespace, *, scratch_flag: str = "--scratch",
                          scratch_only: dict[str, object] | None = None) -> Any:
    """:func:`lockscope.target.choose_target` for a command's ``--dsn``, ``-h -p -U -d`` and ``--scratch``/``--demo``
    (a :class:`lockscope.target.TargetChoice`)."""
    from ..target import choose_target

    dsn, psql = target_dsn(args)
    return choose_target(dsn, scratch=args.scratch, scratch_flag=scratch_flag, scratch_only=scratch_only,
                         psql_options=psql, given_dsn=args.dsn is not None)


def target_dsn(args: argparse.Namespace) -> tuple[str | None, tuple[str, ...]]:
    """``--dsn`` with psql's ``-h -p -U -d`` merged in (``psycopg.conninfo.make_conninfo``), and the options given.

    :return: (the conninfo, or None when neither --dsn nor a psql option was given; the psql options given, e.g.
        ``("-h", "-d")``).
    :raises BadInputError: a psql option naming a parameter --dsn names too, or given with ``--scratch``/``--demo``,
        or a --dsn libpq cannot parse.
    """
    from ..db import check_dsn, merge_conninfo

    given = {keyword: (short, getattr(args, f"libpq_{keyword}", None)) for short, _, keyword, _ in LIBPQ_OPTIONS}
    given = {k: v for k, v in given.items() if v[1] is not None}
    if not given:
        return args.dsn, ()
    shorts = tuple(short for short, _ in given.values())
    if getattr(args, "scratch", False):
        raise BadInputError(f"{shorts[0]} names a server of yours: not with a scratch server")
    dsn: str | None = args.dsn
    what = "--dsn"
    if dsn is not None:
        params = check_dsn(dsn)
        for keyword, (short, _) in given.items():
            if params.get(keyword) not in (None, ""):
                raise BadInputError(f"{short} and --dsn both name the {keyword}: give it once")
    dbname = given["dbname"][1] if "dbname" in given else None
    if dbname is not None and ("=" in dbname or dbname.startswith(("postgresql://", "postgres://"))):
        # psql's -d takes a whole connection string too (libpq's expand_dbname)
        if dsn is not None:
            raise BadInputError("-d with a connection string and --dsn: give one of them")
        dsn, what = dbname, "-d"
        del given["dbname"]
        params = check_dsn(dsn)
        for keyword, (short, _) in given.items():
            if params.get(keyword) not in (None, ""):
                raise BadInputError(f"{short} and {what} both name the {keyword}: give it once")
    if not given:
        return dsn, shorts
    return merge_conninfo(dsn or "", {k: str(v) for k, (_, v) in given.items()}), shorts


class _StoreOnce(argparse.Action):
    """Store the value; the option given twice is refused (one scratch server: ``--pg-bin`` outside the lab
    scenarios that run each version), never silently the last one."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        if getattr(namespace, self.dest, None) is not None:
            parser.error(f"{option_string} given twice: this command starts one server")
        setattr(namespace, self.dest, values)


class _PointTo(argparse.Action):
    """An option refused at parse time with one line that says what to use instead (``const``)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        parser.error(str(self.const))


def add_probe_rate_option(p: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """``--probe-rate HZ``: pg_locks reads per second at most (:meth:`lockscope.db.Session.query_rows`)."""
    from ..target import LIVE_PG_LOCKS_RATE_HZ

    p.add_argument("--probe-rate", type=non_negative_float, metavar="HZ",
                   help="pg_locks reads per second at most: each EXPLAIN probe reads pg_locks once, and each read "
                        "takes all 16 lock-partition LWLocks and every backend's fast-path lock (default "
                        f"{LIVE_PG_LOCKS_RATE_HZ:g} on a server you name, unpaced on a scratch server; 0 = "
                        "unpaced)")


#: ``--mlpt`` default of the commands whose scratch server keeps PostgreSQL's own setting, as the help says it.
MLPT_DEFAULT_HELP = (f"PostgreSQL's own: {DEFAULT_MAX_LOCKS_PER_TRANSACTION} on 13-18, "
                     f"{DEFAULT_MAX_LOCKS_PER_TRANSACTION_PG19} on 19")


def add_scratch_options(p: argparse.ArgumentParser | argparse._ArgumentGroup, *, mlpt_default: str,
                        repeat: bool = False,
                        mlpt: bool = True) -> None:
    """``--pg-bin DIR|MAJOR`` and ``--mlpt N`` for a command that may start a scratch server.

    :param mlpt_default: the help text's default, e.g. ``"64, PostgreSQL's default"``.
    :param repeat: ``--pg-bin`` may be repeated (lab scenarios run each version).
    """
    p.add_argument("--pg-bin", metavar="DIR|MAJOR", action="append" if repeat else _StoreOnce,
                   help="scratch server binaries: a PostgreSQL 13+ bin directory, or a major installed with "
                        "'lockscope lab install' (e.g. 17)" + ("; repeat to run each version" if repeat else "")
                        + " (default: the embedded PostgreSQL 18)")
    if mlpt:
        p.add_argument("--mlpt", metavar="N", type=positive_int,
                       help=f"max_locks_per_transaction of the scratch server (default {mlpt_default})")


def add_demo_load_options(p: argparse.ArgumentParser) -> None:
    """The contended demo load a command runs on its scratch server (``watch --demo``, ``diagnose --demo``):
    ``--pg-bin``, ``--mlpt`` (default 16), ``--demo-indexes``, ``--demo-clients``
    (:mod:`lockscope.demo_load`)."""
    demo = p.add_argument_group("demo load (with --demo only)")
    add_scratch_options(demo, mlpt_default="16: one group of 16 fast-path slots, so the demo load contends")
    demo.add_argument("--demo-indexes", type=non_negative_int, metavar="N",
                      help="extra indexes on pgbench_accounts (default 100)")
    demo.add_argument("--demo-clients", type=positive_int, metavar="N", help="pgbench clients (default 16)")


def add_json_option(p: argparse.ArgumentParser, *, schema: str) -> None:
    """``--json FILE|-``: write the result as JSON (schema ``schema``) to FILE, or to standard output with ``-``."""
    p.add_argument("--json", metavar="FILE|-", type=Path,
                   help=f"write the result as JSON (schema {schema}) to FILE; - for standard output")


def sample_rate(text: str) -> float:
    """argparse type: samples per second, :data:`MIN_HZ` to :data:`MAX_HZ`."""
    value = _parsed(text, float, "a number")
    if not MIN_HZ <= value <= MAX_HZ:
        raise argparse.ArgumentTypeError(f"sampling rate must be between {MIN_HZ:g} and {MAX_HZ:g} Hz: {text}")
    return value


def add_hz_option(p: argparse.ArgumentParser, *, default: float = 10.0) -> None:
    """``--hz N`` (alias ``--sample-hz``): wait-event samples per second."""
    p.add_argument("--hz", "--sample-hz", dest="hz", metavar="N", type=sample_rate, default=default,
                   help=f"wait-event samples per second, {MIN_HZ:g} to {MAX_HZ:g} (default {default:g})")


def add_protocol_option(p: argparse.ArgumentParser, *, default: str, meaning: str) -> None:
    """``--protocol simple|extended|prepared``: the choices of ``pgbench -M``.

    The parsed value is None when the option is not given (so a command can tell "not given" from the default,
    which it finds in ``args.protocol_default``).

    :param meaning: what the choice does in this command (help text).
    """
    p.add_argument("--protocol", choices=PROTOCOLS, help=f"{meaning} (default {default})")
    p.set_defaults(protocol_default=default)


#: ``--lock-timeout`` and ``--statement-timeout`` defaults (ms), the same in every command.
LOCK_TIMEOUT_MS = 200
STATEMENT_TIMEOUT_MS = 5000


def add_timeout_options(p: argparse.ArgumentParser, *, what: str = "probe transaction and catalog query") -> None:
    """``--lock-timeout TIME`` and ``--statement-timeout TIME`` of lockscope's own session (parsed to ms)."""
    p.add_argument("--lock-timeout", type=timeout_ms, default=LOCK_TIMEOUT_MS, metavar="TIME",
                   help=f"lock_timeout of each {what}, e.g. 200ms, 1s; a bare number is ms as in "
                        f"postgresql.conf (default {LOCK_TIMEOUT_MS}ms)")
    p.add_argument("--statement-timeout", type=timeout_ms, default=STATEMENT_TIMEOUT_MS, metavar="TIME",
                   help=f"statement_timeout of each {what}, e.g. 500ms, 5s; a bare number is ms as in "
                        f"postgresql.conf (default {STATEMENT_TIMEOUT_MS // 1000}s)")


#: Executions probed with the prepared protocol when ``--executions`` is not given: the seeds' eight (five custom
#: plans, the generic plan built at the sixth, then reused), the same in footprint and lab prepared.
DEFAULT_EXECUTIONS = 8


def add_executions_option(p: argparse.ArgumentParser, *, what: str) -> None:
    """``--executions N``: prepared executions probed, 1..100 (default :data:`DEFAULT_EXECUTIONS`)."""
    p.add_argument("--executions", type=positive_int, metavar="N",
                   help=f"executions {what}, 1..100 (default {DEFAULT_EXECUTIONS})")


def add_assume_options(p: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """``--assume-version MAJOR`` and ``--assume-mlpt N``: what-ifs predicted by the capacity model over the same
    relations (never a server setting: that is ``--mlpt``)."""
    p.add_argument("--assume-version", type=int, metavar="MAJOR",
                   help=f"what-if: another major version ({SUPPORTED_MAJORS[0]}..{SUPPORTED_MAJORS[-1]}) with the "
                        "same relations")
    p.add_argument("--assume-mlpt", type=positive_int, metavar="N",
                   help="what-if: another max_locks_per_transaction, predicted over the same locks")


def check_assume_options(args: argparse.Namespace) -> None:
    """Refuse an ``--assume-version`` outside the modelled majors and an ``--assume-mlpt`` below 10.

    :raises BadInputError: one line.
    """
    if args.assume_version is not None:
        check_assumed_major(args.assume_version)
    check_mlpt_option(args.assume_mlpt, "--assume-mlpt")


def check_mlpt_option(value: int | None, option: str = "--mlpt") -> None:
    """Refuse a max_locks_per_transaction option below PostgreSQL's minimum
    (:data:`lockscope.capacity.MIN_MAX_LOCKS_PER_TRANSACTION`, 10); None (not given) passes.

    :raises BadInputError: one line.
    """
    if value is not None and value < MIN_MAX_LOCKS_PER_TRANSACTION:
        raise BadInputError(f"{option}: max_locks_per_transaction is at least {MIN_MAX_LOCKS_PER_TRANSACTION}")


#: ``--top`` default (statements read from pg_stat_statements, the top N by calls), the same in every command.
TOP_STATEMENTS = 50


def add_top_option(p: argparse.ArgumentParser | argparse._ArgumentGroup, *, what: str = "audited") -> None:
    """``--top N``: statements taken from pg_stat_statements, the top N by calls."""
    p.add_argument("--top", type=positive_int, default=TOP_STATEMENTS, metavar="N",
                   help=f"statements {what}, the top N by calls (default {TOP_STATEMENTS})")


#: The pg_stat_statements interval when ``--interval`` is not given (s).
INTERVAL_DEFAULT_S = 10.0


def add_interval_option(p: argparse.ArgumentParser | argparse._ArgumentGroup, *, also: str = "") -> None:
    """``--interval TIME``: between the two pg_stat_statements snapshots (0 = since the last reset); parsed as None
    when not given (:func:`interval_s`: :data:`INTERVAL_DEFAULT_S`, or what the command says in ``also``).

    :param also: words appended to the help (what else the interval is in that command).
    """
    p.add_argument("--interval", type=non_negative_duration, default=None, metavar="TIME",
                   help="time between the two pg_stat_statements snapshots for calls/s, e.g. 10s, 1m (default "
                        f"{INTERVAL_DEFAULT_S:g}s; 0 = rates since the last pg_stat_statements reset){also}")


def interval_s(args: argparse.Namespace) -> float:
    """``--interval`` in seconds, :data:`INTERVAL_DEFAULT_S` when not given."""
    return INTERVAL_DEFAULT_S if args.interval is None else float(args.interval)


#: What ``--workload FILE`` is, the same words in every command that takes it (``script.read_script`` reads it).
WORKLOAD_HELP = ("your statements as a pgbench script (SQL statements ending in ';', BEGIN ... COMMIT blocks as "
                 "transactions, every other statement its own; \\set lines and :variables as pgbench binds them)")


def add_workload_option(p: argparse.ArgumentParser | argparse._ArgumentGroup, *, use: str,
                        required: bool = False) -> None:
    """``--workload FILE``: a pgbench script of the user's statements (:data:`WORKLOAD_HELP`).

    :param use: what the command does with it, for the help text.
    """
    p.add_argument("--workload", metavar="FILE", type=Path, required=required, help=f"{WORKLOAD_HELP}: {use}")


def add_statement_input(p: argparse.ArgumentParser, *, several: bool, what: str) -> None:
    """Statement input, the same in every command: positional ``SQL``, ``-f FILE``, or ``-`` (standard input).

    :param several: a file (or stdin) may hold several statements separated by ``;`` (one result each).
    :param what: what happens to the statement, for the help text.
    """
    more = "; a file or standard input may hold several statements separated by ';', one result each" \
        if several else ""
    p.add_argument("sql", metavar="SQL", nargs="?",
                   help=f"the statement to {what}: one SELECT/INSERT/UPDATE/DELETE/MERGE ($1..$n parameters "
                        f"allowed); - reads standard input{more}")
    p.add_argument("-f", "--file", type=Path, metavar="FILE",
                   help="read the statement" + ("s" if several else "") + " from FILE (- for standard input)")


def read_statement_input(args: argparse.Namespace, *, command: str, required: bool = True) -> str | None:
    """The text given as ``SQL``, ``-f FILE`` or ``-``; None when none is given and not ``required``.

    :raises BadInputError: both SQL and -f, nothing given when ``required``, an unreadable file.
    """
    import sys

    from ._output import read_text

    if args.file is not None:
        if args.sql is not None:
            raise BadInputError("give the statement either as SQL or with -f FILE, not both")
        if str(args.file) == "-":
            return sys.stdin.read()
        return read_text(args.file, "statement file")
    if args.sql == "-":
        return sys.stdin.read()
    if args.sql is None:
        if required:
            raise BadInputError(f"no statement given: lockscope {command} 'select ...' (or -f FILE, or - for "
                                "standard input)")
        return None
    return str(args.sql)
