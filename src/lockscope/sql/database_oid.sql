-- This database's OID (pg_locks' database column; the lock partition of a relation lock hashes it).
SELECT oid::int8 AS database_oid FROM pg_catalog.pg_database WHERE datname = current_database()
