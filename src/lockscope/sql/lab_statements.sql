-- pg_stat_statements of the current database since the last reset (lab points; PG 13+ column names).
-- lockscope's own sampling and probing statements are left out. queryid matches pg_stat_activity.query_id (the
-- per-statement wait samples of a mix); rows and shared_blks_hit/read exist in every pg_stat_statements of PG 13+.
SELECT query, calls, plans, total_plan_time, total_exec_time, mean_plan_time, mean_exec_time,
       queryid, rows, shared_blks_hit, shared_blks_read
FROM pg_stat_statements
WHERE dbid = (SELECT oid FROM pg_catalog.pg_database WHERE datname = pg_catalog.current_database())
  AND calls > 0
  AND query !~* 'pg_stat_activity|pg_stat_statements|pg_locks|pg_prepared_statements|^\s*(explain|prepare|deallocate|set|reset|begin|commit|rollback|end|start)\M'
ORDER BY calls DESC
