"""lab/load.py's per-statement figures of a mix (pure: samples and pg_stat_statements rows made here)."""

from __future__ import annotations

from lockscope.lab.load import LoadFigures, StatementFigures, _aas_by_class, _by_statement
from lockscope.watch.sampler import ActiveSession, Sample, summarize


def _session(pid: int, query_id: int | None, wait: tuple[str, str] | None = None,
             backend_type: str = "client backend") -> ActiveSession:
    wait_type, event = wait or (None, None)
    return ActiveSession(pid, backend_type, "active", wait_type, event, query_id, None, None, None, None, None)


SAMPLES = [
    Sample(0.0, 0.0, (_session(1, 10), _session(2, 10, ("LWLock", "LockManager")), _session(3, 20),
                      _session(9, None, backend_type="autovacuum worker"))),
    Sample(0.1, 0.1, (_session(1, 20),)),
]


def _statement(query: str, queryid: int | None) -> StatementFigures:
    return StatementFigures(query, 5, 5, 0.1, 0.2, 0.5, 1.0, queryid=queryid)


def test_waits_and_backends_by_query_id() -> None:
    a, b, c = _by_statement((_statement("a", 10), _statement("b", 20), _statement("c", None)), SAMPLES)
    assert a.waits == {"CPU": 1, "LWLock:LockManager": 1} and a.client_backends == 2
    assert b.waits == {"CPU": 2} and b.client_backends == 2
    assert c.waits == {} and c.client_backends == 0  # no query id: nothing to match


def test_aas_by_class_sums_to_aas() -> None:
    summary = summarize(SAMPLES)  # client backends only: the autovacuum worker is left out
    by_class = _aas_by_class(summary)
    assert by_class == {"CPU": 1.5, "LWLock": 0.5}
    assert sum(by_class.values()) == summary.aas


def test_row_keeps_the_lab_columns() -> None:
    figures = LoadFigures(1.0, 1.0, 1, 0, 0.1, 0.1, 1, 1, 1, 1.0, 0.0, 1.0, "", 0.0, client_backends=3,
                          aas_by_class={"CPU": 1.0})
    assert "client_backends" not in figures.row() and "aas_by_class" not in figures.row()
