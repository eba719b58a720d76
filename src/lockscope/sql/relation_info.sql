-- Names and roles of locked relations (after the pg_locks snapshot, so its own locks do not count).
-- Parameter: array of relation OIDs.
SELECT c.oid::int8                                   AS relation_oid,
       quote_ident(n.nspname) || '.' || quote_ident(c.relname) AS relation,
       c.relname::text                               AS relname,
       c.relkind::text                               AS relkind,
       c.relispartition                              AS relispartition,
       coalesce(i.indrelid, inh.inhparent, toast_owner.oid)::int8 AS parent_oid,
       t.relkind::text                               AS parent_relkind,
       coalesce(t.relispartition, false)             AS parent_relispartition
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_catalog.pg_index i ON i.indexrelid = c.oid
LEFT JOIN pg_catalog.pg_inherits inh ON inh.inhrelid = c.oid AND c.relkind IN ('r', 'p', 'f')
LEFT JOIN pg_catalog.pg_class toast_owner ON c.relkind = 't' AND toast_owner.reltoastrelid = c.oid
LEFT JOIN pg_catalog.pg_class t ON t.oid = i.indrelid
WHERE c.oid = ANY(%s::oid[])
