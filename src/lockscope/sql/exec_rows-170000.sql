-- The rows a write reaches, found by lockscope's own key lookup (lockscope.execlocks: the rows a DELETE or UPDATE
-- finds by its key, the rows a foreign-key action reaches, the row an INSERT ... ON CONFLICT conflicts with): the
-- partition each row is in and the listed columns as text, at most LIMIT rows. The conditions are equalities of
-- columns with values lockscope passes as parameters (`col = CAST($n AS type)`), never the statement's own
-- expressions; a READ ONLY read under the session's statement_timeout. Filled in: the columns (`t.col::text,
-- ...`, a value over 2 kB replaced by a mark; each column's stored size, pg_column_size), the relation (`[ONLY]
-- schema.table`), the conditions (`t.col = CAST(the value AS type) AND ...`). Parameters: the values, then the
-- limit.
-- PG 17+: whether each value is stored out of line (pg_column_toast_chunk_id, commit d1162cfda8; NULL for a
-- column that cannot be, false for NULL values).
SELECT t.tableoid::int8 AS leaf_oid, ARRAY[@columns@]::text[] AS vals, ARRAY[@sizes@]::int[] AS sizes,
       ARRAY[@external@]::bool[] AS ext
FROM @relation@ AS t
WHERE @quals@
LIMIT %s
