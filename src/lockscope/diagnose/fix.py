"""One fix of ``lockscope diagnose`` and the order of their kinds (shared by the statement and the transaction
fixes: :mod:`lockscope.diagnose.engine`, :mod:`lockscope.diagnose.transactions`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..capacity import CapacityModel

__all__ = ["FIX_ORDER", "Fix", "short_list"]

#: Fix kinds in the order of their cost when two remove as much (online first, restart and redesign last).
FIX_ORDER = ("drop-indexes", "plan-cache-mode", "max-locks-per-transaction", "fewer-statements", "partitioning")


def short_list(names: Sequence[str], limit: int = 3) -> str:
    """``a, b, c and 2 more``: the first ``limit`` names and how many are left out."""
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


@dataclass(frozen=True)
class Fix:
    """One change, from the audit's advice or from the transactions the server was seen holding, with its
    expected effect.

    :ivar kind: one of :data:`FIX_ORDER`: ``drop-indexes``, ``plan-cache-mode``, ``max-locks-per-transaction``,
        ``fewer-statements``, ``partitioning``.
    :ivar title: one line.
    :ivar action: the imperative for the verdict line, e.g. ``drop these 2 redundant indexes``.
    :ivar detail: the evidence.
    :ivar sql: statements to review and run (lockscope never runs them).
    :ivar restart: True when the server must restart.
    :ivar main_per_s_before: main-lock-table acquisitions/s now, on the fix's basis: the audited statements'
        footprints (the model) for a statement fix, the server's figure for a transaction fix (``transaction``).
    :ivar main_per_s_after: predicted after the change, None when not predictable (re-partitioning).
    :ivar culprit_spills_after: spilled locks per call of each waiting statement after it (count), in culprit order.
    :ivar drop_index_oids: the indexes a ``drop-indexes`` fix drops.
    :ivar capacity_after: the fast-path capacity after a ``max-locks-per-transaction`` fix.
    :ivar transaction: for a fix derived from a transaction the server held, the index of that transaction in
        :attr:`lockscope.diagnose.engine.Diagnosis.transactions`; None for the audit's statement fixes.
    :ivar subject: what a ``plan-cache-mode`` fix sets it for (``role NAME``, ``database NAME``), else "".
    """

    kind: str
    title: str
    action: str
    detail: str
    sql: tuple[str, ...]
    restart: bool
    main_per_s_before: float
    main_per_s_after: float | None
    culprit_spills_after: tuple[int, ...] = ()
    drop_index_oids: tuple[int, ...] = ()
    capacity_after: CapacityModel | None = None
    transaction: int | None = None
    subject: str = ""

    @property
    def removed_per_s(self) -> float:
        """Main-lock-table acquisitions/s the fix removes on its own basis (0 when not predicted)."""
        if self.main_per_s_after is None:
            return 0.0
        return max(0.0, self.main_per_s_before - self.main_per_s_after)
