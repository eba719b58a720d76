-- Of the function names a statement calls, those that are not built in (no function of that name in pg_catalog):
-- their bodies may lock relations when the planner inlines them or the executor runs them. Parameter: names.
SELECT DISTINCT f.name::text AS name
FROM unnest(%s::text[]) AS f(name)
WHERE NOT EXISTS (SELECT 1 FROM pg_catalog.pg_proc p
                  WHERE p.proname = f.name AND p.pronamespace = 'pg_catalog'::regnamespace)
ORDER BY 1
