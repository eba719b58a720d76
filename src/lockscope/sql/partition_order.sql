-- The server's own order of one LIST or RANGE parent's partition bound values: partbounds.c create_list_bounds /
-- create_range_bounds sort them with the partition key's btree comparison and collation, and so does this ORDER BY.
-- One row per (partition, bound value), sorted. The key column's type (format_type) and collation (a COLLATE clause,
-- or nothing) are filled in by lockscope from acquisition_facts.sql's row of the parent: the catalog's own text.
-- Parameters: arrays of partition OIDs, flags (0 MINVALUE, 1 a value, 2 MAXVALUE, 3 NULL) and the bound values as
-- text (NULL where the flag says it all), each cast to the key's type here.
SELECT v.oid
FROM unnest(%s::int8[], %s::int4[], %s::text[]) AS v(oid, flag, val)
ORDER BY v.flag, CAST(v.val AS @key_type@) @collate@, v.oid
