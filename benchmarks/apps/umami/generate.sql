-- umami: 20 websites, 30,000 sessions, 300,000 events over June 2026 (about 500 a day per website, 4 visits per
-- session). Deterministic. UUIDs are '00000000-0000-4000-' || kind || '-' || 100000000000 + id: 8000 session,
-- 9000 website, a000 visit, c000 event (so that a pgbench script can name one from an integer variable).
INSERT INTO website (website_id, name, domain, created_at)
SELECT ('00000000-0000-4000-9000-' || (100000000000 + g))::uuid, 'site ' || g, 'site' || g || '.example.org',
       timestamptz '2025-01-01' + g * interval '1 day' FROM generate_series(1, 20) g;
INSERT INTO session (session_id, website_id, browser, os, device, screen, language, country, region, city, created_at)
SELECT ('00000000-0000-4000-8000-' || (100000000000 + s))::uuid, ('00000000-0000-4000-9000-' || (100000000000 + 1 + s % 20))::uuid,
       (array['chrome','firefox','safari','edge'])[1 + s % 4], (array['Windows','Mac OS','Linux','iOS','Android'])[1 + s % 5],
       (array['desktop','mobile','tablet'])[1 + s % 3], '1920x1080', (array['en-US','de-DE','fr-FR'])[1 + s % 3],
       (array['US','DE','FR','GB'])[1 + s % 4], 'R' || (s % 20), 'city' || (s % 300),
       timestamptz '2026-06-01' + (s % 30) * interval '1 day' + (s % 86400) * interval '1 second'
FROM generate_series(1, 30000) s;
INSERT INTO website_event (event_id, website_id, session_id, visit_id, created_at, url_path, url_query, referrer_domain,
                           page_title, event_type, event_name, hostname)
SELECT ('00000000-0000-4000-c000-' || (100000000000 + g))::uuid, ('00000000-0000-4000-9000-' || (100000000000 + 1 + s % 20))::uuid,
       ('00000000-0000-4000-8000-' || (100000000000 + s))::uuid, ('00000000-0000-4000-a000-' || (100000000000 + s * 4 + g % 4))::uuid,
       timestamptz '2026-06-01' + (s % 30) * interval '1 day' + (s % 86400) * interval '1 second' + (g / 30000) * interval '30 seconds',
       '/page/' || (g % 400), CASE WHEN g % 5 = 0 THEN 'ref=' || (g % 7) END,
       (array['', 'google.com', 'news.ycombinator.com', 'twitter.com', ''])[1 + g % 5], 'Page ' || (g % 400),
       CASE WHEN g % 10 = 0 THEN 2 ELSE 1 END, CASE WHEN g % 10 = 0 THEN 'signup' END, 'site' || (1 + s % 20) || '.example.org'
FROM generate_series(1, 300000) g, LATERAL (SELECT 1 + g % 30000 AS s) x;
VACUUM ANALYZE;
