"""Scratch servers for the tests, started as few times as the tests allow (issue 24: the suite in half the time).

- :class:`DataTemplates`: a data-directory template per binary directory. The first scratch server of a bin
  directory in the session runs initdb (``ScratchServer._init_data_dir``) into the template; every later one, the
  fixtures' and those of lockscope commands run in this process alike, gets a copy (``cp -a``, as the system user
  the server runs as): the same files initdb writes, without initdb's bootstrap. ``tests/conftest.py`` installs it
  for the whole session (fixture ``data_templates``). Servers started by a child process (``run_process``,
  ``start``, the lifecycle tests' children) run initdb themselves.
- :class:`ServerPool`: running servers the whole session shares, one per (bin directory, schema): ``get(bin_dir,
  schema, settings, setup)`` returns the running server, started (and ``setup`` run on it) on first use, and
  reconfigured when its settings differ from the ones asked for (a restart: max_locks_per_transaction and
  max_connections are PGC_POSTMASTER settings; still far cheaper than initdb and a start). ``pg18``, ``pg_old``,
  ``every_pg`` and the tests that only vary a setting (acquisition order, capacity, export-queries, plan phases)
  share it; a test that needs a pristine or private server (its log, its lifecycle, a load on a fresh server, TCP)
  starts its own.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from lockscope.db import run_script
from lockscope.demo import EVENTS_SQL, P40_SQL, T5_SQL
from lockscope.server import ScratchServer, ScratchSettings

__all__ = ["DEMO_SCHEMA", "DEMO_SETTINGS", "DataTemplates", "ServerPool", "demo_server"]

#: The schema of ``pg18``, ``pg_old`` and ``every_pg``: the demo's tables and a small ``acct`` with its neighbours.
DEMO_SCHEMA = EVENTS_SQL + T5_SQL + P40_SQL + """
create table acct (id int primary key, owner text not null, balance int not null default 0);
create index on acct (owner);
insert into acct select g, 'o' || g, g from generate_series(1, 100) g;
create sequence acct_seq;
create view acct_v as select id, owner from acct;
"""
#: The demo servers' settings (every test finds them so: :meth:`ServerPool.restore` after each test).
DEMO_SETTINGS = ScratchSettings(max_locks_per_transaction=64)


class DataTemplates:
    """One initdb'd data directory per (resolved bin directory, system user), copied for every further server.

    Install with :meth:`install` (a ``pytest.MonkeyPatch``); :meth:`remove` deletes the templates.
    """

    def __init__(self) -> None:
        # /tmp, not pytest's tmp_path: the system user must traverse to it (a concurrent pytest session resets
        # /tmp/pytest-of-USER to 0700)
        self.root = Path(tempfile.mkdtemp(prefix="lockscope-test-templates-"))
        self.root.chmod(0o755)
        self._made: dict[tuple[str, str | None], Path] = {}
        self._lock = threading.Lock()
        self._initdb = ScratchServer._init_data_dir

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Make every ``ScratchServer.start`` of this process copy a template (``monkeypatch.setattr``)."""
        templates = self

        def init_data_dir(server: ScratchServer, bin_dir: Path, data_dir: Path) -> None:
            templates.init_data_dir(server, bin_dir, data_dir)

        monkeypatch.setattr(ScratchServer, "_init_data_dir", init_data_dir)

    def init_data_dir(self, server: ScratchServer, bin_dir: Path, data_dir: Path) -> None:
        """``data_dir`` as ``server._init_data_dir`` would make it: a copy of the template of ``bin_dir`` (made
        first, with initdb, by ``server`` itself when it is the first of its bin directory)."""
        key = (str(bin_dir.resolve()), server._run_as)
        with self._lock:
            template = self._made.get(key)
            if template is None:
                home = self.root / f"template-{len(self._made)}"
                home.mkdir(mode=0o700)
                if server._run_as:
                    uid, gid = server._system_user()
                    os.chown(home, uid, gid)
                template = home / "data"
                self._initdb(server, bin_dir, template)
                self._made[key] = template
        server._run(["cp", "-a", str(template), str(data_dir)], "copy of the data-directory template")

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


class ServerPool:
    """Running scratch servers shared by the session, one per (bin directory, schema name); see the module doc."""

    def __init__(self) -> None:
        self._servers: dict[tuple[str, str], ScratchServer] = {}

    def get(self, bin_dir: Path | None, schema: str, settings: ScratchSettings,
            setup: Callable[[ScratchServer], None]) -> ScratchServer:
        """The running server of ``bin_dir`` (None: the embedded PG 18) with schema ``schema``, at ``settings``.

        Started and ``setup(server)`` run (once: it loads the schema) on first use; a restart with ``settings``
        when the server runs with other ones. Tests must not change what ``setup`` made, beyond objects of their
        own that they drop, nor leave other settings behind: whoever asks next gets its own settings back.
        """
        key = (str(bin_dir) if bin_dir is not None else "embedded", schema)
        server = self._servers.get(key)
        if server is None:
            server = ScratchServer(bin_dir, settings)
            server.start()
            try:
                setup(server)
            except BaseException:
                server.stop()
                raise
            self._servers[key] = server
        elif server.settings != settings or not server.running:
            server.configure(settings)
        return server

    def restore(self, schema: str, settings: ScratchSettings) -> None:
        """Put every running server of ``schema`` back to ``settings`` (restart only those that differ)."""
        for (_, name), server in self._servers.items():
            if name == schema and server.settings != settings:
                server.configure(settings)

    def close(self) -> None:
        """Stop every server of the pool, all at once (each stop mostly waits for its postmaster's shutdown)."""
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=max(1, len(self._servers))) as stopping:
            list(stopping.map(ScratchServer.stop, self._servers.values()))
        self._servers.clear()


def load_demo_schema(server: ScratchServer) -> None:
    run_script(server.conninfo(), DEMO_SCHEMA)


def demo_server(pool: ServerPool, bin_dir: Path | None) -> ScratchServer:
    """The pool's server of ``bin_dir`` with :data:`DEMO_SCHEMA` at :data:`DEMO_SETTINGS`."""
    return pool.get(bin_dir, "demo", DEMO_SETTINGS, load_demo_schema)
