-- Relation locks held by this backend only (pid = pg_backend_pid()), read once per probe, never polled.
-- No join: joining pg_class here would add lockscope's own catalog locks to the snapshot.
SELECT relation::int8      AS relation_oid,
       mode,
       fastpath,
       database = 0        AS shared_catalog,
       database::int8      AS database_oid
FROM pg_catalog.pg_locks
WHERE pid = pg_backend_pid()
  AND locktype = 'relation'
  AND granted
