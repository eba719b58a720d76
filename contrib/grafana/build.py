"""Generate ``contrib/grafana/lockscope.json``, the Grafana dashboard for lockscope's Prometheus exporter, with the
``grafana-foundation-sdk`` builders (PyPI ``grafana-foundation-sdk``, Grafana's own maintained library).

    pip install grafana-foundation-sdk
    python contrib/grafana/build.py            # rewrites contrib/grafana/lockscope.json
    python contrib/grafana/build.py --check    # exit 1 when the committed JSON differs from what this generates

Every panel queries only metrics ``lockscope watch --prometheus`` emits (``lockscope.watch.prometheus.METRIC_NAMES``;
tests/test_contrib.py checks that, and parses each expression with promtool). Variables: ``datasource`` (a
Prometheus data source), ``instance`` (the lockscope scrape targets, one per PostgreSQL server).
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
SEL = 'instance=~"$instance"'
LM = 'wait_event_type="LWLock", wait_event="LockManager"'
RATE = "$__rate_interval"


def _samples(by: str = "instance") -> str:
    """Samples taken per second, per ``by``: the denominator of every AAS."""
    return f"sum by ({by}) (rate(lockscope_samples_total{{{SEL}}}[{RATE}]))"


#: (panel title, [(refId, PromQL, legend)], unit, description) per panel; the expressions are what the test checks.
AAS_BY_WAIT = (
    f"sum by (instance, wait_event_type, wait_event) (rate(lockscope_active_session_samples_total{{{SEL}}}[{RATE}]))"
    f"\n/ on (instance) group_left\n{_samples()}"
)
LOCKMANAGER_SHARE = (
    f"sum by (instance) (rate(lockscope_active_session_samples_total{{{SEL}, {LM}}}[{RATE}]))"
    f"\n/ on (instance)\nsum by (instance) (rate(lockscope_active_session_samples_total{{{SEL}}}[{RATE}]))"
)
LOCKMANAGER_AAS = f"lockscope_lockmanager_waiting_sessions{{{SEL}}}"
AAS_BY_DATABASE = (
    f"sum by (instance, datname) (rate(lockscope_active_session_samples_total{{{SEL}, {LM}}}[{RATE}]))"
    f"\n/ on (instance) group_left\n{_samples()}"
)
MAIN_TABLE = f"lockscope_main_table_relation_locks{{{SEL}}}"
RELATION_LOCKS = f"lockscope_relation_locks{{{SEL}}}"
MAX_BACKEND = f"lockscope_max_backend_main_table_relation_locks{{{SEL}}}"
SLOTS = f"lockscope_fastpath_slots_per_backend{{{SEL}}}"
FASTPATH_EXCEEDED = f"sum by (instance, locktype) (rate(lockscope_lock_fastpath_exceeded_total{{{SEL}}}[{RATE}]))"
TOP_STATEMENTS = (
    f"topk(10, sum by (instance, query_id) (rate(lockscope_statement_lockmanager_samples_total{{{SEL}}}[$__range]))"
    f"\n/ on (instance) group_left\nsum by (instance) (rate(lockscope_samples_total{{{SEL}}}[$__range])))"
    f"\n* on (instance, query_id) group_left (query)\nmax by (instance, query_id, query) "
    f"(lockscope_statement_info{{{SEL}}})"
)
SAMPLER_UP = f"lockscope_up{{{SEL}}}"
SAMPLE_RATE = f"lockscope_sample_rate_hz{{{SEL}}}"
LATE = f"sum by (instance) (increase(lockscope_late_ticks_total{{{SEL}}}[{RATE}]))"
GAPS = f"sum by (instance) (increase(lockscope_gaps_total{{{SEL}}}[{RATE}]))"

#: Every expression in the dashboard, by panel title (the test reads this through the JSON as well).
EXPRESSIONS = {
    "AAS by wait event": [AAS_BY_WAIT],
    "LWLock:LockManager share of active sessions": [LOCKMANAGER_SHARE],
    "Sessions waiting on LWLock:LockManager": [LOCKMANAGER_AAS, AAS_BY_DATABASE],
    "Main lock table relation locks (--locks-every)": [MAIN_TABLE, RELATION_LOCKS, MAX_BACKEND, SLOTS],
    "Fast-path exceeded (PostgreSQL 19 pg_stat_lock)": [FASTPATH_EXCEEDED],
    "Top statements by LWLock:LockManager AAS": [TOP_STATEMENTS],
    "Sampler": [SAMPLER_UP, SAMPLE_RATE, LATE, GAPS],
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
        .description("Wait-event sampling by lockscope watch (pg_stat_activity or pg_wait_sampling): average active "
                     "sessions by wait event, the LWLock:LockManager share, main-lock-table relation locks, PG 19 "
                     "fast-path overflows, and the statements behind them.")
        .refresh("30s")
        .time("now-1h", "now")
        .timezone("browser")
        .with_variable(dash_b.DatasourceVariable("datasource").label("Data source").type("prometheus"))
        .with_variable(
            dash_b.QueryVariable("instance").label("lockscope target").datasource(DS)
            .query({"query": "label_values(lockscope_up, instance)", "refId": "instance"})
            .multi(True).include_all(True).refresh(dash_m.VariableRefresh.ON_TIME_RANGE_CHANGED))
        .with_panel(
            ts_b.Panel().datasource(DS).title("AAS by wait event")
            .grid_pos(_grid(0, 0, 16, 9)).unit("short").min(0)
            .description("Average active sessions by wait event: active-session samples per sample taken. "
                         "CPU = active and not waiting.")
            .stacking(stacked).fill_opacity(60).line_width(1)
            .with_target(_query("A", AAS_BY_WAIT, "{{instance}} {{wait_event_type}}:{{wait_event}}")))
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
            .with_target(_query("A", LOCKMANAGER_SHARE, "{{instance}}")))
        .with_panel(
            ts_b.Panel().datasource(DS).title("Sessions waiting on LWLock:LockManager")
            .grid_pos(_grid(0, 9, 12, 8)).unit("short")
            .min(0).description("lockscope's own 10-second average, and the AAS on LockManager per database.")
            .with_target(_query("A", LOCKMANAGER_AAS, "{{instance}} (last 10 s)"))
            .with_target(_query("B", AAS_BY_DATABASE, "{{instance}} {{datname}}")))
        .with_panel(
            ts_b.Panel().datasource(DS).title("Main lock table relation locks (--locks-every)")
            .grid_pos(_grid(12, 9, 12, 8))
            .unit("short").min(0)
            .description("From lockscope's pg_locks snapshots (lockscope watch --locks-every N): relation locks, "
                         "those in the main lock table (not fast-path), the most of one backend, and the fast-path "
                         "slots per backend.")
            .with_target(_query("A", MAIN_TABLE, "{{instance}} main table"))
            .with_target(_query("B", RELATION_LOCKS, "{{instance}} all relation locks"))
            .with_target(_query("C", MAX_BACKEND, "{{instance}} most in one backend"))
            .with_target(_query("D", SLOTS, "{{instance}} fast-path slots per backend")))
        .with_panel(
            ts_b.Panel().datasource(DS).title("Fast-path exceeded (PostgreSQL 19 pg_stat_lock)")
            .grid_pos(_grid(0, 17, 12, 8))
            .unit("ops").min(0)
            .description("pg_stat_lock.fastpath_exceeded per second: locks that found their backend's fast-path "
                         "group full (PostgreSQL 19; empty before).")
            .with_target(_query("A", FASTPATH_EXCEEDED, "{{instance}} {{locktype}}")))
        .with_panel(
            table_b.Panel().datasource(DS).title("Top statements by LWLock:LockManager AAS")
            .grid_pos(_grid(12, 17, 12, 8))
            .description("The statements whose sessions waited on LWLock:LockManager most over the dashboard's "
                         "time range (query_id joins pg_stat_statements; lockscope exports the top 10).")
            .with_target(_query("A", TOP_STATEMENTS, "", table=True)))
        .with_panel(
            ts_b.Panel().datasource(DS).title("Sampler")
            .grid_pos(_grid(0, 25, 24, 6)).min(0)
            .description("lockscope_up (1 = sampling), achieved samples per second, late ticks and gaps "
                         "(connection lost) per interval.")
            .with_target(_query("A", SAMPLER_UP, "{{instance}} up"))
            .with_target(_query("B", SAMPLE_RATE, "{{instance}} samples/s"))
            .with_target(_query("C", LATE, "{{instance}} late ticks"))
            .with_target(_query("D", GAPS, "{{instance}} gaps")))
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
