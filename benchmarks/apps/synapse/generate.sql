-- synapse: 2,000 rooms (room version 11) of 150 events each (300,000 events with their event_json, 3,000
-- rejected), the rooms' current state (6 state events + 10-99 members each, about 121,000 rows, members from
-- 20,000 users on 50 servers), and 200,000 to-device messages for 5,000 local users x 2 devices. Deterministic.
-- The local server is "Example.org" (capital E: forecast_apps.py's example check reads ":word" as a pgbench
-- variable). Event IDs are '$EvAAAA...' || stream_ordering, room IDs '!room' || N || ':Example.org', so that a
-- pgbench script can name one from an integer variable.
INSERT INTO rooms (room_id, is_public, creator, room_version, has_auth_chain_index)
SELECT '!room' || r || ':Example.org', r % 10 = 0, '@u' || (1 + r % 5000) || ':Example.org', '11', true
FROM generate_series(1, 2000) r;
CREATE TEMP TABLE ev AS
SELECT g, r, p, m, '$EvAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' || g AS event_id, '!room' || r || ':Example.org' AS room_id,
       CASE WHEN p < 6 THEN (array['m.room.create','m.room.power_levels','m.room.join_rules',
                                   'm.room.history_visibility','m.room.name','m.room.topic'])[p + 1]
            WHEN p < 6 + m THEN 'm.room.member' ELSE 'm.room.message' END AS type,
       CASE WHEN p < 6 THEN ''
            WHEN p < 6 + m THEN '@u' || u || ':' || CASE WHEN u % 50 = 0 THEN 'Example.org' ELSE 's' || u % 50 || '.example.org' END
       END AS state_key,
       '@u' || u || ':' || CASE WHEN u % 50 = 0 THEN 'Example.org' ELSE 's' || u % 50 || '.example.org' END AS sender
FROM generate_series(1::bigint, 300000) g,
     LATERAL (SELECT 1 + (g - 1) / 150 AS r, (g - 1) % 150 AS p) a,
     LATERAL (SELECT 10 + a.r % 90 AS m) b,
     LATERAL (SELECT 1 + (a.r * 131 + greatest(a.p - 6, 0) % (b.m) * 977) % 20000 AS u) c;
INSERT INTO events (topological_ordering, event_id, type, room_id, processed, outlier, depth, origin_server_ts,
                    received_ts, sender, contains_url, instance_name, stream_ordering, state_key)
SELECT p + 1, event_id, type, room_id, true, false, p + 1, 1750000000000 + g * 60000, 1750000000050 + g * 60000,
       sender, g % 50 = 0, NULL, g, state_key
FROM ev;
INSERT INTO event_json (event_id, room_id, internal_metadata, json, format_version)
SELECT event_id, room_id, '{}',
       '{"auth_events":["$EvAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' || ((r - 1) * 150 + 1) || '","$EvAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'
       || ((r - 1) * 150 + 2) || '"],"content":{"body":"message ' || g || ' ' || repeat('lorem ipsum ', (1 + g % 20)::int)
       || '","msgtype":"m.text"},"depth":' || (p + 1) || ',"hashes":{"sha256":"' || md5(event_id) || md5(room_id)
       || '"},"origin":"Example.org","origin_server_ts":' || (1750000000000 + g * 60000) || ',"prev_events":["'
       || '$EvAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' || (g - 1) || '"],"room_id":"' || room_id || '","sender":"' || sender
       || '","signatures":{"Example.org":{"ed25519:a_abcd":"' || md5(sender) || md5(event_id) || md5(room_id)
       || '"}},"type":"' || type || '","unsigned":{"age_ts":' || (1750000000000 + g * 60000) || '}}', 3
FROM ev;
INSERT INTO rejections (event_id, reason, last_check)
SELECT event_id, 'auth_error', '2026-11-01' FROM ev WHERE g % 100 = 37;
INSERT INTO current_state_events (event_id, room_id, type, state_key, membership, event_stream_ordering)
SELECT event_id, room_id, type, state_key,
       CASE WHEN type = 'm.room.member' THEN CASE WHEN (p - 6) % 10 = 9 THEN 'leave' ELSE 'join' END END, g
FROM ev WHERE p < 6 + m;
INSERT INTO device_inbox (user_id, device_id, stream_id, message_json, instance_name)
SELECT '@u' || (1 + g % 5000) || ':Example.org', 'DEV' || (1 + (g / 5000) % 2), g,
       '{"content":{"algorithm":"m.olm.v1.curve25519-aes-sha2","ciphertext":{"' || md5(g::text) || '":{"body":"'
       || repeat(md5((g + 1)::text), 6) || '","type":1}},"sender_key":"' || md5((g + 2)::text)
       || '"},"sender":"@u' || (1 + (g * 7) % 5000) || ':Example.org","type":"m.room.encrypted","message_id":"'
       || md5((g + 3)::text) || '"}', NULL
FROM generate_series(1, 200000) g;
DROP TABLE ev;
VACUUM ANALYZE;
