"""A lab run's results directory: ``results.json`` (schema :data:`RESULTS_SCHEMA`) and ``results.csv``, written
atomically after every point and read back by ``lab compare`` and the report.
"""

from __future__ import annotations

import csv
import datetime as _dt
import json
import math
import os
import platform
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..errors import BadInputError
from ..versions import major_of

__all__ = [
    "RESULTS_SCHEMA",
    "LabResult",
    "Row",
    "ServerInfo",
    "load_results",
    "machine_info",
    "new_results_dir",
    "write_results",
]

#: ``schema`` key of results.json.
RESULTS_SCHEMA = "lockscope/lab/v1"
#: One measured point: a flat dict of str/int/float/bool/None.
Row = dict[str, Any]


@dataclass(frozen=True)
class ServerInfo:
    """One PostgreSQL installation a run used.

    :ivar pg_version: ``server_version`` (e.g. ``18.6``).
    :ivar server_version_num: e.g. 180006.
    :ivar bin_dir: its bin directory.
    """

    pg_version: str
    server_version_num: int
    bin_dir: str

    @property
    def major(self) -> int:
        """Major version, e.g. 18."""
        return major_of(self.server_version_num)


def new_results_dir(scenario: str, out: Path | None = None, *, now: _dt.datetime | None = None) -> Path:
    """Create the results directory: ``out`` (must be empty or absent) or ``./lockscope-lab-SCENARIO-<stamp>``.

    :raises BadInputError: when ``out`` exists and is not an empty directory.
    """
    if out is None:
        stamp = (now or _dt.datetime.now()).strftime("%Y%m%d-%H%M%S")
        out = Path(f"lockscope-lab-{scenario}-{stamp}")
        n = 1
        while out.exists():
            n += 1
            out = Path(f"lockscope-lab-{scenario}-{stamp}-{n}")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise BadInputError(f"--out {out}: exists and is not an empty directory")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BadInputError(f"--out {out}: {exc.strerror}") from None
    return out


def machine_info() -> tuple[int, str]:
    """This machine as results.json records it: (CPU cores (count), ``system machine release``)."""
    return os.cpu_count() or 1, f"{platform.system()} {platform.machine()} {platform.release()}"


@dataclass(frozen=True)
class LabResult:
    """One lab run as written to ``results.json``.

    :ivar scenario: ``indexes``, ``partitions``, ``prepared``, ``observer``, ``replay``.
    :ivar parameters: the run's parameters (profile, lists, durations...).
    :ivar servers: the PostgreSQL installations used.
    :ivar rows: one flat dict per point.
    :ivar status: ``complete``, ``interrupted`` (Ctrl-C), ``time limit`` or ``failed: <message>``.
    :ivar started: ISO date-time the run started.
    :ivar elapsed_s: wall time (s).
    :ivar cores: CPU cores of the machine (count).
    :ivar machine: platform description.
    :ivar lockscope_version: e.g. ``0.1.0``.
    :ivar extras: scenario-specific data (e.g. replay's per-statement tables).
    :ivar out_dir: the results directory.
    """

    scenario: str
    parameters: dict[str, Any]
    servers: tuple[ServerInfo, ...]
    rows: tuple[Row, ...]
    status: str
    started: str
    elapsed_s: float
    cores: int
    machine: str
    lockscope_version: str
    extras: dict[str, Any]
    out_dir: Path

    @property
    def complete(self) -> bool:
        return self.status == "complete"

    def to_dict(self) -> dict[str, Any]:
        """The results.json document."""
        return {
            "schema": RESULTS_SCHEMA,
            "scenario": self.scenario,
            "status": self.status,
            "lockscope_version": self.lockscope_version,
            "started": self.started,
            "elapsed_s": round(self.elapsed_s, 1),
            "machine": {"cores": self.cores, "platform": self.machine},
            "servers": [asdict(s) for s in self.servers],
            "parameters": self.parameters,
            "rows": list(self.rows),
            "extras": self.extras,
        }


def _json_default(value: Any) -> Any:
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def _clean(value: Any) -> Any:
    """NaN/inf -> None (JSON has no NaN)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def write_results(result: LabResult) -> None:
    """(Re)write ``results.json`` and ``results.csv`` in the results directory, each atomically."""
    out = result.out_dir
    doc = _clean(result.to_dict())
    tmp = out / ".results.json.tmp"
    tmp.write_text(json.dumps(doc, indent=2, default=_json_default) + "\n")
    tmp.replace(out / "results.json")
    columns: list[str] = []
    for row in result.rows:
        for key in row:
            if key not in columns:
                columns.append(key)
    tmp = out / ".results.csv.tmp"
    with open(tmp, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns)
        writer.writeheader()
        for row in result.rows:
            writer.writerow({k: ("" if v is None or (isinstance(v, float) and math.isnan(v)) else v)
                             for k, v in row.items()})
    tmp.replace(out / "results.csv")


def load_results(path: Path) -> LabResult:
    """Read a results directory (or its results.json) back.

    :raises BadInputError: missing, unreadable or not a lockscope lab results file.
    """
    file = path / "results.json" if path.is_dir() else path
    try:
        doc = json.loads(file.read_text())
    except OSError as exc:
        raise BadInputError(f"{file}: {exc.strerror}") from None
    except ValueError:
        raise BadInputError(f"{file}: not JSON") from None
    if not isinstance(doc, dict) or doc.get("schema") != RESULTS_SCHEMA:
        raise BadInputError(f"{file}: not a lockscope lab results file (schema {RESULTS_SCHEMA})")
    rows = tuple({k: (math.nan if v is None else v) for k, v in r.items()} for r in doc.get("rows", []))
    return LabResult(
        scenario=doc["scenario"],
        parameters=doc.get("parameters", {}),
        servers=tuple(ServerInfo(**s) for s in doc.get("servers", [])),
        rows=rows,
        status=doc.get("status", "?"),
        started=doc.get("started", ""),
        elapsed_s=float(doc.get("elapsed_s") or 0),
        cores=int(doc.get("machine", {}).get("cores") or 0),
        machine=str(doc.get("machine", {}).get("platform", "")),
        lockscope_version=str(doc.get("lockscope_version", "")),
        extras=doc.get("extras", {}),
        out_dir=file.parent,
    )
