-- queries/links.sql:5-6 (get-link-url, the redirect of every tracked click): a point lookup by UUID
-- example: u=100000001234
\set u 100000000000 + random(1, 2000)
SELECT url FROM links WHERE uuid = '00000000-0000-4000-a000-:u';
