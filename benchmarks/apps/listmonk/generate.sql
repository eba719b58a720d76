-- listmonk: 40 lists, 100,000 subscribers (2 lists each: 200,000 subscriptions), 200 campaigns, 300,000 campaign
-- views, 2,000 links, 150,000 link clicks over 2026-01-01 .. 2026-06-30. Deterministic. UUIDs are
-- '00000000-0000-4000-8000-' (subscribers), '...-9000-' (campaigns), '...-a000-' (links) || 100000000000 + id, so
-- that a pgbench script can name one from an integer variable.
INSERT INTO lists (id, uuid, name, type, optin, status, tags)
SELECT g, ('00000000-0000-4000-b000-' || (100000000000 + g))::uuid, 'list ' || g,
       (array['public','private','temporary'])[1 + g % 3]::list_type, (array['single','double'])[1 + g % 2]::list_optin,
       'active', ARRAY['tag' || (g % 5)] FROM generate_series(1, 40) g;
SELECT setval('lists_id_seq', 40);
INSERT INTO subscribers (id, uuid, email, name, attribs, status, created_at, updated_at)
SELECT g, ('00000000-0000-4000-8000-' || (100000000000 + g))::uuid, 'sub' || g || '@example.com', 'Subscriber ' || g,
       jsonb_build_object('city', 'city' || (g % 500), 'plan', (array['free','pro','team'])[1 + g % 3]),
       (CASE WHEN g % 50 = 0 THEN 'blocklisted' ELSE 'enabled' END)::subscriber_status,
       timestamptz '2024-01-01' + (g % 700) * interval '1 day', timestamptz '2025-01-01' + (g % 300) * interval '1 day'
FROM generate_series(1, 100000) g;
SELECT setval('subscribers_id_seq', 100000);
INSERT INTO subscriber_lists (subscriber_id, list_id, status)
SELECT s, 1 + (s + k) % 40, (array['unconfirmed','confirmed','confirmed','unsubscribed'])[1 + (s + k) % 4]::subscription_status
FROM generate_series(1, 100000) s, (VALUES (0), (17)) v(k);
INSERT INTO templates (id, name, type, subject, body, is_default) VALUES (1, 'Default', 'campaign', '', '{{ template "content" . }}', true);
SELECT setval('templates_id_seq', 1);
INSERT INTO campaigns (id, uuid, name, subject, from_email, body, content_type, status, messenger, template_id,
                       to_send, sent, archive_slug, created_at)
SELECT g, ('00000000-0000-4000-9000-' || (100000000000 + g))::uuid, 'campaign ' || g, 'subject ' || g,
       'news <news@example.com>', repeat('body ', 200), 'richtext', (CASE WHEN g % 4 = 0 THEN 'running' ELSE 'finished' END)::campaign_status,
       'email', 1, 50000, 48000, 'campaign-' || g, timestamptz '2026-01-01' + g * interval '20 hours'
FROM generate_series(1, 200) g;
SELECT setval('campaigns_id_seq', 200);
INSERT INTO campaign_lists (campaign_id, list_id, list_name)
SELECT g, 1 + g % 40, 'list ' || (1 + g % 40) FROM generate_series(1, 200) g;
INSERT INTO campaign_views (campaign_id, subscriber_id, created_at)
SELECT 1 + g % 200, 1 + (g::bigint * 7919) % 100000, timestamptz '2026-01-01' + (g % 180) * interval '1 day' + (g % 86400) * interval '1 second'
FROM generate_series(1, 300000) g;
INSERT INTO links (id, uuid, url)
SELECT g, ('00000000-0000-4000-a000-' || (100000000000 + g))::uuid, 'https://example.com/article/' || g FROM generate_series(1, 2000) g;
SELECT setval('links_id_seq', 2000);
INSERT INTO link_clicks (campaign_id, link_id, subscriber_id, created_at)
SELECT 1 + g % 200, 1 + (g * 31) % 2000, 1 + (g::bigint * 104729) % 100000,
       timestamptz '2026-01-01' + (g % 180) * interval '1 day' + (g % 86400) * interval '1 second'
FROM generate_series(1, 150000) g;
VACUUM ANALYZE;
