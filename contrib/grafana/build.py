"""Generate ``contrib/grafana/lockscope.json``, the Grafana dashboard for lockscope's Prometheus exporter, with the
``grafana-foundation-sdk`` builders (PyPI ``grafana-foundation-sdk``, Grafana's own maintained library).

    pip install grafana-foundation-sdk
    python contrib/grafana/build.py            # rewrites contrib/grafana/lockscope.json
    python contrib/grafana/build.py --check    # exit 1 when the committed JSON differs from what this generates

Every panel queries only metrics ``lockscope watch --prometheus`` emits (``lockscope.watch.prometheus.METRIC_NAMES``,
whose shared part ``lockscope export-queries`` emits under the same names through postgres_exporter;
tests/test_contrib.py checks that, and parses each expression with promtool). Variables: ``datasource`` (a
Prometheus data source), ``server`` (the PostgreSQL servers, host:port, from either source).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from grafana_foundation_sdk.builders import common as common_b
from grafana_foundation_sdk.builders import dashboard as dash_b
from grafana_foundation_sdk.builders import prometheus as prom_b
from grafana_foundation_sdk.builders import stat as stat_b
from grafana_foundation_sdk.builders import table as table_b
from grafana_foundation_sdk.builders import timeseries as ts_b
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models import common as common_m
from grafana_foundation_sdk.models import dashboard as dash_m
from grafana_foundation_sdk.models import prometheus as prom_m

OUT = Path(__file__).with_name("lockscope.json")
UID = "lockscope-watch"
DS = dash_m.DataSourceRef(type_val="prometheus", uid="${datasource}")
SEL = 'server=~"$server"'
LM = 'wait_event_type="LWLock", wait_event="LockManager"'
RATE = "$__rate_interval"
ACTIVE = "lockscope_activity_active_sessions"

#: Expressions per panel. The shared metrics (lockscope watch and export-queries through postgres_exporter: one
#: vocabulary, docs/monitoring.md) are aggregated by ``server`` (the PostgreSQL server, host:port), so the panels
#: work with either source; the sampler and top-statement panels need lockscope watch.
AAS_BY_WAIT = f"sum by (server, wait_event_type, wait_event) (avg_over_time({ACTIVE}{{{SEL}}}[{RATE}]))"
LOCKMANAGER_SHARE = (
    f"sum by (server) (sum_over_time({ACTIVE}{{{SEL}, {LM}}}[{RATE}]))"
    f"\n/ on (server)\nsum by (server) (sum_over_time({ACTIVE}{{{SEL}}}[{RATE}]))"
)
LOCKMANAGER_AAS = f"lockscope_lockmanager_waiting_sessions{{{SEL}}}"
AAS_BY_DATABASE = f"sum by (server, datname) (avg_over_time({ACTIVE}{{{SEL}, {LM}}}[{RATE}]))"
MAIN_TABLE = f"sum by (server) (lockscope_locks_relation_main_table{{{SEL}}})"
RELATION_LOCKS = f"sum by (server) (lockscope_locks_relation{{{SEL}}})"
MAX_BACKEND = f"max by (server) (lockscope_locks_max_backend_main_table{{{SEL}}})"
SLOTS = f"max by (server) (lockscope_fastpath_slots_per_backend{{{SEL}}})"
FASTPATH_EXCEEDED = (
    f"sum by (server, locktype) (rate(lockscope_stat_lock_fastpath_exceeded_total{{{SEL}}}[{RATE}]))"
)
TOP_STATEMENTS = (
    f"topk(10, sum by (server, queryid) (rate(lockscope_statement_lockmanager_samples_total{{{SEL}}}[$__range]))"
    f"\n/ on (server) group_left\nsum by (server) (rate(lockscope_samples_total{{{SEL}}}[$__range])))"
)
SAMPLER_UP = f"lockscope_up{{{SEL}}}"
SAMPLE_RATE = f"lockscope_sample_rate_hz{{{SEL}}}"
LATE = f"sum by (server) (increase(lockscope_late_ticks_total{{{SEL}}}[{RATE}]))"
GAPS = f"sum by (server) (increase(lockscope_gaps_total{{{SEL}}}[{RATE}]))"

#: Every expression in the dashboard, by panel title (the test reads this through the JSON as well).
EXPRESSIONS = {
    "AAS by wait event": [AAS_BY_WAIT],
    "LWLock:LockManager share of active sessions": [LOCKMANAGER_SHARE],
    "Sessions waiting on LWLock:LockManager": [LOCKMANAGER_AAS, AAS_BY_DATABASE],
    "Main lock table relation locks": [MAIN_TABLE, RELATION_LOCKS, MAX_BACKEND, SLOTS],
    "Fast-path exceeded (PostgreSQL 19 pg_stat_lock)": [FASTPATH_EXCEEDED],
    "Top statements by LWLock:LockManager AAS (lockscope watch)": [TOP_STATEMENTS],
    "Sampler (lockscope watch)": [SAMPLER_UP, SAMPLE_RATE, LATE, GAPS],
}


def _query(ref: str, expr: str, legend: str, *, table: bool = False) -> prom_b.Dataquery:
    q = prom_b.Dataquery().ref_id(ref).expr(expr).legend_format(legend).datasource(DS)
    if table:
        q = q.instant().format(prom_m.PromQueryFormat.TABLE)
    return q


def _grid(x: int, y: int, w: int, h: int) -> dash_m.GridPos:
    return dash_m.GridPos(h=h, w=w, x=x, y=y)


def build() -> dict[str, Any]:
    """The dashboard as a JSON-ready dict."""
    stacked = common_b.StackingConfig().mode(common_m.StackingMode.NORMAL)
    dashboard = (
        dash_b.Dashboard("lockscope: lock manager contention")
        .uid(UID)
        .tags(["lockscope", "postgresql", "locks"])
        .description("lockscope's lock-manager metrics, from lockscope watch or from export-queries run by "
                     "postgres_exporter (one vocabulary): average active sessions by wait event, the "
                     "LWLock:LockManager share, main-lock-table relation locks, PG 19 fast-path overflows, and (watch) "
                     "the statements behind them.")
        .refresh("30s")
        .time("now-1h", "now")
        .timezone("browser")
        .with_variable(dash_b.DatasourceVariable("datasource").label("Data source").type("prometheus"))
        .with_variable(
            dash_b.QueryVariable("server").label("PostgreSQL server").datasource(DS)
            .query({"query": f"label_values({ACTIVE}, server)", "refId": "server"})
            .multi(True).include_all(True).refresh(dash_m.VariableRefresh.ON_TIME_RANGE_CHANGED))
        .with_panel(
            ts_b.Panel().datasource(DS).title("AAS by wait event")
            .grid_pos(_grid(0, 0, 16, 9)).unit("short").min(0)
            .description("Average active sessions by wait event (lockscope_activity_active_sessions averaged over "
                         "the interval). CPU = active and not waiting.")
            .stacking(stacked).fill_opacity(60).line_width(1)
            .with_target(_query("A", AAS_BY_WAIT, "{{server}} {{wait_event_type}}:{{wait_event}}")))
        .with_panel(
            stat_b.Panel().datasource(DS).title("LWLock:LockManager share of active sessions")
            .grid_pos(_grid(16, 0, 8, 9))
            .unit("percentunit").min(0).max(1).decimals(1)
            .description("Share of active-session samples waiting on LWLock:LockManager (the shipped alert "
                         "LockscopeLockManagerContention fires above 20 % for 5 minutes).")
            .thresholds(dash_b.ThresholdsConfig().mode(dash_m.ThresholdsMode.ABSOLUTE).steps([
                dash_m.Threshold(value=None, color="green"),
                dash_m.Threshold(value=0.05, color="yellow"),
                dash_m.Threshold(value=0.2, color="red")]))
            .with_target(_query("A", LOCKMANAGER_SHARE, "{{server}}")))
        .with_panel(
            ts_b.Panel().datasource(DS).title("Sessions waiting on LWLock:LockManager")
            .grid_pos(_grid(0, 9, 12, 8)).unit("short")
            .min(0).description("lockscope watch's own 10-second average, and the AAS on LockManager per database.")
            .with_target(_query("A", LOCKMANAGER_AAS, "{{server}} (last 10 s)"))
            .with_target(_query("B", AAS_BY_DATABASE, "{{server}} {{datname}}")))
        .with_panel(
            ts_b.Panel().datasource(DS).title("Main lock table relation locks")
            .grid_pos(_grid(12, 9, 12, 8))
            .unit("short").min(0)
            .description("From pg_locks (lockscope watch --locks-every N, or export-queries every 60 s): relation "
                         "locks, those in the main lock table (not fast-path), the most of one backend, and the "
                         "fast-path slots per backend.")
            .with_target(_query("A", MAIN_TABLE, "{{server}} main table"))
            .with_target(_query("B", RELATION_LOCKS, "{{server}} all relation locks"))
            .with_target(_query("C", MAX_BACKEND, "{{server}} most in one backend"))
            .with_target(_query("D", SLOTS, "{{server}} fast-path slots per backend")))
        .with_panel(
            ts_b.Panel().datasource(DS).title("Fast-path exceeded (PostgreSQL 19 pg_stat_lock)")
            .grid_pos(_grid(0, 17, 12, 8))
            .unit("ops").min(0)
            .description("pg_stat_lock.fastpath_exceeded per second: locks that found their backend's fast-path "
                         "group full (PostgreSQL 19; empty before).")
            .with_target(_query("A", FASTPATH_EXCEEDED, "{{server}} {{locktype}}")))
        .with_panel(
            table_b.Panel().datasource(DS).title("Top statements by LWLock:LockManager AAS (lockscope watch)")
            .grid_pos(_grid(12, 17, 12, 8))
            .description("The statements whose sessions waited on LWLock:LockManager most over the dashboard's "
                         "time range, by queryid (join pg_stat_statements.queryid for the text; lockscope exports the "
                         "top 10 and no SQL text unless --prometheus-query-text).")
            .with_target(_query("A", TOP_STATEMENTS, "", table=True)))
        .with_panel(
            ts_b.Panel().datasource(DS).title("Sampler (lockscope watch)")
            .grid_pos(_grid(0, 25, 24, 6)).min(0)
            .description("lockscope_up (1 = sampling), achieved samples per second, late ticks and gaps "
                         "(connection lost) per interval.")
            .with_target(_query("A", SAMPLER_UP, "{{server}} up"))
            .with_target(_query("B", SAMPLE_RATE, "{{server}} samples/s"))
            .with_target(_query("C", LATE, "{{server}} late ticks"))
            .with_target(_query("D", GAPS, "{{server}} gaps")))
    )
    doc: dict[str, Any] = json.loads(json.dumps(dashboard.build(), cls=JSONEncoder))
    return doc


def render() -> str:
    """The file's text: indented JSON, keys sorted, trailing newline."""
    return json.dumps(build(), indent=2, sort_keys=True) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the committed JSON is not up to date")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        if not OUT.exists() or OUT.read_text(encoding="utf-8") != text:
            print(f"{OUT} is not up to date: run python {Path(__file__).name}", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
