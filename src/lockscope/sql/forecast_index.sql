-- /* lockscope */ An index named as a user would name it (the parameter, text; search_path applies): OID and kind, or no row.
SELECT c.oid::int8                                                     AS oid,
       c.relkind::text                                                 AS relkind,
       pg_catalog.quote_ident(n.nspname) || '.' || pg_catalog.quote_ident(c.relname) AS qualified
  FROM pg_catalog.pg_class c
  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
 WHERE c.oid = pg_catalog.to_regclass(%s)
