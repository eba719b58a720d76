-- Relations named in a statement, resolved as the parser resolves them (session search_path; to_regclass takes no
-- lock: regclass.c to_regclass -> RangeVarGetRelid with NoLock). Parameters: schemas (NULL = unqualified), names.
-- A qualified name is looked up in pg_class by schema and name, not by to_regclass: to_regclass raises (and the
-- server logs) "permission denied for schema" when the role lacks USAGE on it; the search path skips such schemas.
-- row_security: policies apply to this user (row_security_active), so the rewriter would add their quals.
SELECT n.ord::int                                       AS ord,
       c.oid::int8                                      AS oid,
       c.relkind::text                                  AS relkind,
       coalesce(c.relrowsecurity AND pg_catalog.row_security_active(c.oid), false) AS row_security,
       coalesce(c.relhasrules AND c.relkind <> 'v', false) AS has_rules,
       coalesce(EXISTS (SELECT 1 FROM unnest(c.reloptions) o
                        WHERE o ~* '^security_barrier=(true|on|yes|1)$'), false) AS security_barrier,
       ARRAY(SELECT a.attname::text FROM pg_catalog.pg_attribute a
             WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum) AS columns
FROM unnest(%s::text[], %s::text[]) WITH ORDINALITY AS n(schema_name, rel_name, ord)
LEFT JOIN pg_catalog.pg_class c
       ON c.oid = CASE WHEN n.schema_name IS NULL OR n.schema_name = 'pg_temp'
                 THEN pg_catalog.to_regclass(CASE WHEN n.schema_name IS NULL THEN quote_ident(n.rel_name)
                                                  ELSE 'pg_temp.' || quote_ident(n.rel_name) END)
                 ELSE (SELECT q.oid FROM pg_catalog.pg_class q JOIN pg_catalog.pg_namespace qn ON qn.oid = q.relnamespace
                       WHERE qn.nspname = n.schema_name AND q.relname = n.rel_name) END
ORDER BY n.ord
