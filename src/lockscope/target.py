"""Where a command runs: a user's server (``--dsn``, the PG* environment or libpq's defaults, as for ``psql``), or,
only when asked (``--scratch``, ``--demo``), a scratch server lockscope starts and always stops."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import BadInputError

if TYPE_CHECKING:  # psycopg (db) loads when a command opens its target, not when its options are declared
    from .db import Session
    from .server import ScratchServer, ScratchSettings

__all__ = ["LIBPQ_DEFAULTS", "LIVE_PG_LOCKS_RATE_HZ", "SERVER_ENV_VARS", "Target", "TargetChoice", "choose_target",
           "open_target"]

#: libpq environment variables that name a server (libpq "Environment Variables"); PGPASSWORD and the like only
#: tell how to connect, not where.
SERVER_ENV_VARS = ("PGSERVICE", "PGHOST", "PGHOSTADDR", "PGPORT", "PGDATABASE", "PGUSER")


#: pg_locks reads per second at most on a server the user named, when ``--probe-rate`` is not given.
LIVE_PG_LOCKS_RATE_HZ = 2.0
#: How the server is described when libpq's defaults choose it (no ``--dsn``, no PG* variable).
LIBPQ_DEFAULTS = "libpq defaults: no --dsn, no PG* variables"


@dataclass(frozen=True)
class TargetChoice:
    """Which server a command works on, decided before anything is started or contacted.

    :ivar dsn: the conninfo to connect to (``""``: libpq's defaults and the PG* environment, as ``psql`` with no
        arguments), or None for a scratch server lockscope starts itself.
    :ivar source: how it was chosen: ``"--dsn"``, ``"the environment: PGHOST, PGPORT"``, :data:`LIBPQ_DEFAULTS`,
        or ``"scratch"`` (``--scratch``, ``--demo``).
    """

    dsn: str | None
    source: str

    @property
    def scratch(self) -> bool:
        """True when lockscope starts its own server."""
        return self.dsn is None

    def describe(self, max_locks_per_transaction: int) -> str:
        """How the server was chosen, for the first output line, e.g. ``from --dsn``."""
        if self.scratch:
            return f"scratch server started by lockscope, max_locks_per_transaction {max_locks_per_transaction}"
        return f"from {self.source}"

    def pg_locks_rate_hz(self, probe_rate_hz: float | None) -> float:
        """pg_locks reads per second at most: ``--probe-rate`` when given (0 = unpaced), else
        :data:`LIVE_PG_LOCKS_RATE_HZ` on a server the user named and unpaced (0) on a scratch server."""
        if probe_rate_hz is not None:
            return probe_rate_hz
        return 0.0 if self.scratch else LIVE_PG_LOCKS_RATE_HZ


def choose_target(dsn: str | None, *, scratch: bool = False, environ: Mapping[str, str] | None = None,
                  scratch_only: Mapping[str, object] | None = None, scratch_flag: str = "--scratch",
                  psql_options: tuple[str, ...] = (), given_dsn: bool | None = None) -> TargetChoice:
    """Choose the target as ``psql`` does: ``--dsn``, else the PG* environment, else libpq's defaults (the local
    socket, the OS user); a scratch server only when asked (``--scratch``, ``--demo``).

    :param dsn: the ``--dsn`` value (None when not given); parsed here, before anything is started or contacted.
    :param scratch: ``--scratch`` / ``--demo``: a scratch server lockscope starts itself.
    :param environ: the environment (default ``os.environ``).
    :param scratch_only: options that apply to a scratch server only, by option name (``{"--setup": path}``);
        a value other than None/False/empty without ``scratch`` is refused.
    :param scratch_flag: the option that asks for the scratch server in this command (``--scratch``, ``--demo``).
    :param psql_options: psql's ``-h -p -U -d`` merged into ``dsn`` (named in the source, e.g. ``"-h, -d"``).
    :param given_dsn: whether ``--dsn`` itself was given (default: ``dsn is not None and not psql_options``).
    :raises BadInputError: ``--dsn`` libpq cannot parse (password masked), ``--dsn`` with ``scratch``, or a
        scratch-only option without ``scratch``.
    """
    from .db import check_dsn

    env = os.environ if environ is None else environ
    if dsn is not None:
        check_dsn(dsn)
    if dsn is not None and scratch:
        raise BadInputError(f"give --dsn or {scratch_flag}, not both")
    if scratch:
        return TargetChoice(None, "scratch")
    if dsn is not None:
        with_dsn = given_dsn if given_dsn is not None else not psql_options
        choice = TargetChoice(dsn, ", ".join((["--dsn"] if with_dsn else []) + list(psql_options)))
    elif named := [v for v in SERVER_ENV_VARS if env.get(v)]:
        choice = TargetChoice("", f"the environment: {', '.join(named)}")
    else:
        choice = TargetChoice("", LIBPQ_DEFAULTS)
    given = [name for name, value in (scratch_only or {}).items() if value not in (None, False, [], ())]
    if given:
        if dsn is not None:
            raise BadInputError(f"{given[0]} applies to a scratch server only, not to the server named by "
                                f"{choice.source}")
        named_by = "the PG* environment" if choice.source != LIBPQ_DEFAULTS else "libpq's defaults (as for psql)"
        instead = "a scratch server" if scratch_flag == "--scratch" else "a scratch server with the demo load"
        raise BadInputError(f"{given[0]} applies to a scratch server only, not to the server named by {named_by}; "
                            f"add {scratch_flag} to use {instead} instead")
    return choice


@dataclass(frozen=True)
class Target:
    """An open session and, when lockscope started it, the scratch server behind it.

    :ivar session: the lockscope session (read-only probes).
    :ivar server: the scratch server, or None for a user's server.
    """

    session: Session
    server: ScratchServer | None


@contextlib.contextmanager
def open_target(
    dsn: str | None,
    *,
    pg_bin: Path | str | None = None,
    settings: ScratchSettings | None = None,
    setup_sql: str | None = None,
    lock_timeout_ms: int = 200,
    statement_timeout_ms: int = 5000,
    pg_locks_rate_hz: float = 0.0,
) -> Iterator[Target]:
    """Open a session on ``dsn``, or on a new scratch server when ``dsn`` is None.

    :param pg_locks_rate_hz: pg_locks reads per second at most (0 = unpaced; :meth:`TargetChoice.pg_locks_rate_hz`).
    :param setup_sql: a script run (for real) on the scratch server first; refused with a ``dsn``, since
        lockscope never changes a user's database.
    :raises BadInputError: ``setup_sql`` or ``pg_bin`` given together with a ``dsn``.
    :raises ConnectionFailedError, UnsupportedServerError, ScratchServerError: as their names say.
    """
    from .db import connect, run_script
    from .server import ScratchServer

    if dsn is not None:
        if setup_sql is not None or pg_bin is not None:
            raise BadInputError("--setup and --pg-bin apply to the scratch server only, not to --dsn")
        with connect(dsn, lock_timeout_ms=lock_timeout_ms, statement_timeout_ms=statement_timeout_ms,
                     pg_locks_rate_hz=pg_locks_rate_hz) as session:
            yield Target(session, None)
        return
    with ScratchServer(pg_bin, settings) as server:
        if setup_sql:
            run_script(server.conninfo(), setup_sql)
        with connect(server.conninfo(), lock_timeout_ms=lock_timeout_ms,
                     statement_timeout_ms=statement_timeout_ms, pg_locks_rate_hz=pg_locks_rate_hz) as session:
            yield Target(session, server)
