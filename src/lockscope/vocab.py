"""The field's vocabulary as enums: lock modes, the roles of locked relations, plan-cache phases and modes.

Each is a :class:`enum.StrEnum` whose values are the strings PostgreSQL and lockscope's output use (pg_locks'
``mode``, ``plan_cache_mode``'s settings, the ``role`` and ``phase`` of lockscope's JSON and tables), so text and
JSON output are unchanged. A value is converted once, where it enters: a row of a SQL file
(:func:`lockscope.rows.row_maker` converts a column whose field is one of these enums), a command-line option, or the
model that derives it (:func:`lockscope.footprint.relation_role`, the plan-cache rules of :mod:`lockscope.footprint`).
Nothing here runs SQL or imports another lockscope module.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["FootprintSource", "LockMode", "LockRole", "LockSource", "PlanCacheMode", "PlanPhase"]


class LockMode(StrEnum):
    """A relation lock mode as pg_locks spells it, weakest first (``lockdefs.h``: ``AccessShareLock`` = 1 ..
    ``AccessExclusiveLock`` = 8)."""

    ACCESS_SHARE = "AccessShareLock"
    ROW_SHARE = "RowShareLock"
    ROW_EXCLUSIVE = "RowExclusiveLock"
    SHARE_UPDATE_EXCLUSIVE = "ShareUpdateExclusiveLock"
    SHARE = "ShareLock"
    SHARE_ROW_EXCLUSIVE = "ShareRowExclusiveLock"
    EXCLUSIVE = "ExclusiveLock"
    ACCESS_EXCLUSIVE = "AccessExclusiveLock"

    @property
    def rank(self) -> int:
        """Strength, 0 (``AccessShareLock``) .. 7 (``AccessExclusiveLock``): ``lockdefs.h``'s number minus one."""
        return _MODE_RANK[self]

    @property
    def weak(self) -> bool:
        """Below ``ShareUpdateExclusiveLock``: the only modes eligible for the fast path (lock.c
        ``EligibleForRelationFastPath``)."""
        return self.rank < _MODE_RANK[LockMode.SHARE_UPDATE_EXCLUSIVE]


_MODE_RANK = {mode: n for n, mode in enumerate(LockMode)}


class LockRole(StrEnum):
    """What a locked relation is to lockscope's output, from pg_class (:func:`lockscope.footprint.relation_role`)."""

    TABLE = "table"
    PARTITIONED_TABLE = "partitioned table"
    PARTITION = "partition"
    INDEX = "index"
    PARTITIONED_INDEX = "partitioned index"
    PARTITION_INDEX = "partition index"
    TOAST = "TOAST"
    SEQUENCE = "sequence"
    VIEW = "view"
    OTHER = "other"

    @property
    def is_index(self) -> bool:
        """An index of any kind: its locks are planner locks (``plancat.c get_relation_info`` opens every index of
        a planned relation), which reusing a cached plan does not take (``plancache.c AcquireExecutorLocks``)."""
        return self in (LockRole.INDEX, LockRole.PARTITIONED_INDEX, LockRole.PARTITION_INDEX)


class PlanPhase(StrEnum):
    """The plan-cache phase of one probed execution (``plancache.c GetCachedPlan`` / ``choose_custom_plan``)."""

    #: the simple protocol (or EXPLAIN): parsed, rewritten and planned every time.
    SIMPLE = "simple"
    #: a prepared statement planned with its parameter values.
    CUSTOM = "custom"
    #: a prepared statement's generic plan being built (``BuildCachedPlan``).
    GENERIC_BUILD = "generic-build"
    #: a cached generic plan reused: no planning (``CheckCachedPlan``).
    GENERIC_REUSE = "generic-reuse"

    @property
    def plans(self) -> bool:
        """False when the execution reuses a cached generic plan (no planning, no planner locks)."""
        return self is not PlanPhase.GENERIC_REUSE


class PlanCacheMode(StrEnum):
    """The ``plan_cache_mode`` setting (PG 12+, ``plancache.c choose_custom_plan``)."""

    AUTO = "auto"
    FORCE_CUSTOM_PLAN = "force_custom_plan"
    FORCE_GENERIC_PLAN = "force_generic_plan"


class LockSource(StrEnum):
    """What in a statement's execution takes a relation lock (docs/footprint-model.md, "execution locks").

    ``statement`` locks are the ones EXPLAIN takes (parse analysis, rewriting, planning: what ``lockscope footprint``
    measures); the others are taken only when the statement runs, and lockscope models them from the catalog on a
    user's server, or measures them by running the statement on its own scratch server.
    """

    #: parse analysis, the rewriter, the planner: what EXPLAIN takes.
    STATEMENT = "statement"
    #: a reused generic plan's index scans at executor start (``nodeIndexscan.c ExecInitIndexScan``).
    EXECUTOR_INDEX = "executor index"
    #: ``nextval`` of a column default, an identity column or an explicit call (``sequence.c nextval_internal``).
    SEQUENCE = "sequence"
    #: the partition a row is routed to (``execPartition.c ExecFindPartition``).
    ROUTING = "tuple routing"
    #: the ancestors a partition constraint is read from (``partcache.c generate_partition_qual``).
    PARTITION_CONSTRAINT = "partition constraint"
    #: the target's indexes while rows are written (``execIndexing.c ExecOpenIndices``), released at statement end.
    TARGET_INDEX = "target index"
    #: an out-of-line value written (``toast_internals.c toast_save_datum``).
    TOAST = "TOAST"
    #: a foreign-key check on the referencing side (``ri_triggers.c RI_FKey_check``).
    FK_CHECK = "foreign-key check"
    #: a foreign-key action on the referenced side (``ri_triggers.c`` ``RI_FKey_cascade_del`` & co.).
    FK_ACTION = "foreign-key action"
    #: a statement a user trigger's function runs (``pl_exec.c exec_prepare_plan``).
    TRIGGER = "trigger"
    #: taken for real and explained by no rule (executed runs only).
    UNMODELLED = "unmodelled"


class FootprintSource(StrEnum):
    """Where a footprint's locks come from (:mod:`lockscope.privileges`)."""

    #: EXPLAIN in the session's own role, its locks read from pg_locks.
    MEASURED = "measured"
    #: EXPLAIN through the EXPLAIN helper (``contrib/explain_helper.sql``), its locks read from pg_locks.
    HELPER = "helper"
    #: derived from the catalog: EXPLAIN was denied and no helper could be used; nothing measured.
    DERIVED = "derived"
