"""The long differential run of lockscope's lock model: thousands of drawn cases, PostgreSQL 13-19 as the oracle.

Hypothesis draws cases (``tests/difftest/strategies.py``: a schema of 2-5 tables with data, indexes, foreign keys,
triggers, views, sequences, and 1..``--max-cases-per-schema`` workloads on it: transactions of 1-5 statements,
valid by construction, with a protocol and a plan_cache_mode). Each workload runs on the major's scratch server
(max_locks_per_transaction 16, autovacuum off): lockscope's model first (EXPLAIN only: ``measure_footprint`` or
``measure_transaction``), then the statements for real (``execute_scripts``), 8 executions on one connection,
rolled back (``tests/difftest/harness.py``). Nothing stops at a mismatch: every workload ("case") is recorded, per
execution: exact match (the (relation, mode, fast-path flag) sets equal), lockscope's label (exact, or unknown
with its reasons), the locks only the truth or only the model holds and the flag differences, the pg_locks reads
the model made, the time of each side.

    python -m benchmarks.differential --majors 13-19 --cases 20000 --seed 1 --workers 2 \\
        --out benchmarks/results/differential-$(date +%F).json [--minutes 120] [--max-cases-per-schema 3]
    python -m benchmarks.differential --majors 18 --cases 200 --seed 1          # a quick look (under a minute)

``--cases`` is the number of workloads, spread evenly over the majors; each major's share is drawn in chunks
(``--chunk`` workloads, each chunk a job with its own seed, Hypothesis run and scratch server), the chunks of all
majors interleaved and run by ``--workers`` processes. Bounds: ``statement_timeout`` (``--statement-timeout-ms``)
on the model's session and on the truth's connection; ``--model-timeout-s`` on the model's whole run of one
workload (SIGALRM: its own Python work too); ``--minutes`` of wall time, after which no new case starts (the
running ones finish, every chunk stops drawing). The same seed draws the same cases (Hypothesis's generation is
seeded per chunk), so a run is reproducible on the same Hypothesis version and the same PostgreSQL builds.

At the end it prints and writes (``--out``, JSON) the summary: workloads by status (compared; invalid = the truth
failed; refused = lockscope declined the statement as unsupported; model-error, crash, model-hang = lockscope
failed on a statement the server ran: an error of its own, an exception, or its Python work outliving
``--model-timeout-s``; timeout = statement_timeout; schema-error, harness-error = the drawn schema did not load or
the executed truth failed otherwise than with the server's error: the harness's fault, not the model's),
executions compared, the exact-match share (overall, per execution number, per major), the share labelled
unknown, **wrong-and-labelled-exact** (the number that must reach 0), set vs flag-only differences, the model's
pg_locks reads and time; a census of the mismatch classes (``harness.signature``: the statement and its target's
shape, the side with extra or missing locks and their relation kinds, or the flag-only direction, the
protocol/mode), each with the feature tags of the differing statement (foreign-key checks and actions, cascade
depth, triggers, ON CONFLICT, MERGE, routing, row movement, TOAST, sequences, views, CTEs ...) and its smallest
example (schema + workload + per-lock difference); a census of the feature tags and of the statement shapes
(workloads with it, of which mismatching). The JSON also holds every case: its schema's SQL and each workload's
statements, parameters, protocol, mode, API and per-execution record.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import datetime
import json
import multiprocessing
import os
import re
import resource
import sys
import time
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.difftest.harness import SETTINGS, CaseRunner, WorkloadResult, census, summarize
from tests.difftest.strategies import cases
from tests.fix_versions import bin_dir_of

from lockscope.server import ScratchServer

#: Address space of a job's process (and of its PostgreSQL, which inherits it), GB.
MEMORY_LIMIT_GB = 8


@dataclass(frozen=True)
class Job:
    """A chunk of one major's workloads: drawn with its own seed on its own scratch server."""

    major: int
    index: int
    workloads: int
    seed: int
    deadline: float  # time.time() after which no new case starts
    max_per_schema: int
    max_statements: int
    statement_timeout_ms: int
    model_timeout_s: float


class _Stop(Exception):
    """Raised inside the Hypothesis run when the chunk has its workloads or its time is up (Hypothesis replays the
    example once to report it: the replay raises again and the run ends)."""


def run_job(job: Job) -> tuple[Job, list[WorkloadResult], float, int]:
    """Draw and run the chunk's cases; (job, its workload results, seconds, cases drawn twice and skipped)."""
    from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings

    start = time.monotonic()
    results: list[WorkloadResult] = []
    # a runaway model loop raises MemoryError (a crash, recorded) rather than meeting the OOM killer
    limit = MEMORY_LIMIT_GB << 30
    resource.setrlimit(resource.RLIMIT_AS, (limit, resource.getrlimit(resource.RLIMIT_AS)[1]))
    if time.time() >= job.deadline:
        return job, results, 0.0, 0
    seen: set[str] = set()
    duplicates = [0]
    with ScratchServer(bin_dir_of(job.major), SETTINGS) as server:
        if server.major != job.major:
            raise RuntimeError(f"{server.bin_dir} is PostgreSQL {server.major}, not {job.major}")
        runner = CaseRunner(server, statement_timeout_ms=job.statement_timeout_ms,
                            model_timeout_s=job.model_timeout_s)

        @seed(job.seed)
        @settings(max_examples=4 * job.workloads + 50, deadline=None, database=None, phases=[Phase.generate],
                  suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet, report_multiple_bugs=False)
        @given(cases(job.major, max_workloads=job.max_per_schema, max_statements=job.max_statements))
        def body(case: Any) -> None:
            if len(results) >= job.workloads or time.time() >= job.deadline:
                raise _Stop
            key = repr(case)
            if key in seen:
                duplicates[0] += 1
                return  # drawn before: its result is in
            seen.add(key)
            found = runner.run(case, case_id=f"pg{job.major}-{job.index}-{len(seen)}")
            results.extend(found[: job.workloads - len(results)])
            if any(r.status == "schema-error" and "connect" in r.error for r in found):
                server.restart()  # the server went away (a crash): the next cases get a running one

        with contextlib.suppress(_Stop):
            body()
    return job, results, time.monotonic() - start, duplicates[0]


def _in_process(job: Job) -> tuple[Job, list[WorkloadResult], float, int]:
    """:func:`run_job` in a process of its own (spawned): a job whose process dies costs that job only."""
    ctx = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(max_workers=1, mp_context=ctx) as pool:
        return pool.submit(run_job, job).result()


def _majors(text: str) -> list[int]:
    out: list[int] = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out += list(range(int(lo), int(hi or lo) + 1))
    return out


def _jobs(args: argparse.Namespace, deadline: float) -> list[Job]:
    majors = _majors(args.majors)
    share = -(-args.cases // len(majors))
    per_major: list[list[Job]] = []
    for major in majors:
        jobs = []
        left, index = share, 0
        while left > 0:
            n = min(args.chunk, left)
            jseed = zlib.crc32(f"{args.seed}-{major}-{index}".encode())
            jobs.append(Job(major, index, n, jseed, deadline, args.max_cases_per_schema, args.max_statements,
                            args.statement_timeout_ms, args.model_timeout_s))
            left -= n
            index += 1
        per_major.append(jobs)
    interleaved = []
    for i in range(max(len(j) for j in per_major)):
        interleaved += [jobs[i] for jobs in per_major if i < len(jobs)]
    return interleaved


def _condensed(sql: str) -> str:
    """The schema for reading: each run of ``create table X_pN partition of X ...`` lines as one comment line."""
    out: list[str] = []
    run: list[str] = []

    def flush() -> None:
        if len(run) > 3:
            m = re.match(r"create table (\S+) partition of (\S+)", run[0])
            parent = m.group(2) if m else "?"
            out.append(f"-- ... {len(run)} partitions of {parent}: {run[0].split(' ', 2)[2][:80]} ... "
                       f"{run[-1].split(' ', 2)[2][:80]}")
        else:
            out.extend(run)
        run.clear()

    for line in sql.splitlines():
        if re.match(r"create table \S+ partition of ", line) and (not run or run[0].split()[5] == line.split()[5]):
            run.append(line)
            continue
        flush()
        if re.match(r"create table \S+ partition of ", line):
            run.append(line)
        else:
            out.append(line)
    flush()
    return "\n".join(out)


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def print_summary(summary: dict[str, Any], per_major: dict[int, dict[str, Any]], classes: Sequence[dict[str, Any]],
                  meta: dict[str, Any], examples: int) -> None:
    s = summary
    print(f"\ndifferential: PostgreSQL {meta['majors']}, {s['workloads']} workloads on {meta['schemas']} schemas, "
          f"seed {meta['seed']}, {meta['workers']} workers, {meta['wall_s'] / 60:.1f} min"
          + (" (stopped by --minutes)" if meta["time_bound_hit"] else ""))
    for line in meta["failed_jobs"]:
        print(f"FAILED JOB (its workloads are missing): {line}")
    print(f"status: {', '.join(f'{k} {v}' for k, v in s['by_status'].items())} "
          f"(invalid {_pct(s['invalid_share'])}); cases drawn twice and skipped: {meta['duplicates']}")
    print(f"executions compared: {s['executions_compared']} ({s['workloads_compared']} workloads, "
          f"{s['workloads_exact']} exact in every execution)")
    print(f"locks exact: {s['lock_share'] * 100:.2f} % of the locks either side holds, per execution")
    print(f"executions exact: {_pct(s['exact_share'])}   labelled unknown: {_pct(s['labelled_unknown_share'])}   "
          f"WRONG-AND-LABELLED-EXACT: {s['wrong_and_labelled_exact']}   wrong, labelled unknown: "
          f"{s['wrong_and_labelled_unknown']}   right, labelled unknown: {s['right_but_labelled_unknown']}")
    print("exact share per execution: " + "  ".join(f"{k}: {_pct(v)}" for k, v in
                                                    s["exact_share_per_execution"].items()))
    print(f"differences: {s['set_differences']} in the relation/mode sets, {s['flag_only_differences']} flag-only")
    print(f"model: {s['model_pg_locks_reads']} pg_locks reads "
          f"({s['model_pg_locks_reads'] / max(1, s['workloads_compared']):.1f} per workload), {s['model_s']} s; "
          f"truth {s['truth_s']} s")
    if len(per_major) > 1:
        print("\nmajor  workloads  compared  invalid  executions  exact   locks    unknown  wrong&exact")
        for major, m in sorted(per_major.items()):
            invalid = m["by_status"].get("invalid", 0)
            print(f"{major:>5}  {m['workloads']:>9}  {m['workloads_compared']:>8}  {invalid:>7}"
                  f"  {m['executions_compared']:>10}  {_pct(m['exact_share']):>6}  {m['lock_share'] * 100:6.2f}%  "
                  f"{_pct(m['labelled_unknown_share']):>7}  {m['wrong_and_labelled_exact']:>11}")
    print(f"\ncensus: {len(classes)} mismatch classes (workloads / executions / of which labelled exact)")
    for n, c in enumerate(classes, 1):
        feats = ", ".join(f"{k} {v}" for k, v in list(c["features"].items())[:6]) or "-"
        print(f"{n:3}. {c['workloads']:4} / {c['executions']:4} / {c['labelled_exact']:4}  {c['statement']} | "
              f"{c['difference']} | {c['protocol']} | executions {c['differing_executions']} | "
              f"PG {','.join(map(str, c['majors']))} | features: {feats}")
    for n, c in enumerate(classes[:examples], 1):
        print(f"\n--- class {n}: {c['statement']} | {c['difference']} | {c['protocol']}")
        print(_condensed(c["example"]["report"]))
    feats = s["features"]
    print("\nfeatures (workloads with it / of which mismatching): "
          + ", ".join(f"{k} {v['workloads']}/{v['mismatching']}" for k, v in feats.items()))
    print("statements (workloads with it / of which mismatching): "
          + ", ".join(f"{k} {v['workloads']}/{v['mismatching']}" for k, v in s["ops"].items()))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.differential",
                                     description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--majors", default="18", help="e.g. 13-19 or 13,15,18 (default 18)")
    parser.add_argument("--cases", type=int, default=200, help="workloads in all, spread over the majors")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=1, help="processes, each with its own servers")
    parser.add_argument("--minutes", type=float, default=0.0, help="no new case starts after this (0: no bound)")
    parser.add_argument("--max-cases-per-schema", type=int, default=3, help="workloads drawn per schema, at most")
    parser.add_argument("--max-statements", type=int, default=5, help="statements per transaction, at most")
    parser.add_argument("--chunk", type=int, default=100, help="workloads per job (a server start and a seed)")
    parser.add_argument("--statement-timeout-ms", type=int, default=10000)
    parser.add_argument("--model-timeout-s", type=float, default=60.0,
                        help="the model's whole run of one workload (its Python work too), at most")
    parser.add_argument("--examples", type=int, default=1000, help="classes whose smallest example is printed")
    parser.add_argument("--out", type=Path, default=None,
                        help="JSON file (default benchmarks/results/differential-DATE.json)")
    args = parser.parse_args(argv)
    out = args.out or Path("benchmarks/results") / f"differential-{datetime.date.today().isoformat()}.json"
    started = time.time()
    deadline = started + args.minutes * 60 if args.minutes > 0 else float("inf")
    jobs = _jobs(args, deadline)
    results: list[WorkloadResult] = []
    duplicates = 0
    print(f"differential: {len(jobs)} jobs over PostgreSQL {args.majors}, {args.workers} workers", flush=True)
    failed: list[str] = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.workers)) as pool:
        futures = {pool.submit(_in_process, job): job for job in jobs}
        for fut in concurrent.futures.as_completed(futures):
            try:
                job, found, secs, dups = fut.result()
            except Exception as exc:  # the job's process died (or its server would not start): the others go on
                job = futures[fut]
                failed.append(f"PG {job.major} chunk {job.index}: {type(exc).__name__}: {exc}")
                print(f"  {failed[-1]}", flush=True)
                continue
            results += found
            duplicates += dups
            bad = sum(e.wrong_and_exact for r in found for e in r.executions)
            print(f"  PG {job.major} chunk {job.index}: {len(found)} workloads in {secs:.0f} s, "
                  f"{sum(bool(r.mismatched) for r in found)} mismatching, {bad} executions wrong and labelled exact "
                  f"({len(results)} so far, {(time.time() - started) / 60:.1f} min)", flush=True)
    results.sort(key=lambda r: (r.major, r.case_id))
    summary = summarize(results)
    per_major = {m: summarize([r for r in results if r.major == m]) for m in sorted({r.major for r in results})}
    classes = census(results)
    schemas: dict[str, dict[str, Any]] = {}
    for r in results:
        sid = r.case_id.rsplit(".", 1)[0]
        entry = schemas.setdefault(sid, {"case": sid, "major": r.major, "schema_sql": r.schema_sql, "workloads": []})
        entry["workloads"].append(r.to_dict())
    meta = {"majors": args.majors, "cases": args.cases, "seed": args.seed, "workers": args.workers,
            "minutes": args.minutes, "max_cases_per_schema": args.max_cases_per_schema,
            "max_statements": args.max_statements, "chunk": args.chunk,
            "statement_timeout_ms": args.statement_timeout_ms, "model_timeout_s": args.model_timeout_s,
            "schemas": len(schemas), "duplicates": duplicates,
            "wall_s": round(time.time() - started, 1), "time_bound_hit": time.time() >= deadline,
            "date": datetime.datetime.now().isoformat(timespec="seconds"), "pid": os.getpid(),
            "failed_jobs": failed}
    print_summary(summary, per_major, classes, meta, args.examples)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"meta": meta, "summary": summary, "per_major": per_major, "census": classes,
                               "cases": list(schemas.values())}, indent=1, default=str))
    print(f"\nwritten: {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
