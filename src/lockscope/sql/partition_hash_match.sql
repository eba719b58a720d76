-- Which HASH partitions of one parent hold each of some key values: the server's own partition hash
-- (partbounds.c satisfies_hash_partition, the function a hash partition's constraint calls; it opens the parent
-- AccessShareLock, reads no row). The key's type is filled in from partition_keys.sql's row. Parameters: the
-- parent's OID, arrays of partition OIDs, moduli and remainders, then the key values as text.
SELECT q.n::int AS value_index, b.oid::int8 AS partition_oid
FROM unnest(%s::int8[], %s::int4[], %s::int4[]) AS b(oid, modulus, remainder)
CROSS JOIN unnest(%s::text[]) WITH ORDINALITY AS q(v, n)
WHERE q.v IS NOT NULL
  AND pg_catalog.satisfies_hash_partition(%s::oid, b.modulus, b.remainder, CAST(q.v AS @key_type@))
