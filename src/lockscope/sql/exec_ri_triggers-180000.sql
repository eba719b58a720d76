-- The foreign-key triggers of one relation (lockscope.execlocks, trigger.c and ri_triggers.c): the checks on a
-- referencing table or partition (RI_FKey_check_ins/upd) and the actions on a referenced table or partition
-- (RI_FKey_noaction_del, RI_FKey_cascade_upd, ...), each with its constraint (a partition's is a clone of its
-- parent's: conparentid), the root of that constraint's clones (ri_triggers.c get_ri_constraint_root: PG 14+ keys
-- the SPI plans of all clones by it), the columns and types in key order, the equality operators, the unique index
-- (conindid) and its access method, the actions and the match type. Ordered by trigger name, the order trigger.c
-- fires them in. Catalog reads only. Parameter: the relation's OID.
WITH RECURSIVE up(start_oid, oid, parent) AS (
    SELECT c.oid, c.oid, c.conparentid FROM pg_catalog.pg_constraint c
    WHERE c.oid IN (SELECT t.tgconstraint FROM pg_catalog.pg_trigger t WHERE t.tgrelid = %s)
  UNION ALL
    SELECT up.start_oid, p.oid, p.conparentid FROM up JOIN pg_catalog.pg_constraint p ON p.oid = up.parent
    WHERE up.parent <> 0
)
SELECT t.oid::int8                                                       AS trigger_oid,
       t.tgname::text                                                    AS tgname,
       t.tgtype::int                                                     AS tgtype,
       t.tgenabled::text                                                 AS tgenabled,
       pr.proname::text                                                  AS function_name,
       t.tgdeferrable                                                    AS deferrable,
       t.tginitdeferred                                                  AS initially_deferred,
       (SELECT up.oid::int8 FROM up WHERE up.start_oid = con.oid AND up.parent = 0 LIMIT 1) AS root_constraint_oid,
       con.oid::int8                                                     AS constraint_oid,
       con.conname::text                                                 AS name,
       con.conrelid::int8                                                AS fk_oid,
       quote_ident(fn.nspname) || '.' || quote_ident(f.relname)          AS fk_relation,
       f.relkind::text                                                   AS fk_relkind,
       con.confrelid::int8                                               AS pk_oid,
       quote_ident(pn.nspname) || '.' || quote_ident(p.relname)          AS pk_relation,
       p.relkind::text                                                   AS pk_relkind,
       ARRAY(SELECT quote_ident(a.attname) FROM unnest(con.conkey) WITH ORDINALITY AS k(attnum, ord)
             JOIN pg_catalog.pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.attnum
             ORDER BY k.ord)                                             AS fk_columns,
       ARRAY(SELECT pg_catalog.format_type(a.atttypid, a.atttypmod)
             FROM unnest(con.conkey) WITH ORDINALITY AS k(attnum, ord)
             JOIN pg_catalog.pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.attnum
             ORDER BY k.ord)                                             AS fk_types,
       ARRAY(SELECT quote_ident(a.attname) FROM unnest(con.confkey) WITH ORDINALITY AS k(attnum, ord)
             JOIN pg_catalog.pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.attnum
             ORDER BY k.ord)                                             AS pk_columns,
       ARRAY(SELECT pg_catalog.format_type(a.atttypid, a.atttypmod)
             FROM unnest(con.confkey) WITH ORDINALITY AS k(attnum, ord)
             JOIN pg_catalog.pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.attnum
             ORDER BY k.ord)                                             AS pk_types,
       ARRAY(SELECT 'OPERATOR(' || quote_ident(o_n.nspname) || '.' || o.oprname || ')'
             FROM unnest(con.conpfeqop) WITH ORDINALITY AS k(opr, ord)
             JOIN pg_catalog.pg_operator o ON o.oid = k.opr
             JOIN pg_catalog.pg_namespace o_n ON o_n.oid = o.oprnamespace
             ORDER BY k.ord)                                             AS pf_operators,
       con.conindid::int8                                                AS index_oid,
       (SELECT am.amname::text FROM pg_catalog.pg_class ic JOIN pg_catalog.pg_am am ON am.oid = ic.relam
        WHERE ic.oid = con.conindid)                                     AS index_am,
       con.confupdtype::text                                             AS on_update,
       con.confdeltype::text                                             AS on_delete,
       con.confmatchtype::text                                           AS match_type,
       con.condeferred                                                   AS deferred,
       con.conperiod                                                     AS temporal
FROM pg_catalog.pg_trigger t
JOIN pg_catalog.pg_proc pr ON pr.oid = t.tgfoid
JOIN pg_catalog.pg_constraint con ON con.oid = t.tgconstraint AND con.contype = 'f'
JOIN pg_catalog.pg_class f ON f.oid = con.conrelid
JOIN pg_catalog.pg_namespace fn ON fn.oid = f.relnamespace
JOIN pg_catalog.pg_class p ON p.oid = con.confrelid
JOIN pg_catalog.pg_namespace pn ON pn.oid = p.relnamespace
WHERE t.tgrelid = %s
ORDER BY t.tgname COLLATE "C"
