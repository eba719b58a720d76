-- The partition key of partitioned tables (catalog reads only). Parameter: array of relation OIDs.
-- key_columns: the key's column names in key order (NULL for an expression); key_types: format_type of each;
-- key_collations: quoted schema.name of each column's partition collation, NULL where none.
SELECT pt.partrelid::int8                                     AS relation_oid,
       pt.partstrat::text                                     AS partstrat,
       ARRAY(SELECT a.attname::text FROM unnest(pt.partattrs::int2[]) WITH ORDINALITY AS k(attnum, n)
             LEFT JOIN pg_catalog.pg_attribute a ON a.attrelid = pt.partrelid AND a.attnum = k.attnum
             ORDER BY k.n)                                    AS key_columns,
       ARRAY(SELECT CASE WHEN k.attnum = 0 THEN NULL ELSE pg_catalog.format_type(a.atttypid, a.atttypmod) END
             FROM unnest(pt.partattrs::int2[]) WITH ORDINALITY AS k(attnum, n)
             LEFT JOIN pg_catalog.pg_attribute a ON a.attrelid = pt.partrelid AND a.attnum = k.attnum
             ORDER BY k.n)                                    AS key_types,
       ARRAY(SELECT CASE WHEN co.oid IS NULL THEN NULL
                         ELSE quote_ident(cn.nspname) || '.' || quote_ident(co.collname) END
             FROM unnest(pt.partcollation::oid[]) WITH ORDINALITY AS k(colloid, n)
             LEFT JOIN pg_catalog.pg_collation co ON co.oid = k.colloid
             LEFT JOIN pg_catalog.pg_namespace cn ON cn.oid = co.collnamespace
             ORDER BY k.n)                                    AS key_collations
FROM pg_catalog.pg_partitioned_table pt
WHERE pt.partrelid = ANY(%s::oid[])
