-- The number of shared lock-table entries this backend holds outside the fast path (one per locked object, a LOCK
-- of lock.c keyed by its LOCKTAG): migration_locks.sql's rows counted on the server, for the reads in the middle of
-- a migration's transaction (lockscope.migration), where only the total matters. pg_lock_status() still copies
-- every backend's locks (lockfuncs.c pg_lock_status, O(entries) per read); only the rows shipped are saved. The
-- function, not the pg_locks view: the view's own AccessShareLock would take a slot in the transaction measured.
SELECT count(*)::int8 AS entries
FROM (SELECT 1
      FROM pg_catalog.pg_lock_status()
      WHERE pid = pg_catalog.pg_backend_pid()
        AND granted
        AND NOT fastpath
      -- as migration_locks.sql: xid has no ordering nor hash opclass on every major, grouped as text
      GROUP BY locktype, database, relation, page, tuple, virtualxid::text, transactionid::text, classid, objid,
               objsubid) AS e
