-- Resolve table names (search_path applies) to OIDs and their columns with their types: lockscope audit (names
-- written in a statement) and the trigger derivation (a trigger's table by its regclass text; relations a
-- function's TYPE and ROWTYPE references and row variables name). to_regclass and format_type take no lock.
-- Parameter: array of names as written.
SELECT /* lockscope */ x.name AS written, c.oid::int8 AS table_oid, a.attname::text AS column_name,
       pg_catalog.format_type(a.atttypid, a.atttypmod) AS type_name, a.attnum::int AS attnum
FROM unnest(%s::text[]) AS x(name)
JOIN pg_catalog.pg_class c ON c.oid = pg_catalog.to_regclass(x.name)
JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY x.name, a.attnum
