"""``lockscope demo``: the seed experiments, reproduced with the footprint engine on a scratch server.

Scenarios (PostgresAI #PostgresMarathon 2-004, 2-008..2-011; pg-lock-internals.md section 3):

1. ``events``: 12 monthly range partitions x 3 indexes, prepared
   ``select event_id, event_data from events where event_time = $1`` in the three plan_cache_modes on empty
   tables (auto: 8,8,8,8,8,52,13,...), then again in auto mode with rows loaded (the generic plan is built at
   execution 6 and rejected: 8 locks from execution 7).
2. ``t``: unpartitioned table with 5 indexes, prepared ``select from t`` with an int parameter: 6 locks for
   executions 1-6, 1 lock from execution 7.
3. ``p40``: 40 partitions x 1 index: ``k = 150`` prunes at plan time (4 locks on PG 16+); ``k = (select 150)``
   does not (82 locks).
4. ``pgbench_accounts`` with 0..N extra indexes at max_locks_per_transaction 16 and 64: the first extra-index
   count at which a primary-key SELECT spills to the main lock table.

Nothing here prints: progress goes to a callback, results come back as frozen dataclasses.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .db import connect, load_script, run_script
from .footprint import Footprint, measure_all_modes, measure_footprint
from .pgbench import pgbench_init
from .server import ScratchServer, ScratchSettings
from .versions import DEFAULT_MAX_LOCKS_PER_TRANSACTION

__all__ = [
    "EVENTS_PARAM",
    "EVENTS_SQL",
    "EVENTS_STATEMENT",
    "EXTRA_INDEX_PREFIX",
    "P40_SQL",
    "PK_SELECT",
    "T5_SQL",
    "CliffPoint",
    "DemoResult",
    "extra_index_sweep",
    "load_events_rows",
    "run_demo",
    "set_extra_indexes",
]

#: The seed scenarios' DDL (``sql/scenario_*.sql``), run on scratch servers only.
EVENTS_SQL = load_script("scenario_events")
T5_SQL = load_script("scenario_t5")
P40_SQL = load_script("scenario_p40")
EVENTS_STATEMENT = "select event_id, event_data from events where event_time = $1"
EVENTS_PARAM = "2024-06-06 00:00:00+00"
#: Name prefix of the extra indexes on pgbench_accounts (``pgbench_accounts_extra_1`` ...).
EXTRA_INDEX_PREFIX = "pgbench_accounts_extra"
PK_SELECT = "select abalance from pgbench_accounts where aid = $1"


@dataclass(frozen=True)
class CliffPoint:
    """One point of the extra-index sweep (simple protocol, primary-key SELECT on pgbench_accounts).

    :ivar max_locks_per_transaction: the setting (count).
    :ivar extra_indexes: indexes beyond the primary key (count).
    :ivar footprint: the measured footprint.
    """

    max_locks_per_transaction: int
    extra_indexes: int
    footprint: Footprint

    @property
    def locks(self) -> int:
        return self.footprint.executions[0].lock_count

    @property
    def main_table(self) -> int:
        return self.footprint.executions[0].main_table_count

    @property
    def predicted_main_table(self) -> int:
        return self.footprint.executions[0].predicted_main_table_count


@dataclass(frozen=True)
class DemoResult:
    """Everything ``lockscope demo`` measured.

    :ivar server_version: e.g. ``18.6``.
    :ivar events_empty: the events statement in auto, force_custom_plan, force_generic_plan (empty tables).
    :ivar events_with_data: auto mode after loading ``rows_per_partition`` rows per partition, or None.
    :ivar rows_per_partition: rows loaded per partition (count; 0 = not run).
    :ivar unpartitioned: ``select from t`` prepared (5 indexes).
    :ivar pruned: ``k = 150`` on p40 (plan-time pruning).
    :ivar unpruned: ``k = (select 150)`` on p40 (no plan-time pruning).
    :ivar cliff: the extra-index sweep points, mlpt 16 then 64.
    """

    server_version: str
    server_version_num: int
    events_empty: tuple[Footprint, ...]
    events_with_data: Footprint | None
    rows_per_partition: int
    unpartitioned: Footprint
    pruned: Footprint
    unpruned: Footprint
    cliff: tuple[CliffPoint, ...]

    def first_spill(self, mlpt: int) -> int | None:
        """Fewest extra indexes at which the primary-key SELECT spilled at this setting, or None."""
        for point in self.cliff:
            if point.max_locks_per_transaction == mlpt and point.main_table:
                return point.extra_indexes
        return None

    @property
    def footprints(self) -> tuple[Footprint, ...]:
        """Every footprint measured (for mismatch counting and JSON)."""
        rest = (self.unpartitioned, self.pruned, self.unpruned, *(p.footprint for p in self.cliff))
        return (*self.events_empty, *((self.events_with_data,) if self.events_with_data else ()), *rest)

    @property
    def mismatch_count(self) -> int:
        """Locks whose measured fast-path flag differs from the model, over all scenarios (count)."""
        return sum(fp.mismatch_count for fp in self.footprints)


def load_events_rows(conninfo: str, rows_per_partition: int) -> None:
    """Load ``rows_per_partition`` rows into each events partition (one second apart) and VACUUM ANALYZE
    (``sql/scenario_events_rows.sql``)."""
    run_script(conninfo, load_script("scenario_events_rows", rows_per_partition=int(rows_per_partition)))


def set_extra_indexes(conninfo: str, count: int, *, prefix: str = EXTRA_INDEX_PREFIX) -> None:
    """Make pgbench_accounts have exactly ``count`` extra indexes on ``bid`` named ``PREFIX_1`` .. ``PREFIX_count``
    besides its primary key: those above ``count`` are dropped, missing ones created, one transaction each
    (``sql/scenario_extra_indexes.sql``).

    :param prefix: index name prefix (lower-case word).
    :raises StatementError: if pgbench_accounts does not exist.
    """
    run_script(conninfo, load_script("scenario_extra_indexes", count=int(count), prefix=prefix))


def extra_index_sweep(server: ScratchServer, mlpts: tuple[int, ...], max_extra: int,
                      progress: Callable[[str], None] = lambda _: None) -> tuple[CliffPoint, ...]:
    """Footprint of :data:`PK_SELECT` with 0..max_extra extra indexes on pgbench_accounts, per setting.

    Restarts the server for each max_locks_per_transaction; indexes are dropped and re-created per setting.
    Needs pgbench_accounts (:func:`pgbench_init`).
    """
    points: list[CliffPoint] = []
    for mlpt in mlpts:
        progress(f"extra-index sweep at max_locks_per_transaction={mlpt}")
        server.reconfigure(max_locks_per_transaction=mlpt)
        set_extra_indexes(server.conninfo(), 0)
        with connect(server.conninfo()) as session:
            for k in range(max_extra + 1):
                if k:
                    set_extra_indexes(server.conninfo(), k)
                fp = measure_footprint(session, PK_SELECT, params=["1"])
                points.append(CliffPoint(mlpt, k, fp))
    return tuple(points)


def run_demo(
    pg_bin: Path | str | None = None,
    *,
    rows_per_partition: int = 1_000_000,
    max_extra_indexes: int = 30,
    progress: Callable[[str], None] = lambda _: None,
) -> DemoResult:
    """Start a scratch server, run the four scenarios, stop the server.

    :param pg_bin: bin dir of PG 13+ (default embedded PG 18).
    :param rows_per_partition: rows per events partition for the with-data run (count; 0 skips it).
    :param max_extra_indexes: extra indexes in the sweep (count).
    :param progress: called with a short description before each step.
    :raises ScratchServerError, DatabaseError: when the server or a set-up step fails.
    """
    with ScratchServer(pg_bin, ScratchSettings(max_locks_per_transaction=DEFAULT_MAX_LOCKS_PER_TRANSACTION)) as server:
        conninfo = server.conninfo()
        progress("creating events (12 partitions x 3 indexes), t (5 indexes), p40 (40 partitions)")
        run_script(conninfo, EVENTS_SQL + T5_SQL + P40_SQL)
        with connect(conninfo) as session:
            progress("probing the prepared statement on events in three plan_cache_modes")
            events_empty = measure_all_modes(session, EVENTS_STATEMENT, params=[EVENTS_PARAM], executions=8)
            unpartitioned = measure_footprint(session, "select from t", protocol="prepared",
                                              param_types=["int"], params=["1"], executions=8)
            pruned = measure_footprint(session, "select * from p40 where k = 150")
            unpruned = measure_footprint(session, "select * from p40 where k = (select 150)")
            version, version_num = session.facts.server_version, session.facts.server_version_num
        events_with_data = None
        if rows_per_partition:
            progress(f"loading {rows_per_partition:,} rows into each of 12 partitions")
            load_events_rows(conninfo, rows_per_partition)
            with connect(conninfo) as session:
                events_with_data = measure_footprint(session, EVENTS_STATEMENT, params=[EVENTS_PARAM],
                                                     protocol="prepared", executions=8)
            run_script(conninfo, "truncate events")
        progress("pgbench -i")
        pgbench_init(server)
        cliff = extra_index_sweep(server, (16, 64), max_extra_indexes, progress)
    return DemoResult(
        server_version=version,
        server_version_num=version_num,
        events_empty=events_empty,
        events_with_data=events_with_data,
        rows_per_partition=rows_per_partition,
        unpartitioned=unpartitioned,
        pruned=pruned,
        unpruned=unpruned,
        cliff=cliff,
    )

