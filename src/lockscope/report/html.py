"""Self-contained HTML pieces: one file, inline CSS and inline SVG charts, no network, no scripts.

Every page (:func:`page`) fits a 1300-pixel window: tables scroll inside themselves (:func:`table`), long texts
wrap, charts scale to the width (``viewBox``), and ``@media print`` keeps sections, cards and charts whole.
The hand-drawn charts (:func:`svg_hbars`, :func:`svg_columns`, :func:`svg_stack`) are plain SVG elements with a
``<title>`` per bar (the browser's tooltip), no fonts or images from outside.
"""

from __future__ import annotations

import html
import io
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = [
    "SEVERITY_COLORS",
    "WAIT_COLORS",
    "cards",
    "escape",
    "inline_svg",
    "page",
    "svg_bar_chart",
    "svg_columns",
    "svg_figure",
    "svg_hbars",
    "svg_stack",
    "table",
    "wait_color",
]

#: Bar colours by severity / state.
SEVERITY_COLORS = {"high": "#c62828", "medium": "#e65100", "low": "#1565c0", "info": "#9e9e9e", "ok": "#2e7d32",
                   "after": "#81c784", "plain": "#5c6bc0"}
#: Wait-event colours: LockManager red, CPU green, the rest from a palette (:func:`wait_color`).
WAIT_COLORS = {"LWLock:LockManager": "#d62728", "CPU": "#4caf50"}
_PALETTE = ("#9467bd", "#ff7f0e", "#1f77b4", "#17becf", "#8c564b", "#e377c2", "#bcbd22", "#7f7f7f")

_CSS = """
:root{--bad:#c62828;--warn:#e65100;--low:#1565c0;--ok:#2e7d32;--muted:#666;--line:#d8d8d8}
*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0 auto;padding:1.2em 1.5em;
max-width:1200px;color:#222;line-height:1.4}
h1{font-size:1.6em;margin:.2em 0 .4em}h2{font-size:1.25em;margin-top:1.8em;border-bottom:1px solid var(--line)}
h3{font-size:1.05em;margin:1.2em 0 .4em}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;margin:.6em 0;font-size:.88em}
th,td{border:1px solid var(--line);padding:.25em .6em;text-align:right;vertical-align:top}
th{background:#f3f3f3}td{overflow-wrap:anywhere}
td.l,th.l{text-align:left}td.l{max-width:46em}
.bad{color:var(--bad);font-weight:bold}.ok{color:var(--ok)}.muted{color:var(--muted)}
code{background:#f3f3f3;padding:.1em .3em;overflow-wrap:anywhere}
pre{background:#f6f8fa;border:1px solid var(--line);padding:.5em .7em;white-space:pre-wrap;overflow-wrap:anywhere;
font-size:.85em;margin:.4em 0}pre.long{max-height:22em;overflow:auto}
figure{margin:1em 0;max-width:100%}svg{max-width:100%;height:auto}
.cards{display:flex;flex-wrap:wrap;gap:.7em;margin:.8em 0}
.card{border:1px solid var(--line);border-radius:6px;padding:.5em .9em;min-width:9.5em;flex:1 1 9.5em}
.card .v{font-size:1.5em;font-weight:600;white-space:nowrap}.card .k{color:var(--muted);font-size:.85em}
.card.bad{border-color:var(--bad);background:#fdecea;font-weight:normal}.card.bad .v{color:var(--bad)}
.verdict{border-left:6px solid var(--muted);background:#f5f5f5;padding:.7em 1em;margin:.8em 0;font-size:1.08em}
.verdict.contention,.verdict.high{border-color:var(--bad);background:#fdecea}
.verdict.risk,.verdict.medium{border-color:var(--warn);background:#fff3e0}
.verdict.healthy,.verdict.ok{border-color:var(--ok);background:#e8f5e9}
.item{border:1px solid var(--line);border-left:5px solid var(--muted);border-radius:4px;padding:.5em .8em;
margin:.55em 0}
.item.high{border-left-color:var(--bad)}.item.medium{border-left-color:var(--warn)}.item.low{border-left-color:var(--low)}
.item .t{font-weight:600}.item .e{color:#444;font-size:.92em;margin:.2em 0}
.item .f{background:#f1f8e9;border-radius:3px;padding:.25em .5em;font-size:.92em;margin-top:.3em}
.sev{display:inline-block;border-radius:3px;padding:0 .4em;font-size:.8em;color:#fff;background:var(--muted);
margin-right:.4em;vertical-align:1px}
.sev.high{background:var(--bad)}.sev.medium{background:var(--warn)}.sev.low{background:var(--low)}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(540px,100%),1fr));gap:0 1.5em}
@media print{body{max-width:none;padding:0;font-size:10pt}.scroll{overflow:visible}pre.long{max-height:none}
h2,h3{break-after:avoid}figure,.item,.card,.verdict,tr,pre{break-inside:avoid}
.grid{display:block}th{background:#eee !important}}
"""


def escape(text: object) -> str:
    """HTML-escape any value's ``str``."""
    return html.escape(str(text))


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]], *, left: int = 1,
          classes: Sequence[Sequence[str]] | None = None) -> str:
    """An HTML table; the first ``left`` columns are left-aligned; ``classes[r][c]`` adds a cell class."""
    out = ['<div class="scroll"><table><tr>']
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
    out.append("</table></div>")
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
    return svg_figure(fig)


def wait_color(label: str, index: int) -> str:
    """The colour of a wait label (``index``: its position among the labels without a fixed colour)."""
    return WAIT_COLORS.get(label) or _PALETTE[index % len(_PALETTE)]


def _num(value: float) -> str:
    if value >= 100 or value == int(value):
        return f"{value:,.0f}"
    return f"{value:,.2f}" if value < 10 else f"{value:,.1f}"


def _clip(text: str, limit: int) -> str:
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 1] + "\u2026"


def _svg_open(width: int, height: int, title: str) -> str:
    return (f'<figure><svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" '
            f'height="{height}" role="img" aria-label="{escape(title)}" font-family="system-ui,sans-serif" '
            f'font-size="12"><text x="0" y="15" font-size="14" font-weight="600">{escape(title)}</text>')


def svg_hbars(rows: Sequence[tuple[str, float, str]], *, title: str, unit: str,
              ref: tuple[float, str] | None = None, after: Sequence[float | None] | None = None,
              after_label: str = "after", now_label: str = "now", width: int = 1000, label_chars: int = 48) -> str:
    """Horizontal bars, one per row, labels on the left: an inline ``<svg>`` that scales to its container.

    :param rows: ``(label, value, colour)`` per bar (value >= 0, in ``unit``).
    :param ref: a vertical reference line ``(value, label)``, e.g. the fast-path slot count.
    :param after: a second, thinner bar per row (e.g. the value after a fix), None to skip one.
    """
    label_w = min(int(label_chars * 7.2) + 10, width // 2)
    bar_h, gap, top = (22, 8, 46) if after else (16, 6, 40)
    height = top + len(rows) * (bar_h + gap) + 26
    values = [v for _, v, _ in rows] + [a for a in (after or ()) if a is not None] + ([ref[0]] if ref else [])
    top_value = max([*values, 1e-9])
    plot_w = width - label_w - 90

    def x(v: float) -> float:
        return label_w + plot_w * max(0.0, v) / top_value

    out = [_svg_open(width, height, title)]
    out.append(f'<text x="{width}" y="15" text-anchor="end" fill="#666">{escape(unit)}</text>')
    if after:
        now_color = rows[0][2] if rows else "#888"
        out.append(f'<rect x="{label_w}" y="24" width="10" height="10" fill="{now_color}"/>'
                   f'<text x="{label_w + 14}" y="33">{escape(now_label)}</text>'
                   f'<rect x="{label_w + 24 + 7 * len(now_label)}" y="24" width="10" height="10" '
                   f'fill="{SEVERITY_COLORS["after"]}"/><text x="{label_w + 38 + 7 * len(now_label)}" y="33">'
                   f"{escape(after_label)}</text>")
    for i, (label, value, color) in enumerate(rows):
        y = top + i * (bar_h + gap)
        main_h = bar_h if not after else bar_h * 0.6
        out.append(f'<text x="{label_w - 6}" y="{y + main_h / 2 + 4:.1f}" text-anchor="end">'
                   f"<title>{escape(label)}</title>{escape(_clip(label, label_chars))}</text>")
        out.append(f'<rect x="{label_w}" y="{y}" width="{max(0.5, x(value) - label_w):.1f}" height="{main_h:.1f}" '
                   f'fill="{color}"><title>{escape(label)}: {_num(value)} {escape(unit)}</title></rect>')
        out.append(f'<text x="{x(value) + 4:.1f}" y="{y + main_h / 2 + 4:.1f}">{_num(value)}</text>')
        if after and i < len(after) and after[i] is not None:
            a = float(after[i] or 0.0)
            ay = y + main_h + 1
            out.append(f'<rect x="{label_w}" y="{ay:.1f}" width="{max(0.5, x(a) - label_w):.1f}" '
                       f'height="{bar_h - main_h - 1:.1f}" fill="{SEVERITY_COLORS["after"]}"><title>{escape(label)}: '
                       f'{_num(a)} {escape(unit)} {escape(after_label)}</title></rect>')
            out.append(f'<text x="{x(a) + 4:.1f}" y="{ay + 7:.1f}" font-size="10" fill="#2e7d32">{_num(a)}</text>')
    bottom = top + len(rows) * (bar_h + gap)
    out.append(f'<line x1="{label_w}" y1="{top - 4}" x2="{label_w}" y2="{bottom}" stroke="#999"/>')
    if ref is not None:
        rx = x(ref[0])
        out.append(f'<line x1="{rx:.1f}" y1="{top - 8}" x2="{rx:.1f}" y2="{bottom}" stroke="#c62828" '
                   f'stroke-dasharray="5,3" stroke-width="1.5"/>')
        out.append(f'<text x="{rx:.1f}" y="{bottom + 16}" text-anchor="middle" fill="#c62828">'
                   f"{escape(ref[1])}</text>")
    out.append("</svg></figure>")
    return "".join(out)


def svg_columns(categories: Sequence[str], series: Sequence[tuple[str, Sequence[float], str]], *, title: str,
                unit: str, xlabel: str = "", width: int = 1000, height: int = 260) -> str:
    """Vertical columns, grouped per category (e.g. 16 lock partitions, now vs after a fix): an inline ``<svg>``.

    :param series: ``(name, values, colour)``; each has one value per category.
    """
    left, right, top, bottom = 60, 10, 44, 40 if xlabel else 26
    plot_w, plot_h = width - left - right, height - top - bottom
    top_value = max([v for _, vs, _ in series for v in vs] + [1e-9])
    n = max(1, len(categories))
    slot = plot_w / n
    bar_w = slot * 0.8 / max(1, len(series))
    out = [_svg_open(width, height, title)]
    out.append(f'<text x="{width}" y="15" text-anchor="end" fill="#666">{escape(unit)}</text>')
    lx = left
    for name, _, color in series if len(series) > 1 else ():
        out.append(f'<rect x="{lx}" y="24" width="10" height="10" fill="{color}"/>'
                   f'<text x="{lx + 14}" y="33">{escape(name)}</text>')
        lx += 24 + 7 * len(name)
    for k in range(5):
        v = top_value * k / 4
        y = top + plot_h - plot_h * k / 4
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{width - right}" y2="{y:.1f}" stroke="#eee"/>'
                   f'<text x="{left - 4}" y="{y + 4:.1f}" text-anchor="end" fill="#666">{_num(v)}</text>')
    for i, cat in enumerate(categories):
        for j, (name, values, color) in enumerate(series):
            v = values[i] if i < len(values) else 0.0
            h = plot_h * max(0.0, v) / top_value
            bx = left + i * slot + slot * 0.1 + j * bar_w
            out.append(f'<rect x="{bx:.1f}" y="{top + plot_h - h:.1f}" width="{bar_w:.1f}" height="{max(h, 0.5):.1f}" '
                       f'fill="{color}"><title>{escape(cat)} {escape(name)}: {_num(v)} {escape(unit)}</title></rect>')
        out.append(f'<text x="{left + (i + 0.5) * slot:.1f}" y="{top + plot_h + 15}" text-anchor="middle">'
                   f"{escape(cat)}</text>")
    out.append(f'<line x1="{left}" y1="{top + plot_h}" x2="{width - right}" y2="{top + plot_h}" stroke="#999"/>')
    if xlabel:
        out.append(f'<text x="{left + plot_w / 2:.1f}" y="{height - 6}" text-anchor="middle" fill="#666">'
                   f"{escape(xlabel)}</text>")
    out.append("</svg></figure>")
    return "".join(out)


def svg_stack(parts: Sequence[tuple[str, float, str]], *, title: str, unit: str, width: int = 1000) -> str:
    """One horizontal bar split into parts (e.g. average active sessions by wait event) with a legend below.

    :param parts: ``(label, value, colour)``, drawn left to right.
    """
    total = sum(v for _, v, _ in parts) or 1e-9
    legend_rows = (len(parts) + 2) // 3
    height = 30 + 36 + legend_rows * 20 + 8
    out = [_svg_open(width, height, title)]
    out.append(f'<text x="{width}" y="15" text-anchor="end" fill="#666">{escape(unit)}</text>')
    x = 0.0
    for label, value, color in parts:
        w = width * value / total
        out.append(f'<rect x="{x:.1f}" y="26" width="{max(w, 0.5):.1f}" height="30" fill="{color}"><title>'
                   f"{escape(label)}: {_num(value)} {escape(unit)} ({100 * value / total:.1f}%)</title></rect>")
        if w > 70:
            out.append(f'<text x="{x + 5:.1f}" y="46" fill="#fff" font-weight="600">{100 * value / total:.0f}%</text>')
        x += w
    for i, (label, value, color) in enumerate(parts):
        lx, ly = (i % 3) * (width / 3), 74 + (i // 3) * 20
        out.append(f'<rect x="{lx:.1f}" y="{ly - 10}" width="11" height="11" fill="{color}"/>'
                   f'<text x="{lx + 16:.1f}" y="{ly}">{escape(_clip(label, 40))}: {_num(value)} '
                   f"({100 * value / total:.1f}%)</text>")
    out.append("</svg></figure>")
    return "".join(out)


def cards(items: Sequence[tuple[str, str, bool]]) -> str:
    """A row of summary cards: ``(value, caption, alarming)``."""
    return '<div class="cards">' + "".join(
        f'<div class="card{" bad" if bad else ""}"><div class="v">{escape(value)}</div>'
        f'<div class="k">{escape(caption)}</div></div>' for value, caption, bad in items) + "</div>"


def page(title: str, body: Sequence[str]) -> str:
    """A complete HTML document with inline CSS around the given body fragments."""
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>'
            f"<style>{_CSS}</style></head><body><h1>{escape(title)}</h1>" + "\n".join(body) + "</body></html>")


def inline_svg(fig: Any) -> str:
    """A matplotlib figure as an inline ``<svg>`` element (no XML prologue), and the figure closed."""
    import matplotlib.pyplot as plt

    buf = io.StringIO()
    fig.savefig(buf, format="svg")
    plt.close(fig)
    svg = buf.getvalue()
    return svg[svg.index("<svg"):]


def svg_figure(fig: Any) -> str:
    """:func:`inline_svg` wrapped in ``<figure>``."""
    return "<figure>" + inline_svg(fig) + "</figure>"
