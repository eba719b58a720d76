-- /* lockscope */ Relations by OID (the parameter, an oid[]): shared catalogs lock with database 0 (lmgr.c SetLocktagRelationOid).
SELECT c.oid::int8                                                     AS oid,
       c.relisshared                                                   AS relisshared,
       c.relkind::text                                                 AS relkind,
       pg_catalog.quote_ident(n.nspname) || '.' || pg_catalog.quote_ident(c.relname) AS qualified
  FROM pg_catalog.pg_class c
  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
 WHERE c.oid = ANY (%s::oid[])
