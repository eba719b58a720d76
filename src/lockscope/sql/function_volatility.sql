-- provolatile of functions (i immutable, s stable, v volatile). Parameter: array of function OIDs.
SELECT p.oid::int8 AS function_oid, p.provolatile::text AS provolatile
FROM pg_catalog.pg_proc p
WHERE p.oid = ANY(%s::oid[])
