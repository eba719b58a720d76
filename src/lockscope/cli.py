"""The ``lockscope`` command: parse arguments, call one sub-command, map errors to one line + exit code."""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Callable, Sequence
from typing import Any

from . import __version__
from .commands import COMMANDS
from .commands._common import EXIT_CODES, OneLineErrorParser
from .commands._output import make_console
from .errors import LockscopeError

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``lockscope`` command with every sub-command registered."""
    parser = OneLineErrorParser(
        prog="lockscope",
        description="See, predict, reproduce and fix PostgreSQL lock-manager contention (LWLock:LockManager).",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"lockscope {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command in COMMANDS:
        command.register(sub)
    return parser


def _command_parser(parser: argparse.ArgumentParser, name: str | None) -> argparse.ArgumentParser:
    """The sub-command's parser (``parser`` itself when there is none)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and name in action.choices:
            found: argparse.ArgumentParser = action.choices[name]
            return found
    return parser


def _on_sigterm(signum: int, frame: Any) -> None:
    raise SystemExit(143)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``lockscope`` command; returns the exit code (see ``lockscope --help``)."""
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:  # named by the sub-command, whose --help lists what it takes
        _command_parser(parser, args.command).error(f"unrecognized arguments: {' '.join(extra)}")
    if args.command is None:
        parser.print_help()
        return 2
    console = make_console()
    errors = make_console(stderr=True)
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    handler: Callable[..., int] = args.handler
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
