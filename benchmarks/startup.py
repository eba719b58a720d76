"""Start-up time of the ``lockscope`` command: ``--version``, ``--help`` and ``completion bash`` (issue 24; goal:
under 0.2 s each), next to the interpreter's own start and ``import lockscope``.

Each case runs as a new process (the console script, as a shell runs it), ``--runs`` times, interleaved round by
round so that slow drift of a shared machine hits every case alike; the figure is the median wall time (and the
minimum, the least the machine allowed). Output to /dev/null. The children may write and use bytecode caches
(``PYTHONDONTWRITEBYTECODE`` removed from their environment, as for an installed package, whose ``.pyc`` files pip
writes at install time); ``--no-pyc`` first deletes the ``__pycache__`` directories of that installation's
lockscope package and sets the variable, so that every start compiles lockscope's own modules again (an editable
install on a machine that sets it, as the CI machine does; the dependencies keep the caches pip wrote).

Usage::

    .venv/bin/python benchmarks/startup.py [--runs 15] [--no-pyc] [--lockscope .venv/bin/lockscope] [--json FILE]

``--lockscope`` times another installation's script (e.g. a checkout of an older commit, for before/after).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path


def cases(script: Path) -> dict[str, list[str]]:
    """Case name -> argv. The interpreter is the one next to ``script`` (its virtualenv's)."""
    python = str(script.with_name("python"))
    return {
        "python -c pass": [python, "-c", "pass"],
        "python -c 'import lockscope'": [python, "-c", "import lockscope"],
        "lockscope --version": [str(script), "--version"],
        "lockscope --help": [str(script), "--help"],
        "lockscope completion bash": [str(script), "completion", "bash"],
    }


def time_once(argv: list[str], env: dict[str, str]) -> float:
    """Wall time of one run (s); fails when the command fails."""
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, env=env)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15, help="runs of each case (default 15)")
    parser.add_argument("--lockscope", type=Path, default=Path(sys.executable).with_name("lockscope"),
                        help="the console script to time (default: this virtualenv's)")
    parser.add_argument("--no-pyc", action="store_true",
                        help="children neither write nor use new bytecode caches (PYTHONDONTWRITEBYTECODE=1)")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON")
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    todo = cases(args.lockscope.absolute())
    if args.no_pyc:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        package = Path(subprocess.run([todo["python -c pass"][0], "-c", "import lockscope; print(lockscope.__file__)"],
                                      capture_output=True, text=True, check=True, env=env).stdout.strip()).parent
        for cache in package.rglob("__pycache__"):
            shutil.rmtree(cache)
    for argv in todo.values():  # warm the page cache and the .pyc files; not counted
        time_once(argv, env)
    times: dict[str, list[float]] = {name: [] for name in todo}
    for _ in range(args.runs):
        for name, argv in todo.items():
            times[name].append(time_once(argv, env))
    version = subprocess.run([str(args.lockscope), "--version"], capture_output=True, text=True).stdout.strip()
    print(f"{version} ({args.lockscope}), {platform.python_implementation()} {platform.python_version()}, "
          f"{'no .pyc writes' if args.no_pyc else '.pyc caches'}, {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.2f}, {args.runs} runs each")
    print(f"{'case':32} {'median s':>9} {'min s':>7}")
    for name, values in times.items():
        print(f"{name:32} {statistics.median(values):9.3f} {min(values):7.3f}")
    if args.json:
        args.json.write_text(json.dumps({"version": version, "runs": args.runs, "median_s": {
            k: statistics.median(v) for k, v in times.items()}, "min_s": {k: min(v) for k, v in times.items()}},
            indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
