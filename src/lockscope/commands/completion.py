"""``lockscope completion bash|zsh``: shell completion generated from lockscope's own argparse parsers by shtab
(PyPI ``shtab``), so it never drifts from the options."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from ._common import FILE_ONLY_CODES, add_parser

if TYPE_CHECKING:
    from rich.console import Console

#: Shells shtab writes a completion script for.
SHELLS = ("bash", "zsh", "tcsh")

DESCRIPTION = """\
Print a completion script for SHELL, generated from lockscope's argparse parsers with shtab. Install it:

  bash:  lockscope completion bash > ~/.local/share/bash-completion/completions/lockscope
  zsh:   lockscope completion zsh > "${fpath[1]}/_lockscope"   (a directory in $fpath; then compinit)
  tcsh:  lockscope completion tcsh > ~/.lockscope.completion.csh; source it from ~/.tcshrc
"""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``completion`` sub-command."""
    p = add_parser(sub, "completion", help="print a shell completion script (bash, zsh, tcsh)",
                   description=DESCRIPTION, exit_codes=FILE_ONLY_CODES, quiet=False)
    p.add_argument("shell", choices=SHELLS, metavar="SHELL", help="bash, zsh or tcsh")
    p.set_defaults(handler=run, needs_console=False)  # plain text on stdout: no rich console


def run(args: argparse.Namespace, console: Console | None) -> int:
    """Print the script for ``args.shell`` on standard output, from the whole command line's parser
    (``args.root_parser``, set by :func:`lockscope.cli.main`); ``console`` is None (``needs_console=False``)."""
    import shtab

    sys.stdout.write(shtab.complete(args.root_parser, shell=args.shell))
    sys.stdout.flush()
    return 0
