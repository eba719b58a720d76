-- lockscope audit: the query texts of the chosen statements only. Parameter: array of queryids.
SELECT /* lockscope */ s.queryid::int8 AS queryid, s.userid::int8 AS userid, r.rolname::text AS rolname, s.query
FROM @schema@.pg_stat_statements(true) s
LEFT JOIN pg_catalog.pg_roles r ON r.oid = s.userid
WHERE s.dbid = (SELECT oid FROM pg_catalog.pg_database WHERE datname = current_database())
  AND s.queryid = ANY(%s::int8[])
