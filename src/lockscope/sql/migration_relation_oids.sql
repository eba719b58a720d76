-- The relations that exist before a migration's transaction begins (lockscope.migration): a strong lock on one of
-- them makes other sessions' weak locks on it leave the fast path; a relation the transaction creates is seen by
-- no other session until it commits.
SELECT coalesce(array_agg(oid::int8), '{}') AS oids
FROM pg_catalog.pg_class
