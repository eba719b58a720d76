"""Exploratory (issue 27): does the measured count of LWLock sleeps (voluntary context switches of the backends,
pg_stat_kcache planning+execution and /proc totals) explain the sampled LockManager share across regimes?"""
from __future__ import annotations
import json, os, sys, time
from pathlib import Path
sys.path.insert(0, "/work/main")
from lockscope.server import ScratchServer, ScratchSettings
from lockscope.demo_load import prepare_contended_schema, start_demo_load
from lockscope.db import connect, run_script
from benchmarks.lockmanager_regimes import FineSampler, share, windows, PGBENCH_PIDS_SQL
from benchmarks.forecast_real import load_lock
import psycopg

KC = ("SELECT sum(k.plan_nvcsws), sum(k.exec_nvcsws), sum(k.plan_nivcsws), sum(k.exec_nivcsws), "
      "sum(k.plan_user_time + k.plan_system_time), sum(k.exec_user_time + k.exec_system_time), sum(s.calls) "
      "FROM pg_stat_kcache() k JOIN pg_stat_statements s USING (queryid, userid, dbid) "
      "WHERE s.query LIKE 'SELECT abalance FROM pgbench_accounts%'")

def proc_vol(pids):
    out = {}
    for p in pids:
        try:
            st = Path(f"/proc/{p}/status").read_text()
        except OSError:
            continue
        v = [int(l.split()[1]) for l in st.splitlines() if l.startswith("voluntary_ctxt_switches:")]
        out[p] = v[0]
    return out

def one(server, extra, clients, seconds):
    prepare_contended_schema(server, extra_indexes=extra, mlpt=None)
    with load_lock():
        l0 = os.getloadavg()
        with start_demo_load(server, duration_s=seconds + 8, clients=clients), \
                psycopg.connect(server.conninfo(), autocommit=True) as c:
            time.sleep(2.0)
            pids = [r[0] for r in c.execute(PGBENCH_PIDS_SQL).fetchall()]
            fine = FineSampler(server.conninfo(), 100.0, seconds)
            fine.start(); time.sleep(0.5)
            k0 = c.execute(KC).fetchone(); v0 = proc_vol(pids); t0 = time.monotonic()
            fine.start_sampling(); fine.join(seconds + 30)
            k1 = c.execute(KC).fetchone(); v1 = proc_vol(pids); t1 = time.monotonic()
    dt = t1 - t0
    d = [float(b - a) for a, b in zip(k0, k1)]
    calls = d[6]
    x = calls / dt
    sh = share(fine.ticks); aas = sum(t[1] for t in fine.ticks) / len(fine.ticks)
    vol = sum(v1[p] - v0[p] for p in v1 if p in v0)
    w = windows(fine)
    row = dict(extra=extra, clients=clients, at=time.strftime("%H:%M:%S"), load=l0, tps=x, share=sh, aas=aas,
               lm_aas=sh * aas, kc_plan_vcs=d[0] / calls, kc_exec_vcs=d[1] / calls, kc_plan_ivcs=d[2] / calls,
               kc_exec_ivcs=d[3] / calls, cpu_plan_us=d[4] / calls * 1e6, cpu_exec_us=d[5] / calls * 1e6,
               proc_vcs=vol / calls,
               runq=sum(x_["runqueue_s_per_s"] for x_ in w) / max(1, len(w)),
               cpu_s=sum(x_["cpu_s_per_s"] for x_ in w) / max(1, len(w)),
               preempt=sum(x_["preempt_per_s"] for x_ in w) / max(1, len(w)))
    k = row["kc_plan_vcs"] + row["kc_exec_vcs"]
    row["implied_sleep_ms_kc"] = row["lm_aas"] / (x * k) * 1000 if k > 0 else None
    print(json.dumps({a: (round(b, 4) if isinstance(b, float) else b) for a, b in row.items()}), flush=True)
    return row

def main():
    out = Path(sys.argv[1]); conds = sys.argv[2].split(","); runs = int(sys.argv[3]); seconds = float(sys.argv[4])
    rows = []
    settings = ScratchSettings(max_locks_per_transaction=16, max_connections=120, extra={
        "shared_preload_libraries": "pg_stat_statements,pg_stat_kcache", "pg_stat_kcache.linux_hz": "100000",
        "pg_stat_kcache.track_planning": "on", "pg_stat_statements.track_planning": "on"})
    with ScratchServer(Path("/usr/lib/postgresql/15/bin"), settings) as server:
        run_script(server.conninfo(), "create extension if not exists pg_stat_statements; create extension if not exists pg_stat_kcache")
        for r in range(runs):
            for cond in conds:
                e, c = (int(v) for v in cond.split("x"))
                rows.append(one(server, e, c, seconds))
                out.write_text(json.dumps(rows, indent=1))

main()
