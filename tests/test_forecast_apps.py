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
                    "model_lockmanager_share_at_population", "lockmanager_reproduced", "forecast_done_s")
#: The statements the end-to-end run measures (of miniflux's five).
SOME_STATEMENTS = ("categories_with_counts", "set_entries_status")
WORKLOAD_FIELDS = ("pgbench_tps", "measured_calls_per_s", "first_estimate_tps", "first_ratio", "factor",
                   "anchored_tps", "population", "sampled_lockmanager_share", "modelled_lockmanager_share_first",
                   "modelled_lockmanager_share_anchored", "coverage_calls", "coverage_time", "uncovered")


def test_every_statement_binds_its_example() -> None:
    """Each application's scripts parse, every pgbench variable gets its example value, and the mix names only
    scripts that exist."""
    for app in forecast_apps.APPS:
        statements = forecast_apps.app_statements(app)
        assert 4 <= len(statements) <= 8, app
        for st in statements:
            assert st.source.startswith(("queries/", "internal/", "src/")), st.path
            assert re.search(r"(?<!:):[a-z_]", st.text) is None, st.path  # no pgbench variable left
        for arg in forecast_apps.mix_args(app):
            if arg != "-f":
                assert Path(arg.rsplit("@", 1)[0]).is_file(), arg


@pytest.mark.slow
@pytest.mark.usefixtures("load_lock")
def test_harness_end_to_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(forecast_apps, "HOLD_LOAD_LOCK", False)  # the load_lock fixture holds it
    # two of miniflux's five statements (a 3-table aggregate and the UPDATE; every statement binds its example:
    # the test above), each a load of STATEMENT_LOAD_MIN_S: the whole harness, at 2/5 of its loads
    every = forecast_apps.app_statements
    monkeypatch.setattr(forecast_apps, "app_statements",
                        lambda app: [s for s in every(app) if s.name in SOME_STATEMENTS])
    doc = forecast_apps.run(["miniflux"], [2], 2.0, tmp_path, say=lambda _text: None)
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
        assert p["forecast_done_s"] < forecast_apps.STATEMENT_LOAD_MIN_S, p
    [w] = app["workload_points"]
    assert w["error"] is None, w
    for key in WORKLOAD_FIELDS:
        assert key in w and (w[key] is not None or key == "uncovered"), key
    assert 0 < w["coverage_calls"] <= 1 and 0 < w["coverage_time"] <= 1
    saved = json.loads((tmp_path / "results.json").read_text())
    assert saved["schema"] == "lockscope/forecast-apps/v1" and saved["finished"]
    assert "### miniflux" in (tmp_path / "summary.md").read_text()
