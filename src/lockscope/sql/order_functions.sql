-- What parse analysis needs of the functions a statement calls, by name over the visible candidates.
-- Parameter: array of function names.
SELECT p.proname::text                  AS name,
       bool_or(p.provolatile = 'v')     AS is_volatile,
       bool_or(p.prokind = 'a')         AS is_aggregate,
       bool_or(p.prokind = 'w')         AS is_window,
       bool_or(p.proretset)             AS returns_set
FROM pg_catalog.pg_proc p
WHERE p.proname = ANY(%s::text[]) AND pg_catalog.pg_function_is_visible(p.oid)
GROUP BY p.proname
