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
from .helpers import ENTRIES_BY_TYPE, one_line_error, run, runs_in_one_transaction

SCHEMA = "CREATE TABLE base (id int PRIMARY KEY, note text);\n"


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
            out.append(dict(reader.execute(ENTRIES_BY_TYPE, [pid]).fetchall()))
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
    return runs_in_one_transaction(srv.conninfo(), statements)


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
    (["footprint", "--fail-on", "exhaustion", "SELECT 1"], "--fail-on exhaustion applies to a job (a migration, "
     "maintenance, a batch) run for real with --scratch"),
    (["footprint", "--assume-max-connections", "5", "SELECT 1"], "--assume-max-connections applies to a job"),
    (["footprint", "--job", "SELECT 1"], "--job applies to a job"),
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
                         (["--executions", "3"], "does not apply to a job"),
                         (["--fail-on", "spill"], "a job's gate is --fail-on exhaustion")):
        proc = run("footprint", "--scratch", "-f", str(mig), *extra)
        assert proc.returncode == 2, (extra, proc.stderr)
        assert words in one_line_error(proc), extra


def test_reads_sampled_and_a_step_that_is_not_constant(tmp_path: Path) -> None:
    """PG 16 (16 fast-path slots, lock.c FP_LOCK_SLOTS_PER_BACKEND): a table created, then 30 SELECTs of 30 tables
    in one transaction; the first 16 SELECTs take the fast path (no entry), the next 14 one entry each. The entries
    are read after the CREATE, the first 4 and the last SELECT only (null between), the step read (0) is checked
    against the last total and found not constant, the step printed is the mean over the SELECTs not read, rounded
    up; the peak equals pg_locks."""
    tables = [f"t{i}" for i in range(30)]
    schema, mig = tmp_path / "schema.sql", tmp_path / "m.sql"
    schema.write_text("".join(f"CREATE TABLE {t} (a int);\n" for t in tables))
    block = ["CREATE TABLE marker (a int);", *(f"SELECT * FROM {t};" for t in tables)]
    mig.write_text("BEGIN;\n" + "\n".join(block) + "\nCOMMIT;\n")
    out = tmp_path / "s.json"
    proc = run("footprint", "--scratch", *_pg_bin(16), "--setup", str(schema), "-f", str(mig), "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    (txn,) = json.loads(out.read_text())["transactions"]
    with ScratchServer(bin_dir_of(16)) as srv, psycopg.connect(srv.conninfo(), autocommit=True) as conn, \
            psycopg.connect(srv.conninfo(), autocommit=True) as reader:
        conn.execute(schema.read_text())
        conn.execute("BEGIN")
        created = 0
        for stmt in block:
            conn.execute(stmt)
            created = created or sum(n for _, n in reader.execute(ENTRIES_BY_TYPE, [conn.info.backend_pid]).fetchall())
        truth = dict(reader.execute(ENTRIES_BY_TYPE, [conn.info.backend_pid]).fetchall())
        conn.execute("ROLLBACK")
    assert txn["peak_by_type"] == truth and txn["peak_entries"] == created + 14
    after = txn["entries_after"]
    assert after[:5] == [created] * 5 and after[5:30] == [None] * 25 and after[30] == created + 14
    (rep,) = txn["repetitions"]
    assert (rep["count"], rep["constant"], rep["per_repetition_entries"]) == (30, False, 1)  # ceil(14 / 26)
    # the run cut to 4 SELECTs (all in the fast path: no entry) against the whole (14 more), over 26 more SELECTs
    assert rep["transaction_per_repetition_entries"] == pytest.approx(14 / 26)


def test_largest_true_is_exact_and_bounded() -> None:
    """The boundary search of the batch fix: the exact boundary from any guess, in at most 2 x ceil(log2(cap + 1))
    + 2 distinct trials (each a run of the cut transaction on the scratch server)."""
    from lockscope.migration_fit import largest_true

    for cap, bound in ((0, 2), (1, 4), (7, 8), (250, 18), (1000, 22)):
        for boundary in range(-1, cap + 1, 1 if cap < 300 else 37):
            for guess in range(0, cap + 1, 1 if cap < 300 else 41):
                tried: set[int] = set()

                def ok(k: int, b: int = boundary, seen: set[int] = tried) -> bool:
                    seen.add(k)
                    return k <= b

                assert largest_true(ok, guess, cap) == boundary, (cap, boundary, guess)
                assert len(tried) <= bound, (cap, boundary, guess, sorted(tried))
