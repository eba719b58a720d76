-- src/queries/sql/getWebsiteStats.ts:40-66 (the dashboard's headline figures, no filters; getTimestampDiffSQL of
-- src/lib/prisma.ts:66-68 inlined): a week of one website's events grouped by session and visit, then aggregated
-- example: w=100000000003
\set w 100000000000 + random(1, 20)
select
  cast(coalesce(sum(t.c), 0) as bigint) as "pageviews",
  count(distinct t.session_id) as "visitors",
  count(distinct t.visit_id) as "visits",
  coalesce(sum(case when t.c = 1 then 1 else 0 end), 0) as "bounces",
  cast(coalesce(sum(floor(extract(epoch from (t.max_time - t.min_time)))), 0) as bigint) as "totaltime"
from (
  select
    website_event.session_id,
    website_event.visit_id,
    count(*) as "c",
    min(website_event.created_at) as "min_time",
    max(website_event.created_at) as "max_time"
  from website_event
  where website_event.website_id = '00000000-0000-4000-9000-:w'::uuid
    and website_event.created_at between '2026-06-20 00:00:00+00' and '2026-06-26 23:59:59+00'
    and website_event.event_type NOT IN (2, 5)
  group by 1, 2
) as t;
