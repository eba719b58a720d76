import json, sys
sys.path.insert(0, "/tmp/var"); sys.path.insert(0, "/work/main")
import capture  # patches first
from benchmarks import lockmanager_regimes as R
from lockscope.forecast.engine import default_cores
rows = []
for run in range(int(sys.argv[1])):
    for cond in sys.argv[2].split(","):
        e, c = (int(v) for v in cond.split("x"))
        capture.CALLS.clear()
        row, _ = R.measure(e, c, 20.0, 100.0, default_cores())
        v = capture.shares_at(int(row["population"]), float(row["model_tps"]), float(row["partition_wait_ms"]))
        out = {k: row.get(k) for k in ("extra_indexes", "clients", "measured_tps", "aas", "fine_share", "diagnose_share", "model_share")}
        out.update(v or {}); out["run"] = run + 1
        rows.append(out); print(json.dumps({k: round(x, 3) if isinstance(x, float) else x for k, x in out.items()}), flush=True)
json.dump(rows, open(sys.argv[3], "w"), indent=1)
