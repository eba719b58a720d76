"""``lockscope forecast --html``: one self-contained page (inline CSS and SVG, no network, no scripts) with the
predicted TPS vs clients, the partition utilisations and the per-statement lock partitions."""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..forecast.engine import ForecastReport, ScenarioForecast
from ..lockpart import NUM_LOCK_PARTITIONS
from .forecast_terminal import binding_text, partitions_text, rate_text, saturation_text
from .html import escape, page, svg_bar_chart, svg_figure, table

__all__ = ["forecast_html", "svg_tps_curve"]


def svg_tps_curve(scenarios: Sequence[ScenarioForecast], *, clients: int) -> str:
    """Predicted throughput vs clients of each scenario (matplotlib line chart as inline ``<svg>``), with each
    scenario's ceiling dashed and the chosen client count marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8.0, 3.8))
    for s in scenarios:
        xs = [f.clients for f in s.curve]
        line, = ax.plot(xs, [f.throughput_tps for f in s.curve], label=s.label, linewidth=1.6)
        if math.isfinite(s.forecast.ceiling_tps):
            ax.axhline(s.forecast.ceiling_tps, color=line.get_color(), linestyle="--", linewidth=0.8)
    ax.axvline(clients, color="#777", linestyle=":", linewidth=1)
    ax.set_xlabel("clients")
    ax.set_ylabel("predicted TPS")
    ax.set_ylim(bottom=0)
    ax.set_title("predicted throughput vs clients (dashed: ceiling; dotted: the forecast's clients)", fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return svg_figure(fig)


def _summary_rows(s: ScenarioForecast) -> list[list[str]]:
    f = s.forecast
    return [
        ["predicted TPS", f"{f.throughput_tps:,.0f} at {f.clients} clients"],
        ["TPS ceiling", rate_text(f.ceiling_tps)],
        ["binding resource", binding_text(f)],
        ["LockManager share of active sessions", f"{f.lockmanager_share:.0%} (AAS {f.lockmanager_aas:.1f})"],
        ["hottest lock partition held 100 % at", saturation_text(s)],
        ["main-table locks per transaction", f"{s.main_table_locks_per_transaction:.1f}"],
        ["utilisation basis", "measured rate " + rate_text(s.rate_tps) if s.rate_tps is not None
         else "predicted throughput"],
        ["CPU utilisation", f"{s.cpu_utilisation_at_rate:.0%}"],
    ]


def forecast_html(report: ForecastReport) -> str:
    """The HTML document of a forecast."""
    scenarios = [report.measured] + ([report.what_if] if report.what_if is not None else [])
    body = [f'<div class="verdict contention">{escape(report.model_check.headline)}</div>'] \
        if report.model_check is not None else []
    body += [f"<p>PostgreSQL {escape(report.server_version)}, database {escape(report.database)} (OID "
            f"{report.database_oid}); model: {report.cores} cores, {report.clients} clients "
            f"({escape(report.clients_source)}); what-if: {escape(report.what_if_text)}.</p>",
            f"<p class=\"muted\">calibration: {escape(report.calibration.source)}</p>",
            *([f"<p>{escape(report.coverage.text())}</p>"] if report.coverage is not None else []),
            *([f"<p>predicted TPS between {report.throughput_range_tps[0]:,.0f} and "
               f"{report.throughput_range_tps[1]:,.0f}: the statement's execution time is an estimate (notes)</p>"]
              if report.throughput_range_tps is not None else []),
            svg_tps_curve(scenarios, clients=report.clients)]
    for s in scenarios:
        body.append(f"<h2>{escape(s.label)} ({escape(s.capacity.describe())} fast-path slots)</h2>")
        body.append(table(["figure", "value"], _summary_rows(s), left=2))
        body.append(svg_bar_chart([str(p) for p in range(NUM_LOCK_PARTITIONS)],
                                  {"busy fraction": list(s.partition_utilisation_at_rate)},
                                  title=f"{s.label}: partition LWLock utilisation", ylabel="busy fraction",
                                  xlabel="lock partition"))
        rows = []
        for shape, f in s.statements:
            rows.append([shape.name, " ".join(shape.statement.split())[:100], shape.phase, len(shape.locks),
                         len(shape.main_table_locks), partitions_text(shape.partition_load),
                         rate_text(f.ceiling_tps), f.binding_resource, f"{f.lockmanager_share:.0%}"])
        body.append(table(["statement", "text", "phase", "locks", "main table", "partitions (p:locks)",
                           "ceiling alone", "binding", "LockManager"], rows, left=3))
    if report.notes:
        body.append("<h2>notes</h2><ul>" + "".join(f"<li>{escape(n)}</li>" for n in report.notes) + "</ul>")
    return page("lockscope forecast", body)
