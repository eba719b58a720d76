"""EXPLAIN read as JSON: the facts lockscope takes from a plan, and the plan's text as EXPLAIN would print it.

lockscope asks for ``EXPLAIN (FORMAT JSON)`` and reads fields, never text (:func:`read_explain`):

- the index scan nodes' ``Index Name`` (Index Scan, Index Only Scan, Bitmap Index Scan): the executor index locks
  of reusing a generic plan;
- the scan nodes (``Node Type`` Seq Scan, Index Scan, Index Only Scan, Bitmap Heap Scan, Tid Scan, Tid Range Scan,
  Sample Scan, Foreign Scan, Custom Scan): the relations its execution initialises and scans;
- the ``Subplan Name`` ``CTE name`` of each CTE planned as its own subplan (materialised);
- ``$n`` in any field: a generic plan shows its parameters as ``$n``, a custom plan their values;
- ``Planning Time`` (``SUMMARY``) and ``Query Identifier`` (``VERBOSE``, PG 14+ with compute_query_id).

The plan's text (what ``EXPLAIN`` without options prints, shown in lockscope's JSON output) is rendered from the same
document as ``explain.c`` prints the text format (``ExplainNode``, ``ExplainTargetRel``, ``ExplainIndexScanDetails``,
``ExplainPropertyList``, ``show_grouping_set_keys``, ``show_modifytable_info``, ``show_tablesample``): the node line
with its costs, each property as ``Key: value``, children as ``->`` lines. ``tests/test_explain.py`` compares it
with the server's own text on every major. Pure functions: nothing here talks to a server.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from pglast.keywords import COL_NAME_KEYWORDS, RESERVED_KEYWORDS, TYPE_FUNC_NAME_KEYWORDS

__all__ = ["SCAN_NODES", "ExplainedPlan", "quote_identifier", "read_explain", "render_text"]

#: ``Node Type`` of the nodes that initialise and scan a relation (execMain.c ``ExecInitNode``: each opens and
#: starts its relation; a Bitmap Heap Scan counts once, its Bitmap Index Scans are index locks).
SCAN_NODES = frozenset({"Seq Scan", "Index Scan", "Index Only Scan", "Bitmap Heap Scan", "Tid Scan", "Tid Range Scan",
                        "Sample Scan", "Foreign Scan", "Custom Scan"})
_INDEX_SCANS = frozenset({"Index Scan", "Index Only Scan", "Bitmap Index Scan"})
_PARAM_REF = re.compile(r"\$\d+\b")


@dataclass(frozen=True)
class ExplainedPlan:
    """One ``EXPLAIN (FORMAT JSON)`` output, read.

    :ivar lines: the plan as EXPLAIN's text format prints it, one string per line (:func:`render_text`).
    :ivar index_names: names (unquoted, first occurrence order, plan order) of the index scan nodes' indexes. A real
        execution opens each with the scanned relation's lock mode at executor start (nodeIndexscan.c
        ``ExecInitIndexScan``, nodeIndexonlyscan.c ``ExecInitIndexOnlyScan``, nodeBitmapIndexscan.c
        ``ExecInitBitmapIndexScan``: ``index_open(indexid, rellockmode)``), but under EXPLAIN without ANALYZE those
        functions return before ``index_open`` (``EXEC_FLAG_EXPLAIN_ONLY``), so pg_locks never shows these locks
        after EXPLAIN. Subplans removed by initial pruning are not in the plan and are not opened.
    :ivar scanned_relations: relations the executor initialises and scans (count, at least 1: the plan's
        :data:`SCAN_NODES`). Subplans removed by initial pruning are not in the plan.
    :ivar cte_names: CTEs planned as their own subplans (``Subplan Name`` ``CTE name``: materialised).
    :ivar param_refs: a field shows a parameter as ``$n`` (a generic plan; a custom plan shows the values).
    :ivar planning_time_ms: ``Planning Time`` (ms; with ``SUMMARY``), else None.
    :ivar query_id: ``Query Identifier`` (with ``VERBOSE``, PG 14+ with compute_query_id), else None.
    :ivar total_cost: the top plan node's ``Total Cost`` (planner cost units, ``costsize.c``), summed over the
        planned queries; None without costs.
    :ivar relation_names: every ``Relation Name`` the plan shows (scans and ModifyTable targets): the relations that
        survived the planner's partition pruning.
    :ivar subplans_removed: ``Subplans Removed`` summed over the plan (subplans removed by initial pruning).
    """

    lines: tuple[str, ...] = ()
    index_names: tuple[str, ...] = ()
    scanned_relations: int = 1
    cte_names: frozenset[str] = frozenset()
    param_refs: bool = False
    planning_time_ms: float | None = None
    query_id: int | None = None
    total_cost: float | None = None
    relation_names: frozenset[str] = frozenset()
    subplans_removed: int = 0

    @property
    def pruning_signature(self) -> tuple[frozenset[str], int]:
        """What distinguishes one plan's partition pruning from another's: the relations it shows and the subplans
        initial pruning removed (two custom plans of one query with the same signature took the same planner
        locks: ``plancat.c get_relation_info`` opens every index of each relation that survived pruning)."""
        return self.relation_names, self.subplans_removed


@functools.lru_cache(maxsize=512)
def read_explain(document: str, *, verbose: bool = False) -> ExplainedPlan:
    """Read the text of one ``EXPLAIN (FORMAT JSON)`` result (a JSON array, one object per planned query: a rule
    can make several). The last 512 documents read are kept (a plan is immutable; probes of one statement get the
    same document again and again).

    :param verbose: the document is ``EXPLAIN (VERBOSE, FORMAT JSON)``'s: its ``Output`` fields count for
        :attr:`ExplainedPlan.param_refs` (a generic INSERT's ``$n`` show only there) and are left out of the lines.
    :raises ValueError: not EXPLAIN's JSON document.
    """
    doc = json.loads(document, parse_float=Decimal)
    if not isinstance(doc, list):
        raise ValueError("not an EXPLAIN (FORMAT JSON) document")
    refs = any(_PARAM_REF.search(text) for text in _strings(doc))
    if verbose:
        doc = _without(doc, "Output")
    nodes = [n for query in doc if isinstance(query, dict) for n in _walk(query.get("Plan", {}))]
    names = [str(n["Index Name"]) for n in nodes if n.get("Node Type") in _INDEX_SCANS and "Index Name" in n]
    ctes = {str(n["Subplan Name"])[4:] for n in nodes if str(n.get("Subplan Name", "")).startswith("CTE ")}
    first = doc[0] if doc and isinstance(doc[0], dict) else {}
    planning = first.get("Planning Time")
    query_id = first.get("Query Identifier")
    return ExplainedPlan(
        lines=render_text(doc),
        index_names=tuple(dict.fromkeys(names)),
        scanned_relations=max(1, sum(1 for n in nodes if n.get("Node Type") in SCAN_NODES)),
        cte_names=frozenset(ctes),
        param_refs=refs,
        planning_time_ms=None if planning is None else float(planning),
        query_id=None if query_id is None else int(query_id),
        total_cost=_total_cost(doc),
        relation_names=frozenset(str(v) for v in _values_of(doc, "Relation Name")),
        subplans_removed=sum(int(v) for v in _values_of(doc, "Subplans Removed")),
    )


def _without(value: Any, key: str) -> Any:
    """The document without ``key`` anywhere."""
    if isinstance(value, dict):
        return {k: _without(v, key) for k, v in value.items() if k != key}
    if isinstance(value, list):
        return [_without(v, key) for v in value]
    return value


def _values_of(value: Any, key: str) -> Iterator[Any]:
    """Every value of ``key`` anywhere in the document."""
    if isinstance(value, dict):
        for k, v in value.items():
            if k == key:
                yield v
            else:
                yield from _values_of(v, key)
    elif isinstance(value, list):
        for v in value:
            yield from _values_of(v, key)


def _total_cost(doc: list[Any]) -> float | None:
    costs = [q["Plan"]["Total Cost"] for q in doc if isinstance(q, dict) and isinstance(q.get("Plan"), dict)
             and "Total Cost" in q["Plan"]]
    return float(sum(costs)) if costs else None


def _walk(node: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """The plan's nodes in EXPLAIN's order (a node, then its ``Plans``: InitPlans, outer, inner, members,
    SubPlans), depth first."""
    yield node
    for child in node.get("Plans", ()):
        yield from _walk(child)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


# -- the text format ---------------------------------------------------------------------------------------------
_SIMPLE_NAME = re.compile(r"^[a-z_][a-z0-9_]*$")
_QUOTED_KEYWORDS = frozenset(RESERVED_KEYWORDS) | frozenset(COL_NAME_KEYWORDS) | frozenset(TYPE_FUNC_NAME_KEYWORDS)


def quote_identifier(name: str) -> str:
    """``name`` quoted as PostgreSQL's ``ruleutils.c quote_identifier`` does: unless it is lower-case letters,
    digits and underscores, not starting with a digit, and no keyword other than an unreserved one."""
    if _SIMPLE_NAME.match(name) and name not in _QUOTED_KEYWORDS:
        return name
    return '"' + name.replace('"', '""') + '"'


#: Fields the node line says (or the text format leaves out): every other field is a ``Key: value`` line.
_HEADER = frozenset({
    "Node Type", "Strategy", "Partial Mode", "Operation", "Parent Relationship", "Subplan Name",
    "Custom Plan Provider", "Parallel Aware", "Async Capable", "Relation Name", "Function Name",
    "Table Function Name", "CTE Name", "Tuplestore Name", "Schema", "Alias", "Index Name", "Scan Direction",
    "Join Type", "Command", "Startup Cost", "Total Cost", "Plan Rows", "Plan Width", "Plans", "Inner Unique",
})
#: Fields the text format prints only when they say something (``explain.c``: ``Disabled`` when true,
#: ``Single Copy`` when true, ``Subplans Removed`` and ``Planned Partitions`` when more than 0).
_ONLY_WHEN_SET = frozenset({"Disabled", "Single Copy", "Subplans Removed", "Planned Partitions"})
#: Fields the text format prints on the line of another (``Sampling``, PG 19's memoize ``Estimates``).
_FOLDED = frozenset({"Sampling Parameters", "Repeatable Seed", "Estimated Distinct Lookup Keys", "Estimated Lookups",
                     "Estimated Hit Percent"})
_TARGET_NAMES = ("Relation Name", "Function Name", "Table Function Name", "CTE Name", "Tuplestore Name")
_AGG_NAMES = {"Plain": "Aggregate", "Sorted": "GroupAggregate", "Hashed": "HashAggregate", "Mixed": "MixedAggregate"}
_FOREIGN_NAMES = {"Select": "Foreign Scan", "Insert": "Foreign Insert", "Update": "Foreign Update",
                  "Delete": "Foreign Delete"}


#: A utility statement among a rule's queries (``ExplainOneUtility``: a dummy group in JSON, a line in text).
_UTILITY_LINES = {"Notify": "NOTIFY", "Utility Statement": "Utility statements have no plan structure"}


def render_text(document: Sequence[Mapping[str, Any] | str]) -> tuple[str, ...]:
    """The lines EXPLAIN's text format prints for this JSON document (default options: costs, no ANALYZE; a
    summary, JIT and settings as the document has them). Plans of several queries (a rule's) are separated by an
    empty line (``ExplainSeparatePlans``); a utility statement among them is its line (``NOTIFY``); a query
    rewritten to nothing prints ``Query rewrites to nothing``."""
    if not document:
        return ("Query rewrites to nothing",)
    out: list[str] = []
    for n, query in enumerate(document):
        if n:
            out.append("")
        if isinstance(query, str):
            out.append(_UTILITY_LINES.get(query, query))
            continue
        if "Plan" in query:
            _node(out, query["Plan"], 0)
        _summary(out, query)
    return tuple(out)


def _summary(out: list[str], query: Mapping[str, Any]) -> None:
    """What follows the plan tree (``ExplainOnePlan``, ``ExplainPrintPlan``): settings, query identifier, planning
    time, JIT."""
    for key, value in query.items():
        if key == "Plan":
            continue
        if key == "JIT":
            out.append("JIT:")
            out.append(f"  Functions: {value.get('Functions')}")
            options = value.get("Options", {})
            out.append("  Options: " + ", ".join(f"{k} {_text(v)}" for k, v in options.items()))
        elif key == "Settings":
            settings = ", ".join(f"{k} = '{v}'" for k, v in value.items())
            if settings:
                out.append(f"Settings: {settings}")
        elif key.endswith(" Time"):
            out.append(f"{key}: {_text(value)} ms")
        else:
            out.append(f"{key}: {_text(value)}")


def _node(out: list[str], node: Mapping[str, Any], indent: int) -> None:
    """One node and its children (``ExplainNode``, text format): ``indent`` is explain.c's ``es->indent``."""
    pad = "  " * indent
    if "Subplan Name" in node:
        out.append(pad + str(node["Subplan Name"]))
        indent += 1
        pad = "  " * indent
    line = pad
    if indent:
        line += "->  "
        indent += 2
    line += _node_title(node)
    if "Startup Cost" in node:
        line += (f"  (cost={_text(node['Startup Cost'])}..{_text(node['Total Cost'])} "
                 f"rows={_text(node['Plan Rows'])} width={_text(node['Plan Width'])})")
    out.append(line)
    indent += 1
    _properties(out, node, indent)
    for child in node.get("Plans", ()):
        _node(out, child, indent)


def _node_title(node: Mapping[str, Any]) -> str:
    """The node line up to its costs: ``Parallel``, ``Async``, the node's name and what it works on."""
    kind = str(node.get("Node Type", "???"))
    title = ("Parallel " if node.get("Parallel Aware") else "") + ("Async " if node.get("Async Capable") else "")
    if kind == "Aggregate":
        name = _AGG_NAMES.get(str(node.get("Strategy")), "Aggregate ???")
        mode = node.get("Partial Mode")
        title += f"{mode} {name}" if mode in ("Partial", "Finalize") else name
    elif kind == "SetOp":
        title += ("HashSetOp" if node.get("Strategy") == "Hashed" else "SetOp") + f" {node.get('Command')}"
    elif kind == "ModifyTable":
        title += str(node.get("Operation"))
    elif kind == "Foreign Scan":
        title += _FOREIGN_NAMES.get(str(node.get("Operation", "Select")), "???")
    elif kind == "Custom Scan" and node.get("Custom Plan Provider"):
        title += f"Custom Scan ({node['Custom Plan Provider']})"
    elif kind in ("Merge Join", "Hash Join", "Nested Loop"):
        join = node.get("Join Type", "Inner")
        title += kind[: -len(" Join")] if kind != "Nested Loop" else kind
        title += f" {join} Join" if join != "Inner" else ("" if kind == "Nested Loop" else " Join")
    else:
        title += kind
    if "Index Name" in node:
        if kind == "Bitmap Index Scan":
            return title + f" on {quote_identifier(str(node['Index Name']))}"
        title += " Backward" if node.get("Scan Direction") == "Backward" else ""
        title += f" using {quote_identifier(str(node['Index Name']))}"
    return title + _target(node)


def _target(node: Mapping[str, Any]) -> str:
    """`` on name alias`` of a scan or modify node (``ExplainTargetRel``), or ``""``."""
    if "Alias" not in node:
        return ""
    alias = str(node["Alias"])
    name = next((str(node[k]) for k in _TARGET_NAMES if k in node), None)
    text = " on"
    if name is not None and "Schema" in node:
        text += f" {quote_identifier(str(node['Schema']))}.{quote_identifier(name)}"
    elif name is not None:
        text += f" {quote_identifier(name)}"
    if name is None or alias != name:
        text += f" {quote_identifier(alias)}"
    return text


def _properties(out: list[str], node: Mapping[str, Any], indent: int) -> None:
    """The node's ``Key: value`` lines, in the document's (= explain.c's) order."""
    pad = "  " * indent
    for key, value in node.items():
        if key in _HEADER or (key in _ONLY_WHEN_SET and not value):
            continue
        if key == "Grouping Sets":
            _grouping_sets(out, value, indent)
        elif key == "Target Tables":
            _target_tables(out, node, value, indent)
        elif key == "Sampling Method":
            seed = node.get("Repeatable Seed")
            params = ", ".join(str(p) for p in node.get("Sampling Parameters", ()))
            out.append(pad + f"Sampling: {value} ({params})" + (f" REPEATABLE ({seed})" if seed is not None else ""))
        elif key == "Estimated Capacity":  # PG 19 show_memoize_info: the four estimates on one line
            out.append(pad + f"Estimates: capacity={value} distinct keys={node.get('Estimated Distinct Lookup Keys')}"
                       f" lookups={node.get('Estimated Lookups')} hit percent={node.get('Estimated Hit Percent')}%")
        elif key in _FOLDED:
            continue
        else:
            out.append(pad + f"{key}: {_text(value)}")


def _grouping_sets(out: list[str], sets: Sequence[Mapping[str, Any]], indent: int) -> None:
    """``show_grouping_set_keys``: per set, its ``Sort Key`` (a chained sort) with its keys one step in, else its
    keys; an empty key list as ``()``."""
    for group in sets:
        inner = indent
        if "Sort Key" in group:
            out.append("  " * indent + f"Sort Key: {_text(group['Sort Key'])}")
            inner += 1
        for keys_name, key_name in (("Group Keys", "Group Key"), ("Hash Keys", "Hash Key")):
            for keys in group.get(keys_name, ()):
                out.append("  " * inner + f"{key_name}: {_text(keys) if keys else '()'}")


def _target_tables(out: list[str], node: Mapping[str, Any], tables: Sequence[Mapping[str, Any]],
                   indent: int) -> None:
    """``show_modifytable_info``: each target relation as ``Update on name alias``, its FDW fields one step in."""
    for table in tables:
        out.append("  " * indent + str(node.get("Operation")) + _target(table))
        _properties(out, {k: v for k, v in table.items() if k not in _TARGET_NAMES}, indent + 1)


def _text(value: Any) -> str:
    """A field's value as the text format prints it: lists joined with ``, `` (``ExplainPropertyList``), booleans
    ``true``/``false``, numbers as the server printed them."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ", ".join(_text(v) for v in value)
    return str(value)
