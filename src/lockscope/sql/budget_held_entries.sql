-- The shared lock-table entries the server's other sessions hold (lockscope footprint --budget-from): one read of
-- pg_lock_status(), never polled. Entries outside the fast path, one per locked object and holder (a LOCK is shared
-- by its holders, each holder adds a PROCLOCK: the LOCK table is the one a transaction fills, lock.c NLOCKENTS),
-- counted as distinct objects. Read through Session.query_rows (paced, counted): it takes all 16 lock-partition
-- LWLocks and every backend's fast-path lock (lock.c GetLockStatusData).
SELECT count(*)::int8 AS entries
FROM (SELECT DISTINCT locktype, database, relation, page, tuple, virtualxid::text, transactionid::text, classid, objid,
                      objsubid
      FROM pg_catalog.pg_lock_status()
      WHERE NOT fastpath AND pid IS DISTINCT FROM pg_catalog.pg_backend_pid()) AS held
