"""The lab's runner: runs one scenario point by point, with progress, stop (Ctrl-C) and time limit.

A lab run is a sequence of *points*; each point is measured on a scratch server whose settings are reset first
(:meth:`ScratchServer.configure`), then recorded as one flat row (``dict`` of str/int/float/bool/None) and
``results.json`` / ``results.csv`` are rewritten at once (:mod:`lockscope.lab.results`), so an interrupted run
(Ctrl-C, the time limit, a crash, ``kill -9``) keeps every point measured so far. Plots and ``report.html`` are
written at the end, also after an interruption. What a load point measures is :mod:`lockscope.lab.load`; the
option checks the scenarios share are :mod:`lockscope.lab.options`.

Nothing here prints: progress goes to a :class:`LabProgress`, results come back as a :class:`LabResult`.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from .. import __version__
from ..db import connect
from ..errors import BadInputError, LockscopeError
from ..server import ScratchServer, ScratchSettings
from .results import LabResult, Row, ServerInfo, machine_info, new_results_dir, write_results

__all__ = [
    "MAX_POINTS",
    "LabContext",
    "LabProgress",
    "NullProgress",
    "Scenario",
    "run_lab",
]

#: Upper bound on points in one run (count); a run planning more is refused.
MAX_POINTS = 2000


class LabProgress(Protocol):
    """What a running scenario reports (the CLI draws rich progress bars from it)."""

    def begin(self, total_points: int, estimate_s: float, title: str) -> None:
        """The run starts: ``total_points`` points (count), about ``estimate_s`` seconds."""

    def step(self, text: str) -> None:
        """What is happening now (set-up step or the point being measured)."""

    def point_done(self, row: Row) -> None:
        """One point was measured and saved."""

    def end(self) -> None:
        """The run is over (complete or stopped)."""


class NullProgress:
    """A :class:`LabProgress` that ignores everything (library use, tests)."""

    def begin(self, total_points: int, estimate_s: float, title: str) -> None:
        pass

    def step(self, text: str) -> None:
        pass

    def point_done(self, row: Row) -> None:
        pass

    def end(self) -> None:
        pass


# -- the run -----------------------------------------------------------------------------------------------------
class _StopRun(Exception):
    """Raised inside a scenario when the run must stop after the current point."""


class LabContext:
    """Handed to a scenario: servers it starts, rows it records, whether it must stop.

    :ivar out_dir: the results directory (the only place a scenario may write files).
    :ivar progress: where progress goes.
    """

    def __init__(self, scenario: str, out_dir: Path, parameters: Mapping[str, Any], progress: LabProgress,
                 stop: threading.Event, deadline: float | None, base_dir: Path | None = None) -> None:
        self.scenario = scenario
        self.out_dir = out_dir
        self.parameters = dict(parameters)
        self.progress = progress
        self.stop_event = stop
        self.deadline = deadline
        self.base_dir = base_dir
        self.rows: list[Row] = []
        self.servers: list[ServerInfo] = []
        self.extras: dict[str, Any] = {}
        self.stop_reason: str | None = None
        self.started = _dt.datetime.now().astimezone()
        self._t0 = time.monotonic()

    # -- scenario API ------------------------------------------------------------------------------------------
    def check_stop(self) -> None:
        """Raise (caught by :func:`run_lab`) when Ctrl-C was pressed or the time limit passed."""
        if self.stop_event.is_set():
            self.stop_reason = "interrupted"
        elif self.deadline is not None and time.monotonic() >= self.deadline:
            self.stop_reason = "time limit"
        if self.stop_reason:
            raise _StopRun(self.stop_reason)

    @contextlib.contextmanager
    def server(self, bin_dir: Path | None, settings: ScratchSettings) -> Iterator[tuple[ScratchServer, ServerInfo]]:
        """A scratch server for the scenario, always stopped; its version is recorded in the results."""
        label = str(bin_dir) if bin_dir else "embedded PostgreSQL 18"
        self.progress.step(f"starting PostgreSQL ({label})")
        with ScratchServer(bin_dir, settings, base_dir=self.base_dir) as server:
            with connect(server.conninfo()) as session:
                facts = session.facts
            info = ServerInfo(facts.server_version, facts.server_version_num, str(server.bin_dir))
            if info not in self.servers:
                self.servers.append(info)
            self.save()
            yield server, info

    def record(self, row: Row) -> None:
        """Add one measured point and rewrite results.json / results.csv."""
        self.rows.append(row)
        self.save()
        self.progress.point_done(row)

    def save(self, status: str = "running") -> LabResult:
        """Rewrite results.json / results.csv with ``status``; returns what was written."""
        result = self.result(status)
        write_results(result)
        return result

    def result(self, status: str) -> LabResult:
        """The run so far, with ``status``."""
        cores, machine = machine_info()
        return LabResult(
            scenario=self.scenario,
            parameters=self.parameters,
            servers=tuple(self.servers),
            rows=tuple(self.rows),
            status=status,
            started=self.started.isoformat(timespec="seconds"),
            elapsed_s=time.monotonic() - self._t0,
            cores=cores,
            machine=machine,
            lockscope_version=__version__,
            extras=self.extras,
            out_dir=self.out_dir,
        )


class Scenario(Protocol):
    """A lab scenario module's interface (see ``lockscope.lab.SCENARIOS``)."""

    name: str

    def plan(self) -> tuple[int, float]:
        """(points, estimated seconds) of this configuration."""

    def parameters(self) -> dict[str, Any]:
        """The configuration as JSON-able parameters."""

    def run(self, ctx: LabContext) -> None:
        """Measure every point, calling ``ctx.check_stop()`` before each and ``ctx.record(row)`` after."""


def run_lab(
    scenario: Scenario,
    *,
    out: Path | None = None,
    progress: LabProgress | None = None,
    stop: threading.Event | None = None,
    time_limit_s: float | None = None,
    base_dir: Path | None = None,
    write_report: Callable[[LabResult], Sequence[Path]] | None = None,
) -> LabResult:
    """Run one scenario into a results directory.

    The run stops after the current point when ``stop`` is set (the CLI sets it on the first Ctrl-C) or
    ``time_limit_s`` has passed; what was measured is kept, and plots and report are still written. A
    :class:`KeyboardInterrupt` (second Ctrl-C), SIGTERM or an error ends it at once: rows measured so far are saved
    with the status ``interrupted`` / ``failed: ...`` and the exception propagates; scratch servers are always
    stopped.

    :param scenario: a configured scenario (``lockscope.lab.indexes.IndexesScenario(...)`` etc.).
    :param out: results directory (must be empty or absent; default ``./lockscope-lab-SCENARIO-<stamp>``).
    :param time_limit_s: stop after the point running when this much time has passed (s).
    :param base_dir: where scratch servers put their data directory (default the system temporary directory).
    :param write_report: writes plots and ``report.html`` from the result; returns the files written.
    :raises BadInputError: bad results directory, or a plan beyond :data:`MAX_POINTS`.
    :raises ScratchServerError, DatabaseError: when a server or set-up step fails.
    """
    points, estimate_s = scenario.plan()
    if points > MAX_POINTS:
        raise BadInputError(f"this run would measure {points} points; the limit is {MAX_POINTS}")
    out_dir = new_results_dir(scenario.name, out)
    progress = progress or NullProgress()
    stop = stop or threading.Event()
    deadline = time.monotonic() + time_limit_s if time_limit_s else None
    params = {**scenario.parameters(), "time_limit_s": time_limit_s}
    ctx = LabContext(scenario.name, out_dir, params, progress, stop, deadline, base_dir)
    ctx.save()
    progress.begin(points, estimate_s, f"lab {scenario.name}")
    status = "complete"
    try:
        scenario.run(ctx)
    except _StopRun as exc:
        status = str(exc)
    except LockscopeError as exc:
        ctx.save(f"failed: {exc}")
        _report_quietly(ctx.result(f"failed: {exc}"), write_report)
        raise
    except BaseException:  # a second Ctrl-C (KeyboardInterrupt), SIGTERM (SystemExit), a bug
        ctx.save("interrupted")
        _report_quietly(ctx.result("interrupted"), write_report)
        raise
    finally:
        progress.end()
    result = ctx.save(status)
    if write_report is not None:
        progress.step("writing plots and report.html")
        write_report(result)
    return result


def _report_quietly(result: LabResult, write_report: Callable[[LabResult], Sequence[Path]] | None) -> None:
    if write_report is None or not result.rows:
        return
    with contextlib.suppress(Exception):
        write_report(result)
