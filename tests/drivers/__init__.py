"""Real client libraries as load generators for the tests: one tiny closed-loop program per library, each with the
library's DEFAULT statement caching, so a test sees what PostgreSQL's plan cache gets from real application code.

========================  =======================================  =====================================================
driver                    program (this directory)                 what reaches the server by default
========================  =======================================  =====================================================
``pgx``                   ``pgx/`` Go, github.com/jackc/pgx/v5     named statement prepared on first use per connection
``pgjdbc``                ``pgjdbc/`` Java, org.postgresql         unnamed for executions 1-4, named from the 5th
``node-pg``               ``node-pg/`` JavaScript, pg on npm       unnamed statement every time (extended protocol)
``node-pg-named``         ``node-pg/ --named``                     the query given a ``name``: named, parsed once
``psycopg``               ``psycopg/`` psycopg 3 (this venv's)     unnamed for executions 1-5, named from the 6th
``asyncpg``               ``asyncpg/`` asyncpg from PyPI           named statement prepared on first use per connection
========================  =======================================  =====================================================

Each program's header says exactly what its library sends. Every program takes
``HOST PORT USER DBNAME CLIENTS SECONDS SQL [TYPE:VALUE ...]`` (HOST a Unix socket directory or an address, no
password; SQL with ``$1..$n``; TYPE ``int`` or ``text``), opens CLIENTS connections, runs SQL in a closed loop on each
until SECONDS have passed or its standard input ends, whichever comes first, and prints one JSON line
``{"driver", "version", "calls", "errors", "seconds"}``. :func:`run` keeps that input open, so a load runs SECONDS
unless the caller ends it sooner (``until``: a test whose measurement is over).

:func:`build` fetches the library from its registry (Go module proxy, Maven Central, npm, PyPI) and builds the program
once into ``~/.cache/lockscope/drivers/<program>-<hash of its sources>`` (``$LOCKSCOPE_DRIVER_CACHE`` or
``$XDG_CACHE_HOME/lockscope/drivers`` instead); a source change gives a new directory, an existing one is used as is,
so runs after the first need no network and no build tool. A missing toolchain or a failed build raises
:class:`DriverError` with the tool's output: the tests fail, they never skip.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from psycopg.conninfo import conninfo_to_dict

from lockscope.pgbin.staging import is_complete, publish, staging_dir

__all__ = ["DRIVERS", "DriverError", "DriverRun", "build", "cache_root", "run"]

#: Every driver :func:`run` knows, in the order the tests report them.
DRIVERS = ("pgx", "pgjdbc", "node-pg", "node-pg-named", "psycopg", "asyncpg")

HERE = Path(__file__).resolve().parent
#: Bumped when the layout of a built directory changes, so older builds are not reused.
_LAYOUT = "1"
#: driver -> (program directory, the files of it that are hashed and copied into the build)
_PROGRAMS: dict[str, tuple[str, tuple[str, ...]]] = {
    "pgx": ("pgx", ("go.mod", "go.sum", "main.go")),
    "pgjdbc": ("pgjdbc", ("pom.xml", "Main.java")),
    "node-pg": ("node-pg", ("package.json", "package-lock.json", "index.js")),
    "node-pg-named": ("node-pg", ("package.json", "package-lock.json", "index.js")),
    "psycopg": ("psycopg", ("load.py",)),
    "asyncpg": ("asyncpg", ("requirements.txt", "load.py")),
}
_BUILD_TIMEOUT = 900.0
_PARAM = re.compile(r"int:-?\d+|text:.*", re.DOTALL)


class DriverError(RuntimeError):
    """A driver program could not be built or run; the message carries the command and its output."""


@dataclass(frozen=True)
class DriverRun:
    """What one driver program reported.

    :ivar driver: the driver name (one of :data:`DRIVERS`).
    :ivar version: the client library's version as the program found it at run time.
    :ivar calls: executions that completed without error (count, all connections).
    :ivar errors: executions that failed (count).
    :ivar seconds: wall time of the loop (s), connecting excluded.
    :ivar stderr: what the program wrote on stderr (its first error message, if any).
    """

    driver: str
    version: str
    calls: int
    errors: int
    seconds: float
    stderr: str = field(default="", repr=False, compare=False)

    @property
    def rate(self) -> float:
        """Completed executions per second (calls/s)."""
        return self.calls / self.seconds if self.seconds > 0 else 0.0


def cache_root() -> Path:
    """Where built driver programs live (``$LOCKSCOPE_DRIVER_CACHE``, else the user cache dir)."""
    if os.environ.get("LOCKSCOPE_DRIVER_CACHE"):
        return Path(os.environ["LOCKSCOPE_DRIVER_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "lockscope" / "drivers"


def _program(driver: str) -> tuple[Path, tuple[str, ...]]:
    if driver not in _PROGRAMS:
        raise DriverError(f"unknown driver {driver!r}: one of {', '.join(DRIVERS)}")
    name, files = _PROGRAMS[driver]
    return HERE / name, files


def _key(driver: str) -> str:
    """Hash of the program's sources (and, for a wheel installed into the build, the interpreter it is for)."""
    src, files = _program(driver)
    digest = hashlib.sha256(f"{_LAYOUT}|{src.name}".encode())
    for name in files:
        digest.update(f"|{name}|".encode())
        digest.update((src / name).read_bytes())
    if src.name == "asyncpg":  # a binary wheel: one build per interpreter
        digest.update(f"|{sys.implementation.cache_tag}|{sys.platform}|{os.uname().machine}".encode())
    return digest.hexdigest()[:16]


def _tool(name: str, driver: str, hint: str) -> str:
    path = shutil.which(name)
    if path is None and name == "go" and Path("/usr/local/go/bin/go").exists():
        path = "/usr/local/go/bin/go"
    if path is None:
        raise DriverError(f"the {driver} driver needs `{name}`, which is not on PATH: {hint}")
    return path


def _check_call(argv: Sequence[str], cwd: Path, what: str, env: dict[str, str] | None = None) -> None:
    try:
        proc = subprocess.run(list(argv), cwd=cwd, capture_output=True, text=True, timeout=_BUILD_TIMEOUT,
                              env=env, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as exc:
        raise DriverError(f"{what}: {' '.join(argv)} did not finish in {_BUILD_TIMEOUT:.0f} s\n"
                          f"{_tail(exc.stdout)}{_tail(exc.stderr)}") from None
    if proc.returncode != 0:
        raise DriverError(f"{what} failed (exit {proc.returncode}): {' '.join(argv)} (in {cwd})\n"
                          f"--- stdout\n{_tail(proc.stdout)}\n--- stderr\n{_tail(proc.stderr)}")


def _tail(text: str | bytes | None, limit: int = 6000) -> str:
    if text is None:
        return ""
    if isinstance(text, bytes):
        text = text.decode(errors="replace")
    return text if len(text) <= limit else "...\n" + text[-limit:]


# -- one builder per program, run in a new directory that holds a copy of the program's files --------------------------
def _build_pgx(out: Path) -> None:
    go = _tool("go", "pgx", "Go 1.25+ is in the machine image (/usr/local/go/bin)")
    # -mod=readonly: go.mod and go.sum are complete and the build never rewrites them
    _check_call([go, "build", "-mod=readonly", "-buildvcs=false", "-trimpath", "-o", str(out / "pgx-load"), "."],
                out, "go build of tests/drivers/pgx")


def _build_pgjdbc(out: Path) -> None:
    hint = "Java 17 and Maven are in the machine image (apt-get install openjdk-17-jdk-headless maven)"
    mvn = _tool("mvn", "pgjdbc", hint)
    javac = _tool("javac", "pgjdbc", hint)
    _tool("java", "pgjdbc", hint)
    # the jars of pom.xml's dependencies (pgjdbc, junixsocket) from Maven Central, checksums checked by Maven
    _check_call([mvn, "-B", "-q", "-f", str(out / "pom.xml"), "dependency:copy-dependencies",
                 f"-DoutputDirectory={out / 'lib'}", "-DexcludeTypes=pom"], out, "mvn dependency:copy-dependencies")
    _check_call([javac, "--release", "17", "-d", str(out / "classes"), "-cp", str(out / "lib" / "*"),
                 str(out / "Main.java")], out, "javac of tests/drivers/pgjdbc/Main.java")


def _build_node_pg(out: Path) -> None:
    hint = "Node.js and npm are in the machine image (apt-get install npm)"
    npm = _tool("npm", "node-pg", hint)
    _tool("node", "node-pg", hint)
    # npm ci: exactly package-lock.json's versions and integrity hashes, no lifecycle scripts
    _check_call([npm, "ci", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error"], out,
                "npm ci of tests/drivers/node-pg")


def _build_asyncpg(out: Path) -> None:
    _check_call([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-input",
                 "--target", str(out / "site"), "-r", str(out / "requirements.txt")], out,
                "pip install of tests/drivers/asyncpg/requirements.txt")


_BUILDERS: dict[str, Callable[[Path], None]] = {
    "pgx": _build_pgx, "pgjdbc": _build_pgjdbc, "node-pg": _build_node_pg, "asyncpg": _build_asyncpg,
}


def build(driver: str) -> Path:
    """The directory holding ``driver``'s built program, building it on first use (cached by source hash).

    psycopg needs no build (it is this interpreter's own): its source directory is returned.

    :raises DriverError: unknown driver, missing toolchain, or a failed fetch or build (with the tool's output).
    """
    src, files = _program(driver)
    builder = _BUILDERS.get(src.name)
    if builder is None:
        return src
    final = cache_root() / f"{src.name}-{_key(driver)}"
    if is_complete(final, ".complete"):
        return final
    # built beside its final place and renamed into it (lockscope.pgbin.staging, as the binaries' caches are)
    with staging_dir(final) as staging:
        for name in files:
            shutil.copy2(src / name, staging / name)
        builder(staging)
        publish(staging, final, marker=".complete", text=f"{driver} built from {src}\n")
    return final


def _command(driver: str, built: Path) -> tuple[list[str], dict[str, str] | None]:
    if driver == "pgx":
        return [str(built / "pgx-load")], None
    if driver == "pgjdbc":
        return [_tool("java", driver, "Java 17 is in the machine image"), "-cp",
                f"{built / 'classes'}{os.pathsep}{built / 'lib' / '*'}", "Main"], None
    if driver in ("node-pg", "node-pg-named"):
        node = _tool("node", driver, "Node.js is in the machine image (apt-get install npm)")
        return [node, str(built / "index.js"), *(["--named"] if driver == "node-pg-named" else [])], None
    if driver == "psycopg":
        return [sys.executable, str(built / "load.py")], None
    if driver == "asyncpg":
        return [sys.executable, str(built / "load.py")], {**os.environ, "PYTHONPATH": str(built / "site")}
    raise DriverError(f"unknown driver {driver!r}: one of {', '.join(DRIVERS)}")


class _Input:
    """The write end of a program's standard input, closed once: when the caller's ``until`` is set, or at the end."""

    def __init__(self, fd: int) -> None:
        self._fd: int | None = fd
        self._lock = threading.Lock()

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def close_when(self, until: threading.Event, limit: float) -> None:
        if until.wait(limit):
            self.close()


def _run_program(driver: str, argv: list[str], env: dict[str, str] | None, limit: float,
                 until: threading.Event | None) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` to its end (at most ``limit`` s), its standard input an open pipe until ``until`` is set."""
    read_end, write_end = os.pipe()
    try:
        proc = subprocess.Popen(argv, stdin=read_end, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=env)
    except BaseException:
        os.close(write_end)
        raise
    finally:
        os.close(read_end)
    stdin = _Input(write_end)
    if until is not None:
        threading.Thread(target=stdin.close_when, args=(until, limit), daemon=True).start()
    try:
        out, err = proc.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        raise DriverError(f"{driver} did not finish in {limit:.0f} s: {' '.join(argv)}\n"
                          f"{_tail(out)}{_tail(err)}") from None
    finally:
        stdin.close()
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def run(driver: str, conninfo: str, sql: str, params: Sequence[str] = (), *, clients: int,
        seconds: float, until: threading.Event | None = None) -> DriverRun:
    """Run ``sql`` in a closed loop on ``clients`` connections of ``driver`` for ``seconds`` (builds it if needed).

    :param conninfo: libpq conninfo; its host (a Unix socket directory or an address), port, user and dbname are
        passed on, no password.
    :param sql: one statement with ``$1..$n`` placeholders.
    :param params: one typed value per placeholder: ``int:42`` or ``text:abc``.
    :param until: when set (by another thread) before ``seconds`` have passed, the load ends then: the program's
        standard input is closed, it finishes the calls in flight and reports.
    :raises DriverError: a bad parameter, a build failure, or the program failing or printing no result.
    """
    for p in params:
        if not _PARAM.fullmatch(p):
            raise DriverError(f"parameter {p!r} is not int:N or text:S")
    if clients < 1 or seconds <= 0:
        raise DriverError(f"clients ({clients}) and seconds ({seconds}) must be positive")
    parts = conninfo_to_dict(conninfo)
    if not parts.get("host"):
        raise DriverError(f"conninfo {conninfo!r} names no host (a socket directory or an address)")
    user = str(parts.get("user") or os.environ.get("USER") or "postgres")
    pieces = [str(parts["host"]), str(parts.get("port") or 5432), user, str(parts.get("dbname") or user)]
    argv, env = _command(driver, build(driver))
    argv += [*pieces, str(clients), repr(float(seconds)), sql, *params]
    limit = seconds + 120  # connecting and a JVM's start-up on a busy 2-core machine
    proc = _run_program(driver, argv, env, limit, until)
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    if proc.returncode != 0 or not lines:
        raise DriverError(f"{driver} failed (exit {proc.returncode}): {' '.join(argv)}\n"
                          f"--- stdout\n{_tail(proc.stdout)}\n--- stderr\n{_tail(proc.stderr)}")
    try:
        doc = json.loads(lines[-1])
        result = DriverRun(driver=str(doc["driver"]), version=str(doc["version"]), calls=int(doc["calls"]),
                           errors=int(doc["errors"]), seconds=float(doc["seconds"]), stderr=proc.stderr)
    except (ValueError, KeyError, TypeError) as exc:
        raise DriverError(f"{driver} printed no result line ({exc}): {lines[-1]!r}\n--- stderr\n"
                          f"{_tail(proc.stderr)}") from None
    if result.driver != driver:
        raise DriverError(f"{driver}'s program reported itself as {result.driver!r}")
    return result
