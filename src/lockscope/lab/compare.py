"""``lockscope lab compare DIR DIR...``: read several results directories of one scenario for overlaid charts."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..errors import BadInputError
from .results import LabResult, load_results

__all__ = ["load_for_compare"]


def load_for_compare(dirs: Sequence[Path]) -> list[LabResult]:
    """The runs in ``dirs``, checked to be of one scenario and to hold at least one row each.

    :raises BadInputError: fewer than 2 directories, unreadable results, mixed scenarios, empty runs.
    """
    if len(dirs) < 2:
        raise BadInputError("lab compare needs at least two results directories")
    results = [load_results(Path(d)) for d in dirs]
    scenarios = sorted({r.scenario for r in results})
    if len(scenarios) > 1:
        raise BadInputError(f"cannot compare different scenarios: {', '.join(scenarios)}")
    for r in results:
        if not r.rows:
            raise BadInputError(f"{r.out_dir}: the run has no measured rows")
    return results
