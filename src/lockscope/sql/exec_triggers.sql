-- The user triggers of one table and their functions, for deriving the statements the triggers run
-- (lockscope.plpgsql). Catalog reads only: no lock on the table or any user relation (regclass and format_type
-- output take none). Left out: the triggers a constraint made (foreign keys' RI triggers, deferrable unique and
-- exclusion rechecks: contype f, p, u, x); kept: plain triggers, user constraint triggers, and triggers cloned
-- onto a partition from its parent. Ordered by name, the order trigger.c fires them in.
-- Parameter: the table's OID.
SELECT t.oid::int8                                             AS trigger_oid,
       t.tgname::text                                          AS tgname,
       t.tgtype::int                                           AS tgtype,
       t.tgenabled::text                                       AS tgenabled,
       t.tgattr::int2[]::int[]                                 AS tgattr,
       ARRAY(SELECT a.attname::text
             FROM unnest(t.tgattr::int2[]) WITH ORDINALITY AS u(attnum, ord)
             JOIN pg_catalog.pg_attribute a ON a.attrelid = t.tgrelid AND a.attnum = u.attnum
             ORDER BY u.ord)                                   AS tgattr_names,
       t.tgqual IS NOT NULL                                    AS has_when,
       t.tgconstraint <> 0                                     AS constraint_trigger,
       t.tgdeferrable                                          AS deferrable,
       t.tginitdeferred                                        AS initially_deferred,
       t.tgoldtable::text                                      AS old_table,
       t.tgnewtable::text                                      AS new_table,
       t.tgrelid::int8                                         AS table_oid,
       t.tgrelid::pg_catalog.regclass::text                    AS table_name,
       p.oid::int8                                             AS function_oid,
       p.proname::text                                         AS function_name,
       n.nspname::text                                         AS function_schema,
       l.lanname::text                                         AS language,
       p.prosrc                                                AS prosrc,
       p.proconfig                                             AS proconfig,
       p.proargnames                                           AS argument_names,
       ARRAY(SELECT pg_catalog.format_type(a.typ, NULL)
             FROM unnest(p.proargtypes::oid[]) WITH ORDINALITY AS a(typ, ord)
             ORDER BY a.ord)                                   AS argument_types,
       pg_catalog.current_setting('plpgsql.variable_conflict', true) AS variable_conflict,
       CASE WHEN t.tgqual IS NOT NULL THEN pg_catalog.pg_get_triggerdef(t.oid) END AS triggerdef
FROM pg_catalog.pg_trigger t
JOIN pg_catalog.pg_proc p ON p.oid = t.tgfoid
JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
JOIN pg_catalog.pg_language l ON l.oid = p.prolang
WHERE t.tgrelid = %s
  AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_constraint c
                  WHERE c.oid = t.tgconstraint AND c.contype IN ('f', 'p', 'u', 'x'))
ORDER BY t.tgname
