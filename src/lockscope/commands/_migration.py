"""``lockscope footprint --scratch`` of a job (a migration, a maintenance function, a batch of DML or advisory
locks: any SQL, run for real on the scratch server): each transaction's lock-table need against a budget."""

from __future__ import annotations

import argparse
import math
from typing import TYPE_CHECKING, Any

from ..errors import EXIT_SPILL, BadInputError, UnsupportedStatementError
from ..pgbin.cache import resolve_pg_bin
from ._common import positive_int
from ._output import check_writable, make_console, note, read_text, target_line, write_json

if TYPE_CHECKING:
    from pathlib import Path

    from rich.console import Console

    from ..budget import LockTableBudget
    from ..migration import PartitionSpread
    from ..migration_fit import BudgetSettings, Fit
    from ..script import Script

#: JSON schema of a migration's footprint.
MIGRATION_SCHEMA = "lockscope/migration/v1"
#: The measuring scratch server's lock table is enlarged to at least this many entries (count) with
#: max_prepared_transactions (which leaves the fast path, sized by max_locks_per_transaction, as the budget's).
MEASURING_ENTRIES = 60_000


def add_budget_options(p: argparse.ArgumentParser) -> None:
    """``--job``, ``--assume-max-connections``, ``--assume-max-prepared-transactions``, ``--budget-from`` and
    ``--no-verify`` (a job's lock-table budget)."""
    p.add_argument("--job", action="store_true",
                   help="with --scratch: run the file for real as a job (any SQL: DML, SELECT of functions, CALL, DO, "
                        "LOCK TABLE, advisory locks), each transaction committed, and report the lock-table entries "
                        "each needs at its peak by lock type; implied by DDL, --fail-on exhaustion and the "
                        "budget options")
    p.add_argument("--assume-max-connections", type=positive_int, metavar="N",
                   help="jobs: the budget's max_connections (default 100)")
    p.add_argument("--assume-max-prepared-transactions", type=int, metavar="N",
                   help="jobs: the budget's max_prepared_transactions (default 0)")
    p.add_argument("--budget-from", metavar="DSN",
                   help="jobs: the budget from a live server's settings and the lock-table entries its "
                        "sessions hold (read-only: one pg_lock_status() read); the scratch server runs that "
                        "server's major unless --pg-bin says otherwise")
    p.add_argument("--no-verify", action="store_true",
                   help="jobs: print the fixes by the figures, without verifying them on a scratch server")


def is_migration(script: Script, scratch: bool, *, where: str = "") -> bool:
    """A script with DDL (or another statement lockscope never probes on a user's server).

    :param where: the file it comes from (``""``: the command line), for the refusal.
    :raises UnsupportedStatementError: DDL without ``--scratch``, before any server is contacted (one line: lockscope
        never runs it on a user's server; a migration is measured with ``--scratch``).
    """
    from ..statement import PROBEABLE_KINDS

    ddl = next(((n, s) for n, s in enumerate(script.statements, 1) if s.kind not in PROBEABLE_KINDS), None)
    if ddl is None:
        return False
    if not scratch:
        n, stmt = ddl
        word = " ".join(stmt.original.split()[:2]).upper() if stmt.original else stmt.kind
        place = f"{where} line {stmt.line}: " if where else \
            f"statement {n} of {len(script.statements)}: " if len(script.statements) > 1 else ""
        raise UnsupportedStatementError(
            f"{place}{word} is a utility statement: lockscope probes only SELECT, INSERT, UPDATE, DELETE and MERGE on "
            "a server of yours and never runs DDL there; a migration is measured with --scratch, on lockscope's own "
            "server (--scratch --setup schema.sql -f migration.sql)")
    return True


def _job_options(args: argparse.Namespace) -> list[str]:
    """The options given that only a job takes."""
    given = [name for name, value in (("--job", args.job or None),
                                      ("--assume-max-connections", args.assume_max_connections),
                                      ("--assume-max-prepared-transactions", args.assume_max_prepared_transactions),
                                      ("--budget-from", args.budget_from), ("--no-verify", args.no_verify or None))
             if value is not None]
    return given + (["--fail-on exhaustion"] if any(n == "exhaustion" for n, _ in args.fail_on) else [])


def wants_job(args: argparse.Namespace) -> bool:
    """``--job``, ``--fail-on exhaustion`` or a budget option: the file runs as a job (with ``--scratch``)."""
    return bool(_job_options(args))


def check_migration_only(args: argparse.Namespace) -> None:
    """Refuse the job options without ``--scratch``.

    :raises BadInputError: one line naming the option.
    """
    given = _job_options(args)
    if given:
        raise BadInputError(f"{given[0]} applies to a job (a migration, maintenance, a batch) run for real with "
                            "--scratch: lockscope never runs a statement on a server of yours (its live budget "
                            "findings: lockscope audit)")


def _check_args(args: argparse.Namespace) -> None:
    """Refuse options a migration would ignore, and bad budget values."""
    for name, value in (("--executions", args.executions), ("--plan-cache-mode", args.plan_cache_mode),
                        ("--assume-version", args.assume_version), ("--protocol", args.protocol)):
        if value is not None:
            raise BadInputError(f"{name} does not apply to a job: it runs once, for real, each transaction "
                                "committed")
    if args.param or args.param_type:
        raise BadInputError("--param and --param-type do not apply to a job")
    if args.assume_max_prepared_transactions is not None and args.assume_max_prepared_transactions < 0:
        raise BadInputError("--assume-max-prepared-transactions: must be 0 or more")
    if args.budget_from is not None and any(v is not None for v in (
            args.assume_mlpt, args.assume_max_connections, args.assume_max_prepared_transactions)):
        raise BadInputError("--budget-from reads the budget's settings: give it or --assume-*, not both")
    bad = [n for n, _ in args.fail_on if n not in ("exhaustion", "locks")]
    if bad:
        raise BadInputError(f"--fail-on {bad[0]} applies to queries; a job's gate is --fail-on exhaustion")


def _live_budget(args: argparse.Namespace) -> tuple[BudgetSettings, int, int, str]:
    """The budget's settings from ``--budget-from``: (settings, server_version_num, held entries, source); one
    pg_lock_status() read."""
    from ..db import connect
    from ..migration_fit import BudgetSettings
    from ..rows import HeldEntriesRow

    with connect(args.budget_from, pg_locks_rate_hz=2.0) as session:
        f = session.facts
        held = session.query_rows("budget_held_entries", HeldEntriesRow)[0].entries
        source = f"server {session.endpoint.label()}"
    settings = BudgetSettings(f.max_locks_per_transaction, f.max_connections, f.max_prepared_transactions,
                              f.autovacuum_workers, f.max_worker_processes, f.max_wal_senders)
    return settings, f.server_version_num, held, source


def run_migration(args: argparse.Namespace, console: Console, script: Script) -> int:
    """Measure the migration, judge each transaction against the budget, verify the fixes, render; exit code."""
    from ..migration import measure_migration
    from ..migration_fit import BudgetSettings, judge
    from ..target import open_target

    _check_args(args)
    check_writable(args.json)
    setup = read_text(args.setup, "set-up script") if args.setup is not None else None
    live: tuple[int, int, str] | None = None
    if args.budget_from is not None:
        settings, version, held, source = _live_budget(args)
        live = (version, held, source)
    else:
        settings = BudgetSettings(args.assume_mlpt, args.assume_max_connections or 100,
                                  args.assume_max_prepared_transactions or 0)
    pg_bin_text = args.pg_bin or (str(live[0] // 10000) if live else None)
    pg_bin = _pg_bin(pg_bin_text, bool(args.pg_bin), console)
    mlpt = args.mlpt or settings.max_locks_per_transaction
    to_stdout = args.json is not None and str(args.json) == "-"
    info = make_console(stderr=True) if to_stdout else console
    with open_target(None, pg_bin=pg_bin, settings=_measuring(mlpt), setup_sql=setup) as target:
        assert target.server is not None
        facts = target.session.facts
        note(info, target_line("footprint", target.session.endpoint.label(),
                               "a job, run for real on lockscope's scratch server, max_locks_per_transaction "
                               f"{facts.max_locks_per_transaction}"))
        txns = measure_migration(target.server.conninfo(), script)
    budget = settings.budget(live[0] if live else facts.server_version_num, held_entries=live[1] if live else 0,
                             source=live[2] if live else "assumed")
    fits = [judge(t, budget) for t in txns]
    if not args.no_verify:
        fits = _verified(fits, settings, pg_bin, setup, script, budget)
    if args.json is not None:
        write_json(args.json, _json_doc(fits, budget, facts.server_version), info, stdout=console)
    if not to_stdout:
        for line in render_migration(fits, budget):
            console.print(line, markup=False, highlight=False)
    return _gate(args, fits)


def _pg_bin(text: str | None, given: bool, console: Console) -> Path | None:
    """The scratch server's binaries; the live server's major when installed (else a note, and PG 18)."""
    if text is None:
        return None
    try:
        return resolve_pg_bin(text)
    except BadInputError:
        if given:
            raise
        note(console, f"note: PostgreSQL {text} (the --budget-from server's major) is not installed here: measured "
                      f"on the embedded PostgreSQL 18 (run: lockscope lab install {text}, or give --pg-bin)")
        return None


def _measuring(mlpt: int | None) -> Any:
    """The measuring server's settings: the budget's max_locks_per_transaction (its fast path is the target's),
    the table enlarged with prepared-transaction slots (:data:`MEASURING_ENTRIES`)."""
    from ..server import ScratchSettings
    from ..versions import DEFAULT_MAX_LOCKS_PER_TRANSACTION

    per = mlpt or DEFAULT_MAX_LOCKS_PER_TRANSACTION
    return ScratchSettings(max_locks_per_transaction=mlpt,
                           extra={"max_prepared_transactions": str(math.ceil(MEASURING_ENTRIES / per))})


def _verified(fits: list[Fit], settings: BudgetSettings, pg_bin: Path | None, setup: str | None, script: Script,
              budget: LockTableBudget) -> list[Fit]:
    """Each exhausted transaction's fixes verified on a scratch server with the budget's settings."""
    from ..migration_fit import verify_fixes

    out = []
    for n, fit in enumerate(fits):
        if fit.exhausted and fit.transaction.measured:
            fit = verify_fixes(fit, bin_dir=pg_bin, settings=settings, setup_sql=setup,
                               before=script.transactions[:n], txn=script.transactions[n])
        out.append(fit)
    return out


def _kind(budget: LockTableBudget) -> str:
    return (f"PG {budget.server_version_num // 10000}: the nominal size is a floor, more may fit"
            if budget.is_floor else f"PG {budget.server_version_num // 10000}: the limit")


def batch_fix(fit: Fit) -> str | None:
    """The largest-batch fix in words, e.g. ``at most 184 partitions per transaction (verified on PG 19.0 scratch:
    185 fails with 53200)``, None without a repeated statement."""
    rep = fit.transaction.dominant
    spread = fit.transaction.spread
    if (rep is None or fit.batch is None) and fit.partitions_batch is not None and spread is not None:
        return _partitions_fix(fit, spread)
    if rep is None or fit.batch is None:
        return None
    text = f"at most {fit.batch:,} {rep.noun} per transaction"
    if fit.verified_on is None:
        return text + " (by the figures, not verified)"
    v = fit.verified_batch
    if v is None or v < 0:
        return text + f"; on {fit.verified_on} not even the statements around them fit"
    if not fit.budget.is_floor:
        if v == fit.batch:
            return text + f" (verified on {fit.verified_on}: {v + 1:,} fail with out of shared memory)" \
                if fit.boundary_checked else text + f" (verified on {fit.verified_on})"
        return f"at most {v:,} {rep.noun} per transaction (verified on {fit.verified_on}; the figures said " \
               f"{fit.batch:,})"
    return text + f" (nominal, safe); verified on {fit.verified_on}: {v:,} ran"


def _partitions_fix(fit: Fit, spread: PartitionSpread) -> str | None:
    """The partitions-per-transaction fix in words (a job's statement over many partitions), None when not even
    one fits."""
    split = "split the statement by the partition key"
    v, leaves = fit.verified_partitions, fit.leaf_partitions
    if v is None or leaves is None:
        if not fit.partitions_batch:
            return None
        why = "lockscope cannot split the rows an INSERT routes" if fit.transaction.routes_rows else \
            "its partitions could not be detached on the scratch server" if fit.verified_on else "--no-verify"
        return (f"at most {fit.partitions_batch:,} of the {spread.partitions:,} partitions of {spread.parent} per "
                f"transaction ({spread.per_partition:.3g} entries each: {split}; by the figures, not verified: {why})")
    if v <= 0:
        return None
    how = "the others detached, their rows routed to a default partition" if fit.transaction.routes_rows else \
        "the others detached as if pruned"
    if not fit.budget.is_floor:
        boundary = f": {v + 1:,} fail with out of shared memory" if fit.partitions_boundary_checked else ""
        return (f"at most {v:,} of the {leaves:,} partitions of {spread.parent} per transaction ({split}; verified "
                f"on {fit.verified_on}, {how}{boundary})")
    nominal = min(fit.partitions_batch or 0, v)
    return (f"at most {nominal:,} of the {leaves:,} partitions of {spread.parent} per transaction ({split}; nominal, "
            f"safe; verified on {fit.verified_on}, {how}: {v:,} ran)")


def mlpt_fix(fit: Fit) -> str:
    """The max_locks_per_transaction fix in words."""
    if fit.verified_on is None:
        return f"max_locks_per_transaction {fit.smallest_mlpt} (restart; by the figures, not verified)"
    if fit.verified_mlpt is None:
        return f"max_locks_per_transaction {fit.smallest_mlpt} (restart; NOT confirmed on {fit.verified_on})"
    if fit.verified_mlpt != fit.smallest_mlpt:
        return f"max_locks_per_transaction {fit.verified_mlpt} (restart; verified on {fit.verified_on}; the " \
               f"figures said {fit.smallest_mlpt})"
    return f"max_locks_per_transaction {fit.smallest_mlpt} (restart; verified on {fit.verified_on})"


def render_migration(fits: list[Fit], budget: LockTableBudget) -> list[str]:
    """The terminal report: the budget line, then per transaction its need, strong locks, growth and verdict."""
    lines = [f"budget: {budget.describe()} ({budget.source})"]
    for fit in fits:
        t = fit.transaction
        kind = "BEGIN ... COMMIT" if t.explicit else "autocommit"
        head = f"transaction {t.number} (line {t.line}, {kind}, {len(t.statements)} statement" \
               f"{'s' if len(t.statements) != 1 else ''})"
        if not t.measured:
            lines.append(f"{head}: runs outside a transaction block, not measured")
            continue
        types = ", ".join(f"{name} {n:,}" for name, n in t.peak_by_type)
        lines.append(f"{head}: {t.peak:,} lock-table entries at its peak ({types or 'none'})")
        lost = t.fast_path_lost
        lines.append(f"  strong locks: {len(t.strong_locks):,}; concurrent queries lose the fast path on "
                     f"{len(lost):,} existing relation{'s' if len(lost) != 1 else ''}"
                     + (": " + ", ".join(lost[:8]) + (", ..." if len(lost) > 8 else "") if lost else ""))
        for rep in t.repetitions:
            growth = "" if rep.transaction_per_repetition is None else \
                f"; the transaction grows by {rep.transaction_per_repetition:g} per repetition, its later " \
                "statements included"
            lines.append(f"  repeated: {rep.label} x {rep.count:,}: {rep.per_repetition:,} entries each "
                         f"({'constant' if rep.constant else 'not constant: the largest step'}), the rest of "
                         f"the transaction {rep.fixed:,}{growth}")
        if t.empty_lines:
            lines.append(f"  touched no rows: line{'s' if len(t.empty_lines) > 1 else ''} "
                         f"{', '.join(str(n) for n in t.empty_lines[:8])}{', ...' if len(t.empty_lines) > 8 else ''}"
                         " (a job's locks depend on the rows it reaches: load a representative sample with --setup)")
        if t.spread is not None and t.dominant is None:
            lines.append(f"  partitions: {t.spread.partitions:,} of {t.spread.parent} hold {t.spread.entries:,} "
                         "entries with their indexes")
        verdict = "does not fit: out of shared memory" if fit.exhausted else "fits"
        during = f"peak + {fit.need - t.peak - t.transient} while a statement runs" + (
            f" + {t.transient:,} indexes its writes open and release" if t.transient else "")
        lines.append(f"  need {fit.need:,} ({during}) of "
                     f"{budget.free_entries:,} free entries ({_kind(budget)}): {verdict}")
        if fit.exhausted:
            lines += [f"  fix: {f}" for f in (batch_fix(fit), mlpt_fix(fit)) if f is not None]
    return lines


def _gate(args: argparse.Namespace, fits: list[Fit]) -> int:
    """``--fail-on exhaustion`` and ``locks:N``: exit 6 and one line on stderr when met."""
    failed = []
    for name, n in args.fail_on:
        over = [f for f in fits if f.exhausted] if name == "exhaustion" else \
            [f for f in fits if f.transaction.peak > n]
        if over and name == "exhaustion":
            f = over[0]
            fixes = "; or ".join(x for x in (batch_fix(f), mlpt_fix(f)) if x is not None)
            failed.append(f"exhaustion: transaction {f.transaction.number} (line {f.transaction.line}) needs "
                          f"{f.need:,} lock-table entries, the budget has {f.budget.free_entries:,} free "
                          f"({_kind(f.budget)}); fix: {fixes}")
        elif over:
            failed.append(f"locks:{n}: transaction {over[0].transaction.number} holds {over[0].transaction.peak:,} "
                          "lock-table entries")
    if failed:
        note(make_console(stderr=True), "lockscope footprint: --fail-on " + "; ".join(failed))
        return EXIT_SPILL
    return 0


def _json_doc(fits: list[Fit], budget: LockTableBudget, server_version: str) -> dict[str, Any]:
    """The ``lockscope/migration/v1`` document (docs/json-schema.md)."""
    from .. import __version__

    return {"schema": MIGRATION_SCHEMA, "lockscope_version": __version__,
            "server": {"version": server_version, "scratch": True},
            "budget": {"entries": budget.entries, "free_entries": budget.free_entries,
                       "held_entries": budget.held_entries,
                       "max_locks_per_transaction": budget.max_locks_per_transaction,
                       "max_backends": budget.max_backends,
                       "max_prepared_transactions": budget.max_prepared_transactions, "is_floor": budget.is_floor,
                       "major": budget.server_version_num // 10000, "source": budget.source,
                       "describe": budget.describe()},
            "transactions": [_fit_dict(f) for f in fits], "exhausted": any(f.exhausted for f in fits)}


def _fit_dict(fit: Fit) -> dict[str, Any]:
    t = fit.transaction
    return {"number": t.number, "line": t.line, "explicit": t.explicit, "statements": len(t.statements),
            "measured": t.measured, "peak_entries": t.peak, "peak_by_type": dict(t.peak_by_type),
            "entries_after": list(t.entries_after),
            "strong_locks": [{"relation": s.relation, "mode": str(s.mode), "existing": s.existing}
                             for s in t.strong_locks],
            "fast_path_lost": list(t.fast_path_lost),
            "repetitions": [{"label": r.label, "noun": r.noun, "count": r.count,
                             "per_repetition_entries": r.per_repetition, "constant": r.constant,
                             "fixed_entries": r.fixed, "transaction_per_repetition_entries":
                                 r.transaction_per_repetition} for r in t.repetitions],
            "empty_lines": list(t.empty_lines),
            "partitions": {"parent": t.spread.parent, "partitions": t.spread.partitions,
                           "entries": t.spread.entries} if t.spread is not None else None,
            "transient_entries": t.transient, "need_entries": fit.need, "exhausted": fit.exhausted,
            "fixes": {"batch": fit.batch, "batch_noun": t.dominant.noun if t.dominant else None,
                      "verified_batch": fit.verified_batch, "boundary_checked": fit.boundary_checked,
                      "partitions_batch": fit.partitions_batch, "verified_partitions": fit.verified_partitions,
                      "partitions_boundary_checked": fit.partitions_boundary_checked,
                      "leaf_partitions": fit.leaf_partitions,
                      "smallest_mlpt": fit.smallest_mlpt, "verified_mlpt": fit.verified_mlpt,
                      "verified_on": fit.verified_on} if fit.exhausted else None}
