-- crates/db_schema/src/impls/post.rs:442-462 (PostActions::mark_as_read with one post: every GetPost of a logged-in
-- user, crates/api/api_crud/src/post/read.rs:70, and after every vote, like.rs:76): insert of PostReadForm
-- (post_id, person_id, read_at = Utc::now(), bound as a constant), on conflict (person_id, post_id) do update set
-- read_at = now (diesel's CURRENT_TIMESTAMP)
-- example: me=3001 p=91234
\set me 1 + 3 * random(0, 6666)
\set p random(1, 100000)
INSERT INTO "post_actions" ("post_id", "person_id", "read_at") VALUES (:p, :me, '2026-07-01 00:00:00+00') ON CONFLICT ("person_id", "post_id") DO UPDATE SET "read_at" = CURRENT_TIMESTAMP;
