-- The functions of the names a statement calls, for typing its $n on the client (namespace.c
-- FuncnameGetCandidates: a function is a candidate when its schema is in the search path; path_position is that
-- schema's 1-based place in current_schemas(true), 0 when outside it or in this session's temporary schema).
-- Parameter: names.
SELECT p.oid::int8                                                         AS oid,
       p.proname::text                                                     AS name,
       n.nspname::text                                                     AS schema_name,
       (CASE WHEN n.oid = pg_catalog.pg_my_temp_schema() THEN 0
             ELSE coalesce(array_position(pg_catalog.current_schemas(true), n.nspname), 0) END)::int AS path_position,
       p.proargtypes::oid[]                                                AS arg_types,
       p.prorettype::int8                                                  AS result_type,
       p.proretset                                                         AS returns_set,
       p.provariadic::int8                                                 AS variadic_type,
       p.pronargdefaults::int                                              AS default_count,
       p.prokind::text                                                     AS kind
FROM pg_catalog.pg_proc p
JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
WHERE p.proname = ANY(%s::text[])
