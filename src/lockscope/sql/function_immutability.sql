-- Whether functions called by name are immutable (the planner folds them, and prunes partitions by their value) in
-- every overload, in none, or in some (catalog reads only). Parameter: names.
SELECT p.proname::text                           AS name,
       bool_and(p.provolatile = 'i')             AS all_immutable,
       bool_or(p.provolatile = 'i')              AS some_immutable
FROM pg_catalog.pg_proc p
WHERE p.proname = ANY(%s::text[])
GROUP BY p.proname
