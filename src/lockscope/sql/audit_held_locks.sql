-- lockscope audit: one pg_locks snapshot of the relation locks held by the database's active client backends, per
-- backend, with what it runs (PG 13: the query text; its pg_stat_statements entry is found by fingerprint).
-- pg_stat_get_activity(NULL), not the pg_stat_activity view: the view's joins would lock shared catalogs.
-- Read at most once a second, through Session.query_rows (paced, counted): it takes all 16 lock-partition
-- LWLocks and every backend's fast-path lock (lock.c GetLockStatusData).
SELECT a.pid::int                                        AS pid,
       NULL::int8                                        AS query_id,
       a.query::text                                     AS query,
       count(*) FILTER (WHERE NOT l.fastpath)::int       AS main_table,
       count(*) FILTER (WHERE l.fastpath)::int           AS fastpath
FROM pg_catalog.pg_stat_get_activity(NULL) a
JOIN pg_catalog.pg_locks l ON l.pid = a.pid
WHERE a.state = 'active' AND a.backend_type = 'client backend' AND a.pid <> pg_catalog.pg_backend_pid()
  AND a.datid = (SELECT oid FROM pg_catalog.pg_database WHERE datname = current_database())
  AND l.locktype = 'relation' AND l.granted
GROUP BY a.pid, a.query
