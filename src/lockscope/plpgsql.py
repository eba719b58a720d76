"""The statements a trigger function runs, derived from its source without executing anything.

A PL/pgSQL trigger function is compiled once per trigger (``pl_comp.c compute_function_hashkey``, 18+
``funccache.c``: the hash key holds ``trigOid``), and every static SQL statement or expression that needs the executor
is an SPI plan of its own, kept for the session (``pl_exec.c exec_prepare_plan``: ``SPI_prepare_extended`` +
``SPI_keepplan``) with the plan cache's custom and generic phases (``plancache.c choose_custom_plan``); a statement
without PL/pgSQL variables has no parameters and uses the generic plan from its first call. ``EXECUTE`` (dynamic
SQL) is planned at every call (``pl_exec.c exec_stmt_dynexecute`` → ``SPI_execute_extended``, a one-shot plan) and
cannot be derived from the catalog. An expression that names no relation is a "simple expression" (``pl_exec.c
exec_simple_check_plan``) and takes no relation lock (a ``nextval('s')`` in it locks its sequence at execution).

:func:`trigger_statements` turns a function's source (``pg_proc.prosrc``) into those statements as prepared
statements with typed ``$n`` parameters, in the order the function text has them (textual, not the run-time path),
and says what it cannot derive; :func:`firing_triggers` says which triggers of a table fire for a statement, in
firing order. Nothing here runs SQL: the catalog facts come in as arguments (``sql/exec_triggers.sql``,
``sql/audit_table_columns.sql``).
"""

from __future__ import annotations

import bisect
import dataclasses
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import pglast
from pglast import ast, enums
from pglast.parser import ParseError, scan
from pglast.visitors import Visitor

from . import evaluate
from .explain import quote_identifier
from .rows import ExecTriggerRow

__all__ = [
    "Assignment",
    "Construct",
    "FiringTrigger",
    "FunctionCall",
    "FunctionSupport",
    "NotDerivable",
    "ParamOrigin",
    "TriggerEvent",
    "TriggerLevel",
    "TriggerParam",
    "TriggerProgram",
    "TriggerStatement",
    "TriggerTiming",
    "canonical_name",
    "firing_triggers",
    "guards_hold",
    "trigger_program",
    "trigger_statements",
]


class Construct(StrEnum):
    """The PL/pgSQL construct a statement comes from, named as PostgreSQL's error context names it (``pl_funcs.c
    plpgsql_stmt_typename``), plus the two declarations."""

    SQL = "SQL statement"
    PERFORM = "PERFORM"
    ASSIGNMENT = "assignment"
    IF = "IF"
    CASE = "CASE"
    WHILE = "WHILE"
    FOR_INTEGER = "FOR with integer loop variable"
    FOR_QUERY = "FOR over SELECT rows"
    FOR_CURSOR = "FOR over cursor"
    FOREACH = "FOREACH over array"
    EXIT = "EXIT"
    CONTINUE = "CONTINUE"
    RETURN = "RETURN"
    RETURN_NEXT = "RETURN NEXT"
    RETURN_QUERY = "RETURN QUERY"
    RAISE = "RAISE"
    ASSERT = "ASSERT"
    EXECUTE = "EXECUTE"
    FOR_EXECUTE = "FOR over EXECUTE statement"
    OPEN = "OPEN"
    FETCH = "FETCH"
    CALL = "CALL"
    DECLARATION = "declaration"
    CURSOR_DECLARATION = "cursor declaration"
    FUNCTION = "function"


class ParamOrigin(StrEnum):
    """What PL/pgSQL variable a ``$n`` stands for (``pl_comp.c make_datum_param``: one parameter per datum)."""

    ROW_COLUMN = "NEW/OLD column"
    WHOLE_ROW = "NEW/OLD row"
    SPECIAL = "special variable"
    DECLARED = "declared variable"
    RECORD_FIELD = "record field"
    LOOP_VARIABLE = "loop variable"
    CURSOR_ARGUMENT = "cursor argument"


class FunctionSupport(StrEnum):
    """How far a trigger function's statements can be derived from its source."""

    PLPGSQL = "plpgsql"
    """PL/pgSQL: its static statements are derived (:attr:`TriggerProgram.statements`)."""
    NO_LOCKS = "no relation locks"
    """A built-in C trigger function that opens no relation (``tsvector_op.c tsvector_update_trigger``,
    ``trigfuncs.c suppress_redundant_updates_trigger``)."""
    SQL = "sql"
    """An SQL-language function: its statements are planned at every call (``functions.c``); not derived here."""
    OTHER = "other"
    """C or another procedural language: not derivable."""


@dataclass(frozen=True)
class TriggerParam:
    """One ``$n`` of a derived statement: a PL/pgSQL variable (``pl_comp.c make_datum_param``).

    :ivar number: n (1-based, in order of first appearance in the statement's text).
    :ivar variable: the variable as the function writes it, lower-cased (``new.qty``, ``tg_op``, ``v``,
        ``r.entity_id``; a whole row as ``new``).
    :ivar type_name: its type as SQL text for ``PREPARE name(type, ...)`` (``text``, ``character varying(20)``,
        ``public.item`` for a row), or None when the source and the catalog facts given do not say (a ``record``
        variable's fields, an unknown column, an unresolved ``%TYPE``): ``unknown`` lets the server infer it.
    :ivar origin: what kind of variable it is.
    :ivar constant: the variable's value when the function assigned it a constant on every path to the statement
        (``x := 1;`` outside any branch or loop), else None.
    :ivar assignments: a declared variable's assignments before the statement when each is a constant or a
        NEW/OLD column under ``IF`` conditions at most (``if TG_OP = 'DELETE' then x := OLD.id; else x := NEW.id;
        end if;``); None when it has none, or one that is anything else.
    """

    number: int
    variable: str
    type_name: str | None
    origin: ParamOrigin
    constant: str | None = None
    assignments: tuple[Assignment, ...] | None = None


@dataclass(frozen=True)
class Assignment:
    """One ``variable := value`` the function makes before a statement, under ``IF`` conditions only (no loop):
    the value the variable has at the statement is the last assignment whose guards held (:func:`guards_hold`).

    :ivar guards: the conditions it stands under, as :attr:`TriggerStatement.guards`.
    :ivar constant: a constant value (text), or None.
    :ivar column: a row column it copies (``new.id``, ``old.id``), or None.
    """

    guards: tuple[tuple[str, bool], ...]
    constant: str | None = None
    column: str | None = None


@dataclass(frozen=True)
class TriggerStatement:
    """One statement PL/pgSQL prepares (an SPI plan of its own, with its own plan-cache counters per trigger).

    :ivar line: 1-based line in the function's source (``pg_proc.prosrc``), as PostgreSQL's error context counts.
    :ivar construct: the PL/pgSQL construct it comes from.
    :ivar sql: the statement as PL/pgSQL prepares it: an expression ``expr`` as ``SELECT expr``, PERFORM as SELECT,
        an assignment as ``SELECT`` of its value, ``INTO`` targets removed (``pl_gram.y make_execsql_stmt``), every
        variable reference replaced by ``$n``.
    :ivar params: its parameters, by number.
    :ivar command: SELECT, INSERT, UPDATE, DELETE or MERGE.
    :ivar relations: the relations it names, quoted ``schema.name`` as written (unqualified when written so: the
        function's ``search_path`` resolves them), in text order, CTE names left out.
    :ivar sequences: the sequences its ``nextval``/``currval``/``setval`` calls name with a constant: each locked
        RowExclusiveLock when the call runs (``sequence.c lock_and_open_sequence``), which no plan shows.
    :ivar guards: the ``IF`` / ``ELSIF`` conditions it stands under, outermost first, each with the value it needs
        (``(condition as written, True)`` in a THEN branch, ``False`` for the earlier conditions of an ELSIF or
        ELSE branch): :func:`guards_hold` evaluates those about the trigger's own variables (``TG_OP`` ...).
    :ivar one_shot: an ``EXECUTE`` of a constant string (``format()`` of constants included): planned at every
        call with its ``USING`` values as constants, no plan cache (``pl_exec.c exec_stmt_dynexecute`` →
        ``SPI_execute_extended``: a one-shot plan).
    """

    line: int
    construct: Construct
    sql: str
    params: tuple[TriggerParam, ...]
    command: str
    relations: tuple[str, ...]
    sequences: tuple[str, ...] = ()
    guards: tuple[tuple[str, bool], ...] = ()
    one_shot: bool = False

    @property
    def generic_from_first_call(self) -> bool:
        """No parameters: the plan cache builds the generic plan at the first call (``plancache.c
        choose_custom_plan``: no parameters → generic)."""
        return not self.params

    @property
    def param_types(self) -> tuple[str | None, ...]:
        """The parameters' types in ``$n`` order (None = unknown)."""
        return tuple(p.type_name for p in self.params)


@dataclass(frozen=True)
class NotDerivable:
    """Something the function runs whose locks cannot be derived from its source.

    :ivar line: 1-based line in the function's source (0: the whole function).
    :ivar construct: the PL/pgSQL construct.
    :ivar reason: why, in one sentence.
    :ivar relations: relations it is known to name (quoted, as written), if any.
    """

    line: int
    construct: Construct
    reason: str
    relations: tuple[str, ...] = ()


@dataclass(frozen=True)
class FunctionCall:
    """A function a statement or expression calls: its own statements (a PL/pgSQL or SQL function) run with locks
    of their own, not derived here.

    :ivar line: 1-based line in the function's source.
    :ivar name: the function's name as written, quoted (``pg_notify``, ``storage.add_prefixes``).
    """

    line: int
    name: str


@dataclass(frozen=True)
class TriggerProgram:
    """What a trigger function runs, derived from its source.

    :ivar language: ``pg_language.lanname``.
    :ivar support: how far its statements can be derived.
    :ivar statements: the statements PL/pgSQL prepares that name a relation or a sequence, in text order (the
        order of the function's text, not a run-time path: branches that do not run are listed too).
    :ivar not_derivable: what cannot be derived (dynamic SQL, utility statements, statements reading transition
        tables, computed sequence names, ...), in text order.
    :ivar function_calls: the functions its statements and expressions call, in text order (built-ins included:
        the catalog tells which are SQL or PL functions with statements of their own).
    :ivar type_relations: relations whose columns would type more parameters or resolve ``%TYPE`` (pass their
        columns as ``relation_columns``; quoted names as written, in text order; a type name that is no relation may
        be among them: ``to_regclass`` finds nothing for it).
    :ivar search_path: the function's own ``SET search_path`` (``pg_proc.proconfig``), under which its unqualified
        names resolve when it runs (prepare the statements under it); None: the caller's (:func:`trigger_program`
        fills it).
    """

    language: str
    support: FunctionSupport
    statements: tuple[TriggerStatement, ...] = ()
    not_derivable: tuple[NotDerivable, ...] = ()
    function_calls: tuple[FunctionCall, ...] = ()
    type_relations: tuple[str, ...] = ()
    search_path: str | None = None


#: Built-in C trigger functions that open no relation (tsvector_op.c, trigfuncs.c).
NO_LOCK_BUILTINS = frozenset({"tsvector_update_trigger", "tsvector_update_trigger_column",
                              "suppress_redundant_updates_trigger"})

#: The special variables of a trigger function and their types (``pl_comp.c plpgsql_compile_callback``, the
#: ``is_trigger`` branch; ``found`` for every function; ``sqlstate``/``sqlerrm`` in exception handlers, pl_gram.y).
_SPECIAL = {"tg_name": "name", "tg_when": "text", "tg_level": "text", "tg_op": "text", "tg_relid": "oid",
            "tg_relname": "name", "tg_table_name": "name", "tg_table_schema": "name", "tg_nargs": "integer",
            "tg_argv": "text[]", "found": "boolean"}
_SEQUENCE_FUNCTIONS = frozenset({"nextval", "currval", "setval"})
_PLANNED = {"SelectStmt": "SELECT", "InsertStmt": "INSERT", "UpdateStmt": "UPDATE", "DeleteStmt": "DELETE",
            "MergeStmt": "MERGE"}


# -- names ---------------------------------------------------------------------------------------------------------

def _words(text: str) -> list[str]:
    """The identifiers of a (possibly qualified) name as PostgreSQL folds them: unquoted lower-cased, quoted kept."""
    out = []
    for tok in scan(text):
        raw = text[tok.start:tok.end + 1]
        if raw == ".":
            continue
        out.append(raw[1:-1].replace('""', '"') if raw.startswith('"') else raw.lower())
    return out


def _qualified(words: Iterable[str]) -> str:
    return ".".join(quote_identifier(w) for w in words)


#: A relation name as ``regclass`` input reads it: one to three identifiers, plain or double-quoted, dot-separated.
_QUALIFIED_NAME = re.compile(r'^\s*(?:"(?:[^"]|"")+"|[^\s".]+)(?:\s*\.\s*(?:"(?:[^"]|"")+"|[^\s".]+)){0,2}\s*$')


def canonical_name(text: str) -> str:
    """A relation or type name as written (``Public."Tags"``) in canonical quoted form (``public."Tags"``), as
    ``to_regclass`` reads it."""
    return _qualified(_words(text))


# -- the declarations (pl_gram.y decl_sect) --------------------------------------------------------------------------

@dataclass(frozen=True)
class _Decl:
    """One declaration: ``name [CONSTANT] type ...``, ``name ALIAS FOR target``, ``name CURSOR [(args)] FOR ...``."""

    name: str
    line: int
    kind: str  # "var", "alias", "cursor"
    text: str  # the type as written; an alias's target
    args: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class _Section:
    begin_line: int
    decls: tuple[_Decl, ...]


class _Source:
    """The function's source as tokens (the core scanner: the PL/pgSQL scanner wraps it, ``pl_scanner.c``)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = list(scan(text))
        self._newlines = [i for i, ch in enumerate(text) if ch == "\n"]
        self.type_spans: list[tuple[int, int]] = []  # token ranges of declared types
        self.declared = self.sections()

    def line(self, offset: int) -> int:
        """1-based line of a character offset."""
        return bisect.bisect_left(self._newlines, offset) + 1

    def raw(self, i: int) -> str:
        tok = self.tokens[i]
        return self.text[tok.start:tok.end + 1]

    def word(self, i: int) -> str:
        raw = self.raw(i)
        return raw[1:-1].replace('""', '"') if raw.startswith('"') else raw.lower()

    def span(self, first: int, last: int) -> str:
        """The source text of tokens ``first`` .. ``last`` (inclusive), blanks collapsed."""
        return " ".join(self.text[self.tokens[first].start:self.tokens[last].end + 1].split())

    def compilable(self) -> str:
        """The source with the schema of each schema-qualified declared type blanked out (offsets and lines
        kept): libpg_query compiles PL/pgSQL without a catalog and resolves only ``pg_catalog`` and ``public``
        names (``LookupExplicitNamespace``); which schema a type is in changes nothing the function prepares."""
        chars = list(self.text)
        for first, last in self.type_spans:
            text = self.span(first, last).lower()
            dots = [k for k in range(first, last + 1) if self.raw(k) == "."]
            parts = len(dots) + 1
            if not dots or self.word(first) in ("public", "pg_catalog") or parts < (3 if text.endswith("%type")
                                                                                    else 2):
                continue
            for pos in range(self.tokens[first].start, self.tokens[dots[0]].end + 1):
                chars[pos] = " " if chars[pos] != "\n" else "\n"
        return "".join(chars)

    def sections(self) -> list[_Section]:
        """Every ``DECLARE`` section, in text order, each up to its block's ``BEGIN``."""
        out = []
        i = 0
        while i < len(self.tokens):
            if self.tokens[i].name != "DECLARE":
                i += 1
                continue
            decls, i = self._section(i + 1)
            out.append(_Section(self.line(self.tokens[min(i, len(self.tokens) - 1)].start), tuple(decls)))
        return out

    def _section(self, i: int) -> tuple[list[_Decl], int]:
        decls: list[_Decl] = []
        start, depth = i, 0
        while i < len(self.tokens):
            name = self.tokens[i].name
            depth += name in ("ASCII_40", "ASCII_91")
            depth -= name in ("ASCII_41", "ASCII_93")
            if depth == 0 and name == "BEGIN_P":
                break
            if depth == 0 and name == "ASCII_59":  # ;
                decl = self._decl(start, i - 1)
                if decl is not None:
                    decls.append(decl)
                start = i + 1
            i += 1
        return decls, i

    def _decl(self, first: int, last: int) -> _Decl | None:
        while first <= last and self.tokens[first].name == "DECLARE":
            first += 1
        if first > last:
            return None
        name, line = self.word(first), self.line(self.tokens[first].start)
        words = [self.word(k) for k in range(first + 1, last + 1)]
        if words[:1] == ["alias"]:
            return _Decl(name, line, "alias", self.span(first + 3, last))
        lead = words[:3]
        if "cursor" in lead and all(w in ("no", "scroll", "cursor") for w in lead[:lead.index("cursor") + 1]):
            return _Decl(name, line, "cursor", "", self._cursor_args(first + 2 + lead.index("cursor"), last))
        k = first + 1 + (words[:1] == ["constant"])
        end = k
        while end <= last and self.tokens[end].name not in ("COLLATE", "NOT", "DEFAULT", "COLON_EQUALS",
                                                            "ASCII_61"):
            end += 1
        if end > k:
            self.type_spans.append((k, end - 1))
        return _Decl(name, line, "var", self.span(k, end - 1) if end > k else "")

    def _cursor_args(self, i: int, last: int) -> tuple[tuple[str, str], ...]:
        if i > last or self.tokens[i].name != "ASCII_40":
            return ()
        args, start, depth = [], i + 1, 0
        for k in range(i, last + 1):
            name = self.tokens[k].name
            depth += name == "ASCII_40"
            depth -= name == "ASCII_41"
            if (depth == 1 and name == "ASCII_44") or depth == 0:
                if k > start + 1:
                    self.type_spans.append((start + 1, k - 1))
                    args.append((self.word(start), self.span(start + 1, k - 1)))
                start = k + 1
            if depth == 0:
                break
        return tuple(args)


# -- the namespace (pl_funcs.c plpgsql_ns_lookup) ------------------------------------------------------------------

@dataclass(frozen=True)
class _Var:
    """A PL/pgSQL variable: a scalar (``PLPGSQL_NSTYPE_VAR``) or a row/record (``PLPGSQL_NSTYPE_REC``).

    :ivar ident: distinct per variable (one datum, one parameter).
    :ivar name: as written (lower-cased unless quoted).
    :ivar type_name: its type as SQL text, None when unknown (a ``record``).
    :ivar is_rec: a row or record: ``v.f`` is a field, ``v`` and ``v.*`` the whole row.
    :ivar columns: a row's column types (NEW/OLD, a variable of a table's row type), when known.
    """

    ident: int
    name: str
    type_name: str | None
    origin: ParamOrigin
    is_rec: bool = False
    columns: Mapping[str, str] | None = None


@dataclass
class _Scope:
    """One namespace level: a block, a loop, an exception handler or a cursor's arguments, with its label."""

    label: str | None
    items: dict[str, _Var] = field(default_factory=dict)


def _lookup(chain: list[_Scope], name1: str, name2: str | None, name3: str | None) -> tuple[_Var, int] | None:
    """The variable ``name1[.name2[.name3]]`` names and how many names it used, innermost level first
    (``pl_funcs.c plpgsql_ns_lookup``: an unqualified match, then ``label.name`` at each level)."""
    for scope in reversed(chain):
        var = scope.items.get(name1)
        if var is not None and (name2 is None or var.is_rec):
            return var, 1
        if name2 is not None and scope.label == name1:
            var = scope.items.get(name2)
            if var is not None and (name3 is None or var.is_rec):
                return var, 2
    return None


def _resolve(chain: list[_Scope], fields: list[str]) -> tuple[_Var, str | None] | None:
    """The variable a column reference is, and the record field it selects (None: the whole variable), or None
    when PL/pgSQL leaves it to the core parser (``pl_comp.c resolve_column_ref``: A, A.B, A.B.C, A.*, A.B.*)."""
    nnames_scalar = nnames_wholerow = nnames_field = 0
    names: list[str | None] = [fields[0], None, None]
    colname = None
    if len(fields) == 1:
        nnames_scalar = nnames_wholerow = 1
    elif len(fields) == 2:
        names[1] = fields[1]
        if fields[1] == "*":
            nnames_wholerow = 1
        else:
            colname, nnames_scalar, nnames_wholerow, nnames_field = fields[1], 2, 2, 1
    elif len(fields) == 3:
        names[1], names[2] = fields[1], fields[2]
        if fields[2] == "*":
            nnames_wholerow = 2
        else:
            colname, nnames_field = fields[2], 2
    else:
        return None
    found = _lookup(chain, fields[0], names[1], names[2])
    if found is None:
        return None
    var, nnames = found
    if not var.is_rec:
        return (var, None) if nnames == nnames_scalar else None
    if nnames == nnames_wholerow:
        return var, None
    if nnames == nnames_field:
        return var, colname
    return None


# -- one statement's parse tree --------------------------------------------------------------------------------------

class _Refs(Visitor):
    """What a statement's raw parse tree names: column references (candidate variables), relations, CTE names,
    range aliases, function calls and ``$n`` references."""

    def __init__(self) -> None:
        super().__init__()
        self.columns: list[tuple[int, list[str]]] = []
        self.relations: list[tuple[int, str | None, str]] = []
        self.ctes: set[str] = set()
        self.aliases: set[str] = set()
        self.calls: list[tuple[list[str], tuple[Any, ...]]] = []
        self.params = 0

    def visit_ColumnRef(self, ancestors: Any, node: ast.ColumnRef) -> None:
        fields = ["*" if isinstance(f, ast.A_Star) else str(f.sval) for f in node.fields or ()]
        self.columns.append((int(node.location or 0), fields))

    def visit_RangeVar(self, ancestors: Any, node: ast.RangeVar) -> None:
        self.relations.append((int(node.location or 0), node.schemaname, str(node.relname)))
        self.aliases.add(str(node.alias.aliasname) if node.alias is not None else str(node.relname))

    def visit_CommonTableExpr(self, ancestors: Any, node: ast.CommonTableExpr) -> None:
        self.ctes.add(str(node.ctename))

    def visit_RangeSubselect(self, ancestors: Any, node: ast.RangeSubselect) -> None:
        if node.alias is not None:
            self.aliases.add(str(node.alias.aliasname))

    def visit_FuncCall(self, ancestors: Any, node: ast.FuncCall) -> None:
        self.calls.append(([str(n.sval) for n in node.funcname or ()], tuple(node.args or ())))

    def visit_ParamRef(self, ancestors: Any, node: ast.ParamRef) -> None:
        self.params += 1


def _constant_text(expr: str) -> str | None:
    """The value of an expression that is one string constant (``'...'``, ``$q$...$q$``), else None."""
    return _constant_name(_select_target(expr))


def _names_in(sql: str) -> tuple[str, ...]:
    """The relations an SQL text names (quoted, in text order, CTE names left out), () if it does not parse."""
    try:
        stmts = pglast.parse_sql(sql)
    except ParseError:
        return ()
    refs = _Refs()
    for raw in stmts:
        if raw.stmt is not None:
            refs(raw.stmt)
    names = (_qualified([s, n] if s else [n]) for _, s, n in sorted(refs.relations, key=lambda r: r[0])
             if s or n not in refs.ctes)
    return tuple(dict.fromkeys(names))


def _select_target(expr: str) -> Any:
    """The one expression of ``SELECT expr`` as pglast's AST node, or None when it does not parse as one."""
    try:
        stmts = pglast.parse_sql("SELECT " + expr)
    except ParseError:
        return None
    stmt = stmts[0].stmt if len(stmts) == 1 else None
    targets = stmt.targetList if isinstance(stmt, ast.SelectStmt) else None
    return targets[0].val if targets and len(targets) == 1 else None


def _constant_value(expr: str) -> str | None:
    """The value of an expression that is one constant (a number, a string, true/false), as text, else None."""
    return _constant_value_node(_select_target(expr))


def _constant_format(expr: str) -> str | None:
    """The value of ``format('...', const, ...)`` when every argument is a constant (``varlena.c text_format``,
    as :func:`lockscope.evaluate.format_sql` formats it), else None."""
    call = _select_target(expr)
    if not isinstance(call, ast.FuncCall) or [str(n.sval) for n in call.funcname or ()][-1:] != ["format"]:
        return None
    args = [_constant_value_node(a) for a in call.args or ()]
    if not args or any(a is None for a in args):
        return None
    return evaluate.format_sql(str(args[0]), [str(a) for a in args[1:]])


def _constant_value_node(arg: Any) -> str | None:
    """A constant's text (a string, a number, true/false), alone or cast, else None."""
    if isinstance(arg, ast.TypeCast):
        arg = arg.arg
    if isinstance(arg, ast.A_Const) and not arg.isnull and arg.val is not None:
        v = arg.val
        if isinstance(v, ast.String):
            return str(v.sval)
        if isinstance(v, ast.Integer):
            return str(v.ival)
        if isinstance(v, ast.Float):
            return str(v.fval)
        if isinstance(v, ast.Boolean):
            return "true" if v.boolval else "false"
    return None


def _row_column(expr: str) -> str | None:
    """``new.col`` / ``old.col`` when an expression is one such column reference (lower-cased), else None."""
    node = _select_target(expr)
    if not isinstance(node, ast.ColumnRef):
        return None
    fields = [f.sval for f in node.fields or () if isinstance(f, ast.String)]
    if len(fields) == 2 and str(fields[0]).lower() in ("new", "old"):
        return f"{str(fields[0]).lower()}.{fields[1]}"
    return None


#: PL/pgSQL statements whose bodies run conditionally or repeatedly.
_BRANCHING = frozenset({"if", "case", "loop", "while", "fori", "fors", "forc", "foreach_a", "dynfors"})


def _constant_name(arg: Any) -> str | None:
    """The text of a string constant, alone or cast (``'s'``, ``'s'::regclass``), else None."""
    if isinstance(arg, ast.TypeCast):
        arg = arg.arg
    if isinstance(arg, ast.A_Const) and isinstance(arg.val, ast.String):
        return str(arg.val.sval)
    return None


# -- the derivation --------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Facts:
    """The catalog facts a derivation may use (see :func:`trigger_statements`)."""

    function_name: str | None
    table_type: str | None
    table_columns: Mapping[str, str]
    relation_columns: Mapping[str, Mapping[str, str]]
    transition_tables: frozenset[str]
    variable_conflict: str


class _Deriver:
    """One walk over a compiled function (pglast's ``PLpgSQL_function`` JSON), in text order, keeping the
    namespace as ``pl_gram.y`` builds it while it compiles."""

    def __init__(self, src: _Source, function: Mapping[str, Any], facts: _Facts) -> None:
        self.src = src
        self.facts = facts
        self.function = function
        self.sections: dict[int, list[_Section]] = {}
        for section in src.declared:
            self.sections.setdefault(section.begin_line, []).append(section)
        self.datums: dict[tuple[str, int], dict[str, Any]] = {}
        for datum in function.get("datums", []):
            ((kind, body),) = datum.items()
            self.datums.setdefault((str(body.get("refname")), int(body.get("lineno", 0))), {kind: body})
        self.chain: list[_Scope] = []
        self.statements: list[TriggerStatement] = []
        self.notes: list[NotDerivable] = []
        self.calls: dict[tuple[int, str], None] = {}
        self.wanted: dict[str, None] = {}
        self._idents = 0
        self.conflict = _option(src.text) or facts.variable_conflict
        self.guards: list[tuple[str, bool]] = []
        self.constants: dict[int, str] = {}  # variable -> constant value, while the walk is straight-line
        self.branching = 0
        self.looping = 0  # branching constructs other than IF (loops, CASE): assignments there are not followed
        self.assigns: dict[int, list[Assignment] | None] = {}  # variable -> its assignments so far (None: untracked)

    def var(self, name: str, type_name: str | None, origin: ParamOrigin, is_rec: bool = False,
            columns: Mapping[str, str] | None = None) -> _Var:
        self._idents += 1
        return _Var(self._idents, name, type_name, origin, is_rec, columns)

    def run(self) -> TriggerProgram:
        top = _Scope(self.facts.function_name)
        for name in ("new", "old"):
            top.items[name] = self.var(name, self.facts.table_type, ParamOrigin.WHOLE_ROW, True,
                                       self.facts.table_columns)
        for name, type_name in _SPECIAL.items():
            top.items[name] = self.var(name, type_name, ParamOrigin.SPECIAL)
        self.chain.append(top)
        self.walk([self.function["action"]] if "action" in self.function else [])
        return TriggerProgram("plpgsql", FunctionSupport.PLPGSQL, tuple(self.statements), tuple(self.notes),
                              tuple(FunctionCall(line, name) for line, name in self.calls),
                              tuple(self.wanted))

    def note(self, line: int, construct: Construct, reason: str, relations: tuple[str, ...] = ()) -> None:
        note = NotDerivable(line, construct, reason, relations)
        if note not in self.notes:
            self.notes.append(note)

    # -- statements (pl_gram.y proc_stmt) --

    def walk(self, stmts: Iterable[Mapping[str, Any]] | None) -> None:
        """Each statement of a list, in order (``PLpgSQL_stmt_*``)."""
        for node in stmts or ():
            ((kind, body),) = node.items()
            line = int(body.get("lineno", 0))
            name = kind.removeprefix("PLpgSQL_stmt_")
            handler = _HANDLERS.get(name)
            branchy = name in _BRANCHING
            self.branching += branchy
            self.looping += branchy and name != "if"
            try:
                if handler is not None:
                    handler(self, body, line)
            finally:
                self.branching -= branchy
                self.looping -= branchy and name != "if"

    def assigned(self, body: Mapping[str, Any], line: int) -> None:
        """``target := expr``: its expression derived; a constant assigned outside any branch or loop is the
        variable's value for the statements after it (another assignment forgets it)."""
        self.expr(body.get("expr"), line, Construct.ASSIGNMENT)
        query = str(((body.get("expr") or {}).get("PLpgSQL_expr") or {}).get("query") or "")
        target = query[: len(query) - len(_assigned(query))].rstrip(":= \t\n").strip()
        hit = _resolve(self.chain, [p.lower() for p in target.split(".")]) if target else None
        if hit is None or hit[1] is not None:
            return
        var = hit[0]
        value = _constant_value(_assigned(query))
        if value is not None and self.branching == 0:
            self.constants[var.ident] = value
        else:
            self.constants.pop(var.ident, None)
        column = _row_column(_assigned(query))
        known = self.assigns.setdefault(var.ident, [])
        if known is None or self.looping or (value is None and column is None):
            self.assigns[var.ident] = None
        else:
            known.append(Assignment(tuple(self.guards), value, column))

    def scoped(self, scope: _Scope, stmts: Iterable[Mapping[str, Any]] | None) -> None:
        """``stmts`` with one more namespace level."""
        self.chain.append(scope)
        try:
            self.walk(stmts)
        finally:
            self.chain.pop()

    def expr(self, node: Mapping[str, Any] | None, line: int, construct: Construct) -> None:
        """One ``PLpgSQL_expr``, derived as PL/pgSQL prepares it (``pl_exec.c exec_prepare_plan``)."""
        if not node:
            return
        body = node["PLpgSQL_expr"]
        query, mode = str(body["query"]), int(body.get("parseMode", 0))
        if mode == 0:  # RAW_PARSE_DEFAULT: a whole statement
            self.derive(query, line, construct)
        elif mode == 2:  # RAW_PARSE_PLPGSQL_EXPR: the grammar reads it as SELECT expr
            self.derive("SELECT " + query, line, construct)
        else:  # RAW_PARSE_PLPGSQL_ASSIGNn: target := expr, its value a SELECT of expr
            self.derive("SELECT " + _assigned(query), line, construct)

    def dynamic(self, body: Mapping[str, Any], line: int, construct: Construct) -> None:
        """``EXECUTE``: a string that is a constant (or ``format()`` of constants) is a one-shot statement of its
        own (:attr:`TriggerStatement.one_shot`), its ``USING`` values its ``$n``; a computed one is a note. Its
        string and ``USING`` expressions are ordinary expressions."""
        query = body.get("query") or body.get("dynquery")
        text = str(query["PLpgSQL_expr"]["query"]) if query else ""
        constant = (_constant_text(text) or _constant_format(text)) if query else None
        if constant is None:
            self.note(line, construct, "dynamic SQL: planned at every call from a string built at run time "
                      "(pl_exec.c exec_stmt_dynexecute, SPI_execute_extended); its relations cannot be derived")
        else:
            self.one_shot(constant, body.get("params") or (), line, construct)
        self.expr(query, line, construct)
        for param in body.get("params") or ():
            self.expr(param, line, construct)

    def one_shot(self, sql: str, using: Sequence[Mapping[str, Any]], line: int, construct: Construct) -> None:
        """A constant ``EXECUTE`` string as the statement it runs: its ``$n`` are the ``USING`` values (a variable
        each, followed as :meth:`parameterise` does; another expression's value is not known)."""
        planned = self.planned(sql, line, construct, "dynamic SQL")
        if planned is None:
            return
        kind, _, relations, _, sequences = planned
        params: list[TriggerParam] = []
        for n, expr in enumerate(using, 1):
            words = str((expr.get("PLpgSQL_expr") or {}).get("query") or "").strip().split(".")
            hit = _resolve(self.chain, [w.strip().lower() for w in words]) if all(words) else None
            if hit is None:
                params.append(TriggerParam(n, ".".join(words).lower(), None, ParamOrigin.DECLARED,
                                           assignments=()))
                continue
            param = _param(n, hit[0], hit[1])
            if hit[1] is None and hit[0].ident in self.constants:
                param = dataclasses.replace(param, constant=self.constants[hit[0].ident])
            elif hit[1] is None and self.assigns.get(hit[0].ident):
                param = dataclasses.replace(param, assignments=tuple(self.assigns[hit[0].ident] or ()))
            params.append(param)
        self.statements.append(TriggerStatement(line, construct, sql, tuple(params), _PLANNED[kind], relations,
                                                sequences, tuple(self.guards), one_shot=True))

    # -- declarations (pl_gram.y decl_statement) --

    def declare(self, line: int, scope: _Scope) -> None:
        """The ``DECLARE`` section of the block whose ``BEGIN`` is on ``line``: its variables join ``scope``;
        default values and cursor queries are derived where they stand."""
        pending = self.sections.get(line)
        if not pending:
            return
        for decl in pending.pop(0).decls:
            datum = self.datums.get((decl.name, decl.line), {})
            if decl.kind == "alias":
                words = _words(decl.text)
                hit = _lookup(self.chain, words[0], words[1] if len(words) > 1 else None, None) if words else None
                if hit is not None:
                    scope.items[decl.name] = hit[0]
            elif decl.kind == "cursor":
                self.cursor(decl, datum, scope)
            else:
                default = _datum_body(datum).get("default_val")
                self.expr(default, decl.line, Construct.DECLARATION)
                scope.items[decl.name] = self.declared(decl, datum)

    def cursor(self, decl: _Decl, datum: Mapping[str, Any], scope: _Scope) -> None:
        """A bound cursor: its query, prepared at ``OPEN`` or its ``FOR`` loop, with its arguments as
        variables of their own."""
        args = _Scope(None, {name: self.var(name, _type_text(text), ParamOrigin.CURSOR_ARGUMENT)
                             for name, text in decl.args})
        query = _datum_body(datum).get("cursor_explicit_expr")
        self.chain.append(args)
        try:
            self.expr(query, decl.line, Construct.CURSOR_DECLARATION)
        finally:
            self.chain.pop()
        scope.items[decl.name] = self.var(decl.name, "refcursor", ParamOrigin.DECLARED)

    def declared(self, decl: _Decl, datum: Mapping[str, Any]) -> _Var:
        """A declared variable with its type: ``record``, ``rel%ROWTYPE``, ``x%TYPE`` (a variable's type, a
        record field's, or ``rel.col``'s from ``relation_columns``), or the type as written."""
        text, low = decl.text, decl.text.lower()
        if low == "record":
            return self.var(decl.name, None, ParamOrigin.DECLARED, True)
        if low.endswith("%rowtype"):
            rel = self.want(canonical_name(text[:-len("%rowtype")]))
            return self.var(decl.name, rel, ParamOrigin.DECLARED, True, self.facts.relation_columns.get(rel))
        if low.endswith("%type"):
            return self.typed_like(decl.name, _words(text[:-len("%type")]))
        name = canonical_name(text) if text else ""
        is_rec = "PLpgSQL_rec" in datum or name in self.facts.relation_columns
        if is_rec:
            self.want(name)
        return self.var(decl.name, _type_text(text), ParamOrigin.DECLARED, is_rec,
                        self.facts.relation_columns.get(name) if is_rec else None)

    def typed_like(self, name: str, words: list[str]) -> _Var:
        """``name x%TYPE`` (``pl_comp.c plpgsql_parse_wordtype``, ``plpgsql_parse_cwordtype``)."""
        hit = _lookup(self.chain, words[0], words[1] if len(words) == 2 else None, None) if words else None
        if hit is not None and len(words) == hit[1]:
            var = hit[0]
            return self.var(name, var.type_name, ParamOrigin.DECLARED, var.is_rec, var.columns)
        if hit is not None and hit[0].is_rec and len(words) == 2:
            column_type = (hit[0].columns or {}).get(words[1])
            return self.var(name, column_type, ParamOrigin.DECLARED)
        if len(words) >= 2:
            rel = self.want(_qualified(words[:-1]))
            return self.var(name, self.facts.relation_columns.get(rel, {}).get(words[-1]), ParamOrigin.DECLARED)
        return self.var(name, None, ParamOrigin.DECLARED)

    def want(self, relation: str) -> str:
        """Note a relation whose columns would type more (:attr:`TriggerProgram.type_relations`)."""
        if relation and relation not in self.facts.relation_columns:
            self.wanted[relation] = None
        return relation

    # -- one statement (pl_exec.c exec_prepare_plan; pl_comp.c plpgsql_parser_setup) --

    def derive(self, sql: str, line: int, construct: Construct) -> None:
        """``sql`` as a prepared statement if it names a relation or a sequence; a note if it names one but cannot
        be prepared alone (a utility statement, a transition table); nothing if it names none (a simple
        expression: no relation lock)."""
        planned = self.planned(sql, line, construct, "SQL")
        if planned is None:
            return
        kind, refs, relations, transition, sequences = planned
        if transition:
            self.note(line, construct, f"reads the transition table {', '.join(transition)} (an ephemeral named "
                      "relation of the trigger, SPI_register_trigger_data): it cannot be prepared outside the "
                      "trigger", relations)
            return
        text, params = self.parameterise(sql, refs, relations, line, construct)
        self.statements.append(TriggerStatement(line, construct, text, params, _PLANNED[kind], relations,
                                                sequences, tuple(self.guards)))

    def planned(self, sql: str, line: int, construct: Construct, what: str
                ) -> tuple[str, _Refs, tuple[str, ...], tuple[str, ...], tuple[str, ...]] | None:
        """``sql`` (``what``: ``SQL`` or ``dynamic SQL``) as one planned statement that names a relation or a
        sequence: (its node name, its references, the relations and transition tables of :meth:`relations`, the
        sequences of :meth:`sequences`); None, with a note where it names one, for SQL that does not parse,
        several statements and a utility statement (executed, never planned: ``utility.c ProcessUtility``), and
        without one for a simple expression (no relation lock)."""
        try:
            stmts = pglast.parse_sql(sql)
        except ParseError as exc:
            self.note(line, construct, f"{what} that does not parse ({exc}): not derived")
            return None
        if len(stmts) != 1:
            self.note(line, construct, f"{what} of {len(stmts)} statements: not derived", _names_in(sql))
            return None
        stmt = stmts[0].stmt
        if stmt is None:
            return None
        refs = _Refs()
        refs(stmt)
        relations, transition = self.relations(refs)
        sequences = self.sequences(line, construct, refs)
        kind = type(stmt).__name__
        if kind not in _PLANNED:
            if relations:
                self.note(line, construct, f"{what}: utility statement {sql.split(None, 1)[0].upper()}: executed, "
                          "never planned, so PREPARE and EXPLAIN cannot probe it; it locks what it names when it "
                          "runs", relations)
            return None
        if not relations and not sequences:
            return None
        return kind, refs, relations, transition, sequences

    def relations(self, refs: _Refs) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The relations a statement names (quoted, in text order, CTE names and transition tables left out) and
        the transition tables it reads."""
        relations: dict[str, None] = {}
        transition: dict[str, None] = {}
        for _, schema, name in sorted(refs.relations, key=lambda r: r[0]):
            if schema is None and name in refs.ctes:
                continue
            if schema is None and name in self.facts.transition_tables:
                transition[name] = None
                continue
            relations[_qualified([schema, name] if schema else [name])] = None
        return tuple(relations), tuple(transition)

    def sequences(self, line: int, construct: Construct, refs: _Refs) -> tuple[str, ...]:
        """The sequences named by ``nextval``/``currval``/``setval`` with a constant (a note for a computed one);
        every call is kept in :attr:`calls`."""
        found: dict[str, None] = {}
        for names, args in refs.calls:
            self.calls[(line, _qualified(names))] = None
            if names[-1].lower() not in _SEQUENCE_FUNCTIONS or len(names) > 2 or not args:
                continue
            if len(names) == 2 and names[0] != "pg_catalog":
                continue
            constant = _constant_name(args[0])
            if constant is not None and _QUALIFIED_NAME.match(constant):
                found[canonical_name(constant)] = None
            else:
                self.note(line, construct, f"{names[-1]}() of a sequence no constant names: its lock (RowExclusiveLock "
                          "on the sequence) cannot be derived")
        return tuple(found)

    def parameterise(self, sql: str, refs: _Refs, relations: tuple[str, ...], line: int,
                     construct: Construct) -> tuple[str, tuple[TriggerParam, ...]]:
        """``sql`` with each variable reference replaced by ``$n``, one parameter per distinct variable (a whole
        row written ``v.*`` as ``($n).*``), numbered in order of first appearance."""
        tokens = list(scan(sql))
        index = {tok.start: i for i, tok in enumerate(tokens)}
        found = []
        for location, fields in sorted(refs.columns, key=lambda c: c[0]):
            hit = _resolve(self.chain, fields)
            if hit is None or location not in index or self.is_column(fields, refs, relations, line, construct):
                continue
            last = tokens[min(index[location] + 2 * len(fields) - 2, len(tokens) - 1)]
            found.append((location, last.end + 1, fields[-1] == "*", hit))
        numbers: dict[tuple[int, str | None], int] = {}
        params: list[TriggerParam] = []
        pieces, pos = [], 0
        for start, end, star, (var, column) in found:
            key = (var.ident, column)
            if key not in numbers:
                numbers[key] = len(numbers) + 1
                param = _param(numbers[key], var, column)
                if column is None and var.ident in self.constants:
                    param = dataclasses.replace(param, constant=self.constants[var.ident])
                elif column is None and self.assigns.get(var.ident):
                    param = dataclasses.replace(param, assignments=tuple(self.assigns[var.ident] or ()))
                params.append(param)
            pieces += [sql[pos:start], f"(${numbers[key]}).*" if star else f"${numbers[key]}"]
            pos = end
        pieces.append(sql[pos:])
        if refs.params:
            self.note(line, construct, "a $n parameter reference: a trigger function has no arguments")
        return "".join(pieces), tuple(params)

    def is_column(self, fields: list[str], refs: _Refs, relations: tuple[str, ...], line: int,
                  construct: Construct) -> bool:
        """Under ``#variable_conflict use_column``, a name a relation of the statement has as a column stays a
        column (``pl_comp.c plpgsql_post_column_ref``); the default (``error``) and ``use_variable`` take the
        variable (``error`` fails at run time if both exist)."""
        if self.conflict != "use_column":
            return False
        if len(fields) > 1:
            return fields[0] in refs.aliases
        unknown = [rel for rel in relations if rel not in self.facts.relation_columns]
        for rel in unknown:
            self.want(rel)
        if unknown:
            self.note(line, construct, f"variable_conflict = use_column and the columns of {', '.join(unknown)} "
                      f"are not given: {fields[0]} taken as the PL/pgSQL variable")
        return any(fields[0] in self.facts.relation_columns.get(rel, {}) for rel in relations)


def _param(number: int, var: _Var, column: str | None) -> TriggerParam:
    """The parameter of a variable (``column`` None) or of one field of a row or record."""
    if column is None:
        return TriggerParam(number, var.name, var.type_name, var.origin)
    origin = ParamOrigin.ROW_COLUMN if var.origin == ParamOrigin.WHOLE_ROW else ParamOrigin.RECORD_FIELD
    return TriggerParam(number, f"{var.name}.{column}", (var.columns or {}).get(column), origin)


def _datum_body(datum: Mapping[str, Any]) -> Mapping[str, Any]:
    """The fields of a ``{"PLpgSQL_var": {...}}`` datum (empty for none)."""
    for body in datum.values():
        return dict(body)
    return {}


def _type_text(text: str) -> str | None:
    return " ".join(text.split()) or None


_OPTION = re.compile(r"#\s*variable_conflict\s+(error|use_variable|use_column)\b", re.I)


def _option(source: str) -> str | None:
    """The function's ``#variable_conflict`` option (pl_gram.y ``comp_option``, before the first block), lower-case,
    or None."""
    head = len(source)
    for tok in scan(source):
        if source[tok.start:tok.end + 1].lower() in ("declare", "begin", "<<"):
            head = tok.start
            break
    m = _OPTION.search(source, 0, head)
    return m.group(1).lower() if m else None


def _assigned(query: str) -> str:
    """The value of ``target := expr`` (or ``target = expr``): ``expr`` (pl_gram.y ``stmt_assign``; the target
    is a name, dotted names and subscripts)."""
    depth = 0
    for tok in scan(query):
        raw = query[tok.start:tok.end + 1]
        depth += raw == "["
        depth -= raw == "]"
        if depth == 0 and tok.name in ("COLON_EQUALS", "ASCII_61"):
            return query[tok.end + 1:]
    return query


# -- the statement handlers (one per PLpgSQL_stmt_* the walk meets) -------------------------------------------------

def _block(d: _Deriver, body: Mapping[str, Any], line: int) -> None:
    scope = _Scope(body.get("label"))
    d.chain.append(scope)
    try:
        d.declare(line, scope)
        d.walk(body.get("body"))
        handlers = (body.get("exceptions") or {}).get("PLpgSQL_exception_block", {}).get("exc_list") or ()
        for handler in handlers:  # sqlstate and sqlerrm: pl_gram.y exception_sect
            specials = {name: d.var(name, "text", ParamOrigin.SPECIAL) for name in ("sqlstate", "sqlerrm")}
            d.scoped(_Scope(None, specials), handler["PLpgSQL_exception"].get("action"))
    finally:
        d.chain.pop()


def _if(d: _Deriver, body: Mapping[str, Any], line: int) -> None:
    """``IF`` / ``ELSIF`` / ``ELSE``: each branch's statements under their conditions (:attr:`TriggerStatement.guards`;
    an ELSIF runs only when the earlier conditions were false, ``pl_exec.c exec_stmt_if``)."""
    d.expr(body.get("cond"), line, Construct.IF)
    earlier = [_cond_text(body.get("cond"))]
    _guarded(d, [(earlier[0], True)], body.get("then_body"))
    for elsif in body.get("elsif_list") or ():
        part = elsif["PLpgSQL_if_elsif"]
        d.expr(part.get("cond"), int(part.get("lineno", line)), Construct.IF)
        this = _cond_text(part.get("cond"))
        _guarded(d, [*((c, False) for c in earlier), (this, True)], part.get("stmts"))
        earlier.append(this)
    _guarded(d, [(c, False) for c in earlier], body.get("else_body"))


def _cond_text(node: Mapping[str, Any] | None) -> str:
    return str(node["PLpgSQL_expr"]["query"]) if node else "true"


def _guarded(d: _Deriver, guards: list[tuple[str, bool]], stmts: Iterable[Mapping[str, Any]] | None) -> None:
    d.guards += guards
    try:
        d.walk(stmts)
    finally:
        del d.guards[len(d.guards) - len(guards):]


def _case(d: _Deriver, body: Mapping[str, Any], line: int) -> None:
    d.expr(body.get("t_expr"), line, Construct.CASE)
    scope = _Scope(None)
    datums = d.function.get("datums", [])
    varno = body.get("t_varno")
    if isinstance(varno, int) and 0 <= varno < len(datums):  # the hidden CASE variable (pl_gram.y stmt_case)
        name = str(next(iter(datums[varno].values())).get("refname"))
        scope.items[name] = d.var(name, None, ParamOrigin.DECLARED)
    d.chain.append(scope)
    try:
        for when in body.get("case_when_list") or ():
            part = when["PLpgSQL_case_when"]
            d.expr(part.get("expr"), int(part.get("lineno", line)), Construct.CASE)
            d.walk(part.get("stmts"))
        d.walk(body.get("else_stmts"))
    finally:
        d.chain.pop()


def _loop(d: _Deriver, body: Mapping[str, Any], line: int) -> None:
    d.scoped(_Scope(body.get("label")), body.get("body"))


def _while(d: _Deriver, body: Mapping[str, Any], line: int) -> None:
    d.expr(body.get("cond"), line, Construct.WHILE)
    _loop(d, body, line)


def _fori(d: _Deriver, body: Mapping[str, Any], line: int) -> None:
    for key in ("lower", "upper", "step"):
        d.expr(body.get(key), line, Construct.FOR_INTEGER)
    name = str(_datum_body(body.get("var") or {}).get("refname", ""))
    d.scoped(_Scope(body.get("label"), {name: d.var(name, "integer", ParamOrigin.LOOP_VARIABLE)}), body.get("body"))


def _fors(d: _Deriver, body: Mapping[str, Any], line: int) -> None:
    d.expr(body.get("query"), line, Construct.FOR_QUERY)
    _loop(d, body, line)


def _forc(d: _Deriver, body: Mapping[str, Any], line: int) -> None:
    d.expr(body.get("argquery"), line, Construct.FOR_CURSOR)
    name = str(_datum_body(body.get("var") or {}).get("refname", ""))
    loop_var = d.var(name, None, ParamOrigin.LOOP_VARIABLE, True)  # implicitly a record (pl_gram.y for_control)
    d.scoped(_Scope(body.get("label"), {name: loop_var}), body.get("body"))


def _foreach_a(d: _Deriver, body: Mapping[str, Any], line: int) -> None:
    d.expr(body.get("expr"), line, Construct.FOREACH)
    _loop(d, body, line)


def _exit(d: _Deriver, body: Mapping[str, Any], line: int) -> None:
    d.expr(body.get("cond"), line, Construct.EXIT if body.get("is_exit") else Construct.CONTINUE)


def _return_query(d: _Deriver, body: Mapping[str, Any], line: int) -> None:
    if body.get("dynquery"):
        d.dynamic(body, line, Construct.RETURN_QUERY)
    else:
        d.expr(body.get("query"), line, Construct.RETURN_QUERY)


def _raise(d: _Deriver, body: Mapping[str, Any], line: int) -> None:
    for param in body.get("params") or ():
        d.expr(param, line, Construct.RAISE)
    for option in body.get("options") or ():
        d.expr(option["PLpgSQL_raise_option"].get("expr"), line, Construct.RAISE)


def _assert(d: _Deriver, body: Mapping[str, Any], line: int) -> None:
    d.expr(body.get("cond"), line, Construct.ASSERT)
    d.expr(body.get("message"), line, Construct.ASSERT)


def _dynfors(d: _Deriver, body: Mapping[str, Any], line: int) -> None:
    d.dynamic(body, line, Construct.FOR_EXECUTE)
    _loop(d, body, line)


def _open(d: _Deriver, body: Mapping[str, Any], line: int) -> None:
    if body.get("dynquery"):
        d.dynamic(body, line, Construct.OPEN)
    d.expr(body.get("query"), line, Construct.OPEN)
    d.expr(body.get("argquery"), line, Construct.OPEN)


def _call(d: _Deriver, body: Mapping[str, Any], line: int) -> None:
    query = str(body.get("expr", {}).get("PLpgSQL_expr", {}).get("query", ""))
    word = "CALL" if body.get("is_call") else "DO"
    d.note(line, Construct.CALL, f"{word}: the statements of {' '.join(query.split())!r} run with locks of their "
           "own, not derived here")
    d.expr(body.get("expr"), line, Construct.CALL)


def _simple(construct: Construct, *keys: str) -> Any:
    """A handler deriving the expressions under ``keys`` as ``construct``."""
    def handler(d: _Deriver, body: Mapping[str, Any], line: int) -> None:
        for key in keys:
            d.expr(body.get(key), line, construct)
    return handler


_HANDLERS: dict[str, Any] = {
    "block": _block, "if": _if, "case": _case, "loop": _loop, "while": _while, "fori": _fori, "fors": _fors,
    "forc": _forc, "foreach_a": _foreach_a, "exit": _exit, "return_query": _return_query, "raise": _raise,
    "assert": _assert, "dynfors": _dynfors, "open": _open, "call": _call,
    "assign": lambda d, body, line: d.assigned(body, line), "execsql": _simple(Construct.SQL, "sqlstmt"),
    "perform": _simple(Construct.PERFORM, "expr"), "return": _simple(Construct.RETURN, "expr"),
    "return_next": _simple(Construct.RETURN_NEXT, "expr"), "fetch": _simple(Construct.FETCH, "expr"),
    "dynexecute": lambda d, body, line: d.dynamic(body, line, Construct.EXECUTE),
}


# -- the entry points ------------------------------------------------------------------------------------------------

def trigger_statements(source: str, *, language: str = "plpgsql", function_name: str | None = None,
                       table_type: str | None = None, table_columns: Mapping[str, str] | None = None,
                       relation_columns: Mapping[str, Mapping[str, str]] | None = None,
                       transition_tables: Collection[str] = (), variable_conflict: str | None = None
                       ) -> TriggerProgram:
    """The statements a trigger function prepares, from its source, with typed parameters (see the module doc).

    The body is compiled by PostgreSQL's own PL/pgSQL grammar (pglast ``parse_plpgsql``, libpg_query:
    ``pl_gram.y``) inside a ``CREATE FUNCTION ... RETURNS trigger LANGUAGE plpgsql`` built here; variable
    references are resolved as ``pl_comp.c`` does while the statement is prepared (``plpgsql_parser_setup``,
    ``resolve_column_ref``, ``make_datum_param``; names looked up innermost block first, ``pl_funcs.c
    plpgsql_ns_lookup``), and each distinct variable becomes one ``$n``.

    :param source: ``pg_proc.prosrc``.
    :param language: ``pg_language.lanname`` of the function.
    :param function_name: ``pg_proc.proname`` (the outermost block's label: ``fname.var`` references; for C
        functions, the built-ins known to open no relation).
    :param table_type: the trigger table's row type as SQL text (its ``regclass`` text, e.g. ``public.item``): the
        type of a whole ``NEW``/``OLD``; None leaves it unknown.
    :param table_columns: the trigger table's columns, name → type as SQL text (``format_type``): the types of
        ``NEW.col``/``OLD.col``.
    :param relation_columns: columns of other relations, by quoted name as written (:func:`canonical_name`), for
        ``%TYPE``, ``%ROWTYPE`` and variables of a table's row type (:attr:`TriggerProgram.type_relations` lists
        the ones that would help), and under ``#variable_conflict use_column``.
    :param transition_tables: the trigger's ``REFERENCING`` names (``pg_trigger.tgoldtable``, ``tgnewtable``).
    :param variable_conflict: the ``plpgsql.variable_conflict`` setting (None: ``error``); the function's own
        ``#variable_conflict`` wins.
    :return: the program; never raises for a function it cannot read (it says so in ``not_derivable``).
    """
    lang = language.lower()
    if lang != "plpgsql":
        return _other_language(lang, function_name)
    tag = "lockscope"
    while f"${tag}$" in source:
        tag += "_"
    try:
        src = _Source(source)
        text = (f"CREATE FUNCTION lockscope_trigger() RETURNS trigger LANGUAGE plpgsql "
                f"AS ${tag}${src.compilable()}${tag}$")
        compiled = pglast.parse_plpgsql(text)
    except ParseError as exc:
        return TriggerProgram(lang, FunctionSupport.PLPGSQL, not_derivable=(NotDerivable(
            0, Construct.FUNCTION, f"the PL/pgSQL body does not compile ({exc}): nothing derived"),))
    facts = _Facts(function_name, table_type, dict(table_columns or {}), dict(relation_columns or {}),
                   frozenset(transition_tables), (variable_conflict or "error").lower())
    return _Deriver(src, compiled[0]["PLpgSQL_function"], facts).run()


def trigger_program(trigger: ExecTriggerRow, table_columns: Mapping[str, str],
                    relation_columns: Mapping[str, Mapping[str, str]] | None = None) -> TriggerProgram:
    """:func:`trigger_statements` of one trigger's function with the facts its ``exec_triggers.sql`` row gives (the
    language, the name, the table's row type, the transition tables, ``plpgsql.variable_conflict``), and the
    function's ``search_path`` in :attr:`TriggerProgram.search_path`.

    :param table_columns: the trigger table's columns, name → type (``audit_table_columns.sql`` of
        ``trigger.table_name``: ``column_name`` → ``type_name``).
    :param relation_columns: as for :func:`trigger_statements` (``audit_table_columns.sql`` of the program's
        ``type_relations``, keyed by ``written``).
    """
    program = trigger_statements(
        trigger.prosrc, language=trigger.language, function_name=trigger.function_name,
        table_type=trigger.table_name, table_columns=table_columns, relation_columns=relation_columns,
        transition_tables=[t for t in (trigger.old_table, trigger.new_table) if t],
        variable_conflict=trigger.variable_conflict)
    settings = [c.split("=", 1)[1] for c in trigger.proconfig or () if c.startswith("search_path=")]
    return dataclasses.replace(program, search_path=settings[-1]) if settings else program


def _other_language(language: str, function_name: str | None) -> TriggerProgram:
    if language in ("internal", "c") and function_name in NO_LOCK_BUILTINS:
        return TriggerProgram(language, FunctionSupport.NO_LOCKS)
    if language == "sql":
        reason = "an SQL-language function: its statements are planned at every call (functions.c); not derived"
        return TriggerProgram(language, FunctionSupport.SQL, not_derivable=(
            NotDerivable(0, Construct.FUNCTION, reason),))
    reason = f"LANGUAGE {language}: what the function runs cannot be derived from its source"
    return TriggerProgram(language, FunctionSupport.OTHER, not_derivable=(
        NotDerivable(0, Construct.FUNCTION, reason),))


# -- which triggers fire (trigger.c) -------------------------------------------------------------------------------

class TriggerTiming(StrEnum):
    """When a trigger fires relative to its event (``pg_trigger.h TRIGGER_TYPE_BEFORE``/``INSTEAD``)."""

    BEFORE = "BEFORE"
    AFTER = "AFTER"
    INSTEAD = "INSTEAD OF"


class TriggerLevel(StrEnum):
    """``FOR EACH ROW`` or ``FOR EACH STATEMENT`` (``pg_trigger.h TRIGGER_TYPE_ROW``)."""

    ROW = "ROW"
    STATEMENT = "STATEMENT"


class TriggerEvent(StrEnum):
    """The event a statement fires (an ``INSERT ... ON CONFLICT DO UPDATE`` fires INSERT and, per conflicting row,
    UPDATE; a MERGE the events of its actions: ask once per event)."""

    INSERT = "INSERT"
    UPDATE = "UPDATE"
    DELETE = "DELETE"
    TRUNCATE = "TRUNCATE"


#: pg_trigger.h TRIGGER_TYPE_* bits of ``tgtype``.
_TYPE_ROW, _TYPE_BEFORE, _TYPE_INSTEAD = 1 << 0, 1 << 1, 1 << 6
_EVENT_BITS = {TriggerEvent.INSERT: 1 << 2, TriggerEvent.DELETE: 1 << 3, TriggerEvent.UPDATE: 1 << 4,
               TriggerEvent.TRUNCATE: 1 << 5}
_PHASES = {(TriggerTiming.BEFORE, TriggerLevel.STATEMENT): 0, (TriggerTiming.BEFORE, TriggerLevel.ROW): 1,
           (TriggerTiming.INSTEAD, TriggerLevel.ROW): 2, (TriggerTiming.AFTER, TriggerLevel.ROW): 3,
           (TriggerTiming.AFTER, TriggerLevel.STATEMENT): 4}


@dataclass(frozen=True)
class FiringTrigger:
    """A trigger that fires for a statement.

    :ivar trigger: its catalog facts.
    :ivar timing: BEFORE, AFTER or INSTEAD OF.
    :ivar level: ROW (once per affected row) or STATEMENT (once).
    :ivar conditional: it has a ``WHEN`` clause: whether it fires depends on the data (per row).
    :ivar deferred: an ``INITIALLY DEFERRED`` constraint trigger: it fires at COMMIT (``trigger.c
        AfterTriggerFireDeferred``), unless ``SET CONSTRAINTS ... IMMEDIATE``.
    """

    trigger: ExecTriggerRow
    timing: TriggerTiming
    level: TriggerLevel
    conditional: bool
    deferred: bool


def firing_triggers(triggers: Iterable[ExecTriggerRow], event: TriggerEvent, *,
                    updated_columns: Collection[str] | None = None,
                    replication_role: str = "origin") -> tuple[FiringTrigger, ...]:
    """The triggers of a table that fire for a statement of ``event``, in firing order: BEFORE STATEMENT, then per
    row BEFORE ROW (INSTEAD OF ROW on a view), then at the end of the statement the queued AFTER ROW events (row
    by row) and AFTER STATEMENT; by name within each (``trigger.c RelationBuildTriggers`` reads them in name
    order, and they fire in that order).

    A trigger fires when its ``tgtype`` has the event, its ``tgenabled`` allows the session's
    ``session_replication_role`` (``trigger.c TriggerEnabled``: ``O`` origin/local, ``R`` replica, ``A`` always,
    ``D`` never) and, for ``UPDATE OF`` columns, the UPDATE sets one of them (generated columns computed from an
    updated column count as updated: ``ExecGetAllUpdatedCols``).

    :param triggers: the table's user triggers (``exec_triggers.sql``; foreign-key and other constraint-made
        triggers are not among them).
    :param updated_columns: the columns an UPDATE sets (names); None: unknown, every ``UPDATE OF`` trigger counts.
    :param replication_role: ``session_replication_role`` (``origin``, ``replica`` or ``local``).
    """
    out = []
    for trigger in triggers:
        if not trigger.tgtype & _EVENT_BITS[event] or not _enabled(trigger.tgenabled, replication_role):
            continue
        if (event == TriggerEvent.UPDATE and trigger.tgattr_names and updated_columns is not None
                and not set(trigger.tgattr_names) & set(updated_columns)):
            continue
        timing = (TriggerTiming.BEFORE if trigger.tgtype & _TYPE_BEFORE else
                  TriggerTiming.INSTEAD if trigger.tgtype & _TYPE_INSTEAD else TriggerTiming.AFTER)
        level = TriggerLevel.ROW if trigger.tgtype & _TYPE_ROW else TriggerLevel.STATEMENT
        out.append(FiringTrigger(trigger, timing, level, trigger.has_when, trigger.initially_deferred))
    return tuple(sorted(out, key=lambda f: (_PHASES[(f.timing, f.level)], f.trigger.tgname.encode())))


def _enabled(tgenabled: str, replication_role: str) -> bool:
    if tgenabled == "D":
        return False
    if replication_role == "replica":
        return tgenabled in ("R", "A")
    return tgenabled in ("O", "A")



def guards_hold(guards: Sequence[tuple[str, bool]], specials: Mapping[str, str]) -> bool | None:
    """Whether a statement's ``IF`` conditions let it run, judged on the trigger's own variables: True when every
    condition is known and has the value needed, False when one is known and has not, None when one depends on
    anything else (data, other variables: the statement may run).

    A condition is known when it is made of ``TG_OP``, ``TG_WHEN``, ``TG_LEVEL``, ``TG_TABLE_NAME``,
    ``TG_TABLE_SCHEMA``, ``TG_NAME`` and string constants with ``=``, ``<>``, ``!=``, ``IN``, ``NOT IN``, ``AND``,
    ``OR``, ``NOT`` and parentheses (the dispatch on ``TG_OP`` most trigger functions begin with).

    :param specials: those variables' values, lower-case names (``{"tg_op": "INSERT", ...}``).
    """
    unknown = False
    for cond, wanted in guards:
        value = _evaluate(cond, specials)
        if value is None:
            unknown = True
        elif value != wanted:
            return False
    return None if unknown else True


def _evaluate(cond: str, specials: Mapping[str, str]) -> bool | None:
    try:
        (stmt,) = pglast.parse_sql(f"SELECT {cond}")
    except (ParseError, ValueError):
        return None
    targets: Sequence[Any] = getattr(stmt.stmt, "targetList", None) or ()
    if len(targets) != 1:
        return None
    return _truth(targets[0].val, specials)


def _operand(node: Any, specials: Mapping[str, str]) -> str | None:
    if isinstance(node, ast.A_Const) and isinstance(node.val, ast.String):
        return str(node.val.sval)
    if isinstance(node, ast.TypeCast):
        return _operand(node.arg, specials)
    fields = node.fields if isinstance(node, ast.ColumnRef) else None
    if fields is not None and len(fields) == 1 and isinstance(fields[0], ast.String):
        return specials.get(str(fields[0].sval).lower())
    return None


def _truth(node: Any, specials: Mapping[str, str]) -> bool | None:
    """A condition's value from the trigger's variables, None when it depends on anything else."""
    if isinstance(node, ast.BoolExpr):
        values = [_truth(a, specials) for a in node.args or ()]
        if node.boolop == enums.BoolExprType.NOT_EXPR:
            return None if not values or values[0] is None else not values[0]
        if node.boolop == enums.BoolExprType.AND_EXPR:
            return False if False in values else None if None in values else True
        return True if True in values else None if None in values else False
    if isinstance(node, ast.A_Expr) and node.name and isinstance(node.name[-1], ast.String):
        op = str(node.name[-1].sval)
        left = _operand(node.lexpr, specials)
        if node.kind == enums.A_Expr_Kind.AEXPR_IN and isinstance(node.rexpr, tuple):
            items = [_operand(i, specials) for i in node.rexpr]
            if left is None or None in items:
                return None
            return (left in items) == (op == "=")
        right = _operand(node.rexpr, specials)
        if left is None or right is None or op not in ("=", "<>", "!="):
            return None
        return (left == right) == (op == "=")
    return None
