"""``lockscope watch``: placeholder until its issue lands."""

from __future__ import annotations

import argparse

from rich.console import Console

from ..errors import BadInputError
from ._common import add_parser


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Add the ``watch`` sub-command."""
    p = add_parser(sub, "watch", help="sample pg_stat_activity and catch LWLock:LockManager waits live (issue 4, not yet available)", description="sample pg_stat_activity and catch LWLock:LockManager waits live (issue 4, not yet available)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace, console: Console) -> int:
    """Refuse with one line."""
    raise BadInputError("lockscope watch is not available yet")
