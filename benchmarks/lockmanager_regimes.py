"""What the sampled LockManager share is worth as a judge (issue 27): a 100 Hz sampler beside ``diagnose``.

For each demo condition (pgbench -S, ``max_locks_per_transaction`` 16, N extra indexes on pgbench_accounts, C
clients; each ``--runs`` times) this script starts the demo load (:func:`lockscope.demo_load.demo_load`), runs
``lockscope diagnose --demo`` in-process (:func:`run_diagnose`, ``--seconds`` s of wait-event samples at 10 Hz, the
machine's cores: what a user gets) and, in a thread over the same seconds (from diagnose's "sampling wait events"
step on), its own sampler at ``--hz`` (100 Hz: lockscope's tick query, ``sql/activity_sample``, on one extra
connection) that counts the active client backends of the load (lockscope's own sessions left out) and those
waiting on ``LWLock:LockManager``, and every 2 s reads each pgbench backend's ``/proc/PID/status``
(``nonvoluntary_ctxt_switches``: preemptions) and ``/proc/PID/schedstat`` (CPU ns, run-queue delay ns). Each load
runs under the machine's load lock (``/tmp/lockscope-load.lock``, one lock per load). Recorded per load: the
100 Hz share over the whole window and per 2 s, the share a 10 Hz sampler would have seen over the first 2, 6 and
20 s (every 10th tick, and the range over the 10 phases), diagnose's sampled share and the model's share at the
operating point diagnose reproduces, TPS, AAS, preemptions/s per 2 s; ``uptime`` before and after. Never run under
``flock`` itself::

    .venv/bin/python benchmarks/lockmanager_regimes.py --out DIR [--conditions 100x16,50x16,100x32] [--runs 3]
        [--seconds 20] [--hz 100]

Writes ``DIR/regimes.json`` (one row per load), ``DIR/ticks.json`` (per load, every tick: ms since the window's
start, active load sessions, of which on LockManager, active lockscope sessions) and prints markdown tables: per
load; the 10 Hz sampling error by window length; correlations. ``--report`` prints them again from DIR's files.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

from lockscope.db import APPLICATION_NAME, connect
from lockscope.demo_load import demo_load
from lockscope.diagnose import run_diagnose
from lockscope.diagnose.engine import DiagnoseOptions
from lockscope.forecast.engine import default_cores
from lockscope.watch.aas import LOCK_MANAGER
from lockscope.watch.sampler import sample_stream

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # benchmarks.forecast_real, run as a script
from benchmarks.forecast_real import load_lock

DEFAULT_CONDITIONS = "100x16,50x16,100x32"
WINDOW_S = 2.0
SUBSAMPLE_SPANS_S = (2.0, 6.0, 20.0)
PGBENCH_PIDS_SQL = ("SELECT s.pid FROM pg_catalog.pg_stat_get_activity(NULL) AS s "
                    "WHERE s.backend_type = 'client backend' AND s.application_name = 'pgbench'")


def proc_sched(pid: int) -> tuple[int, int, int] | None:
    """(preemptions, CPU ns, run-queue delay ns) of a live process so far: ``nonvoluntary_ctxt_switches`` of
    ``/proc/PID/status`` and the first two fields of ``/proc/PID/schedstat``; None once it is gone."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        cpu_ns, delay_ns = (int(v) for v in Path(f"/proc/{pid}/schedstat").read_text().split()[:2])
    except (OSError, ValueError):
        return None
    for line in status.splitlines():
        if line.startswith("nonvoluntary_ctxt_switches:"):
            return int(line.split()[1]), cpu_ns, delay_ns
    return None


class FineSampler(threading.Thread):
    """The 100 Hz sampler: connects at once, waits for ``go``, then samples ``seconds`` s at ``hz``.

    ``ticks``: (s since the first tick, active load sessions, of which on LockManager, active lockscope sessions);
    ``sched``: (s since the first tick, pgbench backend pid -> (preemptions, CPU ns, run-queue delay ns)) at the
    first tick, every ``WINDOW_S`` s after and at the end; ``lag_s``: from ``go`` to the first tick (s).
    """

    def __init__(self, conninfo: str, hz: float, seconds: float) -> None:
        super().__init__(daemon=True)
        self.conninfo, self.hz, self.seconds = conninfo, hz, seconds
        self.go = threading.Event()
        self.go_at = 0.0
        self.lag_s: float | None = None
        self.ticks: list[tuple[float, int, int, int]] = []
        self.sched: list[tuple[float, dict[int, tuple[int, int, int]]]] = []
        self.late_ticks = 0
        self.error: BaseException | None = None

    def start_sampling(self) -> None:
        """Let the sampling begin now."""
        if not self.go.is_set():
            self.go_at = time.monotonic()
            self.go.set()

    def run(self) -> None:
        try:
            with connect(self.conninfo, sampler=True, statement_timeout_ms=1000) as session:
                if not self.go.wait(600):
                    return
                pids = [int(r[0]) for r in session.oracle_rows(PGBENCH_PIDS_SQL)]
                t0 = time.monotonic()
                self.lag_s = t0 - self.go_at
                self._read_sched(pids, 0.0)
                for sample in sample_stream(session, self.hz, duration_s=self.seconds):
                    t = sample.monotonic_s - t0
                    load = [s for s in sample.sessions
                            if s.backend_type in (None, "client backend") and s.application_name != APPLICATION_NAME]
                    self.ticks.append((t, len(load), sum(s.wait == LOCK_MANAGER for s in load),
                                       len(sample.sessions) - len(load)))
                    self.late_ticks += sample.late_ticks
                    if t - self.sched[-1][0] >= WINDOW_S:
                        self._read_sched(pids, t)
                self._read_sched(pids, time.monotonic() - t0)
        except BaseException as exc:  # reported by the caller
            self.error = exc

    def _read_sched(self, pids: list[int], t: float) -> None:
        self.sched.append((t, {p: v for p in pids if (v := proc_sched(p)) is not None}))


def share(ticks: list[tuple[float, int, int, int]]) -> float | None:
    """LockManager samples / active-session samples of the load (fraction), None without an active sample."""
    active = sum(t[1] for t in ticks)
    return sum(t[2] for t in ticks) / active if active else None


def subsampled(ticks: list[tuple[float, int, int, int]], span_s: float, step: int) -> dict[str, float | None]:
    """The share a sampler at 1/``step`` of the rate would have seen over the first ``span_s`` s: every
    ``step``-th tick from tick 0, and the lowest and highest over the ``step`` phases."""
    first = [t for t in ticks if t[0] < span_s]
    phases = [s for s in (share(first[k::step]) for k in range(step)) if s is not None]
    return {"phase0": share(first[::step]), "min": min(phases, default=None), "max": max(phases, default=None)}


def windows(fine: FineSampler) -> list[dict[str, float | None]]:
    """Per ``WINDOW_S`` s: the 100 Hz share and AAS of the ticks inside it, and the pgbench backends' preemptions/s,
    CPU (s/s) and run-queue delay (s/s, backends runnable but waiting for a core) between the two reads around it."""
    out = []
    for (ta, a), (tb, b) in zip(fine.sched, fine.sched[1:], strict=False):
        if tb - ta < WINDOW_S / 2:
            continue
        inside = [t for t in fine.ticks if ta <= t[0] < tb]
        both = [p for p in a if p in b]
        dt = tb - ta
        out.append({"from_s": round(ta, 2), "to_s": round(tb, 2), "share": share(inside),
                    "aas": sum(t[1] for t in inside) / len(inside) if inside else None,
                    "preempt_per_s": sum(b[p][0] - a[p][0] for p in both) / dt,
                    "cpu_s_per_s": sum(b[p][1] - a[p][1] for p in both) / dt / 1e9,
                    "runqueue_s_per_s": sum(b[p][2] - a[p][2] for p in both) / dt / 1e9, "backends": len(both)})
    return out


def _fine_figures(fine: FineSampler, hz: float) -> dict[str, object]:
    step = max(1, round(hz / 10))
    ticks = fine.ticks
    span = ticks[-1][0] - ticks[0][0] if len(ticks) > 1 else 0.0
    return {"fine_ticks": len(ticks), "fine_late_ticks": fine.late_ticks, "fine_lag_s": fine.lag_s,
            "fine_achieved_hz": (len(ticks) - 1) / span if span > 0 else 0.0,
            "fine_share": share(ticks), "fine_aas": sum(t[1] for t in ticks) / len(ticks) if ticks else None,
            "fine_lockscope_aas": sum(t[3] for t in ticks) / len(ticks) if ticks else None,
            "tenhz": {f"{s:g}s": subsampled(ticks, s, step) for s in SUBSAMPLE_SPANS_S},
            "windows": windows(fine)}


def measure(extra: int, clients: int, seconds: float, hz: float, cores: int) -> tuple[dict[str, object], object]:
    """One demo load, diagnosed, with the fine sampler over diagnose's sampled seconds: the row and the ticks."""
    with load_lock():
        load0 = os.getloadavg()
        with demo_load(extra_indexes=extra, clients=clients, duration_s=seconds) as running, \
                connect(running.conninfo) as session:
            body0 = time.monotonic()
            fine = FineSampler(running.conninfo, hz, seconds)
            fine.start()
            started: list[float] = []

            def progress(msg: str) -> None:
                if msg.startswith("sampling wait events") and not fine.go.is_set():
                    started.append(time.monotonic() - body0)
                    fine.start_sampling()

            d = run_diagnose(session, running.conninfo, DiagnoseOptions(duration_s=seconds, cores=cores),
                             progress=progress, demo=True)
            fine.start_sampling()
            fine.join(seconds + 30)
        load1 = os.getloadavg()
    if fine.error is not None:
        raise fine.error
    row: dict[str, object] = {"extra_indexes": extra, "clients": clients, "seconds": seconds, "hz": hz,
                              "at": time.strftime("%H:%M:%S"), "loadavg_before": load0, "loadavg_after": load1,
                              "watch_started_after_s": started[0] if started else None,
                              **_fine_figures(fine, hz)}
    f, live, anchor = d.forecast_before, d.live, d.anchor
    if live is not None:
        row.update(measured_tps=live.rate_tps, population=live.population, aas=live.aas, aas_cpu=live.aas_cpu,
                   diagnose_share=live.lockmanager_share, diagnose_ticks=live.samples,
                   diagnose_late_ticks=d.watch.late_ticks, diagnose_achieved_hz=d.watch.achieved_hz)
    if f is None or anchor is None:
        row["error"] = "no forecast: " + "; ".join(d.notes)
    else:
        row.update(model_share=f.lockmanager_share, anchor_model_share=anchor.model_lockmanager_share,
                   anchor_measured_share=anchor.measured_lockmanager_share, model_tps_first=anchor.model_tps,
                   cost_factor=anchor.factor, model_tps=f.throughput_tps, partition_wait_ms=f.partition_wait_ms,
                   convoy_wait_ms=f.convoy_wait_ms, cpu_us=f.cpu_per_transaction_us)
    return row, [[round(1000 * t), n, lm, ls] for t, n, lm, ls in fine.ticks]


def _pct(v: object) -> str:
    return "-" if v is None else f"{100 * float(v):.0f}"  # type: ignore[arg-type]


def _pp(a: object, b: object) -> str:
    return "-" if a is None or b is None else f"{100 * abs(float(a) - float(b)):.0f}"  # type: ignore[arg-type]


def print_tables(rows: list[dict[str, object]], seconds: float, hz: float) -> None:
    """The markdown tables: shares per load (%; 10 Hz: every 10th tick from tick 0, the 10 phases' range in
    brackets), then the per-2-s shares and preemptions/s with their correlation over the run's windows (r)."""
    print(f"| extra indexes | clients | run | TPS | AAS | {hz:g} Hz {seconds:g} s | 10 Hz 2 s | 10 Hz 6 s | 10 Hz 20 s "
          "| diagnose 10 Hz | model | model vs fine pp | model vs diagnose pp |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        ten: dict[str, dict[str, float | None]] = r["tenhz"]  # type: ignore[assignment]
        cells = [f"{_pct(ten[k]['phase0'])} ({_pct(ten[k]['min'])}-{_pct(ten[k]['max'])})"
                 for k in ("2s", "6s", "20s")]
        print(f"| {r['extra_indexes']} | {r['clients']} | {r['run']} | {float(r.get('measured_tps', 0)):,.0f} | "  # type: ignore[arg-type]
              f"{float(r.get('aas', 0)):.2f} | {_pct(r['fine_share'])} | {' | '.join(cells)} | "  # type: ignore[arg-type]
              f"{_pct(r.get('diagnose_share'))} | {_pct(r.get('model_share'))} | "
              f"{_pp(r.get('model_share'), r['fine_share'])} | {_pp(r.get('model_share'), r.get('diagnose_share'))} |")
    print()
    print("| extra indexes | clients | run | 100 Hz share per 2 s (%) | preemptions/s per 2 s | r |")
    print("|---:|---:|---:|---|---|---:|")
    for r in rows:
        ws: list[dict[str, float | None]] = r["windows"]  # type: ignore[assignment]
        shares = [w["share"] for w in ws]
        pre = [w["preempt_per_s"] for w in ws]
        pairs = [(s, p) for s, p in zip(shares, pre, strict=True) if s is not None and p is not None]
        corr = (f"{statistics.correlation([s for s, _ in pairs], [p for _, p in pairs]):.2f}"
                if len(pairs) > 2 and len({p for _, p in pairs}) > 1 and len({s for s, _ in pairs}) > 1 else "-")
        print(f"| {r['extra_indexes']} | {r['clients']} | {r['run']} | {', '.join(_pct(s) for s in shares)} | "
              f"{', '.join('-' if p is None else f'{p:,.0f}' for p in pre)} | {corr} |")


def _corr(xs: list[float], ys: list[float]) -> str:
    """Pearson's r of two series, "-" when either is constant or shorter than 3."""
    if len(xs) < 3 or len(set(xs)) < 2 or len(set(ys)) < 2:
        return "-"
    return f"{statistics.correlation(xs, ys):.2f}"


def sampling_error(rows: list[dict[str, object]], ticks: dict[str, list[list[int]]], hz: float) -> None:
    """Print, per window length (2, 6, 20 s), how far a 10 Hz sampler's share is from the 100 Hz share of the same
    seconds (every non-overlapping window of each load, each of the 10 phases: |10 Hz - 100 Hz| in pp), and how far
    the first window's phase-0 share is from the load's whole-window 100 Hz share."""
    step = max(1, round(hz / 10))
    print("| window | windows x phases | 10 Hz vs 100 Hz, same seconds: mean pp | 90th pct pp | max pp "
          "| first window vs whole run: mean / max pp |")
    print("|---:|---:|---:|---:|---:|---|")
    for span in SUBSAMPLE_SPANS_S:
        errs: list[float] = []
        firsts: list[float] = []
        for r in rows:
            tk = [(t / 1000, n, lm, ls) for t, n, lm, ls in ticks[f"{r['extra_indexes']}x{r['clients']}/{r['run']}"]]
            for k in range(round(float(r["seconds"]) / span)):  # type: ignore[arg-type]
                inside = [t for t in tk if k * span <= t[0] < (k + 1) * span]
                fine = share(inside)
                for ph in range(step):
                    coarse = share(inside[ph::step])
                    if fine is not None and coarse is not None:
                        errs.append(100 * abs(coarse - fine))
            first = share([t for t in tk if t[0] < span][::step])
            if first is not None and r["fine_share"] is not None:
                firsts.append(100 * abs(first - float(r["fine_share"])))  # type: ignore[arg-type]
        errs.sort()
        p90 = errs[min(len(errs) - 1, int(0.9 * len(errs)))] if errs else 0.0
        print(f"| {span:g} s | {len(errs)} | {statistics.fmean(errs):.1f} | {p90:.0f} | {max(errs):.0f} | "
              f"{statistics.fmean(firsts):.0f} / {max(firsts):.0f} |")


def correlations(rows: list[dict[str, object]]) -> None:
    """Print r(per-2-s share, preemptions/s) and r(per-2-s share, run-queue delay) pooled over each condition's
    windows, and over the loads: r(run share, mean preemptions/s) and r(model share, 100 Hz share)."""
    print("| condition | windows | r(share, preemptions/s) | r(share, run-queue s/s) | r(share, AAS) |")
    print("|---|---:|---:|---:|---:|")
    for cond in dict.fromkeys(f"{r['extra_indexes']}x{r['clients']}" for r in rows):
        ws = [w for r in rows if f"{r['extra_indexes']}x{r['clients']}" == cond
              for w in r["windows"] if w["share"] is not None]  # type: ignore[attr-defined]
        sh = [float(w["share"]) for w in ws]
        print(f"| {cond} | {len(ws)} | {_corr(sh, [float(w['preempt_per_s']) for w in ws])} | "
              f"{_corr(sh, [float(w['runqueue_s_per_s']) for w in ws])} | {_corr(sh, [float(w['aas']) for w in ws])} |")
    ok = [r for r in rows if r.get("model_share") is not None]
    fine = [float(r["fine_share"]) for r in ok]  # type: ignore[arg-type]
    pre = [statistics.fmean(float(w["preempt_per_s"]) for w in r["windows"]) for r in ok]  # type: ignore[attr-defined]
    model = [float(r["model_share"]) for r in ok]  # type: ignore[arg-type]
    diag = [float(r["diagnose_share"]) for r in ok]  # type: ignore[arg-type]
    print(f"\nover the {len(ok)} loads: r(100 Hz share, mean preemptions/s) {_corr(fine, pre)}; "
          f"r(model, 100 Hz share) {_corr(model, fine)}; r(model, diagnose share) {_corr(model, diag)}; "
          f"model within 10 pp of the 100 Hz share {sum(abs(m - f) <= 0.10 for m, f in zip(model, fine, strict=True))}"
          f", of diagnose's {sum(abs(m - d) <= 0.10 for m, d in zip(model, diag, strict=True))} of {len(ok)}")


def record(args: argparse.Namespace) -> tuple[dict[str, object], list[dict[str, object]], dict[str, list[list[int]]]]:
    """Run every load of ``args`` and write ``regimes.json`` and ``ticks.json`` (after each load)."""
    args.out.mkdir(parents=True, exist_ok=True)
    cores = default_cores()
    meta: dict[str, object] = {
        "uptime_before": subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip(),
        "cores": cores, "argv": sys.argv[1:], "started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())}
    rows: list[dict[str, object]] = []
    ticks: dict[str, list[list[int]]] = {}
    for run in range(args.runs):
        for cond in args.conditions.split(","):
            extra, clients = (int(v) for v in cond.split("x"))
            row, row_ticks = measure(extra, clients, args.seconds, args.hz, cores)
            rows.append({"run": run + 1, **row})
            ticks[f"{cond}/{run + 1}"] = row_ticks
            (args.out / "regimes.json").write_text(json.dumps({**meta, "rows": rows}, indent=1))
            (args.out / "ticks.json").write_text(json.dumps(ticks, separators=(",", ":")))
    meta.update(uptime_after=subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip(),
                finished=time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()))
    (args.out / "regimes.json").write_text(json.dumps({**meta, "rows": rows}, indent=1))
    return meta, rows, ticks


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--hz", type=float, default=100.0)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--conditions", default=DEFAULT_CONDITIONS, help="EXTRAxCLIENTS,... (default %(default)s)")
    ap.add_argument("--report", action="store_true", help="print the tables of the files in --out, run nothing")
    args = ap.parse_args()
    if args.report:
        recorded = json.loads((args.out / "regimes.json").read_text())
        meta, rows = recorded, recorded["rows"]
        ticks = json.loads((args.out / "ticks.json").read_text())
    else:
        meta, rows, ticks = record(args)
    print(meta["uptime_before"])
    print(meta.get("uptime_after"))
    print_tables(rows, float(rows[0]["seconds"]), float(rows[0]["hz"]))  # type: ignore[arg-type]
    print()
    sampling_error(rows, ticks, float(rows[0]["hz"]))  # type: ignore[arg-type]
    print()
    correlations(rows)


if __name__ == "__main__":
    main()
