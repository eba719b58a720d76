"""Hypothesis strategies for the differential test: schemas, statements valid by construction, workloads, cases.

Validity: :class:`World` keeps each table's rows (id -> k and the key each foreign key references) as the data
loads them (:func:`tests.difftest.render.schema_sql`), and every drawn statement is simulated on it in transaction
order: inserted keys are fresh, foreign-key values exist (or are NULL), a DELETE or a key UPDATE is drawn only when
the referencing rows' actions allow it (NO ACTION and RESTRICT with referencing rows refuse it; CASCADE, SET NULL
and SET DEFAULT are followed recursively, to the depth a chain gives). What the simulation does not follow (a
trigger that skips a row, PostgreSQL 13/14 turning a cross-partition UPDATE of a referenced row into a DELETE) is
rare; such a case fails for real and the harness counts it as invalid.

Every draw goes through integers and sampled_from with the simplest choice first, so a shrunk case has fewer
tables, partitions, indexes and statements, and plain tables.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from hypothesis import strategies as st

from .render import (
    DEFAULT,
    NULL,
    Case,
    ForeignKey,
    Index,
    Level,
    Partitioning,
    Schema,
    Statement,
    Table,
    Trigger,
    Val,
    View,
    Workload,
    big_text,
    fk_columns,
    leaves,
    shape_of,
)

__all__ = ["World", "cases", "schemas", "workloads"]

T = TypeVar("T")
Draw = Callable[[st.SearchStrategy[Any]], Any]


def weighted(draw: Draw, choices: Sequence[tuple[int, T]]) -> T:
    """One of ``choices`` (weight, item), the first one the simplest (what shrinking goes to)."""
    total = sum(w for w, _ in choices)
    # a wide range folded: Hypothesis draws small integers (and 0) far more often than others; folded, the
    # weights hold (roughly), and a shrunk draw still goes to the first choice
    n = draw(st.integers(0, 2**16 - 1)) % total
    for w, item in choices:
        if n < w:
            return item
        n -= w
    raise AssertionError("unreachable")


# --- schemas -----------------------------------------------------------------------------------------------------

def _level(draw: Draw, top: Level | None, rows: int) -> Level:
    options: list[tuple[int, tuple[str, str]]] = [(3, ("list", "k")), (3, ("range", "id")), (2, ("hash", "id")),
                                                  (1, ("range", "k")), (1, ("hash", "k"))]
    if top is not None:  # a second level on the other column (or hash)
        options = [(w, o) for w, o in options if o[1] != top.column or o[0] == "hash"]
    method, column = weighted(draw, options)
    if top is None:
        parts = weighted(draw, [(6, draw(st.integers(2, 6))), (3, draw(st.integers(7, 16))),
                                (1, draw(st.integers(17, 40)))])
    else:
        parts = draw(st.integers(2, 4))
    default = method != "hash" and draw(st.integers(0, 2)) == 2
    return Level(method, column, parts, default)


def _partitioning(draw: Draw, rows: int) -> Partitioning | None:
    shape = weighted(draw, [(9, "plain"), (8, "partitioned"), (3, "sub")])
    if shape == "plain":
        return None
    top = _level(draw, None, rows)
    if shape == "partitioned":
        return Partitioning(top)
    sub = _level(draw, top, rows)
    budget = max(1, (40 - top.parts) // max(1, sub.parts - 1))
    which = weighted(draw, [(2, "first"), (2, "all"), (1, "alternate")])
    sub_of = {"first": (0,), "all": tuple(range(top.parts)),
              "alternate": tuple(range(0, top.parts, 2))}[which][:budget]
    return Partitioning(top, sub, sub_of)


def _index(draw: Draw, t: Table, fk_cols: Sequence[str]) -> Index:
    partitioned = t.partitioning is not None
    plain_exprs = ["v", "k", "v, id", "k, v", "(v + 1)", "id, v", *list(fk_cols)]
    if t.toast:
        plain_exprs += ["length(note)", "lower(left(note, 8))"]
    if t.has_u:
        plain_exprs.append("u")
    kind = weighted(draw, [(6, "plain"), (2, "unique"), (2, "partial"), (1, "hash"), (1, "leaf")])
    if kind == "unique":
        if t.has_u and not partitioned:
            return Index("u", unique=True)
        return Index(", ".join((*t.key, "v")), unique=True)
    if kind == "hash":
        return Index(draw(st.sampled_from(["v", "k"])), method="hash")
    exprs = draw(st.sampled_from(plain_exprs))
    if kind == "partial":
        return Index(exprs, where=draw(st.sampled_from(["v > 5", "k = 0"] + (["note is not null"] if t.toast else []))))
    if kind == "leaf" and partitioned:
        return Index(exprs, leaf=draw(st.integers(0, len(leaves(t)) - 1)))
    return Index(exprs)


def _table(draw: Draw, i: int) -> Table:
    rows = weighted(draw, [(6, draw(st.integers(3, 12))), (3, draw(st.integers(13, 30)))])
    part = _partitioning(draw, rows)
    levels = [] if part is None else [part.top] + ([part.sub] if part.sub and part.sub_of else [])
    on_k = [lv for lv in levels if lv.column == "k"]
    list_k = [lv.parts for lv in on_k if lv.method == "list"]
    kb = max([draw(st.integers(1, 8)), *(p * draw(st.integers(1, 2)) for p in list_k)])
    if any(lv.method == "range" for lv in on_k):
        kb = max(kb, 2)
    composite = bool(on_k) or draw(st.integers(0, 3)) == 3
    t = Table(
        name=f"t{i}", rows=rows, kb=kb, composite=composite,
        id_identity=draw(st.integers(0, 7)) == 7,
        serial=weighted(draw, [(6, ""), (1, "serial"), (1, "bigserial"), (1, "identity")]),
        has_u=draw(st.integers(0, 3)) == 3,
        toast=weighted(draw, [(5, ""), (2, "short"), (1, "compressible"), (2, "incompressible"), (1, "mixed")]),
        partitioning=part)
    return t


def _with_indexes(draw: Draw, schema: Schema) -> Schema:
    tables = []
    for t in schema.tables:
        count = weighted(draw, [(3, 0), (4, draw(st.integers(1, 3))), (2, draw(st.integers(4, 8))),
                                (1, draw(st.integers(9, 20)))])
        fk_cols = [", ".join(fk_columns(schema, fk)) for fk in schema.fks_of(t.name)]
        tables.append(dataclasses.replace(t, indexes=tuple(_index(draw, t, fk_cols) for _ in range(count))))
    return Schema(tuple(tables), schema.fks, schema.triggers, schema.views, schema.sequences, schema.audit_index)


def _fks(draw: Draw, tables: Sequence[Table]) -> tuple[ForeignKey, ...]:
    out: list[ForeignKey] = []
    n = 0
    for i, child in enumerate(tables):
        count = 0 if i == 0 else weighted(draw, [(2, 0), (5, 1), (2, 2)])
        # the previous table half the time: chains (a cascade that cascades)
        targets = [i - 1 if draw(st.booleans()) else draw(st.integers(0, i - 1)) for _ in range(count)]
        if child.partitioning is None and not child.composite and draw(st.integers(0, 7)) == 7:
            targets.append(i)  # a self-reference
        for j in targets:
            parent = tables[j]
            self_ref = j == i
            per = weighted(draw, [(5, draw(st.integers(1, 3))), (2, draw(st.integers(4, 6))),
                                  (2, draw(st.integers(7, 9)))])
            if self_ref:
                per = max(2, per)
            out.append(ForeignKey(
                name=f"f{n}", child=child.name, parent=parent.name,
                on_delete=weighted(draw, [(2, "NO ACTION"), (1, "RESTRICT"), (3, "CASCADE"), (1, "SET NULL"),
                                          (1, "SET DEFAULT")]),
                on_update=weighted(draw, [(2, "NO ACTION"), (1, "RESTRICT"), (3, "CASCADE"), (1, "SET NULL"),
                                          (1, "SET DEFAULT")]),
                deferrable=weighted(draw, [(8, ""), (1, "immediate"), (1, "deferred")]),
                per=per, covered=draw(st.integers(0, parent.rows)), indexed=draw(st.integers(0, 2)) > 0))
            n += 1
    return tuple(out)


_BODY = ("audit", "counter", "lookup", "branch", "dynamic", "transition", "nextval")


def _trigger(draw: Draw, n: int, tables: Sequence[Table], fks: Sequence[ForeignKey], sequences: int) -> Trigger:
    t = draw(st.sampled_from(list(tables)))
    leaf = None
    if t.partitioning is not None and draw(st.integers(0, 2)) == 2:
        leaf = draw(st.integers(0, len(leaves(t)) - 1))
    timing = weighted(draw, [(3, "after"), (2, "before")])
    level = weighted(draw, [(3, "row"), (1, "statement")])
    events = tuple(e for e in ("insert", "update", "delete") if draw(st.integers(0, 2)) > 0) or ("insert",)
    update_of: tuple[str, ...] = ()
    if "update" in events and draw(st.integers(0, 3)) == 3:
        update_of = ("v",)
    when = ""
    if level == "row" and len(events) == 1 and draw(st.integers(0, 3)) == 3:
        when = {"insert": "NEW.v > 3", "delete": "OLD.v > 3", "update": "OLD.v IS DISTINCT FROM NEW.v"}[events[0]]
    transition: tuple[str, ...] = ()
    if (timing == "after" and len(events) == 1 and not update_of and (level == "statement" or (
            t.partitioning is None)) and draw(st.integers(0, 2)) == 2):
        transition = {"insert": ("new",), "delete": ("old",), "update": ("new", "old")}[events[0]]
    names = [x.name for x in tables]
    body: list[str] = []
    for _ in range(draw(st.integers(1, 3))):
        what = weighted(draw, [(4, "audit"), (3, "counter"), (3, "lookup"), (2, "branch"), (1, "dynamic"),
                               (1, "transition"), (1, "nextval")])
        if (what == "transition" and not transition) or (what == "nextval" and not sequences):
            what = "audit"
        if what in ("lookup", "dynamic"):
            what += ":" + draw(st.sampled_from(names))
        body.append(what)
    returns_null = (timing == "before" and level == "row" and events == ("insert",)
                    and not any(fk.parent == t.name for fk in fks) and draw(st.integers(0, 9)) == 9)
    return Trigger(f"trg_{n}", t.name, timing, level, events, leaf, update_of, when, transition, tuple(body),
                   returns_null)


@st.composite
def schemas(draw: Draw, major: int = 18) -> Schema:
    """A schema of 2-5 tables with data, foreign keys, indexes, triggers, views and sequences."""
    count = weighted(draw, [(4, 2), (4, 3), (2, 4), (1, 5)])
    tables = [_table(draw, i) for i in range(count)]
    fks = _fks(draw, tables)
    sequences = weighted(draw, [(3, 0), (1, 1), (1, 2)])
    trigger_count = weighted(draw, [(5, 0), (3, 1), (2, draw(st.integers(2, 3)))])
    triggers = tuple(_trigger(draw, n, tables, fks, sequences) for n in range(trigger_count))
    views: list[View] = []
    for n in range(weighted(draw, [(3, 0), (2, 1), (1, 2)])):
        plain_fks = [fk for fk in fks if not fk.self_reference]
        if plain_fks and draw(st.integers(0, 1)):
            views.append(View(f"vw{n}", "join", "", draw(st.sampled_from(plain_fks)).name))
        else:
            views.append(View(f"vw{n}", "simple", draw(st.sampled_from([t.name for t in tables]))))
    schema = Schema(tuple(tables), fks, triggers, tuple(views), sequences, draw(st.booleans()))
    return _with_indexes(draw, schema)


# --- the simulation ----------------------------------------------------------------------------------------------

Key = tuple[int, ...]


@dataclass
class Effect:
    """What a statement did to the simulated tables (for validity and the census tags)."""

    events: dict[tuple[str, str], int] = field(default_factory=dict)  # (table, insert/update/delete) -> rows
    checks: set[str] = field(default_factory=set)  # foreign keys checked (their names)
    actions: set[tuple[str, str]] = field(default_factory=set)  # (foreign key, action) fired
    depth: int = 0
    toast: bool = False
    movement: bool = False

    def add(self, table: str, event: str, depth: int = 0, rows: int = 1) -> None:
        self.events[(table, event)] = self.events.get((table, event), 0) + rows
        self.depth = max(self.depth, depth)


class Invalid(Exception):
    """The simulated statement would fail."""


class World:
    """The simulated rows: ``rows[table][id] = {"k": k, fk name: referenced key or None}``."""

    def __init__(self, schema: Schema, major: int):
        self.schema = schema
        self.major = major
        self.rows: dict[str, dict[int, dict[str, Any]]] = {}
        self.used: dict[str, set[int]] = {}
        for t in schema.tables:
            rows: dict[int, dict[str, Any]] = {}
            for g in range(1, t.rows + 1):
                row: dict[str, Any] = {"k": g % t.kb}
                for fk in schema.fks_of(t.name):
                    parent = schema.table(fk.parent)
                    if fk.self_reference:
                        ref = g // fk.per if g >= fk.per else None
                    else:
                        ref = (g - 1) // fk.per + 1 if (g - 1) // fk.per < fk.covered else None
                    row[fk.name] = None if ref is None else ((ref % parent.kb, ref) if parent.composite else (ref,))
                rows[g] = row
            self.rows[t.name] = rows
            self.used[t.name] = set(rows)

    def copy(self) -> World:
        other = copy.copy(self)
        other.rows = copy.deepcopy(self.rows)
        other.used = copy.deepcopy(self.used)
        return other

    def key(self, table: str, id_: int) -> Key:
        t = self.schema.table(table)
        return (self.rows[table][id_]["k"], id_) if t.composite else (id_,)

    def exists(self, table: str, key: Key | None) -> bool:
        if key is None:
            return True
        row = self.rows[table].get(key[-1])
        return row is not None and self.key(table, key[-1]) == key

    def referencing(self, table: str, key: Key) -> list[tuple[ForeignKey, int]]:
        out = []
        for fk in self.schema.fks_to(table):
            for cid, row in self.rows[fk.child].items():
                if row.get(fk.name) == key:
                    out.append((fk, cid))
        return out

    def fresh_id(self, table: str, far: bool) -> int:
        t = self.schema.table(table)
        if not far:
            for i in range(t.rows + 1, 2 * t.rows + 1):
                if i not in self.used[table]:
                    self.used[table].add(i)
                    return i
        i = 5000
        while i in self.used[table]:
            i += 1
        self.used[table].add(i)
        return i

    def default_key(self, fk: ForeignKey) -> Key:
        parent = self.schema.table(fk.parent)
        return (1 % parent.kb, 1) if parent.composite else (1,)

    def k_domain(self, table: str) -> list[int]:
        t = self.schema.table(table)
        return list(range(t.kb))

    # -- writes -----------------------------------------------------------------------------------------------
    def insert(self, table: str, rows: Sequence[dict[str, Any]], eff: Effect, depth: int = 0) -> None:
        """Insert rows ({"id", "k", fk name: key or None}); raises :class:`Invalid`."""
        for row in rows:
            id_ = row["id"]
            if id_ is not None and id_ in self.rows[table]:
                raise Invalid(f"duplicate {table}.{id_}")
        for row in rows:
            for fk in self.schema.fks_of(table):
                ref = row.get(fk.name)
                if ref is not None:
                    eff.checks.add(fk.name)
            if row["id"] is not None:
                self.rows[table][row["id"]] = {k: v for k, v in row.items() if k != "id"}
                self.used[table].add(row["id"])
        for row in rows:  # at the end of the statement: self-references may point to rows of the same statement
            for fk in self.schema.fks_of(table):
                ref = row.get(fk.name)
                if ref is not None and fk.deferrable != "deferred" and not self.exists(fk.parent, ref):
                    raise Invalid(f"{fk.name}: {ref} missing")
        eff.add(table, "insert", depth, len(rows))

    def delete(self, table: str, ids: Sequence[int], eff: Effect, depth: int = 0) -> None:
        pending: list[tuple[ForeignKey, int, Key]] = []
        stack = [(table, i, depth) for i in ids]
        while stack:
            t, i, d = stack.pop()
            if i not in self.rows[t]:
                continue
            key = self.key(t, i)
            del self.rows[t][i]
            eff.add(t, "delete", d)
            for fk in self.schema.fks_to(t):  # the action trigger fires for every row, referenced or not
                eff.actions.add((fk.name, fk.on_delete))
            for fk, cid in self.referencing(t, key):
                self._act(fk, fk.on_delete, cid, key, None, eff, d, stack, pending)
        self._check_pending(pending)

    def update_key(self, table: str, id_: int, new_id: int | None, new_k: int | None, eff: Effect,
                   moves: bool) -> None:
        old = self.key(table, id_)
        row = self.rows[table].pop(id_)
        if new_k is not None:
            row["k"] = new_k
        nid = id_ if new_id is None else new_id
        if nid in self.rows[table]:
            raise Invalid("duplicate key")
        self.rows[table][nid] = row
        self.used[table].add(nid)
        new = self.key(table, nid)
        eff.add(table, "update")
        eff.movement = eff.movement or moves
        if old == new:
            return
        pending: list[tuple[ForeignKey, int, Key]] = []
        stack: list[tuple[str, int, int]] = []
        refs = self.referencing(table, old)
        if refs and moves and self.major < 15:
            raise Invalid("PG 13/14: a cross-partition UPDATE of a referenced row acts as a DELETE")
        for fk in self.schema.fks_to(table):
            eff.actions.add((fk.name, fk.on_update))
        for fk, cid in refs:
            self._act(fk, fk.on_update, cid, old, new, eff, 0, stack, pending)
        if stack:
            raise AssertionError("an update never deletes")
        self._check_pending(pending)

    def _act(self, fk: ForeignKey, action: str, cid: int, old: Key, new: Key | None, eff: Effect, depth: int,
             stack: list[tuple[str, int, int]], pending: list[tuple[ForeignKey, int, Key]]) -> None:
        eff.actions.add((fk.name, action))
        row = self.rows[fk.child].get(cid)
        if row is None:
            return
        if action == "RESTRICT":
            raise Invalid(f"{fk.name} restrict")
        if action == "NO ACTION":
            if fk.deferrable != "deferred":
                pending.append((fk, cid, old))
            return
        if action == "CASCADE" and new is None:
            stack.append((fk.child, cid, depth + 1))
            return
        target = new if action == "CASCADE" else None if action == "SET NULL" else self.default_key(fk)
        row[fk.name] = target
        eff.add(fk.child, "update", depth + 1)
        if target is not None:
            eff.checks.add(fk.name)
            pending.append((fk, cid, ()))  # the new value must exist at the end

    def _check_pending(self, pending: Sequence[tuple[ForeignKey, int, Key]]) -> None:
        for fk, cid, old in pending:
            row = self.rows[fk.child].get(cid)
            if row is None:
                continue
            ref = row.get(fk.name)
            if old and ref == old and not self.exists(fk.parent, old):
                raise Invalid(f"{fk.name}: still referenced")
            if not old and ref is not None and fk.deferrable != "deferred" and not self.exists(fk.parent, ref):
                raise Invalid(f"{fk.name}: new value missing")


# --- statements --------------------------------------------------------------------------------------------------

def _val(draw: Draw, value: int | str, kind: str = "int") -> Val:
    """A value, sent as a parameter 7 times out of 8."""
    return Val(str(value), kind, draw(st.integers(0, 7)) != 7)


def _main_tables(schema: Schema) -> list[str]:
    return [t.name for t in schema.tables]


class _Builder:
    """Draws one statement on the world (mutating it); each ``op_*`` returns a statement or None (not possible)."""

    def __init__(self, draw: Draw, world: World, major: int, index: int):
        self.draw = draw
        self.w = world
        self.s = world.schema
        self.major = major
        self.index = index

    # helpers
    def table(self, names: Sequence[str] | None = None) -> Table:
        names = list(names) if names is not None else _main_tables(self.s)
        return self.s.table(self.draw(st.sampled_from(names)))

    def existing(self, table: str, anchor: bool = True) -> list[int]:
        return sorted(i for i in self.w.rows[table] if anchor or i != 1)

    def pick(self, items: Sequence[T]) -> T:
        return self.draw(st.sampled_from(list(items)))

    def referenced_table(self, names: Sequence[str] | None = None) -> Table:
        """A table, one that foreign keys reference every other time (their actions are what deletes and key
        updates exercise)."""
        names = list(names) if names is not None else _main_tables(self.s)
        referenced = [n for n in names if self.s.fks_to(n)]
        if referenced and self.draw(st.booleans()):
            return self.table(referenced)
        return self.table(names)

    def target_row(self, t: Table) -> int | None:
        """A row to delete or re-key (never the anchor), one with referencing rows every other time."""
        ids = self.existing(t.name, anchor=False)
        if not ids:
            return None
        referenced = [i for i in ids if self.w.referencing(t.name, self.w.key(t.name, i))]
        if referenced and self.draw(st.booleans()):
            return self.pick(referenced)
        return self.pick(ids)

    def id_where(self, t: Table, id_: int, vals: list[tuple[str, Val]], opts: list[str]) -> None:
        vals.append(("id", _val(self.draw, id_)))
        if t.composite and id_ in self.w.rows[t.name] and self.draw(st.integers(0, 2)) == 2:
            opts.append("with_k")
            vals.append(("k", _val(self.draw, self.w.rows[t.name][id_]["k"])))

    def fks_held(self, t: Table, self_ref: bool = True) -> list[ForeignKey]:
        return [fk for fk in self.s.fks_of(t.name) if self_ref or not fk.self_reference]

    def ref_val(self, fk: ForeignKey) -> tuple[Any, list[tuple[str, Val]]]:
        """A referenced key of ``fk`` that exists (or NULL), as (key, the child's column values)."""
        ids = self.existing(fk.parent)
        if not ids or self.draw(st.integers(0, 9)) == 9:
            cols = [(c, NULL) for c in fk_columns(self.s, fk)]
            return None, cols
        pid = self.pick(ids)
        key = self.w.key(fk.parent, pid)
        names = fk_columns(self.s, fk)
        return key, [(c, _val(self.draw, v)) for c, v in zip(names, key, strict=True)]

    def note_val(self, t: Table) -> Val:
        kind = weighted(self.draw, [(3, "short"), (2, "incompressible"), (1, "compressible"), (1, "sql")])
        if kind == "short":
            return _val(self.draw, f"n{self.index}", "text")
        if kind == "sql":
            return Val("repeat(md5(random()::text), 100)", "sql", False)
        return _val(self.draw, big_text(self.index, kind == "compressible"), "text")

    # selects
    def op_select_point(self) -> Statement:
        t = self.table()
        ids = self.existing(t.name) or [1]
        id_ = self.pick(ids) if self.draw(st.integers(0, 5)) else self.w.fresh_id(t.name, True)
        vals: list[tuple[str, Val]] = []
        opts: list[str] = []
        self.id_where(t, id_, vals, opts)
        lock = weighted(self.draw, [(4, ""), (1, "for update"), (1, "for share"), (1, "for no key update"),
                                    (1, "for key share")])
        if lock:
            opts.append(lock)
        return Statement("select_point", t.name, tuple(vals), opts=tuple(opts))

    def op_select_range(self) -> Statement:
        t = self.table()
        lo = self.draw(st.integers(1, t.rows))
        return Statement("select_range", t.name, (("lo", _val(self.draw, lo)),
                                                  ("hi", _val(self.draw, lo + self.draw(st.integers(0, 9))))))

    def op_select_count(self) -> Statement:
        t = self.table()
        return Statement("select_count", t.name, (("v", _val(self.draw, self.draw(st.integers(0, 30)))),))

    def _fk_pick(self, self_ref: bool = False) -> ForeignKey | None:
        fks = [fk for fk in self.s.fks if self_ref or not fk.self_reference]
        return self.pick(fks) if fks else None

    def op_select_join(self) -> Statement | None:
        fk = self._fk_pick()
        if fk is None:
            return None
        ids = self.existing(fk.parent) or [1]
        return Statement("select_join", fk.child, (("id", _val(self.draw, self.pick(ids))),), other=fk.parent,
                         fk=fk.name)

    def op_select_exists(self) -> Statement | None:
        fk = self._fk_pick(True)
        if fk is None:
            return None
        return Statement("select_exists", fk.child, (("hi", _val(self.draw, self.draw(st.integers(1, 30)))),),
                         other=fk.parent, fk=fk.name)

    def op_select_in(self) -> Statement | None:
        fk = self._fk_pick(True)
        if fk is None:
            return None
        return Statement("select_in", fk.child, (("v", _val(self.draw, self.draw(st.integers(0, 20)))),),
                         other=fk.parent, fk=fk.name)

    def op_select_cte(self) -> Statement:
        t = self.table()
        opts = ("materialized",) if self.draw(st.booleans()) else ()
        return Statement("select_cte", t.name, (("v", _val(self.draw, self.draw(st.integers(0, 30)))),), opts=opts)

    def op_select_view(self) -> Statement | None:
        if not self.s.views:
            return None
        view = self.pick(self.s.views)
        base = view.table or next(fk.child for fk in self.s.fks if fk.name == view.fk)
        ids = self.existing(base) or [1]
        return Statement("select_view", view.name, (("id", _val(self.draw, self.pick(ids))),))

    def op_select_nextval(self) -> Statement | None:
        if not self.s.sequences:
            return None
        return Statement("select_nextval", f"sq_{self.draw(st.integers(0, self.s.sequences - 1))}")

    # inserts
    def new_row(self, t: Table, conflict_id: int | None, nocols: bool,
                omit_id: bool = False) -> tuple[dict[str, Any], list[tuple[str, Val]]]:
        """One row to insert: (its simulated form, its (column, value) pairs); ``omit_id``: the identity
        ``id`` column takes its default."""
        omit_id = omit_id and conflict_id is None
        if conflict_id is not None:
            id_ = conflict_id
            k = self.w.rows[t.name][id_]["k"]
        else:
            id_ = None if omit_id else self.w.fresh_id(t.name, self.draw(st.integers(0, 3)) == 3)
            k = (id_ % t.kb) if id_ is not None and self.draw(st.integers(0, 3)) else self.pick(self.w.k_domain(t.name))
        sim: dict[str, Any] = {"id": id_, "k": k}
        cols: list[tuple[str, Val]] = []
        if id_ is not None:
            cols.append(("id", _val(self.draw, id_)))
        elif nocols:
            cols.append(("id", DEFAULT))
        cols.append(("k", _val(self.draw, k)))
        if self.s.sequences and self.draw(st.integers(0, 5)) == 5:
            cols.append(("v", Val("nextval('sq_0')", "sql", False)))
        else:
            cols.append(("v", _val(self.draw, self.draw(st.integers(0, 20)))))
        if t.has_u:
            cols.append(("u", _val(self.draw, id_ * 10) if id_ is not None else NULL))
        if t.toast:
            cols.append(("note", self.note_val(t)))
        if t.serial and nocols:
            cols.append(("s", DEFAULT))
        for fk in self.s.fks_of(t.name):
            if fk.self_reference:
                ids = self.existing(t.name)
                ref = (self.pick(ids),) if ids and self.draw(st.integers(0, 3)) else None
                sim[fk.name] = ref
                cols.append((f"{fk.name}_id", _val(self.draw, ref[0]) if ref else NULL))
            else:
                ref, fcols = self.ref_val(fk)
                sim[fk.name] = ref
                cols += fcols
        return sim, cols

    def op_insert(self, cte: bool = False) -> Statement | None:
        t = self.table()
        n = weighted(self.draw, [(6, 1), (3, self.draw(st.integers(2, 5))), (2, self.draw(st.integers(6, 9)))])
        nocols = not cte and self.draw(st.integers(0, 3)) == 3
        conflict = "" if cte else weighted(self.draw, [(6, ""), (2, "nothing"), (2, "update"), (1, "update_fk")])
        fk_name = ""
        if conflict == "update_fk":
            held = self.fks_held(t, self_ref=False)
            if not held:
                conflict = "update"
            else:
                fk_name = self.pick(held).name
        eff = Effect()
        sims, rows = [], []
        existing = self.existing(t.name)
        chosen: set[int] = set()
        omit_id = t.id_identity and not nocols and not conflict and self.draw(st.integers(0, 2)) == 2
        for _ in range(n):
            cid = None
            if conflict and existing and self.draw(st.integers(0, 1)):
                cid = self.pick(existing)
                if cid in chosen:
                    cid = None
            sim, cols = self.new_row(t, cid, nocols, omit_id)
            if cid is not None:
                chosen.add(cid)
            sims.append((cid, sim))
            rows.append(tuple(cols))
        fresh = [sim for cid, sim in sims if cid is None]
        self.w.insert(t.name, fresh, eff)
        for cid, sim in sims:
            if cid is None:
                continue
            if conflict == "update":
                eff.add(t.name, "update")
            elif conflict == "update_fk":
                eff.add(t.name, "update")
                self.w.rows[t.name][cid][fk_name] = sim[fk_name]
                if sim[fk_name] is not None:
                    eff.checks.add(fk_name)
        opts = ["nocols"] if nocols else []
        if conflict:
            opts.append(f"conflict:{conflict}")
        if not cte and self.draw(st.integers(0, 4)) == 4:
            opts.append("returning")
        op = "cte_insert_select" if cte else "insert"
        return self.finish(Statement(op, t.name, (), tuple(rows), tuple(opts), fk=fk_name), eff)

    def op_insert_select(self) -> Statement | None:
        t = self.table()
        held = self.fks_held(t, self_ref=False)
        fk = self.pick(held) if held and self.draw(st.integers(0, 3)) else None
        source = fk.parent if fk else t.name
        src_rows = self.existing(source)
        if not src_rows:
            return None
        lo = self.pick(src_rows)
        hi = lo + self.draw(st.integers(0, 8))
        top = max([*self.w.used[t.name], 2 * t.rows + 1])
        off = (top // 1000 + 1) * 1000
        rows = []
        for sid in [i for i in src_rows if lo <= i <= hi]:
            row: dict[str, Any] = {"id": sid + off, "k": (sid + off) % t.kb}
            for other in self.s.fks_of(t.name):
                if fk is not None and other.name == fk.name:
                    row[other.name] = self.w.key(source, sid)
                else:
                    default = "SET DEFAULT" in (other.on_delete, other.on_update)
                    row[other.name] = self.w.default_key(other) if default else None
            rows.append(row)
        eff = Effect()
        self.w.insert(t.name, rows, eff)
        for i in range(lo + off, hi + off + 1):
            self.w.used[t.name].add(i)
        vals = (("off", Val(str(off), "sql", False)), ("lo", _val(self.draw, lo)), ("hi", _val(self.draw, hi)))
        return self.finish(Statement("insert_select", t.name, vals, other=source, fk=fk.name if fk else ""), eff)

    # updates
    def op_update_v(self, op: str = "update_v") -> Statement | None:
        t = self.table()
        ids = self.existing(t.name)
        if not ids:
            return None
        id_ = self.pick(ids)
        vals: list[tuple[str, Val]] = []
        opts: list[str] = []
        self.id_where(t, id_, vals, opts)
        if op == "update_v" and self.draw(st.integers(0, 4)) == 4:
            opts.append("returning")
        eff = Effect()
        eff.add(t.name, "update")
        return self.finish(Statement(op, t.name, tuple(vals), opts=tuple(opts)), eff)

    def op_update_range(self) -> Statement | None:
        t = self.table()
        lo = self.draw(st.integers(1, t.rows))
        hi = lo + weighted(self.draw, [(3, self.draw(st.integers(0, 5))), (1, self.draw(st.integers(6, 12)))])
        eff = Effect()
        eff.add(t.name, "update", 0, len([i for i in self.w.rows[t.name] if lo <= i <= hi]))
        return self.finish(Statement("update_range", t.name, (("lo", _val(self.draw, lo)),
                                                              ("hi", _val(self.draw, hi)))), eff)

    def op_update_note(self) -> Statement | None:
        if not any(x.toast for x in self.s.tables):
            return None
        t = self.table([x.name for x in self.s.tables if x.toast])
        ids = self.existing(t.name)
        if not ids:
            return None
        vals: list[tuple[str, Val]] = [("note", self.note_val(t))]
        opts: list[str] = []
        self.id_where(t, self.pick(ids), vals, opts)
        eff = Effect()
        eff.add(t.name, "update")
        eff.toast = True
        return self.finish(Statement("update_note", t.name, tuple(vals), opts=tuple(opts)), eff)

    def op_update_fk(self) -> Statement | None:
        if not self.s.fks:
            return None
        t = self.table([fk.child for fk in self.s.fks])
        fk = self.pick(self.fks_held(t))
        ids = self.existing(t.name)
        if not ids:
            return None
        id_ = self.pick(ids)
        if fk.self_reference:
            ref_ids = self.existing(t.name)
            key = (self.pick(ref_ids),) if ref_ids else None
            cols = [(f"{fk.name}_id", _val(self.draw, key[0]) if key else NULL)]
        else:
            key, cols = self.ref_val(fk)
        vals: list[tuple[str, Val]] = []
        opts: list[str] = []
        vals += [("ref_id", cols[-1][1])] + ([("ref_k", cols[0][1])] if len(cols) == 2 else [])
        self.id_where(t, id_, vals, opts)
        eff = Effect()
        eff.add(t.name, "update")
        old = self.w.rows[t.name][id_].get(fk.name)
        self.w.rows[t.name][id_][fk.name] = key
        if key is not None and key != old:
            eff.checks.add(fk.name)
            if fk.deferrable != "deferred" and not self.w.exists(fk.parent, key):
                raise Invalid("missing parent")
        return self.finish(Statement("update_fk", t.name, tuple(vals), opts=tuple(opts), fk=fk.name), eff)

    def _moves(self, t: Table, column: str) -> bool:
        p = t.partitioning
        return p is not None and (p.top.column == column or (p.sub is not None and bool(p.sub_of)
                                                             and p.sub.column == column))

    def op_update_key(self) -> Statement | None:
        candidates = [t.name for t in self.s.tables if self.s.fks_to(t.name) or self._moves(t, "id")]
        if not candidates:
            return None
        t = self.referenced_table(candidates)
        id_ = self.target_row(t)
        if id_ is None:
            return None
        new = self.w.fresh_id(t.name, self.draw(st.integers(0, 2)) == 2)
        vals: list[tuple[str, Val]] = [("new", _val(self.draw, new))]
        opts: list[str] = []
        self.id_where(t, id_, vals, opts)
        eff = Effect()
        self.w.update_key(t.name, id_, new, None, eff, self._moves(t, "id"))
        return self.finish(Statement("update_key", t.name, tuple(vals), opts=tuple(opts)), eff)

    def op_update_move(self) -> Statement | None:
        candidates = [t.name for t in self.s.tables if self._moves(t, "k") or t.composite]
        if not candidates:
            return None
        t = self.referenced_table(candidates)
        id_ = self.target_row(t)
        if id_ is None or t.kb < 2:
            return None
        cur = self.w.rows[t.name][id_]["k"]
        new = self.pick([k for k in self.w.k_domain(t.name) if k != cur])
        vals: list[tuple[str, Val]] = [("new", _val(self.draw, new))]
        opts: list[str] = []
        self.id_where(t, id_, vals, opts)
        eff = Effect()
        self.w.update_key(t.name, id_, None, new, eff, self._moves(t, "k"))
        return self.finish(Statement("update_move", t.name, tuple(vals), opts=tuple(opts)), eff)

    def op_update_view(self) -> Statement | None:
        views = [v for v in self.s.views if v.kind == "simple"]
        if not views:
            return None
        view = self.pick(views)
        ids = self.existing(view.table) or [1]
        eff = Effect()
        eff.add(view.table, "update")
        return self.finish(Statement("update_view", view.name, (("id", _val(self.draw, self.pick(ids))),)), eff)

    def op_update_from(self) -> Statement | None:
        fk = self._fk_pick()
        if fk is None:
            return None
        ids = self.existing(fk.parent) or [1]
        pid = self.pick(ids)
        eff = Effect()
        n = len(self.w.referencing(fk.parent, self.w.key(fk.parent, pid))) if pid in self.w.rows[fk.parent] else 0
        eff.add(fk.child, "update", 0, n)
        return self.finish(Statement("update_from", fk.child, (("id", _val(self.draw, pid)),), other=fk.parent,
                                     fk=fk.name), eff)

    # deletes
    def op_delete_point(self, op: str = "delete_point") -> Statement | None:
        t = self.referenced_table()
        id_ = self.target_row(t)
        if id_ is None:
            return None
        vals: list[tuple[str, Val]] = []
        opts: list[str] = []
        self.id_where(t, id_, vals, opts)
        if self.draw(st.integers(0, 5)) == 5:
            opts.append("returning")
        eff = Effect()
        self.w.delete(t.name, [id_], eff)
        return self.finish(Statement(op, t.name, tuple(vals), opts=tuple(opts)), eff)

    def op_delete_range(self) -> Statement | None:
        t = self.referenced_table()
        lo = self.draw(st.integers(2, max(2, t.rows)))
        hi = lo + weighted(self.draw, [(3, self.draw(st.integers(0, 3))), (1, self.draw(st.integers(4, 10)))])
        eff = Effect()
        self.w.delete(t.name, [i for i in self.existing(t.name) if lo <= i <= hi], eff)
        return self.finish(Statement("delete_range", t.name, (("lo", _val(self.draw, lo)),
                                                              ("hi", _val(self.draw, hi)))), eff)

    def op_delete_using(self) -> Statement | None:
        fk = self._fk_pick()
        if fk is None:
            return None
        ids = self.existing(fk.parent) or [1]
        pid = self.pick(ids)
        eff = Effect()
        if pid in self.w.rows[fk.parent]:
            key = self.w.key(fk.parent, pid)
            self.w.delete(fk.child, [cid for f, cid in self.w.referencing(fk.parent, key) if f.name == fk.name], eff)
        return self.finish(Statement("delete_using", fk.child, (("id", _val(self.draw, pid)),), other=fk.parent,
                                     fk=fk.name), eff)

    def op_cte_delete_update(self) -> Statement | None:
        fk = self._fk_pick()
        if fk is None:
            return None
        ids = self.existing(fk.child, anchor=False)
        if not ids:
            return None
        cid = self.pick(ids)
        eff = Effect()
        ref = self.w.rows[fk.child][cid].get(fk.name)
        self.w.delete(fk.child, [cid], eff)
        if ref is not None:
            eff.add(fk.parent, "update")
        return self.finish(Statement("cte_delete_update", fk.child, (("id", _val(self.draw, cid)),), other=fk.parent,
                                     fk=fk.name), eff)

    def op_cte_update_select(self) -> Statement | None:
        return self.op_update_v("cte_update_select")

    # merge
    def op_merge_values(self) -> Statement | None:
        if self.major < 15:
            return None
        t = self.table()
        matched = weighted(self.draw, [(3, "update"), (1, "delete"), (1, "")])
        insert = not matched or self.draw(st.integers(0, 2)) > 0
        existing = self.existing(t.name, anchor=False)
        rows = []
        eff = Effect()
        sims, deletes, seen = [], [], set()
        for _ in range(weighted(self.draw, [(3, 1), (2, self.draw(st.integers(2, 4)))])):
            if existing and self.draw(st.booleans()):
                id_ = self.pick(existing)
                if id_ in seen:
                    continue
                if matched == "update":
                    eff.add(t.name, "update")
                elif matched == "delete":
                    deletes.append(id_)
            else:
                id_ = self.w.fresh_id(t.name, self.draw(st.integers(0, 3)) == 3)
                if insert:
                    sims.append({"id": id_, "k": id_ % t.kb})
            seen.add(id_)
            rows.append((("id", _val(self.draw, id_)), ("v", _val(self.draw, self.draw(st.integers(0, 20))))))
        if not rows:
            return None
        vals: list[tuple[str, Val]] = []
        if insert:
            if t.toast:
                vals.append(("ins:note", self.note_val(t)))
            for fk in self.fks_held(t):
                if fk.self_reference:
                    ids = self.existing(t.name)
                    key = (self.pick(ids),) if ids else None
                    cols = [(f"{fk.name}_id", _val(self.draw, key[0]) if key else NULL)]
                else:
                    key, cols = self.ref_val(fk)
                vals += [(f"ins:{c}", v) for c, v in cols]
                for sim in sims:
                    sim[fk.name] = key
        self.w.delete(t.name, deletes, eff)
        self.w.insert(t.name, sims, eff)
        opts = ([f"matched:{matched}"] if matched else []) + (["notmatched:insert"] if insert else [])
        return self.finish(Statement("merge_values", t.name, tuple(vals), tuple(rows), tuple(opts)), eff)

    def op_merge_join(self) -> Statement | None:
        if self.major < 15:
            return None
        fk = self._fk_pick()
        if fk is None:
            return None
        hi = self.draw(st.integers(1, 12))
        eff = Effect()
        eff.add(fk.child, "update", 0, sum(1 for r in self.w.rows[fk.child].values()
                                             if r.get(fk.name) and r[fk.name][-1] <= hi))
        return self.finish(Statement("merge_join", fk.child, (("hi", _val(self.draw, hi)),), other=fk.parent,
                                     fk=fk.name), eff)

    # tags
    def finish(self, stmt: Statement, eff: Effect) -> Statement:
        return Statement(stmt.op, stmt.table, stmt.vals, stmt.rows, stmt.opts, stmt.other, stmt.fk,
                         tuple(sorted(_tags(self.s, stmt, eff))))


def _tags(schema: Schema, stmt: Statement, eff: Effect) -> set[str]:
    tags: set[str] = set()
    names = {t.name for t in schema.tables}
    for fk in schema.fks:
        if fk.name in eff.checks:
            tags.add(f"fk-check:{shape_of(schema.table(fk.child))}->{shape_of(schema.table(fk.parent))}")
            if fk.deferrable == "deferred":
                tags.add("fk-deferred")
            if schema.table(fk.parent).composite:
                tags.add("fk-composite")
            if fk.self_reference:
                tags.add("fk-self")
    for name, action in eff.actions:
        fk = next(f for f in schema.fks if f.name == name)
        tags.add(f"fk-action:{action.lower().replace(' ', '-')}:{shape_of(schema.table(fk.child))}")
    if eff.depth >= 2:
        tags.add(f"cascade-depth:{eff.depth}")
    for (table, event), rows in eff.events.items():
        if rows > 6:
            tags.add("rows>6")
        t = schema.table(table)
        if event == "insert" and t.partitioning is not None:
            tags.add("routing")
        if event == "insert" and (t.serial or t.id_identity):
            tags.add(f"seq:{t.serial or 'identity'}" if t.serial else "seq:identity-id")
        for trg in schema.triggers:
            if trg.table == table and event in trg.events:
                tags.add(f"trigger:{trg.timing}-{trg.level}" + (":leaf" if trg.leaf is not None else ""))
                if trg.transition:
                    tags.add("trigger:transition")
                if any(b.startswith("dynamic") for b in trg.body):
                    tags.add("trigger:dynamic")
                if trg.when:
                    tags.add("trigger:when")
    if eff.movement:
        tags.add("row-movement")
    big = [v for _, v in stmt.vals] + [v for row in stmt.rows for _, v in row]
    if eff.toast or any(len(v.value) > 2000 or (v.kind == "sql" and "repeat" in v.value) for v in big):
        tags.add("toast")
    for (table, event) in eff.events:
        if event == "delete" and schema.table(table).toast in ("incompressible", "mixed"):
            tags.add("toast-delete")
    if any(v.value.startswith("nextval") for v in big) or stmt.op == "select_nextval":
        tags.add("seq:nextval")
    if stmt.table not in names and stmt.op != "select_nextval":
        tags.add("view")
    if stmt.op.startswith("cte_") or stmt.op == "select_cte":
        tags.add("cte")
    for opt in stmt.opts:
        if opt.startswith("conflict:"):
            tags.add("on-conflict:" + opt.split(":", 1)[1])
        if opt.startswith("for "):
            tags.add("row-lock")
    if len(stmt.rows) > 1:
        tags.add("multi-row")
    if stmt.op.startswith("merge"):
        tags.add("merge")
    return tags


_OPS: tuple[tuple[int, str], ...] = (
    (6, "select_point"), (2, "select_range"), (2, "select_count"), (3, "select_join"), (2, "select_exists"),
    (2, "select_in"), (2, "select_cte"), (2, "select_view"), (1, "select_nextval"),
    (14, "insert"), (4, "insert_select"), (2, "cte_insert"),
    (5, "update_v"), (2, "update_range"), (2, "update_note"), (4, "update_fk"), (4, "update_key"),
    (3, "update_move"), (1, "update_view"), (1, "update_from"), (1, "cte_update_select"), (1, "cte_delete_update"),
    (9, "delete_point"), (3, "delete_range"), (2, "delete_using"),
    (6, "merge_values"), (2, "merge_join"),
)


def _statement(draw: Draw, world: World, major: int, index: int) -> Statement:
    """One valid statement (simulated on ``world``); a plain lookup when nothing else could be drawn."""
    for _ in range(8):
        op = weighted(draw, _OPS)
        trial = world.copy()
        b = _Builder(draw, trial, major, index)
        try:
            stmt = b.op_insert(cte=True) if op == "cte_insert" else getattr(b, f"op_{op}")()
        except Invalid:
            continue
        if stmt is not None:
            world.rows, world.used = trial.rows, trial.used
            return stmt
    return _Builder(draw, world, major, index).op_select_point()


@st.composite
def workloads(draw: Draw, schema: Schema, major: int = 18, max_statements: int = 5) -> Workload:
    """A transaction of 1..max_statements statements, valid in order, with a protocol, a mode and the API."""
    world = World(schema, major)
    count = weighted(draw, [(5, 1), (2, 2), (2, draw(st.integers(3, max(3, max_statements))))])
    count = min(count, max_statements)
    statements = tuple(_statement(draw, world, major, i) for i in range(count))
    protocol, mode = weighted(draw, [(7, ("prepared", "auto")), (3, ("prepared", "force_custom_plan")),
                                     (3, ("prepared", "force_generic_plan")), (6, ("simple", "auto")),
                                     (1, ("simple", "force_generic_plan")), (1, ("simple", "force_custom_plan"))])
    api = "transaction" if count > 1 or draw(st.integers(0, 4)) == 4 else "footprint"
    return Workload(statements, protocol, mode, api)


@st.composite
def cases(draw: Draw, major: int = 18, max_workloads: int = 3, max_statements: int = 5) -> Case:
    """A schema and 1..max_workloads workloads on it."""
    schema = draw(schemas(major))
    n = draw(st.integers(1, max(1, max_workloads)))
    return Case(schema, tuple(draw(workloads(schema, major, max_statements)) for _ in range(n)))
