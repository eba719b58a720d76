-- lockscope export-queries: main-lock-table relation locks per database, from pg_locks (no lockscope process).
-- Per backend first (its relation locks, those not fast-path = in the main lock table, those not granted), then
-- per database: sums, backends with any main-table relation lock, the most of one backend, and backends holding
-- more relation locks than their fast-path slots (16 before PG 18; from max_locks_per_transaction on 18+,
-- postinit.c InitializeFastPathLocks: the next power of 2 >= the setting, as 16-slot groups, 1..1024).
-- datname 'shared' = a backend holding only shared-catalog relation locks.
-- COST: pg_locks (lock.c GetLockStatusData) takes each backend's fast-path LWLock, then ALL 16 lock-partition
-- LWLocks in shared mode while it copies the main lock table: backends acquiring or releasing a main-table lock
-- wait meanwhile. Scrape it every 60 s or less often. The pg_database join takes one AccessShareLock on a shared
-- catalog (never fast-path) per scrape.
WITH slots AS (
    SELECT CASE WHEN pg_catalog.current_setting('server_version_num')::int4 < 180000 THEN 16
                ELSE coalesce((SELECT min(1 << g) FROM pg_catalog.generate_series(4, 14) AS g
                               WHERE (1 << g) >= pg_catalog.current_setting('max_locks_per_transaction')::int4),
                              16384)
           END AS per_backend
), per_backend AS (
    SELECT l.pid, max(l.database) AS database, count(*) AS relation_locks,
           count(*) FILTER (WHERE NOT l.fastpath) AS main_table, count(*) FILTER (WHERE NOT l.granted) AS waiting
    FROM pg_catalog.pg_locks AS l
    WHERE l.locktype = 'relation' AND l.pid IS NOT NULL AND l.pid <> pg_catalog.pg_backend_pid()
    GROUP BY l.pid
)
SELECT coalesce(d.datname::text, CASE WHEN b.database = 0 THEN 'shared' ELSE b.database::text END) AS datname,
       sum(b.relation_locks)::int8                                       AS relation,
       sum(b.main_table)::int8                                           AS relation_main_table,
       sum(b.waiting)::int8                                              AS relation_waiting,
       count(*) FILTER (WHERE b.main_table > 0)::int8                    AS backends_with_main_table,
       max(b.main_table)::int8                                           AS max_backend_main_table,
       count(*) FILTER (WHERE b.relation_locks > s.per_backend)::int8    AS backends_over_fastpath_slots
FROM per_backend AS b
CROSS JOIN slots AS s
LEFT JOIN pg_catalog.pg_database AS d ON d.oid = b.database
GROUP BY 1
