"""Rendering of :class:`~lockscope.demo.DemoResult`: rich (terminal), dict (JSON), self-contained HTML."""

from __future__ import annotations

import datetime as _dt
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from .. import __version__
from ..demo import DemoResult
from ..footprint import Footprint
from . import html as h
from .jsonout import footprints_to_dict
from .terminal import footprint_table, mismatch_panel

__all__ = ["demo_html", "demo_to_dict", "render_demo"]

DEMO_SCHEMA = "lockscope/demo/v2"


def _cliff_rows(result: DemoResult) -> list[tuple[int, int, int, int, int, int]]:
    """(extra indexes, locks, main@16, predicted@16, main@64, predicted@64) per extra-index count."""
    by = {(p.max_locks_per_transaction, p.extra_indexes): p for p in result.cliff}
    ks = sorted({p.extra_indexes for p in result.cliff})
    rows = []
    for k in ks:
        p16, p64 = by.get((16, k)), by.get((64, k))
        either = p16 or p64
        rows.append((k, either.locks if either else 0,
                     p16.main_table if p16 else 0, p16.predicted_main_table if p16 else 0,
                     p64.main_table if p64 else 0, p64.predicted_main_table if p64 else 0))
    return rows


def _spill_text(result: DemoResult, mlpt: int) -> str:
    k = result.first_spill(mlpt)
    if k is None:
        most = max((p.extra_indexes for p in result.cliff if p.max_locks_per_transaction == mlpt), default=0)
        return f"no spill up to {most} extra indexes"
    return f"{k} extra indexes"


def _lock_counts(fp: Footprint) -> str:
    return ",".join(str(e.lock_count) for e in fp.executions)


def render_demo(result: DemoResult) -> Group:
    """Every demo table for the terminal."""
    parts: list[RenderableType] = [Text(f"lockscope demo on PostgreSQL {result.server_version}", style="bold")]
    parts.append(footprint_table(result.events_empty, title=(
        "1. events: 12 monthly partitions x 3 indexes, prepared "
        "`select event_id, event_data from events where event_time = $1` (empty tables, mlpt 64)")))
    if result.events_with_data is not None:
        parts.append(footprint_table((result.events_with_data,), title=(
            f"1b. the same in auto mode with {result.rows_per_partition:,} rows per partition: "
            "the generic plan is built at execution 6, then rejected")))
    parts.append(footprint_table((result.unpartitioned,), title=(
        "2. t: unpartitioned, 5 indexes, prepared `select from t` ($1 int): 6 locks until execution 6, then 1")))
    prune = Table(title="3. p40: 40 partitions x 1 index (mlpt 64)", title_justify="left", header_style="bold")
    for col in ("statement", "locks", "fast-path", "main", "predicted main"):
        prune.add_column(col, justify="left" if col == "statement" else "right")
    for fp in (result.pruned, result.unpruned):
        e = fp.executions[0]
        prune.add_row(fp.statement, str(e.lock_count), str(e.fastpath_count), str(e.main_table_count),
                      str(e.predicted_main_table_count))
    parts.append(prune)
    cliff = Table(title="4. pgbench_accounts primary-key SELECT vs extra indexes (simple protocol)",
                  title_justify="left", header_style="bold")
    for col in ("extra indexes", "locks", "main @ mlpt 16", "predicted", "main @ mlpt 64", "predicted"):
        cliff.add_column(col, justify="right")
    for row in _cliff_rows(result):
        cells = [str(v) for v in row]
        cliff.add_row(*[Text(c, style="bold red") if i in (2, 4) and row[i] else c for i, c in enumerate(cells)])
    parts.append(cliff)
    parts.append(Text(f"first spill: {_spill_text(result, 16)} at mlpt 16, {_spill_text(result, 64)} at mlpt 64",
                      style="bold"))
    panel = mismatch_panel(result.footprints)
    parts.append(panel if panel is not None else Text(
        "measured = predicted for every lock", style="bold green"))
    return Group(*parts)


def demo_to_dict(result: DemoResult) -> dict[str, Any]:
    """The demo as a JSON-ready dict (schema ``lockscope/demo/v2``)."""
    return {
        "schema": DEMO_SCHEMA,
        "lockscope_version": __version__,
        "measured_at": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "server_version": result.server_version,
        "server_version_num": result.server_version_num,
        "events_empty": footprints_to_dict(result.events_empty),
        "events_with_data": footprints_to_dict((result.events_with_data,)) if result.events_with_data else None,
        "rows_per_partition": result.rows_per_partition,
        "unpartitioned": footprints_to_dict((result.unpartitioned,)),
        "pruned": footprints_to_dict((result.pruned,)),
        "unpruned": footprints_to_dict((result.unpruned,)),
        "cliff": [
            {"max_locks_per_transaction": p.max_locks_per_transaction, "extra_indexes": p.extra_indexes,
             "locks": p.locks, "main_table": p.main_table, "predicted_main_table": p.predicted_main_table}
            for p in result.cliff
        ],
        "first_spill": {"16": result.first_spill(16), "64": result.first_spill(64)},
        "mismatch_count": result.mismatch_count,
    }


def _executions_table(footprints: tuple[Footprint, ...]) -> str:
    rows = []
    classes = []
    for fp in footprints:
        for e in fp.executions:
            rows.append((fp.plan_cache_mode, e.number, e.phase, e.plan_type or "-", e.lock_count, e.fastpath_count,
                         e.main_table_count, e.predicted_main_table_count))
            classes.append(["", "", "", "", "", "", "bad" if e.main_table_count else "ok",
                            "bad" if e.mismatches else ""])
    return h.table(("plan_cache_mode", "exec", "phase", "plan", "locks", "fast-path", "main table",
                    "predicted main"), rows, left=4, classes=classes)


def demo_html(result: DemoResult) -> str:
    """The whole demo as one self-contained HTML document (tables + inline SVG bar charts)."""
    body = [f"<p>Measured from <code>pg_locks</code> on PostgreSQL {h.escape(result.server_version)} by lockscope "
            f"{h.escape(__version__)}; predicted by the capacity model. Mismatches: "
            f"<b class=\"{'bad' if result.mismatch_count else 'ok'}\">{result.mismatch_count}</b>.</p>"]
    body.append("<h2>1. 12 monthly partitions x 3 indexes, prepared statement</h2>")
    body.append("<p><code>select event_id, event_data from events where event_time = $1</code>, empty tables.</p>")
    n = max(len(fp.executions) for fp in result.events_empty)
    body.append(h.svg_bar_chart(
        [str(i + 1) for i in range(n)],
        {fp.plan_cache_mode: [e.lock_count for e in fp.executions] for fp in result.events_empty},
        title="relation locks per execution", ylabel="locks", xlabel="execution",
        hline=(float(result.events_empty[0].capacity.slots), f"{result.events_empty[0].capacity.slots} slots")))
    body.append(_executions_table(result.events_empty))
    if result.events_with_data is not None:
        body.append(f"<p>auto mode with {result.rows_per_partition:,} rows per partition: "
                    f"{_lock_counts(result.events_with_data)}</p>")
        body.append(_executions_table((result.events_with_data,)))
    body.append("<h2>2. Unpartitioned table with 5 indexes, prepared <code>select from t</code></h2>")
    body.append(h.svg_bar_chart([str(e.number) for e in result.unpartitioned.executions],
                                {"auto": [e.lock_count for e in result.unpartitioned.executions]},
                                title="relation locks per execution", ylabel="locks"))
    body.append(_executions_table((result.unpartitioned,)))
    body.append("<h2>3. 40 partitions x 1 index: plan-time pruning or not</h2>")
    body.append(h.table(("statement", "locks", "fast-path", "main table", "predicted main"), [
        (fp.statement, fp.executions[0].lock_count, fp.executions[0].fastpath_count,
         fp.executions[0].main_table_count, fp.executions[0].predicted_main_table_count)
        for fp in (result.pruned, result.unpruned)]))
    body.append("<h2>4. pgbench_accounts: primary-key SELECT vs extra indexes</h2>")
    rows = _cliff_rows(result)
    body.append(h.svg_bar_chart([str(r[0]) for r in rows],
                                {"main table @ mlpt 16": [r[2] for r in rows],
                                 "main table @ mlpt 64": [r[4] for r in rows]},
                                title="locks spilled to the main lock table", ylabel="locks",
                                xlabel="extra indexes on pgbench_accounts"))
    body.append(h.table(("extra indexes", "locks", "main @16", "predicted @16", "main @64", "predicted @64"), rows))
    body.append(f"<p>First spill: <b>{h.escape(_spill_text(result, 16))}</b> at mlpt 16, "
                f"<b>{h.escape(_spill_text(result, 64))}</b> at mlpt 64.</p>")
    return h.page("lockscope demo: relation-lock footprints", body)
