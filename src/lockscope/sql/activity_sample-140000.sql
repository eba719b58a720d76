-- One active-session sample (PG 14+, with query_id when compute_query_id is on). Reads shared memory only:
-- no heavyweight locks, no lock-manager LWLocks. Our own backend is left out.
SELECT pid, backend_type, state, wait_event_type, wait_event, query_id, datname::text,
       usename::text, application_name, xact_start, query_start
FROM pg_catalog.pg_stat_activity
WHERE state = 'active' AND pid <> pg_backend_pid()
