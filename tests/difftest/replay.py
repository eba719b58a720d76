"""Replay one workload of a differential run, lock by lock (a developer's tool: ``benchmarks/differential.py`` writes
the cases it drew into its ``--out`` JSON).

    python -m tests.difftest.replay RESULTS.json pg18-0-6.2 [--execution N] [--major M]

It starts a scratch server of the case's major (max_locks_per_transaction 16, autovacuum off), loads the case's
schema, then runs lockscope's model (``measure_footprint`` or ``measure_transaction``) and the statements for real
(``execute_scripts``), and prints per execution and statement the locks only one side holds, with the model's
source and detail for each (which foreign key, trigger, sequence or partition took it) and its unknowns.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from lockscope.db import connect, run_script
from lockscope.executed import execute_scripts
from lockscope.footprint import measure_footprint
from lockscope.script import Script, ScriptStatement, Transaction
from lockscope.server import ScratchServer, ScratchSettings
from lockscope.statement import check_statement, raw_statement
from lockscope.transaction import measure_transaction
from lockscope.vocab import PlanCacheMode

from ..fix_versions import bin_dir_of

EXECUTIONS = 8


def _find(doc: dict[str, Any], workload_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
    for case in doc["cases"]:
        for w in case["workloads"]:
            if w["case"] == workload_id:
                return case, w
    raise SystemExit(f"no workload {workload_id}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", type=Path)
    ap.add_argument("workload")
    ap.add_argument("--execution", type=int, default=0, help="only this execution (1-8)")
    ap.add_argument("--major", type=int, default=0)
    ap.add_argument("-v", "--verbose", action="store_true", help="every lock of the model, in order, with the truth's")
    args = ap.parse_args(argv)
    case, w = _find(json.loads(args.results.read_text()), args.workload)
    major = args.major or case["major"]
    stmts = tuple(ScriptStatement(s["text"], tuple(s["params"]), s["text"], n,
                                  next(iter(raw_statement(check_statement(s["text"])))))
                  for n, s in enumerate(w["statements"], 1))
    txn = Transaction(stmts, len(stmts) > 1, 1)
    mode = PlanCacheMode(w["mode"])
    with ScratchServer(bin_dir_of(major), ScratchSettings(max_locks_per_transaction=16,
                                                          extra={"autovacuum": "off"})) as srv:
        run_script(srv.conninfo(), "create schema g; set search_path = g;\n" + case["schema_sql"] +
                   "\nvacuum analyze;")
        options = "-c search_path=g"
        if w["protocol"] == "simple" and w["mode"] != "auto":
            options += f" -c plan_cache_mode={w['mode']}"
        conninfo = f"{srv.conninfo()} options='{options}'"
        with connect(conninfo, pg_locks_rate_hz=0) as session:
            if w["api"] == "footprint":
                fp = measure_footprint(session, stmts[0].text, params=list(stmts[0].params), protocol=w["protocol"],
                                       plan_cache_mode=mode if w["protocol"] == "prepared" else PlanCacheMode.AUTO,
                                       executions=EXECUTIONS)
                model = [[e.real_locks] for e in fp.executions]
                unknowns = [e.unknowns for e in fp.executions]
            else:
                tf = measure_transaction(session, [txn] * EXECUTIONS, protocol=w["protocol"], plan_cache_mode=mode,
                                         executions=EXECUTIONS)
                model = [[s.locks for s in e.steps] for e in tf.executions]
                unknowns = [e.unknowns for e in tf.executions]
            reads = session.probe_cost.pg_locks_reads
        (truth,) = execute_scripts(conninfo, [Script((txn,), False)] * EXECUTIONS, protocol=w["protocol"],
                                   plan_cache_mode=mode, executions=EXECUTIONS)
    print(f"{args.workload} on PostgreSQL {major}: {w['protocol']}/{w['mode']} via {w['api']}; model pg_locks "
          f"reads {reads}")
    for n, s in enumerate(stmts, 1):
        print(f"  {n}. {s.text}  -- {list(s.params)}")
    for k in range(1, EXECUTIONS + 1):
        if args.execution and k != args.execution:
            continue
        steps_model = model[min(k, len(model)) - 1]
        held_model: dict[tuple[int, str], Any] = {}
        real = truth.executions[k - 1]
        print(f"execution {k}: unknowns {list(unknowns[min(k, len(unknowns)) - 1])}")
        for n, _step in enumerate(real.steps):
            if n < len(steps_model):
                for lk in steps_model[n]:
                    held_model[(lk.relation_oid, str(lk.mode))] = lk
            held_truth = {(lk.relation_oid, str(lk.mode)): lk for st in real.steps[: n + 1] for lk in st.locks}
            if args.verbose and n < len(steps_model):
                for lk in steps_model[n]:
                    t = held_truth.get((lk.relation_oid, str(lk.mode)))
                    print(f"     {lk.relation} {lk.mode}: model {'fast' if lk.fastpath else 'main'}, truth "
                          f"{'-' if t is None else 'fast' if t.fastpath else 'main'} ({lk.source}: {lk.detail}, "
                          f"{lk.order_rule})")
            for key in sorted(set(held_truth) | set(held_model)):
                t, m = held_truth.get(key), held_model.get(key)
                if t is not None and m is not None and t.fastpath == m.fastpath:
                    continue
                lk = m or t
                assert lk is not None
                what = f"{lk.relation} {key[1]}"
                if m is None:
                    print(f"   after statement {n + 1}: only truth  {what} ({'fast' if t and t.fastpath else 'main'})")
                elif t is None:
                    print(f"   after statement {n + 1}: only model  {what} ({m.source}: {m.detail}, {m.order_rule})")
                else:
                    print(f"   after statement {n + 1}: flag differs {what}: truth {'fast' if t.fastpath else 'main'}"
                          f", model {'fast' if m.fastpath else 'main'} ({m.source}: {m.detail})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
