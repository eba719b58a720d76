-- lockscope export-queries: active sessions by database and wait event, one snapshot per scrape (the
-- LWLock:LockManager AAS over a range is avg_over_time of the LockManager series). pg_stat_get_activity(NULL)
-- reads backend status from shared memory without a heavyweight lock (the pg_stat_activity view would join the
-- shared catalogs pg_database and pg_authid per row); the names come from one pg_database join after grouping
-- (one AccessShareLock on a shared catalog per scrape). Not waiting: wait_event_type and wait_event 'CPU'.
SELECT coalesce(d.datname::text, '')          AS datname,
       coalesce(a.wait_event_type, 'CPU')     AS wait_event_type,
       coalesce(a.wait_event, 'CPU')          AS wait_event,
       a.sessions                             AS active_sessions
FROM (SELECT s.datid, s.wait_event_type, s.wait_event, count(*)::int8 AS sessions
      FROM pg_catalog.pg_stat_get_activity(NULL) AS s
      WHERE s.state = 'active' AND s.pid <> pg_catalog.pg_backend_pid()
      GROUP BY 1, 2, 3) AS a
LEFT JOIN pg_catalog.pg_database AS d ON d.oid = a.datid
