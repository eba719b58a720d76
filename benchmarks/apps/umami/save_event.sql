-- src/queries/sql/events/saveEvent.ts:107-141 (prisma.client.websiteEvent.create, every page view the tracker
-- sends): the INSERT Prisma sends for the fields a page view sets, into a table with 15 indexes; dated in May,
-- outside every read's window, so that the reads see the same data at every point
-- example: e=500000001234 s=4242 w=100000000003 sid=100000004242 vid=100000016968
\set e 500000000000 + random(1, 399999999999)
\set s random(1, 30000)
\set w 100000000000 + 1 + :s % 20
\set sid 100000000000 + :s
\set vid 100000000000 + :s * 4
INSERT INTO "public"."website_event" ("event_id","website_id","session_id","visit_id","url_path","url_query","referrer_domain","page_title","event_type","hostname","created_at") VALUES ('00000000-0000-4000-c000-:e','00000000-0000-4000-9000-:w','00000000-0000-4000-8000-:sid','00000000-0000-4000-a000-:vid','/page/7',NULL,'google.com','Page 7',1,'site3.example.org','2026-05-15 12:00:00+00') RETURNING "public"."website_event"."event_id";
