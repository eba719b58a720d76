"""Where a command runs: a user's server (``--dsn``) or a scratch server lockscope starts and always stops."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from .db import Session, connect, run_script
from .errors import BadInputError
from .server import ScratchServer, ScratchSettings

__all__ = ["SERVER_ENV_VARS", "Target", "TargetChoice", "choose_target", "open_target"]

#: libpq environment variables that name a server (libpq "Environment Variables"); PGPASSWORD and the like only
#: tell how to connect, not where.
SERVER_ENV_VARS = ("PGSERVICE", "PGHOST", "PGHOSTADDR", "PGPORT", "PGDATABASE", "PGUSER")


@dataclass(frozen=True)
class TargetChoice:
    """Which server a command works on, decided before anything is started or contacted.

    :ivar dsn: the conninfo to connect to (``""``: libpq defaults from the environment), or None for a scratch
        server lockscope starts itself.
    :ivar source: how it was chosen: ``"--dsn"``, ``"environment (PGHOST, PGPORT)"`` or ``"scratch"``.
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


def choose_target(dsn: str | None, *, scratch: bool = False, environ: Mapping[str, str] | None = None,
                  scratch_only: Mapping[str, object] | None = None) -> TargetChoice:
    """Choose the target as libpq and psql do: ``--dsn``, else the PG* environment, else a scratch server.

    :param dsn: the ``--dsn`` value (None when not given).
    :param scratch: ``--scratch``: a scratch server even when PG* variables are set.
    :param environ: the environment (default ``os.environ``).
    :param scratch_only: options that apply to a scratch server only, by option name (``{"--setup": path}``);
        a value other than None/False/empty with a real target is refused.
    :raises BadInputError: ``--dsn`` with ``--scratch``, or a scratch-only option with a real target.
    """
    env = os.environ if environ is None else environ
    if dsn is not None and scratch:
        raise BadInputError("give --dsn or --scratch, not both")
    if dsn is not None:
        choice = TargetChoice(dsn, "--dsn")
    elif not scratch and (named := [v for v in SERVER_ENV_VARS if env.get(v)]):
        choice = TargetChoice("", f"the environment: {', '.join(named)}")
    else:
        choice = TargetChoice(None, "scratch")
    if not choice.scratch:
        given = [name for name, value in (scratch_only or {}).items() if value not in (None, False, [], ())]
        if given:
            hint = "" if dsn is not None else "; add --scratch to use a scratch server instead"
            raise BadInputError(f"{given[0]} applies to a scratch server only, not to the server named by "
                                f"{'--dsn' if dsn is not None else 'the PG* environment'}{hint}")
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
) -> Iterator[Target]:
    """Open a session on ``dsn``, or on a new scratch server when ``dsn`` is None.

    :param setup_sql: a script run (for real) on the scratch server first; refused with a ``dsn``, since
        lockscope never changes a user's database.
    :raises BadInputError: ``setup_sql`` or ``pg_bin`` given together with a ``dsn``.
    :raises ConnectionFailedError, UnsupportedServerError, ScratchServerError: as their names say.
    """
    if dsn is not None:
        if setup_sql is not None or pg_bin is not None:
            raise BadInputError("--setup and --pg-bin apply to the scratch server only, not to --dsn")
        with connect(dsn, lock_timeout_ms=lock_timeout_ms, statement_timeout_ms=statement_timeout_ms) as session:
            yield Target(session, None)
        return
    with ScratchServer(pg_bin, settings) as server:
        if setup_sql:
            run_script(server.conninfo(), setup_sql)
        with connect(server.conninfo(), lock_timeout_ms=lock_timeout_ms,
                     statement_timeout_ms=statement_timeout_ms) as session:
            yield Target(session, server)
