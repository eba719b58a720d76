"""Does the sampled LockManager share track backends' preemptions / run-queue wait over the same seconds?"""
import json, os, sys, threading, time
import psycopg
from lockscope.demo_load import demo_load

def proc(pid):
    try:
        st = open(f"/proc/{pid}/status").read().split("\n")
        nv = int([l for l in st if l.startswith("nonvoluntary_ctxt_switches")][0].split()[1])
        v = int([l for l in st if l.startswith("voluntary_ctxt_switches")][0].split()[1])
        cpu, delay, slices = (int(x) for x in open(f"/proc/{pid}/schedstat").read().split())
        return nv, v, cpu, delay, slices
    except (OSError, IndexError):
        return None

def stat():
    f = open("/proc/stat").readline().split()[1:]
    vals = [int(x) for x in f]
    return sum(vals) - vals[3] - vals[4], sum(vals)

def run(extra, clients, seconds):
    with demo_load(extra_indexes=extra, clients=clients, duration_s=seconds + 1) as running:
        conn = psycopg.connect(running.server.conninfo(), autocommit=True)
        time.sleep(1.0)
        pids = [r[0] for r in conn.execute("select pid from pg_stat_activity where backend_type='client backend' and pid<>pg_backend_pid()")]
        x0 = conn.execute("select xact_commit from pg_stat_database where datname=current_database()").fetchone()[0]
        a = {p: proc(p) for p in pids}; s0 = stat(); t0 = time.monotonic()
        n = lm = cpu = other = 0
        while time.monotonic() - t0 < seconds:
            for (we_type, we) in conn.execute("select wait_event_type, wait_event from pg_stat_activity where state='active' and backend_type='client backend' and pid<>pg_backend_pid()"):
                if we_type is None: cpu += 1
                elif we == "LockManager": lm += 1
                else: other += 1
            n += 1
            time.sleep(0.1)
        b = {p: proc(p) for p in pids}; s1 = stat(); t1 = time.monotonic()
        x1 = conn.execute("select xact_commit from pg_stat_database where datname=current_database()").fetchone()[0]
        dt = t1 - t0
        d = [tuple(bb - aa for aa, bb in zip(a[p], b[p])) for p in pids if a.get(p) and b.get(p)]
        nv = sum(x[0] for x in d) / dt; vol = sum(x[1] for x in d) / dt
        cpu_aas = sum(x[2] for x in d) / dt / 1e9; delay_aas = sum(x[3] for x in d) / dt / 1e9
        slices = sum(x[4] for x in d) / dt
        busy = (s1[0] - s0[0]) / (s1[1] - s0[1])
        return dict(extra=extra, clients=clients, tps=(x1 - x0) / dt, samples=n,
                    aas=(cpu + lm + other) / n, lm_aas=lm / n, cpu_samp_aas=cpu / n, other_aas=other / n,
                    lm_share=lm / max(1, cpu + lm + other), preempt_per_s=nv, vol_per_s=vol, be_cpu_aas=cpu_aas,
                    be_delay_aas=delay_aas, slices_per_s=slices, machine_busy=busy, load=os.getloadavg()[0])

if __name__ == "__main__":
    rows = []
    for rep in range(int(sys.argv[1])):
        for cond in sys.argv[2].split(","):
            e, c = (int(v) for v in cond.split("x"))
            r = run(e, c, 6.0); r["rep"] = rep; rows.append(r)
            print(json.dumps({k: (round(v, 4) if isinstance(v, float) else v) for k, v in r.items()}), flush=True)
    json.dump(rows, open(sys.argv[3], "w"), indent=1)
