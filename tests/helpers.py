"""What the test modules share: the ``lockscope`` command run as a user runs it, its one-line errors, children that
a test signals, and the processes a scratch server leaves. Test modules import from here, never from each other."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lockscope.cli import main

#: ``python -m lockscope``: the installed command, from this interpreter.
LOCKSCOPE = (sys.executable, "-m", "lockscope")
#: What a one-line error starts with (lockscope.cli).
ERROR_PREFIX = "lockscope: error: "
#: The tests' own count of the shared lock table's entries a backend (``%s``: its pid) holds, by lock type:
#: pg_locks rows outside the fast path, one per locked object (its LOCKTAG's fields), whatever its modes.
ENTRIES_BY_TYPE = """
SELECT locktype, count(*) FROM (
  SELECT DISTINCT locktype, database, relation, page, tuple, virtualxid::text, transactionid::text, classid, objid,
         objsubid
  FROM pg_locks WHERE pid = %s AND granted AND NOT fastpath) AS e
GROUP BY locktype"""


def clean_env(**extra: str) -> dict[str, str]:
    """The environment without libpq's PG* variables (which would name a server) and without ``COLUMNS`` (output
    is then the non-terminal one), plus ``extra``."""
    kept = {k: v for k, v in os.environ.items() if not k.startswith("PG") and k != "COLUMNS"}
    return {**kept, **extra}


def default_signals() -> None:
    """Set SIGINT and SIGQUIT back to their default action (a ``preexec_fn``).

    A shell starts a background job (``cmd &`` in a non-interactive script) with SIGINT and SIGQUIT ignored, and
    every process below it inherits that: a test that sends Ctrl-C to its child would then send it to a process
    that ignores it. Python only installs its KeyboardInterrupt handler when SIGINT is not ignored at start-up."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGQUIT, signal.SIG_DFL)


def run_process(*args: str, stdin: str | None = None, env: dict[str, str] | None = None, cwd: Path | None = None,
                timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``lockscope ARGS`` as a new process (``python -m lockscope``), to the end, output captured (text); the
    environment is :func:`clean_env` unless given. For the tests where the process is what is tested: its
    environment (PG* variables, HOME, TMPDIR), its exit, ``python -m lockscope`` itself."""
    return subprocess.run([*LOCKSCOPE, *args], capture_output=True, text=True, input=stdin, timeout=timeout,
                          env=env if env is not None else clean_env(), cwd=cwd)


def run(*args: str, stdin: str | None = None, cwd: Path | None = None,
        extra_env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``lockscope ARGS`` to the end in this process (``lockscope.cli.main``), as :func:`run_process` would run it:
    the environment ``clean_env(**extra_env)`` and ``cwd`` for the call,
    standard input ``stdin`` (empty if None), standard output and error captured as text (every console lockscope
    makes writes to ``sys.stdout``/``sys.stderr`` as they are when it is made), the exit code from the return
    value or ``SystemExit`` (argparse), an unexpected exception as Python would print it (exit code 1)."""
    out, err = io.StringIO(), io.StringIO()
    saved_env, saved_cwd, saved_streams = dict(os.environ), os.getcwd(), (sys.stdin, sys.stdout, sys.stderr)
    os.environ.clear()
    os.environ.update(clean_env(**(extra_env or {})))
    sys.stdin, sys.stdout, sys.stderr = io.StringIO(stdin or ""), out, err
    try:
        if cwd is not None:
            os.chdir(cwd)
        code = main(list(args))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if isinstance(exc.code, str):
            err.write(exc.code + "\n")
    except Exception:
        err.write(traceback.format_exc())
        code = 1
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved_streams
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    return subprocess.CompletedProcess([*LOCKSCOPE, *args], code, out.getvalue(), err.getvalue())


def start(*args: str, env: dict[str, str] | None = None, stdout: int | None = subprocess.PIPE,
          stderr: int | None = subprocess.PIPE) -> subprocess.Popen[str]:
    """``lockscope ARGS`` as a child the test will signal: started with default SIGINT and SIGQUIT dispositions
    (:func:`default_signals`), whatever the test run itself was started with; text pipes unless given."""
    return subprocess.Popen([*LOCKSCOPE, *args], stdout=stdout, stderr=stderr, text=True,
                            env=env if env is not None else clean_env(), preexec_fn=default_signals)


def one_line_error(proc: subprocess.CompletedProcess[str], *, progress: str | None = None) -> str:
    """The error line of a refused run: no traceback, and stderr is that one line, or (``progress`` given) that
    line last after progress lines that each start with ``progress``."""
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert lines and lines[-1].startswith(ERROR_PREFIX), proc.stderr
    before = lines[:-1]
    if progress is None:
        assert before == [], proc.stderr
    else:
        assert all(line.startswith(progress) and not line.startswith(ERROR_PREFIX) for line in before), proc.stderr
    return lines[-1]


#: ``user_properties`` key of a line a test adds to the run's closing summary (:func:`summary_line`).
SUMMARY_PROPERTY = "lockscope-summary"


def summary_line(request: pytest.FixtureRequest, section: str, line: str) -> None:
    """Add ``line`` to section ``section`` of the terminal summary at the end of the run (``tests/conftest.py``
    prints it). It travels with the test's report (``user_properties``), so it reaches the summary from a pytest-xdist
    worker too."""
    request.node.user_properties.append((SUMMARY_PROPERTY, (section, line)))


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now (for a server a test starts)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_until(condition: Callable[[], bool], timeout_s: float = 30.0, *, what: str = "the condition",
               every_s: float = 0.05) -> None:
    """Poll ``condition`` every ``every_s`` seconds until it holds; fail the test (naming ``what``) after
    ``timeout_s`` seconds."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"{what}: not reached in {timeout_s:g} s")
        time.sleep(every_s)


def pids_under(path: Path, *, by_cwd: bool = False, program: str | None = None) -> list[int]:
    """Live (not zombie) processes whose command line names ``path`` (a postmaster's ``-D``, initdb, pg_ctl,
    pgbench, the watchdog) or, with ``by_cwd``, whose working directory is in it (backends, auxiliary
    processes); with ``program``, only those whose argv[0] contains it (a process that exits between two reads
    is left out)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
            cwd = os.readlink(proc / "cwd") if by_cwd else ""
            status = (proc / "status").read_text()
        except OSError:
            continue
        cmdline = b" ".join(argv).decode(errors="replace")
        if "State:\tZ" in status or (program is not None and program not in argv[0].decode(errors="replace")):
            continue
        if str(path) in cmdline or (by_cwd and (cwd == str(path) or cwd.startswith(f"{path}/"))):
            found.append(int(proc.name))
    return found


# -- HTML reports in a real headless browser (tests/test_html_reports.py says what is checked) ------------------------
WINDOW_WIDTH = 1300
_PROBE = """<script>
(function () {
  var root = document.documentElement;
  var svgs = Array.prototype.slice.call(document.querySelectorAll("svg"));
  var sizes = svgs.map(function (s) { var r = s.getBoundingClientRect(); return [r.width, r.height]; });
  var out = document.createElement("pre");
  out.id = "lockscope-layout";
  out.textContent = JSON.stringify({scrollWidth: root.scrollWidth, clientWidth: root.clientWidth,
                                    svgSizes: sizes, tables: document.querySelectorAll("table").length});
  document.body.appendChild(out);
})();
</script>"""
_LAYOUT = re.compile(r'<pre id="lockscope-layout">(.*?)</pre>', re.S)


def chromium() -> str:
    """Debian's chromium (scripts/test.sh installs it); missing -> the test fails, it does not skip."""
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        pytest.fail("chromium is not installed: run scripts/test.sh (it installs Debian's chromium)", pytrace=False)
    return path


def run_chromium(args: list[str], profile: Path) -> subprocess.CompletedProcess[str]:
    """Headless chromium with ``args`` and its own profile directory."""
    return subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                           "--no-first-run", f"--user-data-dir={profile}", *args],
                          capture_output=True, text=True, timeout=120)


def browser_layout(html_path: Path, tmp_path: Path, *, offline: bool = False) -> dict[str, Any]:
    """Load a copy of the report with the layout probe appended; return the probe's figures."""
    probe = tmp_path / f"{html_path.stem}.probe{'-offline' if offline else ''}.html"
    text = html_path.read_text(encoding="utf-8")
    probe.write_text(text.replace("</body>", _PROBE + "</body>"), encoding="utf-8")
    args = [f"--window-size={WINDOW_WIDTH},900", "--virtual-time-budget=3000", "--dump-dom", probe.as_uri()]
    if offline:
        args.insert(0, "--host-resolver-rules=MAP * ~NOTFOUND")
    proc = run_chromium(args, tmp_path / "chromium-profile")
    match = _LAYOUT.search(proc.stdout)
    assert proc.returncode == 0 and match, proc.stderr[-2000:]
    figures: dict[str, Any] = json.loads(match.group(1).replace("&quot;", '"'))
    return figures


def assert_static_self_contained(html: str) -> None:
    """One file: no script, no external stylesheet, image, font or frame, print rules present."""
    assert html.startswith("<!DOCTYPE html>")
    low = html.lower()
    assert "<script" not in low and "<link" not in low and "@import" not in low and "<iframe" not in low
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", html, re.I)
    assert not re.search(r"url\(\s*['\"]?\s*(https?:)?//", html, re.I)
    assert "@media print" in html


def check_report(html_path: Path, tmp_path: Path, *, min_svgs: int) -> dict[str, Any]:
    """The report is self-contained and printable; in a 1300-pixel window nothing is wider than the window and at
    least ``min_svgs`` charts have a size, the same with every host name unresolvable. Returns the layout figures
    of the online load."""
    assert_static_self_contained(html_path.read_text(encoding="utf-8"))
    online = browser_layout(html_path, tmp_path)
    assert online["clientWidth"] == WINDOW_WIDTH, online
    assert online["scrollWidth"] <= WINDOW_WIDTH, f"{html_path.name} is wider than the window: {online}"
    assert len(online["svgSizes"]) >= min_svgs, online
    assert all(w > 0 and h > 0 for w, h in online["svgSizes"]), online
    offline = browser_layout(html_path, tmp_path, offline=True)
    assert offline["svgSizes"] == online["svgSizes"] and offline["scrollWidth"] == online["scrollWidth"]
    return online


def runs_in_one_transaction(conninfo: str, statements: list[str]) -> bool:
    """True when the statements run in one transaction (rolled back), False on 53200 out of shared memory (any other
    error fails the test)."""
    import psycopg

    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute("BEGIN")
        try:
            for stmt in statements:
                conn.execute(stmt)  # type: ignore[arg-type]
        except psycopg.Error as exc:
            assert exc.sqlstate == "53200", exc
            return False
        finally:
            conn.execute("ROLLBACK")
    return True
