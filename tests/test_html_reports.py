"""Every HTML report checked in a real headless browser (Debian's chromium, installed by scripts/test.sh).

For each report (audit, diagnose, watch, lab, demo, generated small here): the file is self-contained (no script,
no stylesheet link, no http(s) URL in src/href/url(), no @import) and has print rules; a copy with a test-only
script appended is loaded by ``chromium --headless --dump-dom`` in a 1300-pixel-wide window, the script writes the
page's layout figures into the DOM, and the test asserts that nothing is wider than the window
(``document.documentElement.scrollWidth <= 1300``: wide tables scroll inside themselves) and that every ``<svg>``
chart has a non-zero size. The same copy is loaded again with every host name unresolvable
(``--host-resolver-rules="MAP * ~NOTFOUND"``) and must render the same.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from lockscope.audit import AuditOptions, run_audit
from lockscope.db import Session, connect
from lockscope.diagnose import DiagnoseOptions, run_diagnose
from lockscope.report.audit_html import audit_html
from lockscope.report.diagnose_html import diagnose_html
from lockscope.report.watch_html import recording_html
from lockscope.server import ScratchServer
from lockscope.watch.engine import WatchConfig, Watcher
from lockscope.watch.recorded import load_summary

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


def _run_chromium(args: list[str], profile: Path) -> subprocess.CompletedProcess[str]:
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
    proc = _run_chromium(args, tmp_path / "chromium-profile")
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
    """The whole check (module docstring); returns the layout figures of the online load."""
    assert_static_self_contained(html_path.read_text(encoding="utf-8"))
    online = browser_layout(html_path, tmp_path)
    assert online["clientWidth"] == WINDOW_WIDTH, online
    assert online["scrollWidth"] <= WINDOW_WIDTH, f"{html_path.name} is wider than the window: {online}"
    assert len(online["svgSizes"]) >= min_svgs, online
    assert all(w > 0 and h > 0 for w, h in online["svgSizes"]), online
    offline = browser_layout(html_path, tmp_path, offline=True)
    assert offline["svgSizes"] == online["svgSizes"] and offline["scrollWidth"] == online["scrollWidth"]
    return online


def screenshot(html_path: Path, png: Path, tmp_path: Path, height: int = 2000) -> None:
    """A PNG of the report in a 1300-pixel-wide window."""
    proc = _run_chromium([f"--window-size={WINDOW_WIDTH},{height}", f"--screenshot={png}", html_path.as_uri()],
                         tmp_path / "chromium-profile")
    assert proc.returncode == 0 and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", proc.stderr[-2000:]


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lockscope", *args], capture_output=True, text=True, timeout=300,
                          cwd=cwd)


# -- the reports ----------------------------------------------------------------------------------------------------
def test_audit_report_in_browser(session18: Session, tmp_path: Path) -> None:
    """The audit of the test server's demo schemas: summary cards and 2 charts first, findings as wrapped cards
    by severity (the old one-table layout overflowed 1300 px), printable."""
    report = run_audit(session18, AuditOptions(interval_s=0, top_n=30, unused_min_age_s=0))
    page = tmp_path / "audit.html"
    page.write_text(audit_html(report), encoding="utf-8")
    html = page.read_text()
    assert html.index("Do first") < html.index("<h2>Summary</h2>") < html.index("<h2>Findings</h2>")
    assert "fast-path slots" in html and "Planner locks of a one-table statement per table" in html
    check_report(page, tmp_path, min_svgs=1)
    proc = _run_chromium(["--print-to-pdf=" + str(tmp_path / "audit.pdf"), "--no-pdf-header-footer", page.as_uri()],
                         tmp_path / "chromium-profile")
    assert proc.returncode == 0 and (tmp_path / "audit.pdf").read_bytes()[:5] == b"%PDF-", proc.stderr[-2000:]


def test_diagnose_report_in_browser(pg18: ScratchServer, tmp_path: Path) -> None:
    """A short diagnose of the idle test server (no pg_stat_statements in its database): the verdict box first,
    the audit's charts and findings."""
    with connect(pg18.conninfo()) as session:
        d = run_diagnose(session, pg18.conninfo(), DiagnoseOptions(duration_s=1.5, hz=20, top_n=20,
                                                                   unused_min_age_s=0))
    page = tmp_path / "diagnose.html"
    page.write_text(diagnose_html(d), encoding="utf-8")
    html = page.read_text()
    assert d.status == "healthy" and html.index('<div class="verdict healthy">') < html.index("<h2>Summary</h2>")
    assert "No active session was sampled" in html and "the 16 lock partitions are idle" in html
    check_report(page, tmp_path, min_svgs=1)


def test_watch_report_in_browser(pg18: ScratchServer, tmp_path: Path) -> None:
    """A 2-second recording rendered by `lockscope report`: 2 matplotlib charts that scale to the window; without
    --locks-every the facts say so in words (not "pg_locks every never s")."""
    record = tmp_path / "w.db"
    watcher = Watcher(WatchConfig(pg18.conninfo(), hz=20, duration_s=2.0, record_path=record)).start()
    assert watcher.wait(20)
    watcher.stop()
    page = tmp_path / "watch.html"
    page.write_text(recording_html(load_summary(record)), encoding="utf-8")
    html = page.read_text()
    assert "no pg_locks snapshots (--locks-every off)" in html and "every never" not in html
    check_report(page, tmp_path, min_svgs=2)
    with_locks = tmp_path / "wl.db"
    watcher = Watcher(WatchConfig(pg18.conninfo(), hz=20, duration_s=1.5, record_path=with_locks,
                                  locks_every_s=1.0)).start()
    assert watcher.wait(20)
    watcher.stop()
    assert "pg_locks snapshots every 1 s" in recording_html(load_summary(with_locks))


def test_lab_report_in_browser(tmp_path: Path) -> None:
    """`lab prepared --quick` (PG 18, ~5 s): its report.html."""
    t0 = time.monotonic()
    proc = _cli("lab", "prepared", "--quick", "--out", str(tmp_path / "lab"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    check_report(tmp_path / "lab" / "report.html", tmp_path, min_svgs=1)
    assert time.monotonic() - t0 < 120


def test_demo_report_in_browser(tmp_path: Path) -> None:
    """`lockscope demo` with 100 rows per partition and 3 extra indexes (~5 s): its HTML."""
    page = tmp_path / "demo.html"
    proc = _cli("demo", "--html", str(page), "--rows-per-partition", "100", "--max-extra-indexes", "3", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    check_report(page, tmp_path, min_svgs=3)
