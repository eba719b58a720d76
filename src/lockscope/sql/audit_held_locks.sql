-- lockscope audit: one pg_locks snapshot of the relation locks held by the database's client backends that are in a
-- transaction (active, or idle in transaction between the statements of one), per backend, with what it runs or last
-- ran (PG 13: the text; its pg_stat_statements entry is found by fingerprint), its transaction's start, whether
-- the statement began the transaction (xact.c StartTransaction: xactStartTimestamp = stmtStartTimestamp, so
-- xact_start = query_start for the statement that opened it: autocommit, or BEGIN itself), and the relations held
-- (all, and those in the main lock table) by OID. lockscope's own sessions are left out.
-- pg_stat_get_activity(NULL), not the pg_stat_activity view: the view's joins would lock shared catalogs.
-- Read at most once a second, through Session.query_rows (paced, counted): it takes all 16 lock-partition
-- LWLocks and every backend's fast-path lock (lock.c GetLockStatusData).
SELECT a.pid::int                                                         AS pid,
       NULL::int8                                                         AS query_id,
       a.query::text                                                      AS query,
       a.state::text                                                      AS state,
       a.xact_start                                                       AS xact_start,
       (a.xact_start = a.query_start)                                     AS starts_transaction,
       count(*) FILTER (WHERE NOT l.fastpath)::int                        AS main_table,
       count(*) FILTER (WHERE l.fastpath)::int                            AS fastpath,
       array_agg(DISTINCT l.relation::int8)                               AS relations,
       array_agg(DISTINCT l.relation::int8) FILTER (WHERE NOT l.fastpath) AS main_relations
FROM pg_catalog.pg_stat_get_activity(NULL) a
JOIN pg_catalog.pg_locks l ON l.pid = a.pid
WHERE a.xact_start IS NOT NULL AND a.backend_type = 'client backend' AND a.pid <> pg_catalog.pg_backend_pid()
  AND a.application_name IS DISTINCT FROM 'lockscope'
  AND a.datid = (SELECT oid FROM pg_catalog.pg_database WHERE datname = current_database())
  AND l.locktype = 'relation' AND l.granted
GROUP BY a.pid, a.query, a.state, a.xact_start, a.query_start
