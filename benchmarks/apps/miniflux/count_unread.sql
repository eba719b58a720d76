-- internal/storage/entry_query_builder.go:233-240 (EntryQueryBuilder.CountEntries; conditions from
-- NewEntryQueryBuilder:549 and WithStatuses:148-151 with one status): the unread counter, three tables joined
-- example: uid=7
\set uid random(1, 200)
SELECT count(*)
FROM entries e
    JOIN feeds f ON f.id = e.feed_id
    JOIN categories c ON c.id = f.category_id
WHERE e.user_id = :uid AND e.status = 'unread';
