"""The house's shape (issue 20): package import graph and its cycles, the longest functions, function-local imports.

    .venv/bin/python scripts/house_metrics.py [--top N] [--json]

Reads src/lockscope with ``ast`` only (nothing is imported). Module-level imports and imports inside functions
both count as edges (a function-local import still ties the two modules together); imports under
``if TYPE_CHECKING:`` do not (they exist for the type checker only).
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
PACKAGE = "lockscope"


def module_name(path: Path) -> str:
    rel = path.relative_to(SRC).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _resolve(current: str, is_package: bool, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = current.split(".") if is_package else current.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _type_checking_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for sub in node.body:
                for inner in ast.walk(sub):
                    if hasattr(inner, "lineno"):
                        lines.add(inner.lineno)
    return lines


def analyse() -> dict[str, object]:
    modules = {module_name(p): p for p in SRC.joinpath(PACKAGE).rglob("*.py")}
    edges: dict[str, set[str]] = {m: set() for m in modules}
    local_imports: list[str] = []
    functions: list[tuple[int, str]] = []
    for mod, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = _type_checking_lines(tree)
        is_package = path.name == "__init__.py"
        func_ranges = [(n.lineno, n.end_lineno or n.lineno, n.name) for n in ast.walk(tree)
                       if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
        for start, end, name in func_ranges:
            functions.append((end - start + 1, f"{path.relative_to(SRC.parent)}:{start} {name}"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Import | ast.ImportFrom) or node.lineno in skip:
                continue
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                base = _resolve(mod, is_package, node)
                # `from pkg import sub` depends on pkg.sub; `from pkg import name` on pkg (its __init__)
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            inside = any(s < node.lineno <= e for s, e, _ in func_ranges)
            hit = False
            for t in targets:
                while t and t not in modules:
                    t = t.rpartition(".")[0]
                if t and t != mod and t.startswith(PACKAGE):
                    edges[mod].add(t)
                    hit = True
            if inside and hit:
                local_imports.append(f"{path.relative_to(SRC.parent)}:{node.lineno}")
    cycles = _cycles(edges)
    packages = _package_edges(edges)
    package_cycles = _cycles({k: set(v) for k, v in packages.items()})
    functions.sort(reverse=True)
    return {"modules": len(modules), "edges": sum(len(v) for v in edges.values()), "cycles": cycles,
            "package_cycles": package_cycles,
            "function_local_imports": len(local_imports), "functions_over_60_lines": sum(1 for n, _ in functions
                                                                                         if n > 60),
            "longest_functions": [f"{n} lines: {where}" for n, where in functions[:10]],
            "package_edges": packages}


def _package_of(mod: str) -> str:
    parts = mod.split(".")
    return ".".join(parts[:2]) if len(parts) > 2 else mod


def _package_edges(edges: dict[str, set[str]]) -> dict[str, list[str]]:
    out: dict[str, set[str]] = {}
    for src, dsts in edges.items():
        for dst in dsts:
            a, b = _package_of(src), _package_of(dst)
            if a != b:
                out.setdefault(a, set()).add(b)
    return {k: sorted(v) for k, v in sorted(out.items())}


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]
    sys.setrecursionlimit(10_000)

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = analyse()
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"modules {result['modules']}, import edges {result['edges']}, "
          f"function-local imports {result['function_local_imports']}, "
          f"functions over 60 lines {result['functions_over_60_lines']}")
    cycles = result["cycles"]
    assert isinstance(cycles, list)
    print(f"import cycles: {len(cycles)}")
    for c in cycles:
        print("  " + " <-> ".join(c))
    pcycles = result["package_cycles"]
    assert isinstance(pcycles, list)
    print(f"package cycles (lockscope.X -> lockscope.Y, any module of each): {len(pcycles)}")
    for c in pcycles:
        print("  " + " <-> ".join(c))
    print("longest functions:")
    for line in result["longest_functions"]:  # type: ignore[attr-defined]
        print("  " + line)


if __name__ == "__main__":
    main()
