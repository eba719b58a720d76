"""``lockscope audit``: placeholder until its issue lands."""

from __future__ import annotations

import argparse

from rich.console import Console

from ..errors import BadInputError
from ._common import add_parser


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Add the ``audit`` sub-command."""
    p = add_parser(sub, "audit", help="rank a database's tables and statements by lock-manager risk (issue 3, not yet available)", description="rank a database's tables and statements by lock-manager risk (issue 3, not yet available)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace, console: Console) -> int:
    """Refuse with one line."""
    raise BadInputError("lockscope audit is not available yet")
