"""An audit finding and the severity scale (docs/audit.md, "Severity and --fail-on"), shared by every module of
:mod:`lockscope.audit` that turns an analysis into findings."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["HIGH_MAIN_PER_S", "SEVERITIES", "Finding"]

SEVERITIES = ("high", "medium", "low", "info")
#: main-lock-table acquisitions per second from which a statement (or a transaction) is a high risk.
HIGH_MAIN_PER_S = 1000.0


@dataclass(frozen=True)
class Finding:
    """One risk with its evidence and fix.

    :ivar severity: one of :data:`SEVERITIES`.
    :ivar kind: e.g. ``table-spill``, ``statement-spill``, ``non-pruning``, ``generic-over-custom``,
        ``shared-lock-table``, ``index-invalid``, ``index-duplicate``, ``index-redundant``, ``index-unused``,
        ``drop-set``, ``max-locks-per-transaction``, ``plan-cache-mode``, ``partition-granularity``,
        ``table-near-limit``, ``table-unpruned-spill``, ``pg-stat-lock``; transactions
        (:mod:`lockscope.audit.transactions`): ``transaction-spill``, ``execution-locks``, ``fk-generic-plan``,
        ``transaction-held``.
    :ivar subject: the table, index, statement (``queryid``) or setting concerned.
    :ivar title: one line.
    :ivar evidence: the numbers.
    :ivar fix: the smallest change that helps.
    :ivar sql: statements for the ``--sql`` script (lockscope never runs them).
    :ivar score: ranking within a severity (higher first): main-lock-table acquisitions/s, spilled locks, ...
    """

    severity: str
    kind: str
    subject: str
    title: str
    evidence: str
    fix: str
    sql: tuple[str, ...] = ()
    score: float = 0.0
