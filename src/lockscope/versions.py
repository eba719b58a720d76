"""PostgreSQL versions lockscope tells apart, as ``server_version_num`` values (``SHOW server_version_num``).

One place for every version threshold: a module that branches on the server's version compares
``server_version_num`` with these names, never with a literal. Versioned SQL files
(``sql/NAME-NNNNNN.sql``) carry the same numbers in their names.
"""

from __future__ import annotations

__all__ = [
    "MIN_SUPPORTED",
    "PG13",
    "PG14",
    "PG15",
    "PG16",
    "PG17",
    "PG18",
    "PG19",
    "default_max_locks_per_transaction",
    "major_of",
]

#: PostgreSQL 13.0: the oldest major lockscope models (16 fast-path slots per backend, ``proc.h``).
PG13 = 130000
#: PostgreSQL 14.0: ``pg_stat_activity.query_id`` and ``compute_query_id``.
PG14 = 140000
#: PostgreSQL 15.0.
PG15 = 150000
#: PostgreSQL 16.0: the planner locks a partitioned table's own (partitioned) indexes (commit 3c569049b7);
#: ``EXPLAIN (GENERIC_PLAN)``.
PG16 = 160000
#: PostgreSQL 17.0.
PG17 = 170000
#: PostgreSQL 18.0: fast-path groups sized by max_locks_per_transaction (commit c4d5cb71d2,
#: ``lock.c FAST_PATH_REL_GROUP``).
PG18 = 180000
#: PostgreSQL 19 (development): ``pg_stat_lock`` with ``fastpath_exceeded``; lock table shared-memory sizing.
PG19 = 190000
#: The oldest server lockscope connects to (older ones raise ``UnsupportedServerError``).
MIN_SUPPORTED = PG13


def major_of(server_version_num: int) -> int:
    """The major version of a ``server_version_num`` (e.g. 180006 -> 18; PG 10+ numbering)."""
    return server_version_num // 10000


def default_max_locks_per_transaction(server_version_num: int) -> int:
    """PostgreSQL's own default ``max_locks_per_transaction``: 64 up to 18, 128 from 19 (commit 79534f9065,
    ``guc_parameters.dat``), i.e. 8 fast-path groups of 16 slots by default on 19."""
    return 128 if server_version_num >= PG19 else 64
