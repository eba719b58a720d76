"""``lockscope audit``: rank a database's tables and statements by lock-manager risk, and say what to change.

- :mod:`.tables`: per-table planner-lock footprints (the catalog: :mod:`lockscope.catalog`);
  :mod:`.indexes`: invalid / duplicate / redundant / unused indexes and the smallest droppable set;
  :mod:`.partitions`: the audited workload's load on the 16 lock partitions (pg_stat_statements and
  per-statement footprints: :mod:`lockscope.workload`);
  :mod:`.advice`: max_locks_per_transaction, shared lock table, partition granularity;
  :mod:`.engine`: :func:`run_audit` -> :class:`AuditReport`; :mod:`.demo`: the embedded demo database.
"""

from .engine import SEVERITIES, AuditOptions, AuditReport, Finding, run_audit

__all__ = ["SEVERITIES", "AuditOptions", "AuditReport", "Finding", "run_audit"]
