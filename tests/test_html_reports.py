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

import time
from pathlib import Path

from lockscope.audit import AuditOptions, run_audit
from lockscope.db import Session, connect
from lockscope.diagnose import DiagnoseOptions, run_diagnose
from lockscope.report.audit_html import audit_html
from lockscope.report.diagnose_html import diagnose_html
from lockscope.report.watch_html import recording_html
from lockscope.server import ScratchServer
from lockscope.watch.engine import WatchConfig, Watcher
from lockscope.watch.recorded import load_summary

from .helpers import check_report, run, run_chromium


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
    proc = run_chromium(["--print-to-pdf=" + str(tmp_path / "audit.pdf"), "--no-pdf-header-footer", page.as_uri()],
                         tmp_path / "chromium-profile")
    assert proc.returncode == 0 and (tmp_path / "audit.pdf").read_bytes()[:5] == b"%PDF-", proc.stderr[-2000:]


def test_diagnose_report_in_browser(pg18: ScratchServer, tmp_path: Path) -> None:
    """A short diagnose of the idle test server (no pg_stat_statements in its database): the verdict box first,
    the audit's charts and findings."""
    with connect(pg18.conninfo()) as session:
        for _ in range(3):  # the shared server is idle unless another worker's test uses it in these seconds
            d = run_diagnose(session, pg18.conninfo(), DiagnoseOptions(duration_s=1.5, hz=20, top_n=20,
                                                                       unused_min_age_s=0))
            if not d.aas_by_wait:
                break
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
    proc = run("lab", "prepared", "--quick", "--out", str(tmp_path / "lab"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    check_report(tmp_path / "lab" / "report.html", tmp_path, min_svgs=1)
    assert time.monotonic() - t0 < 120


def test_demo_report_in_browser(tmp_path: Path) -> None:
    """`lockscope demo` with 100 rows per partition and 3 extra indexes (~5 s): its HTML."""
    page = tmp_path / "demo.html"
    proc = run("demo", "--html", str(page), "--rows-per-partition", "100", "--max-extra-indexes", "3", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    check_report(page, tmp_path, min_svgs=3)
