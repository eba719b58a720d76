"""lockscope.lockpart against the server's own hash: LockTagHashCode of relation LOCKTAGs (a test-only C function
built with PGXS from tests/c/ against each test server) and hashtext (hash_bytes of a string). Exact: 0 mismatches.

The server tests run on :data:`HEADER_MAJORS`, the majors whose test builds ship server headers and PGXS: 14, 16
and 17 (the lab's wheels: ``include/server``), 15 (Debian's postgresql-server-dev-15, installed by
scripts/test.sh) and 18 (the embedded wheel). Not on 13 (the npm build has no pg_config and no headers) nor on 19
(the Debian experimental postgresql-19 package has pg_config and lib/pgxs but its headers are in
postgresql-server-dev-19, which the lab does not fetch). Declared here, never skipped: a header-less build among
these majors FAILS."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from lockscope.lockpart import (
    hash_bytes,
    lock_partition,
    partition_load,
    relation_lock_hashcode,
    relation_locktag,
    transaction_traffic,
)
from lockscope.server import ScratchServer

C_DIR = Path(__file__).parent / "c"
OID_MAX = 2**32 - 1
#: Majors the server-side hash tests run on (see the module docstring for 13 and 19).
HEADER_MAJORS = (14, 15, 16, 17, 18)
on_header_majors = pytest.mark.parametrize("every_pg", HEADER_MAJORS, indirect=True,
                                           ids=[f"pg{m}" for m in HEADER_MAJORS])


# -- pure ------------------------------------------------------------------------------------------------------
def test_relation_locktag_layout() -> None:
    tag = relation_locktag(5, 0x01020304)
    assert tag == bytes([5, 0, 0, 0, 4, 3, 2, 1, 0, 0, 0, 0, 0, 0, 0, 1])
    assert len(relation_locktag(OID_MAX, OID_MAX)) == 16


@pytest.mark.parametrize(("db", "rel"), [(-1, 1), (1, -1), (2**32, 1), (1, 2**32)])
def test_oid_out_of_range_is_refused(db: int, rel: int) -> None:
    with pytest.raises(ValueError, match="OID"):
        lock_partition(db, rel)


#: LockTagHashCode and LockHashPartition of SET_LOCKTAG_RELATION(db, rel) as PostgreSQL 18.6 computes them (tests/c
#: built against the embedded server, as in the server tests below; copied once): (db, rel) -> (hashcode, partition).
SERVER_HASHES = {
    (5, 16384): (1846836088, 8), (5, 16385): (365385484, 12), (5, 16386): (3320647416, 8),
    (5, 16387): (1087424272, 0), (5, 16388): (536465849, 9), (5, 16389): (3436441244, 12),
    (5, 16390): (3037688621, 13), (5, 16391): (934335169, 1),
    (0, 1259): (239863079, 7), (1, 2**31): (3971285065, 9), (OID_MAX, OID_MAX): (1208699603, 3),
}


def test_hashcode_and_partition_of_known_relation_tags() -> None:
    """Without a server: the hash codes and partitions PostgreSQL gave for a few tags (user OIDs from 16384, a
    shared catalog in database 0, the top of the OID range); the partition load of the 8 user relations in database
    5, counted by hand from that table: partitions 8 and 12 twice, 0, 1, 9 and 13 once."""
    for (db, rel), (hashcode, partition) in SERVER_HASHES.items():
        assert (relation_lock_hashcode(db, rel), lock_partition(db, rel)) == (hashcode, partition), (db, rel)
    load = partition_load((5, rel) for rel in range(16384, 16392))
    assert load == (1, 1, 0, 0, 0, 0, 0, 0, 2, 1, 0, 0, 2, 1, 0, 0)


def test_transaction_traffic_by_hand() -> None:
    """3 main-table locks in partition 0 and 1 in partition 7: partition 0's LWLock is taken 3 times to acquire
    (lock.c LockAcquireExtended) and once by LockReleaseAll at commit, 4; partition 7's 1 + 1 = 2; an untouched
    partition 0 (LockReleaseAll skips an empty list). Total 6, 2 partitions touched, the hottest 0; on a tie the
    lowest partition is the hottest."""
    traffic = transaction_traffic((3, 0, 0, 0, 0, 0, 0, 1) + (0,) * 8)
    assert traffic.per_partition == (4, 0, 0, 0, 0, 0, 0, 2) + (0,) * 8
    assert (traffic.total, traffic.partitions_touched, traffic.hottest_partition) == (6, 2, 0)
    tie = transaction_traffic((0, 0, 2) + (0,) * 6 + (2,) + (0,) * 6)
    assert (tie.total, tie.hottest_partition) == (6, 2)
    one = transaction_traffic((0,) * 5 + (24,) + (0,) * 10)
    assert one.per_partition[5] == 25 and one.total == 25 and one.hottest_partition == 5
    assert transaction_traffic((0,) * 16).total == 0 and transaction_traffic((0,) * 16).hottest_partition is None
    with pytest.raises(ValueError):
        transaction_traffic((1,) * 15)
    with pytest.raises(ValueError):
        transaction_traffic((-1,) + (0,) * 15)


# -- against the server ----------------------------------------------------------------------------------------
def _pg_config(server: ScratchServer) -> Path:
    """The server installation's pg_config; its server headers installed (Debian: postgresql-server-dev-N, with
    apt-get when running as root and they are missing), else the test FAILS."""
    pg_config = server.tool("pg_config")
    include = Path(subprocess.run([str(pg_config), "--includedir-server"], check=True, capture_output=True,
                                  text=True).stdout.strip())
    debian = str(server.bin_dir).startswith("/usr/lib/postgresql/")
    if not (include / "storage" / "lock.h").exists() and debian and os.geteuid() == 0 and shutil.which("apt-get"):
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "install", "-y", "-qq", f"postgresql-server-dev-{server.major}"],
                       check=False, capture_output=True, env=env)
    if not (include / "storage" / "lock.h").exists():
        pytest.fail(f"no PostgreSQL {server.major} server headers at {include}: install "
                    f"postgresql-server-dev-{server.major} (scripts/test.sh does)", pytrace=False)
    return pg_config


def _traversable(path: Path) -> Path:
    """Let the scratch server's system user (tests run as root) reach and read files under ``path``."""
    if os.geteuid() == 0:
        for p in (path, *path.parents):
            if str(p) in ("/", "/tmp"):
                break
            p.chmod(p.stat().st_mode | 0o011)
        path.chmod(path.stat().st_mode | 0o055)
    return path


@pytest.fixture(scope="session")
def locktag_conn(any_pg: ScratchServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[psycopg.Connection]:
    """A connection to ``any_pg`` with ``pg_temp.lockscope_locktag_hash(oid, oid) -> int8`` and
    ``pg_temp.lockscope_locktag_partition(oid, oid) -> int4`` from tests/c built (once per server) with PGXS
    against that server's own headers. A failed build FAILS the tests."""
    build = _traversable(tmp_path_factory.mktemp(f"locktag-pg{any_pg.major}"))
    for name in ("lockscope_locktag.c", "Makefile"):
        shutil.copy(C_DIR / name, build / name)
    result = subprocess.run(["make", "-C", str(build), f"PG_CONFIG={_pg_config(any_pg)}", "CFLAGS=-O2 -fPIC",
                             "with_llvm=no"], capture_output=True, text=True)
    library = build / "lockscope_locktag.so"
    if result.returncode != 0 or not library.exists():
        pytest.fail(f"building tests/c against PostgreSQL {any_pg.major} failed:\n{result.stdout}\n{result.stderr}",
                    pytrace=False)
    library.chmod(0o755)
    with psycopg.connect(any_pg.conninfo(), autocommit=True) as conn:
        for fn, returns in (("lockscope_locktag_hash", "int8"), ("lockscope_locktag_partition", "int4")):
            conn.execute(f"create function pg_temp.{fn}(oid, oid) returns {returns} "
                         f"as '{library}', '{fn}' language c strict immutable")
        yield conn


def _relation_oids() -> list[int]:
    """10,000 relation OIDs: edges, consecutive runs (user OIDs from 16384, around 2**31, up to 2**32 - 1) and
    random values over the whole uint32 range (half of them > 2**31)."""
    edges = [0, 1, 2, 1259, 16383, 16384, 2**31 - 1, 2**31, 2**31 + 1, 2**32 - 2, OID_MAX]
    consecutive = [*range(16384, 16384 + 3000), *range(2**31 - 500, 2**31 + 500), *range(OID_MAX - 999, OID_MAX + 1)]
    rng = random.Random(20261122)
    oids = list(dict.fromkeys(edges + consecutive))
    seen = set(oids)
    while len(oids) < 10_000:
        oid = rng.randrange(0, 2**32)
        if oid not in seen:
            seen.add(oid)
            oids.append(oid)
    return oids


@on_header_majors
def test_lock_partition_matches_server_locktaghashcode(locktag_conn: psycopg.Connection, any_pg: ScratchServer) -> None:
    """LockTagHashCode and LockHashPartition of SET_LOCKTAG_RELATION(db, rel), computed by the server, equal
    relation_lock_hashcode and lock_partition for 10,000 relation OIDs x 6 database OIDs (the current
    database's, 0 = shared catalogs, template1's 1, 5, 2**31 + 7, 2**32 - 1): 0 mismatches."""
    current = locktag_conn.execute("select oid::int8 from pg_database where datname = current_database()").fetchone()
    assert current is not None
    databases = [int(current[0]), 0, 1, 5, 2**31 + 7, OID_MAX]
    rels = _relation_oids()
    assert len(rels) == 10_000 and sum(r > 2**31 for r in rels) > 4000
    compared = 0
    for db in databases:
        rows = locktag_conn.execute(
            "select r::int8, pg_temp.lockscope_locktag_hash(%s::int8::oid, r), "
            "pg_temp.lockscope_locktag_partition(%s::int8::oid, r) from unnest(%s::int8[]::oid[]) r",
            (db, db, rels)).fetchall()
        assert len(rows) == len(rels)
        mismatches = [(db, rel, server_hash, relation_lock_hashcode(db, rel)) for rel, server_hash, part in rows
                      if server_hash != relation_lock_hashcode(db, rel) or part != lock_partition(db, rel)]
        assert mismatches == [], f"PostgreSQL {any_pg.major}: first mismatches {mismatches[:5]}"
        compared += len(rows)
    assert compared == 60_000


@on_header_majors
def test_lock_partition_of_real_relations(locktag_conn: psycopg.Connection) -> None:
    """The partitions of the demo schema's relations, as the server would place their locks (database 0 for the
    shared catalogs, as pg_locks shows them)."""
    rows = locktag_conn.execute(
        "select case when c.relisshared then 0 else d.oid end::int8, c.oid::int8, "
        "pg_temp.lockscope_locktag_partition(case when c.relisshared then 0::oid else d.oid end, c.oid) "
        "from pg_class c, pg_database d where d.datname = current_database()").fetchall()
    assert len(rows) > 400
    assert [(db, rel, lock_partition(db, rel)) for db, rel, _ in rows] == rows


@on_header_majors
def test_hash_bytes_matches_server_hashtext(locktag_conn: psycopg.Connection) -> None:
    """hash_bytes of every key length 0..64 (1-, 2- and 3-block keys and every tail length) equals the server's
    hashtext (hash_any of the string's bytes under a deterministic collation), 3 strings per length."""
    rng = random.Random(7)
    texts = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789_ ") for _ in range(n))
             for n in range(65) for _ in range(3)]
    rows = locktag_conn.execute("select t, hashtext(t collate \"C\")::int8 from unnest(%s::text[]) t",
                                (texts,)).fetchall()
    assert len(rows) == 195
    assert [(t, hash_bytes(t.encode()) - (2**32 if hash_bytes(t.encode()) >= 2**31 else 0)) for t, _ in rows] == rows


@on_header_majors
def test_footprint_lock_partitions_are_the_servers(locktag_conn: psycopg.Connection, any_pg: ScratchServer) -> None:
    """``footprint``'s lock_partition of every relation lock (spilled or not) and its per-partition summary equal
    the server's own LockHashPartition of the lock's tag (pg_locks database, relation)."""
    from lockscope.db import connect
    from lockscope.footprint import measure_footprint

    with connect(any_pg.conninfo()) as session:
        e = measure_footprint(session, "select * from p40 where k = (select 150)").executions[0]
    db = int(locktag_conn.execute("select oid::int8 from pg_database where datname = current_database()")
             .fetchone()[0])  # type: ignore[index]
    server = dict(locktag_conn.execute(
        "select r::int8, pg_temp.lockscope_locktag_partition(%s::int8::oid, r) from unnest(%s::int8[]::oid[]) r",
        [db, [lock.relation_oid for lock in e.locks]]).fetchall())
    assert [lock.lock_partition for lock in e.locks] == [server[lock.relation_oid] for lock in e.locks]
    expected = [0] * 16
    for lock in e.locks:
        if not lock.fastpath:
            expected[server[lock.relation_oid]] += 1
    assert list(e.partition_load) == expected and sum(expected) == e.main_table_count > 0
