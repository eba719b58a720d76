import json, subprocess, sys, os, time
sys.path.insert(0, "/tmp/exp")
from preempt import run
rows = []
for rep in range(int(sys.argv[1])):
    for cond in sys.argv[2].split(","):
        e, c, h = (int(v) for v in cond.split("x"))
        hogs = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(h)]
        try:
            r = run(e, c, 6.0)
        finally:
            for p in hogs: p.kill()
        r.update(rep=rep, hogs=h); rows.append(r)
        print(json.dumps({k: (round(v, 4) if isinstance(v, float) else v) for k, v in r.items()}), flush=True)
json.dump(rows, open(sys.argv[3], "w"), indent=1)
