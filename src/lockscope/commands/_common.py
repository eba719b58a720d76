"""Options every sub-command shares, declared once so they mean the same thing everywhere.

- ``--dsn DSN`` / ``--scratch`` (``--demo``): the target, chosen as psql chooses it: ``--dsn``, else the PG*
  environment, else libpq's defaults; a scratch server only when asked (:func:`lockscope.target.choose_target`).
- ``--probe-rate HZ``: pg_locks reads per second at most (default 2 on a server the user named).
- ``--pg-bin DIR|MAJOR`` and ``--mlpt N``: the scratch server (a bin directory, or a major installed with
  ``lockscope lab install``); ``--mlpt`` defaults to "not given", and each command says what it then uses.
- ``--json FILE|-``, ``--html FILE``: output files; ``-`` is standard output.
- ``--hz N``: sampling rate in samples per second wherever lockscope samples wait events.
- ``--protocol simple|extended|prepared``: the choices of ``pgbench -M``, with the same meaning.
- ``--lock-timeout MS``, ``--statement-timeout MS``: lockscope's own session limits.
- Number parsers: :func:`positive_int`, :func:`non_negative_int`, :func:`non_negative_float`,
  :func:`positive_float`, :func:`parse_duration`.

Each sub-command's ``--help`` ends with only the exit codes it can return (:func:`exit_codes_text`).
"""

from __future__ import annotations

import argparse
import re
import textwrap
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NoReturn

from ..errors import EXIT_SPILL
from ..watch.aas import MAX_HZ, MIN_HZ

__all__ = [
    "EXIT_CODES",
    "FILE_ONLY_CODES",
    "PROTOCOLS",
    "OneLineErrorParser",
    "add_demo_load_options",
    "add_hz_option",
    "add_json_option",
    "add_parser",
    "add_probe_rate_option",
    "add_protocol_option",
    "add_scratch_options",
    "add_target_options",
    "add_timeout_options",
    "exit_codes_text",
    "non_negative_float",
    "non_negative_int",
    "parse_duration",
    "positive_float",
    "positive_int",
    "sample_rate",
]

#: Every exit code lockscope returns, with its meaning.
_EXIT_MEANINGS: dict[int, str] = {
    0: "success",
    1: "internal lockscope error",
    2: "bad input (options, files, a statement refused before reaching a server)",
    3: "the database said no (connection, invalid SQL, blocked by a lock, unsupported server)",
    4: "the scratch server could not be installed, started or stopped",
    5: "measured fast-path flags differ from the capacity model",
    EXIT_SPILL: "the --fail-on-spill / --fail-on condition was met",
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


_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|min|h)?\s*$")
_UNITS = {None: 1.0, "ms": 0.001, "s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}


def parse_duration(text: str) -> float:
    """argparse type: ``90``, ``90s``, ``1.5m``, ``2h``, ``500ms`` -> seconds (> 0)."""
    match = _DURATION.match(text)
    if not match:
        raise argparse.ArgumentTypeError(f"not a duration: {text!r} (e.g. 60s, 5m, 1h)")
    seconds = float(match.group(1)) * _UNITS[match.group(2)]
    if seconds <= 0:
        raise argparse.ArgumentTypeError(f"duration must be positive: {text!r}")
    return seconds


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


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser], name: str, *, help: str,
               description: str, exit_codes: Iterable[int]) -> argparse.ArgumentParser:
    """A sub-command parser whose epilog lists the exit codes it can return.

    A one-paragraph ``description`` is wrapped at 100 columns; one with line breaks is kept as written.
    """
    if "\n" not in description:
        description = textwrap.fill(description, 100)
    return sub.add_parser(name, help=help, description=description, epilog=exit_codes_text(exit_codes),
                          formatter_class=argparse.RawDescriptionHelpFormatter)


def add_target_options(p: argparse.ArgumentParser, *, what: str, scratch: str, flag: str = "--scratch") -> None:
    """``--dsn`` and ``--scratch`` (or ``--demo``): which server, as ``psql`` chooses it.

    :param what: what the command does to the server, e.g. ``"probe"``.
    :param scratch: what ``flag`` runs instead of a server, e.g. ``"an empty scratch PostgreSQL 18"``.
    :param flag: ``--scratch`` (a scratch server: footprint, forecast) or ``--demo`` (a scratch server with a
        demo load: watch, audit, diagnose; ``--scratch`` is then refused with a pointer to ``--demo``).
    """
    p.add_argument("--dsn", metavar="DSN",
                   help=f"libpq conninfo or URI of the server to {what}. Without --dsn, the server psql would use: "
                        "the PG* environment (PGHOST, PGPORT, PGDATABASE, PGUSER, PGSERVICE, PGHOSTADDR), else "
                        "libpq's defaults (the local socket, your OS user name as user and database). lockscope "
                        f"starts a server only with {flag}")
    p.add_argument(flag, action="store_true", dest="scratch",
                   help=f"use {scratch} instead of a server of yours (never started otherwise)")
    if flag != "--scratch":
        p.add_argument("--scratch", action=_PointTo, nargs=0, help=argparse.SUPPRESS,
                       const=f"--scratch: use {flag} ({scratch})")


class _PointTo(argparse.Action):
    """An option refused at parse time with one line that says what to use instead (``const``)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        parser.error(str(self.const))


def add_probe_rate_option(p: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """``--probe-rate HZ``: pg_locks reads per second at most (:meth:`lockscope.db.Session.read_pg_locks`)."""
    from ..target import LIVE_PG_LOCKS_RATE_HZ

    p.add_argument("--probe-rate", type=non_negative_float, metavar="HZ",
                   help="pg_locks reads per second at most: each EXPLAIN probe reads pg_locks once, and each read "
                        "takes all 16 lock-partition LWLocks and every backend's fast-path lock (default "
                        f"{LIVE_PG_LOCKS_RATE_HZ:g} on a server you name, unpaced on a scratch server; 0 = "
                        "unpaced)")


def add_scratch_options(p: argparse.ArgumentParser | argparse._ArgumentGroup, *, mlpt_default: str,
                        repeat: bool = False,
                        mlpt: bool = True) -> None:
    """``--pg-bin DIR|MAJOR`` and ``--mlpt N`` for a command that may start a scratch server.

    :param mlpt_default: the help text's default, e.g. ``"64, PostgreSQL's default"``.
    :param repeat: ``--pg-bin`` may be repeated (lab scenarios run each version).
    """
    p.add_argument("--pg-bin", metavar="DIR|MAJOR", action="append" if repeat else "store",
                   help="scratch server binaries: a PostgreSQL 13+ bin directory, or a major installed with "
                        "'lockscope lab install' (e.g. 17)" + ("; repeat to run each version" if repeat else "")
                        + " (default: the embedded PostgreSQL 18)")
    if mlpt:
        p.add_argument("--mlpt", metavar="N", type=positive_int,
                       help=f"max_locks_per_transaction of the scratch server (default {mlpt_default})")


def add_demo_load_options(p: argparse.ArgumentParser) -> None:
    """The contended demo load a command runs on its scratch server (``watch --demo``, ``diagnose --demo``):
    ``--pg-bin``, ``--mlpt`` (default 16), ``--demo-indexes``, ``--demo-clients``
    (:mod:`lockscope.lab.demo_load`)."""
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


def add_timeout_options(p: argparse.ArgumentParser, *, lock_ms: int | None = 200, statement_ms: int = 5000,
                        what: str = "probe transaction and catalog query") -> None:
    """``--lock-timeout MS`` and ``--statement-timeout MS`` of lockscope's own session."""
    if lock_ms is not None:
        p.add_argument("--lock-timeout", type=positive_int, default=lock_ms, metavar="MS",
                       help=f"lock_timeout of each {what} in ms (default {lock_ms})")
    p.add_argument("--statement-timeout", type=positive_int, default=statement_ms, metavar="MS",
                   help=f"statement_timeout of each {what} in ms (default {statement_ms})")
