-- Is pg_wait_sampling usable from this database (lockscope watch --source auto|pg_wait_sampling)? The extension
-- must be created here (its functions live in extnamespace) AND loaded by shared_preload_libraries: its GUCs are
-- defined only when the library was preloaded (pg_wait_sampling.c _PG_init returns early otherwise), so a NULL
-- history_period means "created but not preloaded" (its functions would fail: shared memory not initialised).
-- sample_cpu exists from pg_wait_sampling 1.1.6; older collectors record only processes that wait
-- (collector.c probe_waits skips wait_event_info = 0). Reads catalogs of this database only (fast-path locks).
SELECT (SELECT n.nspname::text FROM pg_catalog.pg_extension AS e
          JOIN pg_catalog.pg_namespace AS n ON n.oid = e.extnamespace
        WHERE e.extname = 'pg_wait_sampling')                                        AS schema,
       (SELECT e.extversion::text FROM pg_catalog.pg_extension AS e
        WHERE e.extname = 'pg_wait_sampling')                                        AS extversion,
       pg_catalog.current_setting('pg_wait_sampling.history_size', true)             AS history_size,
       pg_catalog.current_setting('pg_wait_sampling.history_period', true)           AS history_period,
       pg_catalog.current_setting('pg_wait_sampling.profile_period', true)           AS profile_period,
       pg_catalog.current_setting('pg_wait_sampling.profile_queries', true)          AS profile_queries,
       pg_catalog.current_setting('pg_wait_sampling.sample_cpu', true)               AS sample_cpu
