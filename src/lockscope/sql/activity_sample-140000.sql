-- One active-session sample (PG 14+, with query_id when compute_query_id is on). Calls pg_stat_get_activity(NULL)
-- directly, not the pg_stat_activity view: the view joins the shared catalogs pg_database and pg_authid, and a
-- lock on a shared relation is never fast-path (lock.c EligibleForRelationFastPath: its database is 0), so each
-- read of the view would put 6 locks in the main lock table and take lock-partition LWLocks exclusively. The
-- function takes no heavyweight lock at all. Database and role names are resolved from watch_names (cached).
-- Our own backend is left out.
SELECT s.pid, s.backend_type, s.state, s.wait_event_type, s.wait_event, s.query_id,
       s.datid::int8 AS datid, s.usesysid::int8 AS usesysid, s.application_name, s.xact_start, s.query_start
FROM pg_catalog.pg_stat_get_activity(NULL) AS s
WHERE s.state = 'active' AND s.pid <> pg_catalog.pg_backend_pid()
