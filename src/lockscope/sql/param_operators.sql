-- The operators of the names a statement uses, for typing its $n on the client (namespace.c OpernameGetCandidates
-- and OpernameGetOprid; path_position as in param_functions.sql). kind b (binary) or l (prefix). Parameter: names.
SELECT o.oid::int8                                                         AS oid,
       o.oprname::text                                                     AS name,
       n.nspname::text                                                     AS schema_name,
       (CASE WHEN n.oid = pg_catalog.pg_my_temp_schema() THEN 0
             ELSE coalesce(array_position(pg_catalog.current_schemas(true), n.nspname), 0) END)::int AS path_position,
       o.oprkind::text                                                     AS kind,
       o.oprleft::int8                                                     AS left_type,
       o.oprright::int8                                                    AS right_type,
       o.oprresult::int8                                                   AS result_type
FROM pg_catalog.pg_operator o
JOIN pg_catalog.pg_namespace n ON n.oid = o.oprnamespace
WHERE o.oprname = ANY(%s::text[]) AND o.oprcode <> 0
