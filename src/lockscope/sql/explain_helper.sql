-- Is the EXPLAIN helper (docs/privileges.md, contrib/explain_helper.sql) there, and may this role call it?
-- Parameter: its signature, e.g. 'lockscope.explain(text, text)'. Catalog reads only.
SELECT p.oid::int8                                                  AS function_oid,
       p.prosecdef                                                  AS security_definer,
       pg_catalog.has_function_privilege(p.oid, 'EXECUTE')          AS may_execute,
       pg_catalog.pg_get_userbyid(p.proowner)::text                 AS owner
FROM pg_catalog.pg_proc p
WHERE p.oid = pg_catalog.to_regprocedure(%s)
