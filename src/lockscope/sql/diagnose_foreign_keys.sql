-- /* lockscope */ diagnose: the foreign keys of the tables a transaction held (the parameter, an oid[]), each with the
-- relations its check can lock (ri_triggers.c RI_FKey_check runs SELECT 1 FROM [ONLY] pktable x WHERE ... FOR KEY
-- SHARE OF x as a prepared SPI plan: the planner locks the referenced table, every partition of it that survives
-- pruning, and every index of those; a generic plan, built at the 6th call per backend, every partition). Catalog
-- only: pg_constraint, pg_class, pg_index, pg_partition_tree (no rows for a table that is not partitioned). The
-- constraints PostgreSQL clones for each partition of a partitioned referenced table (conparentid set) are left
-- out: the check is the parent constraint's.
SELECT c.conname::text                                               AS constraint_name,
       c.conrelid::int8                                              AS table_oid,
       c.confrelid::int8                                             AS referenced_oid,
       (r.relkind = 'p')                                             AS referenced_partitioned,
       ARRAY(SELECT rel.oid::int8
               FROM (SELECT c.confrelid AS oid
                     UNION SELECT t.relid FROM pg_catalog.pg_partition_tree(c.confrelid) t) rel
             UNION
             SELECT i.indexrelid::int8
               FROM pg_catalog.pg_index i
              WHERE i.indrelid = c.confrelid
                 OR i.indrelid IN (SELECT t.relid FROM pg_catalog.pg_partition_tree(c.confrelid) t)
      )                                                              AS check_relations
  FROM pg_catalog.pg_constraint c
  JOIN pg_catalog.pg_class r ON r.oid = c.confrelid
 WHERE c.contype = 'f' AND c.conparentid = 0 AND c.conrelid = ANY (%s::oid[])
