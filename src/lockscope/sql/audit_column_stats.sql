-- lockscope audit: one most common value and the histogram bounds of scalar columns of some tables, as text,
-- to derive parameter values for custom-plan probes. Parameter: array of table OIDs. pg_stats shows only the
-- columns the current user may read.
SELECT /* lockscope */ DISTINCT ON (c.oid, s.attname) c.oid::int8 AS table_oid, s.attname::text AS column_name,
       (s.most_common_vals::text::text[])[1] AS mcv,
       s.histogram_bounds::text::text[]       AS histogram
FROM pg_catalog.pg_stats s
JOIN pg_catalog.pg_namespace n ON n.nspname = s.schemaname
JOIN pg_catalog.pg_class c ON c.relnamespace = n.oid AND c.relname = s.tablename
JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attname = s.attname
JOIN pg_catalog.pg_type t ON t.oid = a.atttypid
WHERE c.oid = ANY(%s::oid[]) AND t.typcategory <> 'A'
ORDER BY c.oid, s.attname, s.inherited  -- own statistics first; a partitioned table has inherited ones only
