"""matplotlib charts of lab results: PNG files in the results directory and inline SVG for report.html.

A chart is described by a :class:`ChartSpec` (x and y fields of the result rows, the fields that name a series)
so that ``lab compare`` draws the same charts over several runs by adding the run to the series key.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["CHARTS", "ChartSpec", "figure", "save_png", "series_label"]

Row = dict[str, Any]


@dataclass(frozen=True)
class ChartSpec:
    """One chart.

    :ivar name: file stem (``tps`` -> ``tps.png``).
    :ivar title: chart title.
    :ivar x: row field on the x axis.
    :ivar y: row field on the y axis.
    :ivar xlabel: x-axis label.
    :ivar ylabel: y-axis label.
    :ivar series: row fields whose values name one line (or bar group).
    :ivar xscale: ``linear``, ``symlog`` (partition counts with 0) or ``category``.
    :ivar yscale: ``linear`` or ``log``.
    :ivar percent: y values are fractions shown as %.
    :ivar vline: (x, label) reference line, e.g. the 16 fast-path slots.
    """

    name: str
    title: str
    x: str
    y: str
    xlabel: str
    ylabel: str
    series: tuple[str, ...]
    xscale: str = "linear"
    yscale: str = "linear"
    percent: bool = False
    vline: tuple[float, str] | None = None
    kind: str = "line"


_FAST_PATH_LINE = (14.5, "16 fast-path slots (2 + 14 extra)")

CHARTS: dict[str, tuple[ChartSpec, ...]] = {
    "indexes": (
        ChartSpec("tps", "pgbench -S TPS vs extra indexes on pgbench_accounts", "extra_indexes", "tps",
                  "extra indexes", "TPS", ("pg_version", "max_locks_per_transaction"), vline=_FAST_PATH_LINE),
        ChartSpec("planning", "mean planning time of the primary-key SELECT (pg_stat_statements)", "extra_indexes",
                  "mean_plan_ms", "extra indexes", "planning time (ms)", ("pg_version", "max_locks_per_transaction"),
                  vline=_FAST_PATH_LINE),
        ChartSpec("main_table_locks", "relation locks per transaction in the main lock table", "extra_indexes",
                  "main_table_locks", "extra indexes", "main-table locks per transaction",
                  ("pg_version", "max_locks_per_transaction"), vline=_FAST_PATH_LINE),
        ChartSpec("lockmanager", "LWLock:LockManager share of active-session samples", "extra_indexes",
                  "lockmanager_share", "extra indexes", "LockManager (% of active-session samples)",
                  ("pg_version", "max_locks_per_transaction"), percent=True, vline=_FAST_PATH_LINE),
    ),
    "partitions": (
        ChartSpec("tps", "pgbench -S -M prepared TPS vs partitions", "partitions", "tps", "partitions",
                  "TPS", ("pg_version", "plan_cache_mode"), xscale="symlog"),
        ChartSpec("locks", "relation locks per execution (steady state) vs partitions", "partitions",
                  "locks_per_execution", "partitions", "locks per execution", ("pg_version", "plan_cache_mode"),
                  xscale="symlog", yscale="log"),
        ChartSpec("lockmanager", "LWLock:LockManager share of active-session samples", "partitions",
                  "lockmanager_share", "partitions", "LockManager (% of active-session samples)",
                  ("pg_version", "plan_cache_mode"), xscale="symlog", percent=True),
    ),
    "prepared": (
        ChartSpec("locks", "relation locks per execution of the prepared statement", "execution", "relation_locks",
                  "execution", "relation locks", ("pg_version", "case", "plan_cache_mode")),
        ChartSpec("main_table_locks", "locks in the main lock table per execution", "execution",
                  "main_table_locks", "execution", "main-table locks", ("pg_version", "case", "plan_cache_mode")),
    ),
    "replay": (
        ChartSpec("tps", "workload TPS before / after the what-if", "phase", "tps", "", "TPS", ("pg_version",),
                  xscale="category", kind="bar"),
        ChartSpec("planning", "mean planning time per statement", "phase", "mean_plan_ms", "", "planning time (ms)",
                  ("pg_version",), xscale="category", kind="bar"),
        ChartSpec("lockmanager", "LWLock:LockManager share of active-session samples", "phase", "lockmanager_share",
                  "", "LockManager (% of active-session samples)", ("pg_version",), xscale="category", kind="bar",
                  percent=True),
    ),
    "observer": (
        ChartSpec("tps_ratio", "TPS under each observer / TPS without observer (same round)", "condition",
                  "tps_ratio", "", "TPS ratio to no observer", ("pg_version", "round"), xscale="category",
                  kind="bar"),
    ),
}

_PREFIX = {"pg_version": "PG ", "max_locks_per_transaction": "mlpt ", "run": ""}


def series_label(row: Row, keys: Sequence[str]) -> str:
    """``PG 18.6 mlpt 16`` from the series fields of a row."""
    return " ".join(f"{_PREFIX.get(k, '')}{row.get(k)}" for k in keys)


def _num(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return float(v) if math.isfinite(v) else None


def _varying(rows: Sequence[Row], keys: Sequence[str]) -> tuple[str, ...]:
    """The series keys that take more than one value (at least the last key)."""
    keep = tuple(k for k in keys if len({str(r.get(k)) for r in rows}) > 1)
    return keep or tuple(keys[-1:])


def figure(spec: ChartSpec, rows: Sequence[Row], *, extra_series: Sequence[str] = ()) -> Any:
    """A matplotlib Figure of ``spec`` over ``rows`` (rows without a numeric y are left out).

    :param extra_series: fields put in front of the series key (``run`` for ``lab compare``).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys = _varying(rows, (*extra_series, *spec.series))
    groups: dict[str, list[Row]] = {}
    for row in rows:
        if _num(row.get(spec.y)) is None:
            continue
        groups.setdefault(series_label(row, keys), []).append(row)
    fig, ax = plt.subplots(figsize=(8.5, 4.2))
    scale = 100.0 if spec.percent else 1.0
    if spec.kind == "bar":
        cats = list(dict.fromkeys(str(r.get(spec.x)) for rs in groups.values() for r in rs))
        n = max(1, len(groups))
        width = 0.8 / n
        for i, (label, rs) in enumerate(groups.items()):
            ys = {str(r.get(spec.x)): float(r[spec.y]) * scale for r in rs}
            xs = [c + (i - (n - 1) / 2) * width for c in range(len(cats))]
            ax.bar(xs, [ys.get(c, 0.0) for c in cats], width, label=label)
        ax.set_xticks(range(len(cats)))
        ax.set_xticklabels(cats)
    else:
        for label, rs in groups.items():
            pts = sorted((float(r[spec.x]), float(r[spec.y]) * scale) for r in rs if _num(r.get(spec.x)) is not None)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", markersize=3, linewidth=1.4, label=label)
        if spec.xscale == "symlog":
            ax.set_xscale("symlog", linthresh=1)
            xs_all = sorted({float(r[spec.x]) for rs in groups.values() for r in rs})
            ax.set_xticks(xs_all)
            ax.set_xticklabels([f"{x:g}" for x in xs_all], fontsize=8)
        if spec.vline is not None:
            ax.axvline(spec.vline[0], color="#b00", linestyle="--", linewidth=0.8)
            ax.annotate(spec.vline[1], (spec.vline[0], 1), xycoords=("data", "axes fraction"), color="#b00",
                        fontsize=7, xytext=(3, -10), textcoords="offset points")
    if spec.yscale == "log":
        ax.set_yscale("log")
    ax.set_title(spec.title, fontsize=10)
    if spec.xlabel:
        ax.set_xlabel(spec.xlabel)
    ax.set_ylabel(spec.ylabel)
    ax.grid(True, alpha=0.3)
    if groups:
        ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    return fig


def save_png(fig: Any, path: Path) -> Path:
    """Write the figure as PNG (and close it)."""
    import matplotlib.pyplot as plt

    fig.savefig(path, format="png", dpi=110)
    plt.close(fig)
    return path



