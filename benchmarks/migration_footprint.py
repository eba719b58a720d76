"""Wall time of ``lockscope footprint --scratch`` on a 1,000-partition migration (issue 26; goal: under 1 minute on
2 cores): one transaction creating a partitioned table, 1,000 range partitions and an index on the parent.

Two runs as new processes (the console script, as CI runs it): the gate that passes (the default budget: nothing to
verify) and the gate that fails against a small budget (``--assume-mlpt 10 --assume-max-connections 20``: the two
fixes verified on a second scratch server), and the latter again with ``--no-verify``.

Usage::

    .venv/bin/python benchmarks/migration_footprint.py [--pg-bin 19] [--partitions 1000] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def migration(n: int) -> str:
    """The migration's text: one BEGIN ... COMMIT block."""
    parts = "\n".join(f"CREATE TABLE ev_{i} PARTITION OF ev FOR VALUES FROM ({i * 10}) TO ({i * 10 + 10});"
                      for i in range(n))
    head = "CREATE TABLE ev (id int, at int) PARTITION BY RANGE (at);"
    return f"BEGIN;\n{head}\n{parts}\nCREATE INDEX ON ev (id);\nCOMMIT;\n"


def timed(argv: list[str]) -> tuple[float, int]:
    """(wall seconds, exit code) of one run."""
    start = time.monotonic()
    code = subprocess.run(argv, capture_output=True, text=True, check=False).returncode
    return time.monotonic() - start, code


def main() -> int:
    """Run the cases and print (and optionally write) the figures."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--pg-bin", default=None)
    p.add_argument("--partitions", type=int, default=1000)
    p.add_argument("--json", type=Path)
    args = p.parse_args()
    script = Path(sys.executable).with_name("lockscope")
    with tempfile.TemporaryDirectory() as tmp:
        mig, schema = Path(tmp) / "m.sql", Path(tmp) / "s.sql"
        mig.write_text(migration(args.partitions))
        schema.write_text("CREATE TABLE base (id int);\n")
        base = [str(script), "footprint", "--scratch", "--setup", str(schema), "-f", str(mig),
                *(["--pg-bin", args.pg_bin] if args.pg_bin else []), "--fail-on", "exhaustion"]
        small = ["--assume-mlpt", "10", "--assume-max-connections", "20"]
        cases = {"fits (default budget)": base, "exhausted, fixes verified": [*base, *small],
                 "exhausted, --no-verify": [*base, *small, "--no-verify"]}
        figures = {name: timed(argv) for name, argv in cases.items()}
    for name, (seconds, code) in figures.items():
        print(f"{name:<28} {seconds:6.1f} s  exit {code}")
    if args.json:
        args.json.write_text(json.dumps({"machine": platform.platform(), "cpus": __import__("os").cpu_count(),
                                         "partitions": args.partitions, "pg_bin": args.pg_bin,
                                         "figures": {k: {"seconds": s, "exit": c} for k, (s, c) in figures.items()}},
                                        indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
