-- lockscope audit: pg_stat_statements counters of this database WITHOUT query texts (showtext = false: cheap even
-- with 50,000 entries). @schema@ and @extra@ are filled in by lockscope (quoted schema, optional PG 14+/19 columns).
SELECT /* lockscope */ s.queryid::int8 AS queryid, s.userid::int8 AS userid, s.calls::int8 AS calls@extra@
FROM @schema@.pg_stat_statements(false) s
WHERE s.dbid = (SELECT oid FROM pg_catalog.pg_database WHERE datname = current_database())
