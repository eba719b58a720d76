-- lockscope audit: resolve table names written in a statement (search_path applies) to OIDs and their columns.
-- Parameter: array of names as written.
SELECT /* lockscope */ x.name AS written, c.oid::int8 AS table_oid, a.attname::text AS column_name
FROM unnest(%s::text[]) AS x(name)
JOIN pg_catalog.pg_class c ON c.oid = pg_catalog.to_regclass(x.name)
JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
