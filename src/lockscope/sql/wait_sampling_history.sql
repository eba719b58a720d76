-- The pg_wait_sampling history ring newer than the last sample read (lockscope watch --source pg_wait_sampling).
-- Calls the function, not the pg_wait_sampling_history view (no relation lock at all). COST of every call
-- (pg_wait_sampling.c receive_array): two heavyweight user locks (LOCKTAG_USERLOCK, ExclusiveLock, never
-- fast-path: main lock table, one lock-partition LWLock taken exclusively per acquire and per release), held
-- while the collector copies the WHOLE ring (history_size items) through a shared-memory queue; a second reader
-- (another tool) waits on Lock:userlock meanwhile. The filter on ts only saves the network. @pgws_schema@ is the
-- extension's schema, quoted by the caller. statement_timestamp() lets the caller map server time to its own.
-- ring_oldest / ring_items tell the caller whether the ring wrapped past its last read (samples lost).
WITH h AS MATERIALIZED (SELECT g.pid, g.ts, g.event_type, g.event, g.queryid
                        FROM @pgws_schema@.pg_wait_sampling_get_history() AS g)
SELECT h.pid, h.ts, h.event_type, h.event, h.queryid, pg_catalog.statement_timestamp() AS server_now,
       (SELECT pg_catalog.min(r.ts) FROM h AS r) AS ring_oldest, (SELECT pg_catalog.count(*) FROM h AS r) AS ring_items
FROM h
WHERE h.ts > %s
ORDER BY h.ts, h.pid
