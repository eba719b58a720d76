-- internal/storage/category.go:118-151 (Storage.CategoriesWithFeedCount, default sort order): categories with their
-- feed and unread counts, a join of three tables with two aggregates
-- example: uid=7
\set uid random(1, 200)
SELECT
    c.id,
    c.user_id,
    c.title,
    c.hide_globally,
    coalesce(fc.feed_count, 0),
    coalesce(uc.unread_count, 0)
FROM categories c
LEFT JOIN (
    SELECT category_id, count(*) AS feed_count
    FROM feeds
    WHERE user_id = :uid
    GROUP BY category_id
) fc ON fc.category_id = c.id
LEFT JOIN (
    SELECT f.category_id, count(*) AS unread_count
    FROM entries e
    INNER JOIN feeds f ON f.id = e.feed_id
    WHERE e.user_id = :uid AND e.status = 'unread'
    GROUP BY f.category_id
) uc ON uc.category_id = c.id
WHERE
    c.user_id=:uid
ORDER BY
    coalesce(uc.unread_count, 0) DESC,
    c.title ASC;
