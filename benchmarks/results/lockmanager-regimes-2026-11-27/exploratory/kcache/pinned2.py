"""Exploratory (issue 27): the demo load on the embedded PostgreSQL 18 with the server pinned to CPU 1 and pgbench
(and lockscope) to CPU 0: the client does not share the server's core, as in production. lockscope forecast
(workload mode, --cores 1, 20 s) judges its model's LockManager share against the sampled one."""
from __future__ import annotations
import json, os, subprocess, sys, time
from pathlib import Path
sys.path.insert(0, "/work/main")
sys.path.insert(0, "/tmp/kc")
from lockscope.server import ScratchServer, ScratchSettings
from lockscope.demo_load import prepare_contended_schema, start_demo_load
from lockscope.watch.wait_sampling import scratch_preload
from benchmarks.forecast_real import load_lock

PIN = os.environ.get("PIN", "1") == "1"
CORES = os.environ.get("CORES", "1" if PIN else "2")


def children(ppid):
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


def one(server, extra, clients, seconds, outdir):
    prepare_contended_schema(server, extra_indexes=extra, mlpt=None)
    with load_lock():
        if PIN:
            pm = int((server.data_dir / "postmaster.pid").read_text().splitlines()[0])
            pin([pm, *children(pm)], 1)
        with start_demo_load(server, duration_s=seconds + 12, clients=clients):
            if PIN:
                pin([int(p) for p in subprocess.run(["pgrep", "-x", "pgbench"], capture_output=True,
                                                    text=True).stdout.split()], 0)
            time.sleep(2.0)
            js = outdir / f"fc-{extra}x{clients}-{time.strftime('%H%M%S')}.json"
            cmd = ["/work/main/.venv/bin/lockscope", "forecast", "--dsn", server.conninfo(), "--interval",
                   f"{seconds:g}s", "--cores", CORES, "--json", str(js), "-q"]
            if PIN:
                cmd = ["taskset", "-c", "0", *cmd]
            subprocess.run(cmd, capture_output=True, text=True)
    doc = json.loads(js.read_text())
    live, mv = doc.get("live") or {}, doc.get("model_vs_now") or {}
    iv = live.get("lockmanager_share_95") or {}
    row = dict(pinned=PIN, extra=extra, clients=clients, at=time.strftime("%H:%M:%S"), tps=live.get("rate_tps"),
               population=live.get("population"), think_ms=live.get("think_ms"), aas=live.get("aas"),
               sampled=live.get("lockmanager_share"), half=iv.get("half_width"),
               model=mv.get("model_lockmanager_share"), model_tps=mv.get("model_tps"),
               reproduced=mv.get("lockmanager_reproduced"))
    print(json.dumps({a: (round(b, 3) if isinstance(b, float) else b) for a, b in row.items()}), flush=True)
    return row


def main():
    os.sched_setaffinity(0, {0})
    out = Path(sys.argv[1]); conds = sys.argv[2].split(","); runs = int(sys.argv[3]); seconds = float(sys.argv[4])
    outdir = out.parent / (out.stem + "-json"); outdir.mkdir(exist_ok=True)
    rows = []
    from lockscope.server import default_bin_dir
    settings = ScratchSettings(max_locks_per_transaction=16, max_connections=120,
                               extra={})
    with ScratchServer(None, settings) as server:
        for r in range(runs):
            for cond in conds:
                e, c = (int(v) for v in cond.split("x"))
                rows.append(one(server, e, c, seconds, outdir))
                out.write_text(json.dumps(rows, indent=1))


main()
