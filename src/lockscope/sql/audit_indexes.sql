-- lockscope audit: every index (live or not) of the relations audit_relations.sql returns, one row each, with what
-- decides whether it may be dropped (unique, primary key, exclusion, replica identity, any constraint using it) and
-- what decides duplicates and redundancy (keys, opclasses, collations, options, expressions, predicate).
SELECT /* lockscope */ i.indexrelid::int8                                         AS oid,
       i.indrelid::int8                                           AS table_oid,
       n.nspname::text                                            AS schema,
       c.relname::text                                            AS name,
       quote_ident(n.nspname) || '.' || quote_ident(c.relname)    AS qualified,
       c.relkind::text                                            AS relkind,
       am.amname::text                                            AS am,
       i.indisvalid                                               AS valid,
       i.indislive                                                AS live,
       i.indisunique                                              AS is_unique,
       i.indisprimary                                             AS is_primary,
       i.indisexclusion                                           AS is_exclusion,
       i.indisreplident                                           AS is_replica_identity,
       con.conname                                                AS constraint_name,
       i.indnkeyatts::int                                         AS key_columns,
       i.indnatts::int                                            AS all_columns,
       i.indkey::text                                             AS indkey,
       i.indclass::text                                           AS indclass,
       i.indcollation::text                                       AS indcollation,
       i.indoption::text                                          AS indoption,
       CASE WHEN i.indexprs IS NOT NULL THEN pg_catalog.pg_get_expr(i.indexprs, i.indrelid) END AS expressions,
       CASE WHEN i.indpred IS NOT NULL THEN pg_catalog.pg_get_expr(i.indpred, i.indrelid) END AS predicate,
       inh.inhparent::int8                                        AS parent_index_oid,
       coalesce(s.idx_scan, 0)::int8                              AS idx_scan,
       CASE WHEN c.relkind = 'i' THEN pg_catalog.pg_relation_size(c.oid) ELSE 0 END::int8 AS size_bytes
FROM pg_catalog.pg_index i
JOIN pg_catalog.pg_class c ON c.oid = i.indexrelid
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
JOIN pg_catalog.pg_class t ON t.oid = i.indrelid
JOIN pg_catalog.pg_namespace tn ON tn.oid = t.relnamespace
JOIN pg_catalog.pg_am am ON am.oid = c.relam
LEFT JOIN (SELECT conindid, min(conname)::text AS conname
           FROM pg_catalog.pg_constraint
           WHERE conindid <> 0 AND contype IN ('p', 'u', 'x', 'f')
           GROUP BY conindid) con ON con.conindid = i.indexrelid
LEFT JOIN pg_catalog.pg_inherits inh ON inh.inhrelid = i.indexrelid
LEFT JOIN pg_catalog.pg_stat_all_indexes s ON s.indexrelid = i.indexrelid
WHERE t.relkind IN ('r', 'p', 'm', 'f')
  AND tn.nspname NOT IN ('pg_catalog', 'information_schema')
  AND tn.nspname !~ '^pg_toast'
  AND tn.nspname !~ '^pg_temp_'
