"""PostgreSQL versions lockscope tells apart, as ``server_version_num`` values (``SHOW server_version_num``).

One place for every version threshold: a module that branches on the server's version compares
``server_version_num`` with these names, never with a literal. Versioned SQL files
(``sql/NAME-NNNNNN.sql``) carry the same numbers in their names.
"""

from __future__ import annotations

from .errors import BadInputError

__all__ = [
    "DEFAULT_MAX_LOCKS_PER_TRANSACTION",
    "DEFAULT_MAX_LOCKS_PER_TRANSACTION_PG19",
    "MAX_MODELLED",
    "MIN_SUPPORTED",
    "PG13",
    "PG14",
    "PG15",
    "PG16",
    "PG17",
    "PG18",
    "PG19",
    "SUPPORTED_MAJORS",
    "check_assumed_major",
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
#: The newest major whose fast-path and lock-table rules lockscope models (``--assume-version`` stops there).
MAX_MODELLED = PG19


def major_of(server_version_num: int) -> int:
    """The major version of a ``server_version_num`` (e.g. 180006 -> 18; PG 10+ numbering)."""
    return server_version_num // 10000


#: The majors lockscope models, oldest first (13..19): the values ``--assume-version`` accepts.
SUPPORTED_MAJORS = range(MIN_SUPPORTED // 10000, MAX_MODELLED // 10000 + 1)


def check_assumed_major(major: int, option: str = "--assume-version") -> int:
    """``major`` when lockscope models it (:data:`SUPPORTED_MAJORS`), for an option such as ``--assume-version``.

    :return: ``major`` unchanged.
    :raises BadInputError: a major outside :data:`SUPPORTED_MAJORS`, naming the range.
    """
    if major not in SUPPORTED_MAJORS:
        raise BadInputError(f"{option} {major}: lockscope models PostgreSQL {SUPPORTED_MAJORS[0]} to "
                            f"{SUPPORTED_MAJORS[-1]}; give a major version in that range")
    return major


#: PostgreSQL's default ``max_locks_per_transaction`` up to 18 (``guc_tables.c``): the setting the published
#: experiments (and the lab's single-mlpt scenarios) use.
DEFAULT_MAX_LOCKS_PER_TRANSACTION = 64
#: PostgreSQL 19's default ``max_locks_per_transaction`` (commit 79534f9065, ``guc_parameters.dat``): 8 fast-path
#: groups of 16 slots.
DEFAULT_MAX_LOCKS_PER_TRANSACTION_PG19 = 128


def default_max_locks_per_transaction(server_version_num: int) -> int:
    """PostgreSQL's own default ``max_locks_per_transaction``: :data:`DEFAULT_MAX_LOCKS_PER_TRANSACTION` (64) up to
    18, :data:`DEFAULT_MAX_LOCKS_PER_TRANSACTION_PG19` (128) from 19, i.e. 8 fast-path groups of 16 slots by
    default on 19."""
    return DEFAULT_MAX_LOCKS_PER_TRANSACTION_PG19 if server_version_num >= PG19 else DEFAULT_MAX_LOCKS_PER_TRANSACTION
