-- Kong: create a route (Admin API POST /services/{id}/routes): FKs to services and workspaces, the sync_tags trigger
-- include: kong_schema.ddl
-- transaction
-- params: 'f1d2a4c0-1111-4000-8000-000000000001', 'new-route', '00000000-0000-4000-8000-000000000007', '{http,https}', '{/new}', '{team-a,public}', 'dde1a96f-1d2f-41dc-bcc3-2c393ec42c65'
INSERT INTO "routes" ("id", "created_at", "updated_at", "name", "service_id", "protocols", "paths", "regex_priority", "strip_path", "preserve_host", "path_handling", "https_redirect_status_code", "request_buffering", "response_buffering", "tags", "ws_id") VALUES ($1, CURRENT_TIMESTAMP(0) AT TIME ZONE 'UTC', CURRENT_TIMESTAMP(0) AT TIME ZONE 'UTC', $2, $3, $4, $5, 0, true, false, 'v0', 426, true, true, $6, $7) RETURNING "id", "created_at", "name", "service_id", "tags", "ws_id";
