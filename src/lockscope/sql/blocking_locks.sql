-- Run once after a lock_timeout: granted relation locks of other sessions in this database in modes that
-- conflict with the weak locks a probe takes (ShareLock and stronger conflict with RowExclusiveLock).
SELECT l.pid, l.mode, coalesce(l.relation::regclass::text, l.relation::text) AS relation
FROM pg_catalog.pg_locks l
WHERE l.locktype = 'relation'
  AND l.granted
  AND l.pid <> pg_backend_pid()
  AND l.database = (SELECT oid FROM pg_catalog.pg_database WHERE datname = current_database())
  AND l.mode IN ('ShareLock', 'ShareRowExclusiveLock', 'ExclusiveLock', 'AccessExclusiveLock')
ORDER BY (l.mode = 'AccessExclusiveLock') DESC, l.pid
LIMIT 20
