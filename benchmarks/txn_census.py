"""The census of execution locks: every case of ``tests/data/txn`` executed for real (``tests/txn_oracle.py``) beside
what lockscope's EXPLAIN footprint says (``lockscope.footprint.measure_footprint``), per major, setting and protocol.

    python -m benchmarks.txn_census --major 18 --mlpt 16 [--case NAME ...] [--out DIR]
    python -m benchmarks.txn_census --table --mlpt 16 [--out DIR]   # the markdown table of every major's file

One scratch server per (major, max_locks_per_transaction) with autovacuum off; every case in a schema of its own;
the transaction run 8 times on one connection (execution k = the backend's k-th), with the prepared protocol and
the simple one; then each statement's footprint on a fresh connection (prepared: 8 executions; simple: one EXPLAIN).
Writes ``DIR/pgMAJOR-mlptN.json`` (default DIR: ``/tmp/lockscope-txn-census``) and prints one line per case,
protocol and execution: truth (locks / main lock table) vs EXPLAIN, and the locks only one side has.
The write-up of these results is docs/execution-locks.md, the test that holds the
truth per major is ``tests/test_txn_truth.py``.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tests.fix_versions import bin_dir_of
from tests.txn_oracle import Case, TxnTruth, load_cases, run_transaction, setup_case

from lockscope.db import connect
from lockscope.errors import LockscopeError
from lockscope.footprint import Footprint, measure_footprint
from lockscope.server import ScratchServer, ScratchSettings

EXECUTIONS = 8
DEFAULT_OUT = Path("/tmp/lockscope-txn-census")


def _explain_side(conninfo: str, case: Case, prepared: bool) -> list[list[dict[str, Any]]]:
    """Per statement, per execution: the footprint's locks (name, mode, fastpath, executor-only flag)."""
    out: list[list[dict[str, Any]]] = []
    mode = dict(case.settings).get("plan_cache_mode", "auto") if prepared else "auto"
    for stmt in case.statements:
        with connect(conninfo) as session:
            try:
                fp: Footprint | None = measure_footprint(
                    session, stmt.sql, params=[str(p) for p in stmt.params],
                    protocol="prepared" if prepared else "simple", plan_cache_mode=mode, executions=EXECUTIONS)
            except LockscopeError as exc:  # the census records what the footprint refuses
                out.append([{"error": f"{type(exc).__name__}: {exc}"}])
                continue
        assert fp is not None
        per_exec = []
        for e in fp.executions:
            locks = [{"name": lk.relation.rsplit(".", 1)[-1].strip('"'), "mode": lk.mode, "fastpath": lk.fastpath,
                      "executor_only": False} for lk in e.locks]
            locks += [{"name": lk.relation.rsplit(".", 1)[-1].strip('"'), "mode": lk.mode,
                       "fastpath": lk.fastpath, "executor_only": True} for lk in e.executor_index_locks]
            per_exec.append({"phase": e.phase, "locks": locks})
        out.append(per_exec)
    return out


def _truth_json(truth: TxnTruth) -> list[list[dict[str, Any]]]:
    return [[{"locks": [{"name": lk.name, "mode": lk.mode, "fastpath": lk.fastpath, "relkind": lk.relkind}
                        for lk in st.locks],
              "main_by_locktype": dict(st.main_by_locktype)} for st in run.statements] for run in truth.runs]


def census(major: int, mlpt: int, names: Sequence[str] | None) -> dict[str, Any]:
    """Run the census of the named cases (all when None) on one new scratch server."""
    settings = ScratchSettings(max_locks_per_transaction=mlpt, extra={"autovacuum": "off"})
    result: dict[str, Any] = {"major": major, "mlpt": mlpt, "cases": {}}
    with ScratchServer(bin_dir_of(major), settings) as server:
        for case in load_cases(names):
            conninfo = setup_case(server.conninfo(), case)
            entry: dict[str, Any] = {"title": case.title, "statements": [s.sql for s in case.statements]}
            for prepared in (True, False):
                proto = "prepared" if prepared else "simple"
                truth = run_transaction(conninfo, case.with_protocol(prepared), EXECUTIONS)
                entry[proto] = {"truth": _truth_json(truth), "explain": _explain_side(conninfo, case, prepared),
                                "fastpath_exceeded": [run.fastpath_exceeded for run in truth.runs]}
                result["version"] = truth.server_version_num
            result["cases"][case.name] = entry
    return result


def explain_at(entry: dict[str, Any], statement: int, execution: int) -> tuple[set[tuple[str, str]], bool]:
    """The EXPLAIN side's (name, mode) set accumulated over statements 0..statement at ``execution`` (1-based; the
    simple protocol's single EXPLAIN stands for every execution), and whether any footprint failed."""
    held: set[tuple[str, str]] = set()
    failed = False
    for per_exec in entry["explain"][: statement + 1]:
        if "error" in per_exec[0]:
            failed = True
            continue
        e = per_exec[min(execution, len(per_exec)) - 1]
        held |= {(lk["name"], lk["mode"]) for lk in e["locks"]}
    return held, failed


def report(result: dict[str, Any]) -> list[str]:
    """One line per case, protocol and execution: truth (held/main) vs EXPLAIN (held), and the differences."""
    lines = []
    for name, entry in result["cases"].items():
        for proto in ("prepared", "simple"):
            side = entry[proto]
            for k, run in enumerate(side["truth"], start=1):
                final = run[-1]
                truth = {(lk["name"], lk["mode"]) for lk in final["locks"]}
                main = sum(not lk["fastpath"] for lk in final["locks"])
                explain, failed = explain_at(side, len(run) - 1, k)
                only_t = sorted(truth - explain)
                only_e = sorted(explain - truth)
                lines.append(f"{name:24} {proto:8} {k} truth {len(truth):3}/{main:3} explain "
                             f"{'ERR' if failed else len(explain):>3} +{_short(only_t)} -{_short(only_e)}")
    return lines


def _short(pairs: list[tuple[str, str]]) -> str:
    return "[" + ", ".join(f"{n}:{m.replace('Lock', '')}" for n, m in pairs[:12]) + (
        f", ...{len(pairs) - 12}" if len(pairs) > 12 else "") + "]"


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: ``--major``, ``--mlpt``, ``--case`` (repeatable), ``--out``."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--major", type=int)
    ap.add_argument("--mlpt", type=int, default=16)
    ap.add_argument("--case", action="append")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--table", action="store_true", help="print the markdown table of DIR's pg*-mlptN.json files")
    args = ap.parse_args(argv)
    if args.table:
        files = sorted(args.out.glob(f"pg*-mlpt{args.mlpt}.json"), key=lambda p: int(p.name[2:].split("-")[0]))
        print("\n".join(table([json.loads(p.read_text()) for p in files])))
        return 0
    result = census(args.major, args.mlpt, args.case)
    args.out.mkdir(parents=True, exist_ok=True)
    suffix = "" if args.case is None else "-" + "-".join(args.case)
    (args.out / f"pg{args.major}-mlpt{args.mlpt}{suffix}.json").write_text(json.dumps(result, indent=1))
    print("\n".join(report(result)))
    return 0



def _runs(values: Sequence[str]) -> str:
    """``a a a b c c`` → ``a×3 b c×2``."""
    out: list[str] = []
    i = 0
    while i < len(values):
        j = i
        while j < len(values) and values[j] == values[i]:
            j += 1
        out.append(values[i] + (f"×{j - i}" if j - i > 1 else ""))
        i = j
    return " ".join(out)


def _count(locks: Sequence[dict[str, Any]]) -> str:
    main = sum(not lk["fastpath"] for lk in locks)
    return f"{len(locks)}({main})" if main else str(len(locks))


def case_cells(entry: dict[str, Any], proto: str) -> tuple[str, str]:
    """(truth, EXPLAIN) for one case and protocol: relation locks held at the end of the transaction per execution
    1..8, ``(n)`` = of which n in the main lock table; EXPLAIN = the union of the statements' footprints (each
    measured alone, its main-table count its own), ``ERR`` when a footprint failed."""
    side = entry[proto]
    truth = [_count(run[-1]["locks"]) for run in side["truth"]]
    explain = []
    for k in range(1, len(side["truth"]) + 1):
        locks: dict[tuple[str, str], bool] = {}
        for per_exec in side["explain"]:
            if "error" in per_exec[0]:
                break
            for lk in per_exec[min(k, len(per_exec)) - 1]["locks"]:
                locks[(lk["name"], lk["mode"])] = lk["fastpath"]
        else:
            explain.append(_count([{"fastpath": fp} for fp in locks.values()]))
            continue
        explain.append("ERR")
    return _runs(truth), _runs(explain)


def table(results: Sequence[dict[str, Any]]) -> list[str]:
    """A markdown table: case × protocol, majors with the same cells merged."""
    lines = ["| case | protocol | majors | truth, executions 1..8 | EXPLAIN footprint, executions 1..8 |",
             "|---|---|---|---|---|"]
    for name in results[0]["cases"]:
        for proto in ("prepared", "simple"):
            groups: dict[tuple[str, str], list[int]] = {}
            for result in results:
                groups.setdefault(case_cells(result["cases"][name], proto), []).append(result["major"])
            for (truth, explain), majors in groups.items():
                label = (f"{majors[0]}-{majors[-1]}" if majors == list(range(majors[0], majors[-1] + 1))
                         and len(majors) > 1 else ",".join(map(str, majors)))
                lines.append(f"| {name} | {proto} | {label} | {truth} | {explain} |")
    return lines


if __name__ == "__main__":
    raise SystemExit(main())
