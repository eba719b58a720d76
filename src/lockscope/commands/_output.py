"""How every sub-command writes: results on stdout, progress and notices on stderr, files with one error mapping.

- Results go to standard output. Outside a terminal (a file, a pipe, a CI log) lines are never cut to 80 columns:
  each renderable is printed at its natural width, never padded, with no trailing blanks (:func:`make_console`),
  so relation names are printed whole.
- ``-q/--quiet`` (:func:`set_quiet`): results only; progress, notes and the first line naming the server are not
  printed (:func:`note`). Errors always are.
- ``NO_COLOR`` (any value) turns colours off, as rich honours it everywhere.
- Progress goes to standard error: a spinner or bar in a terminal, one plain line per step elsewhere
  (:class:`Steps`), so a CI log shows where a long run is.
- The first line of every command that talks to a server says which one (:func:`target_line`).
- ``--json -`` prints JSON alone on standard output; everything else then goes to standard error.
- Commands that probe end with one line on standard error: their pg_locks reads (:func:`print_probe_cost`).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import BadInputError

if TYPE_CHECKING:
    from rich.console import Console

    from ..db import ProbeCost

__all__ = ["WIDE_COLUMNS", "Steps", "check_writable", "make_console", "note", "print_probe_cost", "read_text",
           "set_quiet", "target_line", "write_json", "write_text"]

#: Widest line of a console that is not a terminal: wide enough that no table cell is ever cut (a renderable is
#: printed at its own natural width, never padded to this one).
WIDE_COLUMNS = 1000

_quiet = False


def set_quiet(quiet: bool) -> None:
    """``-q/--quiet``: from now on, consoles on standard error print nothing (errors excepted) and :func:`note`
    skips its lines."""
    global _quiet
    _quiet = quiet


def make_console(*, stderr: bool = False, errors: bool = False) -> Console:
    """A rich console on stdout (or stderr): the terminal's width in a terminal; elsewhere lines up to
    :data:`WIDE_COLUMNS`, each renderable at its natural width, no trailing blanks.

    ``COLUMNS`` in the environment still wins, as everywhere in rich; ``NO_COLOR`` turns colours off. With
    ``-q/--quiet`` a console on stderr is silent, unless ``errors`` (the one-line error of a failed command).
    """
    from ._console import new_console  # rich: only once a command runs (not for --help, --version, completion)

    stream = sys.stderr if stderr else sys.stdout
    return new_console(stream, stderr=stderr, quiet=stderr and _quiet and not errors, width=WIDE_COLUMNS)


def note(console: Console, text: str) -> None:
    """A note line (the server named, a file written): not printed with ``-q/--quiet``."""
    if not _quiet:
        console.print(text, markup=False, highlight=False)


class Steps:
    """Progress of a command with steps: a spinner in a terminal, one line per new step elsewhere (on stderr).

    Use as a context manager; call the instance with the text of each step.
    """

    def __init__(self, console: Console, title: str) -> None:
        self.console = console
        self.title = title
        self._status: Any = None
        self._last = ""
        self._start = time.monotonic()

    def __enter__(self) -> Steps:
        if self.console.is_terminal:
            self._status = self.console.status(f"{self.title}: starting ...")
            self._status.__enter__()
        return self

    def __call__(self, text: str) -> None:
        if text == self._last:
            return
        self._last = text
        if self._status is not None:
            self._status.update(f"{self.title}: {text} ...")
        else:
            self.console.print(f"{self.title}: [{time.monotonic() - self._start:5.1f} s] {text}",
                               markup=False, highlight=False)

    def __exit__(self, *exc: object) -> None:
        if self._status is not None:
            self._status.__exit__(None, None, None)


@contextmanager
def steps(console: Console, title: str) -> Iterator[Steps]:
    """:class:`Steps` as a ``with`` block."""
    with Steps(console, title) as reporter:
        yield reporter


def target_line(command: str, label: str, source: str) -> str:
    """The first output line: ``lockscope footprint: PostgreSQL 18.6 at ... (chosen by --dsn)``."""
    return f"lockscope {command}: {label} ({source})"


def print_probe_cost(command: str, cost: ProbeCost) -> None:
    """The last line of a command that probes (stderr): its pg_locks reads, e.g. ``lockscope audit: pg_locks reads:
    37 in 18.6 s of probing, 41 ms inside pg_locks (paced at 2/s)``."""
    note(make_console(stderr=True), f"lockscope {command}: {cost.line()}")


def check_writable(*paths: Path | None) -> None:
    """Refuse, before any work, an output path whose directory does not exist (``-`` is standard output).

    :raises BadInputError: naming the path.
    """
    for path in paths:
        if path is not None and str(path) != "-" and not path.expanduser().resolve().parent.is_dir():
            raise BadInputError(f"cannot write {path}: no such directory")


def read_text(path: Path, what: str) -> str:
    """The UTF-8 text of a file the user named (``what``: e.g. ``"statement file"``, for the message).

    :raises BadInputError: unreadable or not UTF-8 (one line, the OS reason).
    """
    try:
        return path.expanduser().read_text(encoding="utf-8")
    except OSError as exc:
        raise BadInputError(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise BadInputError(f"cannot read {what} {path}: not UTF-8 text") from None


def write_text(path: Path, text: str, console: Console, what: str, *, stdout: Console | None = None) -> None:
    """Write ``text`` to ``path`` (``-``: to ``stdout``'s console) and say so on ``console``.

    :raises BadInputError: the file cannot be written (one line, the OS reason).
    """
    if str(path) == "-":
        (stdout or console).out(text, highlight=False)
        return
    try:
        path.expanduser().write_text(text, encoding="utf-8")
    except OSError as exc:
        raise BadInputError(f"cannot write {what} to {path}: {exc.strerror or exc}") from None
    note(console, f"wrote {path}")


def write_json(path: Path, doc: Any, console: Console, *, stdout: Console | None = None) -> None:
    """Write ``doc`` as indented JSON to ``path`` (``-``: standard output); see :func:`write_text`."""
    write_text(path, json.dumps(doc, indent=2, default=str), console, "JSON", stdout=stdout)
