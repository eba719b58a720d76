-- lab ceiling: the OIDs of tables of the public schema by name. Parameter: array of names.
SELECT c.relname::text AS relname, c.oid::int8 AS oid
FROM pg_catalog.pg_class c
WHERE c.relnamespace = 'public'::regnamespace AND c.relname = ANY(%s::text[])
