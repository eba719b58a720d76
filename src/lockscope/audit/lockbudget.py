"""The database's own lock budget: what ``pg_dump``, DDL on each partitioned table and a full set of connections
need from the shared lock table, each set against it (:class:`lockscope.budget.LockTableBudget`).

Pure functions over the audit's rows (no I/O). A lock-table entry is a lock outside the fast path: every strong
lock, every lock of a non-relation type, and the weak relation locks that find their fast-path group full
(``lock.c LockAcquireExtended``, ``FastPathGrantRelationLock``); which weak locks fit is the capacity model's
(:func:`lockscope.capacity.simulate_fast_path`, PG 18+ groups by OID hash).

- **pg_dump** (``pg_dump.c getTables``): one transaction, ``LOCK TABLE ... IN ACCESS SHARE MODE`` on every table it
  dumps (``sql/audit_dump_locks.sql`` says which; batched into statements of 100 kB from pg_dump 16, commit
  5f53b42cfd, which changes no count), held to its end; plus the catalogs its own queries lock (AccessShareLock,
  held too), measured per major with the same major's ``pg_dump -s`` (:data:`PG_DUMP_CATALOG_OIDS`), plus
  :data:`TRANSIENT_ENTRIES`: a catalog heap and its index that a relcache or syscache build opens and releases at
  once (``relcache.c ScanPgRelation``, ``genam.c systable_beginscan``) take main-table entries while the fast-path
  group is full, so the last lock needs two more free (measured on PG 19: pg_dump -s holding NLOCKENTS - 2 entries
  at its end succeeds, one more table fails).
- **CREATE INDEX on a partitioned table** (measured on 13, 18 and 19, ``tests/test_audit_budget.py``): ShareLock on
  every relation of the tree, a new index per relation (AccessExclusiveLock; ShareLock on an existing index it
  attaches instead), a ShareUpdateExclusiveLock on each new partitioned index (one per partitioned table of the
  tree: the same object as its AccessExclusiveLock, so no entry of its own: the table keeps one entry per locked
  object, pg_locks a row per mode) and the transaction ID: ``2 x relations + 1`` entries.
  **ALTER TABLE ... ADD COLUMN** recursing to every partition: AccessExclusiveLock on each relation and the
  transaction ID: ``relations + 1``.
- **Connections**: the widest statement or transaction footprint (every lock of it, as a strong lock on its
  relations moves fast-path locks to the main table: ``lock.c FastPathTransferRelationLocks``) x max_connections.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from ..budget import LockTableBudget
from ..capacity import CapacityModel, LockRequest
from ..catalog import Catalog
from ..rows import DumpLockRow
from ..services import set_mlpt_sql
from ..versions import PG14, PG16, major_of
from ..vocab import LockMode
from .advice import SharedLockRisk
from .findings import Finding
from .transactions import TransactionAudit

__all__ = [
    "NEARS_BUDGET",
    "PG_DUMP_CATALOG_OIDS",
    "TRANSIENT_ENTRIES",
    "BudgetLine",
    "ConnectionsNeed",
    "DumpNeed",
    "LockBudgetAudit",
    "PartitionDdlNeed",
    "StatementNeed",
    "budget_lines",
    "dump_need",
    "lock_budget_audit",
    "lock_budget_findings",
    "partition_ddl_needs",
]

#: Entries the last lock of a transaction needs free beyond those held (count): a catalog heap and its index a
#: relcache or syscache build opens and releases at once, in the main lock table while the fast-path group is full.
TRANSIENT_ENTRIES = 2

#: pg_attrdef and its two indexes: pg_dump reads them when a dumped table has a column default.
_ATTRDEF_OIDS = (2604, 2656, 2657)
#: pg_enum and its three indexes: pg_dump reads them when the database has an enum type.
_ENUM_OIDS = (3501, 3502, 3503, 3534)

#: The catalog relations (and system views) `pg_dump -s` of PG 15, 16 and 17 locks with its own queries on a
#: database of tables (OIDs; measured: its statements replayed in one transaction, pg_locks read at the end).
_PG_DUMP_CATALOG_OIDS_15_17 = (
    112, 113, 548, 549, 826, 827, 828, 1213, 1247, 1249, 1255, 1259, 1260, 1262, 1417, 2187, 2228, 2328, 2579,
    2601, 2602, 2603, 2605, 2606, 2607, 2608, 2609, 2610, 2611, 2612, 2615, 2616, 2617, 2618, 2620, 2651, 2652,
    2653, 2654, 2655, 2658, 2659, 2660, 2661, 2662, 2663, 2664, 2665, 2666, 2667, 2668, 2669, 2670, 2671, 2672,
    2673, 2674, 2675, 2676, 2677, 2678, 2679, 2680, 2681, 2682, 2684, 2685, 2686, 2687, 2688, 2689, 2690, 2691,
    2692, 2693, 2697, 2698, 2699, 2701, 2702, 2703, 2704, 2753, 2754, 2755, 2756, 2757, 2964, 2965, 2995, 2996,
    3079, 3080, 3081, 3085, 3118, 3119, 3164, 3256, 3257, 3258, 3379, 3380, 3381, 3394, 3395, 3455, 3456, 3466,
    3467, 3468, 3541, 3542, 3574, 3575, 3576, 3592, 3593, 3596, 3597, 3600, 3601, 3602, 3604, 3605, 3606, 3607,
    3608, 3712, 3764, 3766, 3767, 3997, 6100, 6104, 6106, 6110, 6111, 6112, 6113, 6114, 6115, 6116, 6237, 6238,
    6239, 12000, 12099
)


def _catalogs(added: tuple[int, ...] = (), dropped: tuple[int, ...] = ()) -> tuple[int, ...]:
    """PG 15-17's catalog OIDs with a major's own differences, ascending (the order they are simulated in)."""
    return tuple(sorted(set(_PG_DUMP_CATALOG_OIDS_15_17) - set(dropped) | set(added)))


#: The catalog relations (and system views) `pg_dump -s` of the same major locks with its own queries, by major
#: (OIDs, measured as above): each major's differences from PG 15-17.
PG_DUMP_CATALOG_OIDS: dict[int, tuple[int, ...]] = {
    13: _catalogs(added=(2224, 5002, 12087, 12161), dropped=(2228, 3541, 3542, 6116, 6237, 6238, 6239, 12000, 12099)),
    14: _catalogs(added=(12217, 12316),
                  dropped=(2610, 2620, 2678, 2679, 2699, 2701, 2702, 6116, 6237, 6238, 6239, 12000, 12099)),
    15: _PG_DUMP_CATALOG_OIDS_15_17,
    16: _PG_DUMP_CATALOG_OIDS_15_17,
    17: _PG_DUMP_CATALOG_OIDS_15_17,
    18: _catalogs(added=(2224, 5002)),
    19: _catalogs(added=(2224, 5002, 12105), dropped=(12099,)),
}


@dataclass(frozen=True)
class DumpNeed:
    """What ``pg_dump`` of the database needs from the shared lock table.

    :ivar tables: relations its ``LOCK TABLE`` locks (count).
    :ivar catalogs: catalog relations its own queries lock (count, :data:`PG_DUMP_CATALOG_OIDS` + optional ones).
    :ivar fast_path: of all those, the ones the fast path holds (count, the capacity model).
    :ivar need_entries: lock-table entries it needs (count): tables + catalogs - fast_path + :data:`TRANSIENT_ENTRIES`.
    :ivar largest_schema: the schema with the most locked relations ("" when none).
    :ivar largest_schema_need: entries a dump of that schema alone (``-n``) needs (count).
    :ivar schemas: schemas with locked relations (count).
    """

    tables: int
    catalogs: int
    fast_path: int
    need_entries: int
    largest_schema: str
    largest_schema_need: int
    schemas: int


@dataclass(frozen=True)
class PartitionDdlNeed:
    """The entries DDL on one partitioned table needs in one transaction.

    :ivar relations: the parent and every partition at any depth (count).
    :ivar partitioned: the partitioned tables among them, the parent included (count).
    :ivar create_index_entries: ``CREATE INDEX`` on the parent: ``2 x relations + 1`` (count).
    :ivar alter_entries: ``ALTER TABLE ... ADD COLUMN`` on the parent: ``relations + 1`` (count).
    :ivar dml_relations: relations an ``UPDATE`` or ``DELETE`` of the parent that prunes no partition locks
        (RowExclusiveLock): every table of the tree, the indexes of its leaf partitions (``plancat.c
        get_relation_info`` opens a result relation's indexes) and, from PG 16, those of its partitioned tables
        (count); 0 when not derived.
    :ivar dml_entries: the lock-table entries it needs: ``dml_relations`` less those the fast path holds (the
        capacity model), the transaction ID and :data:`TRANSIENT_ENTRIES` (count).
    :ivar dml_entries_by_leaves: the entries such a statement needs when it reaches the first 1, 2, ... leaf
        partitions (OID order) and what precedes them (count each).
    """

    table_oid: int
    qualified: str
    relations: int
    partitioned: int
    create_index_entries: int
    alter_entries: int
    dml_relations: int = 0
    dml_entries: int = 0
    dml_entries_by_leaves: tuple[int, ...] = ()

    @property
    def leaves(self) -> int:
        """Leaf partitions (count; 0 when the DML need was not derived)."""
        return len(self.dml_entries_by_leaves)

    def dml_partitions_fit(self, free_entries: int) -> int:
        """The most leaf partitions (the first ones, in OID order) one UPDATE or DELETE may reach in a transaction
        and fit ``free_entries`` (count, by the figures: the statement filtered on the partition key; 0 when not
        even one fits)."""
        return sum(1 for e in self.dml_entries_by_leaves if e <= free_entries)


@dataclass(frozen=True)
class ConnectionsNeed:
    """The widest statement or transaction footprint at max_connections sessions.

    :ivar largest_locks: its locks (count), every one in the main table once a strong lock transfers them.
    :ivar subject: the statement, table or transaction it is.
    :ivar sessions: max_connections (count).
    :ivar need_entries: largest_locks x sessions (count).
    :ivar from_transaction: True when a measured transaction is wider than every statement and table (otherwise
        the ``shared-lock-table`` finding already speaks for it).
    """

    largest_locks: int
    subject: str
    sessions: int
    need_entries: int
    from_transaction: bool = False


@dataclass(frozen=True)
class StatementNeed:
    """The widest statement's (or table's) main-table locks in one session: a job that runs it once in a
    transaction, before any other session's entries are counted.

    :ivar subject: ``statement <queryid>`` or the table.
    :ivar spilled: its locks outside the fast path (count, the audit's probe).
    :ivar need_entries: spilled + the transaction ID + :data:`TRANSIENT_ENTRIES` (count).
    """

    subject: str
    spilled: int
    need_entries: int


#: A statement is named when one execution needs at least this share of the free entries (ratio).
NEARS_BUDGET = 0.5


@dataclass(frozen=True)
class LockBudgetAudit:
    """The database's own lock budget (see the module docstring).

    :ivar budget: the server's lock table.
    :ivar dump: pg_dump's need, None when the dump's relations were not read.
    :ivar partitions: the partitioned tables, the largest first (at most 5).
    :ivar connections: the widest footprint x max_connections.
    :ivar statement: the statement (or table) with the most main-table locks, alone (None: none spills).
    :ivar managed_service: the managed service the server is (``ServerFacts.managed_service``): fixes its way.
    """

    budget: LockTableBudget
    dump: DumpNeed | None
    partitions: tuple[PartitionDdlNeed, ...]
    connections: ConnectionsNeed
    statement: StatementNeed | None = None
    managed_service: str = ""

    def verdict(self, need_entries: int) -> str:
        """``fits``, ``beyond the floor`` (PG 13-18: may still fit) or ``exceeds``, for a need (count)."""
        if self.budget.fits(need_entries):
            return "fits"
        return "beyond the floor" if self.budget.is_floor else "exceeds"


def _catalog_oids(server_version_num: int, rows: Sequence[DumpLockRow]) -> tuple[int, ...]:
    """pg_dump's own catalog locks on this major: the measured set, plus pg_attrdef and pg_enum when it reads them."""
    major = min(max(major_of(server_version_num), min(PG_DUMP_CATALOG_OIDS)), max(PG_DUMP_CATALOG_OIDS))
    oids = PG_DUMP_CATALOG_OIDS[major]
    if rows and rows[0].any_default:
        oids += _ATTRDEF_OIDS
    if rows and rows[0].any_enum:
        oids += _ENUM_OIDS
    return oids


def _entries(model: CapacityModel, catalogs: tuple[int, ...], tables: Sequence[int]) -> tuple[int, int]:
    """(entries needed, fast-path locks): catalogs first (pg_dump's queries before getTables), then the tables."""
    requests = [LockRequest(o, LockMode.ACCESS_SHARE) for o in (*catalogs, *tables)]
    fast = sum(model.predict(requests))
    return len(requests) - fast + TRANSIENT_ENTRIES, fast


def dump_need(model: CapacityModel, rows: Sequence[DumpLockRow]) -> DumpNeed:
    """pg_dump's need (``pg_dump.c getTables``; see the module docstring).

    :param model: the server's fast-path capacity.
    :param rows: ``audit_dump_locks.sql``'s rows (the relations its LOCK TABLE locks).
    """
    catalogs = _catalog_oids(model.server_version_num, rows)
    need, fast = _entries(model, catalogs, [r.oid for r in rows])
    by_schema: dict[str, list[int]] = {}
    for r in rows:
        by_schema.setdefault(r.schema, []).append(r.oid)
    largest = max(by_schema, key=lambda s: (len(by_schema[s]), s), default="")
    largest_need = _entries(model, catalogs, by_schema.get(largest, []))[0]
    return DumpNeed(len(rows), len(catalogs), fast, need, largest, largest_need, len(by_schema))


def partition_ddl_needs(catalog: Catalog, limit: int = 5,
                        model: CapacityModel | None = None) -> tuple[PartitionDdlNeed, ...]:
    """DDL needs of the top-level partitioned tables, the largest first (at most ``limit``; see the module
    docstring: ``indexcmds.c DefineIndex``, ``tablecmds.c ATSimpleRecursion``), and, with ``model``, the need of
    an UPDATE or DELETE that prunes none of their partitions (:attr:`PartitionDdlNeed.dml_entries`)."""
    out = []
    for rel in catalog.top_level():
        if rel.relkind != "p":
            continue
        tree = catalog.descendants(rel.oid)
        relations = 1 + len(tree)
        partitioned = 1 + sum(1 for o in tree if catalog.relations[o].relkind == "p")
        need = PartitionDdlNeed(rel.oid, rel.qualified, relations, partitioned, 2 * relations + 1,
                                relations + 1)
        if model is not None:
            need = _dml_need(catalog, model, rel.oid, tree, need)
        out.append(need)
    out.sort(key=lambda n: (-n.relations, n.qualified))
    return tuple(out[:limit])


def _dml_need(catalog: Catalog, model: CapacityModel, parent: int, tree: Sequence[int],
              need: PartitionDdlNeed) -> PartitionDdlNeed:
    """``need`` with an unpruned UPDATE's or DELETE's: RowExclusiveLock on the parent, every table of the tree, the
    indexes of the leaves (``plancat.c get_relation_info``) and, from PG 16, of the partitioned tables; before 14
    also AccessShareLock on each partitioned table (measured on 13, 16 and 19: an UPDATE of a 50-partition table
    with one index takes 101 relation locks on 13, 102 on 16+)."""
    partitioned_indexes = model.server_version_num >= PG16
    requests: list[LockRequest] = []
    after_leaf: list[int] = []  # the number of requests once each leaf (and its indexes) is locked
    for oid in (parent, *tree):
        leaf = catalog.relations[oid].relkind != "p"
        requests.append(LockRequest(oid, LockMode.ROW_EXCLUSIVE))
        if leaf or partitioned_indexes:
            requests += [LockRequest(i, LockMode.ROW_EXCLUSIVE) for i in catalog.indexes_of.get(oid, ())]
        if leaf:
            after_leaf.append(len(requests))
    if model.server_version_num < PG14:  # planner.c inheritance_planner (until 14) also reads each partitioned table
        requests += [LockRequest(o, LockMode.ACCESS_SHARE) for o in (parent, *tree)
                     if catalog.relations[o].relkind == "p"]
    # one entry per object outside the fast path, whatever its modes (a second mode of a relation whose first took
    # a fast-path slot goes to the main table once the slots are full: lock.c LockAcquireExtended); the fast path
    # of a prefix is the prefix of the whole's (the slots fill in request order)
    fast = model.predict(requests)
    extra = 1 + TRANSIENT_ENTRIES  # the transaction ID of a row written, the transient catalog locks
    main: set[int] = set()
    at: list[int] = []
    ends = iter(after_leaf)
    end = next(ends, None)
    for n, (r, f) in enumerate(zip(requests, fast, strict=True), 1):
        if not f:
            main.add(r.relation_oid)
        while end is not None and n == end:
            at.append(len(main) + extra)
            end = next(ends, None)
    total = len(main) + extra
    if at:  # what comes after the last leaf (PG 13's AccessShareLocks) is taken whatever the leaves reached
        at = [a + total - at[-1] for a in at]
    rows = len({r.relation_oid for r in requests})
    return dataclasses.replace(need, dml_relations=rows, dml_entries=total, dml_entries_by_leaves=tuple(at))


def connections_need(risk: SharedLockRisk, transactions: Sequence[TransactionAudit]) -> ConnectionsNeed:
    """The widest statement, table or measured transaction (``--scratch --workload``) x max_connections."""
    largest, subject, txn = risk.largest_locks, risk.largest_subject, False
    for t in transactions:
        peak = t.peak
        if peak.lock_count > largest:
            largest, subject, txn = peak.lock_count, f"transaction at line {t.truth.line}", True
    return ConnectionsNeed(largest, subject, risk.sessions, largest * risk.sessions, txn)


def lock_budget_audit(budget: LockTableBudget, model: CapacityModel, rows: Sequence[DumpLockRow] | None,
                      catalog: Catalog, risk: SharedLockRisk,
                      transactions: Sequence[TransactionAudit] = (), *,
                      managed_service: str = "") -> LockBudgetAudit:
    """The three needs set against ``budget`` (pure).

    :param rows: ``audit_dump_locks.sql``'s rows, None when not read.
    :param managed_service: ``ServerFacts.managed_service`` (the fixes' SQL uses the service's way).
    """
    dump = dump_need(model, rows) if rows is not None else None
    statement = StatementNeed(risk.spilled_subject, risk.largest_spilled,
                              risk.largest_spilled + 1 + TRANSIENT_ENTRIES) if risk.largest_spilled > 0 else None
    return LockBudgetAudit(budget, dump, partition_ddl_needs(catalog, model=model),
                           connections_need(risk, transactions), statement, managed_service)


def _severity(audit: LockBudgetAudit) -> str:
    """``high`` beyond PG 19's limit, ``medium`` beyond a floor (PG 13-18: may still fit)."""
    return "medium" if audit.budget.is_floor else "high"


def _mlpt_fix(audit: LockBudgetAudit, need_entries: int) -> str:
    return f"max_locks_per_transaction = {audit.budget.smallest_mlpt(need_entries)} (restart)"


def _dump_finding(audit: LockBudgetAudit) -> list[Finding]:
    """``lock-budget-pg-dump``: pg_dump's need does not fit."""
    d = audit.dump
    if d is None or audit.budget.fits(d.need_entries):
        return []
    part = (f"dump in parts, e.g. per schema with pg_dump -n (the largest, {d.largest_schema}, needs "
            f"{d.largest_schema_need:,} entries" + (", fits)" if audit.budget.fits(d.largest_schema_need)
                                                    else ": split it further with -t patterns)"))
    return [Finding(
        _severity(audit), "lock-budget-pg-dump", "pg_dump",
        f"pg_dump of this database needs {d.need_entries:,} lock-table entries of {audit.budget.free_entries:,}"
        + (" (beyond the floor: it may still fit)" if audit.budget.is_floor else ""),
        f"{d.tables:,} tables LOCK TABLE locks in one transaction (pg_dump.c getTables) + {d.catalogs} catalogs of "
        f"its own queries - {d.fast_path} in the fast path + {TRANSIENT_ENTRIES} transient; lock table "
        f"{audit.budget.describe()}; beyond it: out of shared memory",
        f"{_mlpt_fix(audit, d.need_entries)}, or {part}; --exclude-table-data and -s do not help: pg_dump locks "
        "every table whose definition it dumps",
        (f"-- pg_dump needs {d.need_entries:,} lock-table entries; restart needed\n"
         + set_mlpt_sql(audit.managed_service, audit.budget.smallest_mlpt(d.need_entries)),),
        float(d.need_entries))]


def _partition_findings(audit: LockBudgetAudit) -> list[Finding]:
    """``lock-budget-partition-ddl``: CREATE INDEX (or ALTER TABLE) on a partitioned table does not fit."""
    out: list[Finding] = []
    for p in audit.partitions:
        if audit.budget.fits(p.create_index_entries):
            continue
        out.append(Finding(
            _severity(audit), "lock-budget-partition-ddl", p.qualified,
            f"CREATE INDEX on {p.qualified} needs {p.create_index_entries:,} lock-table entries of "
            f"{audit.budget.free_entries:,}" + (" (beyond the floor)" if audit.budget.is_floor else ""),
            f"{p.relations:,} relations in the tree: ShareLock on each and a new index on each (2 x relations) "
            f"and the transaction ID; ALTER TABLE ... ADD COLUMN needs "
            f"{p.alter_entries:,}; lock table {audit.budget.describe()}",
            f"CREATE INDEX ON ONLY {p.qualified}, then per partition CREATE INDEX CONCURRENTLY and ALTER INDEX ... "
            f"ATTACH PARTITION, each its own transaction; or {_mlpt_fix(audit, p.create_index_entries)}",
            (), float(p.create_index_entries)))
    return out


def _partition_dml_findings(audit: LockBudgetAudit) -> list[Finding]:
    """``lock-budget-partition-dml``: an UPDATE or DELETE that prunes no partition of a partitioned table (a job
    without the partition key in its WHERE) does not fit."""
    out: list[Finding] = []
    b = audit.budget
    for p in audit.partitions:
        if not p.dml_relations or b.fits(p.dml_entries):
            continue
        k = p.dml_partitions_fit(b.free_entries)
        split = f"filter on the partition key so that the planner prunes: at most {k:,} of its {p.leaves:,} " \
            "partitions per transaction (by the figures); or " if k else ""
        out.append(Finding(
            _severity(audit), "lock-budget-partition-dml", p.qualified,
            f"an UPDATE or DELETE of {p.qualified} without its partition key locks {p.dml_relations:,} relations: "
            f"{p.dml_entries:,} lock-table entries of {b.free_entries:,}"
            + (" (beyond the floor)" if b.is_floor else ""),
            f"RowExclusiveLock on the {p.relations:,} tables of the tree and the indexes of its {p.leaves:,} leaf "
            "partitions, held to the end of the transaction (plancat.c get_relation_info), less the fast path, and "
            f"the transaction ID; lock table {b.describe()}; measure the job itself: lockscope footprint --scratch "
            "--setup schema.sql -f job.sql --fail-on exhaustion",
            f"{split}{_mlpt_fix(audit, p.dml_entries)}",
            (f"-- an unpruned UPDATE/DELETE of {p.qualified} needs {p.dml_entries:,} lock-table entries; restart "
             "needed\n" + set_mlpt_sql(audit.managed_service, b.smallest_mlpt(p.dml_entries)),),
            float(p.dml_entries)))
    return out


def _statement_finding(audit: LockBudgetAudit) -> list[Finding]:
    """``lock-budget-statement``: one execution of the widest statement (in pg_stat_statements, or an unpruned
    read of a table) needs at least :data:`NEARS_BUDGET` of the free entries by itself: a job that runs it in one
    transaction with a few others (or a batch of its executions) runs out."""
    st, b = audit.statement, audit.budget
    if st is None or st.need_entries < NEARS_BUDGET * b.free_entries:
        return []
    over = not b.fits(st.need_entries)
    severity = _severity(audit) if over else "low"
    verdict = (" (beyond the floor)" if b.is_floor else "") if over else \
        f": {st.need_entries / max(b.free_entries, 1):.0%} of them in one session"
    return [Finding(
        severity, "lock-budget-statement", st.subject,
        f"one execution of {st.subject} needs {st.need_entries:,} lock-table entries of {b.free_entries:,}"
        + verdict,
        f"{st.spilled:,} of its relation locks outside the fast path (the audit's probe), the transaction ID and "
        f"{TRANSIENT_ENTRIES} transient; each further execution in the same transaction (a batch) keeps its locks "
        f"too; lock table {b.describe()}; measure the job: lockscope footprint --scratch --setup schema.sql -f "
        "job.sql --fail-on exhaustion",
        f"prune it (filter on the partition key), fewer indexes on what it touches, or "
        f"{_mlpt_fix(audit, 2 * st.need_entries)} for two at once",
        (), float(st.need_entries))]


def _connections_finding(audit: LockBudgetAudit) -> list[Finding]:
    """``lock-budget-connections``: the widest measured transaction x max_connections does not fit (a statement or
    table that does not is the ``shared-lock-table`` finding)."""
    c = audit.connections
    if not c.from_transaction or audit.budget.fits(c.need_entries):
        return []
    return [Finding(
        "medium", "lock-budget-connections", c.subject,
        f"{c.sessions} sessions running {c.subject} need {c.need_entries:,} lock-table entries of "
        f"{audit.budget.free_entries:,}",
        f"{c.largest_locks} locks each (all in the main table once a strong lock on its relations transfers them, "
        f"lock.c FastPathTransferRelationLocks) x max_connections {c.sessions}; lock table {audit.budget.describe()}",
        f"{_mlpt_fix(audit, c.need_entries)}, lower max_connections (a pooler), or shrink the footprint", (),
        float(c.need_entries))]


def lock_budget_findings(audit: LockBudgetAudit) -> list[Finding]:
    """``lock-budget-pg-dump``, ``lock-budget-partition-ddl``, ``lock-budget-partition-dml``,
    ``lock-budget-statement`` and ``lock-budget-connections`` (each when its need
    does not fit the free entries; ``high`` beyond PG 19's limit, ``medium`` beyond a PG 13-18 floor)."""
    return _dump_finding(audit) + _partition_findings(audit) + _partition_dml_findings(audit) + \
        _statement_finding(audit) + _connections_finding(audit)


@dataclass(frozen=True)
class BudgetLine:
    """One need set against the lock table, as the reports show it.

    :ivar what: e.g. ``pg_dump``, ``CREATE INDEX on public.events``.
    :ivar need_entries: count.
    :ivar verdict: ``fits``, ``beyond the floor`` or ``exceeds`` (:meth:`LockBudgetAudit.verdict`).
    :ivar detail: how the need is made up.
    """

    what: str
    need_entries: int
    verdict: str
    detail: str


def budget_lines(audit: LockBudgetAudit) -> list[BudgetLine]:
    """Every need of the audit against its budget: pg_dump, each partitioned table's CREATE INDEX and ALTER TABLE,
    the connections (the terminal and HTML reports' rows)."""
    out: list[BudgetLine] = []
    if (d := audit.dump) is not None:
        out.append(BudgetLine("pg_dump", d.need_entries, audit.verdict(d.need_entries),
                              f"{d.tables:,} tables + {d.catalogs} catalogs - {d.fast_path} fast path + "
                              f"{TRANSIENT_ENTRIES} transient"))
        if d.schemas > 1:
            out.append(BudgetLine(f"pg_dump -n {d.largest_schema}", d.largest_schema_need,
                                  audit.verdict(d.largest_schema_need), "the largest schema alone"))
    for p in audit.partitions:
        out.append(BudgetLine(f"CREATE INDEX on {p.qualified}", p.create_index_entries,
                              audit.verdict(p.create_index_entries),
                              f"2 x {p.relations:,} relations + 1"))
        out.append(BudgetLine(f"ALTER TABLE {p.qualified} ADD COLUMN", p.alter_entries,
                              audit.verdict(p.alter_entries), f"{p.relations:,} relations + 1"))
        if p.dml_relations:
            out.append(BudgetLine(f"UPDATE/DELETE of {p.qualified}, unpruned", p.dml_entries,
                                  audit.verdict(p.dml_entries),
                                  f"{p.dml_relations:,} relations - fast path + 1 + {TRANSIENT_ENTRIES} transient"))
    if (st := audit.statement) is not None:
        out.append(BudgetLine(f"one execution of {st.subject}", st.need_entries, audit.verdict(st.need_entries),
                              f"{st.spilled:,} spilled + 1 + {TRANSIENT_ENTRIES} transient"))
    c = audit.connections
    out.append(BudgetLine(f"{c.sessions} sessions x {c.subject}", c.need_entries, audit.verdict(c.need_entries),
                          f"{c.largest_locks} locks x {c.sessions}"))
    return out
