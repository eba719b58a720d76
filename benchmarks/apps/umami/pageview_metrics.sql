-- src/queries/sql/pageviews/getPageviewMetrics.ts:73-91 (type "path": the "Pages" table of the dashboard, 30
-- days): a scan of one website's month of events, grouped by path
-- example: w=100000000003
\set w 100000000000 + random(1, 20)
select url_path x,
  count(distinct website_event.session_id) as y
from website_event
where website_event.website_id = '00000000-0000-4000-9000-:w'::uuid
  and website_event.created_at between '2026-06-01 00:00:00+00' and '2026-06-30 23:59:59+00'
  and website_event.event_type NOT IN (2, 5)
  and url_path != ''
group by 1
order by 2 desc
limit 500
offset 0;
