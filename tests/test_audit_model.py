"""The audit's pure parts (no server): capacity additions, index classification, drop sets, parameter columns; and
its catalog model against pg_locks on a real server of every major 13-19 (``any_pg``)."""

from __future__ import annotations

import datetime as dt

import pytest

from lockscope import capacity
from lockscope.audit.indexes import index_findings, smallest_drop_set
from lockscope.audit.tables import table_footprints
from lockscope.capacity import CapacityModel
from lockscope.catalog import AuditSettings, build_catalog, read_catalog, read_settings
from lockscope.db import Session
from lockscope.footprint import measure_footprint
from lockscope.rows import IndexInfo, TableInfo
from lockscope.server import ScratchServer
from lockscope.workload.params import param_columns

from .conftest import by_major

NOW = dt.datetime(2026, 11, 21, tzinfo=dt.UTC)
SETTINGS = AuditSettings(True, NOW, NOW - dt.timedelta(days=30), "stats_reset", None, True, False, "me", 5, 1)


def _rel(oid: int, name: str, relkind: str = "r", parent: int | None = None) -> TableInfo:
    return TableInfo(oid=oid, schema="public", name=name, qualified=f"public.{name}", relkind=relkind,
                        is_partition=parent is not None, parent_oid=parent, partition_bound=None,
                        partition_strategy="r" if relkind == "p" else None, partition_key=None, reltuples=0.0,
                        scans=10)


def _idx(oid: int, table: int, name: str, keys: str = "1", *, unique: bool = False, primary: bool = False,
         valid: bool = True, scans: int = 0, parent: int | None = None, relkind: str = "i",
         predicate: str | None = None, am: str = "btree") -> IndexInfo:
    n = len(keys.split())
    return IndexInfo(oid=oid, table_oid=table, schema="public", name=name, qualified=f"public.{name}",
                     relkind=relkind, am=am, valid=valid, live=True, is_unique=unique or primary,
                     is_primary=primary, is_exclusion=False, is_replica_identity=False,
                     constraint_name=f"{name}_c" if primary else None, key_columns=n, all_columns=n,
                     indkey=keys, indclass=" ".join(["3124"] * n), indcollation=" ".join(["0"] * n),
                     indoption=" ".join(["0"] * n), expressions=None, predicate=predicate,
                     parent_index_oid=parent, idx_scan=scans, size_bytes=8192)


def test_smallest_fitting_groups_and_mlpt_range() -> None:
    assert capacity.mlpt_range_for_groups(1) == (10, 16)
    assert capacity.mlpt_range_for_groups(4) == (33, 64)
    assert capacity.mlpt_range_for_groups(8) == (65, 128)
    for groups in (1, 2, 4, 8, 1024):  # the range maps back to the groups (postinit.c InitializeFastPathLocks)
        low, high = capacity.mlpt_range_for_groups(groups)
        assert capacity.fast_path_groups(180000, max(low, 10)) == groups == capacity.fast_path_groups(180000, high)
    # 40 consecutive OIDs: 49157 ≡ 1 (mod 4), so with 4 groups the group is oid & 3 -> 10 per group (fits); with 2
    # groups oid & 1 -> 20 per group (> 16, spills)
    oids = range(20000, 20040)
    assert capacity.smallest_fitting_groups(170000, [oids]) == 4
    assert CapacityModel(180000, 64).fits(oids)
    assert not CapacityModel(180000, 32).fits(oids)
    assert capacity.smallest_fitting_groups(180000, [range(1, 20000)]) is None


def test_groups_overflow_below_the_slot_count() -> None:
    model = CapacityModel(180000, 64)  # 4 groups: FAST_PATH_REL_GROUP = (oid * 49157) & 3
    same_group = [o for o in range(16384, 20000) if model.group_of(o) == 0][:17]
    assert capacity.groups_overflow(model, same_group) == {0: 17}  # 17 relations < 64 slots, yet one spills
    assert sum(not f for f in model.predict([capacity.LockRequest(o, "AccessShareLock") for o in same_group])) == 1


def test_lock_shmem_grows_with_the_setting() -> None:
    # PostgreSQL's own sizing: SHOW shared_memory_size on lockscope's scratch servers (max_connections 100, other
    # settings default) at max_locks_per_transaction 64 and then 1024: PG 18.6 152MB -> 204MB (MaxBackends 136),
    # PG 15.18 145MB -> 188MB (MaxBackends 122), PG 19rc1 152MB -> 199MB (MaxBackends 136, no 10 % margin). Each
    # value is rounded up to a MB, so the model's growth must be within 1 MB of the measured one (only the lock
    # table and, from PG 18, the fast-path arrays depend on the setting). tests/test_capacity.py measures it live
    # on every major 13-19.
    for version, backends, measured_mb in ((180006, 136, 204 - 152), (150018, 122, 188 - 145),
                                           (190000, 136, 199 - 152)):
        grown = (capacity.lock_shmem_bytes(version, 1024, backends, 0)
                 - capacity.lock_shmem_bytes(version, 64, backends, 0))
        assert abs(grown / 2**20 - measured_mb) < 1, (version, grown / 2**20)
    assert capacity.fast_path_shmem_bytes(170000, 1024, 100) == 0


def _plain_catalog() -> tuple[object, list[IndexInfo]]:
    rels = [_rel(100, "orders")]
    idx = [_idx(101, 100, "orders_pkey", "1", primary=True, scans=5),
           _idx(102, 100, "orders_a", "2", scans=3), _idx(103, 100, "orders_a_copy", "2"),
           _idx(104, 100, "orders_ab", "2 3", scans=1), _idx(105, 100, "orders_bad", "4", valid=False),
           _idx(106, 100, "orders_u", "5", unique=True)]
    idx += [_idx(110 + i, 100, f"orders_x{i}", str(6 + i), scans=1) for i in range(12)]
    return build_catalog(rels, idx, SETTINGS), idx


def test_index_kinds_and_protection() -> None:
    catalog, _ = _plain_catalog()
    found = {f.qualified: f for f in index_findings(catalog, unused_min_age_s=86400)}  # type: ignore[arg-type]
    assert found["public.orders_bad"].kind == "invalid" and found["public.orders_bad"].droppable
    assert found["public.orders_a_copy"].kind == "duplicate" and found["public.orders_a_copy"].other_oid == 102
    assert found["public.orders_a"].kind == "redundant"  # prefix of (2 3)
    assert found["public.orders_u"].kind == "unused" and found["public.orders_u"].protected_reason == "unique"
    assert not found["public.orders_u"].droppable
    assert "public.orders_pkey" not in found  # scanned
    young = index_findings(catalog, unused_min_age_s=60 * 86400)  # type: ignore[arg-type]
    assert not [f for f in young if f.kind == "unused"]


def test_smallest_drop_set_plain_table_is_exact() -> None:
    catalog, _ = _plain_catalog()
    model = CapacityModel(170000, 64)  # 16 slots
    (table,) = table_footprints(catalog, model)  # type: ignore[arg-type]
    assert (table.pruned.locks, table.pruned.spilled) == (19, 3)
    plan = smallest_drop_set(catalog, model, table, index_findings(catalog))  # type: ignore[arg-type]
    assert plan.sufficient and plan.exact and plan.index_oids == (105, 103, 102)  # invalid, duplicate, redundant
    assert plan.before_spilled == 3 and plan.after_spilled == 0


def test_partitioned_footprints_and_drop_set_per_version() -> None:
    rels = [_rel(200, "ev", "p")] + [_rel(201 + i, f"ev_{i}", "r", 200) for i in range(3)]
    idx = [_idx(300 + j, 200, f"ev_i{j}", str(j + 1), relkind="I") for j in range(8)]
    idx += [_idx(400 + 10 * i + j, 201 + i, f"ev_{i}_i{j}", str(j + 1), parent=300 + j, scans=0)
            for i in range(3) for j in range(8)]
    catalog = build_catalog(rels, idx, SETTINGS)
    for version, pruned, unpruned in ((150000, 1 + 1 + 8, 1 + 3 * 9), (180000, 1 + 8 + 1 + 8, 1 + 8 + 3 * 9)):
        model = CapacityModel(version, 16)
        (t,) = table_footprints(catalog, model)
        assert (t.pruned.locks, t.unpruned.locks, t.partitions) == (pruned, unpruned, 3)  # type: ignore[union-attr]
    model = CapacityModel(180000, 16)
    (t,) = table_footprints(catalog, model)
    assert t.pruned.spilled == 2
    found = index_findings(catalog, unused_min_age_s=0)
    assert all(f.partitioned for f in found if f.droppable)  # partition indexes go with their partitioned index
    plan = smallest_drop_set(catalog, model, t, found)
    assert plan.sufficient and len(plan.index_oids) == 1  # one partitioned index = 2 locks (parent + partition)


def test_param_columns() -> None:
    cols, consts, rels, order = param_columns(
        "select * from a x join b on b.id = x.b_id where x.k = $1 and b.v in ($2, $3) limit $4 offset $5")
    assert cols == {1: ("x", "k"), 2: ("b", "v"), 3: ("b", "v")} and consts == {4: "1", 5: "0"}
    assert rels["x"] == "a" and order == ["a", "b"]
    cols, _, _, _ = param_columns("select id from post p where p.language_id = any(array[$1::int4, $2]) and "
                                  "p.id <> all(array[$3])")
    assert cols == {1: ("p", "language_id"), 2: ("p", "language_id"), 3: ("p", "id")}
    with pytest.raises(ValueError):
        param_columns("select from where")


def test_pacer_limits_the_rate() -> None:
    """db.Pacer (the one pacer: Session.query_rows): the first read never waits, the next ones wait out
    1 / rate from the previous one; time spent elsewhere counts; rate 0 never waits."""
    from lockscope.db import Pacer

    now = [100.0]
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        now[0] += seconds

    pacer = Pacer(2.0, sleep=sleep, clock=lambda: now[0])
    assert [pacer.wait() for _ in range(3)] == [0.0, 0.5, 0.5]
    now[0] += 0.3  # a probe's own work between two reads counts
    assert pacer.wait() == pytest.approx(0.2)
    now[0] += 5.0
    assert pacer.wait() == 0.0
    assert slept == [0.5, 0.5, pytest.approx(0.2)]
    unpaced = Pacer(0.0, sleep=sleep, clock=lambda: now[0])
    assert [unpaced.wait() for _ in range(3)] == [0.0, 0.0, 0.0] and len(slept) == 3


# -- the catalog model on a real server of every major 13-19 -----------------------------------------------------
def test_catalog_model_matches_pg_locks(any_pg: ScratchServer, any_session: Session) -> None:
    """read_catalog + table_footprints on the demo schema equal pg_locks (the footprint engine) exactly on every
    major: each table's relation set, lock count and main-lock-table count, pruned (a plain table, or one partition
    by its key) and unpruned (a partitioned table scanned whole); version-specific numbers declared by major."""
    major = any_pg.major
    settings = read_settings(any_session)
    assert settings.has_pg_stat_lock is (major >= 19)
    catalog = read_catalog(any_session)
    model = any_session.facts.capacity
    tables = {t.qualified: t for t in table_footprints(catalog, model)}
    pidx = by_major({13: 0, 14: 0, 15: 0, 16: 1, 17: 1, 18: 1, 19: 1}, major)  # partitioned indexes locked (16+)
    pruned_sql = {"public.t": "select * from t", "public.acct": "select * from acct",
                  "public.p40": "select * from p40 where k = 150",
                  "public.events": "select * from events where event_time = '2024-06-06'"}
    expected_pruned = {"public.t": 6, "public.acct": 3, "public.p40": 3 + pidx, "public.events": 5 + 3 * pidx}
    for name, sql in pruned_sql.items():
        t = tables[name]
        e = measure_footprint(any_session, sql).executions[0]
        assert t.pruned.locks == e.lock_count == expected_pruned[name], name
        assert t.pruned.spilled == e.main_table_count, name
        if t.partitions == 0:
            assert sorted(t.pruned.relation_oids) == sorted(lk.relation_oid for lk in e.locks), name
    for name, partitions in (("public.p40", 40), ("public.events", 12)):
        t = tables[name]
        assert t.unpruned is not None and t.partitions == partitions
        e = measure_footprint(any_session, f"select * from {name}").executions[0]
        assert sorted(t.unpruned.relation_oids) == sorted(lk.relation_oid for lk in e.locks), name
        assert (t.unpruned.locks, t.unpruned.spilled) == (e.lock_count, e.main_table_count), name
    # p40 whole: 81 locks, 82 with its partitioned index; 16 slots before PG 18, 4 groups at mlpt 64 from 18
    assert (tables["public.p40"].unpruned.locks, tables["public.p40"].unpruned.spilled) == by_major(  # type: ignore[union-attr]
        {13: (81, 65), 14: (81, 65), 15: (81, 65), 16: (82, 66), 17: (82, 66), 18: (82, 18), 19: (82, 18)}, major)


def test_a_call_in_flight_at_a_snapshot_is_no_reuse() -> None:
    """pg_stat_statements counts a planning when it ends and the call when its execution ends: over an interval,
    calls and plans may differ by the calls in flight at the two snapshots, which is no plan reuse."""
    from lockscope.workload.phases import split_phases

    # simple protocol, 12,000 calls/s over 6 s; 2 calls were in flight at a snapshot: 2 more calls than plans
    skewed = split_phases(12000.0, planned=(102, 86), reused=(1, 0), plans_per_s=12000.0 - 2 / 6,
                          counter_skew_per_s=2 / 6)
    assert skewed.reused_per_s == 0.0 and skewed.main_table_per_s == 12000.0 * 86
    # a prepared statement at 15 calls/s, never planned in the interval: every call reuses, skew or not
    prepared = split_phases(15.0, planned=(102, 86), reused=(1, 0), plans_per_s=0.0, counter_skew_per_s=2 / 6)
    assert prepared.planned_per_s == 0.0 and prepared.main_table_per_s == 0.0
