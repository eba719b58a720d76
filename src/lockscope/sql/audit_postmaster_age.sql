-- lockscope audit: seconds since the postmaster started (PG 13 has no pg_stat_statements_info reset time).
SELECT /* lockscope */ extract(epoch FROM now() - pg_catalog.pg_postmaster_start_time())::float8 AS s
