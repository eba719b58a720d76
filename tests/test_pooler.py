"""lockscope behind a real connection pooler (Debian's PgBouncer, installed by scripts/test.sh) in transaction mode:
lockscope's session rules (statement_timeout, lock_timeout, default_transaction_read_only) travel in the connection's
``options``. A pooler that refuses them, or drops them (``ignore_startup_parameters = options``), gets a one-line
refusal that says to connect to PostgreSQL itself; no query runs without the rules and nothing is ``SET`` on the
pool's server connections (which other clients would inherit)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from lockscope.server import SYSTEM_USER, ScratchServer

from .helpers import free_port, one_line_error, run


def _pgbouncer() -> str:
    path = shutil.which("pgbouncer") or ("/usr/sbin/pgbouncer" if Path("/usr/sbin/pgbouncer").exists() else None)
    if path is None:
        pytest.fail("pgbouncer not found: run scripts/test.sh (it installs Debian's pgbouncer package)", pytrace=False)
    return path


def _start_pgbouncer(server: ScratchServer, *, ignore_options: bool) -> Iterator[str]:
    """PgBouncer on 127.0.0.1 in transaction mode in front of ``server``; yields the DSN through it."""
    params = psycopg.conninfo.conninfo_to_dict(server.conninfo())
    port = free_port()
    conf_dir = Path(tempfile.mkdtemp(prefix="lockscope-pgbouncer-"))
    conf_dir.chmod(0o755)
    conf = conf_dir / "pgbouncer.ini"
    conf.write_text(
        "[databases]\n"
        f"postgres = host={params['host']} port={params['port']} dbname=postgres user=postgres\n"
        "[pgbouncer]\n"
        f"listen_addr = 127.0.0.1\nlisten_port = {port}\nunix_socket_dir =\n"
        "auth_type = any\npool_mode = transaction\nserver_reset_query =\n"
        + ("ignore_startup_parameters = options\n" if ignore_options else ""))
    conf.chmod(0o644)
    argv = [_pgbouncer(), *(["-u", SYSTEM_USER] if os.geteuid() == 0 else []), str(conf)]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    dsn = f"host=127.0.0.1 port={port} dbname=postgres user=postgres"
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    out = proc.stdout.read() if proc.poll() is not None and proc.stdout else ""
                    pytest.fail(f"pgbouncer did not start: {out}", pytrace=False)
                time.sleep(0.1)
        yield dsn
    finally:
        proc.terminate()
        proc.wait(30)
        if proc.stdout is not None:
            proc.stdout.close()
        shutil.rmtree(conf_dir, ignore_errors=True)


@pytest.fixture()
def pooler_refusing_options(pg18: ScratchServer) -> Iterator[str]:
    yield from _start_pgbouncer(pg18, ignore_options=False)


@pytest.fixture()
def pooler_dropping_options(pg18: ScratchServer) -> Iterator[str]:
    yield from _start_pgbouncer(pg18, ignore_options=True)


def test_pooler_refusing_options_gets_a_one_line_refusal(pooler_refusing_options: str) -> None:
    proc = run("footprint", "--dsn", pooler_refusing_options, "select 1")
    assert proc.returncode == 3, proc.stderr
    line = one_line_error(proc)
    assert "unsupported startup parameter: options" in line
    assert "connect lockscope to the PostgreSQL server itself" in line and "127.0.0.1:" in line


def test_pooler_dropping_options_is_refused_before_any_probe(pooler_dropping_options: str) -> None:
    for command in (("footprint", "select 1"), ("audit",), ("diagnose", "--duration", "1s")):
        proc = run(command[0], "--dsn", pooler_dropping_options, *command[1:])
        assert proc.returncode == 3, (command, proc.stderr)
        line = one_line_error(proc)
        assert "session rules did not take effect" in line, line
        assert "default_transaction_read_only is off, not on" in line and "statement_timeout is 0 ms" in line
        assert "connect lockscope to the PostgreSQL server itself" in line
    # lockscope set nothing on the pool's server connection: a client of the same pool sees the defaults
    with psycopg.connect(pooler_dropping_options, autocommit=True) as conn:
        row = conn.execute("select current_setting('default_transaction_read_only'), "
                           "current_setting('statement_timeout')").fetchone()
    assert row == ("off", "0")
