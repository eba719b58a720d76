"""The rich consoles of :func:`lockscope.commands._output.make_console` (imported when a command runs, so that
``--help``, ``--version`` and shell completion never import rich)."""

from __future__ import annotations

import io
import os
import re
from typing import IO, Any, cast

from rich.console import Console

__all__ = ["new_console"]


class _Unpadded(io.TextIOBase):
    """A text stream that drops the blanks rich leaves at line ends (outside a terminal)."""

    _TRAILING = re.compile(r"[ \t]+(?=\n)")

    def __init__(self, stream: Any) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        self.stream.write(self._TRAILING.sub("", text))
        return len(text)

    def flush(self) -> None:
        self.stream.flush()

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        return int(self.stream.fileno())


class _NaturalWidthConsole(Console):
    """A console outside a terminal: each renderable at its natural width (a panel or an expanding table is as
    wide as its content, not the console width), lines without trailing blanks."""

    def print(self, *objects: Any, **kwargs: Any) -> None:
        from rich.console import Group

        if len(objects) == 1 and isinstance(objects[0], Group) and kwargs.get("width") is None:
            for part in objects[0].renderables:  # each part of a group at its own width
                self.print(part, **kwargs)
            return
        if len(objects) == 1 and kwargs.get("width") is None and not isinstance(objects[0], str):
            from rich.measure import Measurement

            try:
                natural = Measurement.get(self, self.options, objects[0]).maximum
            except Exception:  # a renderable rich cannot measure: print it as before
                natural = self.width
            kwargs["width"] = max(1, min(natural, self.width))
        super().print(*objects, **kwargs)


def new_console(stream: Any, *, stderr: bool, quiet: bool, width: int) -> Console:
    """A console writing to ``stream`` (``sys.stdout`` or ``sys.stderr`` at call time): rich's own in a terminal or
    when ``COLUMNS`` is set; elsewhere lines up to ``width`` columns, each renderable at its natural width, no
    trailing blanks."""
    tty = stream.isatty()
    if tty or os.environ.get("COLUMNS"):
        return Console(stderr=stderr, soft_wrap=not tty, quiet=quiet)
    return _NaturalWidthConsole(file=cast(IO[str], _Unpadded(stream)), width=width, soft_wrap=True, quiet=quiet)
