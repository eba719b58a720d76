-- /* lockscope */ pg_stat_kcache in the current database (0 rows without it): its schema, the schema of the
-- pg_stat_statements it needs, and pg_stat_kcache.linux_hz (NULL when the library is not loaded: the extension's
-- functions then fail). pg_stat_kcache.c pgsk_compute_counters records an execution shorter than 3 / linux_hz s
-- with its wall time as user CPU (getrusage's tick granularity), so lockscope reads the setting with the counters.
SELECT n.nspname::text                                             AS kcache_schema,
       (SELECT pn.nspname::text
          FROM pg_catalog.pg_extension pe
          JOIN pg_catalog.pg_namespace pn ON pn.oid = pe.extnamespace
         WHERE pe.extname = 'pg_stat_statements')                  AS pgss_schema,
       pg_catalog.current_setting('pg_stat_kcache.linux_hz', true) AS linux_hz,
       e.extversion::text                                          AS version
  FROM pg_catalog.pg_extension e
  JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace
 WHERE e.extname = 'pg_stat_kcache'
