-- lockscope audit: the columns of the pg_stat_statements view (they differ by extension version).
-- Parameter: the view's qualified name.
SELECT /* lockscope */ a.attname::text AS name
FROM pg_catalog.pg_attribute a
WHERE a.attrelid = pg_catalog.to_regclass(%s) AND a.attnum > 0 AND NOT a.attisdropped
