"""Sampled LockManager share at 100 Hz over a long window: per-2s sub-windows and per-run totals."""
import json, sys, time
sys.path.insert(0, "/tmp/exp")
import psycopg
from preempt import proc
from lockscope.demo_load import demo_load

def run(extra, clients, seconds, hz):
    with demo_load(extra_indexes=extra, clients=clients, duration_s=seconds + 1) as running:
        conn = psycopg.connect(running.server.conninfo(), autocommit=True)
        time.sleep(1.0)
        pids = [r[0] for r in conn.execute("select pid from pg_stat_activity where backend_type='client backend' and pid<>pg_backend_pid()")]
        ticks = []; t0 = time.monotonic(); nxt = t0; pre = []
        last = {p: proc(p) for p in pids}; lastt = t0
        while time.monotonic() - t0 < seconds:
            lm = act = 0
            for (we,) in conn.execute("select wait_event from pg_stat_activity where state='active' and backend_type='client backend' and pid<>pg_backend_pid()"):
                act += 1; lm += we == "LockManager"
            now = time.monotonic(); ticks.append((now - t0, act, lm))
            if now - lastt >= 2.0:
                cur = {p: proc(p) for p in pids}
                pre.append(sum(cur[p][0] - last[p][0] for p in pids if cur.get(p) and last.get(p)) / (now - lastt))
                last, lastt = cur, now
            nxt += 1 / hz; time.sleep(max(0, nxt - time.monotonic()))
        return ticks, pre

if __name__ == "__main__":
    out = []
    for rep in range(int(sys.argv[1])):
        for cond in sys.argv[2].split(","):
            e, c = (int(v) for v in cond.split("x"))
            ticks, pre = run(e, c, float(sys.argv[4]), 100)
            subs = []
            for k in range(int(float(sys.argv[4]) // 2)):
                w = [t for t in ticks if 2 * k <= t[0] < 2 * k + 2]
                a = sum(t[1] for t in w); l = sum(t[2] for t in w)
                subs.append(round(100 * l / a) if a else None)
            a = sum(t[1] for t in ticks); l = sum(t[2] for t in ticks)
            # share from 10 Hz subsample of the first 6 s
            w10 = [t for i, t in enumerate(ticks) if i % 10 == 0 and t[0] < 6]
            s10 = 100 * sum(t[2] for t in w10) / max(1, sum(t[1] for t in w10))
            row = dict(extra=e, clients=c, rep=rep, ticks=len(ticks), share=round(100 * l / a, 1), aas=round(a / len(ticks), 2),
                       share10hz_first6s=round(s10, 1), subs=subs, pre=[round(p) for p in pre])
            out.append(row); print(json.dumps(row), flush=True)
    json.dump(out, open(sys.argv[3], "w"))
