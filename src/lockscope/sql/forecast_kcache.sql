-- /* lockscope */ One snapshot of the CPU that pg_stat_kcache (2.2+: plan_* and exec_* columns) recorded per
-- statement of the current database, beside pg_stat_statements' wall time of the same statements: user + system
-- CPU (s, getrusage around planning and execution, pg_stat_kcache.c) and total planning + execution time (ms),
-- with the calls. Toplevel and nested entries of a statement are summed. @kcache@ and @pgss@ are the extensions'
-- schemas, filled in by lockscope.
SELECT p.queryid        AS queryid,
       p.calls          AS calls,
       p.wall_ms        AS wall_ms,
       k.cpu_s          AS cpu_s
  FROM (SELECT s.queryid,
               sum(s.calls)::int8                                AS calls,
               sum(s.total_exec_time + s.total_plan_time)::float8 AS wall_ms
          FROM @pgss@.pg_stat_statements(false) s
         WHERE s.dbid = (SELECT d.oid FROM pg_catalog.pg_database d WHERE d.datname = pg_catalog.current_database())
         GROUP BY s.queryid) p
  JOIN (SELECT k.queryid,
               sum(k.exec_user_time + k.exec_system_time + k.plan_user_time + k.plan_system_time)::float8 AS cpu_s
          FROM @kcache@.pg_stat_kcache() k
         WHERE k.dbid = (SELECT d.oid FROM pg_catalog.pg_database d WHERE d.datname = pg_catalog.current_database())
         GROUP BY k.queryid) k USING (queryid)
