-- Candidates per function name and argument count, for typing $n arguments (parse_func.c func_select_candidate:
-- one candidate fixes the type; among several, unknown-type arguments prefer the string category).
-- Parameter: array of function names.
SELECT p.proname::text AS name,
       p.pronargs::int AS nargs,
       count(*)::int AS candidates,
       count(*) FILTER (WHERE NOT EXISTS (SELECT 1 FROM unnest(p.proargtypes::oid[]) a
                                          JOIN pg_catalog.pg_type t ON t.oid = a WHERE t.typtype = 'p'))::int
                                                                                       AS concrete,
       count(*) FILTER (WHERE NOT EXISTS (SELECT 1 FROM unnest(p.proargtypes::oid[]) a
                                          JOIN pg_catalog.pg_type t ON t.oid = a WHERE t.typcategory <> 'S'))::int
                                                                                       AS all_string
FROM pg_catalog.pg_proc p
WHERE p.proname = ANY(%s::text[]) AND pg_catalog.pg_function_is_visible(p.oid)
GROUP BY p.proname, p.pronargs
