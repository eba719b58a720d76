-- src/queries/sql/sessions/getWebsiteSession.ts:17-56 (the session detail page): session joined to its events,
-- aggregated twice
-- example: s=4242 w=100000000003 sid=100000004242
\set s random(1, 30000)
\set w 100000000000 + 1 + :s % 20
\set sid 100000000000 + :s
select id,
  distinct_id as "distinctId",
  website_id as "websiteId",
  browser,
  os,
  device,
  screen,
  language,
  country,
  region,
  city,
  min(min_time) as "firstAt",
  max(max_time) as "lastAt",
  count(distinct visit_id) as visits,
  sum(views) as views,
  sum(events) as events,
  sum(floor(extract(epoch from (max_time - min_time)))) as "totaltime"
from (select
      session.session_id as id,
      session.distinct_id,
      website_event.visit_id,
      session.website_id,
      session.browser,
      session.os,
      session.device,
      session.screen,
      session.language,
      session.country,
      session.region,
      session.city,
      min(website_event.created_at) as min_time,
      max(website_event.created_at) as max_time,
      sum(case when website_event.event_type = 1 then 1 else 0 end) as views,
      sum(case when website_event.event_type = 2 then 1 else 0 end) as events
from session
join website_event on website_event.session_id = session.session_id
where session.website_id = '00000000-0000-4000-9000-:w'::uuid
  and session.session_id = '00000000-0000-4000-8000-:sid'::uuid
group by session.session_id, session.distinct_id, visit_id, session.website_id, session.browser, session.os, session.device, session.screen, session.language, session.country, session.region, session.city) t
group by id, distinct_id, website_id, browser, os, device, screen, language, country, region, city;
