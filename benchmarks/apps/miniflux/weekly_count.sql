-- internal/storage/feed.go:177-195 (Storage.WeeklyFeedEntryCount): an aggregate over one feed's last week
-- example: f=1234 uid=42
\set f random(1, 6000)
\set uid 1 + (:f - 1) / 30
SELECT
    COALESCE(CAST(CEIL(
        (EXTRACT(epoch from interval '1 week'))	/
        NULLIF((EXTRACT(epoch from (max(published_at)-min(published_at))/NULLIF((count(*)-1), 0) )), 0)
    ) AS BIGINT), 0)
FROM
    entries
WHERE
    entries.user_id=:uid AND
    entries.feed_id=:f AND
    entries.published_at >= now() - interval '1 week';
