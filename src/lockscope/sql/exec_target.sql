-- What a real execution of DML on one relation touches besides what EXPLAIN locks (lockscope.execlocks): its kind,
-- its live indexes in OID order (execIndexing.c ExecOpenIndices opens RelationGetIndexList), its TOAST relation and
-- that relation's index, its partition key columns (NULL for an expression key), its ancestors, nearest first, and
-- whether it is its parent's default partition, and its size at the last VACUUM or ANALYZE (pg_class.relpages).
-- Catalog reads only: no lock on the relation. Parameter: the relation's OID.
SELECT c.oid::int8                                                       AS relation_oid,
       quote_ident(n.nspname) || '.' || quote_ident(c.relname)           AS relation,
       c.relkind::text                                                   AS relkind,
       ARRAY(SELECT i.indexrelid::int8 FROM pg_catalog.pg_index i
             WHERE i.indrelid = c.oid AND i.indislive ORDER BY i.indexrelid) AS index_oids,
       nullif(c.reltoastrelid, 0)::int8                                  AS toast_oid,
       (SELECT i.indexrelid::int8 FROM pg_catalog.pg_index i
        WHERE c.reltoastrelid <> 0 AND i.indrelid = c.reltoastrelid ORDER BY i.indexrelid LIMIT 1) AS toast_index_oid,
       pt.partstrat::text                                                AS partstrat,
       CASE WHEN pt.partrelid IS NOT NULL AND NOT (0 = ANY (pt.partattrs::int2[])) THEN
            ARRAY(SELECT a.attname::text FROM unnest(pt.partattrs::int2[]) WITH ORDINALITY AS k(attnum, ord)
                  JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum ORDER BY k.ord)
       END                                                               AS partition_key_columns,
       ARRAY(SELECT a.relid::int8 FROM pg_catalog.pg_partition_ancestors(c.oid) WITH ORDINALITY AS a(relid, ord)
             WHERE a.relid <> c.oid ORDER BY a.ord)                      AS ancestor_oids,
       EXISTS (SELECT 1 FROM pg_catalog.pg_partitioned_table d WHERE d.partdefid = c.oid) AS default_partition,
       c.relpages::int8                                                  AS relpages
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_catalog.pg_partitioned_table pt ON pt.partrelid = c.oid
WHERE c.oid = %s
