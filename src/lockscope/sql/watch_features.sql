-- What this server offers lockscope watch, detected from the catalog once per connection (never by version):
-- PG19's pg_stat_lock with fastpath_exceeded (commit 4019f725f5), the pg_stat_statements extension in this
-- database (its schema), and compute_query_id (NULL before PG 14).
SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_attribute AS a
               WHERE a.attrelid = pg_catalog.to_regclass('pg_catalog.pg_stat_lock')
                 AND a.attname = 'fastpath_exceeded' AND NOT a.attisdropped)           AS has_stat_lock,
       (SELECT n.nspname::text FROM pg_catalog.pg_extension AS e
          JOIN pg_catalog.pg_namespace AS n ON n.oid = e.extnamespace
        WHERE e.extname = 'pg_stat_statements')                                       AS pgss_schema,
       pg_catalog.current_setting('compute_query_id', true)                           AS compute_query_id
