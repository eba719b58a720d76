-- Relations named in a statement, resolved as the parser resolves them (session search_path; to_regclass takes no
-- lock: regclass.c to_regclass -> RangeVarGetRelid with NoLock). Parameters: schemas (NULL = unqualified), names.
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
       ON c.oid = pg_catalog.to_regclass(CASE WHEN n.schema_name IS NULL THEN quote_ident(n.rel_name)
                                              ELSE quote_ident(n.schema_name) || '.' || quote_ident(n.rel_name) END)
ORDER BY n.ord
