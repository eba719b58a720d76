-- Relation names as a statement writes them resolved under the session's search_path, without a lock (regclass.c
-- to_regclass passes NoLock): the sequences a statement calls nextval on (lockscope.execlocks). Parameter: names.
SELECT n.ord::int AS ord, pg_catalog.to_regclass(n.name)::oid::int8 AS relation_oid
FROM unnest(%s::text[]) WITH ORDINALITY AS n(name, ord)
ORDER BY n.ord
