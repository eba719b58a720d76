"""pgbench's ``\\set`` expression language, evaluated the way pgbench evaluates it, with reproducible random values.

The grammar and the functions follow ``src/bin/pgbench/exprparse.y`` (operator precedence: ``OR`` < ``AND`` <
``NOT`` < ``IS``/``ISNULL``/``NOTNULL`` < comparisons < bitwise ``| # & << >> ~`` < ``+ -`` < ``* / %`` < unary)
and the evaluation ``pgbench.c evalStandardFunc``: integers are 64-bit, ``/`` and ``%`` on integers truncate
toward zero, a double anywhere makes the result a double, comparisons give booleans, ``int()`` rounds to the
nearest integer (``coerceToInt``: ``rint``), ``least``/``greatest`` of mixed arguments give a double.

Random functions (``random``, ``random_exponential``, ``random_gaussian``, ``random_zipfian``) draw from a
``random.Random`` the caller seeds, so one script gives the same values every time lockscope reads it (the values
only choose rows and partitions; the distributions are followed loosely: uniform in ``[lb, ub]``, clamped to the
bounds). ``hash``/``hash_murmur2``/``hash_fnv1a`` and ``permute`` are deterministic stand-ins with the same
domain (any int64; ``permute(i, size)`` a value in ``[0, size)``), not pgbench's exact bits.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

__all__ = ["ExpressionError", "Value", "evaluate"]

#: A pgbench value: NULL (None), a boolean, a 64-bit integer, a double, or text (``-D`` definitions that are no
#: number).
Value = bool | int | float | str | None

_TOKEN = re.compile(r"""\s*(?:
      (?P<double>(?:\d+\.\d*|\.\d+|\d+)[eE][+-]?\d+|\d+\.\d*|\.\d+)
    | (?P<int>\d+)
    | (?P<var>:[A-Za-z_\x80-\uffff][A-Za-z0-9_\x80-\uffff]*)
    | (?P<word>[A-Za-z_][A-Za-z0-9_]*)
    | (?P<op><=|>=|<>|!=|<<|>>|[-+*/%()<>=&|#~,])
    )""", re.VERBOSE)
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


class ExpressionError(ValueError):
    """The text is not a pgbench expression lockscope can evaluate (the message says why and where)."""


@dataclass(frozen=True)
class _Tok:
    kind: str  # int, double, var, word, op, end
    text: str
    pos: int


def _tokens(text: str) -> list[_Tok]:
    out: list[_Tok] = []
    pos = 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise ExpressionError(f"unexpected character {text[pos:].strip()[:1]!r} at {pos + 1}")
        kind = m.lastgroup or "op"
        out.append(_Tok(kind, m.group(kind), m.start(kind)))
        pos = m.end()
    out.append(_Tok("end", "", len(text)))
    return out


_BINARY = {  # operator -> (precedence, left associative)
    "or": 1, "and": 2, "=": 5, "<>": 5, "!=": 5, "<": 5, ">": 5, "<=": 5, ">=": 5,
    "|": 6, "#": 6, "&": 6, "<<": 6, ">>": 6, "+": 7, "-": 7, "*": 8, "/": 8, "%": 8,
}
_UNARY_PREC = 9


class _Parser:
    """Precedence climbing over :data:`_BINARY` (exprparse.y's ``%left``/``%nonassoc`` table); evaluation happens
    while parsing (pgbench expressions have no side effects besides the random draws, made left to right)."""

    def __init__(self, text: str, variables: Mapping[str, Value], rng: random.Random):
        self.toks = _tokens(text)
        self.i = 0
        self.variables = variables
        self.rng = rng

    def peek(self) -> _Tok:
        return self.toks[self.i]

    def take(self) -> _Tok:
        tok = self.toks[self.i]
        self.i += 1
        return tok

    def expect(self, text: str) -> None:
        tok = self.take()
        if tok.text.lower() != text:
            raise ExpressionError(f"expected {text!r} at {tok.pos + 1}, found {tok.text or 'the end'!r}")

    def binary_op(self) -> str | None:
        tok = self.peek()
        word = tok.text.lower()
        if tok.kind == "op" and word in _BINARY:
            return word
        if tok.kind == "word" and word in ("and", "or"):
            return word
        return None

    def expr(self, min_prec: int = 1) -> Value:
        left = self.unary()
        while True:
            if self.peek().kind == "word" and self.peek().text.lower() in ("is", "isnull", "notnull"):
                left = self.is_test(left)
                continue
            op = self.binary_op()
            if op is None or _BINARY[op] < min_prec:
                return left
            self.take()
            right = self.expr(_BINARY[op] + 1)
            left = _apply(op, left, right)

    def is_test(self, left: Value) -> bool:
        word = self.take().text.lower()
        if word == "isnull":
            return left is None
        if word == "notnull":
            return left is not None
        negate = self.peek().text.lower() == "not" and bool(self.take())
        what = self.take().text.lower()
        if what not in ("null", "true", "false"):
            raise ExpressionError(f"IS must be followed by NULL, TRUE or FALSE, not {what!r}")
        result = left is None if what == "null" else left is (what == "true")
        return not result if negate else result

    def unary(self) -> Value:
        tok = self.peek()
        if tok.kind == "op" and tok.text in ("-", "+", "~"):
            self.take()
            value = self.expr(_UNARY_PREC)
            if tok.text == "+":
                return value
            return _apply("-", 0, value) if tok.text == "-" else _apply("#", -1, value)
        if tok.kind == "word" and tok.text.lower() == "not":
            self.take()
            return not _truth(self.expr(3))
        return self.primary()

    def primary(self) -> Value:
        tok = self.take()
        word = tok.text.lower()
        if tok.kind == "int":
            return _int(int(tok.text))
        if tok.kind == "double":
            return float(tok.text)
        if tok.kind == "var":
            name = tok.text[1:]
            if name not in self.variables:
                raise ExpressionError(f"undefined variable {name!r}")
            return self.variables[name]
        if tok.kind == "op" and tok.text == "(":
            value = self.expr()
            self.expect(")")
            return value
        if tok.kind == "word" and word in ("null", "true", "false"):
            return None if word == "null" else word == "true"
        if tok.kind == "word" and word == "case":
            return self.case()
        if tok.kind == "word":
            return self.call(word, tok.pos)
        raise ExpressionError(f"unexpected {tok.text or 'end of expression'!r} at {tok.pos + 1}")

    def case(self) -> Value:
        chosen: Value = None
        done = False
        while self.peek().text.lower() == "when":
            self.take()
            cond = self.expr()
            self.expect("then")
            value = self.expr()
            if not done and _truth(cond):
                chosen, done = value, True
        if self.peek().text.lower() == "else":
            self.take()
            value = self.expr()
            if not done:
                chosen = value
        self.expect("end")
        return chosen

    def call(self, name: str, pos: int) -> Value:
        fn = _FUNCTIONS.get(name)
        if fn is None:
            raise ExpressionError(f"unexpected function name {name!r} at {pos + 1}")
        self.expect("(")
        args: list[Value] = []
        if self.peek().text != ")":
            args.append(self.expr())
            while self.peek().text == ",":
                self.take()
                args.append(self.expr())
        self.expect(")")
        try:
            return fn(self.rng, args)
        except (TypeError, ValueError, OverflowError, ZeroDivisionError) as exc:
            raise ExpressionError(f"{name}(): {exc}") from None


def _truth(value: Value) -> bool:
    """pgbench coerceToBool: NULL is false, numbers are true unless zero."""
    return bool(value) if value is not None else False


def _int(value: int) -> int:
    if not _INT64_MIN <= value <= _INT64_MAX:
        raise ExpressionError("bigint out of range")
    return value


def _num(value: Value) -> int | float:
    if value is None:
        raise ExpressionError("cannot use NULL in arithmetic")
    if isinstance(value, str):
        raise ExpressionError(f"{value!r} is not a number")
    return int(value) if isinstance(value, bool) else value


def _apply(op: str, left: Value, right: Value) -> Value:
    """One binary operator (pgbench.c evalStandardFunc)."""
    if op in ("and", "or"):
        return (_truth(left) and _truth(right)) if op == "and" else (_truth(left) or _truth(right))
    a, b = _num(left), _num(right)
    if op in ("=", "<>", "!=", "<", ">", "<=", ">="):
        return {"=": a == b, "<>": a != b, "!=": a != b, "<": a < b, ">": a > b, "<=": a <= b, ">=": a >= b}[op]
    if op in ("|", "#", "&", "<<", ">>"):
        x, y = int(a), int(b)
        bits = {"|": x | y, "#": x ^ y, "&": x & y, "<<": x << y, ">>": x >> y}[op]
        return ((bits + 2**63) % 2**64) - 2**63
    if isinstance(a, float) or isinstance(b, float):
        if op in ("/", "%") and b == 0:
            raise ExpressionError("division by zero")
        return {"+": a + b, "-": a - b, "*": a * b, "/": a / b, "%": math.fmod(a, b)}[op]
    if op in ("/", "%"):
        if b == 0:
            raise ExpressionError("division by zero")
        quotient = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)  # C truncation toward zero
        return _int(quotient) if op == "/" else _int(a - quotient * b)
    return _int({"+": a + b, "-": a - b, "*": a * b}[op])


def _widen(value: int | float, args: Sequence[Value]) -> int | float:
    """least/greatest: a double among the arguments makes the result a double (``evalStandardFunc``)."""
    return float(value) if any(isinstance(a, float) for a in args) else value


def _bounds(args: Sequence[Value]) -> tuple[int, int]:
    lo, hi = int(_num(args[0])), int(_num(args[1]))
    if lo > hi:
        raise ValueError("empty range given to random")
    return lo, hi


def _random(rng: random.Random, args: Sequence[Value]) -> Value:
    lo, hi = _bounds(args)
    return rng.randint(lo, hi)


def _hash(rng: random.Random, args: Sequence[Value]) -> Value:
    seed = int(_num(args[1])) if len(args) > 1 else 0
    return ((int(_num(args[0])) * 0x9E3779B97F4A7C15 + seed) % 2**64) - 2**63


def _permute(rng: random.Random, args: Sequence[Value]) -> Value:
    size = int(_num(args[1]))
    if size <= 0:
        raise ValueError("permute size parameter must be greater than zero")
    return (int(_num(args[0])) * 2654435761 + (int(_num(args[2])) if len(args) > 2 else 0)) % size


def _one(fn: Callable[[float], float]) -> Callable[[random.Random, Sequence[Value]], Value]:
    return lambda rng, args: fn(float(_num(args[0])))


_FUNCTIONS: dict[str, Callable[[random.Random, Sequence[Value]], Value]] = {
    "abs": lambda rng, a: abs(_num(a[0])),
    "least": lambda rng, a: _widen(min(_num(x) for x in a), a),
    "greatest": lambda rng, a: _widen(max(_num(x) for x in a), a),
    "debug": lambda rng, a: a[0],
    "pi": lambda rng, a: math.pi,
    "sqrt": _one(math.sqrt),
    "ln": _one(math.log),
    "exp": _one(math.exp),
    "int": lambda rng, a: _int(round(_num(a[0]))),  # coerceToInt: rint(), half to even
    "double": lambda rng, a: float(_num(a[0])),
    "mod": lambda rng, a: _apply("%", a[0], a[1]),
    "pow": lambda rng, a: float(_num(a[0])) ** float(_num(a[1])),
    "power": lambda rng, a: float(_num(a[0])) ** float(_num(a[1])),
    "random": _random,
    "random_exponential": _random,
    "random_gaussian": _random,
    "random_zipfian": _random,
    "hash": _hash,
    "hash_murmur2": _hash,
    "hash_fnv1a": _hash,
    "permute": _permute,
}


def evaluate(text: str, variables: Mapping[str, Value], rng: random.Random) -> Value:
    """The value of one pgbench expression (the part of a ``\\set name EXPR`` line after the name).

    :param variables: defined variables by name (without the colon): ``scale``, ``client_id``, earlier ``\\set``s.
    :param rng: source of the random functions' values (seed it for reproducible values).
    :return: None (NULL), a bool, an int (64-bit) or a float.
    :raises ExpressionError: a syntax error, an unknown function or variable, a division by zero, an integer out
        of the 64-bit range (each with what and where).
    """
    parser = _Parser(text, variables, rng)
    value = parser.expr()
    tail = parser.peek()
    if tail.kind != "end":
        raise ExpressionError(f"unexpected {tail.text!r} at {tail.pos + 1}")
    return value
