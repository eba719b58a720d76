-- One pg_locks snapshot (lockscope watch --locks-every, never more than once per second): per backend, its
-- relation locks and how many of them are in the main lock table (fastpath = false) or not granted.
-- Cost (pg-lock-internals.md section 6): lock.c GetLockStatusData takes each backend's fast-path LWLock, then
-- all 16 lock-partition LWLocks in shared mode while it copies the main lock table; backends that need a
-- partition exclusively (every main-table acquire and release) wait meanwhile.
SELECT l.pid,
       count(*)::int4                                  AS relation_locks,
       count(*) FILTER (WHERE NOT l.fastpath)::int4     AS main_table_locks,
       count(*) FILTER (WHERE NOT l.granted)::int4      AS waiting_locks
FROM pg_catalog.pg_locks AS l
WHERE l.locktype = 'relation' AND l.pid IS NOT NULL AND l.pid <> pg_catalog.pg_backend_pid()
GROUP BY l.pid
