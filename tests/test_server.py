"""The scratch server: settings, restart, unprivileged user, and no orphan postgres on exit, error, Ctrl-C."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest

from lockscope.errors import ScratchServerError
from lockscope.server import SYSTEM_USER, ScratchServer, ScratchSettings

from .conftest import OLD_PG_BIN
from .helpers import clean_env, pids_under, start


def test_start_settings_restart_stop(scratch_base: Path) -> None:
    server = ScratchServer(settings=ScratchSettings(max_locks_per_transaction=16, max_connections=30),
                           base_dir=scratch_base)
    with server:
        with psycopg.connect(server.conninfo()) as conn:
            row = conn.execute("select current_setting('max_locks_per_transaction'), "
                               "current_setting('max_connections'), current_setting('shared_preload_libraries'), "
                               "current_setting('pg_stat_statements.track_planning'), "
                               "current_setting('listen_addresses')").fetchone()
        assert row == ("16", "30", "pg_stat_statements", "on", "")
        server.reconfigure(max_locks_per_transaction=128)
        with psycopg.connect(server.conninfo()) as conn:
            assert conn.execute("show max_locks_per_transaction").fetchone() == ("128",)
        postmaster = int((server.data_dir / "postmaster.pid").read_text().splitlines()[0])
        if os.geteuid() == 0:
            uid = int(Path(f"/proc/{postmaster}/status").read_text().split("Uid:")[1].split()[0])
            assert uid != 0
            import pwd
            assert pwd.getpwuid(uid).pw_name == SYSTEM_USER
        assert server.tool("pgbench").exists() and server.tool("psql").exists()
        root = server.root
    assert not root.exists()
    assert pids_under(root) == []


def test_old_major_via_pg_bin(scratch_base: Path) -> None:
    with ScratchServer(OLD_PG_BIN, base_dir=scratch_base) as server:
        assert server.major <= 17
        with psycopg.connect(server.conninfo()) as conn:
            assert conn.execute("show server_version_num").fetchone()[0].startswith(str(server.major))


def test_bad_bin_dir(scratch_base: Path) -> None:
    with pytest.raises(ScratchServerError, match="no PostgreSQL server binary"):
        ScratchServer(scratch_base)


def test_failed_start_leaves_nothing(scratch_base: Path) -> None:
    server = ScratchServer(settings=ScratchSettings(extra={"shared_buffers": "1kB"}), base_dir=scratch_base)
    with pytest.raises(ScratchServerError, match="start failed"):
        server.start()
    assert list(scratch_base.glob("lockscope-pg-*")) == []
    assert pids_under(scratch_base) == []


def _wait_for_server(base: Path, timeout_s: float = 60) -> Path:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for root in base.glob("lockscope-pg-*"):
            if (root / "data" / "postmaster.pid").exists() and pids_under(root):
                return root
        time.sleep(0.05)
    raise AssertionError("scratch server did not start")


@pytest.mark.parametrize("sig, code, delay_s", [(signal.SIGINT, 130, 0.0), (signal.SIGINT, 130, 1.0),
                                                (signal.SIGTERM, 143, 0.3)])
def test_cli_interrupted_leaves_no_orphan(scratch_base: Path, sig: signal.Signals, code: int,
                                          delay_s: float) -> None:
    proc = start("demo", "--html", str(scratch_base / "d.html"), env=clean_env(TMPDIR=str(scratch_base)))
    root = _wait_for_server(scratch_base)
    time.sleep(delay_s)
    proc.send_signal(sig)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err
    assert "Traceback" not in err
    assert not root.exists(), (list(root.rglob("*"))[:20], err)
    assert pids_under(scratch_base) == []


def test_killed_owner_is_reaped(scratch_base: Path) -> None:
    env = dict(os.environ, TMPDIR=str(scratch_base))
    script = ("import time; from lockscope.server import ScratchServer; ScratchServer().start(); "
              "print('up', flush=True); time.sleep(120)")
    proc = subprocess.Popen([sys.executable, "-c", script], env=env, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "up"
    root = _wait_for_server(scratch_base)
    # the watchdog would clean up within a second (tests/test_server_lifecycle.py); kill it too, as a
    # kill -9 of everything (or a crash of the machine's OOM killer) would, to leave an orphan behind
    watchdogs = [pid for pid in pids_under(root)
                 if b"_watchdog.py" in Path(f"/proc/{pid}/cmdline").read_bytes()]
    assert len(watchdogs) == 1
    os.kill(watchdogs[0], signal.SIGKILL)
    proc.kill()
    proc.wait(10)
    proc.stdout.close()
    assert pids_under(root)  # the orphan a kill -9 leaves ...
    assert ScratchServer.reap_stale(scratch_base) == 1  # ... is reaped by the next start
    assert not root.exists()
    assert pids_under(scratch_base) == []
