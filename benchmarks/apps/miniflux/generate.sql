-- miniflux: 200 users, 2,000 categories, 6,000 feeds, 240,000 entries (~40 per feed, published over 60 days,
-- 30 % unread). Deterministic. Indexes are built by schema.sql before the load (as a live server has them).
INSERT INTO users (id, username, password, last_login_at)
SELECT g, 'user' || g, 'x', now() - (g % 30) * interval '1 day' FROM generate_series(1, 200) g;
SELECT setval('users_id_seq', 200);
INSERT INTO categories (id, user_id, title, hide_globally)
SELECT g, 1 + (g - 1) / 10, 'category ' || g, g % 17 = 0 FROM generate_series(1, 2000) g;
SELECT setval('categories_id_seq', 2000);
INSERT INTO feeds (id, user_id, category_id, title, feed_url, site_url, checked_at, parsing_error_count, disabled,
                   next_check_at, description)
SELECT g, 1 + (g - 1) / 30, 1 + (g - 1) / 3, 'feed ' || g, 'https://site' || g || '.example.org/feed.xml',
       'https://site' || g || '.example.org/', now() - (g % 60) * interval '1 minute', (g % 23 = 0)::int * (g % 5),
       g % 41 = 0, now() + (g % 60) * interval '1 minute', 'description of feed ' || g
FROM generate_series(1, 6000) g;
SELECT setval('feeds_id_seq', 6000);
INSERT INTO entries (id, user_id, feed_id, hash, published_at, title, url, author, content, status, starred,
                     document_vectors, changed_at, reading_time, created_at)
SELECT g, 1 + (f - 1) / 30, f, md5(g::text), now() - (g % 86400) * interval '60 seconds',
       'entry title ' || g || ' about topic ' || (g % 97), 'https://site' || f || '.example.org/post/' || g,
       'author ' || (g % 300), repeat('lorem ipsum dolor sit amet ', 12),
       (CASE WHEN g % 10 < 3 THEN 'unread' ELSE 'read' END)::entry_status, g % 50 = 0,
       to_tsvector('simple', 'entry title ' || g || ' about topic ' || (g % 97)),
       now() - (g % 86400) * interval '50 seconds', 1 + g % 9, now() - (g % 86400) * interval '60 seconds'
FROM generate_series(1, 240000) g, LATERAL (SELECT 1 + (g - 1) % 6000 AS f) x;
SELECT setval('entries_id_seq', 240000);
VACUUM ANALYZE;
