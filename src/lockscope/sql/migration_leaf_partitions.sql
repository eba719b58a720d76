-- The leaf partitions of a partitioned table, in OID order, each with its parent and bound (lockscope.migration_fit):
-- on lockscope's own verifying scratch server, a job's UPDATE or DELETE over every partition is rerun with the
-- partitions after the first k detached, as if its WHERE pruned them, then they are attached again. A recursive
-- walk of pg_inherits, not pg_partition_tree(): that one locks every partition (find_all_inheritors,
-- AccessShareLock), more than a production-sized lock table holds. Parameter: the partitioned table's name.
WITH RECURSIVE tree AS (
    SELECT i.inhrelid AS relid, i.inhparent AS parent
    FROM pg_catalog.pg_inherits i
    WHERE i.inhparent = %s::regclass
  UNION ALL
    SELECT i.inhrelid, i.inhparent
    FROM pg_catalog.pg_inherits i
    JOIN tree t ON i.inhparent = t.relid
)
SELECT c.oid::int8                                                  AS relation_oid,
       quote_ident(n.nspname) || '.' || quote_ident(c.relname)       AS relation,
       quote_ident(pn.nspname) || '.' || quote_ident(p.relname)      AS parent,
       pg_catalog.pg_get_expr(c.relpartbound, c.oid)                 AS bound
FROM tree t
JOIN pg_catalog.pg_class c ON c.oid = t.relid
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
JOIN pg_catalog.pg_class p ON p.oid = t.parent
JOIN pg_catalog.pg_namespace pn ON pn.oid = p.relnamespace
WHERE c.relkind <> 'p'
ORDER BY c.oid
