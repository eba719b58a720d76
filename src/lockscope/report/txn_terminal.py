"""Rich renderables for transaction footprints (``lockscope footprint`` with ``BEGIN ... COMMIT`` or a pgbench
script; nothing here prints)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from rich.console import Group, JustifyMethod, RenderableType
from rich.table import Table
from rich.text import Text

from ..transaction import StatementStep, TransactionExecution, TransactionFootprint
from ..versions import major_of

__all__ = ["render_transactions", "steps_table", "transaction_table"]


def _phases(e: TransactionExecution) -> str:
    """The statements' plan-cache phases, e.g. ``custom`` or ``4 custom, 1 generic-build``."""
    counts = Counter(str(s.execution.phase) for s in e.steps)
    if len(counts) == 1:
        return next(iter(counts))
    return ", ".join(f"{n} {phase}" for phase, n in counts.items())


def transaction_table(fp: TransactionFootprint, truth: TransactionFootprint | None = None) -> Table:
    """One row per execution: the statements' phases, the relation locks held at the end, fast-path and main lock
    table, the statement at which the first lock leaves the fast path; beside them the executed run's counts when
    there is one (a scratch server), checked against the model's."""
    table = Table(header_style="bold")
    for col in ("exec", "phases", "locks", "fast-path", "main", "first spill"):
        table.add_column(col, justify="left" if col == "phases" else "right")
    if truth is not None:
        table.add_column("executed: locks, main", justify="right")
    if fp.assumed is not None:
        table.add_column(f"main if PG{major_of(fp.assumed.server_version_num)}/{fp.assumed.max_locks_per_transaction}",
                         justify="right")
    for i, e in enumerate(fp.executions):
        bound = "" if e.exact else "≥"
        main = Text(f"{bound}{e.main_table_count}", style="bold red" if e.main_table_count else "green")
        spill = f"statement {e.first_spill}" if e.first_spill is not None else "-"
        row: list[RenderableType] = [str(e.number), _phases(e), f"{bound}{e.lock_count}",
                                     f"{bound}{e.lock_count - e.main_table_count}", main, spill]
        if truth is not None:
            t = truth.executions[i] if i < len(truth.executions) else None
            row.append(_truth_cell(e, t))
        if fp.assumed is not None:
            row.append(str(sum(not lk.assumed_fastpath for lk in e.locks)))
        table.add_row(*row)
    return table


def _truth_cell(model: TransactionExecution, truth: TransactionExecution | None) -> Text:
    """The executed run's counts, ✓ when lockscope's model holds exactly the same locks (relation, mode and
    fast-path flag) and says it is exact; a lower bound is shown as such, a difference loudly."""
    if truth is None:
        return Text("-")
    same = _lock_set(truth) == _lock_set(model)
    text = f"{truth.lock_count}, {truth.main_table_count} "
    if not model.exact:
        return Text(text + ("(model: lower bound, equal)" if same else "(model: lower bound)"), style="yellow")
    return Text(text + ("✓" if same else "≠ model"), style="dim" if same else "bold white on red")


def _lock_set(e: TransactionExecution) -> set[tuple[int, str, bool]]:
    return {(lk.relation_oid, str(lk.mode), lk.fastpath) for lk in e.locks}


def steps_table(e: TransactionExecution, title: str) -> Table:
    """Statement by statement: its phase, the locks it adds (its own, then a real execution's extra ones), the
    locks held after it, of which in the main lock table, and what its execution runs (foreign-key checks and
    actions, with their phases)."""
    table = Table(title=title, title_justify="left", header_style="bold")
    columns: tuple[tuple[str, JustifyMethod], ...] = (
        ("#", "right"), ("statement", "left"), ("phase", "left"), ("adds", "right"), ("held", "right"),
        ("main", "right"), ("its execution also runs", "left"))
    for col, just in columns:
        table.add_column(col, justify=just)
    for step in e.steps:
        table.add_row(str(step.number), _one_line(step.statement),
                      str(step.execution.phase), _adds(step), str(step.held_after),
                      Text(str(step.main_after), style="bold red" if step.main_after else "green"), _runs(step))
    return table


def _one_line(text: str, width: int = 60) -> str:
    """A statement on one line of at most ``width`` characters (the JSON has the whole text)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 3] + "..."


def _adds(step: StatementStep) -> Text:
    ex = step.execution
    own = len(ex.locks) + len(ex.executor_index_locks)
    text = Text(str(own))
    if ex.execution_locks:
        text.append(f" +{len(ex.execution_locks)}", style="yellow")
    return text


def _runs(step: StatementStep) -> str:
    """The queries the execution runs inside (foreign-key checks and actions, with their phases), and the locks
    it takes without a query (sequences, routing, PG 19's foreign-key fast path, ...), counted by source."""
    ex = step.execution
    parts = [f"{what} ({phase})" for what, phase in ex.query_phases]
    direct = Counter(str(lk.source) for lk in ex.execution_locks if lk.order_rule == "execution")
    parts += [f"{source} x{n}" for source, n in direct.items()]
    return "; ".join(dict.fromkeys(parts)) or "-"


def render_transactions(footprints: Sequence[TransactionFootprint],
                        truths: Sequence[TransactionFootprint | None] | None = None, *,
                        verbose: bool = False) -> Group:
    """Everything ``footprint`` shows for a script's transactions: per transaction its statements, the
    per-execution table, the statement-by-statement view of the execution that holds the most main-table locks
    (every execution with ``verbose``), and what could not be derived."""
    parts: list[RenderableType] = []
    for n, fp in enumerate(footprints):
        truth = truths[n] if truths is not None and n < len(truths) else None
        kind = "BEGIN ... COMMIT" if fp.explicit else "autocommit"
        method = "run for real on the scratch server" if fp.method == "executed" else "EXPLAIN only, never run"
        parts.append(Text(f"transaction at line {fp.line} ({kind}, {len(fp.statements)} statement"
                          f"{'s' if len(fp.statements) != 1 else ''}; protocol {fp.protocol}, plan_cache_mode "
                          f"{fp.plan_cache_mode}; {method})", style="bold"))
        parts.append(transaction_table(fp, truth))
        shown = fp.executions if verbose else (max(fp.executions, key=lambda e: (e.main_table_count,
                                                                                   e.lock_count)),)
        for e in shown:
            parts.append(steps_table(e, f"execution {e.number}, statement by statement"))
        for unknown in fp.unknowns:
            parts.append(Text(f"unknown (the figures marked ≥ are lower bounds): {unknown}", style="yellow"))
        for note in fp.notes:
            parts.append(Text(f"assumed: {note}", style="dim"))
    return Group(*parts)
