-- lockscope forecast: what pg_stat_statements recorded of one statement (by query identifier, as EXPLAIN VERBOSE
-- shows it) in this database: its calls, mean and total times (ms). @schema@ is filled in by lockscope. Parameter:
-- queryid.
SELECT /* lockscope */ sum(s.calls)::int8                         AS calls,
       sum(s.total_exec_time) / nullif(sum(s.calls), 0)           AS mean_exec_ms,
       sum(s.total_plan_time) / nullif(sum(s.plans), 0)           AS mean_plan_ms,
       sum(s.plans)::int8                                         AS plans,
       sum(s.total_exec_time)                                     AS total_exec_ms,
       sum(s.total_plan_time)                                     AS total_plan_ms
FROM @schema@.pg_stat_statements(false) s
WHERE s.queryid = %s AND s.dbid = (SELECT oid FROM pg_catalog.pg_database WHERE datname = current_database())
