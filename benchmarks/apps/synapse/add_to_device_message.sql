-- synapse/storage/databases/main/deviceinbox.py:1021-1029 (_add_messages_to_local_device_inbox_txn: a to-device
-- message for one local device, via simple_insert_many_txn of synapse/storage/database.py:1251-1258, psycopg2's
-- execute_values): stream IDs above the reads' window (200,000), so the reads see the same data at every point
-- example: u=2345 d=1 s=1234567 m=4242
\set u random(1, 5000)
\set d random(1, 2)
\set s 1000000 + random(1, 999999999)
\set m random(1, 999999)
INSERT INTO device_inbox (user_id, device_id, stream_id, message_json, instance_name) VALUES ('@u:u:Example.org','DEV:d',:s,'{"content":{"algorithm":"m.olm.v1.curve25519-aes-sha2","ciphertext":{"Zy8c2kqa4YJb7pVt9QwErX1sLmNo3uHiGfDcBaEe5Rk":{"body":"AwoguKsWUWmZ2Av0CjwN4Tb1xq8pHnQf7rLyEe3VdMz6sJiOoGkP9uIlYaXcBtF5hR0gD2wKjS4nU1vZmQ8","type":1}},"sender_key":"Zy8c2kqa4YJb7pVt9QwErX1sLmNo3uHiGfDcBaEe5Rk"},"sender":"@u7:Example.org","type":"m.room.encrypted","message_id":"msg:m"}','master');
