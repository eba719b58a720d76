-- Relation locks held by this backend only (pid = pg_backend_pid()), read once per probe, never polled.
-- pg_lock_status(), the function behind the pg_locks view: reading the view would lock it (AccessShareLock on
-- pg_locks, a fast-path slot taken in the middle of a transaction whose slots are being measured).
-- No join: joining pg_class here would add lockscope's own catalog locks to the snapshot.
SELECT relation::int8      AS relation_oid,
       mode,
       fastpath,
       database = 0        AS shared_catalog,
       database::int8      AS database_oid
FROM pg_catalog.pg_lock_status()
WHERE pid = pg_catalog.pg_backend_pid()
  AND locktype = 'relation'
  AND granted
