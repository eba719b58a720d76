-- lockscope export-queries (PostgreSQL 19+ only: pg_stat_lock, commit 4019f725f5): per lock type, locks that
-- could not use a fast-path slot because the backend's group was full (fastpath_exceeded) and lock waits longer
-- than deadlock_timeout (waits), cumulative since the last pg_stat_reset_shared('lock'). Reads cumulative
-- statistics: no lock-manager cost. PG 19 counts overflows but cannot name the statement: lockscope watch can.
SELECT l.locktype::text AS locktype, l.fastpath_exceeded::int8 AS fastpath_exceeded_total, l.waits::int8 AS waits_total
FROM pg_catalog.pg_stat_lock AS l
