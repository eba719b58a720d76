"""``lockscope audit``: rank a database's tables and statements by lock-manager risk, and say what to change.

- :mod:`.catalog`: set-based catalog reads; :mod:`.tables`: per-table planner-lock footprints;
  :mod:`.indexes`: invalid / duplicate / redundant / unused indexes and the smallest droppable set;
  :mod:`.params` and :mod:`.workload`: pg_stat_statements and per-statement footprints;
  :mod:`.advice`: max_locks_per_transaction, shared lock table, partition granularity;
  :mod:`.engine`: :func:`run_audit` -> :class:`AuditReport`; :mod:`.demo`: the embedded demo database.
"""

from .engine import SEVERITIES, AuditOptions, AuditReport, Finding, run_audit

__all__ = ["SEVERITIES", "AuditOptions", "AuditReport", "Finding", "run_audit"]
