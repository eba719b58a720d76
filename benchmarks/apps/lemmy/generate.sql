-- lemmy: one local instance (lemmy.example.org, instance 1) federated with 99 others; 20,000 persons (every third
-- local: 6,667 local users, person 1 the admin and the system account), 1,000 communities, 100,000 posts over June
-- 2026 (the newest 20,000 with 10 comments each, three levels deep: 200,000 comments), 300,000 post actions (every
-- one read, 40 % voted), 200,000 comment votes, 60,000 community follows, 100,000 person vote tallies.
-- Deterministic. "Now" is 2026-07-01 00:00 UTC: the ranks (r.hot_rank's formula,
-- crates/diesel_utils/replaceable_schema/utils.sql) are computed for it. Loaded with triggers and foreign-key checks
-- off (session_replication_role = replica; the aggregates the triggers keep are written directly), the data
-- consistent with every foreign key.
SET session_replication_role = replica;

INSERT INTO instance (id, domain, published_at, software, version)
SELECT g, CASE WHEN g = 1 THEN 'lemmy.example.org' ELSE 'i' || g || '.example.net' END,
       timestamptz '2024-01-01' + g * interval '1 day', 'lemmy', '1.0.0'
FROM generate_series(1, 100) g;

INSERT INTO language (id, code, name)
SELECT g, CASE g WHEN 0 THEN 'und' WHEN 37 THEN 'en' ELSE chr(97 + g / 26 % 26) || chr(97 + g % 26) END,
       CASE g WHEN 0 THEN 'Undetermined' WHEN 37 THEN 'English' ELSE 'Language ' || g END
FROM generate_series(0, 184) g;

INSERT INTO person (id, name, display_name, published_at, ap_id, local, public_key, last_refreshed_at, inbox_url,
                    bot_account, instance_id, post_count, post_score, comment_count, comment_score)
SELECT g, 'user' || g, CASE WHEN g % 2 = 0 THEN 'User ' || g END, timestamptz '2025-01-01' + g * interval '10 minutes',
       CASE WHEN g % 3 = 1 THEN 'https://lemmy.example.org/u/user' || g ELSE 'https://i' || (2 + g % 99) || '.example.net/u/user' || g END,
       g % 3 = 1, 'public key ' || g, timestamptz '2026-06-01', 'https://i' || (2 + g % 99) || '.example.net/inbox',
       g % 50 = 0, CASE WHEN g % 3 = 1 THEN 1 ELSE 2 + g % 99 END, 5, 50 + g % 100, 10, 20 + g % 50
FROM generate_series(1, 20000) g;

INSERT INTO local_user (id, person_id, password_encrypted, email, admin, accepted_application, email_verified,
                        last_donation_notification_at)
SELECT (p - 1) / 3 + 1, p, '$2b$12$hashhashhashhashhashhashhashhashhashhashhashhashhash', 'user' || p || '@example.org',
       p = 1, true, true, timestamptz '2026-01-01'
FROM generate_series(1, 20000, 3) p;

INSERT INTO community (id, name, title, published_at, nsfw, ap_id, local, public_key, last_refreshed_at,
                       followers_url, inbox_url, instance_id, visibility, random_number, subscribers, posts, comments,
                       users_active_day, users_active_week, users_active_month, users_active_half_year, hot_rank,
                       subscribers_local, interactions_month)
SELECT g, 'c' || g, 'Community ' || g, timestamptz '2024-06-01' + g * interval '6 hours', g % 50 = 0,
       'https://' || CASE WHEN g % 4 = 0 THEN 'lemmy.example.org' ELSE 'i' || (2 + g % 99) || '.example.net' END || '/c/c' || g,
       g % 4 = 0, 'public key c' || g, timestamptz '2026-06-01',
       'https://i' || (2 + g % 99) || '.example.net/c/c' || g || '/followers', 'https://i' || (2 + g % 99) || '.example.net/inbox',
       CASE WHEN g % 4 = 0 THEN 1 ELSE 2 + g % 99 END,
       (CASE g % 100 WHEN 0 THEN 'Private' WHEN 1 THEN 'Unlisted' ELSE 'Public' END)::community_visibility,
       (g * 37) % 32767, 60 + g % 500, 100, 200, 5 + g % 20, 20 + g % 50, 60 + g % 100, 100 + g % 200,
       1.0 / (1 + g % 10), 60, 50 + g % 500
FROM generate_series(1, 1000) g;

INSERT INTO post (id, name, url, body, creator_id, community_id, published_at, nsfw, thumbnail_url, ap_id, local,
                  language_id, featured_local, featured_community, url_content_type, newest_comment_time_necro_at,
                  newest_comment_time_at, comments, score, upvotes, downvotes, hot_rank, hot_rank_active,
                  controversy_rank, scaled_rank)
SELECT p, 'Post ' || p || ' about topic ' || (p % 997), CASE WHEN p % 10 < 3 THEN 'https://news.example.com/article/' || p END,
       CASE WHEN p % 10 >= 3 THEN 'Body of post ' || p || ', some text about topic ' || (p % 997) END,
       1 + (p * 13) % 20000, 1 + (p * 7) % 1000, pub, (1 + (p * 7) % 1000) % 50 = 0,
       CASE WHEN p % 10 = 3 THEN 'https://lemmy.example.org/pictrs/image/' || p || '.jpg' END,
       'https://lemmy.example.org/post/' || p, (1 + (p * 7) % 1000) % 4 = 0,
       CASE WHEN p % 10 < 7 THEN 37 WHEN p % 10 < 9 THEN 0 ELSE 1 + p % 184 END,
       p IN (99000, 99500), p % 20000 = 7, CASE WHEN p % 10 = 3 THEN 'image/jpeg' WHEN p % 10 < 3 THEN 'text/html' END,
       CASE WHEN p > 80000 THEN pub + interval '1 hour' END, CASE WHEN p > 80000 THEN pub + interval '1 hour' END,
       CASE WHEN p > 80000 THEN 10 ELSE 0 END, score, greatest(score, 0) + p % 7, greatest(-score, 0) + p % 7,
       hot, hot, r.controversy_rank((greatest(score, 0) + p % 7)::numeric, (greatest(-score, 0) + p % 7)::numeric),
       hot / log(2 + 50 + (1 + (p * 7) % 1000) % 500)
FROM generate_series(1, 100000) p,
     LATERAL (SELECT timestamptz '2026-06-01' + p * interval '25.92 seconds' AS pub, (p * 37) % 200 - 20 AS score) x,
     LATERAL (SELECT CASE WHEN timestamptz '2026-07-01' - pub < interval '7 days'
                          THEN log(greatest(2, score + 2)) / power(extract(epoch FROM timestamptz '2026-07-01' - pub) / 3600 + 2, 1.8)
                          ELSE 0 END AS hot) h;

INSERT INTO image_details (link, width, height, content_type, blurhash)
SELECT 'https://lemmy.example.org/pictrs/image/' || p || '.jpg', 640, 480, 'image/jpeg', 'LEHV6nWB2yk8pyo0adR*.7kCMdnj'
FROM generate_series(3, 100000, 10) p;

INSERT INTO community_tag (id, ap_id, name, display_name, community_id, published_at)
SELECT g, 'https://lemmy.example.org/c/c' || g || '/tag/news', 'news', 'News', g, timestamptz '2025-01-01'
FROM generate_series(1, 1000) g;

INSERT INTO post_community_tag (post_id, community_tag_id, published_at)
SELECT p, 1 + (p * 7) % 1000, timestamptz '2026-06-01' FROM generate_series(10, 100000, 10) p;

-- 200,000 comments on posts 80001-100000: 1-80000 top level (4 a post), 80001-160000 their replies, 160001-200000
-- replies to the first 40,000 replies
INSERT INTO comment (id, creator_id, post_id, content, published_at, ap_id, local, path, language_id, score, upvotes,
                     downvotes, child_count, hot_rank, controversy_rank, community_id)
SELECT c, 1 + (c * 17) % 20000, post, 'Comment ' || c || ' on post ' || post || ': some words about topic ' || (c % 991),
       timestamptz '2026-06-01' + post * interval '25.92 seconds' + interval '1 minute' * (1 + c / 20000),
       'https://lemmy.example.org/comment/' || c, c % 3 = 1,
       (CASE WHEN c <= 80000 THEN '0.' || c WHEN c <= 160000 THEN '0.' || (c - 80000) || '.' || c
             ELSE '0.' || (c - 160000) || '.' || (c - 80000) || '.' || c END)::ltree,
       CASE WHEN c % 10 < 8 THEN 37 ELSE 0 END, (c * 7) % 30 - 3, greatest((c * 7) % 30 - 3, 0) + 1, greatest(3 - (c * 7) % 30, 0) + 1,
       CASE WHEN c <= 40000 THEN 2 WHEN c <= 80000 THEN 1 WHEN c <= 120000 THEN 1 ELSE 0 END,
       1.0 / (1 + c % 50), 0, 1 + (post * 7) % 1000
FROM generate_series(1, 200000) c, LATERAL (SELECT 80001 + (c - 1) % 20000 AS post) x;

-- each local user follows 9 communities (person 1 + 3u, u = g % 6667)
INSERT INTO community_actions (person_id, community_id, followed_at, follow_state)
SELECT 1 + 3 * (g % 6667), 1 + ((g % 6667) * 13 + (g / 6667) * 101) % 1000,
       timestamptz '2026-01-01' + g * interval '1 minute', 'Accepted'
FROM generate_series(0, 60002) g;
-- two moderators a community, 2,000 community blocks
INSERT INTO community_actions (person_id, community_id, became_moderator_at)
SELECT 1 + 3 * ((c * 7 + k * 3001) % 6667), c, timestamptz '2025-01-01' + c * interval '1 hour'
FROM generate_series(1, 1000) c, generate_series(0, 1) k
ON CONFLICT (person_id, community_id) DO UPDATE SET became_moderator_at = EXCLUDED.became_moderator_at;
INSERT INTO community_actions (person_id, community_id, blocked_at)
SELECT 1 + 3 * ((g * 11) % 6667), 1 + (g * 389) % 1000, timestamptz '2026-03-01' FROM generate_series(1, 2000) g
ON CONFLICT (person_id, community_id) DO NOTHING;

-- person actions: mostly the vote tallies PersonActions::like keeps (voter -> creator), 5 % blocks
INSERT INTO person_actions (person_id, target_id, voted_at, upvotes, downvotes)
SELECT 1 + 3 * (g % 6667), 1 + ((g % 6667) * 7 + (g / 6667) * 1301) % 20000, timestamptz '2026-06-01' + g * interval '20 seconds',
       1 + g % 5, g % 3
FROM generate_series(0, 99999) g;
INSERT INTO person_actions (person_id, target_id, blocked_at)
SELECT 1 + 3 * g, 2 + (g * 97) % 19999, timestamptz '2026-03-01' FROM generate_series(1, 5000) g
ON CONFLICT (person_id, target_id) DO UPDATE SET blocked_at = EXCLUDED.blocked_at;

-- instance actions: a third each community blocks, person blocks and bans (of remote persons by the local instance)
INSERT INTO instance_actions (person_id, instance_id, blocked_communities_at, blocked_persons_at, received_ban_at)
SELECT CASE WHEN g % 3 = 2 THEN 3 * g ELSE 1 + 3 * (g % 6667) END, CASE WHEN g % 3 = 2 THEN 1 ELSE 2 + g % 99 END,
       CASE WHEN g % 3 = 0 THEN timestamptz '2026-03-01' END, CASE WHEN g % 3 = 1 THEN timestamptz '2026-03-01' END,
       CASE WHEN g % 3 = 2 THEN timestamptz '2026-04-01' END
FROM generate_series(1, 3000) g;

-- 300,000 post actions: each local user (u = g % 6667) read 45 posts, voted on 40 % of them
INSERT INTO post_actions (person_id, post_id, read_at, voted_at, vote_is_upvote)
SELECT 1 + 3 * (g % 6667), 1 + ((g % 6667) * 31 + (g / 6667) * 2203) % 100000,
       timestamptz '2026-06-01' + g * interval '8 seconds',
       CASE WHEN g % 5 < 2 THEN timestamptz '2026-06-01' + g * interval '8 seconds' END,
       CASE WHEN g % 5 < 2 THEN g % 5 = 0 END
FROM generate_series(0, 299999) g;

INSERT INTO person_liked_combined (voted_at, person_id, creator_id, post_id, vote_is_upvote, community_id)
SELECT pa.voted_at, pa.person_id, 1 + (pa.post_id * 13) % 20000, pa.post_id, pa.vote_is_upvote, 1 + (pa.post_id * 7) % 1000
FROM post_actions pa WHERE pa.voted_at IS NOT NULL ORDER BY pa.voted_at;

INSERT INTO comment_actions (person_id, comment_id, voted_at, vote_is_upvote)
SELECT 1 + 3 * (g % 6667), 1 + ((g % 6667) * 17 + (g / 6667) * 6661) % 200000,
       timestamptz '2026-06-15' + g * interval '5 seconds', g % 4 > 0
FROM generate_series(0, 199999) g;

INSERT INTO site (id, name, sidebar, published_at, ap_id, inbox_url, public_key, instance_id)
VALUES (1, 'Lemmy Example', 'A Lemmy instance', timestamptz '2024-01-01', 'https://lemmy.example.org/',
        'https://lemmy.example.org/inbox', 'public key site', 1);
INSERT INTO local_site (id, site_id, site_setup, registration_mode, system_account, users, posts, comments, communities,
                        users_active_day, users_active_week, users_active_month, users_active_half_year)
VALUES (1, 1, true, 'Open', 1, 6667, 25000, 66667, 250, 800, 2000, 4000, 6000);

SELECT setval(pg_get_serial_sequence('instance', 'id'), 100), setval(pg_get_serial_sequence('language', 'id'), 184),
       setval(pg_get_serial_sequence('person', 'id'), 20000), setval(pg_get_serial_sequence('local_user', 'id'), 6667),
       setval(pg_get_serial_sequence('community', 'id'), 1000), setval(pg_get_serial_sequence('post', 'id'), 100000),
       setval(pg_get_serial_sequence('comment', 'id'), 200000), setval(pg_get_serial_sequence('community_tag', 'id'), 1000),
       setval(pg_get_serial_sequence('site', 'id'), 1), setval(pg_get_serial_sequence('local_site', 'id'), 1);

RESET session_replication_role;
VACUUM ANALYZE;
