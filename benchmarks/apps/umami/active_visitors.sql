-- src/queries/sql/getActiveVisitors.ts:19-25 (the realtime "visitors now" counter, polled by every open
-- dashboard): distinct sessions of the last 5 minutes
-- example: w=100000000003
\set w 100000000000 + random(1, 20)
select count(distinct session_id) as "visitors"
from website_event
where website_id = '00000000-0000-4000-9000-:w'::uuid
and created_at >= '2026-06-30 23:55:00+00';
