"""One module per sub-command, each with ``register(subparsers)`` that sets ``handler(args, console) -> int``.

Handlers parse nothing themselves and print only through the console they are given; engines live outside.
"""

from . import audit, completion, demo, diagnose, export_queries, footprint, forecast, lab, report, watch

#: Sub-commands in the order ``lockscope --help`` lists them.
COMMANDS = (footprint, audit, forecast, watch, diagnose, report, export_queries, lab, demo, completion)
