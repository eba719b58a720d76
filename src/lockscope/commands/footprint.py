"""``lockscope footprint``: the relation-lock footprint of one statement."""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..capacity import CapacityModel
from ..errors import EXIT_SPILL, BadInputError
from ..pgbin.cache import resolve_pg_bin
from ..privileges import HELPER_SIGNATURE
from ..vocab import PlanCacheMode
from ._common import (
    DEFAULT_EXECUTIONS,
    MLPT_DEFAULT_HELP,
    add_assume_options,
    add_executions_option,
    add_json_option,
    add_parser,
    add_probe_rate_option,
    add_protocol_option,
    add_scratch_options,
    add_statement_input,
    add_target_options,
    add_timeout_options,
    check_assume_options,
    check_mlpt_option,
    choose_command_target,
    read_statement_input,
)
from ._migration import add_budget_options, check_migration_only, is_migration, run_migration, wants_job
from ._output import check_writable, make_console, note, print_probe_cost, read_text, target_line, write_json

if TYPE_CHECKING:
    from rich.console import Console

    from ..db import Endpoint, ProbeCost
    from ..footprint import Footprint
    from ..script import Script
    from ..statement import CheckedStatement
    from ..target import Target
    from ..transaction import TransactionFootprint

#: JSON schema of several statements' footprints (one ``lockscope/footprint/v2`` document each).
FOOTPRINTS_SCHEMA = "lockscope/footprints/v2"

_PLAN_CACHE_HELP = (
    "plan_cache_mode of the prepared executions: auto (PostgreSQL's default: 5 custom plans, then a generic plan "
    "is built at execution 6 and kept if it is cheaper), force_custom_plan (plan every execution with its "
    "values), force_generic_plan (build the generic plan at execution 1, reuse it after), or all (the three side "
    "by side); implies --protocol prepared when given (default auto)")


def fail_on_condition(text: str) -> tuple[str, int]:
    """argparse type of ``footprint --fail-on``: ``spill``, ``assumed-spill``, ``exhaustion`` or ``locks:N`` ->
    (name, N or 0)."""
    name, sep, value = text.strip().partition(":")
    if name in ("spill", "assumed-spill", "exhaustion") and not sep:
        return name, 0
    if name == "locks" and sep and value.strip().isdigit():
        return name, int(value)
    raise argparse.ArgumentTypeError(f"not a condition: {text!r} (spill, assumed-spill, exhaustion, locks:N)")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``footprint`` sub-command."""
    fp = add_parser(
        sub, "footprint",
        help="relation locks a statement takes, per plan-cache phase, fast-path vs main lock table",
        description="Measure the relation-lock footprint of a statement from pg_locks (EXPLAIN only, in a "
                    "READ ONLY transaction that is always rolled back) with the capacity model's prediction "
                    "beside it; a file of statements gives one result per statement. The server: --dsn (or psql's "
                    "-h -p -U -d), else the PG* environment, else libpq's defaults (the local socket), as for psql; "
                    "--scratch starts an empty scratch PostgreSQL 18 instead (use --setup to create tables on it). "
                    "The first line names the server; before probing, a line says how many pg_locks reads it will "
                    "make at most (one per plan-cache phase of the statement and of each query its execution runs, "
                    "2 per second at most on your server); the last line on stderr gives the reads made.",
        exit_codes=(0, 1, 2, 3, 4, EXIT_SPILL, 130, 143),
    )
    add_statement_input(fp, several=True, what="measure")
    add_target_options(fp, what="probe", scratch="an empty scratch PostgreSQL (see --setup)")
    fp.add_argument("--setup", metavar="FILE", type=Path,
                    help="SQL script run on the scratch server before probing (with --scratch only)")
    add_scratch_options(fp, mlpt_default=MLPT_DEFAULT_HELP)
    fp.add_argument("--param", action="append", default=[], metavar="VALUE",
                    help="value for $1, $2, ... in order (repeat the option)")
    fp.add_argument("--param-type", action="append", default=[], metavar="TYPE",
                    help="declared type of $1, $2, ... for PREPARE (prepared protocol)")
    add_protocol_option(
        fp, default="simple",
        meaning="how the statement is sent, as pgbench -M: simple and extended plan every execution with its "
                "values (one EXPLAIN shows the footprint; extended is measured as simple: the same locks); "
                "prepared runs PREPARE once, then EXPLAIN EXECUTE for executions 1..N, each through the plan "
                "cache (custom, generic-build, generic-reuse)")
    fp.add_argument("--plan-cache-mode", choices=[*(m.value for m in PlanCacheMode), "all"],
                    help=_PLAN_CACHE_HELP)
    add_executions_option(fp, what="probed with --protocol prepared")
    fp.add_argument("--no-row-reads", action="store_true",
                    help="read no table: by default the rows a write reaches (by its key, and those its foreign-key "
                         "actions reach) are read with lockscope's own key lookups (at most 1,000 rows each, READ "
                         "ONLY, under --statement-timeout), since its execution locks depend on them; without, "
                         "an execution whose rows matter is labelled a lower bound")
    fp.add_argument("--explain-helper", metavar="SIGNATURE", default=HELPER_SIGNATURE,
                    help="when this role may not EXPLAIN a statement (no SELECT on its tables), EXPLAIN through "
                         "this SECURITY DEFINER function if the server has it and the role may call it "
                         "(contrib/explain_helper.sql, docs/privileges.md; lockscope never creates it); 'none': "
                         "never. Without it the footprint is derived from the catalog and labelled so "
                         f"(default {HELPER_SIGNATURE})")
    add_assume_options(fp)
    add_timeout_options(fp)
    add_probe_rate_option(fp)
    add_json_option(fp, schema="lockscope/footprint/v2; lockscope/footprints/v2 for several statements")
    fp.add_argument("-v", "--verbose", action="store_true", help="list every locked relation")
    fp.add_argument("--fail-on", action="append", default=[], type=fail_on_condition, metavar="CONDITION",
                    help=f"CI gate: exit {EXIT_SPILL} when a statement meets CONDITION (repeat for several): spill "
                         "(an execution put a lock in the main lock table), assumed-spill (it would under "
                         "--assume-version/--assume-mlpt), locks:N (an execution takes more than N relation "
                         "locks); exhaustion (a job's transaction needs more lock-table entries than the "
                         "budget: --assume-mlpt, --assume-max-connections, --assume-max-prepared-transactions, "
                         "--budget-from; with --scratch, the file runs as a job)")
    add_budget_options(fp)
    fp.add_argument("--fail-on-spill", action="append_const", dest="fail_on", const=("spill", 0),
                    help="the same as --fail-on spill")
    fp.set_defaults(handler=run)


def _read_input(args: argparse.Namespace, protocol: str, text: str | None = None) -> tuple[str, Script]:
    """The input text and the script it is (transactions, pgbench variables: :func:`lockscope.script.read_script`).

    :raises BadInputError: unreadable input, a script lockscope cannot read (its line named).
    """
    from ..script import read_script
    from ..statement import check_statements

    if text is None:
        text = read_statement_input(args, command="footprint")
    assert text is not None
    try:
        return text, read_script(text, protocol=protocol, where=_where(args))
    except BadInputError:
        check_statements(text, where=_where(args))  # a statement's own refusal says more (its character)
        raise


def _where(args: argparse.Namespace) -> str:
    return str(args.file) if args.file is not None and str(args.file) != "-" else ""


def _transaction_input(script: Script, scratch: bool) -> bool:
    """Transactions (``BEGIN ... COMMIT``), a pgbench script, or (on a scratch server, where it runs) DDL: measured
    as transactions; else statement by statement as before."""
    from ..statement import PROBEABLE_KINDS

    ddl = any(s.kind not in PROBEABLE_KINDS for s in script.statements)
    return script.has_blocks or script.pgbench or (scratch and ddl)  # DDL on a scratch server: commands._migration


def _check_executions(args: argparse.Namespace, protocol: str, statements: Sequence[CheckedStatement]) -> None:
    """``--executions`` with the simple protocol matters only where a plan cache advances anyway: a statement that
    writes (its foreign-key checks' and triggers' queries) or a transaction.

    :raises BadInputError: it would be ignored.
    """
    if args.executions is not None and protocol != "prepared" and all(c.kind == "SELECT" for c in statements):
        raise BadInputError(f"--executions applies to --protocol prepared, to transactions and to statements that "
                            f"write: with {args.protocol or 'simple'}, every execution of a SELECT is planned afresh "
                            "and one probe shows the footprint")


def failed_conditions(footprints: Sequence[Footprint], conditions: Sequence[tuple[str, int]]) -> list[str]:
    """The ``--fail-on`` conditions these footprints meet, in words (empty: the gate passes)."""
    out = []
    for name, n in conditions:
        if name == "spill" and any(fp.spilled for fp in footprints):
            out.append("spill: an execution put locks in the main lock table")
        elif name == "assumed-spill" and any(e.real_assumed_main_table_count for fp in footprints
                                             for e in fp.executions):
            out.append("assumed-spill: an execution would put locks in the main lock table under the assumed "
                       "capacity")
        elif name == "locks":
            most = max((e.real_lock_count for fp in footprints for e in fp.executions), default=0)
            if most > n:
                out.append(f"locks:{n}: an execution takes {most} relation locks")
    return out


def _assumed_model(args: argparse.Namespace, facts_version: int, facts_mlpt: int) -> CapacityModel | None:
    if args.assume_version is None and args.assume_mlpt is None:
        return None
    version = facts_version
    if args.assume_version is not None:
        version = args.assume_version * 10000
    return CapacityModel(version, args.assume_mlpt or facts_mlpt)


def _check_options(args: argparse.Namespace) -> tuple[str, str]:
    """Refuse option combinations that would be ignored; return (protocol, plan_cache_mode) to measure with."""
    given = args.protocol
    mode = args.plan_cache_mode
    if given is None:  # --plan-cache-mode or --executions alone imply the prepared protocol
        given = "prepared" if mode is not None or args.executions is not None else args.protocol_default
    protocol = "simple" if given == "extended" else given
    if mode is not None and protocol != "prepared":
        raise BadInputError(f"--plan-cache-mode applies to --protocol prepared, not {given}: with {given}, "
                            "every execution is planned with its values")
    if args.executions is not None and args.executions > 100:
        raise BadInputError("--executions: at most 100")
    if args.param_type and protocol != "prepared":
        raise BadInputError("--param-type applies to --protocol prepared")
    check_assume_options(args)
    check_mlpt_option(args.mlpt)
    if any(name == "assumed-spill" for name, _ in args.fail_on) and args.assume_version is None \
            and args.assume_mlpt is None:
        raise BadInputError("--fail-on assumed-spill needs --assume-version or --assume-mlpt")
    return protocol, mode or "auto"


def _open_footprint_target(args: argparse.Namespace) -> tuple[Any, AbstractContextManager[Target]]:
    """The server footprint measures on (``--dsn`` and the PG* environment, or ``--scratch`` with ``--setup``,
    ``--pg-bin`` and ``--mlpt``), chosen and not yet opened: (the :class:`lockscope.target.TargetChoice`, the
    :func:`lockscope.target.open_target` context with the session settings of the probe options).

    :raises BadInputError: a scratch-only option without ``--scratch``, an unreadable set-up script, an unknown
        ``--pg-bin``.
    """
    from ..server import ScratchSettings
    from ..target import open_target

    choice = choose_command_target(args, scratch_only={"--setup": args.setup, "--pg-bin": args.pg_bin,
                                                       "--mlpt": args.mlpt})
    setup = read_text(args.setup, "set-up script") if args.setup is not None else None
    pg_bin = resolve_pg_bin(args.pg_bin) if args.pg_bin else None
    return choice, open_target(choice.dsn, pg_bin=pg_bin, settings=ScratchSettings(max_locks_per_transaction=args.mlpt),
                               setup_sql=setup, lock_timeout_ms=args.lock_timeout,
                               statement_timeout_ms=args.statement_timeout,
                               pg_locks_rate_hz=choice.pg_locks_rate_hz(args.probe_rate))


def _helper_signature(text: str) -> str | None:
    """``--explain-helper``: a function signature ``schema.name(text, text)``, or None for ``none``.

    :raises BadInputError: not a signature of that shape.
    """
    if text.strip().lower() == "none":
        return None
    if not re.fullmatch(r'[A-Za-z_][\w$]*\.[A-Za-z_][\w$]*\(\s*text\s*,\s*text\s*\)', text.strip()):
        raise BadInputError(f"--explain-helper {text!r}: give schema.name(text, text), or none")
    return text.strip()


def run(args: argparse.Namespace, console: Console) -> int:
    """Measure, render (table or JSON), and return the exit code."""
    from ..footprint import measure_all_modes, measure_footprint
    from ..report.terminal import render_footprints
    from ..statement import check_param_count, check_statements

    # everything the user gave is checked before any server is started or contacted
    given = read_statement_input(args, command="footprint")
    if args.scratch:
        _, script = _read_input(args, "simple", given)
        if args.job or is_migration(script, True) or wants_job(args):
            return run_migration(args, console, script)
    check_migration_only(args)
    protocol, mode = _check_options(args)
    text, script = _read_input(args, protocol, given)
    is_migration(script, bool(args.scratch), where=_where(args))  # DDL without --scratch: refused, with --scratch
    if _transaction_input(script, bool(args.scratch)):
        return run_transactions(args, console, text, script, protocol, mode)
    statements = check_statements(text, where=_where(args))
    _check_executions(args, protocol, statements)
    if len(statements) > 1 and (args.param or args.param_type):
        raise BadInputError(f"--param and --param-type apply to one statement, not to {len(statements)}")
    for checked in statements:
        check_param_count(checked, args.param, args.param_type if protocol == "prepared" else ())
    check_writable(args.json)
    helper = _helper_signature(args.explain_helper)
    choice, opened = _open_footprint_target(args)
    to_stdout = args.json is not None and str(args.json) == "-"
    info = make_console(stderr=True) if to_stdout else console
    results: list[tuple[Footprint, ...]] = []
    with opened as target:
        facts = target.session.facts
        note(info, target_line("footprint", target.session.endpoint.label(),
                               choice.describe(facts.max_locks_per_transaction)))
        assume = _assumed_model(args, facts.server_version_num, facts.max_locks_per_transaction)
        kwargs: dict[str, Any] = {"params": args.param, "param_types": args.param_type,
                                  "executions": args.executions or DEFAULT_EXECUTIONS, "assume": assume,
                                  "read_rows": not args.no_row_reads,
                                  "helper_signature": helper,
                                  "announce": _announcer(info, target.session.pg_locks_rate_hz)}
        for checked in statements:
            if mode == "all":
                results.append(measure_all_modes(target.session, checked.text, **kwargs))
            else:
                results.append((measure_footprint(target.session, checked.text, protocol=protocol,
                                                  plan_cache_mode=PlanCacheMode(mode), **kwargs),))
        endpoint = target.session.endpoint
        cost = target.session.probe_cost
    if args.json is not None:
        write_json(args.json, _json_doc(results, endpoint, choice.source, cost), info, stdout=console)
    if not to_stdout:
        for n, footprints in enumerate(results, 1):
            if len(results) > 1:
                console.print(f"statement {n} of {len(results)}", style="bold", markup=False, highlight=False)
            console.print(render_footprints(footprints, verbose=args.verbose))
    print_probe_cost("footprint", cost)
    failed = failed_conditions([fp for r in results for fp in r], args.fail_on)
    if failed:
        note(make_console(stderr=True), "lockscope footprint: --fail-on " + "; ".join(failed))
        return EXIT_SPILL
    return 0


def _announcer(console: Console, rate_hz: float) -> Callable[[int], None]:
    """The line said before a measurement's first pg_locks read: how many it makes at most, and how long they take
    at the session's pace."""
    def say(reads: int) -> None:
        pace = f" (paced at {rate_hz:g}/s: {max(0.0, (reads - 1) / rate_hz):.1f} s at most)" if rate_hz > 0 else ""
        note(console, f"lockscope footprint: at most {reads} pg_locks read{'s' if reads != 1 else ''}{pace}")
    return say


def _json_doc(results: list[tuple[Footprint, ...]], endpoint: Endpoint, chosen_by: str,
              cost: ProbeCost) -> dict[str, Any]:
    """The ``--json`` document: one statement's footprints, or ``lockscope/footprints/v2`` around several."""
    from ..report.jsonout import footprints_to_dict

    docs = []
    for footprints in results:
        doc = footprints_to_dict(footprints)
        doc["server"].update(host=endpoint.host, port=endpoint.port, database=endpoint.database,
                             user=endpoint.user, chosen_by=chosen_by)
        docs.append(doc)
    if len(docs) == 1:
        return {**docs[0], "probe_cost": cost.to_dict()}
    return {"schema": FOOTPRINTS_SCHEMA, "lockscope_version": docs[0]["lockscope_version"],
            "server": docs[0]["server"], "statements": docs,
            "spilled": any(d["spilled"] for d in docs), "exact": all(d["exact"] for d in docs),
            "mismatch_count": sum(d["mismatch_count"] for d in docs), "probe_cost": cost.to_dict()}


def run_transactions(args: argparse.Namespace, console: Console, text: str, script: Script, protocol: str,
                     mode: str) -> int:
    """Transaction footprints: each transaction of the script, execution after execution (EXPLAIN only on any
    server; on a scratch server also run for real, the measured truth beside the model; DDL only runs there)."""
    from ..executed import execute_scripts
    from ..report.txn_terminal import render_transactions
    from ..script import read_script
    from ..statement import PROBEABLE_KINDS
    from ..transaction import measure_transaction

    if args.param or args.param_type:
        raise BadInputError("--param and --param-type apply to one statement: a script gives its values with "
                            "pgbench's \\set lines and :variables")
    if mode == "all":
        raise BadInputError("--plan-cache-mode all applies to one statement: give one mode for a transaction")
    executions = args.executions or DEFAULT_EXECUTIONS
    scripts = [script, *(read_script(text, protocol=protocol, where=_where(args), execution=k)
                         for k in range(2, executions + 1))]
    check_writable(args.json)
    choice, opened = _open_footprint_target(args)
    to_stdout = args.json is not None and str(args.json) == "-"
    info = make_console(stderr=True) if to_stdout else console
    with opened as target:
        session = target.session
        facts = session.facts
        note(info, target_line("footprint", session.endpoint.label(), choice.describe(facts.max_locks_per_transaction)))
        assume = _assumed_model(args, facts.server_version_num, facts.max_locks_per_transaction)
        models: list[TransactionFootprint | None] = []
        for t, txn in enumerate(script.transactions):
            if any(s.kind not in PROBEABLE_KINDS for s in txn.statements) and target.server is not None:
                models.append(None)  # DDL: only the run on the scratch server measures it
                continue
            models.append(measure_transaction(session, [s.transactions[t] for s in scripts], protocol=protocol,
                                              plan_cache_mode=PlanCacheMode(mode), executions=executions,
                                              assume=assume, read_rows=not args.no_row_reads,
                                              announce=_announcer(info, session.pg_locks_rate_hz)))
        truths = execute_scripts(target.server.conninfo(), scripts, protocol=protocol,
                                 plan_cache_mode=PlanCacheMode(mode), executions=executions, assume=assume,
                                 statement_timeout_ms=args.statement_timeout) if target.server is not None else None
        endpoint = session.endpoint
        cost = session.probe_cost
    shown = [m if m is not None else truths[n] for n, m in enumerate(models)] if truths else \
        [m for m in models if m is not None]
    beside = [t if models[n] is not None else None for n, t in enumerate(truths)] if truths else None
    if args.json is not None:
        from ..report.jsonout import transactions_to_dict

        doc = transactions_to_dict(shown, beside)
        doc["server"].update(host=endpoint.host, port=endpoint.port, database=endpoint.database, user=endpoint.user,
                             chosen_by=choice.source)
        write_json(args.json, {**doc, "probe_cost": cost.to_dict()}, info, stdout=console)
    if not to_stdout:
        console.print(render_transactions(shown, beside, verbose=args.verbose))
    print_probe_cost("footprint", cost)
    failed = failed_transaction_conditions([*shown, *(truths or ())], args.fail_on)
    if failed:
        note(make_console(stderr=True), "lockscope footprint: --fail-on " + "; ".join(failed))
        return EXIT_SPILL
    return 0


def failed_transaction_conditions(footprints: Sequence[TransactionFootprint],
                                  conditions: Sequence[tuple[str, int]]) -> list[str]:
    """The ``--fail-on`` conditions transaction footprints meet, in words (empty: the gate passes)."""
    out = []
    for name, n in conditions:
        if name == "spill" and any(fp.spilled for fp in footprints):
            out.append("spill: a transaction holds locks in the main lock table")
        elif name == "assumed-spill" and any(not lk.assumed_fastpath for fp in footprints for e in fp.executions
                                             for lk in e.locks if lk.assumed_fastpath is not None):
            out.append("assumed-spill: a transaction would hold locks in the main lock table under the assumed "
                       "capacity")
        elif name == "locks":
            most = max((e.lock_count for fp in footprints for e in fp.executions), default=0)
            if most > n:
                out.append(f"locks:{n}: a transaction holds {most} relation locks")
    return out
