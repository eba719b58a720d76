-- Every lock-table entry this backend holds, granted, read after each statement a scratch server runs for real
-- (lockscope.executed). pg_lock_status(), not the pg_locks view: the view's own AccessShareLock would take a
-- fast-path slot in the middle of the transaction being measured (lockfuncs.c pg_lock_status: fast-path slots,
-- then the main lock table).
SELECT locktype,
       relation::int8      AS relation_oid,
       mode,
       fastpath,
       database::int8      AS database_oid
FROM pg_catalog.pg_lock_status()
WHERE pid = pg_catalog.pg_backend_pid()
  AND granted
