-- The indexes of the tables a job's transaction holds RowExclusiveLock on (lockscope.migration): a write opens each
-- index of its target (an INSERT's, a routed row's partition: execIndexing.c ExecOpenIndices, RowExclusiveLock)
-- and releases it when the statement ends (ExecCloseIndices), so while the statement runs they take entries the
-- transaction no longer holds at its end. Parameter: array of table OIDs.
SELECT i.indrelid::int8                          AS relation_oid,
       array_agg(i.indexrelid::int8 ORDER BY i.indexrelid) AS oids
FROM pg_catalog.pg_index i
WHERE i.indrelid = ANY(%s::oid[])
GROUP BY i.indrelid
