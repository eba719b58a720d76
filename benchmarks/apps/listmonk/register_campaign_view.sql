-- queries/campaigns.sql:481-488 (register-campaign-view, the tracking pixel of every opened e-mail): an INSERT
-- whose values come from two tables joined
-- example: c=100000000017 s=100000004242
\set c 100000000000 + random(1, 200)
\set s 100000000000 + random(1, 100000)
WITH view AS (
    SELECT campaigns.id as campaign_id, subscribers.id AS subscriber_id FROM campaigns
    LEFT JOIN subscribers ON (CASE WHEN '00000000-0000-4000-8000-:s'::TEXT != '' THEN subscribers.uuid = '00000000-0000-4000-8000-:s'::UUID ELSE FALSE END)
    WHERE campaigns.uuid = '00000000-0000-4000-9000-:c'
)
INSERT INTO campaign_views (campaign_id, subscriber_id)
    VALUES((SELECT campaign_id FROM view), (SELECT subscriber_id FROM view));
