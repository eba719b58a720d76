-- lockscope audit: the relations `pg_dump` of the current database locks, one row each (read-only, one round trip).
-- pg_dump.c getTables: `LOCK TABLE ... IN ACCESS SHARE MODE` on every table it dumps a definition, data, statistics
-- or policies of: relkind r and p only (views, materialized views, sequences and foreign tables are not locked),
-- outside pg_catalog (ACLs only), information_schema and every pg_* schema (pg_toast, pg_temp_N), and not an
-- extension's member (checkExtensionMembership: ACLs only since a70f2a57f2, back-patched to 13). LOCK TABLE without
-- ONLY also locks each table's inheritance children and partitions of any relkind (lockcmds.c LockTableRecurse).
-- The two flags (the same on every row) say which optional catalogs pg_dump reads as well.
WITH RECURSIVE dumped AS (
    SELECT c.oid
    FROM pg_catalog.pg_class c
    JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
    WHERE c.relkind IN ('r', 'p')
      AND n.nspname <> 'information_schema'
      AND n.nspname !~ '^pg_'
      AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_depend d
                      WHERE d.classid = 'pg_catalog.pg_class'::regclass AND d.objid = c.oid
                        AND d.refclassid = 'pg_catalog.pg_extension'::regclass AND d.deptype = 'e')
), locked AS (
    SELECT oid FROM dumped
    UNION
    SELECT i.inhrelid FROM pg_catalog.pg_inherits i JOIN locked l ON i.inhparent = l.oid
)
SELECT /* lockscope */ c.oid::int8 AS oid, n.nspname::text AS schema, c.relkind::text AS relkind,
       -- what makes pg_dump read two more catalogs (getTableAttrs: pg_attrdef; getTypes/dumpEnumType: pg_enum)
       EXISTS (SELECT 1 FROM pg_catalog.pg_attrdef a WHERE a.adrelid IN (SELECT oid FROM locked)) AS any_default,
       EXISTS (SELECT 1 FROM pg_catalog.pg_enum)                                                 AS any_enum
FROM locked l
JOIN pg_catalog.pg_class c ON c.oid = l.oid
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
ORDER BY c.oid
