"""What a monitoring role may not do, and what lifts it: the privileges a statement's EXPLAIN needs, the exact
``GRANT`` for each one lacking, and the optional EXPLAIN helper a DBA creates once.

EXPLAIN never runs a statement, yet it checks the privileges of running it: the executor is started in
EXPLAIN-only mode and checks every range-table entry's permissions first (``execMain.c InitPlan`` →
``ExecCheckPermissions``; planning, and its locks, came before). So a role with ``pg_monitor`` and nothing else is
refused ``EXPLAIN SELECT ... FROM comments`` with 42501 "permission denied for table comments", and the server logs
that error. lockscope asks the catalog first (``has_table_privilege``: catalog reads, no lock on a user relation),
so it never sends an EXPLAIN the server would refuse, and it names every object and the GRANT that lifts it.

Where EXPLAIN is denied, lockscope either goes through the **EXPLAIN helper** (``contrib/explain_helper.sql``: a
``SECURITY DEFINER`` function ``lockscope.explain(options, statement)`` that the DBA creates and owns, as
pganalyze's collector does; lockscope never creates it) or **derives** the footprint from the catalog
(:mod:`lockscope.derived`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .rows import ExplainHelperRow, PrivilegeGapRow

if TYPE_CHECKING:
    from .db import Session

__all__ = [
    "HELPER_OPTIONS",
    "HELPER_SIGNATURE",
    "ExplainHelper",
    "PrivilegeGap",
    "find_helper",
    "grants_text",
    "needed_privileges",
    "privilege_gaps",
    "role_sql",
]

#: The helper's signature as documented (``contrib/explain_helper.sql``): ``lockscope.explain(options, statement)``.
HELPER_SIGNATURE = "lockscope.explain(text, text)"
#: The only EXPLAIN option lists lockscope sends, and the only ones the documented helper accepts (never ANALYZE).
HELPER_OPTIONS = ("FORMAT JSON", "VERBOSE, FORMAT JSON", "GENERIC_PLAN, FORMAT JSON", "SUMMARY, FORMAT JSON",
                  "SUMMARY, VERBOSE, FORMAT JSON")

#: The privilege of a DML statement's target (``parsenodes.h AclMode`` as ``ExecCheckPermissions`` asks it).
_TARGET_PRIVILEGE = {"InsertStmt": "INSERT", "UpdateStmt": "UPDATE", "DeleteStmt": "DELETE"}
#: Clauses under which a DML statement also reads its target's columns (SELECT on the target).
_READS_TARGET = ("whereClause", "returningList", "fromClause", "usingClause", "onConflictClause")
_MERGE_PRIVILEGE = {"CMD_INSERT": "INSERT", "CMD_UPDATE": "UPDATE", "CMD_DELETE": "DELETE"}


@dataclass(frozen=True)
class PrivilegeGap:
    """One privilege the statement's EXPLAIN needs and the session's role lacks.

    :ivar relation: quoted ``schema.name``.
    :ivar relation_oid: its OID.
    :ivar privilege: ``SELECT``, ``INSERT``, ``UPDATE`` or ``DELETE``.
    :ivar grant: the statement that lifts it, e.g. ``GRANT SELECT ON TABLE public.comments TO mon;`` (and the
        schema's ``GRANT USAGE`` before it when the role lacks that too).
    :ivar column_level: the role holds the privilege on some columns: EXPLAIN may still pass when the statement
        uses only those (lockscope does not decide column privileges; it derives instead of trying).
    """

    relation: str
    relation_oid: int
    privilege: str
    grant: str
    column_level: bool = False


@dataclass(frozen=True)
class ExplainHelper:
    """The EXPLAIN helper function found on the server.

    :ivar signature: e.g. ``lockscope.explain(text, text)``.
    :ivar owner: the role whose privileges its EXPLAIN runs with.
    """

    signature: str
    owner: str

    @property
    def name(self) -> str:
        """The function's name without its argument types (``lockscope.explain``)."""
        return self.signature.split("(", 1)[0]


def role_sql(user: str) -> str:
    """A role name as SQL: bare when it needs no quotes, else double-quoted (``"Mon Role"``)."""
    if re.fullmatch(r"[a-z_][a-z0-9_$]*", user):
        return user
    return '"' + user.replace('"', '""') + '"'


def _walk(node: Any, visit: Any) -> None:
    if isinstance(node, Mapping):
        for key, value in node.items():
            if isinstance(value, Mapping):
                visit(key, value)
            _walk(value, visit)
    elif isinstance(node, list):
        for item in node:
            _walk(item, visit)


def _range_var(node: Any) -> tuple[str | None, str] | None:
    if isinstance(node, Mapping) and "relname" in node:
        return (node.get("schemaname"), str(node["relname"]))
    return None


def needed_privileges(raw: Mapping[str, Any]) -> list[tuple[str | None, str, str]]:
    """The table privileges running the statement needs, as ``ExecCheckPermissions`` checks them for its EXPLAIN:
    each DML target's command privilege (``INSERT``/``UPDATE``/``DELETE``; a MERGE's per action; a data-modifying
    WITH query's too), ``SELECT`` on a target whose columns the statement reads (WHERE, RETURNING, FROM/USING,
    ON CONFLICT, MERGE), ``SELECT`` on every other relation named (CTE names excluded; a view's own relations are
    checked as its owner, so only the view is named).

    :param raw: the statement node of the raw parse tree (``{"SelectStmt": {...}}``, libpg_query JSON).
    :return: ``(schema or None, name, privilege)``, distinct, in text order.
    """
    needed: list[tuple[str | None, str, str]] = []
    ctes: set[str] = set()
    targets: set[int] = set()  # the RangeVar nodes that are DML targets (by identity)

    def visit(key: str, value: Mapping[str, Any]) -> None:
        if key == "CommonTableExpr":
            ctes.add(str(value.get("ctename")))
        if key not in (*_TARGET_PRIVILEGE, "MergeStmt"):
            return
        node = value.get("relation")
        target = _range_var(node)
        if target is None:
            return
        targets.add(id(node))
        if key == "MergeStmt":
            for clause in value.get("mergeWhenClauses") or []:
                privilege = _MERGE_PRIVILEGE.get(str(clause.get("MergeWhenClause", {}).get("commandType")))
                if privilege:
                    needed.append((*target, privilege))
            needed.append((*target, "SELECT"))
            return
        needed.append((*target, _TARGET_PRIVILEGE[key]))
        if any(value.get(k) for k in _READS_TARGET):
            needed.append((*target, "SELECT"))

    _walk(raw, visit)  # the top statement's node too: ``raw`` is ``{"SelectStmt": {...}}``

    def visit_names(key: str, value: Mapping[str, Any]) -> None:
        if key == "RangeVar" and "relname" in value and id(value) not in targets:
            schema = value.get("schemaname")
            if schema is None and str(value["relname"]) in ctes:
                return
            needed.append((schema, str(value["relname"]), "SELECT"))

    _walk(raw, visit_names)
    return list(dict.fromkeys(needed))


def privilege_gaps(session: Session, raw: Mapping[str, Any], role: str | None = None) -> tuple[PrivilegeGap, ...]:
    """The privileges the statement's EXPLAIN needs that a role lacks (one catalog query; names that resolve to
    nothing are left to the caller's own check).

    :param raw: the statement node of the raw parse tree.
    :param role: the role asked about (the EXPLAIN helper's owner); None: the session's.
    :raises DatabaseError: the catalog query failed.
    """
    needed = needed_privileges(raw)
    if not needed:
        return ()
    rows = session.query_rows("privilege_gaps", PrivilegeGapRow,
                              [[s for s, _, _ in needed], [n for _, n, _ in needed], [p for _, _, p in needed],
                               role])
    role = role_sql(role or session.user)
    gaps: list[PrivilegeGap] = []
    for row in rows:
        schema = row.relation.rsplit(".", 1)[0] if "." in row.relation else "public"
        grant = f"GRANT {row.privilege} ON TABLE {row.relation} TO {role};"
        if not row.schema_usage:
            grant = f"GRANT USAGE ON SCHEMA {schema} TO {role}; {grant}"
        gaps.append(PrivilegeGap(row.relation, row.relation_oid, row.privilege, grant, row.some_columns))
    return tuple(gaps)


def grants_text(gaps: Sequence[PrivilegeGap]) -> str:
    """The GRANTs that lift ``gaps``, one statement each, in order, repeated ones once."""
    return " ".join(dict.fromkeys(g.grant for g in gaps))


def find_helper(session: Session, raw: Mapping[str, Any],
                signature: str = HELPER_SIGNATURE) -> tuple[ExplainHelper | None, tuple[PrivilegeGap, ...]]:
    """The EXPLAIN helper, when the server has it, the session's role may call it and its owner holds the
    privileges the statement's EXPLAIN needs (two catalog queries; nothing is sent that the server would refuse).

    :param raw: the statement node of the raw parse tree.
    :param signature: its signature (``--explain-helper``; default :data:`HELPER_SIGNATURE`).
    :return: (the helper or None, what its owner lacks: empty unless the helper exists and falls short). None when it
        is absent, not ``SECURITY DEFINER`` (it would add nothing), not executable by the role, or its owner lacks a
        privilege.
    :raises DatabaseError: the catalog query failed (e.g. a malformed signature).
    """
    rows = session.query_rows("explain_helper", ExplainHelperRow, [signature])
    if not rows or not rows[0].security_definer or not rows[0].may_execute:
        return None, ()
    owner_gaps = privilege_gaps(session, raw, rows[0].owner)
    if owner_gaps:
        return None, owner_gaps
    return ExplainHelper(signature, rows[0].owner), ()
