-- The foreign keys a write on one relation fires (lockscope.execlocks, ri_triggers.c): those where it is the
-- referencing side (checks) and those where it is the referenced side (actions), with the columns and types in key
-- order, the equality operators (conpfeqop), the unique index the constraint uses (conindid) and its access method,
-- the actions and the match type. Left out: the clones PostgreSQL makes of a constraint for each partition of a
-- partitioned referenced table (conparentid set, same referencing table): they carry only that partition's action
-- triggers, while the referencing table's check trigger stays with the parent constraint (tablecmds.c
-- addFkRecurseReferenced). Catalog reads only. Parameter: the relation's OID (three times).
SELECT con.oid::int8                                                     AS constraint_oid,
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
FROM pg_catalog.pg_constraint con
JOIN pg_catalog.pg_class f ON f.oid = con.conrelid
JOIN pg_catalog.pg_namespace fn ON fn.oid = f.relnamespace
JOIN pg_catalog.pg_class p ON p.oid = con.confrelid
JOIN pg_catalog.pg_namespace pn ON pn.oid = p.relnamespace
WHERE con.contype = 'f' AND (con.conrelid = %s OR con.confrelid = %s)
  AND NOT (con.conparentid <> 0 AND con.confrelid <> %s
           AND EXISTS (SELECT 1 FROM pg_catalog.pg_constraint parent
                       WHERE parent.oid = con.conparentid AND parent.conrelid = con.conrelid))
ORDER BY con.oid
