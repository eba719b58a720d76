"""``lockscope forecast`` in the terminal: a summary per scenario (measured, what-if) and one row per statement."""

from __future__ import annotations

import math

from rich.console import Group
from rich.table import Table
from rich.text import Text

from ..forecast.engine import ForecastReport, ScenarioForecast, saturation_rate
from ..forecast.model import CPU, Forecast

__all__ = ["binding_text", "partitions_text", "rate_text", "render_forecast", "saturation_text"]


def rate_text(value: float | None) -> str:
    """``12,345 TPS``, or ``unbounded`` for ``inf``, ``-`` for None."""
    if value is None:
        return "-"
    return f"{value:,.0f} TPS" if math.isfinite(value) else "unbounded"


def binding_text(f: Forecast) -> str:
    """What :attr:`Forecast.binding_resource` means, for a reader: where the backends' time goes, not which
    resource is busiest (``lock partition 4: its LWLock waits outweigh the CPU``). When the binding resource is
    the CPU yet most predicted LockManager time is the convoy behind preempted holders (a share of 50 % or more),
    it says so: those waits come from more runnable backends than cores, not from the partitions' own queues."""
    if f.binding_resource == CPU:
        if f.lockmanager_share >= 0.5 and f.convoy_wait_ms > f.partition_wait_ms:
            return (f"CPU: backends spend more time on the cores than queued on any lock partition's LWLock; most "
                    f"of the LockManager share ({f.lockmanager_share:.0%}) is the convoy behind lock holders the "
                    f"kernel preempted ({f.clients} clients on {f.cpus} cores)")
        return "CPU: backends spend more time on the cores than waiting on any lock partition"
    return f"lock {f.binding_resource}: backends spend more time waiting on its LWLock than on the CPU"


def saturation_text(s: ScenarioForecast) -> str:
    """The rate at which the hottest lock partition's LWLock would be held all the time, with the warning that
    backends queue on it long before (``298,707,727 TPS (partition 4; waits start far below)``)."""
    f = s.forecast
    if f.hottest_partition is None:
        return rate_text(saturation_rate(s))
    return (f"{rate_text(saturation_rate(s))} (partition {f.hottest_partition}; backends queue on its LWLock far "
            "below that rate: see the LockManager share)")


def partitions_text(load: tuple[int, ...]) -> str:
    """Main-table locks per partition as ``p3:2 p9:1`` (partitions without locks left out), ``-`` when none."""
    return " ".join(f"p{p}:{n}" for p, n in enumerate(load) if n) or "-"


def _scenario_table(report: ForecastReport, s: ScenarioForecast) -> Table:
    f = s.forecast
    t = Table(title=f"{s.label} ({s.capacity.describe()} fast-path)", show_header=False, title_justify="left")
    t.add_column("figure", style="bold")
    t.add_column("value")
    span = report.throughput_range_tps if s is report.measured else None
    t.add_row("predicted TPS", f"{f.throughput_tps:,.0f} at {f.clients} clients on {f.cpus} cores" + (
        f", between {span[0]:,.0f} and {span[1]:,.0f} (the execution time is an estimate: see the note)"
        if span is not None else ""))
    t.add_row("TPS ceiling", f"{rate_text(f.ceiling_tps)} (CPU alone {rate_text(f.cpu_ceiling_tps)}, "
                             f"knee at {f.knee_clients:.1f} clients)")
    t.add_row("binding resource", binding_text(f))
    if report.anchor is not None and not report.anchor.lockmanager_reproduced:
        t.add_row("LockManager share", Text(report.anchor.lockmanager_refusal(), style="yellow"))
    else:
        t.add_row("LockManager share", f"{f.lockmanager_share:.0%} of active sessions (AAS {f.lockmanager_aas:.1f}; "
                                       f"{f.lwlock_sleeps:.2f} LWLock sleeps per transaction)")
    t.add_row("CPU per transaction", f"{f.cpu_per_transaction_us:.1f} µs at {f.clients} clients")
    t.add_row("hottest lock partition held 100 % at", saturation_text(s))
    t.add_row("main-table locks / transaction", f"{s.main_table_locks_per_transaction:.1f}")
    per = " ".join(f"p{p}:{n:.3g}" for p, n in enumerate(s.partition_locks_per_transaction) if n > 0) or "none"
    t.add_row("main-table locks per partition / transaction", per)
    basis = f"at the measured rate {rate_text(s.rate_tps)}" if s.rate_tps is not None \
        else f"at the predicted {rate_text(f.throughput_tps)}"
    util = " ".join(f"p{p}:{u:.0%}" for p, u in enumerate(s.partition_utilisation_at_rate) if u > 0) or "none"
    held = (f"lock-partition LWLocks held {util} of the time (low even under contention: a backend that finds one "
            "taken sleeps, and the sleepers convoy)")
    t.add_row("utilisation " + basis, f"CPU {s.cpu_utilisation_at_rate:.0%}; {held}")
    return t


def _statements_table(s: ScenarioForecast) -> Table:
    t = Table(title=f"{s.label}: statements", title_justify="left")
    for name, justify in (("statement", "left"), ("calls/s", "right"), ("phase", "left"), ("locks", "right"),
                          ("main table", "right"), ("partitions of main-table locks", "left"),
                          ("own cost µs", "right"), ("ceiling alone", "right"), ("binding", "left"),
                          ("LockManager", "right")):
        t.add_column(name, justify=justify)  # type: ignore[arg-type]
    for shape, f in s.statements:
        text = " ".join(shape.statement.split())
        text = text if len(text) <= 60 else text[:57] + "..."
        rate = f"{shape.calls_per_s:,.1f}" if shape.calls_per_s is not None else "-"
        own = Text("unknown", style="yellow") if shape.own_s is None else f"{shape.own_s * 1e6:,.1f}"
        t.add_row(Text(text), rate, shape.phase, str(len(shape.locks)), str(len(shape.main_table_locks)),
                  partitions_text(shape.partition_load), own, rate_text(f.ceiling_tps), f.binding_resource,
                  f"{f.lockmanager_share:.0%}")
    return t


def _locks_table(s: ScenarioForecast) -> Table:
    t = Table(title=f"{s.label}: main-table locks and their lock partitions", title_justify="left")
    for name, justify in (("statement", "left"), ("order", "right"), ("relation", "left"), ("role", "left"),
                          ("mode", "left"), ("database", "right"), ("partition", "right")):
        t.add_column(name, justify=justify)  # type: ignore[arg-type]
    for shape, _ in s.statements:
        for lk in shape.main_table_locks:
            t.add_row(shape.name, str(lk.order), Text(lk.relation), lk.role, lk.mode, str(lk.database_oid),
                      str(lk.partition))
    return t


def _model_vs_now(report: ForecastReport) -> Table:
    """The model at the measured operating point beside what was measured: the self-check before any what-if."""
    anchor, live = report.anchor, report.live
    assert anchor is not None and live is not None
    t = Table(title="model vs now (the operating point measured over the interval)", title_justify="left",
              header_style="bold")
    for col in ("", "calls/s", "LockManager share", "connections", "active sessions (CPU)"):
        t.add_column(col, justify="left" if not col else "right")
    interval = anchor.measured_lockmanager_interval
    error = f" +-{100 * interval.half_width:.0f}" if interval is not None else ""
    t.add_row("measured", f"{anchor.measured_tps:,.0f}", f"{100 * anchor.measured_lockmanager_share:.0f}{error} %",
              str(live.population), f"{live.aas:.2f} ({live.aas_cpu:.2f})")
    label = "model" + (f", costs x {anchor.factor:.3g}" if anchor.reanchored else "")
    t.add_row(f"model, first estimate ({100 * anchor.off:+.0f} %)", f"{anchor.model_tps:,.0f}", "", "", "")
    t.add_row(label, f"{anchor.anchored_tps:,.0f}", f"{100 * anchor.model_lockmanager_share:.0f} %",
              str(live.population), "")
    return t


def render_forecast(report: ForecastReport, *, verbose: bool = False) -> Group:
    """The terminal rendering of a forecast (``verbose``: every main-table lock with its lock partition)."""
    think = f", think time {report.think_s * 1000:.2f} ms" if report.think_s else ""
    parts: list[object] = [Text(report.model_check.headline, style="bold red")] if report.model_check else []
    parts.append(Text(f"model: {report.cores} cores, {report.clients} clients ({report.clients_source})"
                      f"{think}; calibration: {report.calibration.source}"))
    if report.coverage is not None:
        parts.append(Text(report.coverage.text(), style="bold" if report.coverage.uncovered else ""))
    if report.anchor is not None and report.live is not None:
        parts.append(_model_vs_now(report))
    for s in (report.measured, report.what_if):
        if s is None:
            continue
        parts += [_scenario_table(report, s), _statements_table(s)]
        if verbose and any(shape.main_table_locks for shape, _ in s.statements):
            parts.append(_locks_table(s))
    gain = report.gain
    if gain is not None:
        lm = (f"LockManager share {100 * gain['lockmanager_share_before']:.0f} % -> "
              f"{100 * gain['lockmanager_share_after']:.0f} %"
              if report.anchor is None or report.anchor.lockmanager_reproduced else "LockManager share not forecast")
        parts.append(Text(
            f"the what-if at {report.clients} clients: TPS {100 * gain['tps']:+.1f} %, {lm}, CPU "
            f"per transaction {gain['cpu_us_before']:.1f} -> {gain['cpu_us_after']:.1f} µs", style="bold"))
    for note in report.notes:
        parts.append(Text(f"note: {note}", style="yellow"))
    return Group(*parts)  # type: ignore[arg-type]
