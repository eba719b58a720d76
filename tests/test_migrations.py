"""``lockscope footprint --scratch`` of a migration: the lock-table entries per transaction against PostgreSQL's own
pg_locks, and the --fail-on exhaustion gate's fixes against real runs on both sides of the boundary."""

from __future__ import annotations

import json
import re
from pathlib import Path

import psycopg
import pytest

from lockscope.server import ScratchServer, ScratchSettings

from .fix_versions import VERSION_MAJORS, bin_dir_of
from .helpers import one_line_error, run

SCHEMA = "CREATE TABLE base (id int PRIMARY KEY, note text);\n"
#: The test's own count of the shared lock table's entries a backend holds: pg_locks rows outside the fast path,
#: one per locked object (its LOCKTAG's fields).
ENTRIES = """
SELECT locktype, count(*) FROM (
  SELECT DISTINCT locktype, database, relation, page, tuple, virtualxid::text, transactionid::text, classid, objid,
         objsubid
  FROM pg_locks WHERE pid = %s AND granted AND NOT fastpath) AS e
GROUP BY locktype"""


def _partitions(n: int) -> list[str]:
    return [f"CREATE TABLE ev_{i} PARTITION OF ev FOR VALUES FROM ({i * 10}) TO ({i * 10 + 10});" for i in range(n)]


def _migration(n: int) -> tuple[list[str], list[str]]:
    """(the BEGIN ... COMMIT block's statements, the autocommit statements after it)."""
    block = ["CREATE TABLE ev (id int, at int) PARTITION BY RANGE (at);", *_partitions(n), "CREATE INDEX ON ev (id);"]
    return block, ["ALTER TABLE base ADD COLUMN extra int;"]


def _write(tmp_path: Path, block: list[str], after: list[str]) -> tuple[Path, Path]:
    schema, mig = tmp_path / "schema.sql", tmp_path / "migration.sql"
    schema.write_text(SCHEMA)
    mig.write_text("BEGIN;\n" + "\n".join(block) + "\nCOMMIT;\n" + "\n".join(after) + "\n")
    return schema, mig


def _pg_bin(major: int) -> list[str]:
    path = bin_dir_of(major)
    return [] if path is None else ["--pg-bin", str(path)]


def _truth(major: int, block: list[str], after: list[str], settings: ScratchSettings) -> list[dict[str, int]]:
    """Each transaction run by the test itself; pg_locks read by another session before each COMMIT."""
    out = []
    with ScratchServer(bin_dir_of(major), settings) as srv, \
            psycopg.connect(srv.conninfo(), autocommit=True) as conn, \
            psycopg.connect(srv.conninfo(), autocommit=True) as reader:
        conn.execute(SCHEMA)
        pid = conn.info.backend_pid
        for txn in (block, *([s] for s in after)):
            conn.execute("BEGIN")
            for stmt in txn:
                conn.execute(stmt)
            out.append(dict(reader.execute(ENTRIES, [pid]).fetchall()))
            conn.execute("COMMIT")
    return out


@pytest.mark.parametrize("major", VERSION_MAJORS)
def test_peak_entries_by_type_equal_pg_locks(major: int, tmp_path: Path) -> None:
    """Every major: lockscope's per-type peak of each transaction equals pg_locks on an independent run."""
    block, after = _migration(20)
    schema, mig = _write(tmp_path, block, after)
    out = tmp_path / "m.json"
    proc = run("footprint", "--scratch", *_pg_bin(major), "--mlpt", "64", "--setup", str(schema), "-f", str(mig),
               "--fail-on", "exhaustion", "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    assert doc["schema"] == "lockscope/migration/v1" and not doc["exhausted"]
    truth = _truth(major, block, after, ScratchSettings(max_locks_per_transaction=64))
    assert [t["peak_by_type"] for t in doc["transactions"]] == truth
    first, second = doc["transactions"]
    (rep,) = first["repetitions"]
    assert (rep["label"], rep["count"], rep["constant"]) == ("CREATE TABLE ... PARTITION OF ev", 20, True)
    assert second["fast_path_lost"] == ["public.base"]
    assert "budget: " in proc.stdout and "transaction 1 (line 1, BEGIN ... COMMIT, 22 statements)" in proc.stdout


def _gate(major: int, tmp_path: Path, n: int) -> tuple[int, dict[str, object], str]:
    """The gate run with mlpt 10, max_connections 20: (exit code, the transaction's JSON, stderr)."""
    block, _after = _migration(n)
    schema, mig = _write(tmp_path, block, [])
    out = tmp_path / "gate.json"
    proc = run("footprint", "--scratch", *_pg_bin(major), "--setup", str(schema), "-f", str(mig), "--assume-mlpt",
               "10", "--assume-max-connections", "20", "--fail-on", "exhaustion", "--json", str(out))
    return proc.returncode, json.loads(out.read_text())["transactions"][0], proc.stderr


def _runs(srv: ScratchServer, statements: list[str]) -> bool:
    """True when the statements run in one transaction (rolled back), False on 53200 out of shared memory."""
    with psycopg.connect(srv.conninfo(), autocommit=True) as conn:
        conn.execute("BEGIN")
        try:
            for stmt in statements:
                conn.execute(stmt)
        except psycopg.Error as exc:
            assert exc.sqlstate == "53200", exc
            return False
        finally:
            conn.execute("ROLLBACK")
    return True


def _small(major: int, mlpt: int = 10) -> ScratchServer:
    return ScratchServer(bin_dir_of(major), ScratchSettings(max_locks_per_transaction=mlpt, max_connections=20,
                                                           extra={"autovacuum": "off"}))


def test_gate_boundary_on_19(tmp_path: Path) -> None:
    """PG 19: the largest batch lockscope prints runs on a server with the budget's settings, one more partition
    fails with out of shared memory; the smallest max_locks_per_transaction it prints runs the whole."""
    code, txn, err = _gate(19, tmp_path, 250)
    assert code == 6
    line = err.strip().splitlines()[-1]
    assert line.startswith("lockscope footprint: --fail-on exhaustion: transaction 1 (line 1) needs ")
    batch = int(re.search(r"at most ([\d,]+) partitions per transaction", line).group(1).replace(",", ""))  # type: ignore[union-attr]
    mlpt = int(re.search(r"max_locks_per_transaction (\d+) \(restart; verified", line).group(1))  # type: ignore[union-attr]
    fixes = txn["fixes"]
    assert isinstance(fixes, dict) and fixes["boundary_checked"] and fixes["verified_batch"] == batch
    block, _ = _migration(250)
    head, parts, index = block[0], block[1:-1], block[-1]
    with _small(19) as srv:
        assert _runs(srv, [head, *parts[:batch], index])
        assert not _runs(srv, [head, *parts[:batch + 1], index])
        assert not _runs(srv, block)
        srv.reconfigure(max_locks_per_transaction=mlpt)
        assert _runs(srv, block)


def test_gate_floor_holds_on_16(tmp_path: Path) -> None:
    """PG 16: the nominal batch (the size is a floor) runs on a server with the budget's settings."""
    code, txn, err = _gate(16, tmp_path, 400)
    assert code == 6, err
    fixes = txn["fixes"]
    assert isinstance(fixes, dict)
    batch = fixes["batch"]
    assert isinstance(batch, int) and 0 < batch < 400
    assert f"at most {batch:,} partitions per transaction (nominal, safe)" in err
    block, _ = _migration(400)
    with _small(16) as srv:
        assert _runs(srv, [block[0], *block[1:batch + 1], block[-1]])


def test_budget_from_a_live_server(tmp_path: Path) -> None:
    """--budget-from: the live server's settings and the entries its sessions hold (40 advisory locks), its major
    for the scratch server."""
    block, after = _migration(5)
    schema, mig = _write(tmp_path, block, after)
    out = tmp_path / "b.json"
    with _small(19, 12) as live, psycopg.connect(live.conninfo(), autocommit=True) as holder:
        holder.execute("SELECT count(pg_advisory_lock(k)) FROM generate_series(1, 40) AS k")
        proc = run("footprint", "--scratch", "--setup", str(schema), "-f", str(mig), "--budget-from",
                   live.conninfo(), "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    budget = json.loads(out.read_text())["budget"]
    assert (budget["major"], budget["max_locks_per_transaction"], budget["held_entries"]) == (19, 12, 40)
    assert budget["entries"] == 12 * (20 + 16 + 8 + 10 + 2)  # PG 19's MaxBackends: postinit.c, the defaults
    assert "PostgreSQL 19" in proc.stdout.splitlines()[0]


@pytest.mark.parametrize(("args", "words"), [
    (["footprint", "CREATE TABLE t (a int)"], "CREATE TABLE is a utility statement: lockscope probes only SELECT, "
     "INSERT, UPDATE, DELETE and MERGE on a server of yours and never runs DDL there; a migration is measured with "
     "--scratch, on lockscope's own server (--scratch --setup schema.sql -f migration.sql)"),
    (["footprint", "--scratch", "--fail-on", "exhaustion", "SELECT 1"], "--fail-on exhaustion applies to a migration"),
    (["footprint", "--scratch", "--assume-max-connections", "5", "SELECT 1"], "--assume-max-connections applies"),
    (["footprint", "--fail-on", "exhausted", "SELECT 1"], "not a condition"),
])
def test_bad_inputs_are_one_line(args: list[str], words: str) -> None:
    proc = run(*args)
    assert proc.returncode == 2
    assert words in one_line_error(proc)


def test_bad_migration_options_are_one_line(tmp_path: Path) -> None:
    _, mig = _write(tmp_path, ["CREATE TABLE x (a int);"], [])
    for extra, words in ((["--budget-from", "host=nowhere", "--assume-mlpt", "10"], "not both"),
                         (["--assume-max-prepared-transactions", "-1"], "must be 0 or more"),
                         (["--executions", "3"], "does not apply to a migration"),
                         (["--fail-on", "spill"], "a migration's gate is --fail-on exhaustion")):
        proc = run("footprint", "--scratch", "-f", str(mig), *extra)
        assert proc.returncode == 2, (extra, proc.stderr)
        assert words in one_line_error(proc), extra
