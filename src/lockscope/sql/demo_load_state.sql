-- What the contended demo load still needs on a scratch server: pgbench_accounts, pg_stat_statements
-- (available in the installation, and named in shared_preload_libraries).
select pg_catalog.to_regclass('public.pgbench_accounts') is not null as has_accounts,
       exists (select from pg_catalog.pg_available_extensions where name = 'pg_stat_statements') as has_pgss,
       position('pg_stat_statements' in current_setting('shared_preload_libraries')) > 0 as pgss_preloaded
