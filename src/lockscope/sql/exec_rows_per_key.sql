-- How many rows of a relation share one value of a column, as the planner estimates it (pg_class.reltuples over
-- pg_stats.n_distinct; a negative n_distinct is minus the fraction of distinct rows: selfuncs.c
-- get_variable_numdistinct), for the rows a foreign-key action reaches (lockscope.execlocks). Statistics only;
-- NULL without them. Parameters: the relation's OID, the column's name.
SELECT CASE WHEN c.reltuples <= 0 OR s.n_distinct IS NULL OR s.n_distinct = 0 THEN NULL
            WHEN s.n_distinct < 0 THEN (1.0 / -s.n_distinct)::float8
            ELSE (c.reltuples / greatest(s.n_distinct, 1.0))::float8 END AS rows_per_value
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_catalog.pg_stats s ON s.schemaname = n.nspname AND s.tablename = c.relname AND s.attname = %s
WHERE c.oid = %s
ORDER BY s.inherited DESC NULLS LAST
LIMIT 1
