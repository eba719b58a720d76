-- Which LIST or RANGE partitions of one parent hold each of some key values, decided by the server's own comparison
-- of the key's type and collation (partbounds.c get_partition_for_tuple compares with the key's btree support
-- function; so does this). Read-only, no table read: the values and bounds are passed in. The key's type
-- (format_type) and collation (a COLLATE clause or nothing) are filled in from partition_keys.sql's row.
-- Parameters: bound items as arrays of partition OIDs, kinds ('in' a LIST value, 'lo'/'hi' a RANGE bound), flags
-- (0 MINVALUE, 1 a value, 2 MAXVALUE, 3 NULL) and bound values as text; then the key values as text.
-- One row per (value's position, partition) that holds it.
SELECT q.n::int AS value_index, b.oid::int8 AS partition_oid
FROM unnest(%s::int8[], %s::text[], %s::int4[], %s::text[]) AS b(oid, kind, flag, val)
CROSS JOIN unnest(%s::text[]) WITH ORDINALITY AS q(v, n)
WHERE q.v IS NOT NULL
GROUP BY q.n, b.oid
HAVING CASE WHEN bool_or(b.kind = 'in')
            THEN bool_or(b.flag = 1 AND CAST(b.val AS @key_type@) @collate@ = CAST(q.v AS @key_type@) @collate@)
            ELSE bool_and(CASE WHEN b.flag = 0 THEN b.kind = 'lo'
                               WHEN b.flag = 2 THEN b.kind = 'hi'
                               WHEN b.kind = 'lo' THEN CAST(q.v AS @key_type@) @collate@ >= CAST(b.val AS @key_type@) @collate@
                               ELSE CAST(q.v AS @key_type@) @collate@ < CAST(b.val AS @key_type@) @collate@ END)
       END
