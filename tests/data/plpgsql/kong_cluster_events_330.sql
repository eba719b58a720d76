-- Kong Gateway 3.3+: the TTL trigger of cluster_events, dynamic SQL on the table TG_TABLE_NAME names
-- source: Kong/kong@22246ef28c16842098369b494eef879222e30c7b, kong/db/migrations/core/000_base.lua (table),
-- 004_110_to_120.lua (index), 019_320_to_330.lua (function and trigger, its DO wrapper left out) (Apache-2.0)
CREATE TABLE IF NOT EXISTS "cluster_events" (
  "id"         UUID                       PRIMARY KEY,
  "node_id"    UUID                       NOT NULL,
  "at"         TIMESTAMP WITH TIME ZONE   NOT NULL,
  "nbf"        TIMESTAMP WITH TIME ZONE,
  "expire_at"  TIMESTAMP WITH TIME ZONE   NOT NULL,
  "channel"    TEXT,
  "data"       TEXT
);
CREATE INDEX IF NOT EXISTS cluster_events_expire_at_idx ON cluster_events(expire_at);
insert into cluster_events select gen_random_uuid(), gen_random_uuid(), now(), null, now() - interval '1 h', 'c', 'd'
  from generate_series(1, 10);

      CREATE OR REPLACE FUNCTION batch_delete_expired_rows() RETURNS trigger
      LANGUAGE plpgsql
      AS $$
        BEGIN
          EXECUTE FORMAT('WITH rows AS (SELECT ctid FROM %s WHERE %s < CURRENT_TIMESTAMP AT TIME ZONE ''UTC'' ORDER BY %s LIMIT 2 FOR UPDATE SKIP LOCKED) DELETE FROM %s WHERE ctid IN (TABLE rows)', TG_TABLE_NAME, TG_ARGV[0], TG_ARGV[0], TG_TABLE_NAME);
          RETURN NULL;
        END;
      $$;

      DROP TRIGGER IF EXISTS "cluster_events_ttl_trigger" ON "cluster_events";
        CREATE TRIGGER "cluster_events_ttl_trigger"
        AFTER INSERT ON "cluster_events"
        FOR EACH STATEMENT
        EXECUTE PROCEDURE batch_delete_expired_rows("expire_at");
-- event: insert into cluster_events values (gen_random_uuid(), gen_random_uuid(), now(), null, now(), 'c', 'd');
-- runs:
-- dynamic: batch_delete_expired_rows:3
