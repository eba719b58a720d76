-- The tables of tests/data/gitlab/schema.sql as Rails' ActiveRecord (GitLab's ORM) writes its prepared
-- statements: quoted names, every value bound (LIMIT too), IN lists of binds, RETURNING "id" (the SQL shapes of
-- ActiveRecord 7's PostgreSQL adapter)
SELECT "namespaces".* FROM "namespaces" WHERE "namespaces"."id" = $1 LIMIT $2
SELECT "namespaces".* FROM "namespaces" WHERE "namespaces"."type" = $1 AND "namespaces"."parent_id" IS NULL AND (LOWER("namespaces"."path") = LOWER($2)) LIMIT $3
SELECT "namespaces".* FROM "namespaces" WHERE "namespaces"."id" IN ($1, $2, $3)
SELECT "namespaces".* FROM "namespaces" WHERE "namespaces"."parent_id" = $1 ORDER BY "namespaces"."id" ASC LIMIT $2 OFFSET $3
SELECT "namespaces"."id" FROM "namespaces" WHERE "namespaces"."traversal_ids" @> ARRAY[$1]::bigint[]
SELECT "namespaces".* FROM "namespaces" WHERE "namespaces"."id" IN (SELECT "members"."source_id" FROM "members" WHERE "members"."user_id" = $1 AND "members"."source_type" = $2 AND "members"."requested_at" IS NULL)
SELECT 1 AS one FROM "namespaces" WHERE "namespaces"."path" = $1 AND "namespaces"."parent_id" = $2 LIMIT $3
SELECT "merge_requests".* FROM "merge_requests" WHERE "merge_requests"."target_project_id" = $1 AND "merge_requests"."iid" = $2 LIMIT $3
SELECT "merge_requests"."id" FROM "merge_requests" WHERE "merge_requests"."target_project_id" = $1 AND "merge_requests"."state_id" IN ($2, $3) ORDER BY "merge_requests"."created_at" DESC LIMIT $4
SELECT COUNT(*) FROM "merge_requests" WHERE "merge_requests"."target_project_id" = $1 AND "merge_requests"."state_id" = $2
SELECT MAX("merge_requests"."iid") FROM "merge_requests" WHERE "merge_requests"."target_project_id" = $1
SELECT "merge_requests".* FROM "merge_requests" WHERE "merge_requests"."source_branch" = $1 AND "merge_requests"."source_project_id" = $2 AND "merge_requests"."draft" = $3
SELECT "merge_requests".* FROM "merge_requests" WHERE "merge_requests"."updated_at" >= $1 AND "merge_requests"."updated_at" < $2
UPDATE "merge_requests" SET "updated_at" = $1, "title" = $2, "lock_version" = $3 WHERE "merge_requests"."id" = $4 AND "merge_requests"."lock_version" = $5
UPDATE "merge_requests" SET "merge_status" = $1 WHERE "merge_requests"."id" = $2
SELECT "merge_request_diffs".* FROM "merge_request_diffs" WHERE "merge_request_diffs"."merge_request_id" = $1 ORDER BY "merge_request_diffs"."id" DESC LIMIT $2
SELECT "members".* FROM "members" WHERE "members"."source_id" = $1 AND "members"."source_type" = $2 AND "members"."user_id" = $3 AND "members"."requested_at" IS NULL LIMIT $4
INSERT INTO "members" ("access_level", "source_id", "source_type", "user_id", "notification_level", "created_at", "updated_at") VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING "id"
DELETE FROM "members" WHERE "members"."id" = $1
UPDATE "members" SET "access_level" = $1, "updated_at" = $2 WHERE "members"."id" = $3
SELECT "p_ci_builds".* FROM "p_ci_builds" WHERE "p_ci_builds"."partition_id" = $1 AND "p_ci_builds"."id" = $2 LIMIT $3
SELECT "p_ci_builds"."id" FROM "p_ci_builds" WHERE "p_ci_builds"."commit_id" = $1 AND "p_ci_builds"."partition_id" = $2 AND "p_ci_builds"."type" = $3 AND ("p_ci_builds"."retried" = $4 OR "p_ci_builds"."retried" IS NULL)
UPDATE "p_ci_builds" SET "status" = $1, "updated_at" = $2 WHERE "p_ci_builds"."id" = $3 AND "p_ci_builds"."partition_id" = $4
