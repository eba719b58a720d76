"""Real PostgreSQL servers for the tests, started by the suite itself (no mocks, no silent skips).

- ``pg18``: the embedded PostgreSQL 18 (max_locks_per_transaction 64) with the demo schemas.
- ``pg_old``: a PostgreSQL <= 17 for the 16-slot rules: ``$LOCKSCOPE_TEST_OLD_PG_BIN`` or Debian's
  ``/usr/lib/postgresql/15/bin`` (installed by ``scripts/test.sh``). Missing → the tests FAIL, they do not skip.
- ``any_pg`` / ``any_session``: the same test once on a real server of every major 13-19 (``every_pg`` of
  :mod:`tests.fix_versions`, ids ``pg13`` .. ``pg19``), for the rules that hold on every version; a test
  states its version-specific numbers in a dict by major (:func:`by_major`), it never skips a major. A test
  that can only run on some majors narrows the list explicitly with
  ``@pytest.mark.parametrize("every_pg", MAJORS, indirect=True)`` and says why (e.g. ``tests/test_lockpart.py``:
  the majors whose builds ship server headers).

These servers come from the session's pool (``server_pool``, :class:`tests.servers.ServerPool`): one running
server per (bin directory, schema), so ``pg18`` is ``every_pg``'s PG 18 server and ``pg_old`` its PG 15 one; a test
that needs another setting asks the pool, which restarts the server with it; after each test the demo servers are
back at max_locks_per_transaction 64. Every scratch server this process starts, fixtures' and in-process lockscope
commands' alike, is a copy of one initdb'd data directory per bin directory (``data_templates``,
:class:`tests.servers.DataTemplates`).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from lockscope.db import Session, connect
from lockscope.server import ScratchServer

from .helpers import SUMMARY_PROPERTY
from .schedule import WORKER_INPUT_KEY, LoadsApartScheduling, turn, unit_of, write_units
from .servers import DEMO_SCHEMA, DEMO_SETTINGS, DataTemplates, ServerPool, demo_server

T = TypeVar("T")
OLD_PG_BIN = Path(os.environ.get("LOCKSCOPE_TEST_OLD_PG_BIN", "/usr/lib/postgresql/15/bin"))
__all__ = ["DEMO_SCHEMA", "OLD_PG_BIN", "by_major"]


def pytest_report_header(config: pytest.Config) -> list[str]:
    return [f"old PostgreSQL bin dir for <= 17 tests: {OLD_PG_BIN}"]


def _heavy(item: pytest.Item) -> bool:
    """A test that generates load (it takes ``load_lock``) or is marked ``alone``: the loads unit of an xdist run
    (:mod:`tests.schedule`). A ``slow`` test that puts no load on the machine is not (it only comes late in a
    run on one process: :func:`_late`)."""
    return item.get_closest_marker("alone") is not None or "load_lock" in getattr(item, "fixturenames", ())


def _late(item: pytest.Item) -> bool:
    """A heavy test (:func:`_heavy`) or one marked ``slow``."""
    return _heavy(item) or item.get_closest_marker("slow") is not None


@pytest.hookimpl(trylast=True)  # after pytest's own ordering (tests sharing a parametrised fixture together)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Run order: the quick tests first, then the slow and heavy ones (:func:`_late`), each group in pytest's
    order; in a run on one process a regression fails within the first minutes and the loads, which take the
    machine's load lock, come last. An xdist worker also writes each test's work unit (heavy or not), for the
    controller's scheduler (:mod:`tests.schedule`). Nothing is deselected."""
    items.sort(key=_late)  # stable: within each group the order stays pytest's
    directory = getattr(config, "workerinput", {}).get(WORKER_INPUT_KEY)
    if directory is not None:
        write_units(Path(directory), config.workerinput["workerid"],  # type: ignore[attr-defined]
                    {item.nodeid: unit_of(item, heavy=_heavy(item)) for item in items})


_UNITS_DIR = pytest.StashKey[Path]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[object]:
    """(xdist worker) Each test, set-up to teardown, in the run's room: shared, or alone for a test marked ``alone``
    (:func:`tests.schedule.turn`). A run on one process needs no room."""
    directory = getattr(item.config, "workerinput", {}).get(WORKER_INPUT_KEY)
    if directory is None:
        return (yield)
    with turn(Path(directory), alone=item.get_closest_marker("alone") is not None):
        return (yield)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """(xdist controller) Tell each worker where to write its tests' work units."""
    config: pytest.Config = node.config
    if _UNITS_DIR not in config.stash:
        config.stash[_UNITS_DIR] = Path(tempfile.mkdtemp(prefix="lockscope-test-schedule-"))
    node.workerinput[WORKER_INPUT_KEY] = str(config.stash[_UNITS_DIR])


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """(xdist controller) ``-n N`` (``--dist load``, xdist's default): the heavy tests run on one worker, one after
    another, the others in units of shared fixture parameters (:class:`tests.schedule.LoadsApartScheduling`); any
    other ``--dist`` is xdist's own."""
    if config.getvalue("dist") != "load" or _UNITS_DIR not in config.stash:
        return None
    return LoadsApartScheduling(config, log, config.stash[_UNITS_DIR])


def pytest_unconfigure(config: pytest.Config) -> None:
    if _UNITS_DIR in config.stash:
        shutil.rmtree(config.stash[_UNITS_DIR], ignore_errors=True)


_summary_lines: dict[str, list[str]] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Collect the summary lines tests add (:func:`tests.helpers.summary_line`), from this process or a worker."""
    if report.when != "call":
        return
    for key, value in report.user_properties:
        if key == SUMMARY_PROPERTY:
            section, line = value
            _summary_lines.setdefault(str(section), []).append(str(line))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Print the collected summary lines, one section each."""
    for section, lines in _summary_lines.items():
        terminalreporter.section(section)
        for line in lines:
            terminalreporter.write_line(line)


def need_bin_dir(bin_dir: Path) -> Path:
    """``bin_dir``, or the calling test fails (it does not skip) when it holds no PostgreSQL."""
    if not (bin_dir / "postgres").exists():
        pytest.fail(f"no PostgreSQL at {bin_dir}: run scripts/test.sh (it installs Debian's postgresql-15) "
                    "or set LOCKSCOPE_TEST_OLD_PG_BIN", pytrace=False)
    return bin_dir


@pytest.fixture(scope="session", autouse=True)
def data_templates() -> Iterator[DataTemplates]:
    """Every scratch server this process starts copies an initdb'd template of its bin directory
    (:class:`tests.servers.DataTemplates`)."""
    templates = DataTemplates()
    with pytest.MonkeyPatch.context() as monkeypatch:
        templates.install(monkeypatch)
        yield templates
    templates.remove()


@pytest.fixture(scope="session")
def server_pool(data_templates: DataTemplates) -> Iterator[ServerPool]:
    """The session's shared running servers (:class:`tests.servers.ServerPool`), stopped at the end."""
    pool = ServerPool()
    try:
        yield pool
    finally:
        pool.close()


@pytest.fixture(autouse=True)
def _demo_servers_keep_their_settings(server_pool: ServerPool) -> Iterator[None]:
    """After each test, the shared demo servers are back at :data:`tests.servers.DEMO_SETTINGS` (a test that
    reconfigured one, e.g. the capacity test, is undone by a restart)."""
    yield
    server_pool.restore("demo", DEMO_SETTINGS)


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
def pg18(server_pool: ServerPool) -> ScratchServer:
    return demo_server(server_pool, None)


@pytest.fixture(scope="session")
def pg_old(server_pool: ServerPool) -> ScratchServer:
    server = demo_server(server_pool, need_bin_dir(OLD_PG_BIN))
    if server.major > 17:
        pytest.fail(f"{OLD_PG_BIN} is PostgreSQL {server.major}: the <= 17 tests need PostgreSQL 13-17",
                    pytrace=False)
    return server


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
