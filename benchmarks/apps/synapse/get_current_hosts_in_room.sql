-- synapse/storage/databases/main/roommember.py:1176-1185 (get_current_hosts_in_room, PostgreSQL branch: the servers
-- an event is sent to over federation): the joined members' server names, by regex
-- example: r=1234
\set r random(1, 2000)
SELECT DISTINCT substring(state_key FROM '@[^:]*:(.*)$')
                FROM current_state_events
                WHERE
                    type = 'm.room.member'
                    AND membership = 'join'
                    AND room_id = '!room:r:Example.org';
