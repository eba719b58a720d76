-- Kong: delete a route (Admin API DELETE /routes/{id}): ON DELETE CASCADE to its plugins, sync_tags on both tables
-- include: kong_schema.ddl
-- transaction
-- params: '00000000-0000-4000-9000-000000000012', 'dde1a96f-1d2f-41dc-bcc3-2c393ec42c65'
DELETE FROM "routes" WHERE ("id") = ($1) AND ("ws_id" = $2);
