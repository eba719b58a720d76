"""How the suite runs on pytest-xdist workers (``scripts/test.sh``: one more than the cores) without two loads at once.

The heavy tests (``tests/conftest.py``: taking ``load_lock`` or marked ``alone``) are one work unit, run by one worker
one after another in collection order. Every other test is in the unit of the module-, class- or session-scoped
fixture parameters it shares with its neighbours (:func:`unit_of`: all of ``test_txn_truth.py`` on PG 17 is one unit,
so that its module fixture, every transaction run 8 times on a new server, is built on one worker, once), or a unit
of its own. Units go to whichever worker is free, the largest (most tests) first: one worker per remaining core
while the loads run, every worker (the loads' one and those in reserve) once they are done
(:meth:`LoadsApartScheduling._in_reserve`). A test marked ``alone`` (its assertion measures what the machine gives one
load: throughput against the cores, sampling rates) runs with no other test of the run: the other workers finish
their tests and wait (:func:`turn`). A worker collects the tests, so the controller learns each test's unit from a file
each worker writes after its collection (xdist's own ``--dist loadgroup`` would do this with ``xdist_group`` marks,
but it renames node ids, which pytest 9.2 ignores: pytest-xdist issue 1386).
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from xdist.scheduler import LoadScopeScheduling

__all__ = ["LOADS_UNIT", "WORKER_INPUT_KEY", "LoadsApartScheduling", "turn", "unit_of", "write_units"]

#: The work unit of the heavy tests.
LOADS_UNIT = "loads"
#: ``workerinput`` key: the directory where each worker writes its tests' units.
WORKER_INPUT_KEY = "lockscope_units_dir"
#: Fixture scopes that outlive one test: tests sharing such a fixture's parameter share its set-up.
_SHARED_SCOPES = frozenset({"class", "module", "package", "session"})


def unit_of(item: pytest.Item, *, heavy: bool) -> str:
    """The work unit of ``item``: :data:`LOADS_UNIT` when ``heavy``; else its module and the values of the
    parameters it takes through fixtures that outlive one test (``tests/test_txn_truth.py::truths=17``); else its
    node id. (Only the unit names one worker writes are read: they need not match another process's.)"""
    if heavy:
        return LOADS_UNIT
    callspec = getattr(item, "callspec", None)
    fixture_defs = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {})
    if callspec is None:
        return item.nodeid
    shared = sorted(f"{name}={value!r}" for name, value in callspec.params.items()
                    if name in fixture_defs and fixture_defs[name][-1].scope in _SHARED_SCOPES)
    if not shared:
        return item.nodeid
    return f"{item.nodeid.split('::', 1)[0]}::{','.join(shared)}"


def write_units(directory: Path, worker_id: str, units: dict[str, str]) -> None:
    """Write ``units`` ({node id: unit}, a tab-separated pair a line) to ``directory/units-WORKER_ID.txt``, whole
    or not at all (renamed into place)."""
    part = directory / f".units-{worker_id}.part"
    part.write_text("".join(f"{nodeid}\t{unit}\n" for nodeid, unit in units.items()), encoding="utf-8")
    os.replace(part, directory / f"units-{worker_id}.txt")


@contextmanager
def turn(directory: Path, *, alone: bool) -> Iterator[None]:
    """Hold the run's room (``directory/room.lock``) for one test: shared by the workers' tests, exclusive for an
    ``alone`` test. The gate (``directory/gate.lock``) is held while the room is being taken, so that an ``alone``
    test waiting for the room is not starved by the other worker's next tests: they wait at the gate. Each worker
    holds at most the gate and the room of its one test, and frees the room without the gate: no deadlock."""
    with open(directory / "gate.lock", "a") as gate, open(directory / "room.lock", "a") as room:
        fcntl.flock(gate, fcntl.LOCK_EX)
        try:
            fcntl.flock(room, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
        finally:
            fcntl.flock(gate, fcntl.LOCK_UN)
        try:
            yield
        finally:
            fcntl.flock(room, fcntl.LOCK_UN)


class LoadsApartScheduling(LoadScopeScheduling):
    """``--dist loadscope`` with the units of :func:`unit_of` (the module doc). Every worker collects the same
    tests and writes the same units; the first file found is read when the run is scheduled (all collections are
    in by then).

    :param directory: where the workers write their units (:func:`write_units`).
    """

    def __init__(self, config: pytest.Config, log: object, directory: Path) -> None:
        super().__init__(config, log)  # type: ignore[arg-type]
        self._directory = directory
        self._units: dict[str, str] | None = None

    def _split_scope(self, nodeid: str) -> str:
        if self._units is None:
            files = sorted(self._directory.glob("units-*.txt"))
            if not files:
                raise RuntimeError(f"no worker wrote its tests' units to {self._directory}")
            lines = files[0].read_text(encoding="utf-8").splitlines()
            self._units = dict(line.split("\t", 1) for line in lines)  # type: ignore[misc]
        return self._units.get(nodeid, nodeid)

    def _loads_running(self) -> bool:
        """Whether the loads unit is still waiting or running."""
        if LOADS_UNIT in self.workqueue:
            return True
        return any(not all(work[LOADS_UNIT].values()) for work in self.assigned_work.values() if LOADS_UNIT in work)

    def _in_reserve(self, node: Any) -> bool:
        """A worker beyond the machine's cores waits while the loads run: one load and one worker of quick tests
        on 2 cores is what the loads' assertions were measured with; the quick tests left after the loads (many
        of them waiting on servers and subprocesses, not on a core) then go to every worker."""
        return self._loads_running() and self.nodes.index(node) >= (os.cpu_count() or 1)

    def _assign_work_unit(self, node: Any) -> None:
        """The loads first (they are the run's longest unit), then the largest units first (xdist's reorder);
        nothing for a worker in reserve (:meth:`_in_reserve`)."""
        if self._in_reserve(node):
            return
        if LOADS_UNIT in self.workqueue:
            self.workqueue.move_to_end(LOADS_UNIT, last=False)
        super()._assign_work_unit(node)

    def mark_test_complete(self, node: Any, item_index: int, duration: float = 0) -> None:
        """xdist's, and once the loads are done, work for the workers in reserve."""
        running = self._loads_running()
        super().mark_test_complete(node, item_index, duration)
        if running and not self._loads_running():
            for other in (n for n in self.nodes if n is not node):
                # a worker runs a test once it holds the next one too (or is shutting down): two at least
                while self.workqueue and self._pending_of(self.assigned_work[other]) < 2:
                    self._assign_work_unit(other)
                if not self.workqueue:
                    self._reschedule(other)  # shut down: it runs what it holds, then ends
