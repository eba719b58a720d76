-- Catalog facts the acquisition-order model needs, for the given relations, every descendant (partitions /
-- inheritance children at any depth) and the indexes of all of them. Parameter: array of relation OIDs.
-- index_oids: live indexes in OID order, as relcache.c RelationGetIndexList returns them (indislive only).
-- bound: the partition bound as pg_get_expr prints it; partstrat/key_types/key_collations for a partitioned table.
-- relation .. parent_relispartition: the names and roles relation_info.sql gives, so that a probe needs no
-- catalog query after its pg_locks read for the relations its statement names.
-- Every catalog is reached through its index, one look-up per relation (the LATERAL ... OFFSET 0 subqueries): the
-- planner's estimate of the recursive CTE's rows would otherwise hash all of pg_class and pg_index, sequential scans
-- that grow with the schema, not with the statement.
WITH RECURSIVE tree AS (
    SELECT c.oid, (SELECT min(i.inhparent) FROM pg_catalog.pg_inherits i WHERE i.inhrelid = c.oid) AS parent
    FROM pg_catalog.pg_class c WHERE c.oid = ANY(%s::oid[])
    UNION
    SELECT i.inhrelid, i.inhparent
    FROM tree t CROSS JOIN LATERAL (SELECT i.inhrelid, i.inhparent FROM pg_catalog.pg_inherits i
                                    WHERE i.inhparent = t.oid OFFSET 0) i
), rels AS (
    SELECT tree.oid, tree.parent, false AS is_index FROM tree
    UNION ALL
    SELECT x.indexrelid, x.indrelid, true
    FROM tree CROSS JOIN LATERAL (SELECT x.indexrelid, x.indrelid FROM pg_catalog.pg_index x
                                  WHERE x.indrelid = tree.oid OFFSET 0) x
)
SELECT c.oid::int8                                        AS relation_oid,
       quote_ident(n.nspname) || '.' || quote_ident(c.relname) AS relation,
       c.relname::text                                    AS relname,
       c.relkind::text                                    AS relkind,
       c.relispartition                                   AS relispartition,
       rels.parent::int8                                  AS parent_oid,
       p.relkind::text                                    AS parent_relkind,
       coalesce(p.relispartition, false)                  AS parent_relispartition,
       CASE WHEN c.relispartition AND NOT rels.is_index
            THEN pg_catalog.pg_get_expr(c.relpartbound, c.oid) END AS bound,
       pt.partstrat::text                                 AS partstrat,
       CASE WHEN NOT rels.is_index THEN
       ARRAY(SELECT x.indexrelid::int8 FROM pg_catalog.pg_index x
             WHERE x.indrelid = c.oid AND x.indislive ORDER BY x.indexrelid) END AS index_oids,
       CASE WHEN pt.partrelid IS NOT NULL THEN
       ARRAY(SELECT CASE WHEN k.attnum = 0 THEN NULL ELSE pg_catalog.format_type(a.atttypid, a.atttypmod) END
             FROM unnest(pt.partattrs::int2[]) WITH ORDINALITY AS k(attnum, n)
             LEFT JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
             ORDER BY k.n) END                            AS key_types,
       CASE WHEN pt.partrelid IS NOT NULL THEN
       ARRAY(SELECT CASE WHEN co.oid IS NULL THEN NULL
                         ELSE quote_ident(cn.nspname) || '.' || quote_ident(co.collname) END
             FROM unnest(pt.partcollation::oid[]) WITH ORDINALITY AS k(colloid, n)
             LEFT JOIN pg_catalog.pg_collation co ON co.oid = k.colloid
             LEFT JOIN pg_catalog.pg_namespace cn ON cn.oid = co.collnamespace
             ORDER BY k.n) END                            AS key_collations
FROM rels
CROSS JOIN LATERAL (SELECT c.oid, c.relname, c.relkind, c.relispartition, c.relnamespace, c.relpartbound
                    FROM pg_catalog.pg_class c WHERE c.oid = rels.oid OFFSET 0) c
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN LATERAL (SELECT p.relkind, p.relispartition
                   FROM pg_catalog.pg_class p WHERE p.oid = rels.parent OFFSET 0) p ON true
LEFT JOIN pg_catalog.pg_partitioned_table pt ON pt.partrelid = c.oid
