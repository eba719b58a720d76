-- lab ceiling: the candidate tables cal_p1.. of the spilled sets, in OID order (their lock partitions are chosen from
-- the OIDs: lockpart.lock_partition).
SELECT c.relname::text AS relname, c.oid::int8 AS oid
FROM pg_catalog.pg_class c
WHERE c.relnamespace = 'public'::regnamespace AND c.relname LIKE 'cal\_p%'
ORDER BY c.oid
