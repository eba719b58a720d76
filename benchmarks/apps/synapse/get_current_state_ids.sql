-- synapse/storage/databases/main/state.py:511-517 (get_partial_current_state_ids, behind get_current_state_ids:
-- a room's whole current state, read on every state resolution, join and event send that misses the cache)
-- example: r=1234
\set r random(1, 2000)
SELECT type, state_key, event_id FROM current_state_events
                WHERE room_id = '!room:r:Example.org';
