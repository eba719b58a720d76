"""lockscope on a hot standby (issue 39): a streaming replica the suite starts (``ScratchServer(primary=...)``:
``pg_basebackup -R`` of a scratch primary), under read-only load, watched as a ``pg_monitor`` role.

The standby's lock table is its own: its queries' locks (and the primary's AccessExclusiveLocks the startup process
replays). The oracle is the same transaction executed on the standby, pg_locks read inside it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from lockscope.db import run_script
from lockscope.errors import ScratchServerError
from lockscope.server import ScratchServer, ScratchSettings

from .helpers import run
from .test_diagnose import KONG_LOOKUPS, KONG_SCRIPT, _load
from .txn_oracle import CORPUS_DIR, Stmt, run_transaction


@pytest.mark.slow
def test_diagnose_and_audit_on_a_streaming_replica(scratch_base: Path, tmp_path: Path, load_lock: None) -> None:
    """PG 18, primary and standby at max_locks_per_transaction 16, Kong Gateway's schema; 16 clients run its five
    lookups in one transaction on the standby. diagnose --dsn STANDBY as pg_monitor: the main-lock-table rate the
    server holds is within 25 % of the executed truth (the transaction run on the standby: 17 main-table locks) x
    its transactions/s; audit there says it is a standby, and diagnose's max_locks_per_transaction fix says what a
    change means on a standby. A standby below the primary's value does not start, with PostgreSQL's reason."""
    settings = ScratchSettings(max_locks_per_transaction=16)
    with ScratchServer(None, settings, base_dir=scratch_base) as primary:
        run_script(primary.conninfo(), "create extension if not exists pg_stat_statements;\n"
                   + (CORPUS_DIR / "kong_schema.ddl").read_text()
                   + "\nanalyze;\ncreate role mon login in role pg_monitor;\ncheckpoint;")
        with ScratchServer(None, settings, base_dir=scratch_base, primary=primary) as standby:
            truth = run_transaction(standby.conninfo(), [Stmt(q.format(r=7, s=3)) for q in KONG_LOOKUPS],
                                    executions=8)
            held = truth.runs[-1].final.main_table_count
            mon = standby.conninfo().replace("user=postgres", "user=mon")
            with _load(standby, tmp_path, KONG_SCRIPT) as load:
                diagnose = run("diagnose", "--dsn", mon, "--duration", "4s", "--json", str(tmp_path / "d.json"))
                audit = run("audit", "--dsn", mon, "--interval", "2s", "--json", str(tmp_path / "a.json"))
                loaded = load.running
        below = ScratchServer(None, settings.replace(max_locks_per_transaction=10), base_dir=scratch_base,
                              primary=primary)
        with pytest.raises(ScratchServerError, match="max_locks_per_transaction = 10 is a lower setting than on "
                                                     "the primary server, where its value was 16"), below:
            pass
    assert held == 17  # the server's answer: 33 relation locks, 17 in the main lock table
    assert diagnose.returncode == 0 == audit.returncode, (diagnose.stderr, audit.stderr)
    assert loaded, "pgbench ended before the measurements did"
    diagnosis = json.loads((tmp_path / "d.json").read_text())
    rate = diagnosis["main_lock_table"]
    assert rate["transactions_per_s"] > 0, rate
    assert 0.75 <= rate["server_per_s"] / (held * rate["transactions_per_s"]) <= 1.25, (rate, held)
    doc = json.loads((tmp_path / "a.json").read_text())
    assert doc["server"]["in_recovery"] is True
    assert any(n.startswith("standby: audited read-only") for n in doc["notes"])
    assert doc["privileges"]["derived"] >= 5  # pg_monitor only: the statements' footprints derived
    # each lookup fits the fast path alone (audit: nothing to change); the transaction does not (diagnose's fix)
    mlpt = next(f for f in diagnosis["fixes"] if f["kind"] == "max-locks-per-transaction")
    sql = "\n".join(mlpt["sql"])
    assert "-- this server is a hot standby" in sql and "may not be below the primary's value" in sql, sql
    # a standby takes ALTER SYSTEM too (it writes postgresql.auto.conf)
    assert re.fullmatch(r"ALTER SYSTEM SET max_locks_per_transaction = \d+;", sql.splitlines()[-1])
