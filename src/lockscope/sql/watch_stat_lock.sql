-- PG19 pg_stat_lock counters (only run when watch_features found the view): fastpath_exceeded counts fast-path
-- group overflows (a lock that had to go to the main lock table because its group was full), waits counts lock
-- waits longer than deadlock_timeout. lockscope records per-second deltas.
SELECT l.locktype::text AS locktype, l.fastpath_exceeded::int8 AS fastpath_exceeded, l.waits::int8 AS waits
FROM pg_catalog.pg_stat_lock AS l
