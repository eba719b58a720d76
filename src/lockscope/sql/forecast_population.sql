-- /* lockscope */ Connections doing work: client backends of the current database, lockscope's own left out, that ran
-- a statement since the interval began (their state_change at or after it: every state change is stamped, pgstat.c
-- pgstat_report_activity) or run one now. In a closed loop they are the clients.
SELECT count(*)::int AS connections
  FROM pg_catalog.pg_stat_activity a
 WHERE a.datname = pg_catalog.current_database()
   AND a.backend_type = 'client backend'
   AND a.pid <> pg_catalog.pg_backend_pid()
   AND a.application_name IS DISTINCT FROM 'lockscope'
   AND (a.state = 'active' OR a.state_change >= %s)
