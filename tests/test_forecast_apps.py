"""benchmarks/forecast_apps.py runs end to end (issue 27): one application, one client count, every field of its
result present. No accuracy assertion: the recorded figures are in BENCHMARKS.md."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from benchmarks import forecast_apps

STATEMENT_FIELDS = ("measured_tps", "sampled_lockmanager_share", "forecast_tps", "ratio", "own_cost_source",
                    "modelled_lockmanager_share", "timed_forecast_tps", "timed_ratio", "population",
                    "model_lockmanager_share_at_population", "lockmanager_reproduced", "forecast_done_s",
                    "sampled_lockmanager_share_95", "sampled_too_uncertain", "load_retries")
#: The statements the end-to-end run measures (of miniflux's five).
SOME_STATEMENTS = ("categories_with_counts", "set_entries_status")
WORKLOAD_FIELDS = ("pgbench_tps", "measured_calls_per_s", "first_estimate_tps", "first_ratio", "factor",
                   "anchored_tps", "population", "sampled_lockmanager_share", "sampled_lockmanager_share_95",
                   "modelled_lockmanager_share_first",
                   "modelled_lockmanager_share_anchored", "coverage_calls", "coverage_time", "uncovered")


def test_every_statement_binds_its_example() -> None:
    """Each application's scripts parse, every pgbench variable gets its example value, and the mix names only
    scripts that exist."""
    for app in forecast_apps.APPS:
        statements = forecast_apps.app_statements(app)
        assert 4 <= len(statements) <= 8, app
        for st in statements:
            assert st.source.startswith(("queries/", "internal/", "src/", "synapse/", "crates/")), st.path
            assert re.search(r"(?<!:):[a-z_]", st.text) is None, st.path  # no pgbench variable left
        for arg in forecast_apps.mix_args(app):
            if arg != "-f":
                assert Path(arg.rsplit("@", 1)[0]).is_file(), arg


def test_statement_load_covers_its_forecasts() -> None:
    """A statement's pgbench run lasts --seconds, at least STATEMENT_LOAD_MIN_S, and past its forecasts: 2 s in,
    then each forecast's samples and 2 s for its probe."""
    assert forecast_apps.StatementMode().load_s(2.0) == 6.0
    assert forecast_apps.StatementMode(sample_s=20.0).load_s(26.0) == 26.0
    assert forecast_apps.StatementMode(sample_s=20.0).load_s(6.0) == 24.0
    assert forecast_apps.StatementMode(sample_s=20.0, short_sample_s=2.0).load_s(26.0) == 28.0


def test_summary_lockmanager_table() -> None:
    """The summary's LockManager table gives the sampled share with its interval and batches, the model's, and
    whether they are within 10 points; a point without samples prints dashes."""
    point = {"statement": "count_unread", "clients": 32, "sample_s": 20.0, "error": None,
             "sampled_lockmanager_share": 0.25, "model_lockmanager_share_at_population": 0.12,
             "sampled_lockmanager_share_95": {"low": 0.19, "high": 0.31, "half_width": 0.06, "batches": 20},
             "sampled_too_uncertain": False, "lockmanager_reproduced": False}
    bare = {"statement": "weekly_count", "clients": 32, "sample_s": 20.0, "error": None}
    doc = {"apps": {"miniflux": {"statements": {"count_unread": {}, "weekly_count": {}},
                                 "statement_points": [point, bare], "workload_points": []}}}
    text = forecast_apps.summary(doc)
    assert "| count_unread | 32 | 20 | 25% +-6 (20) | 12.0% | no (13) | False |" in text
    assert "| weekly_count | 32 | 20 | – +-? | – | – | None |" in text
    assert "within 10 pp where sampled > 10 %: 0 of 1 statement points (1 of them sampled to +-10 points" in text
    assert "Workload mode" not in text


@pytest.mark.slow
@pytest.mark.usefixtures("load_lock")
def test_harness_end_to_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(forecast_apps, "HOLD_LOAD_LOCK", False)  # the load_lock fixture holds it
    # two of miniflux's five statements (a 3-table aggregate and the UPDATE; every statement binds its example:
    # the test above), each a load of STATEMENT_LOAD_MIN_S: the whole harness, at 2/5 of its loads
    doc = forecast_apps.run(["miniflux"], [2], 2.0, tmp_path, say=lambda _text: None, statements=SOME_STATEMENTS)
    app = doc["apps"]["miniflux"]
    assert app["tables"]["entries"] > 100_000
    assert sorted(p["statement"] for p in app["statement_points"]) == sorted(app["statements"]) \
        == sorted(SOME_STATEMENTS)
    for p in app["statement_points"]:
        assert p["error"] is None, p
        for key in STATEMENT_FIELDS:
            assert p[key] is not None, (p["statement"], key)
        assert p["measured_tps"] > 0 and math.isfinite(p["ratio"])
        # forecast while the load ran (as a user runs it): deflated to CPU by its samples, which saw the load
        assert "not deflated" not in p["own_cost_source"] and p["population"] >= 1, p
        # its samples lay inside the load: at the first try here (2 clients), or after a longer load
        assert p["forecast_done_s"] <= p["load_s"], p
        assert p["load_s"] == forecast_apps.STATEMENT_LOAD_MIN_S or p["load_retries"] > 0, p
        interval = p["sampled_lockmanager_share_95"]
        assert interval["low"] <= p["sampled_lockmanager_share"] <= interval["high"] and interval["batches"] >= 3
    [w] = app["workload_points"]
    assert w["error"] is None, w
    for key in WORKLOAD_FIELDS:
        # the interval needs 3 batches: the mix's 1 s interval here gives 2-3 half-second ones
        assert key in w and (w[key] is not None or key in ("uncovered", "sampled_lockmanager_share_95")), key
    assert 0 < w["coverage_calls"] <= 1 and 0 < w["coverage_time"] <= 1
    saved = json.loads((tmp_path / "results.json").read_text())
    assert saved["schema"] == "lockscope/forecast-apps/v1" and saved["finished"]
    assert "### miniflux" in (tmp_path / "summary.md").read_text()
