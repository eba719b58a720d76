"""Progress of a running lab scenario on stderr: a rich progress bar in a terminal, else a line per step.

:class:`RichLabProgress` implements :class:`lockscope.lab.runner.LabProgress` (structurally: nothing from the lab is
imported).
"""

from __future__ import annotations

import time
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    SpinnerColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
)
from rich.text import Text

__all__ = ["RichLabProgress", "duration_text"]


class _Remaining(ProgressColumn):
    """Remaining time: the plan's estimate until a point is done, then elapsed per point x points left."""

    def render(self, task: Task) -> Text:
        estimate = float(task.fields.get("estimate_s", 0.0))
        elapsed = task.elapsed or 0.0
        done = task.completed
        if task.total is None:
            return Text("")
        if done:
            left = elapsed / done * max(0.0, task.total - done)
        else:
            left = max(0.0, estimate - elapsed)
        return Text(f"~{int(left // 60)}:{int(left % 60):02d} left", style="progress.remaining")


class RichLabProgress:
    """:class:`lockscope.lab.runner.LabProgress` on stderr: a progress bar in a terminal, else a line per step."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.bar = console.is_terminal
        self.progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                                 MofNCompleteColumn(), TimeElapsedColumn(), _Remaining(), console=console,
                                 transient=False)
        self.task: Any = None
        self.title = ""
        self.total = 0
        self.done = 0
        self.started = time.monotonic()

    def _line(self, text: str) -> None:
        self.console.print(f"lockscope {self.title}: [{_clock(time.monotonic() - self.started)}] {text}",
                           markup=False, highlight=False)

    def begin(self, total_points: int, estimate_s: float, title: str) -> None:
        """The run starts: ``total_points`` points (count), about ``estimate_s`` seconds."""
        self.title, self.total, self.started = title, total_points, time.monotonic()
        self.console.print(f"lockscope {title}: {total_points} points, about {duration_text(estimate_s)} "
                           "(Ctrl-C stops after the current point and keeps the results)", markup=False)
        if self.bar:
            self.progress.start()
            self.task = self.progress.add_task(title, total=total_points, estimate_s=estimate_s)

    def step(self, text: str) -> None:
        """What is happening now: the bar's description, or a line outside a terminal."""
        if self.task is not None:
            self.progress.update(self.task, description=f"{self.title}: {text}")
        elif not self.bar:
            self._line(f"point {min(self.done + 1, self.total)}/{self.total}: {text}")

    def point_done(self, row: dict[str, Any]) -> None:
        """One point was measured and saved."""
        self.done += 1
        if self.task is not None:
            self.progress.advance(self.task)
        elif not self.bar:
            self._line(f"point {self.done}/{self.total} done")

    def end(self) -> None:
        """The run is over (complete or stopped)."""
        if self.bar:
            self.progress.stop()

    def note(self, text: str) -> None:
        """A warning line (yellow)."""
        self.console.print(text, style="yellow", markup=False)


def _clock(seconds: float) -> str:
    return f"{int(seconds // 60)}:{int(seconds % 60):02d}"


def duration_text(seconds: float) -> str:
    """``seconds`` as ``"45 s"`` below 90 s, else whole minutes (``"7 min"``)."""
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.0f} min"
