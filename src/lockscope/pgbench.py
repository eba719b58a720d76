"""pgbench against a scratch server lockscope started (Unix socket only): initialise, run, parse.

Load is only ever sent to :class:`~lockscope.server.ScratchServer` instances, never to a user's DSN.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from .errors import BadInputError, ScratchServerError
from .server import ScratchServer

__all__ = ["PgbenchResult", "PgbenchRun", "parse_pgbench_output", "pgbench_init", "run_pgbench", "start_pgbench"]

_TPS = re.compile(r"^tps = ([\d.]+) \((?:without initial connection time|excluding connections establishing)\)",
                  re.M)
_LAT = re.compile(r"^latency average = ([\d.]+) ms", re.M)
_TX = re.compile(r"^number of transactions actually processed: (\d+)", re.M)
_FAILED = re.compile(r"^number of failed transactions: (\d+)", re.M)


@dataclass(frozen=True)
class PgbenchResult:
    """One pgbench run.

    :ivar tps: transactions per second, without initial connection time.
    :ivar latency_ms: mean latency (ms).
    :ivar transactions: transactions processed (count).
    :ivar failed: failed transactions (count; 0 before PG 15 reported them).
    :ivar clients: clients (count).
    :ivar duration_s: requested duration (s).
    """

    tps: float
    latency_ms: float
    transactions: int
    failed: int
    clients: int
    duration_s: float


def _base_args(server: ScratchServer) -> list[str]:
    return ["-h", str(server.socket_dir), "-p", str(server.port), "-U", "postgres"]


def pgbench_init(server: ScratchServer, scale: int = 1, *, partitions: int = 0, dbname: str = "postgres") -> None:
    """``pgbench -i -s scale [--partitions=P]`` with the server's own pgbench.

    :param scale: scale factor (100,000 pgbench_accounts rows each).
    :param partitions: pgbench_accounts range partitions (0 = not partitioned; needs PG 13+ pgbench).
    :raises ScratchServerError: if pgbench fails.
    """
    argv = [str(server.tool("pgbench")), "-i", "-q", "-s", str(scale), *_base_args(server)]
    if partitions:
        argv.append(f"--partitions={partitions}")
    argv.append(dbname)
    _run(argv, "pgbench -i", timeout_s=3600)


def parse_pgbench_output(text: str, clients: int, duration_s: float) -> PgbenchResult:
    """Parse pgbench's summary.

    :raises ScratchServerError: when the summary lacks tps.
    """
    tps = _TPS.search(text)
    if tps is None:
        raise ScratchServerError("pgbench printed no tps line")
    lat = _LAT.search(text)
    tx = _TX.search(text)
    failed = _FAILED.search(text)
    return PgbenchResult(
        tps=float(tps.group(1)),
        latency_ms=float(lat.group(1)) if lat else float("nan"),
        transactions=int(tx.group(1)) if tx else 0,
        failed=int(failed.group(1)) if failed else 0,
        clients=clients,
        duration_s=duration_s,
    )


def _bench_argv(server: ScratchServer, clients: int, duration_s: float, jobs: int | None, protocol: str,
                extra_args: Sequence[str]) -> tuple[list[str], int]:
    """Checked pgbench arguments for a timed run (without transaction choice and dbname) and its seconds.

    :raises BadInputError: for out-of-range arguments.
    """
    if clients < 1 or duration_s < 1:
        raise BadInputError("pgbench needs at least 1 client and 1 s")
    if protocol not in ("simple", "extended", "prepared"):
        raise BadInputError(f"unknown pgbench protocol {protocol!r}")
    jobs = jobs or max(1, min(clients, os.cpu_count() or 1))
    seconds = max(1, round(duration_s))
    argv = [str(server.tool("pgbench")), *_base_args(server), "-n", "-c", str(clients), "-j", str(jobs),
            "-T", str(seconds), "-M", protocol, *extra_args]
    return argv, seconds


def run_pgbench(
    server: ScratchServer,
    *,
    clients: int,
    duration_s: float,
    jobs: int | None = None,
    select_only: bool = True,
    protocol: str = "simple",
    script: str | None = None,
    extra_args: Sequence[str] = (),
    dbname: str = "postgres",
) -> PgbenchResult:
    """Run pgbench for ``duration_s`` against the scratch server and return its summary.

    :param clients: ``-c`` (count, >= 1).
    :param duration_s: ``-T`` (s, >= 1; rounded).
    :param jobs: ``-j`` threads (default min(clients, cores)).
    :param select_only: ``-S`` (ignored when ``script`` is given).
    :param protocol: ``simple``, ``extended`` or ``prepared`` (``-M``).
    :param script: a pgbench script text (``-f``) instead of the built-in transaction.
    :raises BadInputError: for out-of-range arguments.
    :raises ScratchServerError: if pgbench fails.
    """
    argv, seconds = _bench_argv(server, clients, duration_s, jobs, protocol, extra_args)
    script_file = None
    try:
        if script is not None:
            # inside the server's own directory: removed with it, even when lockscope is killed (watchdog)
            fd, script_file = tempfile.mkstemp(prefix="pgbench-", suffix=".sql", dir=server.root)
            with os.fdopen(fd, "w") as fh:
                fh.write(script)
            argv += ["-f", script_file]
        elif select_only:
            argv.append("-S")
        argv.append(dbname)
        out = _run(argv, "pgbench", timeout_s=seconds + 120)
    finally:
        if script_file:
            Path(script_file).unlink(missing_ok=True)
    return parse_pgbench_output(out, clients, float(seconds))


def _run(argv: list[str], what: str, *, timeout_s: float) -> str:
    """Run a client tool in its own process group; kill the group if we are interrupted."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout_s)
    except BaseException:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise
    if proc.returncode != 0:
        lines = [ln for ln in out.strip().splitlines() if ln.strip()]
        raise ScratchServerError(f"{what} failed: {lines[-1] if lines else 'exit ' + str(proc.returncode)}")
    return out


class PgbenchRun:
    """A pgbench running in the background (see :func:`start_pgbench`); use as a context manager so it is
    always stopped.

    :ivar clients: ``-c`` (count).
    :ivar duration_s: ``-T`` (s).
    """

    def __init__(self, proc: subprocess.Popen[bytes], output: IO[bytes],
                 clients: int, duration_s: float) -> None:
        self._proc = proc
        self._output = output
        self.clients = clients
        self.duration_s = duration_s

    @property
    def running(self) -> bool:
        """True while pgbench has not exited."""
        return self._proc.poll() is None

    def wait(self, timeout_s: float | None = None) -> PgbenchResult:
        """Wait for pgbench to finish its ``-T`` run and return its summary.

        :param timeout_s: how long to wait (s; default the run's duration + 120 s).
        :raises ScratchServerError: if pgbench fails or does not finish in time (it is then killed).
        """
        timeout_s = self.duration_s + 120 if timeout_s is None else timeout_s
        try:
            self._proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.stop()
            raise ScratchServerError("pgbench did not finish in time") from None
        except BaseException:
            self.stop()
            raise
        self._output.seek(0)
        out = self._output.read().decode(errors="replace")
        self._output.close()
        if self._proc.returncode != 0:
            lines = [ln for ln in out.strip().splitlines() if ln.strip()]
            raise ScratchServerError(f"pgbench failed: {lines[-1] if lines else 'exit ' + str(self._proc.returncode)}")
        return parse_pgbench_output(out, self.clients, self.duration_s)

    def stop(self) -> None:
        """Kill pgbench's process group now (no summary). Idempotent."""
        if self._proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self._proc.pid, signal.SIGKILL)
            self._proc.wait()
        with contextlib.suppress(OSError, ValueError):
            self._output.close()

    def __enter__(self) -> PgbenchRun:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_pgbench(
    server: ScratchServer,
    *,
    clients: int,
    duration_s: float,
    jobs: int | None = None,
    select_only: bool = True,
    protocol: str = "simple",
    extra_args: Sequence[str] = (),
    dbname: str = "postgres",
) -> PgbenchRun:
    """Start pgbench for ``duration_s`` against the scratch server in the background (built-in transaction).

    Arguments as :func:`run_pgbench`; the output goes to a temporary file (no pipe to fill), read by
    :meth:`PgbenchRun.wait`.

    :raises BadInputError: for out-of-range arguments.
    :raises ScratchServerError: if pgbench cannot be started.
    """
    argv, seconds = _bench_argv(server, clients, duration_s, jobs, protocol, extra_args)
    if select_only:
        argv.append("-S")
    argv.append(dbname)
    output = tempfile.TemporaryFile(prefix="lockscope-pgbench-")  # noqa: SIM115 - lives as long as pgbench
    try:
        proc = subprocess.Popen(argv, stdout=output, stderr=subprocess.STDOUT, start_new_session=True)
    except OSError as exc:
        output.close()
        raise ScratchServerError(f"cannot start pgbench: {exc.strerror}") from None
    return PgbenchRun(proc, output, clients, float(seconds))
