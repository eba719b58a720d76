"""Extract Tomas Vondra's published 'join' curves (master build, glibc) into
``benchmarks/results/published/vondra-join-master.csv``.

Reads ``csv/join.csv`` of a local git mirror of github.com/tvondra/scalability-patches (no work tree needed:
``git show COMMIT:csv/join.csv``) and writes only the small extract, with a header naming the source and the
meaning of each column; nothing else of that repository is copied.

    python benchmarks/published_vondra.py [--repo /work/.mirror/tvondra+scalability-patches/repo] [--out FILE]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
from collections import defaultdict
from pathlib import Path

REPO = Path("/work/.mirror/tvondra+scalability-patches/repo")
OUT = Path(__file__).resolve().parent / "results" / "published" / "vondra-join-master.csv"
#: (machine, run directory) of the glibc runs (the jemalloc runs are later directories of the same machines).
RUNS = {"epyc": "20240119-1800-glibc", "xeon": "20240119-1801-glibc"}
PARTITIONS = (0, 10, 100, 1000)
FILES, TEST, BUILD, SCALE, PROTOCOL = "1000", "join", "0-master", "100", "prepared"

HEADER = """\
# Tomas Vondra's published pgbench 'join' curves, master build (PostgreSQL 17devel), glibc allocator.
# Source: https://github.com/tvondra/scalability-patches, commit {commit} ({date}), file csv/join.csv
#   (space-separated, no header; written by the repository's results.sh, which prefixes each line of
#   <machine>/<run>/<build>/<files>/join.csv with "<run> <files>"; those lines are printed by <machine>/run-join.sh
#   as "join MACHINE BUILD s p m c r tps lat_avg").
# The repository states no licence (no LICENSE, COPYING or README file at that commit): this is a small
#   extract of its measured figures for comparison, with attribution; no code of it is used.
# Columns of csv/join.csv: 1 run directory (date-time-allocator), 2 max_files_per_process (run.sh: 1000 or
#   32768), 3 test (join), 4 machine, 5 build (0-master = unpatched master), 6 pgbench scale (run-join.sh: 10,
#   100, 1000), 7 partitions of pgbench_accounts (pgbench -i --partitions, range on aid; 0 = not partitioned),
#   8 protocol (pgbench -M simple/prepared), 9 clients (-c, with -j = clients), 10 run number, 11 TPS (pgbench
#   'tps = ... (without initial connection time)'), 12 latency average (ms); run-join.sh also prints
#   $lag_stddev, an unset variable (a typo for lat_stddev), so there is no 13th column.
# Selected: column 2 = {files}, build {build}, test {test}, scale {scale}, protocol {protocol}, machines epyc (run
#   {epyc_run}) and xeon (run {xeon_run}), partitions {partitions}, every client count present (epyc: 1, 8, 16,
#   32, 64, 96, 160, 224; xeon: 1, 2, 4, 8, 16, 32, 64, 96).
# The workload (epyc/run-join.sh, epyc/join.sql; xeon's are identical): pgbench -i -s 100 [--partitions P];
#   ALTER TABLE pgbench_accounts ADD COLUMN aid_parent INT; UPDATE ... SET aid_parent = aid; CREATE INDEX ON
#   pgbench_accounts (aid_parent); VACUUM FULL; VACUUM ANALYZE; a 4 x 15 s warm-up at 32 clients (-M prepared);
#   then pgbench -n -M prepared -T 15 -c C -j C -f join.sql with
#     \\set aid random(1, 100000 * :scale)
#     select * from pgbench_accounts pa join pgbench_branches pb on pa.bid = pb.bid where pa.aid_parent = :aid;
#   The join is not on the partition key (aid): every partition of pgbench_accounts is in the plan (its
#   aid_parent index probed). pgbench was not given -s, so :scale was 1 in the script (the warm-up logs print
#   'scaling factor: 1'): aid_parent values 1..100000 only, whatever the table's scale.
# Server (the run's settings.log): server_version 17devel, max_locks_per_transaction 256, shared_buffers 8GB,
#   max_connections 1000, max_parallel_workers_per_gather 0, random_page_cost 1.5, plan_cache_mode auto, jit on,
#   huge_pages try, max_files_per_process 1000.
# Columns below: machine, partitions, clients, runs (count of runs averaged: 1 each in this file),
#   tps_mean (transactions/s, mean over runs), latency_ms_mean (ms, mean over runs).
"""


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


def extract(repo: Path) -> str:
    commit = _git(repo, "rev-parse", "HEAD").strip()
    date = _git(repo, "log", "-1", "--format=%cd", "--date=iso", commit, "--", "csv/join.csv").strip()
    rows: dict[tuple[str, int, int], list[tuple[float, float]]] = defaultdict(list)
    for line in _git(repo, "show", f"{commit}:csv/join.csv").splitlines():
        f = line.split()
        if len(f) < 12:
            continue
        run, files, test, machine, build, scale, parts, protocol, clients = f[:9]
        if (machine in RUNS and run == RUNS[machine] and files == FILES and test == TEST and build == BUILD
                and scale == SCALE and protocol == PROTOCOL and int(parts) in PARTITIONS):
            rows[(machine, int(parts), int(clients))].append((float(f[10]), float(f[11])))
    out = [HEADER.format(commit=commit, date=date, files=FILES, build=BUILD, test=TEST, scale=SCALE,
                         protocol=PROTOCOL, epyc_run=RUNS["epyc"], xeon_run=RUNS["xeon"],
                         partitions=", ".join(map(str, PARTITIONS))),
           "machine,partitions,clients,runs,tps_mean,latency_ms_mean\n"]
    for (machine, parts, clients), values in sorted(rows.items()):
        out.append(f"{machine},{parts},{clients},{len(values)},{statistics.mean(v[0] for v in values):.1f},"
                   f"{statistics.mean(v[1] for v in values):.3f}\n")
    return "".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repo", type=Path, default=REPO, help="git directory of the mirror")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(extract(args.repo))
    print(args.out)


if __name__ == "__main__":
    main()
