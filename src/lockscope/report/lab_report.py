"""Rendering of lab results: rich tables for the terminal, PNG plots and a self-contained ``report.html``.

``report.html`` has inline CSS and inline SVG only (``report/html.py``): no network, no scripts. Beside our
figures it shows the published ones the scenario reproduces (``published-benchmarks.md``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from ..lab.results import LabResult
from . import html as h
from .html import svg_figure
from .lab_plots import CHARTS, figure, save_png

__all__ = [
    "COLUMNS",
    "PUBLISHED",
    "fmt",
    "render_compare",
    "render_lab",
    "summary_rows",
    "write_compare_report",
    "write_lab_report",
]

Row = dict[str, Any]

#: Result columns shown in the terminal and in report.html, per scenario.
COLUMNS: dict[str, tuple[str, ...]] = {
    "indexes": ("pg_version", "max_locks_per_transaction", "extra_indexes", "relation_locks", "main_table_locks",
                "predicted_main_table_locks", "tps", "mean_plan_ms", "mean_exec_ms", "lockmanager_share",
                "top_wait", "error"),
    "partitions": ("pg_version", "partitions", "plan_cache_mode", "max_locks_per_transaction", "locks_per_execution",
                   "main_table_locks", "locks_by_execution", "tps", "mean_plan_ms", "mean_exec_ms",
                   "lockmanager_share", "top_wait", "error"),
    "prepared": ("pg_version", "case", "plan_cache_mode", "execution", "phase", "plan_type", "relation_locks",
                 "fastpath_locks", "main_table_locks", "predicted_main_table_locks"),
    "replay": ("pg_version", "phase", "what_if", "max_locks_per_transaction", "plan_cache_mode", "relation_locks",
               "main_table_locks", "tps", "latency_ms", "mean_plan_ms", "mean_exec_ms", "lockmanager_share",
               "top_wait", "error"),
    "observer": ("pg_version", "round", "condition", "tps", "tps_ratio", "observer_hz", "lockmanager_share"),
}

#: Published figures next to ours: (title, headers, rows, source).
PUBLISHED: dict[str, tuple[str, tuple[str, ...], tuple[tuple[str, ...], ...], str]] = {
    "indexes": (
        "PostgresAI #PostgresMarathon 2-004 (128 vCPU, PG 18, pgbench -s100 -S -c100 -j100 -T120): mean planning "
        "time (ms)",
        ("extra indexes", "mlpt 16", "mlpt 128"),
        (("0", "0.011", "0.011"), ("14", "0.035", "0.034"), ("15", "0.237 (cliff, ~7x)", "0.034"),
         ("20", "0.244", "0.044"), ("21", "0.523 (second step)", "0.044"), ("25", "0.576", "0.053")),
        "postgres-ai/docs blog/20251008-postgres-marathon-2-004.md; at mlpt 16 and >= 15 extra indexes ~470k of "
        "~595k wait-event samples were LWLock:LockManager. 2-005 (16 vCPU): cliff at ~29-30 (mlpt 32), ~59-60 (64), "
        "~119-120 (128), none up to 202 relations (1024).",
    ),
    "partitions": (
        "Amit Langote (pgbench --protocol=prepared, plan_cache_mode=force_generic_plan)",
        ("partitions", "HEAD TPS", "patched TPS"),
        (("32", "~20.5k", "~27.5k"), ("2048", "~1.3k", "~16.3k")),
        "amitlan.com 2022-11-22; at 2048 partitions GetCachedPlan is 50.57% of the profile (LockRelationOid "
        "46.76%). The patch (525392d5) was reverted: reusing a generic plan still locks every partition in PG 18. "
        "Jeremy Schneider: Fujii Masao's repro (-s100 --partitions=100, force_generic_plan, -c80 -S -M prepared) "
        "75,000 TPS with 70% of AAS on LWLock:LockManager.",
    ),
    "prepared": (
        "PostgresAI #PostgresMarathon 2-008..2-011 (PG 18, 12 monthly partitions x 3 indexes)",
        ("plan_cache_mode", "exec 1", "2-5", "6", "7+"),
        (("auto", "8", "8", "52", "13 (empty tables) / 8 (with data)"), ("force_generic_plan", "52", "13", "13", "13"),
         ("force_custom_plan", "8", "8", "8", "8"), ("t: 5 indexes, unpartitioned", "6", "6", "6", "1")),
        "pg-lock-internals.md section 4; verified on PG 18.6.",
    ),
    "observer": (
        "PostgresAI #PostgresMarathon 2-007 (M1, 8 cores, PG 18, mlpt 64, -s10, ~100 extra indexes, -c8 -S)",
        ("observer", "latency", "TPS"),
        (("none", "0.459 ms", "17,394"), ("pg_blocking_pids() loop ~100 Hz", "0.505 ms", "15,812 (-9.1%)")),
        "",
    ),
}


def fmt(value: Any, key: str = "") -> str:
    """A cell: floats rounded by unit, shares in %, None/NaN as ``-``."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if "share" in key:
            return f"{100 * value:.0f}%"
        if key.endswith("_ms"):
            return f"{value:.3f}"
        if key in ("tps", "tps_at_max", "tps_reference", "tps_max"):
            return f"{value:,.0f}"
        if key.endswith("ratio"):
            return f"{value:.2f}"
        return f"{value:.3g}"
    return str(value)


def summary_rows(result: LabResult) -> list[Row]:
    """The scenario's proof table (first spill, ratios, lock sequences, before/after)."""
    rows = [dict(r) for r in result.rows]
    if not rows:
        return []
    if result.scenario == "indexes":
        from ..lab.indexes import summary
        return summary(rows)
    if result.scenario == "partitions":
        from ..lab.partitions import summary as psummary
        return psummary(rows)
    if result.scenario == "prepared":
        from ..lab.prepared import lock_sequences
        return lock_sequences(rows)
    if result.scenario == "observer":
        from ..lab.observer import summary as osummary
        return osummary(rows)
    if result.scenario == "replay":
        from ..lab.replay import before_after
        return before_after(rows)
    return []


def _columns(rows: Sequence[Row], wanted: Sequence[str]) -> list[str]:
    present = [c for c in wanted if any(c in r for r in rows)]
    if "error" in present and not any(r.get("error") for r in rows):
        present.remove("error")
    if not present and rows:
        present = list(rows[0])
    return present


def _rich_table(title: str, rows: Sequence[Row], columns: Sequence[str]) -> Table:
    table = Table(title=title, title_justify="left", header_style="bold")
    for c in columns:
        table.add_column(c.replace("_", " "), justify="left" if c in ("pg_version", "case", "plan_cache_mode",
                                                                      "top_wait", "phase", "figure") else "right")
    for r in rows:
        table.add_row(*[fmt(r.get(c), _key(r, c)) for c in columns])
    return table


def _key(row: Row, column: str) -> str:
    """The unit key of a cell: a before/after table formats by the row's figure."""
    return str(row.get("figure", column)) if column in ("before", "after") else column


def render_lab(result: LabResult, written: Sequence[Path] = ()) -> Group:
    """The run for the terminal: status, the proof table and the results (at most 60 rows)."""
    parts: list[RenderableType] = []
    versions = ", ".join(f"PostgreSQL {s.pg_version}" for s in result.servers) or "no server started"
    style = "bold" if result.complete else "bold yellow"
    parts.append(Text(f"lockscope lab {result.scenario}: {result.status}, {len(result.rows)} rows, "
                      f"{result.elapsed_s:.0f} s, {versions}, {result.cores} cores", style=style))
    rows = list(result.rows)
    if rows and result.scenario != "prepared":  # prepared: the summary holds the lock sequences
        cols = _columns(rows, COLUMNS.get(result.scenario, ()))
        shown = rows if len(rows) <= 60 else rows[:30] + rows[-30:]
        parts.append(_rich_table("results" + ("" if len(rows) <= 60 else f" (60 of {len(rows)} rows)"), shown, cols))
    summ = summary_rows(result)
    if summ:
        parts.append(_rich_table("summary", summ, list(summ[0])))
    parts.append(Text(f"results: {result.out_dir}/results.json, results.csv, report.html"
                      + (f", {len([p for p in written if p.suffix == '.png'])} PNG plots" if written else "")))
    return Group(*parts)


def _meta_table(results: Sequence[LabResult]) -> str:
    rows = []
    for r in results:
        rows.append((str(r.out_dir), r.scenario, r.status, r.started, f"{r.elapsed_s:.0f} s",
                     ", ".join(f"PG {s.pg_version} ({s.bin_dir})" for s in r.servers), str(r.cores), r.machine,
                     r.lockscope_version))
    return h.table(("results", "scenario", "status", "started", "elapsed", "PostgreSQL (bin dir)", "cores",
                    "machine", "lockscope"), rows, left=9)


def _rows_html(rows: Sequence[Row], columns: Sequence[str]) -> str:
    return h.table(columns, [[fmt(r.get(c), _key(r, c)) for c in columns] for r in rows], left=1)


def _published_html(scenario: str) -> str:
    if scenario not in PUBLISHED:
        return ""
    title, headers, rows, note = PUBLISHED[scenario]
    return (f"<h2>Published figures</h2><p>{h.escape(title)}</p>" + h.table(headers, rows, left=1)
            + (f'<p class="muted">{h.escape(note)}</p>' if note else ""))


def write_lab_report(result: LabResult) -> list[Path]:
    """Write the PNG plots and ``report.html`` into the results directory.

    :return: the files written.
    """
    out = result.out_dir
    rows = list(result.rows)
    written: list[Path] = []
    body: list[str] = [_meta_table([result])]
    body.append("<h2>Parameters</h2>" + h.table(("parameter", "value"),
                                                [(k, str(v)) for k, v in result.parameters.items()], left=2))
    summ = summary_rows(result)
    if summ:
        body.append("<h2>Summary</h2>" + _rows_html(summ, list(summ[0])))
    body.append(_published_html(result.scenario))
    charts = CHARTS.get(result.scenario, ())
    if rows and charts:
        body.append("<h2>Charts</h2>")
        for spec in charts:
            if not any(isinstance(r.get(spec.y), (int, float)) for r in rows):
                continue
            written.append(save_png(figure(spec, rows), out / f"{spec.name}.png"))
            body.append(svg_figure(figure(spec, rows)))
    if rows:
        cols = _columns(rows, COLUMNS.get(result.scenario, ())) or list(rows[0])
        body.append(f"<h2>Results ({len(rows)} rows; all columns in results.csv)</h2>" + _rows_html(rows, cols))
    statements = result.extras.get("statements")
    if statements:
        body.append("<h2>Workload statements (footprint engine)</h2>" + _rows_html(
            statements, ("phase", "pg_version", "statement", "relation_locks", "main_table_locks",
                         "predicted_main_table_locks", "peak_locks", "note")))
    title = f"lockscope lab {result.scenario}" + ("" if result.complete else f" ({result.status})")
    page = out / "report.html"
    page.write_text(h.page(title, body))
    written.append(page)
    return written


# -- compare ---------------------------------------------------------------------------------------------------
def _run_label(result: LabResult, index: int) -> str:
    """``#1 <results dir name>`` (the PostgreSQL version is part of each series label)."""
    return f"#{index + 1} {result.out_dir.name}"


def compare_rows(results: Sequence[LabResult]) -> list[Row]:
    """All runs' rows with a ``run`` field naming the run."""
    out: list[Row] = []
    for i, r in enumerate(results):
        label = _run_label(r, i)
        out.extend({**row, "run": label} for row in r.rows)
    return out


def write_compare_report(results: Sequence[LabResult], out: Path) -> list[Path]:
    """Overlay the runs' charts (one line per run and series) into PNGs and ``report.html`` in ``out``."""
    rows = compare_rows(results)
    scenario = results[0].scenario
    written: list[Path] = []
    body = [_meta_table(results)]
    summ: list[Row] = []
    for i, r in enumerate(results):
        summ.extend({"run": _run_label(r, i), **s} for s in summary_rows(r))
    if summ:
        body.append("<h2>Summary</h2>" + _rows_html(summ, list(summ[0])))
    body.append(_published_html(scenario))
    body.append("<h2>Charts</h2>")
    for spec in CHARTS.get(scenario, ()):
        if not any(isinstance(r.get(spec.y), (int, float)) for r in rows):
            continue
        written.append(save_png(figure(spec, rows, extra_series=("run",)), out / f"compare_{spec.name}.png"))
        body.append(svg_figure(figure(spec, rows, extra_series=("run",))))
    page = out / "report.html"
    page.write_text(h.page(f"lockscope lab compare: {scenario}, {len(results)} runs", body))
    written.append(page)
    return written


def render_compare(results: Sequence[LabResult], written: Sequence[Path]) -> Group:
    """The comparison for the terminal: one summary table over the runs."""
    parts: list[RenderableType] = [Text(f"lockscope lab compare: {results[0].scenario}, {len(results)} runs",
                                        style="bold")]
    summ: list[Row] = []
    for i, r in enumerate(results):
        summ.extend({"run": _run_label(r, i), **s} for s in summary_rows(r))
    if summ:
        parts.append(_rich_table("summary", summ, list(summ[0])))
    parts.append(Text("wrote " + ", ".join(str(p) for p in written)))
    return Group(*parts)
