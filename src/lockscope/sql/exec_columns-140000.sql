-- The columns of one relation with what writing a row evaluates (lockscope.execlocks): the type, and the sequence
-- a default calls nextval on (a serial's or an explicit nextval default: pg_attrdef depends on the sequence) or an
-- identity column's sequence (pg_depend deptype 'i'), the default's expression (pg_get_expr), and whether a value
-- can be stored out of line (a varlena whose storage is not plain: toast_internals.c) with what the TOAST decision
-- reads (heaptoast.c: length, alignment, storage, compression; PG 14+: attcompression, default_toast_compression). Catalog reads
-- only. Parameter: the relation's OID.
SELECT a.attnum::int                                                     AS attnum,
       a.attname::text                                                   AS name,
       pg_catalog.format_type(a.atttypid, a.atttypmod)                   AS type_name,
       a.attgenerated::text <> ''                                        AS generated,
       ad.oid IS NOT NULL                                                AS has_default,
       pg_catalog.pg_get_expr(ad.adbin, ad.adrelid)                      AS default_expr,
       a.attlen = -1 AND a.attstorage <> 'p'                             AS toastable,
       a.attlen::int                                                     AS attlen,
       a.attalign::text                                                  AS attalign,
       a.attstorage::text                                                AS attstorage,
       a.attcompression::text                                            AS attcompression,
       pg_catalog.current_setting('default_toast_compression')           AS default_compression,
       coalesce(
         (SELECT d.refobjid::int8 FROM pg_catalog.pg_depend d
          JOIN pg_catalog.pg_class s ON s.oid = d.refobjid AND s.relkind = 'S'
          WHERE d.classid = 'pg_catalog.pg_attrdef'::regclass AND d.objid = ad.oid
            AND d.refclassid = 'pg_catalog.pg_class'::regclass
          ORDER BY d.refobjid LIMIT 1),
         (SELECT d.objid::int8 FROM pg_catalog.pg_depend d
          WHERE a.attidentity <> '' AND d.classid = 'pg_catalog.pg_class'::regclass
            AND d.refclassid = 'pg_catalog.pg_class'::regclass AND d.refobjid = a.attrelid
            AND d.refobjsubid = a.attnum AND d.deptype = 'i'
          LIMIT 1))                                                      AS sequence_oid
FROM pg_catalog.pg_attribute a
LEFT JOIN pg_catalog.pg_attrdef ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum
WHERE a.attrelid = %s AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attnum
