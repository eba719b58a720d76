-- Indexes of the locked tables/partitions whose names a plan's index scan nodes show (EXPLAIN prints the index's
-- relname, quoted as needed, without schema). Parameters: array of table OIDs, array of index names.
SELECT i.indexrelid::int8 AS index_oid,
       c.relname::text    AS relname,
       i.indrelid::int8   AS table_oid
FROM pg_catalog.pg_index i
JOIN pg_catalog.pg_class c ON c.oid = i.indexrelid
WHERE i.indrelid = ANY(%s::oid[])
  AND c.relname = ANY(%s::text[])
ORDER BY i.indexrelid
