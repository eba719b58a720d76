-- One pg_locks snapshot (lockscope watch --locks-every, never more than once per second): per backend, its
-- relation locks and how many of them are in the main lock table (fastpath = false) or not granted; and, for the
-- client backends of the watched database in a transaction (in_database; lockscope's own left out), what
-- audit_held_locks.sql gives diagnose: the statement it runs or last ran, its transaction's start, whether that
-- statement began it (xact_start = query_start), the relations it holds (all, and those in the main lock table).
-- Cost (pg-lock-internals.md section 6): lock.c GetLockStatusData takes each backend's fast-path LWLock, then
-- all 16 lock-partition LWLocks in shared mode while it copies the main lock table; backends that need a
-- partition exclusively (every main-table acquire and release) wait meanwhile. pg_stat_get_activity(NULL), not
-- the pg_stat_activity view (whose joins would lock shared catalogs).
SELECT l.pid,
       count(*)::int4                                                                AS relation_locks,
       count(*) FILTER (WHERE NOT l.fastpath)::int4                                  AS main_table_locks,
       count(*) FILTER (WHERE NOT l.granted)::int4                                   AS waiting_locks,
       count(*) FILTER (WHERE l.granted AND NOT l.fastpath)::int4                    AS main_table,
       count(*) FILTER (WHERE l.granted AND l.fastpath)::int4                        AS fastpath,
       (a.xact_start IS NOT NULL AND a.backend_type = 'client backend'
        AND a.application_name IS DISTINCT FROM 'lockscope'
        AND a.datid = (SELECT s.datid FROM pg_catalog.pg_stat_get_activity(pg_catalog.pg_backend_pid()) s))
                                                                                     AS in_database,
       NULL::int8                                                                    AS query_id,
       a.query::text                                                                 AS query,
       a.state::text                                                                 AS state,
       a.xact_start                                                                  AS xact_start,
       (a.xact_start = a.query_start)                                                AS starts_transaction,
       array_agg(DISTINCT l.relation::int8) FILTER (WHERE l.granted)                 AS relations,
       array_agg(DISTINCT l.relation::int8) FILTER (WHERE l.granted AND NOT l.fastpath) AS main_relations
FROM pg_catalog.pg_locks AS l
LEFT JOIN pg_catalog.pg_stat_get_activity(NULL) AS a ON a.pid = l.pid
WHERE l.locktype = 'relation' AND l.pid IS NOT NULL AND l.pid <> pg_catalog.pg_backend_pid()
GROUP BY l.pid, a.xact_start, a.backend_type, a.application_name, a.datid, a.query, a.state,
         a.query_start
