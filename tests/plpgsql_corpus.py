"""The trigger corpus of ``tests/test_plpgsql.py``: real-world trigger functions (``tests/data/plpgsql``) and the
census's PL/pgSQL cases (``tests/data/txn``), each with the statements that fire its triggers and, per statement,
the derived statements that really run.

A case file of ``tests/data/plpgsql`` is set-up SQL (run once in a schema named after the file), then one or more
events::

    -- event: insert into t values (1);          (one statement, executed for real on a scratch server)
    -- runs: fn:3 other_fn:7                     (function:line of the derived statements that run for it)
    -- dynamic: fn:5                             (optional: lines whose locks are not derivable, e.g. EXECUTE)
    -- unreached: fn:9                           (once, anywhere after the events: derived statements no event runs)

Every statement derived from a firing trigger is in a ``runs`` line or the ``unreached`` line. Lines count in the
function's source (``pg_proc.prosrc``) from 1, as PostgreSQL's error context does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from .txn_oracle import Case, Stmt, load_cases

__all__ = ["CORPUS_DIR", "TXN_EVENTS", "Event", "TriggerCase", "load_trigger_cases"]

CORPUS_DIR = Path(__file__).parent / "data" / "plpgsql"


@dataclass(frozen=True)
class Event:
    """One statement that fires triggers, and what of the derivation runs for it.

    :ivar stmt: the statement (run with the simple protocol, values bound on the client).
    :ivar runs: ``(function name, line)`` of the derived statements that run.
    :ivar dynamic: ``(function name, line)`` of not-derivable statements that run.
    """

    stmt: Stmt
    runs: tuple[tuple[str, int], ...]
    dynamic: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class TriggerCase:
    """A schema with triggers and the events that fire them.

    :ivar case: the set-up as a census case (schema = its name; no transaction of its own).
    :ivar events: the events, in order.
    :ivar unreached: ``(function name, line)`` of the derived statements no event runs.
    """

    case: Case
    events: tuple[Event, ...]
    unreached: tuple[tuple[str, int], ...] = ()

    @property
    def name(self) -> str:
        return self.case.name


def _pairs(text: str) -> tuple[tuple[str, int], ...]:
    return tuple((fn, int(line)) for fn, line in (item.rsplit(":", 1) for item in text.split()))


def _load(path: Path) -> TriggerCase:
    text = path.read_text()
    head, _, rest = text.partition("\n-- event: ")
    events: list[Event] = []
    for chunk in ("-- event: " + rest).split("\n-- event: "):
        lines = chunk.removeprefix("-- event: ").strip().splitlines()
        if not lines or not lines[0].strip():
            continue
        spec = {m[1]: m[2] for m in (re.match(r"-- (runs|dynamic):(.*)$", line) for line in lines[1:]) if m}
        events.append(Event(Stmt(lines[0].strip().rstrip(";")), _pairs(spec.get("runs", "")),
                            _pairs(spec.get("dynamic", ""))))
    title = head.splitlines()[0].lstrip("- ").strip()
    unreached = re.search(r"^-- unreached:(.*)$", rest, re.M)
    return TriggerCase(Case(path.stem, title, head, ()), tuple(events), _pairs(unreached[1]) if unreached else ())


_Lines = tuple[tuple[str, int], ...]
#: The census's PL/pgSQL cases (tests/data/txn): what of their trigger functions runs for their transaction (runs,
#: dynamic, unreached).
TXN_EVENTS: dict[str, tuple[_Lines, _Lines, _Lines]] = {
    "before_row_trigger": ((("line_price", 3),), (), ()),
    "after_row_audit": ((("item_audit", 3),), (), ()),
    "statement_trigger": ((("hit_count", 3),), (), ()),
    "dynamic_sql_trigger": ((), (("bump", 3),), ()),
    "kong_create_route": ((("sync_tags", 10),), (), (("sync_tags", 4), ("sync_tags", 7))),
    "kong_add_plugin": ((("sync_tags", 10),), (), (("sync_tags", 4), ("sync_tags", 7))),
    "kong_delete_route": ((("sync_tags", 7),), (), (("sync_tags", 4), ("sync_tags", 10))),
}


def load_trigger_cases() -> tuple[TriggerCase, ...]:
    """Every case: the files of :data:`CORPUS_DIR` (by name), then the census cases of :data:`TXN_EVENTS`."""
    cases = [_load(p) for p in sorted(CORPUS_DIR.glob("*.sql"))]
    for case in load_cases(TXN_EVENTS):
        runs, dynamic, unreached = TXN_EVENTS[case.name]
        events = tuple(Event(stmt, runs, dynamic) for stmt in case.statements)
        cases.append(TriggerCase(Case(case.name, case.title, case.setup, ()), events, unreached))
    return tuple(cases)
