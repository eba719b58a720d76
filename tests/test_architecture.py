"""The house's shape (issue 20): imports flow one way. scripts/house_metrics.py reads src/lockscope with ``ast``
(module-level and function-local imports; ``if TYPE_CHECKING:`` imports, for the type checker only, do not
count) and names every cycle between modules and between packages."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _metrics() -> dict[str, object]:
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "house_metrics.py"), "--json"],
                          capture_output=True, text=True, check=True, timeout=120)
    doc: dict[str, object] = json.loads(proc.stdout)
    return doc


def test_no_import_cycle_between_modules_or_packages() -> None:
    doc = _metrics()
    assert doc["cycles"] == [], doc["cycles"]
    assert doc["package_cycles"] == [], doc["package_cycles"]


def test_the_core_does_not_import_the_command_line() -> None:
    """Everything below commands/ and cli.py works without them: no module outside imports them."""
    edges = _metrics()["package_edges"]
    assert isinstance(edges, dict)
    offenders = {src: dsts for src, dsts in edges.items()
                 if src not in ("lockscope.cli", "lockscope.commands", "lockscope.__main__")
                 and any(d in ("lockscope.cli", "lockscope.commands") for d in dsts)}
    assert offenders == {}
