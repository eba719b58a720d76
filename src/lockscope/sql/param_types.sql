-- The data types parse analysis may meet while typing a statement's $n on the client (parse_coerce.c TypeCategory,
-- IsPreferredType, getBaseType, get_element_type, get_array_type; pg_range.rngsubtype for anyrange): every type
-- except row types and arrays of row types (one per table on a large catalog; a statement that needs one is left to
-- the server). element: the array's element type when it is a true array (typelem set, varlena), else 0. No
-- parameter; reads only pg_type, pg_namespace and pg_range (no lock on user relations).
SELECT t.oid::int8                                                        AS oid,
       n.nspname::text                                                    AS schema_name,
       t.typname::text                                                    AS name,
       t.typtype::text                                                    AS kind,
       t.typcategory::text                                                AS category,
       t.typispreferred                                                   AS preferred,
       (CASE WHEN t.typelem <> 0 AND t.typlen = -1 THEN t.typelem ELSE 0 END)::int8 AS element,
       t.typarray::int8                                                   AS array_type,
       t.typbasetype::int8                                                AS base_type,
       coalesce(r.rngsubtype, 0)::int8                                    AS range_subtype,
       0::int8                                                            AS multirange_of,
       pg_catalog.pg_type_is_visible(t.oid)                               AS visible
FROM pg_catalog.pg_type t
JOIN pg_catalog.pg_namespace n ON n.oid = t.typnamespace
LEFT JOIN pg_catalog.pg_type e ON e.oid = t.typelem
LEFT JOIN pg_catalog.pg_range r ON r.rngtypid = t.oid
WHERE t.typisdefined AND t.typrelid = 0 AND coalesce(e.typrelid, 0) = 0
