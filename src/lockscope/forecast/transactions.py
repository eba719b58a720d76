"""``lockscope forecast --workload FILE``: a script's transactions, each forecast as one class whose locks accumulate.

PostgreSQL keeps every relation lock until the transaction ends (``lock.c LockReleaseAll``), so the statements of one
transaction share one backend's fast-path slots (``lock.c FAST_PATH_REL_GROUP``) and its main-table locks are the
transaction's, not the sum of its statements' alone: five lookups of 7 locks that each fit 16 slots put 19 in the
main lock table together. pg_stat_statements knows statements, not transactions; a script says which statements
run together.

The script (a pgbench script or SQL file: :func:`lockscope.script.read_script`; ``BEGIN ... COMMIT`` blocks, every
other statement a transaction of its own) is probed transaction by transaction, :data:`EXECUTIONS` executions each,
EXPLAIN only (:func:`lockscope.transaction.measure_transaction`: nothing runs, on any server), and each transaction
becomes one :class:`~lockscope.shapes.StatementShape` (:func:`lockscope.shapes.shape_from_transaction`: its steady
state, the last execution, as a statement's is; the flags the capacity model's over the whole transaction), one
call per run of the script. Its own cost is the sum of its statements' (:func:`~.engine.statement_own_cost` each,
their planning only where the steady state plans), a lower bound: each statement's protocol round trip beyond the
first is not counted. What-ifs as for a statement (:class:`~.engine.WhatIf`): the dropped indexes' locks removed and
the flags predicted again; ``plan_cache_mode`` probes the transactions again with the prepared protocol in that
mode.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..capacity import CapacityModel
from ..catalog import database_facts, relation_facts, resolve_indexes
from ..db import Session
from ..errors import BadInputError
from ..script import Script, read_script
from ..shapes import StatementShape, apply_what_if, shape_from_transaction
from ..statement import bind_params, check_statement
from ..transaction import TransactionFootprint, measure_transaction
from ..vocab import PlanCacheMode
from .calibration import Calibration
from .engine import ForecastReport, WhatIf, forecast_shapes, statement_own_cost

__all__ = ["EXECUTIONS", "forecast_script"]

#: Executions of each transaction probed: five custom plans, the generic plan's build at the 6th, two reuses (the
#: foreign-key checks' cached plans advance with the simple protocol too); the last is the steady state.
EXECUTIONS = 8


def forecast_script(
    session: Session,
    text: str,
    *,
    calibration: Calibration,
    cores: int,
    clients: int | None,
    where: str = "",
    what_if: WhatIf | None = None,
    protocol: str = "simple",
    scratch_conninfo: str | None = None,
    think_s: float = 0.0,
    progress: Callable[[str], None] = lambda _msg: None,
) -> ForecastReport:
    """Probe a script's transactions (EXPLAIN only) and forecast them, each one class, and the what-if beside them.

    :param text: the script (pgbench ``-f`` format or SQL).
    :param clients: N, or None for the default (16: a script has no live rate).
    :param where: the file name, for messages.
    :param what_if: the changes forecast beside the measured state (None: none).
    :param protocol: ``simple`` or ``prepared`` (pgbench ``-M``; extended is measured as simple).
    :param scratch_conninfo: the server is a scratch server lockscope started: the statements may be timed there.
    :raises BadInputError: a script lockscope cannot read, cores or clients < 1.
    :raises UnsupportedStatementError: a statement lockscope does not probe (DDL, COPY, SET, ...).
    :raises StatementError, LockBlockedError, DatabaseError: from the probes.
    """
    n = clients or 16
    what_if = what_if or WhatIf()
    if cores < 1 or n < 1:
        raise BadInputError("--cores and --clients must be at least 1")
    facts = session.facts
    db_oid, _ = database_facts(session)
    drops = resolve_indexes(session, what_if.drop_indexes)
    scripts = [read_script(text, protocol=protocol, where=where, execution=k) for k in range(1, EXECUTIONS + 1)]
    mode = PlanCacheMode(facts.plan_cache_mode)
    notes = ["each transaction of the script is one class whose relation locks accumulate (held until it ends, "
             "lock.c LockReleaseAll), run once per run of the script; its own cost is its statements' together, a "
             "lower bound (their round trips beyond the first are not counted)"]
    footprints = _probe(session, scripts, protocol, mode, progress)
    shapes = []
    for t, fp in enumerate(footprints):
        progress(f"the own cost of transaction {t + 1}/{len(footprints)}")
        cost, source = _own_cost(session, scripts[-1], t, fp, calibration, scratch_conninfo)
        shapes.append(_shape(session, fp, db_oid).with_own_cost(cost, source))
        notes.append(f"transaction at line {fp.line}: its own cost: {source}")
    progress("solving the model")
    measured = forecast_shapes("measured", shapes, facts.capacity, calibration, cores=cores, clients=n,
                               think_s=think_s)
    after = None
    if what_if.any:
        changed = _what_if(session, text, where, shapes, what_if, drops, db_oid, notes, progress)
        after = forecast_shapes(f"what-if: {what_if.describe()}", changed, what_if.capacity(facts.capacity),
                                calibration, cores=cores, clients=n, think_s=think_s)
    return ForecastReport(mode="script", server_version=facts.server_version,
                          server_version_num=facts.server_version_num, database=facts.database, database_oid=db_oid,
                          cores=cores, clients=n,
                          clients_source="--clients" if clients else "default (a script has no live rate)",
                          calibration=calibration, measured=measured, what_if=after,
                          what_if_text=what_if.describe(), notes=tuple(notes), think_s=think_s)


def _probe(session: Session, scripts: Sequence[Script], protocol: str, mode: PlanCacheMode,
           progress: Callable[[str], None]) -> list[TransactionFootprint]:
    """Every transaction of the script probed, execution after execution (EXPLAIN only)."""
    out = []
    count = len(scripts[0].transactions)
    for t in range(count):
        progress(f"probing transaction {t + 1}/{count}")
        out.append(measure_transaction(session, [s.transactions[t] for s in scripts], protocol=protocol,
                                       plan_cache_mode=mode, executions=len(scripts)))
    return out


def _shape(session: Session, fp: TransactionFootprint, db_oid: int) -> StatementShape:
    """The transaction as one shape, the shared catalogs among its locks read from the catalog."""
    oids = [lk.relation_oid for lk in fp.executions[-1].locks]
    shared = frozenset(oid for oid, (is_shared, _) in relation_facts(session, oids).items() if is_shared)
    return shape_from_transaction(fp, db_oid, shared, name=f"transaction at line {fp.line}")


def _own_cost(session: Session, script: Script, t: int, fp: TransactionFootprint, calibration: Calibration,
              scratch_conninfo: str | None) -> tuple[float | None, str]:
    """The transaction's own cost per run (s): its statements' (:func:`statement_own_cost`, as steady-state means,
    the planning of those whose steady state plans), None when a statement's execution time is unknown."""
    total = 0.0
    sources: list[str] = []
    steady = fp.executions[-1].steps
    for stmt, step in zip(script.transactions[t].statements, steady, strict=True):
        bound = bind_params(check_statement(stmt.text), stmt.params, session.literal)
        cost = statement_own_cost(session, bound, scratch_conninfo=scratch_conninfo)
        own = cost.steady(calibration).with_exec_floor(calibration).own_s(step.execution.phase.plans)
        head = cost.source.split(":", 1)[0].split(" (", 1)[0]
        if own is None:
            return None, f"unknown: statement {step.number}'s execution time is unknown ({cost.source})"
        total += own
        sources.append(head)
    return total, (f"its {len(steady)} statements' together ({', '.join(dict.fromkeys(sources))}): "
                   f"{total * 1e6:,.1f} µs")


def _what_if(session: Session, text: str, where: str, shapes: Sequence[StatementShape], what_if: WhatIf,
             drops: dict[str, int], db_oid: int, notes: list[str],
             progress: Callable[[str], None]) -> list[StatementShape]:
    """The transactions' shapes under the what-if: probed again with the prepared protocol in the what-if's
    plan_cache_mode, the dropped indexes' locks removed, the flags predicted again in order."""
    locked = {lk.relation_oid for s in shapes for lk in s.locks}
    missing = [name for name, oid in drops.items() if oid not in locked]
    if missing:
        notes.append(f"--drop-index {', '.join(missing)}: not locked by any transaction (no change)")
    bases = list(shapes)
    if what_if.plan_cache_mode is not None:
        progress(f"probing the transactions in plan_cache_mode {what_if.plan_cache_mode}")
        prepared = [read_script(text, protocol="prepared", where=where, execution=k)
                    for k in range(1, EXECUTIONS + 1)]
        again = _probe(session, prepared, "prepared", what_if.plan_cache_mode, progress)
        bases = [_shape(session, fp, db_oid).with_own_cost(s.own_s, s.own_source)
                 for fp, s in zip(again, shapes, strict=True)]
    model: CapacityModel = what_if.capacity(session.facts.capacity)
    return [apply_what_if(b, model, frozenset(drops.values()),
                          repredict=bool(drops) or model != session.facts.capacity) for b in bases]


