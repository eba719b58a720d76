"""Exploratory (issue 27): the demo load with the server pinned to CPU 1 and pgbench (and the sampler) to CPU 0,
so that the client does not share the server's core (as in production). Is the sampled LockManager share
reproducible between runs there?"""
from __future__ import annotations
import json, os, subprocess, sys, time
from pathlib import Path
sys.path.insert(0, "/work/main")
from lockscope.server import ScratchServer, ScratchSettings
from lockscope.demo_load import prepare_contended_schema, start_demo_load
from lockscope.db import run_script
from benchmarks.lockmanager_regimes import FineSampler, share, windows, PGBENCH_PIDS_SQL
from benchmarks.forecast_real import load_lock
import psycopg

KC = ("SELECT sum(k.plan_nvcsws), sum(k.exec_nvcsws), sum(k.plan_nivcsws), sum(k.exec_nivcsws), "
      "sum(k.plan_user_time + k.plan_system_time), sum(k.exec_user_time + k.exec_system_time), sum(s.calls) "
      "FROM pg_stat_kcache() k JOIN pg_stat_statements s USING (queryid, userid, dbid) "
      "WHERE s.query LIKE 'SELECT abalance FROM pgbench_accounts%'")
PIN = os.environ.get("PIN", "1") == "1"


def children(ppid: int) -> list[int]:
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if int((d / "stat").read_text().rsplit(")", 1)[1].split()[1]) == ppid:
                    out.append(int(d.name))
            except (OSError, ValueError, IndexError):
                pass
    return out


def pin(pids, cpu):
    for p in pids:
        subprocess.run(["taskset", "-a", "-p", "-c", str(cpu), str(p)], capture_output=True)


def pin_server(server):
    pm = int((server.data_dir / "postmaster.pid").read_text().splitlines()[0])
    pin([pm, *children(pm)], 1)


def pin_pgbench():
    pids = [int(p) for p in subprocess.run(["pgrep", "-x", "pgbench"], capture_output=True, text=True).stdout.split()]
    pin(pids, 0)
    return pids


def one(server, extra, clients, seconds):
    prepare_contended_schema(server, extra_indexes=extra, mlpt=None)
    with load_lock():
        l0 = os.getloadavg()
        if PIN:
            pin_server(server)
        with start_demo_load(server, duration_s=seconds + 8, clients=clients), \
                psycopg.connect(server.conninfo(), autocommit=True) as c:
            if PIN:
                pin_pgbench()
            time.sleep(2.0)
            fine = FineSampler(server.conninfo(), 100.0, seconds)
            fine.start(); time.sleep(0.5)
            k0 = c.execute(KC).fetchone(); t0 = time.monotonic()
            fine.start_sampling(); fine.join(seconds + 30)
            k1 = c.execute(KC).fetchone(); t1 = time.monotonic()
    dt = t1 - t0
    d = [float(b - a) for a, b in zip(k0, k1)]
    calls = d[6]; x = calls / dt
    sh = share(fine.ticks); aas = sum(t[1] for t in fine.ticks) / len(fine.ticks)
    w = windows(fine)
    per2 = [round(100 * v["share"]) if v["share"] is not None else None for v in w]
    row = dict(pinned=PIN, extra=extra, clients=clients, at=time.strftime("%H:%M:%S"), load=l0, tps=x, share=sh,
               aas=aas, lm_aas=sh * aas, k=(d[0] + d[1]) / calls, ivcs=(d[2] + d[3]) / calls,
               cpu_us=(d[4] + d[5]) / calls * 1e6,
               runq=sum(v["runqueue_s_per_s"] for v in w) / max(1, len(w)),
               cpu_s=sum(v["cpu_s_per_s"] for v in w) / max(1, len(w)), share_per_2s=per2)
    row["sleep_ms"] = row["lm_aas"] / (x * row["k"]) * 1000 if row["k"] > 0 else None
    print(json.dumps({a: (round(b, 4) if isinstance(b, float) else b) for a, b in row.items()}), flush=True)
    return row


def main():
    os.sched_setaffinity(0, {0})
    out = Path(sys.argv[1]); conds = sys.argv[2].split(","); runs = int(sys.argv[3]); seconds = float(sys.argv[4])
    rows = []
    settings = ScratchSettings(max_locks_per_transaction=16, max_connections=120, extra={
        "shared_preload_libraries": "pg_stat_statements,pg_stat_kcache", "pg_stat_kcache.linux_hz": "100000",
        "pg_stat_kcache.track_planning": "on", "pg_stat_statements.track_planning": "on"})
    with ScratchServer(Path("/usr/lib/postgresql/15/bin"), settings) as server:
        run_script(server.conninfo(), "create extension if not exists pg_stat_statements; "
                                      "create extension if not exists pg_stat_kcache")
        for r in range(runs):
            for cond in conds:
                e, c = (int(v) for v in cond.split("x"))
                rows.append(one(server, e, c, seconds))
                out.write_text(json.dumps(rows, indent=1))


main()
