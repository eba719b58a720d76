-- A typical value of each given column from the planner's statistics (pg_stats: the most common value, else the
-- first histogram bound), for a key the statement computes when it runs (lockscope.execlocks): the query a foreign
-- key runs is then probed with a value the planner costs as it would a real one (a NULL would prune every
-- partition and make any custom plan look cheapest). Statistics only, no table read; NULL without statistics.
-- Parameters: relation OIDs, column names (same length).
SELECT k.ord::int AS ord,
       (SELECT coalesce((s.most_common_vals::text::text[])[1], (s.histogram_bounds::text::text[])[1])
        FROM pg_catalog.pg_class c
        JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
        JOIN pg_catalog.pg_stats s ON s.schemaname = n.nspname AND s.tablename = c.relname AND s.attname = k.col
        WHERE c.oid = k.rel
        ORDER BY s.inherited DESC
        LIMIT 1) AS value
FROM unnest(%s::oid[], %s::text[]) WITH ORDINALITY AS k(rel, col, ord)
ORDER BY k.ord
