"""Coverage and no silent re-anchoring (issue 27), on a workload pgbench runs against a scratch server.

The workload (one pgbench script, simple protocol, so pg_stat_statements normalizes its constants): a primary-key
lookup; ``uploader_id between :id and :id + 20`` with an aggregate, whose normalized text (``$2 + $3``) PREPARE
cannot type as it stands (42725); a lookup filtered by ``now() - interval '1 year'``, normalized to ``interval $2``,
which the server's grammar refuses (42601): typed stand-ins bring both into the model. And a 50,000-row scan
``created_at > now() - interval '3' day``, normalized to ``interval $1 day`` (a typed literal with a qualifier,
which lockscope leaves as it is): the server cannot parse it, so it is not in the model, with that reason, and it
carries most of the execution time. The model of the other three then does not reproduce the calls/s: the
headline says so, naming the uncovered statements, and ``--fail-on`` refuses to judge (exit 7).

Each script run calls each statement once, so each carries a quarter of the calls (within the calls in flight at
the two snapshots).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from benchmarks.cost_unit import HELD_OUT_SCHEMA as SCHEMA

from lockscope.db import connect, run_script
from lockscope.errors import EXIT_UNJUDGED
from lockscope.forecast.calibration import DEFAULT_CALIBRATION
from lockscope.forecast.engine import forecast_workload
from lockscope.lab.load import install_pg_stat_statements
from lockscope.pgbench import start_pgbench
from lockscope.server import ScratchServer, ScratchSettings

from .helpers import run

SCRIPT = r"""\set id random(1, 900)
select title from posts where id = :id;
select u.level, count(*) from posts p join users u on u.id = p.uploader_id
  where p.uploader_id between :id and :id + 20 group by u.level;
select title from posts where id = :id and created_at > now() - interval '1 year';
select count(*), max(length(title)) from posts where created_at > now() - interval '3' day;
"""


@pytest.mark.slow
def test_coverage_standins_headline_and_the_gates_refusal(scratch_base: Path, load_lock: None) -> None:
    script = scratch_base / "workload.sql"
    script.write_text(SCRIPT)
    with ScratchServer(None, ScratchSettings()) as server:
        install_pg_stat_statements(server)
        run_script(server.conninfo(), SCHEMA)
        with start_pgbench(server, clients=2, duration_s=16, select_only=False, extra_args=["-f", str(script)]), \
                connect(server.conninfo()) as session:
            report = forecast_workload(session, calibration=DEFAULT_CALIBRATION, cores=2, clients=None,
                                       interval_s=3, dsn=server.conninfo())
            gate = run("forecast", "--dsn", server.conninfo(), "--interval", "3s", "--cores", "2",
                       "--fail-on", "partition", "-q")
    cover = report.coverage
    assert cover is not None
    # the aggregate is in the model through its typed stand-ins; the scan is not, with the parser's reason
    assert cover.statements_modelled == 3 and cover.standins == 2
    assert any("typed stand-ins" in n and "42725" in n for n in report.notes)
    assert any("typed stand-ins" in n and "$2::interval" in n for n in report.notes)
    assert cover.calls_share == pytest.approx(3 / 4, abs=0.05)
    assert cover.time_share is not None and cover.time_share < 0.5
    assert [u.query for u in cover.uncovered] == [
        "select count(*), max(length(title)) from posts where created_at > now() - interval $1 day"]
    assert "42601" in cover.uncovered[0].reason  # the server's syntax error: PREPARE and EXPLAIN cannot take it
    # the first estimate is far off, and the first line says why, not a note
    check = report.model_check
    assert check is not None and check.off > 0.25
    assert any(r.startswith("statements not in the model carry") for r in check.reasons)
    # the gate judges nothing on it: its own exit code, the reason on one line
    assert gate.returncode == EXIT_UNJUDGED, gate.stderr
    refusal = [line for line in gate.stderr.splitlines() if "--fail-on judged nothing" in line]
    assert len(refusal) == 1 and "statements not in the model carry" in refusal[0]
    assert gate.stdout.splitlines()[0].startswith("the model does not reproduce the present")
