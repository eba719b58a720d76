"""Helpers shared by the sub-commands: argument types, scratch-server options, exit-code text."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..errors import EXIT_SPILL

__all__ = ["EXIT_CODES", "add_parser", "add_server_options", "positive_int"]

EXIT_CODES = f"""exit codes:
  0  success
  1  internal lockscope error
  2  bad input (options, statement refused before reaching a server)
  3  the database said no (connection, invalid SQL, blocked by a lock, unsupported server)
  4  the scratch server could not be started or stopped
  5  measured fast-path flags differ from the capacity model (demo)
  {EXIT_SPILL}  --fail-on-spill / --fail-on: findings at the given level
  130 interrupted (Ctrl-C); 143 terminated (SIGTERM)"""


def positive_int(text: str) -> int:
    """argparse type: a whole number >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {text}")
    return value


def add_server_options(p: argparse.ArgumentParser, *, mlpt: bool = True) -> None:
    """``--pg-bin DIR`` (and ``--mlpt N``) for commands that may start a scratch server."""
    p.add_argument("--pg-bin", metavar="DIR", type=Path,
                   help="bin directory of a PostgreSQL 13+ installation for the scratch server "
                        "(default: the embedded PostgreSQL 18)")
    if mlpt:
        p.add_argument("--mlpt", metavar="N", type=positive_int, default=64,
                       help="max_locks_per_transaction of the scratch server (default 64)")


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser], name: str, *, help: str,
               description: str) -> argparse.ArgumentParser:
    """A sub-command parser with the exit-code epilog."""
    return sub.add_parser(name, help=help, description=description, epilog=EXIT_CODES,
                          formatter_class=argparse.RawDescriptionHelpFormatter)
