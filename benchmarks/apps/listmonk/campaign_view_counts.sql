-- queries/campaigns.sql:247-256 (get-campaign-analytics-counts, prepared as get-campaign-view-counts with %s =
-- campaign_views by cmd/init.go:413-416): daily views of two campaigns over 30 days, an aggregate
-- example: c=17
\set c random(1, 199)
WITH intval AS (
    -- For intervals < a week, aggregate counts hourly, otherwise daily.
    SELECT CASE WHEN (EXTRACT (EPOCH FROM ('2026-03-31'::TIMESTAMP - '2026-03-01'::TIMESTAMP)) / 86400) >= 7 THEN 'day' ELSE 'hour' END
)
SELECT campaign_id, COUNT(*) AS "count", DATE_TRUNC((SELECT * FROM intval), created_at) AS "timestamp"
    FROM campaign_views
    WHERE campaign_id=ANY('{:c}') AND created_at >= '2026-03-01' AND created_at <= '2026-03-31'
    GROUP BY campaign_id, "timestamp" ORDER BY "timestamp" ASC;
