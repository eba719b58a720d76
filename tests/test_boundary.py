"""The database boundary (issue 24): no module below db.py receives a dict row from a query.

A static check, on purpose. A run of the engines with db.py instrumented would see only the paths that run sees
(the rows of an audit without pg_stat_statements, a forecast without a live point, PG 13's branches never show
up on PG 18). This holds for every path at once, because three things hold together:

- psycopg is imported by lockscope/db.py alone, so no other module can open a cursor or choose a row factory;
- db.py makes rows with one row factory, ``_typed_rows`` (the dataclasses of lockscope/rows.py, columns checked
  once per result), or psycopg's default tuples for the probe paths around a user's statement, never ``dict_row``
  or any other psycopg row factory;
- no public function or method of db.py is annotated to return a mapping of columns, and mypy --strict
  (scripts/check.sh) holds every caller to those annotations. The test suite's own reads go through
  ``Session.oracle_rows`` (tuples), which no module of lockscope calls.
"""

from __future__ import annotations

import ast
import inspect
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import lockscope
from lockscope import db

SRC = Path(lockscope.__file__).resolve().parent
#: Public db functions that return a dict that is no query row, and why.
NOT_ROWS = {
    "check_dsn": "libpq's parsed connection parameters",
    "ProbeCost.to_dict": "the JSON probe_cost object",
}


def _modules() -> dict[str, ast.Module]:
    return {str(p.relative_to(SRC)): ast.parse(p.read_text(encoding="utf-8")) for p in SRC.rglob("*.py")}


def test_only_db_imports_psycopg() -> None:
    importers = set()
    for name, tree in _modules().items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "psycopg" for a in node.names):
                importers.add(name)
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "psycopg":
                importers.add(name)
    assert importers == {"db.py"}


def test_db_makes_typed_rows_only() -> None:
    """db.py names no psycopg row factory but its own typed one (psycopg.rows' ``RowFactory``/``RowMaker`` types and
    ``no_result`` build it)."""
    tree = _modules()["db.py"]
    used = {a.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module == "psycopg.rows"
            for a in node.names}
    assert used == {"RowFactory", "RowMaker", "no_result"}
    factories = {kw.value.func.id if isinstance(kw.value, ast.Call) and isinstance(kw.value.func, ast.Name) else
                 ast.unparse(kw.value)
                 for node in ast.walk(tree) if isinstance(node, ast.Call) for kw in node.keywords
                 if kw.arg == "row_factory"}
    assert factories == {"_typed_rows"}


def _row_mappings(tp: Any) -> bool:
    """True when the type is or contains a mapping (a dict row, a list of them, an optional one, ...)."""
    origin = typing.get_origin(tp) or tp
    if isinstance(origin, type) and issubclass(origin, Mapping):
        return True
    return any(_row_mappings(arg) for arg in typing.get_args(tp))


def test_no_public_db_function_returns_dict_rows() -> None:
    returning: dict[str, Any] = {}
    for name, obj in vars(db).items():
        if name.startswith("_") or getattr(obj, "__module__", None) != db.__name__:
            continue
        if inspect.isfunction(obj):
            returning[name] = typing.get_type_hints(obj, vars(db)).get("return")
        elif inspect.isclass(obj):
            for attr, member in vars(obj).items():
                if attr.startswith("_") and attr != "__enter__":
                    continue
                func = member.fget if isinstance(member, property) else member
                if inspect.isfunction(func):
                    returning[f"{name}.{attr}"] = typing.get_type_hints(func, vars(db)).get("return")
    assert "Session.query_rows" in returning and "Session.oracle_rows" in returning
    mappings = {name for name, tp in returning.items() if _row_mappings(tp)}
    assert mappings == set(NOT_ROWS)
    assert typing.get_type_hints(db.Session.oracle_rows).get("return") == list[tuple[Any, ...]]


def test_no_module_calls_the_oracle_read() -> None:
    """``Session.oracle_rows`` is the tests' and benchmarks' read; lockscope's modules run SQL files."""
    callers = {name for name, tree in _modules().items() for node in ast.walk(tree)
               if isinstance(node, ast.Attribute) and node.attr == "oracle_rows"}
    assert callers == set()
