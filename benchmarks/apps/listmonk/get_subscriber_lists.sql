-- queries/subscribers.sql:25-38 (get-subscriber-lists, with the subscription-status and opt-in filters set): a
-- subscriber's lists, two tables joined with a sub-select on a third
-- example: id=4242
\set id random(1, 100000)
WITH sub AS (
    SELECT id FROM subscribers WHERE CASE WHEN :id > 0 THEN id = :id ELSE uuid = '00000000-0000-4000-8000-100000000001' END
)
SELECT * FROM lists
    LEFT JOIN subscriber_lists ON (lists.id = subscriber_lists.list_id)
    WHERE subscriber_id = (SELECT id FROM sub)
    -- Optional list IDs or UUIDs to filter.
    AND (CASE WHEN CARDINALITY('{}'::INT[]) > 0 THEN id = ANY('{}'::INT[])
          WHEN CARDINALITY('{}'::UUID[]) > 0 THEN uuid = ANY('{}'::UUID[])
          ELSE TRUE
    END)
    AND (CASE WHEN 'confirmed' != '' THEN subscriber_lists.status = 'confirmed'::subscription_status ELSE TRUE END)
    AND (CASE WHEN 'single' != '' THEN lists.optin = 'single'::list_optin ELSE TRUE END)
    ORDER BY id;
