"""``lockscope lab``: placeholder until its issue lands."""

from __future__ import annotations

import argparse

from rich.console import Console

from ..errors import BadInputError
from ._common import add_parser


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Add the ``lab`` sub-command."""
    p = add_parser(sub, "lab", help="reproduce the lock-manager cliff on a scratch server (issue 5, not yet available)", description="reproduce the lock-manager cliff on a scratch server (issue 5, not yet available)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace, console: Console) -> int:
    """Refuse with one line."""
    raise BadInputError("lockscope lab is not available yet")
