"""Scripts read as the server runs them (lockscope.script): transactions, pgbench variables and ``\\set``.

pgbench itself is the oracle for the expression language: each expression is evaluated by a real pgbench
(``\\set x debug(EXPR)`` prints the value it computed) and by lockscope.
"""

from __future__ import annotations

import random
import re
import subprocess
from pathlib import Path

import pytest

from lockscope.errors import BadInputError
from lockscope.pgbench_expr import ExpressionError, evaluate
from lockscope.script import read_script
from lockscope.server import ScratchServer

PGBENCH_TPCB = r"""
\set aid random(1, 100000 * :scale)
\set bid random(1, 1 * :scale)
\set tid random(1, 10 * :scale)
\set delta random(-5000, 5000)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;
UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
"""

#: Expressions without random draws, each checked against pgbench's own evaluation.
EXPRESSIONS = [
    "1 + 2 * 3", "(1 + 2) * 3", "7 / 2", "-7 / 2", "7 % -3", "-7 % 3", "7.0 / 2", "5 # 3",
    "1 << 4", "256 >> 3", "~5", "6 & 3", "6 | 3", "1 < 2", "2 <= 1", "3 = 3", "3 <> 3", "3 != 4", "2 > 1",
    "not true", "true and false", "false or true", "null is null", "1 is not null", "1 isnull", "1 notnull",
    "case when 1 > 2 then 10 when 2 > 1 then 20 else 30 end", "case when false then 1 end",
    "abs(-4)", "least(5, 3, 9)", "greatest(5, 3.5, 1)", "int(5.9)", "int(-5.9)", "double(3)", "sqrt(16)",
    "mod(-7, 3)", "pow(2, 10)", "power(2.0, 0.5)", "pi()", ":scale * 10 + :client_id", "-(3 - 5)",
    "1 + 2 = 3 and 4 > 3",
]


def _pgbench_values(server: ScratchServer, exprs: list[str], tmp: Path) -> list[str]:
    script = tmp / "exprs.pgbench"
    script.write_text("".join(f"\\set v{n} debug({e})\n" for n, e in enumerate(exprs)) + "select 1;\n")
    script.chmod(0o644)
    proc = subprocess.run([str(server.tool("pgbench")), "-n", "-t", "1", "-f", str(script), "-h",
                           str(server.socket_dir), "-p", str(server.port), "-U", "postgres", "postgres"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    found = re.findall(r"debug\(script=0,command=(\d+)\): (.*)", proc.stderr)
    return [value.strip() for _, value in sorted(found, key=lambda f: int(f[0]))]


def _as_pgbench_prints(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean {'true' if value else 'false'}"
    if isinstance(value, int):
        return f"int {value}"
    assert isinstance(value, float)
    return f"double {value:.15g}" if value != int(value) or abs(value) >= 1e15 else f"double {int(value)}"


def test_expressions_evaluate_as_pgbench_does(pg18: ScratchServer, scratch_base: Path) -> None:
    expected = _pgbench_values(pg18, EXPRESSIONS, scratch_base)
    assert len(expected) == len(EXPRESSIONS)
    got = [_as_pgbench_prints(evaluate(e, {"scale": 1, "client_id": 0}, random.Random(0))) for e in EXPRESSIONS]
    wrong = [(e, g, x) for e, g, x in zip(EXPRESSIONS, got, expected, strict=True) if not _same(g, x)]
    assert wrong == [], "\n".join(map(str, wrong))


def _same(mine: str, pgbench: str) -> bool:
    """Equal, doubles compared to pgbench's printed precision (%g)."""
    if mine == pgbench:
        return True
    if mine.startswith("double ") and pgbench.startswith("double "):
        return abs(float(mine.split()[1]) - float(pgbench.split()[1])) < 1e-6
    return False


def test_random_values_stay_in_range_and_are_reproducible() -> None:
    draws = [evaluate("random(10, 20)", {}, random.Random(5)) for _ in range(3)]
    assert len(set(draws)) == 1 and 10 <= int(draws[0] or 0) <= 20  # same seed, same value
    rng = random.Random(1)
    values = {evaluate("random_zipfian(1, 4, 1.5)", {}, rng) for _ in range(200)}
    assert values <= {1, 2, 3, 4} and len(values) > 1


@pytest.mark.parametrize(("expr", "message"), [
    ("1 +", "unexpected"), ("nosuch(1)", "unexpected function name 'nosuch'"), (":missing + 1", "undefined"),
    ("1 / 0", "division by zero"), ("9223372036854775807 + 1", "out of range"), ("random(5, 1)", "empty range"),
])
def test_bad_expressions_are_refused(expr: str, message: str) -> None:
    with pytest.raises(ExpressionError, match=message):
        evaluate(expr, {}, random.Random(0))


def test_a_pgbench_transaction_becomes_one_transaction_with_parameters_per_occurrence() -> None:
    script = read_script(PGBENCH_TPCB)
    assert script.pgbench and script.has_blocks
    (txn,) = script.transactions
    assert txn.explicit and txn.line == 6
    assert [s.kind for s in txn.statements] == ["UpdateStmt", "SelectStmt", "UpdateStmt", "UpdateStmt",
                                                "InsertStmt"]
    assert [s.line for s in txn.statements] == [7, 8, 9, 10, 11]
    first = txn.statements[0]
    assert first.text == "UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2"
    delta, aid = (int(v) for v in first.params)
    assert -5000 <= delta <= 5000 and 1 <= aid <= 100000
    assert txn.statements[1].params == (str(aid),)  # one execution: the same values everywhere
    assert txn.statements[4].text.endswith("VALUES ($1, $2, $3, $4, CURRENT_TIMESTAMP)")


def test_simple_protocol_pastes_values_and_executions_draw_their_own() -> None:
    text = "\\set aid random(1, 1000000)\nselect * from t where a = :aid and b = :aid::int and c = 'x:y';"
    one = read_script(text, protocol="simple", execution=1).statements[0]
    two = read_script(text, protocol="simple", execution=2).statements[0]
    assert one.params == () and re.fullmatch(r"select \* from t where a = (\d+) and b = \1::int and c = 'x:y'",
                                             one.text)
    assert one.text != two.text  # each execution draws its own value
    assert read_script(text, protocol="simple", execution=1).statements[0] == one  # reproducible


def test_statements_outside_blocks_are_transactions_of_their_own() -> None:
    script = read_script("select 1;\nbegin;\nselect 2;\nselect 3;\ncommit;\nselect 4;\n"
                         "start transaction;\nsavepoint a;\nselect 5;\nrelease a;\nrollback;\n")
    shapes = [(t.explicit, [s.original for s in t.statements]) for t in script.transactions]
    assert shapes == [(False, ["select 1"]), (True, ["select 2", "select 3"]), (False, ["select 4"]),
                      (True, ["select 5"])]
    assert not script.pgbench


@pytest.mark.parametrize(("text", "message"), [
    ("begin;\nselect 1;\n", "line 1: BEGIN without COMMIT"),
    ("select 1;\ncommit;\n", "line 2: COMMIT or ROLLBACK without BEGIN"),
    ("begin;\nbegin;\ncommit;\n", "line 2: BEGIN inside a transaction block"),
    ("begin;\nsavepoint a;\nrollback to a;\ncommit;\n", "line 3: ROLLBACK TO is not supported"),
    ("\\if 1\nselect 1;\n\\endif\n", "line 1: \\if is not supported"),
    ("select * from t where a = :nope;\n", "line 1: undefined variable :nope"),
    ("\\set x 1 +\nselect 1;\n", "line 1: \\set x: unexpected"),
    ("select from where;\n", "line 1: the SQL does not parse"),
    ("-- nothing\n;\n", "no SQL statement"),
])
def test_bad_scripts_are_refused_with_the_line(text: str, message: str) -> None:
    with pytest.raises(BadInputError, match=re.escape(message)):
        read_script(text, where="w.sql")


def test_parameters_after_non_ascii_text_are_bound_in_place() -> None:
    """``$n`` positions are character offsets: multi-byte text before a parameter does not shift it (a statement
    with 'ééééé' before $1 used to fail with a traceback)."""
    from lockscope.statement import bind_params, check_statement

    checked = check_statement("select 'ééééé', $1, '€' || $2")
    assert checked.param_count == 2
    assert bind_params(checked, ["x", "y"], lambda v: f"'{v}'") == "select 'ééééé', 'x', '€' || 'y'"
