"""Where a command runs: a user's server (``--dsn``) or a scratch server lockscope starts and always stops."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from .db import Session, connect, run_script
from .server import ScratchServer, ScratchSettings

__all__ = ["Target", "open_target"]


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
    from .errors import BadInputError

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
