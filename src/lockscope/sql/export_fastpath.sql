-- lockscope export-queries: fast-path relation-lock slots per backend (16 before PostgreSQL 18; from
-- max_locks_per_transaction on 18+: postinit.c InitializeFastPathLocks, the next power of 2 >= the setting, in
-- 16-slot groups, 1..1024 groups) and the setting itself. Reads settings only.
SELECT CASE WHEN pg_catalog.current_setting('server_version_num')::int4 < 180000 THEN 16
            ELSE coalesce((SELECT min(1 << g) FROM pg_catalog.generate_series(4, 14) AS g
                           WHERE (1 << g) >= pg_catalog.current_setting('max_locks_per_transaction')::int4),
                          16384)
       END::int8                                                                  AS slots_per_backend,
       pg_catalog.current_setting('max_locks_per_transaction')::int8              AS max_locks_per_transaction
