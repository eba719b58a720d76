-- The observer the seed measured (PostgresAI 2-007), for the observer-effect benchmark only: pg_blocking_pids()
-- for every row of pg_stat_activity. Each call takes ProcArrayLock and all 16 lock-partition LWLocks (shared).
-- lockscope itself never runs this; it is the comparison in benchmarks/observer_effect.py.
SELECT pg_catalog.pg_blocking_pids(pid) FROM pg_catalog.pg_stat_activity
