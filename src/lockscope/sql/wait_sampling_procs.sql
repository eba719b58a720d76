-- Every backend's type, state and names, read once per pg_wait_sampling history read (lockscope watch --source
-- pg_wait_sampling): which pids are client backends / workers (counted as sessions) and which are alive (a live
-- process missing from a history sample was not waiting: on CPU). pg_stat_get_activity(NULL), not the view: no
-- heavyweight lock (see activity_sample.sql). Our own backend is left out.
SELECT s.pid, s.backend_type, s.state, s.datid::int8 AS datid, s.usesysid::int8 AS usesysid, s.application_name,
       s.xact_start, s.query_start
FROM pg_catalog.pg_stat_get_activity(NULL) AS s
WHERE s.pid <> pg_catalog.pg_backend_pid()
