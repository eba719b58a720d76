"""Typed rows at the database boundary (lockscope/rows.py): a row becomes its dataclass, a missing column is a
clear error naming the SQL file, optional columns may be absent, unit-carrying fields read their column."""

from __future__ import annotations

import pytest

from lockscope.errors import DatabaseError
from lockscope.rows import HeldLocksRow, RowShapeError, StatementCountersRow, from_row


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
