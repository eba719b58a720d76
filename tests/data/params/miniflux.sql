-- internal/storage/api_key.go
INSERT INTO api_keys (user_id, token, description) VALUES ($1, $2, $3) RETURNING id, user_id, token, description, last_used_at, created_at
SELECT id, user_id, token, description, last_used_at, created_at FROM api_keys WHERE user_id=$1 ORDER BY description ASC
SELECT true FROM api_keys WHERE user_id=$1 AND lower(description)=lower($2) LIMIT 1
-- internal/storage/category.go
DELETE FROM categories WHERE user_id = $1 AND title = ANY($2)
INSERT INTO categories (user_id, title, hide_globally) VALUES ($1, $2, $3) RETURNING id, user_id, title, hide_globally
SELECT c.id, c.user_id, c.title, c.hide_globally, coalesce(fc.feed_count, 0), coalesce(uc.unread_count, 0) FROM categories c LEFT JOIN ( SELECT category_id, count(*) AS feed_count FROM feeds WHERE user_id = $2 GROUP BY category_id ) fc ON fc.category_id = c.id LEFT JOIN ( SELECT f.category_id, count(*) AS unread_count FROM entries e INNER JOIN feeds f ON f.id = e.feed_id WHERE e.user_id = $2 AND e.status = $1 GROUP BY f.category_id ) uc ON uc.category_id = c.id WHERE c.user_id=$2
SELECT count(*) FROM categories WHERE user_id = $1 AND title <> ALL($2)
SELECT true FROM categories WHERE user_id=$1 AND id != $2 AND lower(title)=lower($3) LIMIT 1
UPDATE categories SET title=$1, hide_globally=$2 WHERE id=$3 AND user_id=$4
WITH d_cats AS (SELECT id FROM categories WHERE user_id = $1 AND title = ANY($2)) UPDATE feeds SET category_id = (SELECT id FROM categories WHERE user_id = $1 AND id NOT IN (SELECT id FROM d_cats) ORDER BY title ASC LIMIT 1) WHERE user_id = $1 AND category_id IN (SELECT id FROM d_cats)
-- internal/storage/certificate_cache.go
INSERT INTO acme_cache (key, data, updated_at) VALUES($1, $2::bytea, now()) ON CONFLICT (key) DO UPDATE SET data = $2::bytea, updated_at = now()
SELECT data::bytea FROM acme_cache WHERE key = $1
-- internal/storage/enclosure.go
DELETE FROM enclosures WHERE user_id=$1 AND entry_id=$2 AND url <> ALL($3)
INSERT INTO enclosures (url, size, mime_type, entry_id, user_id, media_progression) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (user_id, entry_id, encode(sha256(url::bytea), 'hex')) DO NOTHING RETURNING id
SELECT id, user_id, entry_id, url, size, mime_type, media_progression FROM enclosures WHERE entry_id = ANY($1) ORDER BY id ASC
-- internal/storage/entry.go
INSERT INTO entries ( title, hash, url, comments_url, published_at, content, author, user_id, feed_id, reading_time, changed_at, document_vectors, tags, language ) SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, now(), setweight(to_tsvector($11), 'A') || setweight(to_tsvector($12), 'B'), $13, $14 WHERE NOT EXISTS ( SELECT 1 FROM entry_tombstones WHERE feed_id=$9 AND hash=$2 ) RETURNING id, status, created_at, changed_at
SELECT EXISTS ( SELECT 1 FROM entries WHERE feed_id=$1 AND hash=$2 ) OR EXISTS ( SELECT 1 FROM entry_tombstones WHERE feed_id=$1 AND hash=$2 )
UPDATE entries SET starred=$1, changed_at=now() WHERE user_id=$2 AND id=ANY($3)
UPDATE entries SET status=$1, changed_at=now() FROM feeds JOIN categories ON (categories.id = feeds.category_id) WHERE entries.feed_id = feeds.id AND entries.user_id=$2 AND entries.status=$3 AND feeds.hide_globally IS FALSE AND categories.hide_globally IS FALSE
UPDATE entries SET status=$1, changed_at=now() FROM feeds WHERE feed_id=feeds.id AND feeds.user_id=$2 AND status=$3 AND published_at < $4 AND feeds.category_id=$5
UPDATE entries SET title=$1, content=$2, reading_time=$3, document_vectors = setweight(to_tsvector($4), 'A') || setweight(to_tsvector($5), 'B') WHERE id=$6 AND user_id=$7
UPDATE entries SET title=$1, url=$2, comments_url=$3, content=$4, author=$5, reading_time=$6, document_vectors = setweight(to_tsvector($7), 'A') || setweight(to_tsvector($8), 'B'), tags=$12, language=$13 WHERE user_id=$9 AND feed_id=$10 AND hash=$11 RETURNING id
WITH deleted AS ( DELETE FROM entries WHERE user_id=$1 AND status=$2 AND starred is false AND share_code='' RETURNING feed_id, hash ) INSERT INTO entry_tombstones (feed_id, hash) SELECT feed_id, hash FROM deleted WHERE hash <> '' ON CONFLICT (feed_id, hash) DO NOTHING
WITH to_delete AS ( SELECT id, feed_id, hash FROM entries WHERE status=$1 AND starred is false AND share_code='' AND created_at < now() - $2::interval ORDER BY created_at ASC FOR UPDATE SKIP LOCKED LIMIT $3 ), deleted AS ( DELETE FROM entries USING to_delete WHERE entries.id = to_delete.id RETURNING entries.feed_id, entries.hash ) INSERT INTO entry_tombstones (feed_id, hash) SELECT feed_id, hash FROM deleted WHERE hash <> '' ON CONFLICT (feed_id, hash) DO NOTHING
WITH updated AS ( UPDATE entries SET status=$1, changed_at=now() WHERE user_id=$2 AND id=ANY($3) RETURNING feed_id ) SELECT count(*) FROM updated u JOIN feeds f ON (f.id = u.feed_id) JOIN categories c ON (c.id = f.category_id) WHERE NOT f.hide_globally AND NOT c.hide_globally
-- internal/storage/feed.go
SELECT COALESCE(CAST(CEIL( (EXTRACT(epoch from interval '1 week')) / NULLIF((EXTRACT(epoch from (max(published_at)-min(published_at))/NULLIF((count(*)-1), 0) )), 0) ) AS BIGINT), 0) FROM entries WHERE entries.user_id=$1 AND entries.feed_id=$2 AND entries.published_at >= now() - interval '1 week'
SELECT count(*) FROM feeds WHERE parsing_error_count >= $1
SELECT true FROM feeds WHERE id <> $1 AND user_id=$2 AND feed_url=$3 LIMIT 1
UPDATE feeds SET parsing_error_msg=$1, parsing_error_count=$2, checked_at=$3, next_check_at=$4 WHERE id=$5 AND user_id=$6
-- internal/storage/icon.go
INSERT INTO feed_icons (feed_id, icon_id) VALUES ($1, $2)
SELECT i.id, i.hash, i.mime_type, i.content, i.external_id FROM icons AS i WHERE i.id = $2 AND EXISTS ( SELECT 1 FROM feeds AS f INNER JOIN feed_icons AS fi ON fi.feed_id = f.id WHERE f.user_id = $1 AND fi.icon_id = $2 )
SELECT icons.id, icons.hash, icons.mime_type, icons.content, icons.external_id FROM icons INNER JOIN feed_icons ON feed_icons.icon_id=icons.id INNER JOIN feeds ON feeds.id=feed_icons.feed_id WHERE feeds.user_id=$1
SELECT icons.id, icons.hash, icons.mime_type, icons.content, icons.external_id FROM icons INNER JOIN feed_icons ON feed_icons.icon_id=icons.id INNER JOIN feeds ON feeds.id=feed_icons.feed_id WHERE feeds.user_id=$1 AND feeds.id=$2 LIMIT 1
-- internal/storage/user.go
SELECT true FROM users WHERE id != $1 AND username=LOWER($2) LIMIT 1
SELECT true FROM users WHERE username=LOWER($1) LIMIT 1
-- internal/storage/web_session.go
DELETE FROM web_sessions WHERE created_at < now() - $1::interval
INSERT INTO web_sessions ( id, secret_hash, user_agent, ip, state ) VALUES ($1, $2, $3, $4, $5) RETURNING created_at
UPDATE web_sessions SET id=$2, secret_hash=$3, user_id=$4, state=$5, created_at=now() WHERE id=$1 RETURNING created_at
UPDATE web_sessions SET user_id=$2, state=$3 WHERE id=$1
-- internal/storage/webauthn.go
INSERT INTO webauthn_credentials (handle, cred_id, user_id, public_key, attestation_type, aaguid, sign_count, clone_warning, backup_eligible, backup_state) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
UPDATE webauthn_credentials SET last_seen_on = NOW(), sign_count = $1, clone_warning = $2, backup_eligible = $3, backup_state = $4 WHERE handle = $5
UPDATE webauthn_credentials SET name=$1 WHERE handle=$2 AND user_id=$3
