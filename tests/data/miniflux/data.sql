-- Generated data for schema.sql (Miniflux's schema, see LICENSE-NOTE.md): 50 users, 150 categories (3 a user),
-- 500 feeds (10 a user), 100 icons, 20,000 entries (40 a feed, user_id = the feed's user), 2,000 enclosures,
-- 1,000 entry tombstones, 100 web sessions, 50 API keys and 50 integrations rows. Deterministic: ids are
-- assigned in order on a fresh database (entry i belongs to feed (i-1)%500+1, feed g to user (g-1)/10+1, in
-- category (u-1)*3 + g%3 + 1); entries above 12,000 whose id is not a multiple of 4 are unread.

insert into schema_version (version) values ('132');

insert into users (username, password, is_admin, timezone, last_login_at)
select 'user' || u, '$2a$10$' || substr(encode(sha256(u::text::bytea), 'hex'), 1, 53), u = 1,
       (array['UTC', 'Europe/Paris', 'America/New_York', 'Asia/Tokyo', 'Australia/Sydney'])[u % 5 + 1],
       now() - u * interval '1 hour'
from generate_series(1, 50) u;

insert into categories (user_id, title, hide_globally)
select u, t.title, t.n = 3 and u % 5 = 0
from generate_series(1, 50) u,
     (values (1, 'All'), (2, 'News'), (3, 'Tech')) as t(n, title)
order by u, t.n;

insert into feeds (user_id, category_id, title, feed_url, site_url, description, checked_at, next_check_at,
                   parsing_error_count, parsing_error_msg, etag_header, hide_globally, disabled)
select (g - 1) / 10 + 1,
       ((g - 1) / 10) * 3 + g % 3 + 1,
       'Feed ' || g,
       'https://feeds.example.org/' || g || '/rss.xml',
       'https://site' || g || '.example.org/',
       'The feed number ' || g,
       now() - (g % 60) * interval '1 minute',
       now() + (g % 60) * interval '1 minute',
       case when g % 17 = 0 then 5 else 0 end,
       case when g % 17 = 0 then 'unable to parse feed' else '' end,
       'W/"' || g || '"',
       g % 23 = 0,
       g % 97 = 0
from generate_series(1, 500) g;

insert into icons (hash, mime_type, content, external_id)
select encode(sha256(('icon' || n)::bytea), 'hex'), 'image/png', decode('89504e470d0a1a0a', 'hex'),
       substr(encode(sha256(('ext' || n)::bytea), 'hex'), 1, 40)
from generate_series(1, 100) n;

insert into feed_icons (feed_id, icon_id)
select g, g % 100 + 1 from generate_series(1, 500) g where g % 5 <> 0;

insert into entries (user_id, feed_id, hash, published_at, created_at, changed_at, title, url, comments_url,
                     author, content, status, starred, share_code, reading_time, tags, document_vectors)
select (f - 1) / 10 + 1, f,
       encode(sha256(('entry' || i)::bytea), 'hex'),
       now() - (20001 - i) * interval '3 minutes',
       now() - (20001 - i) * interval '3 minutes' + interval '5 minutes',
       now() - (20001 - i) * interval '3 minutes' + interval '5 minutes',
       'Entry ' || i || ' about topic ' || i % 37,
       'https://site' || f || '.example.org/posts/' || i,
       case when i % 3 = 0 then 'https://site' || f || '.example.org/posts/' || i || '#comments' else '' end,
       'Author ' || i % 101,
       '<p>' || repeat('Lorem ipsum dolor sit amet, consectetur adipiscing elit. ', 1 + i % 8) || '</p>',
       (case when i > 12000 and i % 4 <> 0 then 'unread' else 'read' end)::entry_status,
       i % 50 = 0,
       case when i % 500 = 0 then 'share' || i else '' end,
       1 + i % 10,
       array['tag' || i % 7],
       setweight(to_tsvector('Entry ' || i || ' about topic ' || i % 37), 'A')
         || setweight(to_tsvector(repeat('Lorem ipsum dolor sit amet ', 1 + i % 3)), 'B')
from generate_series(1, 20000) i, lateral (select (i - 1) % 500 + 1 as f) x;

insert into enclosures (user_id, entry_id, url, size, mime_type, media_progression)
select user_id, id, 'https://cdn.example.org/media/' || id || '.mp3', 1000000 + id * 17, 'audio/mpeg', id % 120
from entries where id % 10 = 0;

insert into entry_tombstones (feed_id, hash, deleted_at)
select n % 500 + 1, encode(sha256(('gone' || n)::bytea), 'hex'), now() - n * interval '1 hour'
from generate_series(1, 1000) n;

insert into web_sessions (id, secret_hash, user_id, created_at, user_agent, ip, state)
select 'SESS' || lpad(s::text, 22, '0'), sha256(('secret' || s)::bytea), (s - 1) % 50 + 1,
       now() - s * interval '10 minutes', 'Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0',
       ('10.0.' || s % 256 || '.' || s % 7)::inet,
       jsonb_build_object('csrf', encode(sha256(('csrf' || s)::bytea), 'hex'), 'theme', 'light_serif')
from generate_series(1, 100) s;

insert into api_keys (user_id, token, description, last_used_at)
select u, encode(sha256(('token' || u)::bytea), 'base64'), 'key of user ' || u, now() - u * interval '1 day'
from generate_series(1, 50) u;

insert into integrations (user_id, pinboard_enabled, wallabag_enabled, fever_enabled, fever_username,
                          googlereader_enabled, googlereader_username)
select u, u % 4 = 0, u % 6 = 0, u % 3 = 0, 'user' || u, u % 2 = 0, 'user' || u
from generate_series(1, 50) u;

analyze;
