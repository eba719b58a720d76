"""How the suite runs on two pytest-xdist workers (``scripts/test.sh``: ``-n 2``) without two loads at once.

The heavy tests (``tests/conftest.py``: marked ``slow`` or taking ``load_lock``) are one work unit, run by one worker
one after another in collection order, first in the run; every other test is a unit of its own, given to whichever
worker is free (the other worker at first, the loads' worker too once the loads are done). A worker collects the
tests, so the controller learns which are heavy from a file each worker writes after its collection (xdist's own
``--dist loadgroup`` would do this with ``xdist_group`` marks, but it renames node ids, which pytest 9.2 ignores:
pytest-xdist issue 1386).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from xdist.scheduler import LoadScopeScheduling

__all__ = ["LOADS_UNIT", "WORKER_INPUT_KEY", "LoadsApartScheduling", "write_heavy"]

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
