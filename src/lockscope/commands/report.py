"""``lockscope report``: placeholder until its issue lands."""

from __future__ import annotations

import argparse

from rich.console import Console

from ..errors import BadInputError
from ._common import add_parser


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Add the ``report`` sub-command."""
    p = add_parser(sub, "report", help="render a watch recording to HTML (issue 4, not yet available)", description="render a watch recording to HTML (issue 4, not yet available)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace, console: Console) -> int:
    """Refuse with one line."""
    raise BadInputError("lockscope report is not available yet")
