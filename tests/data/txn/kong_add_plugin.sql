-- Kong: enable a plugin on a route (Admin API POST /routes/{id}/plugins): FKs to routes and workspaces (the NULL service and consumer keys are not checked), the sync_tags trigger
-- include: kong_schema.ddl
-- transaction
-- params: 'f1d2a4c0-2222-4000-8000-000000000001', '00000000-0000-4000-9000-000000000011', '{"second": 5}', 'plugins:key-auth:r11', '{http,https}', '{team-a}', 'dde1a96f-1d2f-41dc-bcc3-2c393ec42c65'
INSERT INTO "plugins" ("id", "created_at", "updated_at", "name", "route_id", "config", "enabled", "cache_key", "protocols", "tags", "ws_id") VALUES ($1, CURRENT_TIMESTAMP(0) AT TIME ZONE 'UTC', CURRENT_TIMESTAMP(0) AT TIME ZONE 'UTC', 'key-auth', $2, $3, true, $4, $5, $6, $7) RETURNING "id", "name", "route_id", "tags", "ws_id";
