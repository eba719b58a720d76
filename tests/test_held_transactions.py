"""The transaction estimate of ``lockscope.workload.transactions`` over hand-written pg_locks snapshot rows (the
rows ``audit_held_locks.sql`` returns; no server needed): a five-statement transaction seen at different
statements, snapshots part-way through a statement's planning, an autocommit statement beside it, a statement
seen before parse analysis (no query_id yet), and the transactions/s each shape gets. The same estimate against a
real load: ``tests/test_diagnose.py::test_transactions_of_real_lookups``."""

from __future__ import annotations

import dataclasses
import datetime

import pytest

from lockscope.rows import HeldLocksRow
from lockscope.workload.transactions import statement_key, transaction_load

T0 = datetime.datetime(2026, 8, 1, 12, 0, tzinfo=datetime.UTC)
#: Relations of five lookups in one transaction: 6, 6, 10, 7 and 4 of them (a table and its indexes each).
TABLES = [list(range(100, 106)), list(range(200, 206)), list(range(300, 310)), list(range(400, 407)),
          list(range(500, 504))]
TEXT = [f"select * from t{i} where id = $1" for i in range(1, 6)]


def _row(pid: int, xact: int, at: int, *, main: int | None = None, text: str | None = None, extra: int = 0,
         qid: int | None = None, single: bool = False, state: str = "idle in transaction") -> HeldLocksRow:
    """Backend ``pid`` in transaction ``xact`` after statement ``at`` (0-based) of the five, ``extra`` relations of
    that statement not yet locked (part-way through its planning)."""
    rels = [r for t in TABLES[: at + 1] for r in t]
    rels = rels[: len(rels) - extra]
    spilled = rels[16:] if main is None else rels[len(rels) - main:]
    return HeldLocksRow(pid, qid if qid is not None else 1000 + at, text or TEXT[at], len(spilled),
                        len(rels) - len(spilled), state, T0 + datetime.timedelta(seconds=xact), single, rels,
                        spilled or None)


def test_five_statements_seen_anywhere_make_one_shape_with_its_last_statements_locks() -> None:
    """Twelve transactions, each seen once, at any of its five statements (two part-way through planning): one
    shape of the five statements in order, 33 locks and 17 in the main lock table at its end, at the calls/s of
    its last statement; the database's rate caps it."""
    snapshots = [
        [_row(1, 1, 0), _row(2, 1, 1), _row(3, 1, 2)],
        [_row(1, 2, 3), _row(2, 2, 4), _row(3, 2, 4, extra=3, state="active")],  # tags' indexes not locked yet
        [_row(1, 3, 4), _row(2, 3, 2, extra=9, state="active"), _row(3, 3, 4)],
        [_row(1, 4, 4), _row(2, 4, 3), _row(3, 4, 1)],
    ]
    calls = {f"q{1000 + i}": 4000.0 for i in range(5)}
    load = transaction_load(snapshots, transactions_per_s=3900.0, calls_per_s=calls, texts={})
    assert load.snapshots == 4 and load.transactions_seen == 12
    (shape,) = load.shapes
    assert shape.statements == tuple(f"q{1000 + i}" for i in range(5)) and shape.texts == tuple(TEXT)
    assert shape.last == ("q1004",) and not shape.single_statement
    assert (shape.held_locks_per_txn, shape.held_main_per_txn, shape.observations) == (33.0, 17.0, 4)
    assert shape.relation_oids == tuple(r for t in TABLES for r in t)
    assert shape.main_relation_oids == tuple(r for t in TABLES for r in t)[16:]
    assert (shape.transactions_per_s, shape.tps_basis) == (3900.0, "calls of its last statement")
    assert load.held_main_per_s == pytest.approx(17 * 3900.0)


def test_an_autocommit_statement_is_a_shape_of_its_own_and_keys_meet() -> None:
    """An autocommit statement (xact_start = query_start) is its own transaction even when its relations are the
    first statement's; a row seen before parse analysis (no query_id) counts under the query id of the same text;
    without calls/s a shape gets the database's rate x its share of the transactions seen."""
    snapshots = [
        [_row(1, 1, 4), _row(2, 1, 0, single=True, qid=7, text="select 1 from t1 where id = 5", state="active")],
        [_row(1, 2, 4), _row(2, 2, 0, single=True, qid=7, text="select 1 from t1 where id = 6", state="active")],
        [_row(1, 3, 4, qid=0, text="select * from t5 where id = 9", state="active"), _row(3, 9, 3)],
    ]
    assert statement_key(None, "select * from t5 where id = 9") == statement_key(None, TEXT[4])
    load = transaction_load(snapshots, transactions_per_s=1000.0, calls_per_s={"q7": 200.0},
                            texts={"q1004": TEXT[4]})
    by_last = {s.last: s for s in load.shapes}
    assert set(by_last) == {("q1004",), ("q7",)}
    single = by_last[("q7",)]
    assert single.single_statement and single.held_main_per_txn == 0.0 and single.transactions_per_s == 200.0
    five = by_last[("q1004",)]
    assert five.statements == ("q1003", "q1004") and five.held_main_per_txn == 17.0
    assert five.observations == 3 and five.transactions_seen == 4
    assert (five.transactions_per_s, five.tps_basis) == (pytest.approx(1000.0 * 4 / 6),
                                                          "share of the database's transactions")


def test_a_statement_seen_before_it_locked_anything_keeps_its_place() -> None:
    """The third statement is seen three times before it has locked any of its 10 relations (parse analysis, or a
    backend preempted before planning: it holds what the second left, 12 relations) and once after; the second is
    seen twice, complete. Both positions' common relations are then the same 12, and the order must still put the
    second first: the third's backends were seen holding more (a flake of test_transactions_of_real_lookups on CI:
    routes, plugins, services, ...)."""
    snapshots = [
        [_row(1, 1, 2, extra=10, state="active"), _row(2, 1, 1), _row(3, 1, 4)],
        [_row(1, 2, 2, extra=10, state="active"), _row(2, 2, 2), _row(3, 2, 0)],
        [_row(1, 3, 2, extra=10, state="active"), _row(2, 3, 1), _row(3, 3, 3)],
    ]
    calls = {f"q{1000 + i}": 4000.0 for i in range(5)}
    for key_of_third in ("q10", "q1002"):  # the third's key sorting before the second's ("q1001"), or after
        rows = [[r if r.query_id != 1002 else dataclasses.replace(r, query_id=int(key_of_third[1:])) for r in s]
                for s in snapshots]
        load = transaction_load(rows, transactions_per_s=3900.0, calls_per_s={
            **calls, key_of_third: 4000.0}, texts={})
        (shape,) = load.shapes
        assert shape.texts == tuple(TEXT), key_of_third


def test_a_last_statement_seen_before_it_locked_anything_still_ends_the_shape() -> None:
    """The fifth statement seen twice before it locked any of its 4 relations (holding the 29 the fourth left) and
    once after; the fourth seen once: the fifth still ends the shape, whichever key sorts first."""
    snapshots = [
        [_row(1, 1, 4, extra=4, state="active"), _row(2, 1, 0), _row(3, 1, 1)],
        [_row(1, 2, 4, extra=4, state="active"), _row(2, 2, 3), _row(3, 2, 2)],
        [_row(1, 3, 4), _row(2, 3, 1)],
    ]
    for key_of_fifth in (10, 1004):  # "q10" sorts before the fourth's "q1003", "q1004" after
        rows = [[r if r.query_id != 1004 else dataclasses.replace(r, query_id=key_of_fifth) for r in s]
                for s in snapshots]
        calls = {f"q{1000 + i}": 4000.0 for i in range(4)} | {f"q{key_of_fifth}": 4000.0}
        (shape,) = transaction_load(rows, transactions_per_s=3900.0, calls_per_s=calls, texts={}).shapes
        assert shape.texts == tuple(TEXT) and shape.last == (f"q{key_of_fifth}",), key_of_fifth


def _planning(pid: int, xact: int, held: int, text: str) -> HeldLocksRow:
    """Backend ``pid`` in an autocommit transaction ``xact`` planning a statement on a table with 101 indexes
    (relations 1000..1101, acquired in that order: the first 16 in fast-path slots), ``held`` of them locked."""
    rels = list(range(1000, 1000 + held))
    spilled = rels[16:]
    return HeldLocksRow(pid, None, text, len(spilled), len(rels) - len(spilled), "active",
                        T0 + datetime.timedelta(seconds=xact), True, rels, spilled or None)


def test_a_statement_planned_at_every_call_counts_the_most_locks_seen() -> None:
    """The demo load under contention (issue 40): pgbench -S sends literals, so every call plans its 102 locks (86
    in the main lock table). The snapshots catch most backends part-way through planning, nine of them queued at the
    same point (a snapshot holds every lock-partition LWLock while it reads): the most seen, 100 relations, is the
    estimate (84 main-table locks), and its 95 % interval reaches past the whole (86) since 14 were seen."""
    text = "select abalance from pgbench_accounts where aid = {}"
    counts = [26] * 9 + [32, 32, 35, 58, 100]
    snapshots = [[_planning(pid, pid, held, text.format(pid)) for pid, held in enumerate(counts)]]
    load = transaction_load(snapshots, transactions_per_s=10000.0, calls_per_s={}, texts={})
    (shape,) = load.shapes
    assert shape.single_statement and shape.whole_basis == "most held"
    assert (shape.held_locks_per_txn, shape.held_main_per_txn) == (100.0, 84.0)
    assert shape.held_main_low == 84.0 and 86.0 < shape.held_main_high < 110.0
    low, high = load.held_main_per_s_interval
    assert low <= 86 * 10000.0 <= high
    # the same statement through the extended protocol ($1: a cached plan may be reused): the common count
    reused = [[_planning(pid, pid, held, "select abalance from pgbench_accounts where aid = $1")
               for pid, held in enumerate(counts)]]
    (shape,) = transaction_load(reused, transactions_per_s=10000.0, calls_per_s={}, texts={}).shapes
    assert shape.whole_basis == "complete" and shape.held_main_per_txn < 84.0
