-- Who blocks the backends seen waiting on a heavyweight lock (wait_event_type = 'Lock'): called only for those
-- pids, at most once per second. lockfuncs.c pg_blocking_pids -> lock.c GetBlockerStatusData takes
-- ProcArrayLock and all 16 lock-partition LWLocks in shared mode per call, so it is never run per sample.
SELECT p.pid, pg_catalog.pg_blocking_pids(p.pid) AS blocking_pids
FROM pg_catalog.unnest(%s::int4[]) AS p(pid)
