-- The columns (and system columns) of the relations a statement names, with their types, for typing its $n on the
-- client: names resolved as the parser resolves them (session search_path; to_regclass takes no lock: regclass.c
-- to_regclass -> RangeVarGetRelid with NoLock). Parameters: schemas (NULL = unqualified), names.
SELECT n.ord::int                   AS ord,
       c.oid::int8                  AS relation_oid,
       a.attname::text              AS column_name,
       a.atttypid::int8             AS type_oid,
       a.attnum::int                AS attnum
FROM unnest(%s::text[], %s::text[]) WITH ORDINALITY AS n(schema_name, rel_name, ord)
JOIN pg_catalog.pg_class c
  ON c.oid = CASE WHEN n.schema_name IS NULL OR n.schema_name = 'pg_temp'
                 THEN pg_catalog.to_regclass(CASE WHEN n.schema_name IS NULL THEN quote_ident(n.rel_name)
                                                  ELSE 'pg_temp.' || quote_ident(n.rel_name) END)
                 ELSE (SELECT q.oid FROM pg_catalog.pg_class q JOIN pg_catalog.pg_namespace qn ON qn.oid = q.relnamespace
                       WHERE qn.nspname = n.schema_name AND q.relname = n.rel_name) END
JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND NOT a.attisdropped
ORDER BY n.ord, a.attnum
