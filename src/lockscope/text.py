"""Small plain-text helpers shared by the engines and the reports (no lockscope imports: any module may use them)."""

from __future__ import annotations

__all__ = ["plural"]


def plural(n: int, word: str) -> str:
    """``n`` and ``word``, pluralised in English: ``1 lock``, ``2 locks``, ``3 indexes`` (words in x take -es)."""
    if n == 1:
        return f"{n} {word}"
    return f"{n} {word + 'es' if word.endswith('x') else word + 's'}"
