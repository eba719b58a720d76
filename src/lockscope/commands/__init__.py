"""One module per sub-command, each with ``register(subparsers)`` that sets ``handler(args, console) -> int``.

Handlers parse nothing themselves and print only through the console they are given; engines live outside.

Start-up: :func:`lockscope.cli.main` builds the parser with every sub-command on every run (``--help``, ``--version``
and shell completion included, which take under 0.2 s: ``benchmarks/startup.py``). So a command module imports at
module level only what declaring its options needs (argparse, ``_common``, ``_output``, constants); its engines,
renderers, psycopg, pglast and rich (``rich.console.Console`` is imported for type checking only) are imported
inside the handler that uses them. Those function-local imports are deliberate.
"""

from . import audit, completion, demo, diagnose, export_queries, footprint, forecast, lab, report, watch

#: Sub-commands in the order ``lockscope --help`` lists them.
COMMANDS = (footprint, audit, forecast, watch, diagnose, report, export_queries, lab, demo, completion)
