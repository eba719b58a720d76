-- queries/campaigns.sql:268-275 (get-campaign-link-counts, %s = * by cmd/init.go:422): clicks per link of a
-- campaign over 60 days, two tables joined and aggregated
-- example: c=17
\set c random(1, 199)
SELECT COUNT(*) AS "count", url
    FROM link_clicks
    LEFT JOIN links ON (link_clicks.link_id = links.id)
    WHERE campaign_id=ANY('{:c}') AND link_clicks.created_at >= '2026-02-01' AND link_clicks.created_at <= '2026-03-31'
    GROUP BY links.url ORDER BY "count" DESC LIMIT 50;
