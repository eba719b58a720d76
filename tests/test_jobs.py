"""``lockscope footprint --scratch`` of jobs that are not DDL (issue 38): an advisory-lock batch, an UPDATE of a
partitioned table without pruning, a PL/pgSQL maintenance function that drops partitions, an INSERT routed to every
partition. On PG 19 (the lock table's nominal size is the limit) and PG 16 (it is a floor, more may fit), each is
refused with exit 6 where PostgreSQL runs out of shared memory for real and passes at a size that fits; the fixes
lockscope prints are rerun here; the entries by lock type equal the distinct lock tags pg_locks shows, read by
another session before the COMMIT."""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from lockscope.server import ScratchServer, ScratchSettings

from .fix_versions import bin_dir_of
from .helpers import ENTRIES_BY_TYPE, run, runs_in_one_transaction

# a load: each test builds hundreds of partitions on two or three servers and runs the job on them; with the
# loads (one after another on one worker), never beside a test that times pgbench (tests/schedule.py)
pytestmark = pytest.mark.usefixtures("load_lock")



def _schema(partitions: int) -> str:
    """A RANGE-partitioned table, each partition with one index and rows, and a function dropping partitions."""
    return f"""
CREATE TABLE ev (id int, at int, v int) PARTITION BY RANGE (at);
DO $$ BEGIN FOR i IN 0..{partitions - 1} LOOP
  EXECUTE format('CREATE TABLE ev_%s PARTITION OF ev FOR VALUES FROM (%s) TO (%s)', i, i * 10, i * 10 + 10);
END LOOP; END $$;
CREATE INDEX ON ev (id);
INSERT INTO ev SELECT g, g, 0 FROM generate_series(0, {partitions * 10 - 1}) g;
CREATE TABLE empty_t (id int);
CREATE FUNCTION drop_old(n int) RETURNS int LANGUAGE plpgsql AS $f$
DECLARE r record; k int := 0;
BEGIN
  FOR r IN SELECT c.oid::regclass AS part FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
           WHERE i.inhparent = 'ev'::regclass ORDER BY c.oid LOOP
    EXIT WHEN k >= n;
    EXECUTE format('DROP TABLE %s', r.part);
    k := k + 1;
  END LOOP;
  RETURN k;
END $f$;
"""


def _job(kind: str, size: int) -> list[str]:
    """The job's statements, all in one transaction."""
    if kind == "advisory":  # one call per row of a batch (NixOS/nix-security-tracker #1153)
        return [f"SELECT pg_advisory_xact_lock({k});" for k in range(size)]
    if kind == "update":  # no partition key in the WHERE: every partition (timescale/timescaledb #8410)
        return ["UPDATE ev SET v = v + 1;"]
    if kind == "insert":  # rows routed to every partition
        return [f"INSERT INTO ev SELECT g, g, 1 FROM generate_series(0, {size * 10 - 1}) g;"]
    assert kind == "drop"  # a maintenance function (drop_chunks, pg_partman's run_maintenance)
    return [f"SELECT drop_old({size});"]


#: (partitions in the schema, the job's size) where PostgreSQL runs out with max_locks_per_transaction 10 and
#: max_connections 20 (560 entries on PG 19; on PG 16, a floor of 420, 573 advisory locks ran, and an UPDATE holding
#: 788 entries), and where it fits.
TOO_BIG = {"advisory": (1, 800), "update": (700, 700), "insert": (700, 700), "drop": (300, 300)}
FITS = {"advisory": (1, 300), "update": (60, 60), "insert": (60, 60), "drop": (60, 60)}
BUDGET = ["--assume-mlpt", "10", "--assume-max-connections", "20"]


def _files(tmp_path: Path, partitions: int, statements: list[str]) -> tuple[Path, Path]:
    schema, job = tmp_path / "schema.sql", tmp_path / "job.sql"
    schema.write_text(_schema(partitions))
    job.write_text("BEGIN;\n" + "\n".join(statements) + "\nCOMMIT;\n")
    return schema, job


def _pg_bin(major: int) -> list[str]:
    path = bin_dir_of(major)
    return [] if path is None else ["--pg-bin", str(path)]


@contextlib.contextmanager
def _small(major: int, partitions: int) -> Iterator[ScratchServer]:
    """A server with the schema, then restarted with the budget's settings (autovacuum off: no worker takes
    entries meanwhile): the schema's DO blocks need a larger lock table than the job's budget."""
    budget = ScratchSettings(max_locks_per_transaction=10, max_connections=20, extra={"autovacuum": "off"})
    with ScratchServer(bin_dir_of(major), budget.replace(max_prepared_transactions=2000)) as srv:
        with psycopg.connect(srv.conninfo(), autocommit=True) as conn:
            conn.execute(_schema(partitions))  # type: ignore[arg-type]
        srv.configure(budget)
        yield srv


def _runs(srv: ScratchServer, statements: list[str]) -> bool:
    return runs_in_one_transaction(srv.conninfo(), statements)


def _gate(major: int, tmp_path: Path, partitions: int,
          statements: list[str]) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    """The job through ``--fail-on exhaustion`` with the budget of :data:`BUDGET`: (the run, its transaction's
    JSON)."""
    schema, job = _files(tmp_path, partitions, statements)
    out = tmp_path / "job.json"
    proc = run("footprint", "--scratch", *_pg_bin(major), "--setup", str(schema), "-f", str(job), *BUDGET,
               "--fail-on", "exhaustion", "--json", str(out))
    (txn,) = json.loads(out.read_text())["transactions"] if out.exists() else [{}]
    return proc, txn


@pytest.mark.parametrize("major", [19, 16])
@pytest.mark.parametrize("kind", ["advisory", "update", "insert", "drop"])
def test_a_job_too_big_is_refused_and_its_fixes_run(kind: str, major: int, tmp_path: Path) -> None:
    partitions, size = TOO_BIG[kind]
    statements = _job(kind, size)
    proc, txn = _gate(major, tmp_path, partitions, statements)
    assert proc.returncode == 6, proc.stderr
    assert txn["exhausted"]
    fixes = txn["fixes"]
    mlpt = fixes["verified_mlpt"]
    assert isinstance(mlpt, int) and mlpt > 10, fixes
    assert f"max_locks_per_transaction {mlpt} (restart; verified on PG {major}" in proc.stderr
    with _small(major, partitions) as srv:
        assert not _runs(srv, statements), "PostgreSQL ran the job lockscope refused"
        if kind == "advisory":  # the largest batch, verified by lockscope, runs here too
            batch = fixes["verified_batch"]
            assert isinstance(batch, int) and 0 < batch < size
            assert _runs(srv, statements[:batch])
            if major == 19:  # the nominal size is the limit: one more fails
                assert fixes["boundary_checked"] and not _runs(srv, statements[:batch + 1])
        elif kind in ("update", "insert"):  # the partitions per transaction lockscope verified, rerun here
            verified = fixes["verified_partitions"]
            assert isinstance(verified, int) and 0 < verified < partitions, fixes
            assert fixes["leaf_partitions"] == partitions
            said = re.search(rf"at most ([\d,]+) of the {partitions:,} partitions of public.ev per transaction",
                             proc.stderr)
            assert said is not None, proc.stderr
            k = int(said.group(1).replace(",", ""))  # on 16 the nominal figure, at most the verified one
            assert k == verified if major == 19 else k <= verified
            # the first k partitions: at 0..10k-1, the UPDATE pruned to them, the INSERT's rows for them only
            pruned = "UPDATE ev SET v = v + 1 WHERE at < {};" if kind == "update" else \
                "INSERT INTO ev SELECT g, g, 1 FROM generate_series(0, {} - 1) g;"
            assert _runs(srv, [pruned.format(10 * k)])
            # one more fails (the UPDATE: its trials are the statement pruned; the INSERT's routed the others' rows
            # to a default partition, a safe figure but not the boundary)
            if major == 19 and kind == "update":
                assert fixes["partitions_boundary_checked"] and not _runs(srv, [pruned.format(10 * (k + 1))])
            if kind == "insert":
                assert not fixes["partitions_boundary_checked"]
        srv.reconfigure(max_locks_per_transaction=mlpt)
        assert _runs(srv, statements)


@pytest.mark.parametrize("major", [19, 16])
@pytest.mark.parametrize("kind", ["advisory", "update", "insert", "drop"])
def test_a_job_that_fits_passes_and_its_entries_equal_pg_locks(kind: str, major: int, tmp_path: Path) -> None:
    partitions, size = FITS[kind]
    statements = _job(kind, size)
    proc, txn = _gate(major, tmp_path, partitions, statements)
    assert proc.returncode == 0, proc.stderr
    assert not txn["exhausted"] and txn["empty_lines"] == []
    with _small(major, partitions) as srv, psycopg.connect(srv.conninfo(), autocommit=True) as conn, \
                psycopg.connect(srv.conninfo(), autocommit=True) as reader:
        conn.execute("BEGIN")
        for stmt in statements:
            conn.execute(stmt)  # type: ignore[arg-type]
        truth = dict(reader.execute(ENTRIES_BY_TYPE, [conn.info.backend_pid]).fetchall())
        conn.execute("ROLLBACK")
    assert txn["peak_by_type"] == truth
    assert truth.get("advisory", 0) == (size if kind == "advisory" else 0)


def test_a_job_that_touches_no_rows_says_so(tmp_path: Path) -> None:
    """An UPDATE of an empty table: its lines said, since a job's locks depend on the rows it reaches."""
    schema, job = _files(tmp_path, 2, ["UPDATE empty_t SET id = 1;", "DELETE FROM ev WHERE v < 0;",
                                       "UPDATE ev SET v = 2 WHERE id = 1;"])
    out = tmp_path / "job.json"
    proc = run("footprint", "--scratch", "--job", "--setup", str(schema), "-f", str(job), "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    (txn,) = json.loads(out.read_text())["transactions"]
    assert txn["empty_lines"] == [2, 3]
    proc = run("footprint", "--scratch", "--job", "--setup", str(schema), "-f", str(job))
    assert "touched no rows: lines 2, 3 (a job's locks depend on the rows it reaches: load a representative " \
        "sample with --setup)" in proc.stdout


def test_budget_from_a_live_server_applies_to_a_job(tmp_path: Path) -> None:
    """--budget-from: a job judged against a live server's settings and the entries its sessions hold (200
    advisory locks): 400 more advisory locks do not fit its 560 - 200 free entries; the batch lockscope verifies
    runs beside the live server's 200, one more fails."""
    statements = _job("advisory", 400)
    schema, job = _files(tmp_path, 1, statements)
    out = tmp_path / "job.json"
    with _small(19, 1) as live, psycopg.connect(live.conninfo(), autocommit=True) as holder:
        holder.execute("SELECT count(pg_advisory_lock(k)) FROM generate_series(100000, 100199) AS k")
        proc = run("footprint", "--scratch", "--setup", str(schema), "-f", str(job), "--budget-from",
                   live.conninfo(), "--fail-on", "exhaustion", "--json", str(out))
        assert proc.returncode == 6, proc.stderr
        doc = json.loads(out.read_text())
        assert (doc["budget"]["held_entries"], doc["budget"]["free_entries"]) == (200, 360)
        fixes = doc["transactions"][0]["fixes"]
        batch = fixes["verified_batch"]
        assert isinstance(batch, int) and 0 < batch < 400 and fixes["boundary_checked"], fixes
        assert _runs(live, statements[:batch]) and not _runs(live, statements[:batch + 1])
