"""Benchmark: the forecast on five open-source applications it was not developed against (issue 27, "Show").

For each application in ``benchmarks/apps/<app>/`` (``schema.sql``: an extract of its real schema; ``generate.sql``:
data at realistic sizes; one pgbench script per statement its code really sends, each citing file:line;
``mix.args``: the pgbench ``-f script@weight`` arguments of a mix; ``SOURCE.md``: repository, commit, licence) this
script starts a scratch PostgreSQL 18 (embedded; ``max_locks_per_transaction`` 16, ``pg_stat_statements`` preloaded
with track_planning, ``max_parallel_workers_per_gather`` 0), loads the schema and data, then for each client count
(``--clients``, default 1 2 4 8 16 32; pgbench ``-M simple``, ``--seconds`` per point, default 6):

- **statement mode**, each statement alone, as a user runs ``lockscope forecast "SQL" --dsn ...`` (since round 3):
  pg_stat_statements reset, pgbench of the statement for ``--seconds`` in the background (longer when the
  forecasts need it: :meth:`StatementMode.load_s`), after 2 s ``lockscope forecast`` of the statement
  (:func:`lockscope.forecast.engine.forecast_statement` with ``dsn``, the script's example values bound) at
  that client count: the cost lockscope finds on that server by itself
  (pg_stat_statements' mean over the sampled seconds since round 5, before it the mean since the reset, the
  load's first seconds) deflated to CPU by ``STATEMENT_SAMPLE_S`` (2 s; ``--sample-s``) of
  wait-event samples of the load (and pg_stat_kcache if installed), each client's think time taken from those
  seconds by Little's law as workload mode takes it (since round 4; the forecast with think time 0 recorded
  beside it), the LockManager share checked against those seconds' sampled one; measured: pgbench's TPS over
  the whole run. With ``--short-sample-s``, a second forecast right after the first in the same load, with
  that many seconds of samples (only its LockManager fields kept, ``short_*``). Then, after the load (unless
  ``--no-timed``), with the cost timed on the scratch server before any load (``EXPLAIN
  ANALYZE``, median of 20, :func:`lockscope.db.time_on_scratch`, as ``forecast --scratch --setup`` gets);
- **workload mode** (unless ``--no-workload``), the mix: pgbench runs ``--seconds`` + 2 s in the background while
  :func:`lockscope.forecast.engine.forecast_workload` reads pg_stat_statements over a ``--seconds`` - 1 s
  interval with wait events sampled (as ``lockscope forecast --interval`` on the live server); recorded: the
  FIRST estimate at the measured operating point before any re-anchoring (``Anchor.model_tps``) against the
  measured calls/s and pgbench's TPS, the re-anchoring factor, the sampled LockManager share against the
  modelled one (first estimate and re-anchored), and the coverage: the share of pg_stat_statements' calls and
  execution time since the reset (this script's own reading; lockscope's own statements, tagged ``/* lockscope
  */`` or reading ``pg_catalog``, left out) of the statements
  in the model, with lockscope's own coverage figure when the report has one (``ForecastReport.coverage``).

Each application's whole run (server, data, every point) holds the machine's load lock (``/tmp/lockscope-load.lock``,
exclusive flock), so that no other load starts between its points; never run this script under ``flock`` itself.
Output: ``OUT/results.json`` (schema ``lockscope/forecast-apps/v1``) and ``OUT/summary.md`` (default
``benchmarks/results/forecast-apps-<UTC date>/``), the Markdown also printed.

    .venv/bin/python benchmarks/forecast_apps.py                       # 5 apps x 6 client counts, ~45 min
    .venv/bin/python benchmarks/forecast_apps.py --quick               # listmonk, clients 2 and 16
    .venv/bin/python benchmarks/forecast_apps.py --apps umami --clients 2 --clients 16 --seconds 4
    .venv/bin/python benchmarks/forecast_apps.py --statements count_unread --clients 32 --sample-s 20 \
        --short-sample-s 2 --no-workload                               # one statement judged by 20 s of samples

``--statements NAME`` (repeatable) keeps only those statements, in every application (of ``--apps``) that has one.

``results.json``: ``schema``, ``started``/``finished`` (UTC), ``git_commit``, ``command``, ``machine`` (cores,
load average and ``uptime`` before and after), ``profile`` (clients, seconds, sample_s, short_sample_s, timed,
workload, statements), ``apps``: APP -> ``{server`` (version),
``generate_s`` (schema and data load, s), ``tables`` (relation -> rows), ``statements``: NAME -> ``{source``
(file:line comment), ``text`` (the bound example), ``timed_plan_ms``, ``timed_exec_ms}``, ``statement_points``:
``[{statement, clients, sample_s`` (the forecast's seconds of samples), ``load_s`` (pgbench's seconds, of the
last try), ``load_retries`` (tries redone with a longer load: the forecast had ended after the load),
``measured_tps`` (pgbench), ``forecast_done_s`` (the forecast's end, s after pgbench's start),
``sampled_lockmanager_share, aas, sampled_calls_per_s, population`` (of the forecast's ``sample_s`` of samples),
``sampled_lockmanager_share_95`` (its 95 % interval, ``LivePoint.lockmanager_interval``: ``{low, high,
half_width`` (fractions), ``batches}``, None when too few batches), ``sampled_too_uncertain`` (the anchor's: half
width over 10 points),
``aas_cpu``, ``forecast_tps`` (pg_stat_statements cost, the sampled seconds' think time since round 4),
``ratio, think_ms, think_note`` (where the think time comes from), ``forecast_tps_think0, ratio_think0`` (the same
model with think time 0, as before round 4), ``own_cost_source, cost_window`` (since round 5: ``sampled``, the mean
over the 2 s of samples, or ``reset``, since pg_stat_statements' reset), ``pgss_ms_per_call`` (its mean execution
+ planning, wall), ``sampled_ms_per_call`` (AAS / calls/s of the samples), ``server_time_note`` (the report's note
when the two are more than 2x apart), ``timed_forecast_tps, timed_ratio,
modelled_lockmanager_share`` (at ``clients``), ``model_lockmanager_share_at_population, lockmanager_reproduced``
(the report's ``model_vs_now``), ``short_sample_s, short_done_s`` and ``short_`` + the LockManager fields above
(``--short-sample-s``), ``error}]``,
``workload_points``: ``[{clients, pgbench_tps, measured_calls_per_s`` (the anchor's), ``first_estimate_tps,
first_ratio`` (first estimate / measured calls/s), ``first_ratio_pgbench``, ``factor, anchored_tps,
population, think_ms, sampled_lockmanager_share, sampled_lockmanager_share_95, modelled_lockmanager_share_first,
modelled_lockmanager_share_anchored, coverage_calls, coverage_time, lockscope_coverage, uncovered`` (normalised
texts of pg_stat_statements rows not in the model), ``notes, error}]}``. Ratios are forecast / measured.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import math
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lockscope.db import Session, connect, run_script, time_on_scratch
from lockscope.errors import LockscopeError
from lockscope.forecast.calibration import DEFAULT_CALIBRATION
from lockscope.forecast.engine import (
    STATEMENT_SAMPLE_S,
    ForecastReport,
    forecast_statement,
    forecast_workload,
    transaction_class,
)
from lockscope.forecast.model import forecast_curve, workload_demands
from lockscope.lab.load import install_pg_stat_statements, read_statements, reset_statements
from lockscope.pgbench import start_pgbench
from lockscope.report.forecast_json import interval_dict
from lockscope.server import ScratchServer, ScratchSettings

SCHEMA_ID = "lockscope/forecast-apps/v1"
ROOT = Path(__file__).resolve().parent.parent
APPS_DIR = ROOT / "benchmarks" / "apps"
APPS = ("listmonk", "miniflux", "umami", "synapse", "lemmy")
CLIENTS = (1, 2, 4, 8, 16, 32)
QUICK_CLIENTS = (2, 16)
LOAD_LOCK = Path("/tmp/lockscope-load.lock")
TOLERANCE = 0.25
NOT_STATEMENTS = {"schema.sql", "generate.sql"}
#: Take the machine's load lock around each point; a caller that holds it already (the test's ``load_lock``
#: fixture: a second flock of the same file in one process would wait for itself) sets this False.
HOLD_LOAD_LOCK = True


_held = [0]


@contextlib.contextmanager
def load_lock() -> Iterator[None]:
    """The machine's load lock (exclusive flock on /tmp/lockscope-load.lock), re-entrant within this process: one
    application's whole run holds it (its points then see no other load run start between them)."""
    if not HOLD_LOAD_LOCK or _held[0]:
        _held[0] += 1
        try:
            yield
        finally:
            _held[0] -= 1
        return
    with open(LOAD_LOCK, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        _held[0] += 1
        try:
            yield
        finally:
            _held[0] -= 1
            fcntl.flock(fh, fcntl.LOCK_UN)


@dataclass(frozen=True)
class AppStatement:
    """One statement of an application: its pgbench script and the example values bound for the forecast.

    :ivar name: the script's file name without ``.sql``.
    :ivar path: the pgbench script.
    :ivar source: the script's first comment line (file:line in the application).
    :ivar text: the statement with the example values of its ``-- example:`` line for its pgbench variables.
    """

    name: str
    path: Path
    source: str
    text: str


def read_statement(path: Path) -> AppStatement:
    """Parse a pgbench script of benchmarks/apps: ``--`` comments (the first: the source; ``-- example: a=1 b=2``:
    values of the variables), ``\\set`` lines, then one SQL statement with ``:var`` references."""
    lines = path.read_text().splitlines()
    comments = [ln[2:].strip() for ln in lines if ln.startswith("--")]
    example = next((c for c in comments if c.startswith("example:")), "example:")
    values = dict(kv.split("=", 1) for kv in example.removeprefix("example:").split())
    body = "\n".join(ln for ln in lines if not ln.startswith(("--", "\\"))).strip().rstrip(";")
    for var in sorted(values, key=len, reverse=True):
        body = re.sub(rf":{var}\b", values[var], body)
    if re.search(r"(?<!:):[a-z_]", body):  # a variable left, in a literal too ('...-:u')
        raise SystemExit(f"{path}: a pgbench variable has no value on the example line")
    return AppStatement(path.stem, path, comments[0] if comments else "", body)


def app_statements(app: str) -> list[AppStatement]:
    """The statements of an application (every ``*.sql`` but the schema and the generator), by name."""
    return [read_statement(p) for p in sorted((APPS_DIR / app).glob("*.sql")) if p.name not in NOT_STATEMENTS]


def mix_args(app: str) -> list[str]:
    """The mix's pgbench arguments, script paths made absolute."""
    out = []
    for arg in (APPS_DIR / app / "mix.args").read_text().split():
        out.append(str(APPS_DIR / app / arg) if arg.endswith(tuple(f".sql@{i}" for i in range(1, 100))) else arg)
    return out


def load_app(server: ScratchServer, app: str) -> tuple[float, dict[str, int]]:
    """Schema and data into the scratch server: (seconds taken, rows per table)."""
    t0 = time.monotonic()
    run_script(server.conninfo(), (APPS_DIR / app / "schema.sql").read_text())
    run_script(server.conninfo(), (APPS_DIR / app / "generate.sql").read_text())
    took = time.monotonic() - t0
    with connect(server.conninfo()) as session:
        rows = session.oracle_rows("select relname::text, reltuples::bigint from pg_class where relkind = 'r' "
                                   "and relnamespace = 'public'::regnamespace order by 1")
    return took, {str(r[0]): int(r[1]) for r in rows}


def _ratio(forecast: float | None, measured: float) -> float | None:
    return forecast / measured if forecast is not None and measured > 0 else None


#: Seconds into a statement's load at which ``lockscope forecast --dsn`` is called (as a user runs it).
STATEMENT_FORECAST_AT_S = 2.0
#: A statement's load runs at least this long (s): past the forecast's 2 s of samples and its probe.
STATEMENT_LOAD_MIN_S = 6.0
#: Seconds a statement-mode forecast takes beyond its samples (its probe, the catalog reads; round 3: 0.2-0.9 s),
#: with room to spare: a load is made this much longer than the samples it must cover.
PROBE_MARGIN_S = 2.0


@dataclass(frozen=True)
class StatementMode:
    """How statement mode is run at each point (``--sample-s``, ``--short-sample-s``, ``--no-timed``).

    :ivar sample_s: the forecast's seconds of samples (``forecast_statement(sample_s=...)``); None: its default,
        ``STATEMENT_SAMPLE_S``.
    :ivar short_sample_s: seconds of samples of a second forecast of the same statement right after the first,
        in the same load (the ``short_*`` fields: what a shorter sample gives on that load); None: none.
    :ivar timed: also forecast with the cost timed on the scratch server (``timed_*`` fields).
    """

    sample_s: float | None = None
    short_sample_s: float | None = None
    timed: bool = True

    def load_s(self, seconds: float) -> float:
        """The statement's pgbench seconds: ``seconds``, at least :data:`STATEMENT_LOAD_MIN_S` and long enough for
        the forecast(s) started :data:`STATEMENT_FORECAST_AT_S` into it, each its samples + :data:`PROBE_MARGIN_S`."""
        need = STATEMENT_FORECAST_AT_S + (self.sample_s or STATEMENT_SAMPLE_S) + PROBE_MARGIN_S
        if self.short_sample_s is not None:
            need += self.short_sample_s + PROBE_MARGIN_S
        return max(seconds, STATEMENT_LOAD_MIN_S, need)


def _statement_forecast(session: Session, server: ScratchServer, st: AppStatement, clients: int,
                        sample_s: float | None) -> ForecastReport:
    """``forecast_statement`` of ``st`` with ``dsn`` (as ``lockscope forecast "SQL" --dsn``), ``sample_s`` seconds
    of samples (None: its default)."""
    extra: dict[str, Any] = {} if sample_s is None else {"sample_s": sample_s}
    return forecast_statement(session, st.text, calibration=DEFAULT_CALIBRATION, cores=os.cpu_count() or 1,
                              clients=clients, dsn=server.conninfo(), **extra)


def statement_point(server: ScratchServer, st: AppStatement, clients: int, seconds: float,
                    timed_exec_ms: float | None, mode: StatementMode = StatementMode()) -> dict[str, Any]:
    """One statement alone at ``clients``, as a user runs statement mode: pgbench of the statement in the
    background (``mode.load_s(seconds)``), after :data:`STATEMENT_FORECAST_AT_S` ``forecast_statement(...,
    dsn=...)`` (pg_stat_statements' cost, deflated to CPU by ``mode.sample_s`` of samples of the load), then the
    short one when asked, the load then runs to its end and pgbench's TPS is the measured one; the timed cost's
    forecast after the load (no samples: timed alone).

    A forecast that ends after its load did (its probe under a heavy load: 2026-12-07, Lemmy's front page at 32
    clients, 0.5-1 s of planning a call, done 7-9 s into a 6 s load) sampled seconds with the load gone or
    going: the point is run again, at most :data:`LOAD_RETRIES` times, with the load lasting until the last
    try's forecast ended plus :data:`PROBE_MARGIN_S` (``load_retries``: the tries redone; ``load_s``: the last
    load's seconds)."""
    load_s = mode.load_s(seconds)
    for retry in range(LOAD_RETRIES + 1):
        rec, found, short, timed = _statement_try(server, st, clients, load_s, timed_exec_ms, mode)
        rec["load_retries"] = retry
        ended = rec.get("short_done_s") or rec.get("forecast_done_s", 0.0)
        if rec["error"] is not None or ended <= load_s:
            break
        load_s = math.ceil(ended + PROBE_MARGIN_S)
    if timed is not None:
        rec.update(timed_forecast_tps=timed.measured.forecast.throughput_tps,
                   timed_ratio=_ratio(timed.measured.forecast.throughput_tps, rec["measured_tps"]))
    if short is not None:
        rec["short_sample_s"] = mode.short_sample_s
        rec.update({f"short_{k}": v for k, v in _lockmanager_fields(short).items()})
    if found is not None:
        rec.update(_forecast_fields(found, rec["measured_tps"]))
    return rec


#: Statement points re-run with a longer load when their forecast ended after the load (count).
LOAD_RETRIES = 2


def _statement_try(server: ScratchServer, st: AppStatement, clients: int, load_s: float,
                   timed_exec_ms: float | None, mode: StatementMode
                   ) -> tuple[dict[str, Any], ForecastReport | None, ForecastReport | None, ForecastReport | None]:
    """One run of :func:`statement_point` with a load of ``load_s`` seconds: its record so far, the forecast,
    the short one and the timed one (each None when not made)."""
    rec: dict[str, Any] = {"statement": st.name, "clients": clients, "error": None,
                           "sample_s": mode.sample_s or STATEMENT_SAMPLE_S, "load_s": load_s}
    found = short = timed = None
    try:
        with load_lock(), connect(server.conninfo()) as session:
            reset_statements(session)
            t0 = time.monotonic()
            with start_pgbench(server, clients=clients, duration_s=load_s, select_only=False,
                               extra_args=["-f", str(st.path)]) as run:
                time.sleep(STATEMENT_FORECAST_AT_S)
                try:
                    found = _statement_forecast(session, server, st, clients, mode.sample_s)
                    rec["forecast_done_s"] = time.monotonic() - t0
                    if mode.short_sample_s is not None:
                        short = _statement_forecast(session, server, st, clients, mode.short_sample_s)
                        rec["short_done_s"] = time.monotonic() - t0
                except LockscopeError as exc:
                    rec["error"] = f"{type(exc).__name__}: {exc}"
                rec.setdefault("forecast_done_s", time.monotonic() - t0)
                rec["measured_tps"] = run.wait().tps
            if timed_exec_ms is not None and mode.timed:
                timed = forecast_statement(session, st.text, calibration=DEFAULT_CALIBRATION,
                                           cores=os.cpu_count() or 1, clients=clients, exec_cost_ms=timed_exec_ms)
    except LockscopeError as exc:
        rec.setdefault("measured_tps", math.nan)
        rec["error"] = rec["error"] or f"{type(exc).__name__}: {exc}"
    return rec, found, short, timed


def _forecast_fields(found: ForecastReport, measured_tps: float) -> dict[str, Any]:
    """A statement point's fields from its forecast (``found``) against pgbench's TPS."""
    f, live = found.measured.forecast, found.live
    no_think = forecast_curve(found.measured.demands, found.cores, [found.clients])[0].throughput_tps
    own_source = found.measured.statements[0][0].own_source
    return {"forecast_tps": f.throughput_tps, "ratio": _ratio(f.throughput_tps, measured_tps),
            "think_ms": found.think_s * 1000.0,
            "think_note": next((n for n in found.notes if n.startswith("think time")), None),
            "forecast_tps_think0": no_think, "ratio_think0": _ratio(no_think, measured_tps),
            "own_cost_source": own_source, "cost_window": _cost_window(own_source),
            "pgss_ms_per_call": _pgss_ms_per_call(own_source),
            "sampled_ms_per_call": live.server_time_s * 1000.0 if live and live.rate_tps > 0 else None,
            "server_time_note": next((n for n in found.notes if "measures of the time in the server" in n), None),
            "modelled_lockmanager_share": f.lockmanager_share,
            "aas": live.aas if live else None, "aas_cpu": live.aas_cpu if live else None,
            "sampled_calls_per_s": live.rate_tps if live else None,
            **_lockmanager_fields(found)}


def _lockmanager_fields(found: ForecastReport) -> dict[str, Any]:
    """The sampled LockManager share of a forecast's samples with its 95 % interval (``low, high, half_width,
    batches``: fractions and a count; None when too few batches), the population, the model's share there, and
    the anchor's verdicts (None without samples)."""
    live, a = found.live, found.anchor
    return {"sampled_lockmanager_share": live.lockmanager_share if live else None,
            "sampled_lockmanager_share_95": interval_dict(live.lockmanager_interval) if live else None,
            "population": live.population if live else None,
            "model_lockmanager_share_at_population": a.model_lockmanager_share if a else None,
            "lockmanager_reproduced": a.lockmanager_reproduced if a else None,
            "sampled_too_uncertain": a.sampled_too_uncertain if a else None}


def _cost_window(source: str) -> str | None:
    """The window of pg_stat_statements' mean in a cost's source (since round 5): ``sampled`` (the forecast's 2 s
    of samples) or ``reset`` (since pg_stat_statements' reset)."""
    if "pg_stat_statements on this server over the" in source:
        return "sampled"
    return "reset" if "pg_stat_statements on this server since its reset" in source else None


def _pgss_ms_per_call(source: str) -> float | None:
    """pg_stat_statements' mean wall time per call (ms, execution + planning, before the deflation) in a cost's
    source."""
    found = re.search(r": ([0-9.]+) ms execution over [0-9,]+ calls, ([0-9.]+) ms planning", source)
    return float(found.group(1)) + float(found.group(2)) if found else None


def _coverage(report: ForecastReport, session: Session) -> dict[str, Any]:
    """Shares of pg_stat_statements' calls and execution time since the reset that the model has (its shapes are
    named by query id), and the texts of what it lacks."""
    modelled = {s.name for s, _ in report.measured.statements}
    rows = [r for r in read_statements(session) if r.calls and not _lockscope_own(r.query)]
    calls = sum(r.calls for r in rows)
    time_ms = sum(r.total_exec_ms + r.total_plan_ms for r in rows)
    inside = [r for r in rows if str(r.queryid) in modelled]
    return {"coverage_calls": sum(r.calls for r in inside) / calls if calls else None,
            "coverage_time": sum(r.total_exec_ms + r.total_plan_ms for r in inside) / time_ms if time_ms else None,
            "uncovered": [r.query[:160] for r in rows if str(r.queryid) not in modelled]}


def _lockscope_own(query: str) -> bool:
    """A pg_stat_statements text of lockscope's own probing and sampling (its catalog reads), not the app's."""
    return "/* lockscope */" in query or "pg_catalog." in query


def _first_lockmanager(report: ForecastReport) -> float | None:
    """The model's LockManager share at the operating point with the first-estimate costs (factor 1)."""
    if report.live is None:
        return None
    demands = workload_demands([transaction_class(s) for s, _ in report.measured.statements], report.calibration)
    return forecast_curve(demands, report.cores, [max(1, report.live.population)],
                          think_s=report.think_s)[0].lockmanager_share


def workload_point(server: ScratchServer, app: str, clients: int, seconds: float) -> dict[str, Any]:
    """The mix at ``clients``: pgbench in the background, ``forecast_workload`` over an interval inside its run."""
    rec: dict[str, Any] = {"clients": clients, "error": None}
    with load_lock(), connect(server.conninfo()) as session:
        reset_statements(session)
        with start_pgbench(server, clients=clients, duration_s=seconds + 2, select_only=False,
                           extra_args=mix_args(app)) as run:
            time.sleep(1.0)
            try:
                report = forecast_workload(session, calibration=DEFAULT_CALIBRATION, cores=os.cpu_count() or 1,
                                           clients=None, interval_s=max(1.0, seconds - 1), dsn=server.conninfo())
            except LockscopeError as exc:
                rec["error"] = f"{type(exc).__name__}: {exc}"
                report = None
            rec["pgbench_tps"] = run.wait().tps
        if report is not None:
            rec.update(_coverage(report, session))
    if report is None:
        return rec
    a, live = report.anchor, report.live
    rec.update(notes=list(report.notes), lockscope_coverage=_jsonable(getattr(report, "coverage", None)))
    if a is None or live is None:
        rec["error"] = "no live operating point (no samples or no calls)"
        return rec
    rec.update(measured_calls_per_s=a.measured_tps, first_estimate_tps=a.model_tps,
               first_ratio=_ratio(a.model_tps, a.measured_tps), first_ratio_pgbench=_ratio(a.model_tps,
                                                                                           rec["pgbench_tps"]),
               factor=a.factor, anchored_tps=a.anchored_tps, population=live.population,
               think_ms=report.think_s * 1000.0, sampled_lockmanager_share=live.lockmanager_share,
               sampled_lockmanager_share_95=interval_dict(live.lockmanager_interval),
               modelled_lockmanager_share_first=_first_lockmanager(report),
               modelled_lockmanager_share_anchored=a.model_lockmanager_share)
    return rec


def _jsonable(value: Any) -> Any:
    """A dataclass or plain value as JSON-able data (lockscope's coverage figure, whatever its shape)."""
    if value is None or isinstance(value, int | float | str | bool):
        return value
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if hasattr(value, "__dataclass_fields__"):
        return {k: _jsonable(getattr(value, k)) for k in value.__dataclass_fields__}
    return str(value)


def run_app(app: str, clients: Sequence[int], seconds: float, say: Callable[[str], None],
            mode: StatementMode = StatementMode(), statements: Sequence[str] | None = None,
            workload: bool = True) -> dict[str, Any]:
    """Every point of one application on its own scratch server: its statements (only those named in
    ``statements`` when given) in statement mode as ``mode`` says, and its mix in workload mode unless
    ``workload`` is False."""
    settings = ScratchSettings(max_locks_per_transaction=16, extra={"max_parallel_workers_per_gather": "0"})
    chosen = [st for st in app_statements(app) if statements is None or st.name in statements]
    with load_lock(), ScratchServer(None, settings) as server:
        install_pg_stat_statements(server)
        with load_lock():
            took, tables = load_app(server, app)
        say(f"{app}: PostgreSQL {server.major}, schema and data in {took:.1f} s: {tables}")
        doc: dict[str, Any] = {"server": server.major, "generate_s": took, "tables": tables, "statements": {},
                               "statement_points": [], "workload_points": []}
        for st in chosen:
            plan_ms = exec_ms = None
            if mode.timed:
                with contextlib.suppress(LockscopeError), load_lock():
                    plan_ms, exec_ms = time_on_scratch(server.conninfo(), st.text)
            doc["statements"][st.name] = {"source": st.source, "text": st.text, "timed_plan_ms": plan_ms,
                                          "timed_exec_ms": exec_ms}
        for c in clients:
            for st in chosen:
                p = statement_point(server, st, c, seconds, doc["statements"][st.name]["timed_exec_ms"], mode)
                doc["statement_points"].append(p)
                say(_statement_line(app, p))
            if not workload:
                continue
            w = workload_point(server, app, c, seconds)
            doc["workload_points"].append(w)
            say(f"{app} mix c={c}: pgbench {_f(w.get('pgbench_tps'))} TPS, first estimate "
                f"{_f(w.get('first_estimate_tps'))} vs {_f(w.get('measured_calls_per_s'))} calls/s "
                f"({_f(w.get('first_ratio'), '.2f')}), factor {_f(w.get('factor'), '.3g')}, coverage calls "
                f"{_f(w.get('coverage_calls'), '.0%')} time {_f(w.get('coverage_time'), '.0%')}"
                + (f" ERROR {w['error']}" if w["error"] else ""))
    return doc


def _statement_line(app: str, p: dict[str, Any]) -> str:
    """A statement point in one line of the run's log."""
    short = (f"; {_f(p.get('short_sample_s'), 'g')} s after: {_f(p.get('short_sampled_lockmanager_share'), '.0%')}"
             f"{_pm(p.get('short_sampled_lockmanager_share_95'))}") if "short_sample_s" in p else ""
    return (f"{app} {p['statement']} c={p['clients']}: {_f(p.get('measured_tps'))} TPS, forecast "
            f"{_f(p.get('forecast_tps'))} ({_f(p.get('ratio'), '.2f')}), timed {_f(p.get('timed_forecast_tps'))}, "
            f"LockManager {_f(p.get('sampled_lockmanager_share'), '.0%')}"
            f"{_pm(p.get('sampled_lockmanager_share_95'))} sampled ({_f(p.get('sample_s'), 'g')} s) / "
            f"{_f(p.get('model_lockmanager_share_at_population'), '.0%')} modelled, reproduced "
            f"{p.get('lockmanager_reproduced')}{short}" + (f" ERROR {p['error']}" if p["error"] else ""))


def _pm(interval: dict[str, Any] | None) -> str:
    """`` +-N`` (points) for a recorded 95 % interval, ``" +-?"`` when unknown."""
    return f" +-{100 * interval['half_width']:.0f}" if interval else " +-?"


def _f(value: Any, spec: str = ",.0f") -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "–"
    return format(value, spec)


def _within(values: Sequence[float | None]) -> str:
    ok = [v for v in values if v is not None and math.isfinite(v)]
    return f"{sum(1 for v in ok if abs(v - 1) <= TOLERANCE)} of {len(values)}"


def summary(doc: dict[str, Any]) -> str:
    """The Markdown tables: per app, statement mode (forecast / measured per statement and client count; the
    LockManager share sampled, with its 95 % interval, against the model's), the mix in workload mode (when run),
    and the goals of issue 27."""
    out = []
    for app, a in doc["apps"].items():
        pts = a["statement_points"]
        clients = sorted({p["clients"] for p in pts})
        out += [f"### {app}", "", "Statement mode, forecast / measured (pg_stat_statements cost, think time from "
                "the sampled seconds (the same with think time 0); timed cost):", "",
                "| statement | " + " | ".join(f"{c}" for c in clients) + " |",
                "|---|" + "---:|" * len(clients)]
        for name in a["statements"]:
            cells = []
            for c in clients:
                p: dict[str, Any] = next((q for q in pts if q["statement"] == name and q["clients"] == c), {})
                cells.append(f"{_f(p.get('ratio'), '.2f')} ({_f(p.get('ratio_think0'), '.2f')}); "
                             f"{_f(p.get('timed_ratio'), '.2f')}")
            out.append(f"| {name} | " + " | ".join(cells) + " |")
        out += _lockmanager_table(pts)
        if a["workload_points"]:
            out += _workload_table(a["workload_points"])
        out += ["", _goals(pts, a["workload_points"]), ""]
    return "\n".join(out)


def _lockmanager_table(pts: Sequence[dict[str, Any]]) -> list[str]:
    """Statement mode's LockManager share per point: sampled +- its 95 % half width (batches), the model's at the
    sampled population, within 10 pp, the sample too uncertain; the short sample's beside it when taken."""
    short = any("short_sample_s" in p for p in pts)
    out = ["", "Statement mode, LockManager share: sampled +- 95 % half width (batches) over the forecast's "
           "samples, the model's at the sampled population:", "",
           "| statement | clients | sampled s | sampled | model | within 10 pp | too uncertain |"
           + (" short sample |" if short else ""), "|---|---:|---:|---:|---:|---|---|" + ("---:|" if short else "")]
    for p in pts:
        row = (f"| {p['statement']} | {p['clients']} | {_f(p.get('sample_s'), 'g')} | {_lm(p, '')} | "
               f"{_f(p.get('model_lockmanager_share_at_population'), '.1%')} | {_near(p)} | "
               f"{p.get('sampled_too_uncertain')} |")
        if short:
            row += f" {_f(p.get('short_sample_s'), 'g')} s: {_lm(p, 'short_')} |"
        out.append(row)
    return out


def _lm(p: dict[str, Any], prefix: str) -> str:
    """``S % +-H (B)``: a point's sampled LockManager share, its 95 % half width (points) and batches."""
    interval = p.get(f"{prefix}sampled_lockmanager_share_95")
    batches = f" ({interval['batches']})" if interval else ""
    return f"{_f(p.get(f'{prefix}sampled_lockmanager_share'), '.0%')}{_pm(interval)}{batches}"


def _near(p: dict[str, Any]) -> str:
    """``yes`` or ``no (N)`` (points apart): the model's LockManager share within 10 pp of the sampled one."""
    sampled, model = p.get("sampled_lockmanager_share"), p.get("model_lockmanager_share_at_population")
    if sampled is None or model is None:
        return "–"
    apart = abs(sampled - model)
    return "yes" if apart <= 0.10 else f"no ({100 * apart:.0f})"


def _workload_table(points: Sequence[dict[str, Any]]) -> list[str]:
    """The mix in workload mode, first estimate before any re-anchoring."""
    out = ["", "Workload mode (the mix), first estimate before any re-anchoring:", "",
           "| clients | pgbench TPS | measured calls/s | first estimate | ratio | factor | coverage calls / "
           "time | LockManager sampled / modelled (first) |", "|---:|---:|---:|---:|---:|---:|---|---|"]
    for w in points:
        out.append(f"| {w['clients']} | {_f(w.get('pgbench_tps'))} | {_f(w.get('measured_calls_per_s'))} | "
                   f"{_f(w.get('first_estimate_tps'))} | {_f(w.get('first_ratio'), '.2f')} | "
                   f"{_f(w.get('factor'), '.3g')} | {_f(w.get('coverage_calls'), '.0%')} / "
                   f"{_f(w.get('coverage_time'), '.0%')} | {_lm(w, '')} / "
                   f"{_f(w.get('modelled_lockmanager_share_first'), '.0%')} |")
    return out


def _goals(pts: Sequence[dict[str, Any]], workload: Sequence[dict[str, Any]]) -> str:
    """The goals of issue 27 in one paragraph."""
    lm = [p for p in pts if (p.get("sampled_lockmanager_share") or 0.0) > 0.10]
    lm_ok = sum(1 for p in lm if _near(p) == "yes")
    sure = sum(1 for p in lm if p.get("sampled_too_uncertain") is False)
    guarded = sum(1 for p in pts if p.get("lockmanager_reproduced") is not None)
    refused = sum(1 for p in pts if p.get("lockmanager_reproduced") is False)
    uncertain = sum(1 for p in pts if p.get("sampled_too_uncertain"))
    return (f"Goals: statement mode within 25 %: {_within([p.get('ratio') for p in pts])} "
            f"(think time 0: {_within([p.get('ratio_think0') for p in pts])}; timed cost: "
            f"{_within([p.get('timed_ratio') for p in pts])}); workload first estimate within 25 %: "
            f" {_within([w.get('first_ratio') for w in workload])}; LockManager share "
            f"within 10 pp where sampled > 10 %: {lm_ok} of {len(lm)} statement points ({sure} of them sampled to "
            f"+-10 points or better); statement mode's LockManager share refused (not within 10 pp of the sampled "
            f"seconds, or their sample too uncertain: {uncertain}) at {refused} of {guarded} points with samples; "
            f"cost over the sampled seconds at {sum(1 for p in pts if p.get('cost_window') == 'sampled')} of "
            f"{len(pts)} points, the two measures of server time more than 2x apart (noted) at "
            f"{sum(1 for p in pts if p.get('server_time_note'))}")


def _git_commit() -> str:
    proc = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, check=False)
    return proc.stdout.strip()


def _uptime() -> str:
    proc = subprocess.run(["uptime"], capture_output=True, text=True, check=False)
    return proc.stdout.strip()


def run(apps: Sequence[str], clients: Sequence[int], seconds: float, out: Path,
        say: Callable[[str], None] = print, *, mode: StatementMode = StatementMode(),
        statements: Sequence[str] | None = None, workload: bool = True) -> dict[str, Any]:
    """Measure and forecast every app (statement mode as ``mode`` says, only ``statements`` when given, the mix
    unless ``workload`` is False); write ``out/results.json`` and ``out/summary.md``; return the document."""
    out.mkdir(parents=True, exist_ok=True)
    doc: dict[str, Any] = {
        "schema": SCHEMA_ID, "started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "finished": None,
        "git_commit": _git_commit(), "command": sys.argv,
        "machine": {"cores": os.cpu_count(), "load_avg_before": os.getloadavg(), "uptime_before": _uptime()},
        "profile": {"clients": list(clients), "seconds": seconds, "protocol": "simple",
                    "max_locks_per_transaction": 16, "sample_s": mode.sample_s or STATEMENT_SAMPLE_S,
                    "short_sample_s": mode.short_sample_s, "timed": mode.timed, "workload": workload,
                    "statements": list(statements) if statements is not None else None}, "apps": {}}
    for app in apps:
        doc["apps"][app] = run_app(app, clients, seconds, say, mode, statements, workload)
        (out / "results.json").write_text(json.dumps(doc, indent=1, default=str) + "\n")
    doc["machine"].update(load_avg_after=os.getloadavg(), uptime_after=_uptime())
    doc["finished"] = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    (out / "results.json").write_text(json.dumps(doc, indent=1, default=str) + "\n")
    (out / "summary.md").write_text(summary(doc) + "\n")
    return doc


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--apps", action="append", choices=APPS, help="an application (repeatable; default all, "
                                                                      "with --statements those that have one)")
    parser.add_argument("--clients", action="append", type=int, help="a client count (repeatable; default "
                                                                     "1 2 4 8 16 32)")
    parser.add_argument("--seconds", type=float, default=6.0, help="pgbench seconds per point (6; a statement's "
                        "load is made as long as its forecasts need: StatementMode.load_s)")
    parser.add_argument("--sample-s", type=float, help="statement mode's seconds of samples (default "
                        f"{STATEMENT_SAMPLE_S:g}, STATEMENT_SAMPLE_S)")
    parser.add_argument("--short-sample-s", type=float, help="also a second statement-mode forecast right after "
                        "the first, in the same load, with this many seconds of samples (short_* fields)")
    parser.add_argument("--statements", action="append", help="only this statement (repeatable; the script's "
                        "name without .sql, in any application that has it)")
    parser.add_argument("--no-workload", action="store_true", help="skip the mixes in workload mode")
    parser.add_argument("--no-timed", action="store_true", help="skip the forecast with the cost timed on the "
                                                                "scratch server")
    parser.add_argument("--quick", action="store_true", help="one app (listmonk), clients 2 and 16")
    parser.add_argument("--out", type=Path, help="results directory (default benchmarks/results/"
                                                 "forecast-apps-<UTC date>)")
    args = parser.parse_args(argv)
    apps = args.apps or (APPS[:1] if args.quick else APPS)
    if args.statements:
        having = {st.name: app for app in apps for st in app_statements(app) if st.name in args.statements}
        if missing := sorted(set(args.statements) - set(having)):
            parser.error(f"no application of {', '.join(apps)} has statement(s) {', '.join(missing)}")
        apps = [app for app in apps if app in having.values()]
    clients = args.clients or (QUICK_CLIENTS if args.quick else CLIENTS)
    date = time.strftime("%Y-%m-%d", time.gmtime())
    out = args.out or ROOT / "benchmarks" / "results" / f"forecast-apps-{'quick-' if args.quick else ''}{date}"
    mode = StatementMode(args.sample_s, args.short_sample_s, not args.no_timed)
    t0 = time.monotonic()

    def say(text: str) -> None:
        print(f"[{time.strftime('%H:%M:%S')} +{time.monotonic() - t0:5.0f}s load {os.getloadavg()[0]:.1f}] {text}",
              flush=True)

    doc = run(apps, clients, args.seconds, out, say, mode=mode, statements=args.statements,
              workload=not args.no_workload)
    print("\n" + summary(doc))
    say(f"done: {out}")


if __name__ == "__main__":
    main()
