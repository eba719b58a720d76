-- internal/storage/feed.go:126 (Storage.CountAllFeedsWithErrors, the admin's error counter): a scan of feeds
-- example: n=3
\set n 3
SELECT count(*) FROM feeds WHERE parsing_error_count >= :n;
