"""The same footprints on a real server of every major 13-19 (fixture ``every_pg``), numbers declared per major;
PostgreSQL 12 refused by the CLI.

PG 13 has no ``pg_prepared_statements.generic_plans/custom_plans``: the phases there are inferred from the locks
(``footprint._reused_generic_plan``) and checked like the counters on 14-19.

Servers: :mod:`tests.fix_versions` (fetched into the ``lab install`` cache on first use).
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from lockscope.db import Session, connect
from lockscope.demo import EVENTS_STATEMENT
from lockscope.footprint import Footprint, measure_footprint
from lockscope.pgbin.install import ensure_major
from lockscope.pgbin.sources import debian_mirror, debian_upstream_version, newest_npm_version
from lockscope.server import ScratchServer

from .conftest import by_major
from .helpers import run

EVENTS_PARAM = ["2024-06-06 00:00:00+00"]


@pytest.fixture()
def session(every_pg: ScratchServer) -> Iterator[Session]:
    with connect(every_pg.conninfo()) as s:
        yield s


def counts(fp: Footprint) -> list[int]:
    return [e.lock_count for e in fp.executions]


def test_server_version(every_pg: ScratchServer, session: Session) -> None:
    major = every_pg.major
    assert session.facts.major == major
    reported = subprocess.run([str(every_pg.bin_dir / "postgres"), "--version"], capture_output=True, text=True,
                              check=True).stdout
    assert f"(PostgreSQL) {session.facts.server_version}" in reported
    assert session.facts.server_version_num // 10000 == major


def test_five_indexes_prepared(session: Session) -> None:
    """A table with 5 indexes, prepared: 6 planner locks per custom plan, the generic plan built at execution 6 and
    reused from 7 with the table's lock alone, all of it fast-path."""
    fp = measure_footprint(session, "select from t", protocol="prepared", param_types=["int"], params=["1"],
                           executions=8)
    assert counts(fp) == [6, 6, 6, 6, 6, 6, 1, 1]
    assert [e.phase for e in fp.executions] == ["custom"] * 5 + ["generic-build"] + ["generic-reuse"] * 2
    assert all(not e.mismatches for e in fp.executions)
    assert all(e.main_table_count == 0 for e in fp.executions)


def test_events_prepared_auto(session: Session) -> None:
    major = session.facts.major
    fp = measure_footprint(session, EVENTS_STATEMENT, params=EVENTS_PARAM, protocol="prepared",
                           plan_cache_mode="auto", executions=8)
    # custom: parent + pruned partition + its 3 indexes (+ the parent's 3 partitioned indexes from PG 16);
    # generic build: parent + 12 partitions + 36 indexes (+ 3 partitioned indexes from PG 16); reuse: 1 + 12.
    # PG 13 keeps custom plans after building the generic one: it cannot tell an empty partition from a
    # never-vacuumed one and costs each as 10 pages (plancat.c estimate_rel_size; from PG 14 reltuples is -1 until
    # the first VACUUM/ANALYZE/CREATE INDEX, commit 3d351d916b), so the generic plan over 12 of them costs more
    # than the one-partition custom plan (plancache.c choose_custom_plan).
    custom = by_major({13: 5, 14: 5, 15: 5, 16: 8, 17: 8, 18: 8, 19: 8}, major)
    build = by_major({13: 49, 14: 49, 15: 49, 16: 52, 17: 52, 18: 52, 19: 52}, major)
    after = by_major({13: 5, 14: 13, 15: 13, 16: 13, 17: 13, 18: 13, 19: 13}, major)
    assert counts(fp) == [custom] * 5 + [build, after, after]
    # max_locks_per_transaction 64: 16 slots before PG 18 (the build spills all but 16), 64 slots from PG 18
    spilled = by_major({13: 33, 14: 33, 15: 33, 16: 36, 17: 36, 18: 0, 19: 0}, major)
    assert [e.main_table_count for e in fp.executions] == [0] * 5 + [spilled, 0, 0]
    assert all(not e.mismatches for e in fp.executions)
    # run-time pruning of the generic plan shows in EXPLAIN; PG 13's custom plan scans the one partition directly
    removed = by_major({13: 0, 14: 1, 15: 1, 16: 1, 17: 1, 18: 1, 19: 1}, major)
    assert sum("Subplans Removed: 11" in line for line in fp.executions[6].plan.lines) == removed
    # PG 13 has no plan counters: the plan tells (EXPLAIN VERBOSE of a generic plan shows its parameters as $n; the
    # custom plan the build lost to shows the values)
    later = by_major({13: ["custom"] * 3, 14: ["generic"] * 3, 15: ["generic"] * 3,
                      16: ["generic"] * 3, 17: ["generic"] * 3, 18: ["generic"] * 3, 19: ["generic"] * 3}, major)
    assert [e.plan_type for e in fp.executions] == ["custom"] * 5 + later
    then = by_major({13: "custom", 14: "generic-reuse", 15: "generic-reuse", 16: "generic-reuse",
                     17: "generic-reuse", 18: "generic-reuse", 19: "generic-reuse"}, major)
    assert [e.phase for e in fp.executions] == ["custom"] * 5 + ["generic-build"] + [then] * 2


def test_pg_stat_lock_from_19(session: Session) -> None:
    """``pg_stat_lock`` (with ``fastpath_exceeded``) exists from PG 19 on, not before."""
    exists = session.oracle_rows("select to_regclass('pg_catalog.pg_stat_lock') is not null")[0][0]
    assert exists is (session.facts.major >= 19)
    if exists:
        rows = session.oracle_rows("select fastpath_exceeded from pg_stat_lock where locktype = 'relation'")
        assert len(rows) == 1 and rows[0][0] >= 0


def _footprint_cli(pg_bin: Path) -> subprocess.CompletedProcess[str]:
    return run("footprint", "--scratch", "--pg-bin", str(pg_bin), "select 1")


def test_pg12_refused_in_one_line(pg12_bin: Path) -> None:
    """An unsupported server is exit 3 (as from db.py's check on a --dsn server), before any server starts."""
    proc = _footprint_cli(pg12_bin)
    assert proc.returncode == 3, proc.stderr
    assert proc.stderr.strip().splitlines() == [
        "lockscope: error: PostgreSQL 12 is not supported: lockscope needs 13 or later"]
    assert proc.stdout == ""


def test_install_is_cached() -> None:
    """A second ensure_major of a fetched major finds the cache (no download)."""
    first = ensure_major(13)
    again = ensure_major(13)
    assert again.prefix == first.prefix and not again.downloaded
    assert again.version.startswith("13.")


# -- sources.py helpers (no network) -----------------------------------------------------------------------------
def test_newest_npm_version_orders_releases_then_prereleases() -> None:
    published = ["12.22.0-beta.14", "12.22.0-beta.15", "13.9.0-beta.6", "13.23.0-beta.15", "13.23.0-beta.16",
                 "13.22.0-beta.15", "14.3.0-alpha.21"]
    assert newest_npm_version(published, 13) == "13.23.0-beta.16"
    assert newest_npm_version(published, 13, 22) == "13.22.0-beta.15"
    assert newest_npm_version(published, 12) == "12.22.0-beta.15"
    assert newest_npm_version(published, 11) is None


def test_debian_version_to_cache_name() -> None:
    assert debian_upstream_version("19~rc1-1") == "19.0.0-rc1"
    assert debian_upstream_version("19.2-1") == "19.2.0"
    assert debian_upstream_version("1:19~beta3-2") == "19.0.0-beta3"


def test_debian_mirror_from_apt_sources(tmp_path: Path) -> None:
    (tmp_path / "sources.list.d").mkdir()
    assert debian_mirror(tmp_path) == "http://deb.debian.org/debian"
    (tmp_path / "sources.list.d" / "debian.sources").write_text(
        "Types: deb\nURIs: http://mirror.example/debian-security\nSuites: bookworm-security\n\n"
        "Types: deb\nURIs: https://mirror.example/debian/\nSuites: bookworm\n")
    assert debian_mirror(tmp_path) == "https://mirror.example/debian"
    (tmp_path / "sources.list").write_text("deb [arch=amd64] http://other.example/debian bookworm main\n")
    assert debian_mirror(tmp_path) == "http://other.example/debian"
