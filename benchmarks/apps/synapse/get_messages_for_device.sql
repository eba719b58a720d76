-- synapse/storage/databases/main/deviceinbox.py:267-277 (get_messages_for_device: the to-device messages (end-to-end
-- encryption keys) a /sync of one device picks up, from its since token to the current stream position, limit 100)
-- example: u=2345 d=1 f=50000
\set u random(1, 5000)
\set d random(1, 2)
\set f random(0, 150000)
SELECT stream_id, message_json FROM device_inbox
                WHERE user_id = '@u:u:Example.org' AND device_id = 'DEV:d'
                AND :f < stream_id AND stream_id <= 200000
                ORDER BY stream_id ASC
                LIMIT 100;
