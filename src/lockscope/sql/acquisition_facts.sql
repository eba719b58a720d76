-- Catalog facts the acquisition-order model needs, for the given relations and every descendant
-- (partitions / inheritance children at any depth). Parameter: array of relation OIDs.
-- index_oids: live indexes in OID order, as relcache.c RelationGetIndexList returns them (indislive only).
-- bound: the partition bound as pg_get_expr prints it; partstrat/key_types/key_collations for a partitioned table.
WITH RECURSIVE tree AS (
    SELECT c.oid FROM pg_catalog.pg_class c WHERE c.oid = ANY(%s::oid[])
    UNION
    SELECT i.inhrelid FROM pg_catalog.pg_inherits i JOIN tree t ON i.inhparent = t.oid
)
SELECT c.oid::int8                                        AS relation_oid,
       c.relkind::text                                    AS relkind,
       (SELECT min(i.inhparent)::int8 FROM pg_catalog.pg_inherits i WHERE i.inhrelid = c.oid) AS parent_oid,
       CASE WHEN c.relispartition THEN pg_catalog.pg_get_expr(c.relpartbound, c.oid) END AS bound,
       pt.partstrat::text                                 AS partstrat,
       ARRAY(SELECT x.indexrelid::int8 FROM pg_catalog.pg_index x
             WHERE x.indrelid = c.oid AND x.indislive ORDER BY x.indexrelid) AS index_oids,
       ARRAY(SELECT CASE WHEN k.attnum = 0 THEN NULL ELSE pg_catalog.format_type(a.atttypid, a.atttypmod) END
             FROM unnest(pt.partattrs::int2[]) WITH ORDINALITY AS k(attnum, n)
             LEFT JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
             ORDER BY k.n)                                AS key_types,
       ARRAY(SELECT CASE WHEN co.oid IS NULL THEN NULL
                         ELSE quote_ident(cn.nspname) || '.' || quote_ident(co.collname) END
             FROM unnest(pt.partcollation::oid[]) WITH ORDINALITY AS k(colloid, n)
             LEFT JOIN pg_catalog.pg_collation co ON co.oid = k.colloid
             LEFT JOIN pg_catalog.pg_namespace cn ON cn.oid = co.collnamespace
             ORDER BY k.n)                                AS key_collations
FROM tree
JOIN pg_catalog.pg_class c ON c.oid = tree.oid
LEFT JOIN pg_catalog.pg_partitioned_table pt ON pt.partrelid = c.oid
