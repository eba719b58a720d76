import json, sys, time
sys.path.insert(0, "/tmp/var"); sys.path.insert(0, "/work/main")
import capture  # patches first
from pathlib import Path
from benchmarks import forecast_apps as FA

OUT = []
orig_fs = FA.forecast_statement


def fs(session, text, **kw):
    capture.CALLS.clear()
    rep = orig_fs(session, text, **kw)
    if kw.get("sample_s") == 20.0 and rep.anchor is not None and rep.live is not None:
        v = capture.shares_at(rep.live.population, rep.anchor.model_tps, 0.0)
        iv = rep.live.lockmanager_interval
        row = {"statement": text[:60], "population": rep.live.population, "sampled": rep.live.lockmanager_share,
               "half_width": iv.half_width if iv else None, "model": rep.anchor.model_lockmanager_share, **(v or {})}
        OUT.append(row); print(json.dumps({k: round(x, 3) if isinstance(x, float) else x for k, x in row.items()}), flush=True)
    return rep


FA.forecast_statement = fs
apps = ["listmonk", "miniflux", "umami"]
stmts = ["get_subscriber_lists", "register_campaign_view", "categories_with_counts", "count_unread", "get_website_session"]
mode = FA.StatementMode(20.0, None, False)
for app in apps:
    FA.run_app(app, [16, 32], 26.0, print, mode=mode, statements=stmts, workload=False)
json.dump(OUT, open(sys.argv[1], "w"), indent=1)
