"""Real PostgreSQL servers for the tests, started by the suite itself (no mocks, no silent skips).

- ``pg18``: the embedded PostgreSQL 18 (max_locks_per_transaction 64) with the demo schemas.
- ``pg_old``: a PostgreSQL <= 17 for the 16-slot rules: ``$LOCKSCOPE_TEST_OLD_PG_BIN`` or Debian's
  ``/usr/lib/postgresql/15/bin`` (installed by ``scripts/test.sh``). Missing → the tests FAIL, they do not skip.
- ``any_pg`` / ``any_session``: the same test once on a real server of every major 13-19 (``every_pg`` of
  :mod:`tests.fix_versions`, ids ``pg13`` .. ``pg19``, one server at a time), for the rules that hold on every
  version; a test states its version-specific numbers in a dict by major (:func:`by_major`), it never skips a
  major. A test that can only run on some majors narrows the list explicitly with
  ``@pytest.mark.parametrize("every_pg", MAJORS, indirect=True)`` and says why (e.g. ``tests/test_lockpart.py``:
  the majors whose builds ship server headers).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TypeVar

import pytest

from lockscope.db import Session, connect, run_script
from lockscope.demo import EVENTS_SQL, P40_SQL, T5_SQL
from lockscope.server import ScratchServer, ScratchSettings

T = TypeVar("T")
OLD_PG_BIN = Path(os.environ.get("LOCKSCOPE_TEST_OLD_PG_BIN", "/usr/lib/postgresql/15/bin"))
DEMO_SCHEMA = EVENTS_SQL + T5_SQL + P40_SQL + """
create table acct (id int primary key, owner text not null, balance int not null default 0);
create index on acct (owner);
insert into acct select g, 'o' || g, g from generate_series(1, 100) g;
create sequence acct_seq;
create view acct_v as select id, owner from acct;
"""


def pytest_report_header(config: pytest.Config) -> list[str]:
    return [f"old PostgreSQL bin dir for <= 17 tests: {OLD_PG_BIN}"]


def _server(bin_dir: Path | None, mlpt: int = 64) -> ScratchServer:
    if bin_dir is not None and not (bin_dir / "postgres").exists():
        pytest.fail(f"no PostgreSQL at {bin_dir}: run scripts/test.sh (it installs Debian's postgresql-15) "
                    "or set LOCKSCOPE_TEST_OLD_PG_BIN", pytrace=False)
    return ScratchServer(bin_dir, ScratchSettings(max_locks_per_transaction=mlpt))


@pytest.fixture()
def scratch_base(tmp_path: Path) -> Path:
    """``tmp_path``, traversable by the scratch server's system user when the tests run as root."""
    if os.geteuid() == 0:
        for p in (tmp_path, *tmp_path.parents):
            if str(p) in ("/", "/tmp"):
                break
            p.chmod(p.stat().st_mode | 0o011)
    return tmp_path


@pytest.fixture(scope="session")
def pg18() -> Iterator[ScratchServer]:
    with _server(None) as server:
        run_script(server.conninfo(), DEMO_SCHEMA)
        yield server


@pytest.fixture(scope="session")
def pg_old() -> Iterator[ScratchServer]:
    with _server(OLD_PG_BIN) as server:
        if server.major > 17:
            pytest.fail(f"{OLD_PG_BIN} is PostgreSQL {server.major}: the <= 17 tests need PostgreSQL 13-17",
                        pytrace=False)
        run_script(server.conninfo(), DEMO_SCHEMA)
        yield server


@pytest.fixture(scope="session")
def any_pg(every_pg: ScratchServer) -> ScratchServer:
    """A server of each major 13-19 in turn (``every_pg``: max_locks_per_transaction 64, the demo schemas)."""
    return every_pg


@pytest.fixture()
def any_session(any_pg: ScratchServer) -> Iterator[Session]:
    with connect(any_pg.conninfo()) as session:
        yield session


def by_major(expected: dict[int, T], major: int) -> T:
    """``expected[major]``: a test's version-specific number; a server version the test does not declare fails."""
    if major not in expected:
        pytest.fail(f"no expectation declared for PostgreSQL {major} (declared: {sorted(expected)})", pytrace=False)
    return expected[major]


@pytest.fixture()
def session18(pg18: ScratchServer) -> Iterator[Session]:
    with connect(pg18.conninfo()) as session:
        yield session


@pytest.fixture()
def session_old(pg_old: ScratchServer) -> Iterator[Session]:
    with connect(pg_old.conninfo()) as session:
        yield session


@pytest.fixture()
def load_lock() -> Iterator[None]:
    """Hold ``/tmp/lockscope-load.lock`` (the machine's load lock, as ``flock`` takes it) for a test that
    generates load, so that two loads never share the cores."""
    import fcntl

    with open("/tmp/lockscope-load.lock", "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)
from .fix_versions import *  # noqa: E402, F403 - every_pg, pg12_bin (real servers of PG 12-19)
