"""How the suite runs on two pytest-xdist workers (``scripts/test.sh``: ``-n 2``) without two loads at once.

The heavy tests (``tests/conftest.py``: marked ``slow`` or taking ``load_lock``) are one work unit, run by one worker
one after another in collection order, first in the run; every other test is a unit of its own, given to whichever
worker is free (the other worker at first, the loads' worker too once the loads are done). A test marked ``alone``
(its assertion measures what the machine gives one load: throughput against the cores, sampling rates) runs with no
other test of the run: the other worker finishes its test and waits (:func:`turn`). A worker collects the
tests, so the controller learns which are heavy from a file each worker writes after its collection (xdist's own
``--dist loadgroup`` would do this with ``xdist_group`` marks, but it renames node ids, which pytest 9.2 ignores:
pytest-xdist issue 1386).
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from xdist.scheduler import LoadScopeScheduling

__all__ = ["LOADS_UNIT", "WORKER_INPUT_KEY", "LoadsApartScheduling", "turn", "write_heavy"]

#: The work unit of the heavy tests.
LOADS_UNIT = "loads"
#: ``workerinput`` key: the directory where each worker writes its heavy tests' node ids.
WORKER_INPUT_KEY = "lockscope_heavy_dir"


def write_heavy(directory: Path, worker_id: str, nodeids: list[str]) -> None:
    """Write ``nodeids`` (one a line) to ``directory/heavy-WORKER_ID.txt``, whole or not at all (renamed into
    place)."""
    part = directory / f".heavy-{worker_id}.part"
    part.write_text("".join(f"{n}\n" for n in nodeids), encoding="utf-8")
    os.replace(part, directory / f"heavy-{worker_id}.txt")


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
    """``--dist load`` with the heavy tests as one unit (the module doc). Every worker collects the same tests and
    writes the same list; the first list found is read when the run is scheduled (all collections are in by then).

    :param directory: where the workers write their lists (:func:`write_heavy`).
    """

    def __init__(self, config: pytest.Config, log: object, directory: Path) -> None:
        super().__init__(config, log)  # type: ignore[arg-type]
        self._directory = directory
        self._heavy: frozenset[str] | None = None

    def _split_scope(self, nodeid: str) -> str:
        if self._heavy is None:
            lists = sorted(self._directory.glob("heavy-*.txt"))
            if not lists:
                raise RuntimeError(f"no worker wrote its heavy tests to {self._directory}")
            self._heavy = frozenset(lists[0].read_text(encoding="utf-8").splitlines())
        return LOADS_UNIT if nodeid in self._heavy else nodeid
