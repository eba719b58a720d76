"""The lab's runner: a results directory written after every point, progress, stop and time limit, load figures.

A lab run is a sequence of *points*; each point is measured on a scratch server whose settings are reset first
(:meth:`ScratchServer.configure`), then recorded as one flat row (``dict`` of str/int/float/bool/None) and
``results.json`` / ``results.csv`` are rewritten at once, so an interrupted run (Ctrl-C, the time limit, a crash,
``kill -9``) keeps every point measured so far. Plots and ``report.html`` are written at the end, also after an
interruption.

Nothing here prints: progress goes to a :class:`LabProgress`, results come back as a :class:`LabResult`.
"""

from __future__ import annotations

import contextlib
import csv
import datetime as _dt
import json
import math
import os
import platform
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

from .. import __version__
from ..db import Session, connect, run_script
from ..errors import BadInputError, LockscopeError, ScratchServerError
from ..pgbench import PgbenchResult, run_pgbench
from ..server import ScratchServer, ScratchSettings
from ..watch.sampler import CPU, BackgroundSampler, WaitSummary, summarize

__all__ = [
    "MAX_DURATION_S",
    "MAX_POINTS",
    "RESULTS_SCHEMA",
    "LabContext",
    "LabProgress",
    "LabResult",
    "LoadFigures",
    "NullProgress",
    "Scenario",
    "ServerInfo",
    "StatementFigures",
    "load_results",
    "measure_load",
    "new_results_dir",
    "read_statements",
    "reset_statements",
    "run_lab",
    "write_results",
]

#: ``schema`` key of results.json.
RESULTS_SCHEMA = "lockscope/lab/v1"
#: Upper bound on points in one run (count); a run planning more is refused.
MAX_POINTS = 2000
#: Upper bound on one pgbench run (s).
MAX_DURATION_S = 600
Row = dict[str, Any]


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


@dataclass(frozen=True)
class ServerInfo:
    """One PostgreSQL installation a run used.

    :ivar pg_version: ``server_version`` (e.g. ``18.6``).
    :ivar server_version_num: e.g. 180006.
    :ivar bin_dir: its bin directory.
    """

    pg_version: str
    server_version_num: int
    bin_dir: str

    @property
    def major(self) -> int:
        return self.server_version_num // 10000


@dataclass(frozen=True)
class StatementFigures:
    """pg_stat_statements figures of one statement over one point (counters reset before the point).

    :ivar query: normalised query text.
    :ivar calls: executions (count).
    :ivar plans: plannings (count; 0 when a cached generic plan was reused).
    :ivar mean_plan_ms: mean planning time per planning (ms; NaN without plannings).
    :ivar mean_exec_ms: mean execution time (ms).
    :ivar total_plan_ms: total planning time (ms).
    :ivar total_exec_ms: total execution time (ms).
    """

    query: str
    calls: int
    plans: int
    mean_plan_ms: float
    mean_exec_ms: float
    total_plan_ms: float
    total_exec_ms: float


@dataclass(frozen=True)
class LoadFigures:
    """What one concurrent pgbench run measured.

    :ivar tps: transactions per second (without connection time).
    :ivar latency_ms: mean transaction latency (ms).
    :ivar transactions: transactions processed (count).
    :ivar failed: failed transactions (count).
    :ivar mean_plan_ms: mean planning time per statement execution (ms; total planning / calls; NaN if unknown).
    :ivar mean_exec_ms: mean execution time per statement execution (ms; NaN if unknown).
    :ivar statement_calls: statement executions seen by pg_stat_statements (count).
    :ivar samples: active-session sampling ticks (count).
    :ivar active_session_samples: active client sessions summed over ticks (count).
    :ivar aas: average active sessions (sessions).
    :ivar lockmanager_share: fraction (0..1) of active-session samples waiting on ``LWLock:LockManager``.
    :ivar cpu_share: fraction (0..1) of active-session samples not waiting (CPU).
    :ivar top_wait: the most sampled wait event (``type:event``; CPU excluded), or ``""``.
    :ivar top_wait_share: its fraction (0..1) of active-session samples.
    :ivar waits: ``type:event`` (or ``CPU``) -> active-session samples (count).
    :ivar statements: per-statement pg_stat_statements figures.
    """

    tps: float
    latency_ms: float
    transactions: int
    failed: int
    mean_plan_ms: float
    mean_exec_ms: float
    statement_calls: int
    samples: int
    active_session_samples: int
    aas: float
    lockmanager_share: float
    cpu_share: float
    top_wait: str
    top_wait_share: float
    waits: dict[str, int] = field(default_factory=dict)
    statements: tuple[StatementFigures, ...] = ()

    def row(self) -> Row:
        """The flat part of these figures for a results row (``waits`` as ``a=1;b=2`` text)."""
        out = {k: v for k, v in asdict(self).items() if k not in ("waits", "statements")}
        out["waits"] = ";".join(f"{k}={v}" for k, v in sorted(self.waits.items(), key=lambda kv: -kv[1]))
        return out


def reset_statements(session: Session) -> None:
    """``pg_stat_statements_reset()`` (needs the extension in the session's database)."""
    session.query("lab_statements_reset")


def read_statements(session: Session) -> tuple[StatementFigures, ...]:
    """pg_stat_statements rows of the session's database since the last reset, busiest first (lockscope's
    own sampling and probing statements left out)."""
    out = []
    for r in session.query("lab_statements"):
        plans = int(r["plans"] or 0)
        out.append(StatementFigures(
            query=" ".join(str(r["query"]).split()),
            calls=int(r["calls"]),
            plans=plans,
            mean_plan_ms=float(r["mean_plan_time"]) if plans else math.nan,
            mean_exec_ms=float(r["mean_exec_time"]),
            total_plan_ms=float(r["total_plan_time"]),
            total_exec_ms=float(r["total_exec_time"]),
        ))
    return tuple(out)


def _wait_figures(summary: WaitSummary) -> dict[str, Any]:
    total = summary.active_session_samples
    waits = {k: v for k, v in summary.by_wait.items() if k != CPU}
    top = max(waits.items(), key=lambda kv: kv[1]) if waits else ("", 0)
    return {
        "samples": summary.samples,
        "active_session_samples": total,
        "aas": summary.aas,
        "lockmanager_share": summary.lockmanager_share,
        "cpu_share": summary.by_wait.get(CPU, 0) / total if total else 0.0,
        "top_wait": top[0],
        "top_wait_share": top[1] / total if total else 0.0,
        "waits": dict(summary.by_wait),
    }


def measure_load(
    server: ScratchServer,
    *,
    clients: int,
    duration_s: float,
    protocol: str = "simple",
    select_only: bool = True,
    script_file: Path | None = None,
    sample_hz: float = 10.0,
    warmup_s: float = 0.0,
    statement_filter: Callable[[StatementFigures], bool] = lambda s: True,
) -> LoadFigures:
    """Run pgbench on the scratch server while sampling wait events, with pg_stat_statements reset first.

    :param clients: ``-c`` (count).
    :param duration_s: ``-T`` (s).
    :param protocol: ``simple``, ``extended`` or ``prepared``.
    :param select_only: built-in select-only transaction (``-S``); ignored with ``script_file``.
    :param script_file: a pgbench script (``-f``) instead of the built-in transaction.
    :param sample_hz: pg_stat_activity sampling rate (Hz).
    :param warmup_s: an unmeasured pgbench run first (s; 0 = none): fills caches after the restart.
    :param statement_filter: which pg_stat_statements rows make up the planning/execution means.
    :raises ScratchServerError: if pgbench fails.
    """
    extra: list[str] = ["-f", str(script_file)] if script_file is not None else []
    only = select_only and script_file is None
    if warmup_s >= 1:
        run_pgbench(server, clients=clients, duration_s=warmup_s, protocol=protocol, select_only=only,
                    extra_args=extra)
    with connect(server.conninfo()) as session:
        reset_statements(session)
    with BackgroundSampler(server.conninfo(), hz=sample_hz) as sampler:
        result: PgbenchResult = run_pgbench(server, clients=clients, duration_s=duration_s, protocol=protocol,
                                            select_only=only, extra_args=extra)
    waits = summarize(sampler.samples)
    with connect(server.conninfo()) as session:
        statements = tuple(s for s in read_statements(session) if statement_filter(s))
    calls = sum(s.calls for s in statements)
    return LoadFigures(
        tps=result.tps,
        latency_ms=result.latency_ms,
        transactions=result.transactions,
        failed=result.failed,
        mean_plan_ms=sum(s.total_plan_ms for s in statements) / calls if calls else math.nan,
        mean_exec_ms=sum(s.total_exec_ms for s in statements) / calls if calls else math.nan,
        statement_calls=calls,
        statements=statements,
        **_wait_figures(waits),
    )


# -- results directory ---------------------------------------------------------------------------------------------
def new_results_dir(scenario: str, out: Path | None = None, *, now: _dt.datetime | None = None) -> Path:
    """Create the results directory: ``out`` (must be empty or absent) or ``./lockscope-lab-SCENARIO-<stamp>``.

    :raises BadInputError: when ``out`` exists and is not an empty directory.
    """
    if out is None:
        stamp = (now or _dt.datetime.now()).strftime("%Y%m%d-%H%M%S")
        out = Path(f"lockscope-lab-{scenario}-{stamp}")
        n = 1
        while out.exists():
            n += 1
            out = Path(f"lockscope-lab-{scenario}-{stamp}-{n}")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise BadInputError(f"--out {out}: exists and is not an empty directory")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BadInputError(f"--out {out}: {exc.strerror}") from None
    return out


@dataclass(frozen=True)
class LabResult:
    """One lab run as written to ``results.json``.

    :ivar scenario: ``indexes``, ``partitions``, ``prepared``, ``observer``, ``replay``.
    :ivar parameters: the run's parameters (profile, lists, durations...).
    :ivar servers: the PostgreSQL installations used.
    :ivar rows: one flat dict per point.
    :ivar status: ``complete``, ``interrupted`` (Ctrl-C), ``time limit`` or ``failed: <message>``.
    :ivar started: ISO date-time the run started.
    :ivar elapsed_s: wall time (s).
    :ivar cores: CPU cores of the machine (count).
    :ivar machine: platform description.
    :ivar lockscope_version: e.g. ``0.1.0``.
    :ivar extras: scenario-specific data (e.g. replay's per-statement tables).
    :ivar out_dir: the results directory.
    """

    scenario: str
    parameters: dict[str, Any]
    servers: tuple[ServerInfo, ...]
    rows: tuple[Row, ...]
    status: str
    started: str
    elapsed_s: float
    cores: int
    machine: str
    lockscope_version: str
    extras: dict[str, Any]
    out_dir: Path

    @property
    def complete(self) -> bool:
        return self.status == "complete"

    def to_dict(self) -> dict[str, Any]:
        """The results.json document."""
        return {
            "schema": RESULTS_SCHEMA,
            "scenario": self.scenario,
            "status": self.status,
            "lockscope_version": self.lockscope_version,
            "started": self.started,
            "elapsed_s": round(self.elapsed_s, 1),
            "machine": {"cores": self.cores, "platform": self.machine},
            "servers": [asdict(s) for s in self.servers],
            "parameters": self.parameters,
            "rows": list(self.rows),
            "extras": self.extras,
        }


def _json_default(value: Any) -> Any:
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def _clean(value: Any) -> Any:
    """NaN/inf -> None (JSON has no NaN)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def write_results(result: LabResult) -> None:
    """(Re)write ``results.json`` and ``results.csv`` in the results directory, each atomically."""
    out = result.out_dir
    doc = _clean(result.to_dict())
    tmp = out / ".results.json.tmp"
    tmp.write_text(json.dumps(doc, indent=2, default=_json_default) + "\n")
    tmp.replace(out / "results.json")
    columns: list[str] = []
    for row in result.rows:
        for key in row:
            if key not in columns:
                columns.append(key)
    tmp = out / ".results.csv.tmp"
    with open(tmp, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns)
        writer.writeheader()
        for row in result.rows:
            writer.writerow({k: ("" if v is None or (isinstance(v, float) and math.isnan(v)) else v)
                             for k, v in row.items()})
    tmp.replace(out / "results.csv")


def load_results(path: Path) -> LabResult:
    """Read a results directory (or its results.json) back.

    :raises BadInputError: missing, unreadable or not a lockscope lab results file.
    """
    file = path / "results.json" if path.is_dir() else path
    try:
        doc = json.loads(file.read_text())
    except OSError as exc:
        raise BadInputError(f"{file}: {exc.strerror}") from None
    except ValueError:
        raise BadInputError(f"{file}: not JSON") from None
    if not isinstance(doc, dict) or doc.get("schema") != RESULTS_SCHEMA:
        raise BadInputError(f"{file}: not a lockscope lab results file (schema {RESULTS_SCHEMA})")
    rows = tuple({k: (math.nan if v is None else v) for k, v in r.items()} for r in doc.get("rows", []))
    return LabResult(
        scenario=doc["scenario"],
        parameters=doc.get("parameters", {}),
        servers=tuple(ServerInfo(**s) for s in doc.get("servers", [])),
        rows=rows,
        status=doc.get("status", "?"),
        started=doc.get("started", ""),
        elapsed_s=float(doc.get("elapsed_s") or 0),
        cores=int(doc.get("machine", {}).get("cores") or 0),
        machine=str(doc.get("machine", {}).get("platform", "")),
        lockscope_version=str(doc.get("lockscope_version", "")),
        extras=doc.get("extras", {}),
        out_dir=file.parent,
    )


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
        result = self.result(status)
        write_results(result)
        return result

    def result(self, status: str) -> LabResult:
        return LabResult(
            scenario=self.scenario,
            parameters=self.parameters,
            servers=tuple(self.servers),
            rows=tuple(self.rows),
            status=status,
            started=self.started.isoformat(timespec="seconds"),
            elapsed_s=time.monotonic() - self._t0,
            cores=os.cpu_count() or 1,
            machine=f"{platform.system()} {platform.machine()} {platform.release()}",
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


# -- helpers shared by scenarios ---------------------------------------------------------------------------------
def install_pg_stat_statements(server: ScratchServer) -> None:
    """``CREATE EXTENSION pg_stat_statements`` on the scratch server.

    :raises ScratchServerError: when the installation lacks it (the lab's planning figures need it).
    """
    try:
        run_script(server.conninfo(), "create extension if not exists pg_stat_statements")
    except LockscopeError as exc:
        raise ScratchServerError(f"pg_stat_statements is not usable with {server.bin_dir}: {exc}") from None


def parse_int_list(text: str, *, what: str, minimum: int = 0, maximum: int = 100_000) -> tuple[int, ...]:
    """``"0,8,32"`` or ``"0-30"`` / ``"0-30:5"`` (range with step) -> sorted distinct ints.

    :raises BadInputError: not numbers, out of ``minimum..maximum``, empty.
    """
    values: set[int] = set()
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        try:
            if "-" in part[1:]:
                span, _, step = part.partition(":")
                lo, hi = span.split("-", 1)
                values.update(range(int(lo), int(hi) + 1, int(step) if step else 1))
            else:
                values.add(int(part))
        except ValueError:
            raise BadInputError(f"{what}: not a list of whole numbers: {text!r}") from None
    if not values:
        raise BadInputError(f"{what}: empty list")
    bad = [v for v in values if not minimum <= v <= maximum]
    if bad:
        raise BadInputError(f"{what}: {bad[0]} is outside {minimum}..{maximum}")
    return tuple(sorted(values))


def check_load_options(*, clients: int, duration_s: float, sample_hz: float, warmup_s: float = 0.0) -> None:
    """Bounds shared by the load scenarios.

    :raises BadInputError: clients outside 1..200, duration outside 1..600 s, rate outside 1..100 Hz.
    """
    if not 1 <= clients <= 200:
        raise BadInputError("--clients must be between 1 and 200")
    if not 1 <= duration_s <= MAX_DURATION_S:
        raise BadInputError(f"--duration must be between 1 and {MAX_DURATION_S} s")
    if not 0 <= warmup_s <= MAX_DURATION_S:
        raise BadInputError(f"--warmup must be between 0 and {MAX_DURATION_S} s")
    if not 1 <= sample_hz <= 100:
        raise BadInputError("--sample-hz must be between 1 and 100")


def version_label(info: ServerInfo) -> str:
    """``PG 18.6``."""
    return f"PG {info.pg_version}"
