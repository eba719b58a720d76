"""The capacity model against the rules in pg-lock-internals.md (pure functions), and its shared-memory sizing
against a real server of every major 13-19."""

from __future__ import annotations

import pytest

from lockscope.capacity import (
    CapacityModel,
    LockRequest,
    fast_path_groups,
    fast_path_rel_group,
    lock_shmem_bytes,
    max_backends,
    shared_lock_table_entries,
    simulate_fast_path,
)
from lockscope.db import connect
from lockscope.server import ScratchServer
from lockscope.versions import PG15, PG19, default_max_locks_per_transaction

from .fix_versions import VERSION_MAJORS, bin_dir_of
from .servers import ServerPool, demo_server


@pytest.mark.parametrize(
    "mlpt, groups",
    [(10, 1), (16, 1), (20, 2), (32, 2), (64, 4), (100, 8), (128, 8), (129, 16), (1024, 64), (16384, 1024),
     (100000, 1024)],
)
def test_pg18_groups_follow_postinit(mlpt: int, groups: int) -> None:
    assert fast_path_groups(180006, mlpt) == groups
    assert CapacityModel(180006, mlpt).slots == groups * 16


@pytest.mark.parametrize("version", [130000, 150018, 170011])
@pytest.mark.parametrize("mlpt", [10, 64, 1024])
def test_pg13_to_17_have_16_slots_whatever_the_setting(version: int, mlpt: int) -> None:
    model = CapacityModel(version, mlpt)
    assert (model.groups, model.slots, model.hashed) == (1, 16, False)
    assert model.group_of(123456) == 0


def test_unsupported_version_and_setting() -> None:
    with pytest.raises(ValueError):
        fast_path_groups(120000, 64)
    with pytest.raises(ValueError):
        CapacityModel(180000, 0)


def test_rel_group_hash() -> None:
    # (oid * 49157) & (groups - 1), uint64 arithmetic. 49157 = 48 * 1024 + 5, so the product's low 10 bits are
    # those of oid * 5: 16384 * 5 = 81920 -> & 3 = 0; 16385 * 5 = 81925 -> & 3 = 1; (2^32 - 1) * 5 ≡ -5 (mod 1024)
    assert fast_path_rel_group(16384, 4) == 0
    assert fast_path_rel_group(16385, 4) == 1
    assert fast_path_rel_group(4294967295, 1024) == 1019
    assert fast_path_rel_group(4294967295, 16) == 11  # -5 mod 16
    assert fast_path_rel_group(16385, 1) == 0


def _reqs(oids: list[int], mode: str = "AccessShareLock") -> list[LockRequest]:
    return [LockRequest(o, mode) for o in oids]


def test_sixteen_fit_seventeenth_spills_pg17() -> None:
    model = CapacityModel(170000, 64)
    flags = simulate_fast_path(model, _reqs(list(range(20000, 20017))))
    assert flags == (True,) * 16 + (False,)


def test_full_group_spills_even_when_other_groups_are_empty_pg18() -> None:
    model = CapacityModel(180000, 64)  # 4 groups
    same_group = [o for o in range(20000, 30000) if model.group_of(o) == 2][:17]
    flags = simulate_fast_path(model, _reqs(same_group))
    assert flags == (True,) * 16 + (False,)
    assert model.fits(same_group[:16]) and not model.fits(same_group)


def test_second_weak_mode_shares_the_slot_but_not_in_a_full_group() -> None:
    model = CapacityModel(170000, 64)
    oids = list(range(30000, 30016))
    reqs = [*_reqs(oids[:15]), LockRequest(30000, "RowExclusiveLock"), LockRequest(30015, "AccessShareLock")]
    assert simulate_fast_path(model, reqs) == (True,) * 17  # slot of 30000 gets a second mode bit
    reqs = [*_reqs(oids), LockRequest(30000, "AccessShareLock"), LockRequest(30099, "AccessShareLock")]
    assert simulate_fast_path(model, reqs)[-2:] == (True, False)  # already held; new relation spills
    full = [*_reqs(oids), LockRequest(30001, "RowExclusiveLock")]
    # lock.c checks the group's use count before FastPathGrantRelationLock: a full group refuses a second mode
    assert simulate_fast_path(model, full)[-1] is False
    small = [LockRequest(1, "AccessShareLock"), LockRequest(1, "RowExclusiveLock")]
    assert simulate_fast_path(model, small) == (True, True)


def test_strong_modes_and_shared_catalogs_never_fast_path() -> None:
    model = CapacityModel(180000, 64)
    reqs = [LockRequest(1, "ShareUpdateExclusiveLock"), LockRequest(2, "AccessExclusiveLock"),
            LockRequest(1262, "AccessShareLock", shared_catalog=True), LockRequest(3, "RowShareLock")]
    assert simulate_fast_path(model, reqs) == (False, False, False, True)


def test_max_backends_and_lock_table() -> None:
    # PG17: 100 + 3 + 1 + 8 + 10 = 122 ; PG18: 100 + 16 + 8 + 10 + 2 = 136
    assert max_backends(170000, max_connections=100, autovacuum_workers=3, max_worker_processes=8,
                        max_wal_senders=10) == 122
    assert max_backends(180000, max_connections=100, autovacuum_workers=16, max_worker_processes=8,
                        max_wal_senders=10) == 136
    assert shared_lock_table_entries(64, 136, 0) == 8704
    assert shared_lock_table_entries(64, 122, 5) == 8128


def _shmem(server: ScratchServer) -> tuple[int, str | None, int, int, int]:
    """(bytes of the whole shared memory segment as pg_shmem_allocations adds it up, shared_memory_size or None
    before PG 15, MaxBackends, max_prepared_transactions, server_version_num)."""
    with connect(server.conninfo()) as session:
        size_bytes, size_mb = session.oracle_rows("select sum(allocated_size)::int8, "
                                                  "current_setting('shared_memory_size', true) "
                                                  "from pg_shmem_allocations")[0]
        facts = session.facts
        return (int(size_bytes), size_mb, facts.max_backends, facts.max_prepared_transactions,
                facts.server_version_num)


@pytest.mark.parametrize("major", VERSION_MAJORS, ids=[f"pg{m}" for m in VERSION_MAJORS])
def test_lock_shmem_growth_matches_the_server(major: int, server_pool: ServerPool) -> None:
    """max_locks_per_transaction 64 -> 1024 on a real server: the shared memory the server allocates grows by what
    capacity.lock_shmem_bytes says (main lock table, and the fast-path arrays from PG 18), within 0.5 MB of
    ~43-52 MB on every major 13-19: PG 13-17 43.4 MB (MaxBackends 122), PG 18 51.9 MB (MaxBackends 136, fast-path
    arrays 0.05 -> 0.8 MB), PG 19 47.2 MB (no 10 % margin: lock.c sizes the lock tables exactly and allocates them
    at start). Measured as the sum of pg_shmem_allocations (13+), and as SHOW shared_memory_size (15+, whole MB)."""
    # the session's demo server of that major (max_locks_per_transaction 64; the schema does not change the shared
    # memory the server allocates at start), restarted at 1024 and back to 64 after the test (conftest)
    server = demo_server(server_pool, bin_dir_of(major))
    before = _shmem(server)
    server.reconfigure(max_locks_per_transaction=1024)
    after = _shmem(server)
    total64, mb64, backends, prepared, version = before
    total1024, mb1024, backends_after, _, _ = after
    assert version // 10000 == major and backends == backends_after
    assert backends == (136 if major >= 18 else 122)  # postinit.c InitializeMaxBackends with the defaults
    model = lock_shmem_bytes(version, 1024, backends, prepared) - lock_shmem_bytes(version, 64, backends, prepared)
    measured = total1024 - total64
    assert abs(measured - model) < 0.5 * 2**20, (major, measured / 2**20, model / 2**20)
    if version >= PG15:
        assert mb64 is not None and mb1024 is not None
        shown = int(mb1024.removesuffix("MB")) - int(mb64.removesuffix("MB"))
        assert abs(shown - model / 2**20) <= 1, (major, shown, model / 2**20)
    else:
        assert mb64 is None  # no shared_memory_size before PG 15
    # the default the server would start with, and its fast-path groups (128 = 8 groups from PG 19)
    default = default_max_locks_per_transaction(version)
    assert (default, fast_path_groups(version, default)) == ((128, 8) if version >= PG19 else
                                                            (64, 4) if major >= 18 else (64, 1))


def test_assumed_lock_table_budget_defaults() -> None:
    """The issue's PG 19rc1 server (mlpt 16, max_connections 100, other settings default) has 2,176 entries; the
    same settings on 13 (autovacuum_max_workers 3 counted, not the 16 worker slots) have 1,952, a floor there."""
    from lockscope.budget import assumed_budget

    pg19 = assumed_budget(190000, max_locks_per_transaction=16)
    assert (pg19.entries, pg19.is_floor) == (2176, False)
    pg13 = assumed_budget(130000, max_locks_per_transaction=16)
    assert (pg13.entries, pg13.is_floor) == (1952, True)
    assert assumed_budget(190000, max_locks_per_transaction=16, max_prepared_transactions=5).entries == 2256
    assert pg19.smallest_mlpt(2177) == 17 and pg19.fits(2176) and not pg19.fits(2177)
