"""Typed rows at the database boundary (lockscope/rows.py): a row becomes its dataclass, a missing column is a
clear error naming the SQL file, optional columns may be absent, unit-carrying fields read their column."""

from __future__ import annotations

import json

import psycopg
import pytest

from lockscope.errors import DatabaseError
from lockscope.rows import HeldLocksRow, RelationLockRow, RowShapeError, StatementCountersRow, from_row
from lockscope.server import ScratchServer
from lockscope.vocab import LockMode, LockRole, PlanCacheMode, PlanPhase


def test_missing_column_names_the_sql_file_and_the_column() -> None:
    with pytest.raises(RowShapeError, match=r"sql/audit_held_locks\.sql returned no column 'fastpath'") as err:
        from_row(HeldLocksRow, {"pid": 7, "query_id": None, "query": "select 1", "main_table": 3},
                 "audit_held_locks")
    assert isinstance(err.value, DatabaseError) and err.value.exit_code == 3


def test_columns_with_units_and_optional_columns() -> None:
    row = from_row(StatementCountersRow, {"queryid": 1, "userid": 10, "calls": 4, "total_exec_time": 2.5,
                                          "unknown": "ignored"}, "audit_pgss_snapshot")
    assert row == StatementCountersRow(1, 10, 4, total_exec_time_ms=2.5)
    assert row.plans is None and row.total_plan_time_ms is None
    nested = from_row(StatementCountersRow, {"queryid": 1, "userid": 10, "calls": 2, "total_exec_time": 1.0,
                                             "plans": 3}, "audit_pgss_snapshot")
    assert row.plus(nested) == StatementCountersRow(1, 10, 6, plans=3, total_exec_time_ms=3.5)


def test_enum_columns_are_converted_once_at_the_boundary() -> None:
    """A column whose field is a vocabulary enum (lockscope/vocab.py) arrives as its member; a value that is none
    of its members is a RowShapeError naming the file (rows and SQL out of step)."""
    row = from_row(RelationLockRow, {"relation_oid": 1259, "mode": "AccessShareLock", "fastpath": True,
                                     "shared_catalog": False, "database_oid": 5}, "relation_locks")
    assert row.mode is LockMode.ACCESS_SHARE and row.mode == "AccessShareLock" and row.mode.rank == 0
    with pytest.raises(RowShapeError, match=r"sql/relation_locks\.sql returned 'SIReadLock' in column 'mode', not a "
                                            r"LockMode"):
        from_row(RelationLockRow, {"relation_oid": 1259, "mode": "SIReadLock", "fastpath": False,
                                   "shared_catalog": False, "database_oid": 5}, "relation_locks")


def test_vocabulary_values_are_the_output_strings() -> None:
    """The enums' values are what pg_locks, plan_cache_mode and lockscope's JSON spell (docs/json-schema.md)."""
    assert list(LockMode) == ["AccessShareLock", "RowShareLock", "RowExclusiveLock", "ShareUpdateExclusiveLock",
                              "ShareLock", "ShareRowExclusiveLock", "ExclusiveLock", "AccessExclusiveLock"]
    assert [m for m in LockMode if m.weak] == ["AccessShareLock", "RowShareLock", "RowExclusiveLock"]
    assert [r for r in LockRole if r.is_index] == ["index", "partitioned index", "partition index"]
    assert [p for p in PlanPhase if not p.plans] == ["generic-reuse"]
    assert list(PlanCacheMode) == ["auto", "force_custom_plan", "force_generic_plan"]
    assert json.dumps({"role": LockRole.PARTITION_INDEX, "phase": PlanPhase.GENERIC_BUILD}) == \
        '{"role": "partition index", "phase": "generic-build"}'
    assert f"{LockMode.ROW_EXCLUSIVE} {PlanCacheMode.AUTO}" == "RowExclusiveLock auto"


def test_catalog_memo_reads_once_within_its_block_and_not_after(pg18: ScratchServer) -> None:
    """Session.catalog_memo: inside the block a memoised file's rows are the first read's, even after the catalog
    changed (a measurement's derivation reads the same target for every execution); after the block, the server's
    again."""
    from lockscope.db import connect, run_script
    from lockscope.execlocks import DERIVATION_CATALOG
    from lockscope.rows import ExecColumnRow

    run_script(pg18.conninfo(), "drop table if exists memo_t; create table memo_t (a int);")
    with psycopg.connect(pg18.conninfo()) as conn:
        row = conn.execute("select 'memo_t'::regclass::oid").fetchone()
    assert row is not None
    oid = int(row[0])
    with connect(pg18.conninfo()) as session:
        with session.catalog_memo(DERIVATION_CATALOG):
            first = session.query_rows("exec_columns", ExecColumnRow, [oid])
            run_script(pg18.conninfo(), "alter table memo_t add column b int;")
            again = session.query_rows("exec_columns", ExecColumnRow, [oid])
        after = session.query_rows("exec_columns", ExecColumnRow, [oid])
    run_script(pg18.conninfo(), "drop table memo_t;")
    assert [c.name for c in first] == [c.name for c in again] == ["a"]
    assert [c.name for c in after] == ["a", "b"]
