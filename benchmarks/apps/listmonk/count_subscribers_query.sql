-- queries/subscribers.sql:299-311 (query-subscribers-count, %query% replaced by the user's expression in
-- internal/core/subscribers.go:585; list 3, confirmed): an advanced search's count, a scan of subscribers joined
-- to subscriber_lists
-- example: l=3
\set l random(1, 40)
SELECT COUNT(*) AS total FROM subscribers
    LEFT JOIN subscriber_lists
    ON (
        -- Optional list filtering.
        (CASE WHEN CARDINALITY('{:l}'::INT[]) > 0 THEN true ELSE false END)
        AND subscriber_lists.subscriber_id = subscribers.id
        AND ('confirmed' = '' OR subscriber_lists.status = 'confirmed'::subscription_status)
    )
    WHERE (CARDINALITY('{:l}'::INT[]) = 0 OR subscriber_lists.list_id = ANY('{:l}'::INT[]))
    AND (CASE WHEN '' != '' THEN name ~* '' OR email ~* '' ELSE TRUE END)
    AND subscribers.attribs->>'plan' = 'pro';
