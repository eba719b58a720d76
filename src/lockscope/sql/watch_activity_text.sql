-- Statement text for query_ids without a pg_stat_statements entry: the text a backend is running now (with its
-- literals). No heavyweight locks (pg_stat_get_activity, not the view). Run only for new query_ids.
SELECT DISTINCT ON (s.query_id) s.query_id, pg_catalog.left(s.query, 1000) AS query
FROM pg_catalog.pg_stat_get_activity(NULL) AS s
WHERE s.query_id = ANY (%s::int8[]) AND s.query IS NOT NULL
