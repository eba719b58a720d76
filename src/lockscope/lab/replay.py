"""``lockscope lab replay``: a user's schema and statements on a scratch server, before and after a what-if.

1. A scratch server (never the user's database) loads the schema-only dump (``pg_dump --schema-only``) with the
   server's own ``psql`` (``\\restrict`` lines dropped; errors about missing roles from ``OWNER TO`` / ``GRANT``
   ignored; any other error stops the run), then an optional ``--setup`` SQL file (e.g. to load rows).
2. *before*: every SQL statement of the workload file (pgbench script format: ``\\set`` lines, statements ending in
   ``;``; read by :func:`lockscope.script.read_script`, the one reader of pgbench scripts) is probed with the
   footprint engine (pgbench variables bound as pgbench binds them with ``--protocol``, valued as the ``\\set`` lines
   give for the script's first execution; each statement as if in its own transaction), then the workload runs
   with pgbench (C clients, T seconds) while pg_stat_statements and the wait-event sampler measure it.
3. *after*: the what-if is applied (``DROP INDEX``, settings such as max_locks_per_transaction, plan_cache_mode,
   all with a restart) and step 2 is repeated.

Copies of the schema and workload files go to the results directory; pgbench reads the workload from there.
"""

from __future__ import annotations

import math
import re
import subprocess
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..db import connect, run_script
from ..errors import BadInputError, LockscopeError, ScratchServerError, UnsupportedStatementError
from ..footprint import measure_footprint
from ..script import ScriptStatement, read_script
from ..server import ScratchServer, ScratchSettings
from ..versions import DEFAULT_MAX_LOCKS_PER_TRANSACTION
from ..vocab import PlanCacheMode
from .load import install_pg_stat_statements, measure_load_columns
from .options import check_options, pg_bins_parameter
from .runner import LabContext

__all__ = ["ReplayScenario", "workload_statements"]

_ROLE_ERROR = re.compile(r'role "[^"]*" does not exist', re.I)


def workload_statements(text: str, *, protocol: str = "simple", scale: int = 1) -> tuple[ScriptStatement, ...]:
    """The SQL statements of a pgbench script, as pgbench sends them with ``protocol`` (read by
    :func:`lockscope.script.read_script`: ``\\set`` lines evaluated, ``:variables`` bound per occurrence, or
    pasted in with the simple protocol; ``BEGIN`` and ``COMMIT`` are transaction control, not statements).

    :param text: the script (pgbench ``-f`` format).
    :param protocol: ``simple``, ``extended`` or ``prepared`` (pgbench ``-M``).
    :param scale: value of ``:scale``.
    :raises BadInputError: the script cannot be read (its line named), or it has no SQL statement.
    """
    return read_script(text, protocol=protocol, where="--workload", scale=scale).statements


def _read(path: Path, what: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise BadInputError(f"{what} {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise BadInputError(f"{what} {path}: not UTF-8 text") from None


def load_sql_file(server: ScratchServer, path: Path, what: str) -> int:
    """Run a SQL file (a schema-only dump) with the server's own psql; missing-role errors are ignored.

    :return: ignored errors (count).
    :raises BadInputError: any other error (the first one, on one line).
    """
    argv = [str(server.tool("psql")), "-X", "-q", "-v", "ON_ERROR_STOP=0", "-h", str(server.socket_dir),
            "-p", str(server.port), "-U", "postgres", "-d", "postgres", "-f", str(path)]
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=1800, start_new_session=True)
    except subprocess.TimeoutExpired:
        raise ScratchServerError(f"{what}: psql did not finish in 30 minutes") from None
    errors = [ln for ln in proc.stderr.splitlines() if "ERROR:" in ln]
    serious = [ln for ln in errors if not _ROLE_ERROR.search(ln)]
    if serious or proc.returncode not in (0,):
        detail = serious[0] if serious else (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]
        detail = detail.replace(str(path) + ":", "line ")
        raise BadInputError(f"{what} failed on the scratch server: {detail.strip()}")
    return len(errors)


@dataclass(frozen=True)
class ReplayScenario:
    """Configuration of a replay.

    :ivar schema: the schema-only dump (SQL).
    :ivar workload: the statements file (pgbench script format).
    :ivar setup: optional SQL run after the schema (e.g. data), or None.
    :ivar pg_bins: bin directories (None = embedded PostgreSQL 18).
    :ivar clients: pgbench clients (count).
    :ivar duration_s: pgbench run per phase (s).
    :ivar protocol: pgbench ``-M``: simple, extended or prepared.
    :ivar mlpt: max_locks_per_transaction before the what-if.
    :ivar drop_indexes: what-if: indexes to drop.
    :ivar settings: what-if: server settings (``max_locks_per_transaction`` and any other).
    :ivar plan_cache_mode: what-if: plan_cache_mode, or None.
    :ivar scale: value of pgbench's ``:scale`` variable.
    """

    schema: Path
    workload: Path
    setup: Path | None = None
    pg_bins: tuple[Path | None, ...] = (None,)
    clients: int = 8
    duration_s: float = 10.0
    protocol: str = "simple"
    mlpt: int = DEFAULT_MAX_LOCKS_PER_TRANSACTION
    drop_indexes: tuple[str, ...] = ()
    settings: tuple[tuple[str, str], ...] = ()
    plan_cache_mode: PlanCacheMode | None = None
    scale: int = 1
    sample_hz: float = 10.0
    warmup_s: float = 0.0
    profile: str = "default"
    name: str = field(default="replay", init=False)

    def __post_init__(self) -> None:
        check_options(pg_bins=self.pg_bins, mlpts=(self.mlpt,), clients=self.clients, duration_s=self.duration_s,
                      warmup_s=self.warmup_s, sample_hz=self.sample_hz)
        if self.protocol not in ("simple", "extended", "prepared"):
            raise BadInputError("--protocol must be simple, extended or prepared")
        if self.plan_cache_mode is not None and self.plan_cache_mode not in tuple(PlanCacheMode):
            raise BadInputError(f"--plan-cache-mode must be one of {', '.join(PlanCacheMode)}")
        for name, _ in self.settings:
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.]*", name):
                raise BadInputError(f"--set: not a setting name: {name!r}")
        for name in self.drop_indexes:
            if not name.strip():
                raise BadInputError("--drop-index: empty name")
        _read(self.schema, "--schema")
        workload_statements(_read(self.workload, "--workload"), protocol=self.protocol, scale=self.scale)
        if self.setup is not None:
            _read(self.setup, "--setup")

    @property
    def has_what_if(self) -> bool:
        return bool(self.drop_indexes or self.settings or self.plan_cache_mode)

    def what_if_text(self) -> str:
        """The what-if as one line, e.g. ``drop index a; max_locks_per_transaction=128``."""
        parts = [f"drop index {n}" for n in self.drop_indexes]
        parts += [f"{k}={v}" for k, v in self.settings]
        if self.plan_cache_mode:
            parts.append(f"plan_cache_mode={self.plan_cache_mode}")
        return "; ".join(parts) or "(none)"

    def plan(self) -> tuple[int, float]:
        phases = 2 if self.has_what_if else 1
        points = len(self.pg_bins) * phases
        return points, len(self.pg_bins) * 6 + points * (self.duration_s + self.warmup_s + 3)

    def parameters(self) -> dict[str, Any]:
        return {
            "profile": self.profile, "pg_bins": pg_bins_parameter(self.pg_bins),
            "schema": str(self.schema), "workload": str(self.workload),
            "setup": str(self.setup) if self.setup else None, "clients": self.clients,
            "duration_s": self.duration_s, "protocol": self.protocol, "max_locks_per_transaction": self.mlpt,
            "what_if": self.what_if_text(), "drop_indexes": list(self.drop_indexes),
            "settings": dict(self.settings), "plan_cache_mode": self.plan_cache_mode, "scale": self.scale,
        }

    def run(self, ctx: LabContext) -> None:
        """Load, measure before, apply the what-if, measure after; see the module docstring."""
        schema_copy = ctx.out_dir / "schema.sql"
        schema_copy.write_text("".join(ln for ln in _read(self.schema, "--schema").splitlines(keepends=True)
                                       if not re.match(r"\s*\\(un)?restrict\b", ln)))
        workload_copy = ctx.out_dir / "workload.sql"
        workload_text = _read(self.workload, "--workload")
        workload_copy.write_text(workload_text)
        statements = workload_statements(workload_text, protocol=self.protocol, scale=self.scale)
        base = ScratchSettings(max_locks_per_transaction=self.mlpt)
        after = base.replace(**dict(self.settings), **({"plan_cache_mode": self.plan_cache_mode}
                                                        if self.plan_cache_mode else {}))
        for bin_dir in self.pg_bins:
            ctx.check_stop()
            with ctx.server(bin_dir, base) as (server, info):
                ctx.progress.step(f"PG {info.pg_version}: loading the schema")
                ignored = load_sql_file(server, schema_copy, "--schema")
                if self.setup is not None:
                    ctx.progress.step(f"PG {info.pg_version}: running --setup")
                    load_sql_file(server, self.setup, "--setup")
                install_pg_stat_statements(server)
                ctx.extras.setdefault("ignored_schema_errors", {})[info.pg_version] = ignored
                phases = (("before", base), ("after", after)) if self.has_what_if else (("before", base),)
                for phase, settings in phases:
                    ctx.check_stop()
                    if phase == "after":
                        for index in self.drop_indexes:
                            ctx.progress.step(f"PG {info.pg_version}: what-if: drop index {index}")
                            try:
                                with connect(server.conninfo()) as session:
                                    ident = ".".join(session.identifier(p) for p in index.split("."))
                                run_script(server.conninfo(), f"drop index {ident}")
                            except LockscopeError as exc:
                                raise BadInputError(f"--drop-index {index}: {exc}") from None
                    ctx.progress.step(f"PG {info.pg_version}: {phase}: {self.clients} clients, "
                                      f"{self.duration_s:g} s")
                    try:
                        server.configure(settings)
                    except ScratchServerError as exc:
                        raise BadInputError(f"--set {self.what_if_text()}: the server does not start: {exc}") \
                            from None
                    ctx.record(self._phase(ctx, server, info, phase, statements, workload_copy))

    def _phase(self, ctx: LabContext, server: ScratchServer, info: Any, phase: str,
               statements: tuple[ScriptStatement, ...], workload: Path) -> dict[str, Any]:
        probes = []
        with connect(server.conninfo()) as session:
            mode = session.facts.plan_cache_mode
            for st in statements:
                entry: dict[str, Any] = {"phase": phase, "pg_version": info.pg_version, "statement": st.original}
                try:
                    if self.protocol == "prepared":
                        fp = measure_footprint(session, st.text, params=st.params, protocol="prepared",
                                               plan_cache_mode=mode, executions=7)
                    else:
                        fp = measure_footprint(session, st.text, params=st.params)
                    e = fp.executions[-1]
                    entry.update(relation_locks=e.lock_count, main_table_locks=e.main_table_count,
                                 predicted_main_table_locks=e.predicted_main_table_count,
                                 peak_locks=max(x.lock_count for x in fp.executions), note="")
                except UnsupportedStatementError:
                    entry.update(relation_locks=None, main_table_locks=None, predicted_main_table_locks=None,
                                 peak_locks=None, note="not probed (utility statement)")
                except LockscopeError as exc:
                    entry.update(relation_locks=None, main_table_locks=None, predicted_main_table_locks=None,
                                 peak_locks=None, note=f"not probed: {exc}")
                probes.append(entry)
            slots = session.facts.capacity.slots
            mlpt = session.facts.max_locks_per_transaction
        ctx.extras.setdefault("statements", []).extend(probes)
        probed = [p for p in probes if p["relation_locks"] is not None]
        row: dict[str, Any] = {
            "pg_version": info.pg_version, "pg_major": info.major, "phase": phase,
            "what_if": self.what_if_text() if phase == "after" else "",
            "max_locks_per_transaction": mlpt, "fast_path_slots": slots, "plan_cache_mode": mode,
            "protocol": self.protocol, "clients": self.clients, "statements_probed": len(probed),
            "relation_locks": sum(p["relation_locks"] for p in probed),
            "main_table_locks": sum(p["main_table_locks"] for p in probed),
            "predicted_main_table_locks": sum(p["predicted_main_table_locks"] for p in probed),
        }
        columns, load = measure_load_columns(server, clients=self.clients, duration_s=self.duration_s,
                                             protocol=self.protocol, script_file=workload, sample_hz=self.sample_hz,
                                             warmup_s=self.warmup_s)
        if load is not None:
            ctx.extras.setdefault("pg_stat_statements", []).extend(
                {"phase": phase, "pg_version": info.pg_version, **asdict(s)} for s in load.statements)
        return {**row, **columns}


def before_after(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per version: before, after and after/before for TPS, planning, locks and LockManager share."""
    out = []
    for version in sorted({r["pg_version"] for r in rows}):
        by = {r["phase"]: r for r in rows if r["pg_version"] == version}
        b, a = by.get("before"), by.get("after")
        for key in ("tps", "latency_ms", "mean_plan_ms", "mean_exec_ms", "relation_locks", "main_table_locks",
                    "lockmanager_share", "top_wait"):
            bv, av = (b or {}).get(key), (a or {}).get(key)
            ratio = av / bv if isinstance(av, (int, float)) and isinstance(bv, (int, float)) and bv else math.nan
            out.append({"pg_version": version, "figure": key, "before": bv, "after": av, "ratio": ratio})
    return out
