-- lockscope audit: every table, partitioned table, partition (any depth), foreign table and materialized view of
-- the current database, one row each (set-based: one round trip for the whole catalog). System schemas excluded.
SELECT /* lockscope */ DISTINCT ON (c.oid)
       c.oid::int8                                                AS oid,
       n.nspname::text                                            AS schema,
       c.relname::text                                            AS name,
       quote_ident(n.nspname) || '.' || quote_ident(c.relname)    AS qualified,
       c.relkind::text                                            AS relkind,
       c.relispartition                                           AS is_partition,
       inh.inhparent::int8                                        AS parent_oid,
       CASE WHEN c.relispartition THEN pg_catalog.pg_get_expr(c.relpartbound, c.oid) END AS partition_bound,
       pt.partstrat::text                                         AS partition_strategy,
       CASE WHEN c.relkind = 'p' THEN pg_catalog.pg_get_partkeydef(c.oid) END AS partition_key,
       greatest(c.reltuples, 0)::float8                           AS reltuples,
       (coalesce(s.seq_scan, 0) + coalesce(s.idx_scan, 0))::int8  AS scans
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_catalog.pg_inherits inh ON inh.inhrelid = c.oid
LEFT JOIN pg_catalog.pg_partitioned_table pt ON pt.partrelid = c.oid
LEFT JOIN pg_catalog.pg_stat_all_tables s ON s.relid = c.oid
WHERE c.relkind IN ('r', 'p', 'm', 'f')
  AND n.nspname NOT IN ('pg_catalog', 'information_schema')
  AND n.nspname !~ '^pg_toast'
  AND n.nspname !~ '^pg_temp_'
ORDER BY c.oid, inh.inhseqno
