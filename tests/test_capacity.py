"""The capacity model against the rules in pg-lock-internals.md (pure functions)."""

from __future__ import annotations

import pytest

from lockscope.capacity import (
    CapacityModel,
    LockRequest,
    fast_path_groups,
    fast_path_rel_group,
    max_backends,
    shared_lock_table_entries,
    simulate_fast_path,
)


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
