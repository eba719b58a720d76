-- lockscope audit: PG 19 pg_stat_lock (fast-path overflows counted by the server). Read only when the view exists.
SELECT /* lockscope */ locktype::text AS locktype, fastpath_exceeded::int8 AS fastpath_exceeded, stats_reset
FROM pg_catalog.pg_stat_lock
WHERE locktype = 'relation'
