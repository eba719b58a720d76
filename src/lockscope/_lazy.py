"""Names a package's ``__init__`` re-exports, imported on first use (PEP 562 module ``__getattr__``), so that
importing the package imports none of its modules: ``lockscope --version``, ``--help`` and shell completion
import neither psycopg nor pglast (``benchmarks/startup.py``)."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(package: str, modules: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of package ``package`` for the names of ``modules`` (public name ->
    the submodule, relative to ``package``, that defines it). A name is imported from its submodule on first use
    and then kept in the package's namespace.

    :raises AttributeError: (from ``__getattr__``) a name that is neither exported nor a submodule.
    """

    def __getattr__(name: str) -> Any:
        module = modules.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f".{module}", package), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *modules})

    return __getattr__, __dir__
