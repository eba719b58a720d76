"""Convoy model with the measured preemption rate vs the sampled LockManager share (offline evaluation)."""
import json, math, os, sys, threading, time
sys.path.insert(0, "/tmp/exp"); sys.path.insert(0, "/work/main")
import psycopg
from preempt import proc
import lockscope.forecast.model as M
from lockscope.db import connect
from lockscope.demo_load import demo_load
from lockscope.diagnose import run_diagnose
from lockscope.diagnose.engine import DiagnoseOptions
from lockscope.forecast.engine import default_cores

CALLS = []
orig = M.convoy_lockmanager_s
def rec(demands, cpus, **kw):
    CALLS.append((demands, cpus, kw)); return orig(demands, cpus, **kw)
M.convoy_lockmanager_s = rec

def measure_window(conninfo, seconds, out):
    c = psycopg.connect(conninfo, autocommit=True)
    pids = [r[0] for r in c.execute("select pid from pg_stat_activity where backend_type='client backend' and pid<>pg_backend_pid() and application_name like 'pgbench%'")]
    a = {p: proc(p) for p in pids}; t0 = time.monotonic(); time.sleep(seconds)
    b = {p: proc(p) for p in pids}; dt = time.monotonic() - t0
    d = [tuple(y - x for x, y in zip(a[p], b[p])) for p in pids if a.get(p) and b.get(p)]
    out.update(pids=len(d), pre=sum(x[0] for x in d) / dt, cpu=sum(x[2] for x in d) / dt / 1e9,
               delay=sum(x[3] for x in d) / dt / 1e9, slices=sum(x[4] for x in d) / dt)

def run(extra, clients, seconds, cores):
    CALLS.clear()
    with demo_load(extra_indexes=extra, clients=clients, duration_s=seconds) as running, connect(running.conninfo) as s:
        m = {}
        th = threading.Thread(target=measure_window, args=(running.server.conninfo(), seconds, m)); th.start()
        d = run_diagnose(s, running.conninfo, DiagnoseOptions(duration_s=seconds, cores=cores), demo=True)
        th.join()
    f, live = d.forecast_before, d.live
    calls = [c for c in CALLS if c[2]["population"] == live.population and abs(c[2]["throughput_tps"] - f.throughput_tps) < 1e-6 * f.throughput_tps + 1e-9]
    dem, cpus, kw = calls[-1]
    t = dem.costs.sched_tick_s
    P = min(0.999, m["pre"] * t / max(m["cpu"], 0.1))
    r = 1 + math.log(1 - P) / math.log(1 - 1 / cpus)
    conv_meas = orig(dem, cpus, **{**kw, "runnable": r})
    cpu_n = kw["cpu_s"]; lm_q = f.partition_wait_ms / 1000
    share = lambda c: (lm_q + c) / (lm_q + c + cpu_n)
    row = dict(extra=extra, clients=clients, tps=live.rate_tps, aas=live.aas, sampled=live.lockmanager_share,
               model=f.lockmanager_share, model_meas=share(conv_meas), P_model=1 - (1 - 1 / cpus) ** max(0, kw["runnable"] - 1),
               P_meas=P, runnable_model=kw["runnable"], in_server=kw["in_server"], think_ms=kw["think_s"] * 1000, **m)
    return row

if __name__ == "__main__":
    cores = default_cores(); rows = []
    for rep in range(int(sys.argv[1])):
        for cond in sys.argv[2].split(","):
            e, c = (int(v) for v in cond.split("x"))
            r = run(e, c, 6.0, cores); r["rep"] = rep; rows.append(r)
            print(json.dumps({k: (round(v, 4) if isinstance(v, float) else v) for k, v in r.items()}), flush=True)
    json.dump(rows, open(sys.argv[3], "w"), indent=1)
