-- The unique indexes of one relation with their columns in key order (lockscope.execlocks: the arbiters an
-- INSERT ... ON CONFLICT may conflict on, execIndexing.c ExecCheckIndexConstraints); `plain` is false for an
-- index on an expression or with a predicate (its conflicts are not looked up by columns). Catalog reads only.
-- Parameter: the relation's OID.
SELECT i.indexrelid::int8 AS index_oid,
       (i.indexprs IS NULL AND i.indpred IS NULL) AS plain,
       coalesce(a.attname::text, '') AS column_name
FROM pg_catalog.pg_index i
CROSS JOIN LATERAL unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord)
LEFT JOIN pg_catalog.pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
WHERE i.indrelid = %s AND i.indisunique AND i.indislive
ORDER BY i.indexrelid, k.ord
