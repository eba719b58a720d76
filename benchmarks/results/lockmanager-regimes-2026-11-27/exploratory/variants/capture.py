"""Monkeypatch the convoy term to also compute variants at every call; look them up for the anchor's solve."""
import lockscope.forecast.model as M

ORIG = M.convoy_lockmanager_s
CALLS: list[tuple[dict, dict]] = []


def wrapped(demands, cpus, **kw):
    base = ORIG(demands, cpus, **kw)
    n = kw["population"]
    v1 = ORIG(demands, cpus, **{**kw, "runnable": max(kw["runnable"], float(n))})
    v3 = ORIG(demands, cpus, **{**kw, "runnable": max(kw["runnable"], float(n)), "think_s": 0.0})
    CALLS.append((kw, {"base": base, "v1": v1, "v3": v3}))
    return base


M.convoy_lockmanager_s = wrapped


def shares_at(population: int, throughput: float, partition_wait_ms: float) -> dict[str, float] | None:
    """The variants' LockManager shares at the call that solved (population, throughput)."""
    for kw, vals in reversed(CALLS):
        if kw["population"] == population and abs(kw["throughput_tps"] - throughput) <= 1e-6 * throughput:
            lm_q, cpu = partition_wait_ms / 1000.0, kw["cpu_s"]
            return {k: (lm_q + v) / (lm_q + v + cpu) for k, v in vals.items()} | {
                "runnable": kw["runnable"], "in_server": kw["in_server"], "think_ms": kw["think_s"] * 1000}
    return None
