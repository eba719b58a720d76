-- lockscope audit: settings and facts beyond server_facts.sql (one row). PG 13+.
SELECT /* lockscope */ current_setting('enable_partition_pruning')                         AS enable_partition_pruning,
       now()                                                                AS now,
       pg_catalog.pg_postmaster_start_time()                                AS postmaster_start,
       (SELECT d.stats_reset FROM pg_catalog.pg_stat_database d
         WHERE d.datname = current_database())                              AS stats_reset,
       (SELECT n.nspname::text FROM pg_catalog.pg_extension e
          JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace
         WHERE e.extname = 'pg_stat_statements')                            AS pgss_schema,
       pg_catalog.pg_has_role(current_user, 'pg_read_all_stats', 'USAGE')   AS read_all_stats,
       pg_catalog.to_regclass('pg_catalog.pg_stat_lock') IS NOT NULL        AS has_pg_stat_lock,
       current_user::text                                                   AS current_user,
       (SELECT oid::int8 FROM pg_catalog.pg_database
         WHERE datname = current_database())                                AS database_oid,
       (SELECT count(*) FROM pg_catalog.pg_stat_activity
         WHERE backend_type = 'client backend')::int                        AS client_backends,
       current_setting('pg_stat_statements.track_planning', true)           AS track_planning,
       current_setting('compute_query_id', true)                            AS compute_query_id
