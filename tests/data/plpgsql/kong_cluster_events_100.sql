-- Kong Gateway 1.0-1.3: a statement-level AFTER INSERT trigger deleting the expired cluster events (no variables)
-- source: Kong/kong@22246ef28c16842098369b494eef879222e30c7b, kong/db/migrations/core/000_base.lua (Apache-2.0;
-- dropped by 006_130_to_140.lua), the table with the index of 004_110_to_120.lua
CREATE TABLE IF NOT EXISTS "cluster_events" (
  "id"         UUID                       PRIMARY KEY,
  "node_id"    UUID                       NOT NULL,
  "at"         TIMESTAMP WITH TIME ZONE   NOT NULL,
  "nbf"        TIMESTAMP WITH TIME ZONE,
  "expire_at"  TIMESTAMP WITH TIME ZONE   NOT NULL,
  "channel"    TEXT,
  "data"       TEXT
);
CREATE INDEX IF NOT EXISTS "cluster_events_at_idx" ON "cluster_events" ("at");
CREATE INDEX IF NOT EXISTS "cluster_events_channel_idx" ON "cluster_events" ("channel");
CREATE INDEX IF NOT EXISTS cluster_events_expire_at_idx ON cluster_events(expire_at);
insert into cluster_events select gen_random_uuid(), gen_random_uuid(), now(), null, now() + interval '1 h', 'c', 'd'
  from generate_series(1, 100);

      CREATE OR REPLACE FUNCTION "delete_expired_cluster_events" () RETURNS TRIGGER
      LANGUAGE plpgsql
      AS $$
        BEGIN
          DELETE FROM "cluster_events"
                WHERE "expire_at" <= CURRENT_TIMESTAMP AT TIME ZONE 'UTC';
          RETURN NEW;
        END;
      $$;

      DROP TRIGGER IF EXISTS "delete_expired_cluster_events_trigger" ON "cluster_events";
      CREATE TRIGGER "delete_expired_cluster_events_trigger"
        AFTER INSERT ON "cluster_events"
        FOR EACH STATEMENT
        EXECUTE PROCEDURE delete_expired_cluster_events();
-- event: insert into cluster_events values (gen_random_uuid(), gen_random_uuid(), now(), null, now(), 'c', 'd');
-- runs: delete_expired_cluster_events:3
