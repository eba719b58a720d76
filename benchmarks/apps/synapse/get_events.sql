-- synapse/storage/databases/main/events_worker.py:1614-1635 (_fetch_event_rows: every event the server loads into
-- its event cache, e.g. a sync's timeline of 10 events; make_in_list_sql_clause of synapse/storage/database.py:2625-2655
-- gives "e.event_id = ANY(?)" on PostgreSQL, psycopg2 binds the list as ARRAY[...]): events joined to event_json,
-- rooms and rejections
-- example: e1=123451 e2=123452 e3=123453 e4=123454 e5=123455 e6=123456 e7=123457 e8=123458 e9=123459 e10=123460
\set e1 random(1, 299991)
\set e2 :e1 + 1
\set e3 :e1 + 2
\set e4 :e1 + 3
\set e5 :e1 + 4
\set e6 :e1 + 5
\set e7 :e1 + 6
\set e8 :e1 + 7
\set e9 :e1 + 8
\set e10 :e1 + 9
SELECT
                  e.event_id,
                  e.stream_ordering,
                  e.instance_name,
                  ej.internal_metadata,
                  ej.json,
                  ej.format_version,
                  r.room_version,
                  rej.reason,
                  e.outlier
                FROM events AS e
                  JOIN event_json AS ej USING (event_id)
                  LEFT JOIN rooms r ON r.room_id = e.room_id
                  LEFT JOIN rejections as rej USING (event_id)
                WHERE e.event_id = ANY(ARRAY['$EvAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA:e1','$EvAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA:e2','$EvAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA:e3','$EvAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA:e4','$EvAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA:e5','$EvAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA:e6','$EvAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA:e7','$EvAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA:e8','$EvAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA:e9','$EvAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA:e10']);
