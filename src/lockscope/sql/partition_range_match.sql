-- Which LIST or RANGE partitions of one parent may hold a key meeting every one of some comparisons (<, <=, >, >=
-- with values), decided by the server's own comparison of the key's type and collation: a RANGE partition
-- [lower, upper) meets "key < v" when lower < v, "key <= v" when lower <= v, "key > v" or "key >= v" when upper > v
-- (MINVALUE/MAXVALUE meet all), as partprune.c compares a clause's value with the bounds (not with the type's
-- discrete steps); a LIST partition when one of its values meets it. Read-only, no table read: values and bounds are
-- passed in. The key's type (format_type) and collation (a COLLATE clause or nothing) are filled in from
-- partition_keys.sql's row. Parameters: bound items as arrays of partition OIDs, kinds ('in', 'lo', 'hi'), flags
-- (0 MINVALUE, 1 a value, 2 MAXVALUE, 3 NULL) and values as text; then the comparisons' operators and values.
-- One row per partition that may hold such a key (value_index 1).
WITH b AS (SELECT * FROM unnest(%s::int8[], %s::text[], %s::int4[], %s::text[]) AS b(oid, kind, flag, val)),
     q AS (SELECT * FROM unnest(%s::text[], %s::text[]) AS q(op, v))
SELECT 1 AS value_index, p.oid::int8 AS partition_oid
FROM (SELECT DISTINCT oid FROM b) p
WHERE NOT EXISTS (
  SELECT 1 FROM q
  WHERE NOT EXISTS (
    SELECT 1 FROM b
    WHERE b.oid = p.oid
      AND CASE WHEN b.kind = 'in' THEN
                 b.flag = 1 AND CASE q.op
                   WHEN '<'  THEN CAST(b.val AS @key_type@) @collate@ <  CAST(q.v AS @key_type@) @collate@
                   WHEN '<=' THEN CAST(b.val AS @key_type@) @collate@ <= CAST(q.v AS @key_type@) @collate@
                   WHEN '>'  THEN CAST(b.val AS @key_type@) @collate@ >  CAST(q.v AS @key_type@) @collate@
                   ELSE           CAST(b.val AS @key_type@) @collate@ >= CAST(q.v AS @key_type@) @collate@ END
               WHEN q.op IN ('<', '<=') THEN
                 b.kind = 'lo' AND (b.flag = 0 OR (b.flag = 1 AND CASE q.op
                   WHEN '<' THEN CAST(b.val AS @key_type@) @collate@ <  CAST(q.v AS @key_type@) @collate@
                   ELSE          CAST(b.val AS @key_type@) @collate@ <= CAST(q.v AS @key_type@) @collate@ END))
               ELSE
                 b.kind = 'hi' AND (b.flag = 2 OR (b.flag = 1 AND
                   CAST(b.val AS @key_type@) @collate@ > CAST(q.v AS @key_type@) @collate@))
          END))
