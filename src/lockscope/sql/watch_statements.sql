-- Normalised statement text for query_ids seen waiting on LWLock:LockManager, from pg_stat_statements (the
-- schema placeholder is replaced by the extension's schema). Run only for new query_ids, at most every 5 s.
SELECT s.queryid::int8 AS query_id, pg_catalog.left(s.query, 1000) AS query
FROM @schema@.pg_stat_statements AS s
WHERE s.queryid = ANY (%s::int8[]) AND s.query IS NOT NULL
