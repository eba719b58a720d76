"""How often the sampled LockManager share's 95 % interval (:func:`lockscope.watch.aas.share_interval`) covers the
share a 10x finer sampler saw (issue 27).

From ``ticks.json`` of ``benchmarks/lockmanager_regimes.py`` (every 100 Hz tick of each load): each window of 2, 6
or 20 s, and each of the 10 phases of every 10th tick in it (what a 10 Hz sampler would have seen), the interval
from those ticks in the batches lockscope uses (one second; half a second under 4 s), against the 100 Hz share of
the same seconds and of the load's whole 20 s. Prints a markdown table::

    .venv/bin/python benchmarks/share_interval_coverage.py benchmarks/results/lockmanager-regimes-2026-11-27/ticks.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from lockscope.watch.aas import share_interval

WINDOWS_S = (2.0, 6.0, 20.0)
PHASES = 10


def _interval_rows(ticks: list[tuple[float, int, int]], window_s: float) -> list[tuple[float, float, float]]:
    """Per window and phase: (half width, covers the same seconds' 100 Hz share, covers the run's) as floats."""
    run_share = sum(lm for _, _, lm in ticks) / max(1, sum(a for _, a, _ in ticks))
    batch_s = 1.0 if window_s >= 4.0 else 0.5
    rows = []
    for k in range(int(20.0 // window_s)):
        window = [t for t in ticks if k * window_s <= t[0] < (k + 1) * window_s]
        active = sum(a for _, a, _ in window)
        if not active:
            continue
        same = sum(lm for _, _, lm in window) / active
        for phase in range(PHASES):
            batches: dict[int, list[int]] = {}
            for i, (t, a, lm) in enumerate(window):
                if i % PHASES == phase:
                    b = batches.setdefault(int(t / batch_s), [0, 0])
                    b[0] += a
                    b[1] += lm
            interval = share_interval([(a, lm) for a, lm in batches.values()])
            if interval is not None:
                rows.append((interval.half_width, float(interval.low <= same <= interval.high),
                             float(interval.low <= run_share <= interval.high)))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("ticks", type=Path, help="ticks.json of benchmarks/lockmanager_regimes.py")
    args = ap.parse_args()
    loads = json.loads(args.ticks.read_text())
    print("| window | intervals | covers the same seconds' 100 Hz share | covers the whole run's | half width: median, "
          "90th percentile (pp) |")
    print("|---:|---:|---:|---:|---|")
    for window_s in WINDOWS_S:
        rows = [r for ticks in loads.values()
                for r in _interval_rows([(t / 1000.0, a, lm) for t, a, lm, _ in ticks], window_s)]
        widths = sorted(r[0] for r in rows)
        print(f"| {window_s:g} s | {len(rows)} | {100 * sum(r[1] for r in rows) / len(rows):.0f} % | "
              f"{100 * sum(r[2] for r in rows) / len(rows):.0f} % | {100 * widths[len(widths) // 2]:.0f}, "
              f"{100 * widths[int(len(widths) * 0.9)]:.0f} |")


if __name__ == "__main__":
    main()
