"""Self-contained HTML pieces: one file, inline CSS and inline SVG charts, no network, no scripts."""

from __future__ import annotations

import html
import io
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = ["escape", "page", "svg_bar_chart", "table"]

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2em auto;max-width:1100px;color:#222}
h1{font-size:1.6em}h2{font-size:1.25em;margin-top:2em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:1em 0;font-size:.9em}
th,td{border:1px solid #ccc;padding:.25em .6em;text-align:right}th{background:#f3f3f3}
td.l,th.l{text-align:left}.bad{color:#b00;font-weight:bold}.ok{color:#070}.muted{color:#777}
code{background:#f5f5f5;padding:.1em .3em}figure{margin:1em 0}
"""


def escape(text: object) -> str:
    """HTML-escape any value's ``str``."""
    return html.escape(str(text))


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]], *, left: int = 1,
          classes: Sequence[Sequence[str]] | None = None) -> str:
    """An HTML table; the first ``left`` columns are left-aligned; ``classes[r][c]`` adds a cell class."""
    out = ["<table><tr>"]
    out += [f'<th class="{"l" if i < left else ""}">{escape(h)}</th>' for i, h in enumerate(headers)]
    out.append("</tr>")
    for r, row in enumerate(rows):
        out.append("<tr>")
        for c, cell in enumerate(row):
            cls = ["l"] if c < left else []
            if classes is not None and r < len(classes) and c < len(classes[r]) and classes[r][c]:
                cls.append(classes[r][c])
            out.append(f'<td class="{" ".join(cls)}">{escape(cell)}</td>')
        out.append("</tr>")
    out.append("</table>")
    return "".join(out)


def svg_bar_chart(
    categories: Sequence[str],
    series: Mapping[str, Sequence[float]],
    *,
    title: str,
    ylabel: str,
    xlabel: str = "",
    hline: tuple[float, str] | None = None,
    stacked: bool = False,
) -> str:
    """A matplotlib bar chart rendered to an inline ``<svg>`` string.

    :param categories: x-axis labels (n).
    :param series: name -> n values (grouped bars, or stacked with ``stacked=True``).
    :param hline: optional (y value, label) reference line, e.g. the fast-path slot count.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    bars = len(categories) * (1 if stacked else max(1, len(series)))
    fig, ax = plt.subplots(figsize=(min(11.0, max(6.0, 0.3 * bars)), 3.6))
    n = max(1, len(series))
    width = 0.8 if stacked else 0.8 / n
    positions = range(len(categories))
    bottom = [0.0] * len(categories)
    for i, (name, values) in enumerate(series.items()):
        if stacked:
            ax.bar(list(positions), list(values), width, bottom=bottom, label=name)
            bottom = [b + v for b, v in zip(bottom, values, strict=False)]
        else:
            ax.bar([p + (i - (n - 1) / 2) * width for p in positions], list(values), width, label=name)
    if hline is not None:
        ax.axhline(hline[0], color="#b00", linestyle="--", linewidth=1)
        ax.annotate(hline[1], (0, hline[0]), color="#b00", fontsize=8, xytext=(2, 3), textcoords="offset points")
    ax.set_xticks(list(positions))
    ax.set_xticklabels(categories, fontsize=8, rotation=0 if len(categories) < 16 else 90)
    ax.set_ylabel(ylabel)
    if xlabel:
        ax.set_xlabel(xlabel)
    ax.set_title(title, fontsize=10)
    if len(series) > 1 or stacked:
        ax.legend(fontsize=8)
    fig.tight_layout()
    buf = io.StringIO()
    fig.savefig(buf, format="svg")
    plt.close(fig)
    svg = buf.getvalue()
    return "<figure>" + svg[svg.index("<svg"):] + "</figure>"


def page(title: str, body: Sequence[str]) -> str:
    """A complete HTML document with inline CSS around the given body fragments."""
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>'
            f"<style>{_CSS}</style></head><body><h1>{escape(title)}</h1>" + "\n".join(body) + "</body></html>")
