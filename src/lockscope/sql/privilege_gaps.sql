-- The privileges a statement's EXPLAIN needs that this session's role lacks (catalog reads only: no lock on a user
-- relation; to_regclass takes none). EXPLAIN checks the privileges of running the statement at executor start
-- (execMain.c InitPlan -> ExecCheckPermissions), without running it. Parameters: schemas (NULL = unqualified),
-- names, privileges (SELECT, INSERT, UPDATE, DELETE), one per needed privilege; the role asked about (NULL: this
-- session's; the EXPLAIN helper's owner, whose privileges the helper's EXPLAIN runs with).
-- some_columns: the role holds that privilege on some column (column privileges may still let EXPLAIN run).
SELECT c.oid::int8                                                   AS relation_oid,
       quote_ident(ns.nspname) || '.' || quote_ident(c.relname)     AS relation,
       c.relkind::text                                               AS relkind,
       w.privilege::text                                             AS privilege,
       (w.privilege <> 'DELETE'
        AND pg_catalog.has_any_column_privilege(r.who, c.oid, w.privilege)) AS some_columns,
       pg_catalog.has_schema_privilege(r.who, ns.oid, 'USAGE')       AS schema_usage
FROM unnest(%s::text[], %s::text[], %s::text[]) WITH ORDINALITY AS w(schema_name, rel_name, privilege, ord)
JOIN pg_catalog.pg_class c
  ON c.oid = CASE WHEN w.schema_name IS NULL OR w.schema_name = 'pg_temp'
                 THEN pg_catalog.to_regclass(CASE WHEN w.schema_name IS NULL THEN quote_ident(w.rel_name)
                                                  ELSE 'pg_temp.' || quote_ident(w.rel_name) END)
                 ELSE (SELECT q.oid FROM pg_catalog.pg_class q JOIN pg_catalog.pg_namespace qn ON qn.oid = q.relnamespace
                       WHERE qn.nspname = w.schema_name AND q.relname = w.rel_name) END
JOIN pg_catalog.pg_namespace ns ON ns.oid = c.relnamespace
CROSS JOIN (SELECT coalesce(%s::text, current_user)::name AS who) r
WHERE NOT pg_catalog.has_table_privilege(r.who, c.oid, w.privilege)
ORDER BY w.ord
