-- crates/db_schema/src/impls/post.rs:352-364 (PostActions::like, every vote, crates/api/api/src/post/like.rs:63):
-- insert_into(post_actions).values(PostLikeForm).on_conflict((post_id, person_id)).do_update().set(PostLikeForm)
-- .returning(PostActions::as_select()); AsChangeset sets every field of the form; Utc::now() bound as a constant.
-- Its triggers (r.post_actions_insert_statement/update_statement, person_liked_combined_post_*) update post,
-- person, community and local_site and write person_liked_combined
-- example: me=3001 p=91234
\set me 1 + 3 * random(0, 6666)
\set p random(1, 100000)
INSERT INTO "post_actions" ("post_id", "person_id", "vote_is_upvote", "voted_at") VALUES (:p, :me, true, '2026-07-01 00:00:00+00') ON CONFLICT ("post_id", "person_id") DO UPDATE SET "post_id" = :p, "person_id" = :me, "vote_is_upvote" = true, "voted_at" = '2026-07-01 00:00:00+00' RETURNING "post_actions"."read_at", "post_actions"."read_comments_at", "post_actions"."saved_at", "post_actions"."voted_at", "post_actions"."hidden_at", "post_actions"."person_id", "post_actions"."post_id", "post_actions"."read_comments_amount", "post_actions"."vote_is_upvote", "post_actions"."notifications";
