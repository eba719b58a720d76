"""The ``lockscope`` command: parse arguments, call one sub-command, map errors to one line + exit code."""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Callable, Sequence
from typing import Any

from . import __version__
from .commands import COMMANDS
from .commands._common import EXIT_CODES, OneLineErrorParser, _PointTo, add_help_option, point_h_to_help
from .commands._output import make_console, set_quiet
from .errors import LockscopeError

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``lockscope`` command with every sub-command registered."""
    parser = OneLineErrorParser(
        prog="lockscope",
        description="See, predict, reproduce and fix PostgreSQL lock-manager contention (LWLock:LockManager).",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        add_help=False,
    )
    add_help_option(parser)
    parser.add_argument("-V", "--version", action="version", version=f"lockscope {__version__}")
    parser.add_argument("-q", "--quiet", action="store_true", dest="quiet_all",
                        help="results only: no progress and no notes on standard error (also after the command)")
    parser.add_argument("-h", action=_PointTo, nargs=0, help=argparse.SUPPRESS,
                        const="-h is psql's host option: give it after the command (lockscope audit -h HOST); "
                              "for help use --help")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command in COMMANDS:
        command.register(sub)
    for p in sub_parsers(parser):
        point_h_to_help(p)
    return parser


def sub_parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """Every sub-command parser below ``parser`` (``lab``'s scenarios included), depth first."""
    found: list[argparse.ArgumentParser] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in dict.fromkeys(action.choices.values()):
                found.append(child)
                found += sub_parsers(child)
    return found


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
    set_quiet(bool(getattr(args, "quiet_all", False) or getattr(args, "quiet", False)))
    # rich is imported only for a command that writes through it (``completion`` writes plain text itself)
    console = make_console() if getattr(args, "needs_console", True) else None
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    handler: Callable[..., int] = args.handler
    args.root_parser = parser  # ``lockscope completion`` generates its script from it
    try:
        return handler(args, console)
    except LockscopeError as exc:
        errors = make_console(stderr=True, errors=True)
        errors.print(f"lockscope: error: {exc}", style="bold red", markup=False, highlight=False, soft_wrap=True)
        return exc.exit_code
    except KeyboardInterrupt:
        errors = make_console(stderr=True, errors=True)
        errors.print("lockscope: interrupted; scratch servers stopped", style="yellow", markup=False)
        return 130
    finally:  # not quiet again: main() may run again in this process (the tests run commands in process)
        signal.signal(signal.SIGTERM, previous)
        set_quiet(False)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
