-- The partitions of a partitioned table, every level (pg_partition_tree, PG 12+), with their names: the plan of
-- lockscope's routing probe names the partition a row goes to by its relation name (lockscope.execlocks). Catalog
-- reads only. Parameter: the partitioned table's OID.
SELECT p.relid::int8 AS relation_oid, c.relname::text AS relname, p.isleaf AS is_leaf, p.level::int AS level
FROM pg_catalog.pg_partition_tree(%s::regclass) AS p
JOIN pg_catalog.pg_class c ON c.oid = p.relid
ORDER BY p.level, p.relid
