"""Rich renderables for footprints (the CLI prints them; nothing here prints)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Group, JustifyMethod, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from ..footprint import Execution, Footprint
from ..versions import major_of
from ..vocab import FootprintSource

__all__ = ["footprint_table", "mismatch_panel", "partition_summary", "relations_table", "render_footprints",
           "short_statement", "source_line"]


def _bound(e: Execution) -> str:
    """``""`` for an exact figure, ``≥`` for a lower bound (the execution has unknowns), ``≤`` for an upper bound
    (partitions whose pruning a derived footprint could not decide), ``~`` for both."""
    if e.exact:
        return ""
    if e.unknowns and e.at_most:
        return "~"
    return "≥" if e.unknowns else "≤"


def _main_cell(e: Execution) -> Text:
    style = "bold red" if e.real_main_table_count else "green"
    return Text(f"{_bound(e)}{e.real_main_table_count}", style=style)


def _exact_cell(e: Execution) -> Text:
    if e.exact:
        return Text("✓", style="green")
    if e.unknowns and e.at_most:
        return Text("neither bound", style="yellow")
    return Text("lower bound" if e.unknowns else "upper bound", style="yellow")


def _explain_cell(e: Execution) -> Text:
    text = Text(f"{e.lock_count}")
    text.append(f" ({e.main_table_count} main)", style="bold red" if e.main_table_count else "dim")
    if e.mismatches:
        text.append(" MISMATCH", style="bold white on red")
    return text


def _added_cell(e: Execution) -> Text:
    extra = len(e.executor_index_locks) + len(e.execution_locks)
    if not extra and e.exact:
        return Text("-", style="dim")
    text = Text(f"{_bound(e)}+{extra}")
    extra_main = e.real_main_table_count - e.main_table_count
    if extra_main:
        text.append(f" ({extra_main} main)", style="bold red")
    return text


def _mode_cell(e: Execution) -> Text:
    text = Text(f"{_bound(e)}{e.real_lock_count}")
    text.append(f" {_bound(e)}{e.real_main_table_count} main",
                style="bold red" if e.real_main_table_count else "green")
    text.append(f" {e.phase}", style="dim")
    if e.mismatches:
        text.append(" MISMATCH", style="bold white on red")
    return text


#: The summary table's caption: what its columns are.
TOTALS_CAPTION = ("locks, fast-path, main: what PostgreSQL holds at the end of the execution, its EXPLAIN's locks "
                  "and those a real execution adds (a reused generic plan's index scans, sequences, routed "
                  "partitions, foreign-key checks and actions, triggers' statements); ✓ exact, ≥ a lower bound "
                  "(why: below); EXPLAIN: what EXPLAIN alone takes, measured; + execution: what running it adds, "
                  "modelled (--verbose lists every lock)")


def footprint_table(footprints: Sequence[Footprint], title: str | None = None) -> Table:
    """The per-execution summary table, totals first.

    One footprint: one row per execution with phase, plan type, the locks a real execution holds (relation locks,
    fast-path, main table; ``≥`` when a lower bound), whether that is exact, its breakdown (what EXPLAIN takes,
    measured; what executing adds, modelled), capacity, and the ``--assume-*`` main-table count when present.
    Several footprints (the plan_cache_modes of ``--plan-cache-mode all``): one row per execution, the modes side by
    side, each cell ``locks / main-table locks / phase``.
    """
    first = footprints[0]
    table = Table(title=title, title_justify="left", header_style="bold")
    if len(footprints) > 1:
        table.add_column("exec", justify="right")
        for fp in footprints:
            table.add_column(f"{fp.plan_cache_mode}: locks, main, phase")
        for i in range(max(len(fp.executions) for fp in footprints)):
            cells: list[RenderableType] = [str(i + 1)]
            cells += [_mode_cell(fp.executions[i]) if i < len(fp.executions) else "" for fp in footprints]
            table.add_row(*cells)
    else:
        columns: tuple[tuple[str, JustifyMethod], ...] = (
            ("exec", "right"), ("phase", "left"), ("plan", "left"), ("locks", "right"), ("fast-path", "right"),
            ("main", "right"), ("exact", "left"), ("EXPLAIN", "right"), ("+ execution", "right"), ("slots", "right"))
        for col, just in columns:
            table.add_column(col, justify=just)
        if first.assumed is not None:
            a = first.assumed
            table.add_column(f"main if PG{major_of(a.server_version_num)}/{a.max_locks_per_transaction}",
                             justify="right")
        for e in first.executions:
            row: list[RenderableType] = [str(e.number), e.phase, e.plan_type or "-",
                                         f"{_bound(e)}{e.real_lock_count}", f"{_bound(e)}{e.real_fastpath_count}",
                                         _main_cell(e), _exact_cell(e), _explain_cell(e), _added_cell(e),
                                         first.capacity.short()]
            if first.assumed is not None:
                row.append(f"{_bound(e)}{e.real_assumed_main_table_count}")
            table.add_row(*row)
    caption = TOTALS_CAPTION if first.source is not FootprintSource.DERIVED else \
        TOTALS_CAPTION.replace("EXPLAIN alone takes, measured", "EXPLAIN alone would take, derived from the catalog")
    unknowns = list(dict.fromkeys(u for fp in footprints for e in fp.executions for u in e.unknowns))
    notes = list(dict.fromkeys(n for fp in footprints for e in fp.executions for n in e.notes))
    at_most = list(dict.fromkeys(u for fp in footprints for e in fp.executions for u in e.at_most))
    caption += "".join(f"\nunknown: {u}" for u in unknowns)
    caption += "".join(f"\nat most: {u}" for u in at_most)
    caption += "".join(f"\nassumed: {n}" for n in notes)
    table.caption = caption
    table.caption_justify = "left"
    return table


def relations_table(e: Execution, title: str) -> Table:
    """The relation list of one execution: name, OID, role, mode, fast-path group, measured and predicted
    fast-path, lock partition; its caption sums the main-table locks per lock partition."""
    table = Table(title=title, title_justify="left", header_style="bold")
    columns: tuple[tuple[str, JustifyMethod], ...] = (
        ("#", "right"), ("relation", "left"), ("oid", "right"), ("role", "left"), ("mode", "left"),
        ("group", "right"), ("fastpath", "left"), ("predicted", "left"), ("partition", "right"))
    for col, just in columns:
        table.add_column(col, justify=just)
    for lock in e.locks:
        measured = Text("yes" if lock.fastpath else "no (main table)", style="" if lock.fastpath else "red")
        predicted = Text("yes" if lock.predicted_fastpath else "no",
                         style="bold white on red" if lock.mismatch else "dim")
        table.add_row(str(lock.order + 1), lock.relation, str(lock.relation_oid), lock.role, lock.mode,
                      str(lock.fast_path_group), measured, predicted, str(lock.lock_partition))
    for lock in e.executor_index_locks + e.execution_locks:
        predicted = Text("yes" if lock.fastpath else "no (main table)", style="dim" if lock.fastpath else "red")
        taken = "real execution" if not lock.detail else f"real execution: {lock.source}, {lock.detail}"
        table.add_row(str(lock.order + 1), lock.relation, str(lock.relation_oid), lock.role, lock.mode,
                      str(lock.fast_path_group), Text(taken, style="dim"), predicted, str(lock.lock_partition))
    if e.real_main_table_count:
        table.caption = partition_summary(e)
        table.caption_justify = "left"
    return table


def partition_summary(e: Execution) -> str:
    """``main-table locks per lock partition: p3 5, p7 2 (hottest p3: 5 of 7 ...)`` ('' without any): what a real
    execution holds."""
    load = e.real_partition_load
    if not any(load):
        return ""
    parts = ", ".join(f"p{p} {n}" for p, n in enumerate(load) if n)
    hottest = max(range(len(load)), key=lambda p: load[p])
    return (f"main-table locks per lock partition: {parts} (hottest p{hottest}: {load[hottest]} of "
            f"{e.real_main_table_count}; each takes that partition's LWLock:LockManager)")


def mismatch_panel(footprints: Sequence[Footprint]) -> Panel | None:
    """A loud red panel listing every lock whose measured fast-path flag differs from the model, or None."""
    lines = []
    for fp in footprints:
        for e in fp.executions:
            for lock in e.mismatches:
                lines.append(
                    f"{fp.plan_cache_mode} exec {e.number}: {lock.relation} ({lock.mode}, group "
                    f"{lock.fast_path_group}) measured fastpath={lock.fastpath}, predicted={lock.predicted_fastpath}"
                )
    if not lines:
        return None
    body = "\n".join(lines[:40]) + (f"\n... {len(lines) - 40} more" if len(lines) > 40 else "")
    body += ("\nPossible causes: another session holds a strong lock hashing to the same strong-lock partition, "
             "or the acquisition order differs from the model. Please report it.")
    return Panel(body, title=f"MODEL MISMATCH: {len(lines)} lock(s)", style="bold red")


def source_line(fp: Footprint) -> Text | None:
    """Where the footprint comes from when it is not a plain measurement: ``derived from the catalog`` (EXPLAIN
    denied: nothing measured, fast-path flags from the model) or ``measured through the EXPLAIN helper``, with the
    GRANTs that would let lockscope measure it; None for a plain measurement."""
    grants = " ".join(dict.fromkeys(g.grant for g in fp.privilege_gaps))
    if fp.source is FootprintSource.DERIVED:
        helper = (f"the EXPLAIN helper's owner lacks: {' '.join(dict.fromkeys(g.grant for g in fp.helper_gaps))}"
                  if fp.helper_gaps else "or the EXPLAIN helper: docs/privileges.md")
        return Text(f"DERIVED from the catalog, not measured: this role may not EXPLAIN the statement. To measure it: "
                    f"{grants} ({helper}). Fast-path flags are the model's.", style="bold yellow")
    if fp.source is FootprintSource.HELPER:
        return Text(f"measured through the EXPLAIN helper {fp.helper} (this role may not EXPLAIN the statement "
                    f"itself: {grants})", style="yellow")
    return None


def short_statement(text: str, *, max_lines: int = 6, max_chars: int = 600) -> str:
    """The statement as shown in a terminal: whole when short, else its start and its size (lines, characters)."""
    lines = text.splitlines()
    if len(lines) <= max_lines and len(text) <= max_chars:
        return text
    head = "\n".join(lines[:max_lines])[:max_chars].rstrip()
    return f"{head}\n... ({len(lines):,} lines, {len(text):,} characters in all; --json has the whole text)"


def render_footprints(footprints: Sequence[Footprint], *, verbose: bool = False) -> Group:
    """Everything the ``footprint`` command shows: summary table, mismatches, relation lists with verbose."""
    first = footprints[0]
    head = (f"PostgreSQL {first.server_version}, max_locks_per_transaction="
            f"{first.capacity.max_locks_per_transaction}: {first.capacity.describe()} per backend; "
            f"protocol {first.protocol}")
    if first.assumed is not None:
        a = first.assumed
        head += (f"; assumed PostgreSQL {major_of(a.server_version_num)} with max_locks_per_transaction="
                 f"{a.max_locks_per_transaction}: {a.describe()}")
    parts: list[RenderableType] = [Text(head, style="bold"), Text(short_statement(first.statement), style="cyan")]
    source = source_line(first)
    if source is not None:
        parts.append(source)
    parts.append(footprint_table(footprints))
    panel = mismatch_panel(footprints)
    if panel is not None:
        parts.append(panel)
    if first.order_note:
        parts.append(Text(f"acquisition order unknown ({first.order_note}): locks listed in catalog order; the "
                          "main-table count per fast-path group is exact, which lock of a full group spills is not",
                          style="yellow"))
    if verbose:
        for fp in footprints:
            previous: tuple[tuple[int, str, bool], ...] | None = None
            for e in fp.executions:
                key = tuple((lk.relation_oid, lk.mode, lk.fastpath) for lk in e.real_locks)
                if key == previous:
                    continue
                previous = key
                parts.append(relations_table(e, f"{fp.plan_cache_mode} execution {e.number} ({e.phase})"
                                             if fp.protocol == "prepared" else "relation locks"))
    return Group(*parts)
