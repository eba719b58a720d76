"""Scratch-server watchdog: stops a scratch server and deletes its directory once its lockscope process is gone.

:class:`lockscope.server.ScratchServer` starts one per server, before ``initdb``, as
``python -I -S .../_watchdog.py ROOT`` in a session of its own (so it survives the death of lockscope's process
group), with the same privileges as lockscope (root may delete the tree the unprivileged system user owns) and with
its stdin the read end of a pipe whose write end only the lockscope process holds (close-on-exec, so no postmaster,
pgbench or other child inherits it). Whatever ends the lockscope process (normal exit, exception, ``kill -9``),
the kernel closes the write end and the read here returns EOF. Then:

1. if ``ROOT`` is gone (lockscope's own :meth:`~lockscope.server.ScratchServer.stop` already cleaned up), exit;
2. SIGQUIT the postmaster named in ``ROOT/data/postmaster.pid`` (immediate shutdown: it SIGQUITs its backends
   and exits; PostgreSQL ``postmaster.c`` ``pmdie`` / ``HandleChildCrash`` path), wait up to
   :data:`GRACE_S` for every PostgreSQL process of ``ROOT`` to exit;
3. SIGKILL, until none is left, every process that belongs to ``ROOT``: its command line names a path inside
   ``ROOT`` (``initdb``, ``pg_ctl``, ``postgres -D``, ``pgbench -h ROOT/socket``) or it is a ``postgres`` process
   whose working directory is inside ``ROOT`` (backends, the bootstrap backend of ``initdb``);
4. delete ``ROOT`` (data directory, socket directory, server log) and exit.

Linux only (``/proc``). Imports nothing but the standard library and nothing of lockscope, so it starts in
tens of milliseconds and does not depend on the package being importable.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys
import time

#: Seconds the postmaster gets after SIGQUIT before everything of the server is SIGKILLed.
GRACE_S = 3.0
#: Seconds the SIGKILL sweep may take before the watchdog gives up on stray processes and deletes the tree.
SWEEP_S = 10.0


def _wait_for_eof(fd: int) -> None:
    """Block until every write end of the pipe ``fd`` is closed."""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except InterruptedError:  # pragma: no cover - PEP 475 retries; kept for clarity
            continue
        except OSError:
            return
        if not chunk:
            return


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root + "/")


def _mentions(cmdline: list[str], root: str) -> bool:
    """True when an argument is, or contains (``-Dpath``, ``host=path``), a path inside ``root``."""
    for arg in cmdline:
        at = arg.find(root)
        while at != -1:
            end = at + len(root)
            if end == len(arg) or arg[end] in "/ '\"":
                return True
            at = arg.find(root, at + 1)
    return False


def _alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2:][:1] not in (b"Z", b"X", b"")


def _server_processes(root: str, postgres_only: bool = False) -> list[int]:
    """pids of live processes that belong to the scratch server in ``root`` (see the module docstring)."""
    me = os.getpid()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        base = f"/proc/{name}"
        try:
            with open(base + "/cmdline", "rb") as fh:
                cmdline = [a.decode(errors="replace") for a in fh.read().split(b"\0") if a]
            cwd = os.readlink(base + "/cwd")
        except OSError:
            continue
        if not cmdline:
            continue  # kernel thread or exiting process
        try:
            exe = os.path.basename(os.readlink(base + "/exe"))
        except OSError:
            exe = ""
        is_postgres = exe in ("postgres", "postgres (deleted)") or cmdline[0].startswith("postgres: ")
        if postgres_only and not is_postgres:
            continue
        if (_mentions(cmdline, root) or (is_postgres and _inside(cwd, root))) and _alive(int(name)):
            found.append(int(name))
    return found


def _postmaster_pid(root: str) -> tuple[int, str] | None:
    """(pid, "key shmid" line) from ``ROOT/data/postmaster.pid``, if it names a live process of ``root``."""
    try:
        with open(os.path.join(root, "data", "postmaster.pid"), encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
        pid = int(lines[0])
    except (OSError, ValueError, IndexError):
        return None
    return (pid, lines[6] if len(lines) > 6 else "") if pid in _server_processes(root, postgres_only=True) else None


def _remove_shared_memory(key_line: str) -> None:
    """Remove the SysV segment of a SIGKILLed postmaster (``postmaster.pid`` line 7: ``key shmid``)."""
    parts = key_line.split()
    if len(parts) == 2 and parts[1].isdigit():
        import subprocess

        with contextlib.suppress(OSError, subprocess.SubprocessError):
            subprocess.run(["ipcrm", "-m", parts[1]], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           timeout=10, check=False)


def cleanup(root: str) -> None:
    """Stop every process of the scratch server in ``root`` and delete ``root`` (steps 1-4 above)."""
    if not os.path.isdir(root):
        return
    postmaster = _postmaster_pid(root)
    if postmaster is not None:
        with contextlib.suppress(OSError):
            os.kill(postmaster[0], signal.SIGQUIT)
        deadline = time.monotonic() + GRACE_S
        while time.monotonic() < deadline and _server_processes(root, postgres_only=True):
            time.sleep(0.02)
    killed_postmaster = False
    deadline = time.monotonic() + SWEEP_S
    while time.monotonic() < deadline:
        pids = _server_processes(root)
        if not pids:
            break
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
            killed_postmaster = killed_postmaster or (postmaster is not None and pid == postmaster[0])
        time.sleep(0.02)
    if killed_postmaster and postmaster is not None:
        _remove_shared_memory(postmaster[1])
    for _ in range(50):
        shutil.rmtree(root, ignore_errors=True)
        if not os.path.lexists(root):
            return
        time.sleep(0.1)


def main(argv: list[str]) -> int:
    """``_watchdog.py ROOT``: wait for EOF on stdin, then :func:`cleanup` ``ROOT``."""
    if len(argv) != 2 or not os.path.isabs(argv[1]):
        print("usage: _watchdog.py ABSOLUTE_SCRATCH_ROOT (stdin: the owner's pipe)", file=sys.stderr)
        return 2
    for sig in (signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)  # a terminal's signals must not orphan the server
    signal.signal(signal.SIGTERM, _terminate)  # e.g. system shutdown: clean up now rather than be SIGKILLed
    with contextlib.suppress(_Terminated):
        _wait_for_eof(0)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # finish the clean-up whatever comes now
    cleanup(os.path.realpath(argv[1]))
    return 0


class _Terminated(Exception):
    pass


def _terminate(signum: int, frame: object) -> None:
    raise _Terminated


if __name__ == "__main__":
    sys.exit(main(sys.argv))
