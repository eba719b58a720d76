-- Database and role names for the oids in activity samples; read once, and again only when an unknown oid shows
-- up (at most once per second): pg_database and pg_authid are shared catalogs (main-lock-table locks).
SELECT 'database' AS kind, d.oid::int8 AS oid, d.datname::text AS name FROM pg_catalog.pg_database AS d
UNION ALL
SELECT 'role', r.oid::int8, r.rolname::text FROM pg_catalog.pg_roles AS r
