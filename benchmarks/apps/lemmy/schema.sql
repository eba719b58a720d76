-- lemmy (github.com/LemmyNet/lemmy at 439734dd): an extract of the schema after all 342 migrations
-- (migrations/*/up.sql, in order, each in a transaction as diesel runs them) and the replaceable schema
-- (crates/diesel_utils/replaceable_schema/{utils,triggers}.sql in schema r), applied on a scratch PostgreSQL 18 and
-- dumped with pg_dump --schema-only (see SOURCE.md): the 19 tables the five statements read or write, their
-- triggers write, or their foreign keys reference, each with all its constraints, indexes, extended statistics,
-- foreign keys and triggers as dumped; every function of schemas public and r (the trigger functions and the
-- column defaults use them), the enum types and the extensions ltree and pg_trgm.
SET check_function_bodies = false;

CREATE SCHEMA r;

CREATE EXTENSION IF NOT EXISTS ltree WITH SCHEMA public;

CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public;

CREATE TYPE public.actor_type_enum AS ENUM (
    'site',
    'community',
    'person'
);

CREATE TYPE public.comment_sort_type_enum AS ENUM (
    'Hot',
    'Top',
    'New',
    'Old',
    'Controversial'
);

CREATE TYPE public.community_follower_state AS ENUM (
    'Accepted',
    'Pending',
    'ApprovalRequired',
    'Denied'
);

CREATE TYPE public.community_notifications_mode_enum AS ENUM (
    'AllPostsAndComments',
    'AllPosts',
    'RepliesAndMentions',
    'Mute'
);

CREATE TYPE public.community_visibility AS ENUM (
    'Public',
    'LocalOnlyPublic',
    'LocalOnlyPrivate',
    'Private',
    'Unlisted'
);

CREATE TYPE public.federation_mode_enum AS ENUM (
    'All',
    'Local',
    'Disable'
);

CREATE TYPE public.image_mode_enum AS ENUM (
    'None',
    'StoreLinkPreviews',
    'ProxyAllImages'
);

CREATE TYPE public.listing_type_enum AS ENUM (
    'All',
    'Local',
    'Subscribed',
    'ModeratorView',
    'Suggested'
);

CREATE TYPE public.modlog_kind AS ENUM (
    'AdminAdd',
    'AdminBan',
    'AdminAllowInstance',
    'AdminBlockInstance',
    'AdminPurgeComment',
    'AdminPurgeCommunity',
    'AdminPurgePerson',
    'AdminPurgePost',
    'ModAddToCommunity',
    'ModBanFromCommunity',
    'ModFeaturePostCommunity',
    'AdminFeaturePostSite',
    'ModChangeCommunityVisibility',
    'ModLockPost',
    'ModRemoveComment',
    'AdminRemoveCommunity',
    'ModRemovePost',
    'ModTransferCommunity',
    'ModLockComment',
    'ModWarnComment',
    'ModWarnPost'
);

CREATE TYPE public.notification_type_enum AS ENUM (
    'Mention',
    'Reply',
    'Subscribed',
    'PrivateMessage',
    'ModAction'
);

CREATE TYPE public.post_listing_mode_enum AS ENUM (
    'List',
    'Card',
    'SmallCard'
);

CREATE TYPE public.post_notifications_mode_enum AS ENUM (
    'AllComments',
    'RepliesAndMentions',
    'Mute'
);

CREATE TYPE public.post_sort_type_enum AS ENUM (
    'Active',
    'Hot',
    'New',
    'Old',
    'Top',
    'MostComments',
    'NewComments',
    'Controversial',
    'Scaled'
);

CREATE TYPE public.registration_mode_enum AS ENUM (
    'Closed',
    'RequireApplication',
    'Open',
    'RequireInvitation'
);

CREATE TYPE public.tag_color_enum AS ENUM (
    'color01',
    'color02',
    'color03',
    'color04',
    'color05',
    'color06',
    'color07',
    'color08',
    'color09',
    'color10'
);

CREATE TYPE public.vote_show_enum AS ENUM (
    'Show',
    'ShowForOthers',
    'Hide'
);

CREATE FUNCTION public.diesel_manage_updated_at(_tbl regclass) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    EXECUTE format('CREATE TRIGGER set_updated_at BEFORE UPDATE ON %s
                    FOR EACH ROW EXECUTE PROCEDURE diesel_set_updated_at()', _tbl);
END;
$$;

CREATE FUNCTION public.diesel_set_updated_at() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF (NEW IS DISTINCT FROM OLD AND NEW.updated_at IS NOT DISTINCT FROM OLD.updated_at) THEN
        NEW.updated_at := CURRENT_TIMESTAMP;
    END IF;
    RETURN NEW;
END;
$$;

CREATE FUNCTION public.generate_unique_changeme() RETURNS text
    LANGUAGE sql
    AS $$
    SELECT
        'http://changeme.invalid/seq/' || nextval('changeme_seq')::text;
$$;

CREATE FUNCTION public.random_smallint() RETURNS smallint
    LANGUAGE sql PARALLEL RESTRICTED
    RETURN trunc(((random() * (65536)::double precision) - (32768)::double precision));

CREATE FUNCTION public.reverse_timestamp_sort(t timestamp with time zone) RETURNS bigint
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
    AS $$
BEGIN
    RETURN (-1000000 * EXTRACT(EPOCH FROM t))::bigint;
END;
$$;

CREATE FUNCTION r.comment_actions_delete_statement() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
            BEGIN
                WITH comment_diff AS ( UPDATE
                        comment AS a
                    SET
                        score = a.score + diff.upvotes - diff.downvotes, upvotes = a.upvotes + diff.upvotes, downvotes = a.downvotes + diff.downvotes, controversy_rank = r.controversy_rank ((a.upvotes + diff.upvotes)::numeric, (a.downvotes + diff.downvotes)::numeric)
                    FROM (
                        SELECT
                            (comment_actions).comment_id, coalesce(sum(count_diff) FILTER (WHERE (comment_actions).vote_is_upvote), 0) AS upvotes, coalesce(sum(count_diff) FILTER (WHERE NOT (comment_actions).vote_is_upvote), 0) AS downvotes FROM  (
        SELECT
            -1 AS count_diff,
            old_table::comment_actions AS comment_actions
        FROM
            select_old_rows AS old_table
        UNION ALL
        SELECT
            1 AS count_diff,
            new_table::comment_actions AS comment_actions
        FROM
             (
        SELECT
            *
        FROM
            -- Real transition table
            select_old_rows
        WHERE
            FALSE)  AS new_table)  AS old_and_new_rows
                WHERE (comment_actions).vote_is_upvote IS NOT NULL GROUP BY (comment_actions).comment_id) AS diff
            WHERE
                a.id = diff.comment_id
                    AND (diff.upvotes, diff.downvotes) != (0, 0)
                RETURNING
                    a.creator_id AS creator_id, diff.upvotes - diff.downvotes AS score)
                UPDATE
                    person AS a
                SET
                    comment_score = a.comment_score + diff.score FROM (
                        SELECT
                            creator_id, sum(score) AS score FROM comment_diff GROUP BY creator_id) AS diff
                    WHERE
                        a.id = diff.creator_id
                        AND diff.score != 0;
                RETURN NULL;
            END;
    $$;

CREATE FUNCTION r.comment_actions_insert_statement() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
            BEGIN
                WITH comment_diff AS ( UPDATE
                        comment AS a
                    SET
                        score = a.score + diff.upvotes - diff.downvotes, upvotes = a.upvotes + diff.upvotes, downvotes = a.downvotes + diff.downvotes, controversy_rank = r.controversy_rank ((a.upvotes + diff.upvotes)::numeric, (a.downvotes + diff.downvotes)::numeric)
                    FROM (
                        SELECT
                            (comment_actions).comment_id, coalesce(sum(count_diff) FILTER (WHERE (comment_actions).vote_is_upvote), 0) AS upvotes, coalesce(sum(count_diff) FILTER (WHERE NOT (comment_actions).vote_is_upvote), 0) AS downvotes FROM  (
        SELECT
            -1 AS count_diff,
            old_table::comment_actions AS comment_actions
        FROM
             (
        SELECT
            *
        FROM
            -- Real transition table
            select_new_rows
        WHERE
            FALSE)  AS old_table
        UNION ALL
        SELECT
            1 AS count_diff,
            new_table::comment_actions AS comment_actions
        FROM
            select_new_rows AS new_table)  AS old_and_new_rows
                WHERE (comment_actions).vote_is_upvote IS NOT NULL GROUP BY (comment_actions).comment_id) AS diff
            WHERE
                a.id = diff.comment_id
                    AND (diff.upvotes, diff.downvotes) != (0, 0)
                RETURNING
                    a.creator_id AS creator_id, diff.upvotes - diff.downvotes AS score)
                UPDATE
                    person AS a
                SET
                    comment_score = a.comment_score + diff.score FROM (
                        SELECT
                            creator_id, sum(score) AS score FROM comment_diff GROUP BY creator_id) AS diff
                    WHERE
                        a.id = diff.creator_id
                        AND diff.score != 0;
                RETURN NULL;
            END;
    $$;

CREATE FUNCTION r.comment_actions_update_statement() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
            BEGIN
                WITH comment_diff AS ( UPDATE
                        comment AS a
                    SET
                        score = a.score + diff.upvotes - diff.downvotes, upvotes = a.upvotes + diff.upvotes, downvotes = a.downvotes + diff.downvotes, controversy_rank = r.controversy_rank ((a.upvotes + diff.upvotes)::numeric, (a.downvotes + diff.downvotes)::numeric)
                    FROM (
                        SELECT
                            (comment_actions).comment_id, coalesce(sum(count_diff) FILTER (WHERE (comment_actions).vote_is_upvote), 0) AS upvotes, coalesce(sum(count_diff) FILTER (WHERE NOT (comment_actions).vote_is_upvote), 0) AS downvotes FROM  (
        SELECT
            -1 AS count_diff,
            old_table::comment_actions AS comment_actions
        FROM
            select_old_rows AS old_table
        UNION ALL
        SELECT
            1 AS count_diff,
            new_table::comment_actions AS comment_actions
        FROM
            select_new_rows AS new_table)  AS old_and_new_rows
                WHERE (comment_actions).vote_is_upvote IS NOT NULL GROUP BY (comment_actions).comment_id) AS diff
            WHERE
                a.id = diff.comment_id
                    AND (diff.upvotes, diff.downvotes) != (0, 0)
                RETURNING
                    a.creator_id AS creator_id, diff.upvotes - diff.downvotes AS score)
                UPDATE
                    person AS a
                SET
                    comment_score = a.comment_score + diff.score FROM (
                        SELECT
                            creator_id, sum(score) AS score FROM comment_diff GROUP BY creator_id) AS diff
                    WHERE
                        a.id = diff.creator_id
                        AND diff.score != 0;
                RETURN NULL;
            END;
    $$;

CREATE FUNCTION r.comment_change_values() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
    id text = NEW.id::text;
BEGIN
    -- Make `path` end with `id` if it doesn't already
    IF NOT (NEW.path ~ ('*.' || id)::lquery) THEN
        NEW.path = NEW.path || id;
    END IF;
    -- Set local ap_id
    IF NEW.local THEN
        NEW.ap_id = coalesce(NEW.ap_id, r.local_url ('/comment/' || id));
    END IF;
    RETURN NEW;
END
$$;

CREATE FUNCTION r.comment_delete_statement() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    -- Prevent infinite recursion
    IF (
        SELECT
            count(*)
    FROM  (
        SELECT
            -1 AS count_diff,
            old_table::comment AS comment
        FROM
            select_old_rows AS old_table
        UNION ALL
        SELECT
            1 AS count_diff,
            new_table::comment AS comment
        FROM
             (
        SELECT
            *
        FROM
            -- Real transition table
            select_old_rows
        WHERE
            FALSE)  AS new_table)  AS old_and_new_rows) = 0 THEN
        RETURN NULL;
END IF;
UPDATE
    person AS a
SET
    comment_count = a.comment_count + diff.comment_count
FROM (
    SELECT
        (comment).creator_id,
        coalesce(sum(count_diff), 0) AS comment_count
    FROM
         (
        SELECT
            -1 AS count_diff,
            old_table::comment AS comment
        FROM
            select_old_rows AS old_table
        UNION ALL
        SELECT
            1 AS count_diff,
            new_table::comment AS comment
        FROM
             (
        SELECT
            *
        FROM
            -- Real transition table
            select_old_rows
        WHERE
            FALSE)  AS new_table)  AS old_and_new_rows
    WHERE
        r.is_counted (comment)
    GROUP BY
        (comment).creator_id) AS diff
WHERE
    a.id = diff.creator_id
    AND diff.comment_count != 0;
UPDATE
    comment AS a
SET
    child_count = a.child_count + diff.child_count
FROM (
    SELECT
        parent_id,
        coalesce(sum(count_diff), 0) AS child_count
    FROM (
        -- For each inserted or deleted comment, this outputs 1 row for each parent comment.
        -- For example, this:
        --
        --  count_diff | (comment).path
        -- ------------+----------------
        --  1          | 0.5.6.7
        --  1          | 0.5.6.7.8
        --
        -- becomes this:
        --
        --  count_diff | parent_id
        -- ------------+-----------
        --  1          | 5
        --  1          | 6
        --  1          | 5
        --  1          | 6
        --  1          | 7
        SELECT
            count_diff,
            parent_id
        FROM
             (
        SELECT
            -1 AS count_diff,
            old_table::comment AS comment
        FROM
            select_old_rows AS old_table
        UNION ALL
        SELECT
            1 AS count_diff,
            new_table::comment AS comment
        FROM
             (
        SELECT
            *
        FROM
            -- Real transition table
            select_old_rows
        WHERE
            FALSE)  AS new_table)  AS old_and_new_rows,
            LATERAL r.parent_comment_ids ((comment).path) AS parent_id) AS expanded_old_and_new_rows
    GROUP BY
        parent_id) AS diff
WHERE
    a.id = diff.parent_id
    AND diff.child_count != 0;
UPDATE
    post AS a
SET
    comments = a.comments + diff.comments,
    newest_comment_time_at = GREATEST (a.newest_comment_time_at, diff.newest_comment_time_at),
    newest_comment_time_necro_at = GREATEST (a.newest_comment_time_necro_at, diff.newest_comment_time_necro_at)
FROM (
    SELECT
        post.id AS post_id,
        coalesce(sum(count_diff), 0) AS comments,
        -- Old rows are excluded using `count_diff = 1`
        max((comment).published_at) FILTER (WHERE count_diff = 1) AS newest_comment_time_at,
        max((comment).published_at) FILTER (WHERE count_diff = 1
            -- Ignore comments from the post's creator
            AND post.creator_id != (comment).creator_id
        -- Ignore comments on old posts
        AND post.published_at > ((comment).published_at - '2 days'::interval)) AS newest_comment_time_necro_at
FROM
     (
        SELECT
            -1 AS count_diff,
            old_table::comment AS comment
        FROM
            select_old_rows AS old_table
        UNION ALL
        SELECT
            1 AS count_diff,
            new_table::comment AS comment
        FROM
             (
        SELECT
            *
        FROM
            -- Real transition table
            select_old_rows
        WHERE
            FALSE)  AS new_table)  AS old_and_new_rows
    LEFT JOIN post ON post.id = (comment).post_id
WHERE
    r.is_counted (comment)
GROUP BY
    post.id) AS diff
WHERE
    a.id = diff.post_id
    AND (diff.comments,
        GREATEST (a.newest_comment_time_at, diff.newest_comment_time_at),
        GREATEST (a.newest_comment_time_necro_at, diff.newest_comment_time_necro_at)) != (0,
        a.newest_comment_time_at,
        a.newest_comment_time_necro_at);
UPDATE
    local_site AS a
SET
    comments = a.comments + diff.comments
FROM (
    SELECT
        coalesce(sum(count_diff), 0) AS comments
    FROM
         (
        SELECT
            -1 AS count_diff,
            old_table::comment AS comment
        FROM
            select_old_rows AS old_table
        UNION ALL
        SELECT
            1 AS count_diff,
            new_table::comment AS comment
        FROM
             (
        SELECT
            *
        FROM
            -- Real transition table
            select_old_rows
        WHERE
            FALSE)  AS new_table)  AS old_and_new_rows
    WHERE
        r.is_counted (comment)
        AND (comment).local) AS diff
WHERE
    diff.comments != 0;
RETURN NULL;
END;
$$;

CREATE FUNCTION r.comment_insert_statement() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    -- Prevent infinite recursion
    IF (
        SELECT
            count(*)
    FROM  (
        SELECT
            -1 AS count_diff,
            old_table::comment AS comment
        FROM
             (
        SELECT
            *
        FROM
            -- Real transition table
            select_new_rows
        WHERE
            FALSE)  AS old_table
        UNION ALL
        SELECT
            1 AS count_diff,
            new_table::comment AS comment
        FROM
            select_new_rows AS new_table)  AS old_and_new_rows) = 0 THEN
        RETURN NULL;
END IF;
UPDATE
    person AS a
SET
    comment_count = a.comment_count + diff.comment_count
FROM (
    SELECT
        (comment).creator_id,
        coalesce(sum(count_diff), 0) AS comment_count
    FROM
         (
        SELECT
            -1 AS count_diff,
            old_table::comment AS comment
        FROM
             (
        SELECT
            *
        FROM
            -- Real transition table
            select_new_rows
        WHERE
            FALSE)  AS old_table
        UNION ALL
        SELECT
            1 AS count_diff,
            new_table::comment AS comment
        FROM
            select_new_rows AS new_table)  AS old_and_new_rows
    WHERE
        r.is_counted (comment)
    GROUP BY
        (comment).creator_id) AS diff
WHERE
    a.id = diff.creator_id
    AND diff.comment_count != 0;
UPDATE
    comment AS a
SET
    child_count = a.child_count + diff.child_count
FROM (
    SELECT
        parent_id,
        coalesce(sum(count_diff), 0) AS child_count
    FROM (
        -- For each inserted or deleted comment, this outputs 1 row for each parent comment.
        -- For example, this:
        --
        --  count_diff | (comment).path
        -- ------------+----------------
        --  1          | 0.5.6.7
        --  1          | 0.5.6.7.8
        --
        -- becomes this:
        --
        --  count_diff | parent_id
        -- ------------+-----------
        --  1          | 5
        --  1          | 6
        --  1          | 5
        --  1          | 6
        --  1          | 7
        SELECT
            count_diff,
            parent_id
        FROM
             (
        SELECT
            -1 AS count_diff,
            old_table::comment AS comment
        FROM
             (
        SELECT
            *
        FROM
            -- Real transition table
            select_new_rows
        WHERE
            FALSE)  AS old_table
        UNION ALL
        SELECT
            1 AS count_diff,
            new_table::comment AS comment
        FROM
            select_new_rows AS new_table)  AS old_and_new_rows,
            LATERAL r.parent_comment_ids ((comment).path) AS parent_id) AS expanded_old_and_new_rows
    GROUP BY
        parent_id) AS diff
WHERE
    a.id = diff.parent_id
    AND diff.child_count != 0;
UPDATE
    post AS a
SET
    comments = a.comments + diff.comments,
    newest_comment_time_at = GREATEST (a.newest_comment_time_at, diff.newest_comment_time_at),
    newest_comment_time_necro_at = GREATEST (a.newest_comment_time_necro_at, diff.newest_comment_time_necro_at)
FROM (
    SELECT
        post.id AS post_id,
        coalesce(sum(count_diff), 0) AS comments,
        -- Old rows are excluded using `count_diff = 1`
        max((comment).published_at) FILTER (WHERE count_diff = 1) AS newest_comment_time_at,
        max((comment).published_at) FILTER (WHERE count_diff = 1
            -- Ignore comments from the post's creator
            AND post.creator_id != (comment).creator_id
        -- Ignore comments on old posts
        AND post.published_at > ((comment).published_at - '2 days'::interval)) AS newest_comment_time_necro_at
FROM
     (
        SELECT
            -1 AS count_diff,
            old_table::comment AS comment
        FROM
             (
        SELECT
            *
        FROM
            -- Real transition table
            select_new_rows
        WHERE
            FALSE)  AS old_table
        UNION ALL
        SELECT
            1 AS count_diff,
            new_table::comment AS comment
        FROM
            select_new_rows AS new_table)  AS old_and_new_rows
    LEFT JOIN post ON post.id = (comment).post_id
WHERE
    r.is_counted (comment)
GROUP BY
    post.id) AS diff
WHERE
    a.id = diff.post_id
    AND (diff.comments,
        GREATEST (a.newest_comment_time_at, diff.newest_comment_time_at),
        GREATEST (a.newest_comment_time_necro_at, diff.newest_comment_time_necro_at)) != (0,
        a.newest_comment_time_at,
        a.newest_comment_time_necro_at);
UPDATE
    local_site AS a
SET
    comments = a.comments + diff.comments
FROM (
    SELECT
        coalesce(sum(count_diff), 0) AS comments
    FROM
         (
        SELECT
            -1 AS count_diff,
            old_table::comment AS comment
        FROM
             (
        SELECT
            *
        FROM
            -- Real transition table
            select_new_rows
        WHERE
            FALSE)  AS old_table
        UNION ALL
        SELECT
            1 AS count_diff,
            new_table::comment AS comment
        FROM
            select_new_rows AS new_table)  AS old_and_new_rows
    WHERE
        r.is_counted (comment)
        AND (comment).local) AS diff
WHERE
    diff.comments != 0;
RETURN NULL;
END;
$$;

CREATE FUNCTION r.comment_report_delete_statement() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    UPDATE
        comment AS a
    SET
        report_count = a.report_count + diff.report_count, unresolved_report_count = a.unresolved_report_count + diff.unresolved_report_count
    FROM (
        SELECT
            (comment_report).comment_id, coalesce(sum(count_diff), 0) AS report_count, coalesce(sum(count_diff) FILTER (WHERE NOT (comment_report).resolved
                AND NOT (comment_report).violates_instance_rules), 0) AS unresolved_report_count
FROM  (
        SELECT
            -1 AS count_diff,
            old_table::comment_report AS comment_report
        FROM
            select_old_rows AS old_table
        UNION ALL
        SELECT
            1 AS count_diff,
            new_table::comment_report AS comment_report
        FROM
             (
        SELECT
            *
        FROM
            -- Real transition table
            select_old_rows
        WHERE
            FALSE)  AS new_table)  AS old_and_new_rows GROUP BY (comment_report).comment_id) AS diff
WHERE (diff.report_count, diff.unresolved_report_count) != (0, 0)
AND a.id = diff.comment_id;
RETURN NULL;
END;
$$;

CREATE FUNCTION r.comment_report_insert_statement() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    UPDATE
        comment AS a
    SET
        report_count = a.report_count + diff.report_count, unresolved_report_count = a.unresolved_report_count + diff.unresolved_report_count
    FROM (
        SELECT
            (comment_report).comment_id, coalesce(sum(count_diff), 0) AS report_count, coalesce(sum(count_diff) FILTER (WHERE NOT (comment_report).resolved
                AND NOT (comment_report).violates_instance_rules), 0) AS unresolved_report_count
FROM  (
        SELECT
            -1 AS count_diff,
            old_table::comment_report AS comment_report
        FROM
             (
        SELECT
            *
        FROM
            -- Real transition table
            select_new_rows
        WHERE
            FALSE)  AS old_table
        UNION ALL
        SELECT
            1 AS count_diff,
            new_table::comment_report AS comment_report
        FROM
            select_new_rows AS new_table)  AS old_and_new_rows GROUP BY (comment_report).comment_id) AS diff
WHERE (diff.report_count, diff.unresolved_report_count) != (0, 0)
AND a.id = diff.comment_id;
RETURN NULL;
END;
$$;

CREATE FUNCTION r.comment_report_update_statement() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    UPDATE
        comment AS a
    SET
        report_count = a.report_count + diff.report_count, unresolved_report_count = a.unresolved_report_count + diff.unresolved_report_count
    FROM (
        SELECT
            (comment_report).comment_id, coalesce(sum(count_diff), 0) AS report_count, coalesce(sum(count_diff) FILTER (WHERE NOT (comment_report).resolved
                AND NOT (comment_report).violates_instance_rules), 0) AS unresolved_report_count
FROM  (
        SELECT
            -1 AS count_diff,
            old_table::comment_report AS comment_report
        FROM
            select_old_rows AS old_table
        UNION ALL
        SELECT
            1 AS count_diff,
            new_table::comment_report AS comment_report
        FROM
            select_new_rows AS new_table)  AS old_and_new_rows GROUP BY (comment_report).comment_id) AS diff
WHERE (diff.report_count, diff.unresolved_report_count) != (0, 0)
AND a.id = diff.comment_id;
RETURN NULL;
END;
$$;

CREATE FUNCTION r.comment_update_statement() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    -- Prevent infinite recursion
    IF (
        SELECT
            count(*)
    FROM  (
        SELECT
            -1 AS count_diff,
            old_table::comment AS comment
        FROM
            select_old_rows AS old_table
        UNION ALL
        SELECT
            1 AS count_diff,
            new_table::comment AS comment
        FROM
            select_new_rows AS new_table)  AS old_and_new_rows) = 0 THEN
        RETURN NULL;
END IF;
UPDATE
    person AS a
SET
    comment_count = a.comment_count + diff.comment_count
FROM (
    SELECT
        (comment).creator_id,
        coalesce(sum(count_diff), 0) AS comment_count
    FROM
         (
        SELECT
            -1 AS count_diff,
            old_table::comment AS comment
        FROM
            select_old_rows AS old_table
        UNION ALL
        SELECT
            1 AS count_diff,
            new_table::comment AS comment
        FROM
            select_new_rows AS new_table)  AS old_and_new_rows
    WHERE
        r.is_counted (comment)
    GROUP BY
        (comment).creator_id) AS diff
WHERE
    a.id = diff.creator_id
    AND diff.comment_count != 0;
UPDATE
    comment AS a
SET
    child_count = a.child_count + diff.child_count
FROM (
    SELECT
        parent_id,
        coalesce(sum(count_diff), 0) AS child_count
    FROM (
        -- For each inserted or deleted comment, this outputs 1 row for each parent comment.
        -- For example, this:
        --
        --  count_diff | (comment).path
        -- ------------+----------------
        --  1          | 0.5.6.7
        --  1          | 0.5.6.7.8
        --
        -- becomes this:
        --
        --  count_diff | parent_id
        -- ------------+-----------
        --  1          | 5
        --  1          | 6
        --  1          | 5
        --  1          | 6
        --  1          | 7
        SELECT
            count_diff,
            parent_id
        FROM
             (
        SELECT
            -1 AS count_diff,
            old_table::comment AS comment
        FROM
            select_old_rows AS old_table
        UNION ALL
        SELECT
            1 AS count_diff,
            new_table::comment AS comment
        FROM
            select_new_rows AS new_table)  AS old_and_new_rows,
            LATERAL r.parent_comment_ids ((comment).path) AS parent_id) AS expanded_old_and_new_rows
    GROUP BY
        parent_id) AS diff
WHERE
    a.id = diff.parent_id
    AND diff.child_count != 0;
UPDATE
    post AS a
SET
    comments = a.comments + diff.comments,
    newest_comment_time_at = GREATEST (a.newest_comment_time_at, diff.newest_comment_time_at),
    newest_comment_time_necro_at = GREATEST (a.newest_comment_time_necro_at, diff.newest_comment_time_necro_at)
FROM (
    SELECT
        post.id AS post_id,
        coalesce(sum(count_diff), 0) AS comments,
        -- Old rows are excluded using `count_diff = 1`
        max((comment).published_at) FILTER (WHERE count_diff = 1) AS newest_comment_time_at,
        max((comment).published_at) FILTER (WHERE count_diff = 1
            -- Ignore comments from the post's creator
            AND post.creator_id != (comment).creator_id
        -- Ignore comments on old posts
        AND post.published_at > ((comment).published_at - '2 days'::interval)) AS newest_comment_time_necro_at
FROM
     (
        SELECT
            -1 AS count_diff,
            old_table::comment AS comment
        FROM
            select_old_rows AS old_table
        UNION ALL
        SELECT
            1 AS count_diff,
            new_table::comment AS comment
        FROM
            select_new_rows AS new_table)  AS old_and_new_rows
    LEFT JOIN post ON post.id = (comment).post_id
WHERE
    r.is_counted (comment)
GROUP BY
    post.id) AS diff
WHERE
    a.id = diff.post_id
    AND (diff.comments,
        GREATEST (a.newest_comment_time_at, diff.newest_comment_time_at),
        GREATEST (a.newest_comment_time_necro_at, diff.newest_comment_time_necro_at)) != (0,
        a.newest_comment_time_at,
        a.newest_comment_time_necro_at);
UPDATE
    local_site AS a
SET
    comments = a.comments + diff.comments
FROM (
    SELECT
        coalesce(sum(count_diff), 0) AS comments
    FROM
         (
        SELECT
            -1 AS count_diff,
            old_table::comment AS comment
        FROM
            select_old_rows AS old_table
        UNION ALL
        SELECT
            1 AS count_diff,
            new_table::comment AS comment
        FROM
            select_new_rows AS new_table)  AS old_and_new_rows
    WHERE
        r.is_counted (comment)
        AND (comment).local) AS diff
WHERE
    diff.comments != 0;
RETURN NULL;
END;
$$;

CREATE FUNCTION r.community_actions_delete_statement() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    UPDATE
        community AS a
    SET
        subscribers = a.subscribers + diff.subscribers, subscribers_local = a.subscribers_local + diff.subscribers_local
    FROM (
        SELECT
            (community_actions).community_id, coalesce(sum(count_diff) FILTER (WHERE community.local), 0) AS subscribers, coalesce(sum(count_diff) FILTER (WHERE person.local), 0) AS subscribers_local
        FROM  (
        SELECT
            -1 AS count_diff,
            old_table::community_actions AS community_actions
        FROM
            select_old_rows AS old_table
        UNION ALL
        SELECT
            1 AS count_diff,
            new_table::community_actions AS community_actions
        FROM
             (
        SELECT
            *
        FROM
            -- Real transition table
            select_old_rows
        WHERE
            FALSE)  AS new_table)  AS old_and_new_rows
        LEFT JOIN community ON community.id = (community_actions).community_id
        LEFT JOIN person ON person.id = (community_actions).person_id
        WHERE (community_actions).followed_at IS NOT NULL GROUP BY (community_actions).community_id) AS diff
WHERE
    a.id = diff.community_id
        AND (diff.subscribers, diff.subscribers_local) != (0, 0);
RETURN NULL;
END;
$$;

CREATE FUNCTION r.community_actions_insert_statement() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    UPDATE
        community AS a
    SET
        subscribers = a.subscribers + diff.subscribers, subscribers_local = a.subscribers_local + diff.subscribers_local
    FROM (
        SELECT
            (community_actions).community_id, coalesce(sum(count_diff) FILTER (WHERE community.local), 0) AS subscribers, coalesce(sum(count_diff) FILTER (WHERE person.local), 0) AS subscribers_local
        FROM  (
        SELECT
            -1 AS count_diff,
            old_table::community_actions AS community_actions
        FROM
             (
        SELECT
            *
        FROM
            -- Real transition table
            select_new_rows
        WHERE
            FALSE)  AS old_table
        UNION ALL
        SELECT
            1 AS count_diff,
            new_table::community_actions AS community_actions
        FROM
            select_new_rows AS new_table)  AS old_and_new_rows
        LEFT JOIN community ON community.id = (community_actions).community_id
        LEFT JOIN person ON person.id = (community_actions).person_id
        WHERE (community_actions).followed_at IS NOT NULL GROUP BY (community_actions).community_id) AS diff
WHERE
    a.id = diff.community_id
        AND (diff.subscribers, diff.subscribers_local) != (0, 0);
RETURN NULL;
END;
$$;

CREATE FUNCTION r.community_actions_update_statement() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    UPDATE
        community AS a
    SET
        subscribers = a.subscribers + diff.subscribers, subscribers_local = a.subscribers_local + diff.subscribers_local
    FROM (
        SELECT
            (community_actions).community_id, coalesce(sum(count_diff) FILTER (WHERE community.local), 0) AS subscribers, coalesce(sum(count_diff) FILTER (WHERE person.local), 0) AS subscribers_local
        FROM  (
        SELECT
            -1 AS count_diff,
            old_table::community_actions AS community_actions
        FROM
            select_old_rows AS old_table
        UNION ALL
        SELECT
            1 AS count_diff,
            new_table::community_actions AS community_actions
        FROM
            select_new_rows AS new_table)  AS old_and_new_rows
        LEFT JOIN community ON community.id = (community_actions).community_id
        LEFT JOIN person ON person.id = (community_actions).person_id
        WHERE (community_actions).followed_at IS NOT NULL GROUP BY (community_actions).community_id) AS diff
WHERE
    a.id = diff.community_id
        AND (diff.subscribers, diff.subscribers_local) != (0, 0);
RETURN NULL;
END;
$$;

CREATE FUNCTION r.community_aggregates_activity(i text) RETURNS TABLE(count_ integer, community_id_ integer)
    LANGUAGE plpgsql
    AS $$
BEGIN
    RETURN QUERY
    SELECT
        count(*)::integer,
        community_id
    FROM (
        SELECT
            c.creator_id,
            p.community_id
        FROM
            comment c
            INNER JOIN post p ON c.post_id = p.id
            INNER JOIN person pe ON c.creator_id = pe.id
        WHERE
            c.published_at > ('now'::timestamp - i::interval)
            AND pe.bot_account = FALSE
    UNION
    SELECT
        p.creator_id,
        p.community_id
    FROM
        post p
            INNER JOIN person pe ON p.creator_id = pe.id
        WHERE
            p.published_at > ('now'::timestamp - i::interval)
            AND pe.bot_account = FALSE
    UNION
    SELECT
        pa.person_id,
        p.community_id
    FROM
        post_actions pa
            INNER JOIN post p ON pa.post_id = p.id
            INNER JOIN person pe ON pa.person_id = pe.id
        WHERE
            pa.voted_at > ('now'::timestamp - i::interval)
            AND pe.bot_account = FALSE
    UNION
    SELECT
        ca.person_id,
        p.community_id
    FROM
        comment_actions ca
            INNER JOIN comment c ON ca.comment_id = c.id
            INNER JOIN post p ON c.post_id = p.id
            INNER JOIN person pe ON ca.person_id = pe.id
        WHERE
            ca.voted_at > ('now'::timestamp - i::interval)
            AND pe.bot_account = FALSE) a
GROUP BY
    community_id;
END;
$$;

CREATE FUNCTION r.community_aggregates_interactions(i text) RETURNS TABLE(count_ integer, community_id_ integer)
    LANGUAGE plpgsql
    AS $$
BEGIN
    RETURN QUERY
    SELECT
        COALESCE(sum(comments + upvotes + downvotes)::integer, 0) AS count_,
        community_id AS community_id_
    FROM
        post
    WHERE
        published_at >= (CURRENT_TIMESTAMP - i::interval)
    GROUP BY
        community_id;
END;
$$;

CREATE FUNCTION r.community_delete_statement() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    UPDATE
        local_site AS a
    SET
        communities = a.communities + diff.communities
    FROM (
        SELECT
            coalesce(sum(count_diff), 0) AS communities
        FROM  (
        SELECT
            -1 AS count_diff,
            old_table::community AS community
        FROM
            select_old_rows AS old_table
        UNION ALL
        SELECT
            1 AS count_diff,
            new_table::community AS community
        FROM
             (
        SELECT
            *
        FROM
            -- Real transition table
            select_old_rows
        WHERE
            FALSE)  AS new_table)  AS old_and_new_rows
        WHERE
            r.is_counted (community)
            AND (community).local) AS diff
WHERE
    diff.communities != 0;
RETURN NULL;
END;
$$;

CREATE FUNCTION r.community_insert_statement() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    UPDATE
        local_site AS a
    SET
        communities = a.communities + diff.communities
    FROM (
        SELECT
            coalesce(sum(count_diff), 0) AS communities
        FROM  (
        SELECT
            -1 AS count_diff,
            old_table::community AS community
        FROM
             (
        SELECT
            *
        FROM
            -- Real transition table
            select_new_rows
        WHERE
            FALSE)  AS old_table
        UNION ALL
        SELECT
            1 AS count_diff,
            new_table::community AS community
        FROM
            select_new_rows AS new_table)  AS old_and_new_rows
        WHERE
            r.is_counted (community)
            AND (community).local) AS diff
WHERE
    diff.communities != 0;
RETURN NULL;
END;
$$;

CREATE FUNCTION r.community_report_delete_statement() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    UPDATE
        community AS a
    SET
        report_count = a.report_count + diff.report_count, unresolved_report_count = a.unresolved_report_count + diff.unresolved_report_count
    FROM (
        SELECT
            (community_report).community_id, coalesce(sum(count_diff), 0) AS report_count, coalesce(sum(count_diff) FILTER (WHERE NOT (community_report).resolved), 0) AS unresolved_report_count
    FROM  (
        SELECT
            -1 AS count_diff,
            old_table::community_report AS community_report
        FROM
            select_old_rows AS old_table
        UNION ALL
        SELECT
            1 AS count_diff,
            new_table::community_report AS community_report
        FROM
             (
        SELECT
            *
        FROM
            -- Real transition table
            select_old_rows
        WHERE
            FALSE)  AS new_table)  AS old_and_new_rows GROUP BY (community_report).community_id) AS diff
WHERE (diff.report_count, diff.unresolved_report_count) != (0, 0)
    AND a.id = diff.community_id;
RETURN NULL;
END;
$$;

CREATE FUNCTION r.community_report_insert_statement() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    UPDATE
        community AS a
    SET
        report_count = a.report_count + diff.report_count, unresolved_report_count = a.unresolved_report_count + diff.unresolved_report_count
    FROM (
        SELECT
            (community_report).community_id, coalesce(sum(count_diff), 0) AS report_count, coalesce(sum(count_diff) FILTER (WHERE NOT (community_report).resolved), 0) AS unresolved_report_count
    FROM  (
        SELECT
            -1 AS count_diff,
            old_table::community_report AS community_report
        FROM
             (
        SELECT
            *
        FROM
            -- Real transition table
            select_new_rows
        WHERE
            FALSE)  AS old_table
        UNION ALL
        SELECT
            1 AS count_diff,
            new_table::community_report AS community_report
        FROM
            select_new_rows AS new_table)  AS old_and_new_rows GROUP BY (community_report).community_id) AS diff
WHERE (diff.report_count, diff.unresolved_report_count) != (0, 0)
    AND a.id = diff.community_id;
RETURN NULL;
END;
$$;

CREATE FUNCTION r.community_report_update_statement() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    UPDATE
        community AS a
    SET
        report_count = a.report_count + diff.report_count, unresolved_report_count = a.unresolved_report_count + diff.unresolved_report_count
    FROM (
        SELECT
            (community_report).community_id, coalesce(sum(count_diff), 0) AS report_count, coalesce(sum(count_diff) FILTER (WHERE NOT (community_report).resolved), 0) AS unresolved_report_count
    FROM  (
        SELECT
            -1 AS count_diff,
            old_table::community_report AS community_report
        FROM
            select_old_rows AS old_table
        UNION ALL
        SELECT
            1 AS count_diff,
            new_table::community_report AS community_report
        FROM
            select_new_rows AS new_table)  AS old_and_new_rows GROUP BY (community_report).community_id) AS diff
WHERE (diff.report_count, diff.unresolved_report_count) != (0, 0)
    AND a.id = diff.community_id;
RETURN NULL;
END;
$$;

CREATE FUNCTION r.community_update_statement() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    UPDATE
        local_site AS a
    SET
        communities = a.communities + diff.communities
    FROM (
        SELECT
            coalesce(sum(count_diff), 0) AS communities
        FROM  (
        SELECT
            -1 AS count_diff,
            old_table::community AS community
        FROM
            select_old_rows AS old_table
        UNION ALL
        SELECT
            1 AS count_diff,
            new_table::community AS community
        FROM
            select_new_rows AS new_table)  AS old_and_new_rows
        WHERE
            r.is_counted (community)
            AND (community).local) AS diff
WHERE
    diff.communities != 0;
RETURN NULL;
END;
$$;

CREATE FUNCTION r.controversy_rank(upvotes numeric, downvotes numeric) RETURNS real
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN CASE WHEN ((downvotes <= (0)::numeric) OR (upvotes <= (0)::numeric)) THEN (0)::double precision ELSE (((upvotes + downvotes))::double precision ^ CASE WHEN (upvotes > downvotes) THEN ((downvotes)::double precision / (upvotes)::double precision) ELSE ((upvotes)::double precision / (downvotes)::double precision) END) END;

CREATE PROCEDURE r.create_triggers(IN table_name text, IN function_body text)
    LANGUAGE plpgsql
    AS $_$
DECLARE
    defs text := $$
    -- Delete
    CREATE FUNCTION r.thing_delete_statement ()
        RETURNS TRIGGER
        LANGUAGE plpgsql
        AS function_body_delete;
    CREATE TRIGGER delete_statement
        AFTER DELETE ON thing REFERENCING OLD TABLE AS select_old_rows
        FOR EACH STATEMENT
        EXECUTE FUNCTION r.thing_delete_statement ( );
    -- Insert
    CREATE FUNCTION r.thing_insert_statement ( )
        RETURNS TRIGGER
        LANGUAGE plpgsql
        AS function_body_insert;
    CREATE TRIGGER insert_statement
        AFTER INSERT ON thing REFERENCING NEW TABLE AS select_new_rows
        FOR EACH STATEMENT
        EXECUTE FUNCTION r.thing_insert_statement ( );
    -- Update
    CREATE FUNCTION r.thing_update_statement ( )
        RETURNS TRIGGER
        LANGUAGE plpgsql
        AS function_body_update;
    CREATE TRIGGER update_statement
        AFTER UPDATE ON thing REFERENCING OLD TABLE AS select_old_rows NEW TABLE AS select_new_rows
        FOR EACH STATEMENT
        EXECUTE FUNCTION r.thing_update_statement ( );
    $$;
    select_old_and_new_rows text := $$ (
        SELECT
            -1 AS count_diff,
            old_table::thing AS thing
        FROM
            select_old_rows AS old_table
        UNION ALL
        SELECT
            1 AS count_diff,
            new_table::thing AS thing
        FROM
            select_new_rows AS new_table) $$;
    empty_select_new_rows text := $$ (
        SELECT
            *
        FROM
            -- Real transition table
            select_old_rows
        WHERE
            FALSE) $$;
    empty_select_old_rows text := $$ (
        SELECT
            *
        FROM
            -- Real transition table
            select_new_rows
        WHERE
            FALSE) $$;
    BEGIN
        function_body := replace(function_body, 'select_old_and_new_rows', select_old_and_new_rows);
        -- `select_old_rows` and `select_new_rows` are made available as empty tables if they don't already exist
        defs := replace(defs, 'function_body_delete', quote_literal(replace(function_body, 'select_new_rows', empty_select_new_rows)));
        defs := replace(defs, 'function_body_insert', quote_literal(replace(function_body, 'select_old_rows', empty_select_old_rows)));
        defs := replace(defs, 'function_body_update', quote_literal(function_body));
        defs := replace(defs, 'thing', table_name);
        EXECUTE defs;
END;
$_$;

CREATE FUNCTION r.delete_follow_before_person() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    DELETE FROM community_actions AS c
    WHERE c.person_id = OLD.id;
    RETURN OLD;
END;
$$;

CREATE FUNCTION r.hot_rank(score numeric, published_at timestamp with time zone) RETURNS real
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN CASE WHEN (((now() - published_at) > '00:00:00'::interval) AND ((now() - published_at) < '7 days'::interval)) THEN (log(GREATEST((2)::numeric, (score + (2)::numeric))) / power(((EXTRACT(epoch FROM (now() - published_at)) / (3600)::numeric) + (2)::numeric), 1.8)) ELSE 0.0 END;

CREATE FUNCTION r.is_counted(item record) RETURNS boolean
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
    AS $$
BEGIN
    RETURN COALESCE(NOT (item.deleted
            OR item.removed), FALSE);
END;
$$;

CREATE FUNCTION r.local_url(url_path text) RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE
    RETURN (current_setting('lemmy.protocol_and_hostname'::text) || url_path);

CREATE FUNCTION r.modlog_child_count_decrement() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    UPDATE
        modlog
    SET
        child_count = child_count - 1
    WHERE
        id = OLD.bulk_action_parent_id;
    RETURN NULL;
END
$$;

CREATE FUNCTION r.modlog_child_count_increment() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    UPDATE
        modlog
    SET
        child_count = child_count + 1
    WHERE
        id = NEW.bulk_action_parent_id;
    RETURN NULL;
END
$$;

CREATE FUNCTION r.multicommunity_community_decrement() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    UPDATE
        multi_community
    SET
        communities = communities - 1
    WHERE
        id = OLD.multi_community_id;
    RETURN NULL;
END
$$;

CREATE FUNCTION r.multicommunity_community_increment() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    UPDATE
        multi_community
    SET
        communities = communities + 1
    WHERE
        id = NEW.multi_community_id;
    RETURN NULL;
END
$$;

CREATE FUNCTION r.multicommunity_subscribers_decrement() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    UPDATE
        multi_community AS m
    SET
        subscribers = subscribers - 1,
        subscribers_local = CASE WHEN p.local THEN
            subscribers_local - 1
        ELSE
            subscribers_local
        END
    FROM
        person AS p
    WHERE
        m.id = OLD.multi_community_id
        AND p.id = OLD.person_id;
    RETURN NULL;
END
$$;

CREATE FUNCTION r.multicommunity_subscribers_increment() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    UPDATE
        multi_community AS m
    SET
        subscribers = subscribers + 1,
        subscribers_local = CASE WHEN p.local THEN
            subscribers_local + 1
        ELSE
            subscribers_local
        END
    FROM
        person AS p
    WHERE
        m.id = NEW.multi_community_id
        AND p.id = NEW.person_id;
    RETURN NULL;
END
$$;

CREATE FUNCTION r.parent_comment_ids(path public.ltree) RETURNS SETOF integer
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    BEGIN ATOMIC
 SELECT (comment_id.comment_id)::integer AS comment_id
    FROM string_to_table(public.ltree2text(parent_comment_ids.path), '.'::text) comment_id(comment_id)
  OFFSET 1
  LIMIT (public.nlevel(parent_comment_ids.path) - 2);
END;

CREATE FUNCTION r.person_content_combined_comment_insert() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    INSERT INTO person_content_combined (published_at, creator_id, comment_id, post_id, community_id)
        VALUES (NEW.published_at, NEW.creator_id, NEW.id, NEW.post_id, NEW.community_id);
    RETURN NEW;
END
$$;

CREATE FUNCTION r.person_content_combined_post_insert() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    INSERT INTO person_content_combined (published_at, creator_id, post_id, community_id)
        VALUES (NEW.published_at, NEW.creator_id, NEW.id, NEW.community_id);
    RETURN NEW;
END
$$;

CREATE FUNCTION r.person_liked_combined_comment_delete() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    DELETE FROM person_liked_combined AS p
    WHERE p.person_id = OLD.person_id
        AND p.comment_id = OLD.comment_id;
    RETURN NULL;
END
$$;

CREATE FUNCTION r.person_liked_combined_comment_insert() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF NEW.voted_at IS NOT NULL AND (
        SELECT
            local
        FROM
            person
        WHERE
            id = NEW.person_id) = TRUE THEN
        INSERT INTO person_liked_combined (person_id, creator_id, comment_id, post_id, community_id, voted_at, vote_is_upvote)
        SELECT
            NEW.person_id,
            c.creator_id,
            NEW.comment_id,
            c.post_id,
            c.community_id,
            NEW.voted_at,
            NEW.vote_is_upvote
        FROM
            comment AS c
        WHERE
            c.id = NEW.comment_id;
    END IF;
    RETURN NULL;
END
$$;

CREATE FUNCTION r.person_liked_combined_comment_update() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF NEW.voted_at IS NOT NULL AND (
        SELECT
            local
        FROM
            person
        WHERE
            id = NEW.person_id) = TRUE THEN
        INSERT INTO person_liked_combined (person_id, creator_id, comment_id, post_id, community_id, voted_at, vote_is_upvote)
        SELECT
            NEW.person_id,
            c.creator_id,
            NEW.comment_id,
            c.post_id,
            c.community_id,
            NEW.voted_at,
            NEW.vote_is_upvote
        FROM
            comment AS c
        WHERE
            c.id = NEW.comment_id
        ON CONFLICT (person_id,
            comment_id,
            post_id)
            DO UPDATE SET
                voted_at = NEW.voted_at,
                vote_is_upvote = NEW.vote_is_upvote;
        -- If liked gets set as null, delete the row
    ELSE
        DELETE FROM person_liked_combined AS p
        WHERE p.person_id = NEW.person_id
            AND p.comment_id = NEW.comment_id;
    END IF;
    RETURN NULL;
END
$$;

CREATE FUNCTION r.person_liked_combined_post_delete() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    DELETE FROM person_liked_combined AS p
    WHERE p.person_id = OLD.person_id
        AND p.post_id = OLD.post_id;
    RETURN NULL;
END
$$;

CREATE FUNCTION r.person_liked_combined_post_insert() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF NEW.voted_at IS NOT NULL AND (
        SELECT
            local
        FROM
            person
        WHERE
            id = NEW.person_id) = TRUE THEN
        INSERT INTO person_liked_combined (person_id, creator_id, post_id, community_id, voted_at, vote_is_upvote)
        SELECT
            NEW.person_id,
            p.creator_id,
            NEW.post_id,
            p.community_id,
            NEW.voted_at,
            NEW.vote_is_upvote
        FROM
            post AS p
        WHERE
            p.id = NEW.post_id;
    END IF;
    RETURN NULL;
END
$$;

CREATE FUNCTION r.person_liked_combined_post_update() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF NEW.voted_at IS NOT NULL AND (
        SELECT
            local
        FROM
            person
        WHERE
            id = NEW.person_id) = TRUE THEN
        INSERT INTO person_liked_combined (person_id, creator_id, post_id, community_id, voted_at, vote_is_upvote)
        SELECT
            NEW.person_id,
            p.creator_id,
            NEW.post_id,
            p.community_id,
            NEW.voted_at,
            NEW.vote_is_upvote
        FROM
            post AS p
        WHERE
            p.id = NEW.post_id
        ON CONFLICT (person_id,
            comment_id,
            post_id)
            DO UPDATE SET
                voted_at = NEW.voted_at,
                vote_is_upvote = NEW.vote_is_upvote;
        -- If liked gets set as null, delete the row
    ELSE
        DELETE FROM person_liked_combined AS p
        WHERE p.person_id = NEW.person_id
            AND p.post_id = NEW.post_id;
    END IF;
    RETURN NULL;
END
$$;

CREATE FUNCTION r.person_saved_combined_comment_delete() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    DELETE FROM person_saved_combined AS p
    WHERE p.person_id = OLD.person_id
        AND p.comment_id = OLD.comment_id;
    RETURN NULL;
END
$$;

CREATE FUNCTION r.person_saved_combined_comment_insert() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF NEW.saved_at IS NOT NULL THEN
        INSERT INTO person_saved_combined (saved_at, person_id, creator_id, comment_id, post_id, community_id)
        SELECT
            NEW.saved_at,
            NEW.person_id,
            c.creator_id,
            NEW.comment_id,
            c.post_id,
            c.community_id
        FROM
            comment AS c
        WHERE
            c.id = NEW.comment_id;
    END IF;
    RETURN NULL;
END
$$;

CREATE FUNCTION r.person_saved_combined_comment_update() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF NEW.saved_at IS NOT NULL THEN
        INSERT INTO person_saved_combined (saved_at, person_id, creator_id, comment_id, post_id, community_id)
        SELECT
            NEW.saved_at,
            NEW.person_id,
            c.creator_id,
            NEW.comment_id,
            c.post_id,
            c.community_id
        FROM
            comment AS c
        WHERE
            c.id = NEW.comment_id;
        -- If saved gets set as null, delete the row
    ELSE
        DELETE FROM person_saved_combined AS p
        WHERE p.person_id = NEW.person_id
            AND p.comment_id = NEW.comment_id;
    END IF;
    RETURN NULL;
END
$$;

CREATE FUNCTION r.person_saved_combined_post_delete() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    DELETE FROM person_saved_combined AS p
    WHERE p.person_id = OLD.person_id
        AND p.post_id = OLD.post_id;
    RETURN NULL;
END
$$;

CREATE FUNCTION r.person_saved_combined_post_insert() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF NEW.saved_at IS NOT NULL THEN
        INSERT INTO person_saved_combined (saved_at, person_id, creator_id, post_id, community_id)
        SELECT
            NEW.saved_at,
            NEW.person_id,
            p.creator_id,
            NEW.post_id,
            p.community_id
        FROM
            post AS p
        WHERE
            p.id = NEW.post_id;
    END IF;
    RETURN NULL;
END
$$;

CREATE FUNCTION r.person_saved_combined_post_update() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF NEW.saved_at IS NOT NULL THEN
        INSERT INTO person_saved_combined (saved_at, person_id, creator_id, post_id, community_id)
        SELECT
            NEW.saved_at,
            NEW.person_id,
            p.creator_id,
            NEW.post_id,
            p.community_id
        FROM
            post AS p
        WHERE
            p.id = NEW.post_id;
        -- If saved gets set as null, delete the row
    ELSE
        DELETE FROM person_saved_combined AS p
        WHERE p.person_id = NEW.person_id
            AND p.post_id = NEW.post_id;
    END IF;
    RETURN NULL;
END
$$;

CREATE FUNCTION r.post_actions_delete_statement() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
            BEGIN
                WITH post_diff AS ( UPDATE
                        post AS a
                    SET
                        score = a.score + diff.upvotes - diff.downvotes, upvotes = a.upvotes + diff.upvotes, downvotes = a.downvotes + diff.downvotes, controversy_rank = r.controversy_rank ((a.upvotes + diff.upvotes)::numeric, (a.downvotes + diff.downvotes)::numeric)
                    FROM (
                        SELECT
                            (post_actions).post_id, coalesce(sum(count_diff) FILTER (WHERE (post_actions).vote_is_upvote), 0) AS upvotes, coalesce(sum(count_diff) FILTER (WHERE NOT (post_actions).vote_is_upvote), 0) AS downvotes FROM  (
        SELECT
            -1 AS count_diff,
            old_table::post_actions AS post_actions
        FROM
            select_old_rows AS old_table
        UNION ALL
        SELECT
            1 AS count_diff,
            new_table::post_actions AS post_actions
        FROM
             (
        SELECT
            *
        FROM
            -- Real transition table
            select_old_rows
        WHERE
            FALSE)  AS new_table)  AS old_and_new_rows
                WHERE (post_actions).vote_is_upvote IS NOT NULL GROUP BY (post_actions).post_id) AS diff
            WHERE
                a.id = diff.post_id
                    AND (diff.upvotes, diff.downvotes) != (0, 0)
                RETURNING
                    a.creator_id AS creator_id, diff.upvotes - diff.downvotes AS score)
                UPDATE
                    person AS a
                SET
                    post_score = a.post_score + diff.score FROM (
                        SELECT
                            creator_id, sum(score) AS score FROM post_diff GROUP BY creator_id) AS diff
                    WHERE
                        a.id = diff.creator_id
                        AND diff.score != 0;
                RETURN NULL;
            END;
    $$;

CREATE FUNCTION r.post_actions_insert_statement() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
            BEGIN
                WITH post_diff AS ( UPDATE
                        post AS a
                    SET
                        score = a.score + diff.upvotes - diff.downvotes, upvotes = a.upvotes + diff.upvotes, downvotes = a.downvotes + diff.downvotes, controversy_rank = r.controversy_rank ((a.upvotes + diff.upvotes)::numeric, (a.downvotes + diff.downvotes)::numeric)
                    FROM (
                        SELECT
                            (post_actions).post_id, coalesce(sum(count_diff) FILTER (WHERE (post_actions).vote_is_upvote), 0) AS upvotes, coalesce(sum(count_diff) FILTER (WHERE NOT (post_actions).vote_is_upvote), 0) AS downvotes FROM  (
        SELECT
            -1 AS count_diff,
            old_table::post_actions AS post_actions
        FROM
             (
        SELECT
            *
        FROM
            -- Real transition table
            select_new_rows
        WHERE
            FALSE)  AS old_table
        UNION ALL
        SELECT
            1 AS count_diff,
            new_table::post_actions AS post_actions
        FROM
            select_new_rows AS new_table)  AS old_and_new_rows
                WHERE (post_actions).vote_is_upvote IS NOT NULL GROUP BY (post_actions).post_id) AS diff
            WHERE
                a.id = diff.post_id
                    AND (diff.upvotes, diff.downvotes) != (0, 0)
                RETURNING
                    a.creator_id AS creator_id, diff.upvotes - diff.downvotes AS score)
                UPDATE
                    person AS a
                SET
                    post_score = a.post_score + diff.score FROM (
                        SELECT
                            creator_id, sum(score) AS score FROM post_diff GROUP BY creator_id) AS diff
                    WHERE
                        a.id = diff.creator_id
                        AND diff.score != 0;
                RETURN NULL;
            END;
    $$;

CREATE FUNCTION r.post_actions_update_statement() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
            BEGIN
                WITH post_diff AS ( UPDATE
                        post AS a
                    SET
                        score = a.score + diff.upvotes - diff.downvotes, upvotes = a.upvotes + diff.upvotes, downvotes = a.downvotes + diff.downvotes, controversy_rank = r.controversy_rank ((a.upvotes + diff.upvotes)::numeric, (a.downvotes + diff.downvotes)::numeric)
                    FROM (
                        SELECT
                            (post_actions).post_id, coalesce(sum(count_diff) FILTER (WHERE (post_actions).vote_is_upvote), 0) AS upvotes, coalesce(sum(count_diff) FILTER (WHERE NOT (post_actions).vote_is_upvote), 0) AS downvotes FROM  (
        SELECT
            -1 AS count_diff,
            old_table::post_actions AS post_actions
        FROM
            select_old_rows AS old_table
        UNION ALL
        SELECT
            1 AS count_diff,
            new_table::post_actions AS post_actions
        FROM
            select_new_rows AS new_table)  AS old_and_new_rows
                WHERE (post_actions).vote_is_upvote IS NOT NULL GROUP BY (post_actions).post_id) AS diff
            WHERE
                a.id = diff.post_id
                    AND (diff.upvotes, diff.downvotes) != (0, 0)
                RETURNING
                    a.creator_id AS creator_id, diff.upvotes - diff.downvotes AS score)
                UPDATE
                    person AS a
                SET
                    post_score = a.post_score + diff.score FROM (
                        SELECT
                            creator_id, sum(score) AS score FROM post_diff GROUP BY creator_id) AS diff
                    WHERE
                        a.id = diff.creator_id
                        AND diff.score != 0;
                RETURN NULL;
            END;
    $$;

CREATE FUNCTION r.post_change_values() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    -- Set local ap_id
    IF NEW.local THEN
        NEW.ap_id = coalesce(NEW.ap_id, r.local_url ('/post/' || NEW.id::text));
    END IF;
    RETURN NEW;
END
$$;

CREATE FUNCTION r.post_delete_statement() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    UPDATE
        person AS a
    SET
        post_count = a.post_count + diff.post_count
    FROM (
        SELECT
            (post).creator_id, coalesce(sum(count_diff), 0) AS post_count
        FROM  (
        SELECT
            -1 AS count_diff,
            old_table::post AS post
        FROM
            select_old_rows AS old_table
        UNION ALL
        SELECT
            1 AS count_diff,
            new_table::post AS post
        FROM
             (
        SELECT
            *
        FROM
            -- Real transition table
            select_old_rows
        WHERE
            FALSE)  AS new_table)  AS old_and_new_rows
        WHERE
            r.is_counted (post)
        GROUP BY (post).creator_id) AS diff
WHERE
    a.id = diff.creator_id
        AND diff.post_count != 0;
UPDATE
    community AS a
SET
    posts = a.posts + diff.posts,
    comments = a.comments + diff.comments
FROM (
    SELECT
        (post).community_id,
        coalesce(sum(count_diff), 0) AS posts,
        coalesce(sum(count_diff * (post).comments), 0) AS comments
    FROM
         (
        SELECT
            -1 AS count_diff,
            old_table::post AS post
        FROM
            select_old_rows AS old_table
        UNION ALL
        SELECT
            1 AS count_diff,
            new_table::post AS post
        FROM
             (
        SELECT
            *
        FROM
            -- Real transition table
            select_old_rows
        WHERE
            FALSE)  AS new_table)  AS old_and_new_rows
    WHERE
        r.is_counted (post)
    GROUP BY
        (post).community_id) AS diff
WHERE
    a.id = diff.community_id
    AND (diff.posts,
        diff.comments) != (0,
        0);
UPDATE
    local_site AS a
SET
    posts = a.posts + diff.posts
FROM (
    SELECT
        coalesce(sum(count_diff), 0) AS posts
    FROM
         (
        SELECT
            -1 AS count_diff,
            old_table::post AS post
        FROM
            select_old_rows AS old_table
        UNION ALL
        SELECT
            1 AS count_diff,
            new_table::post AS post
        FROM
             (
        SELECT
            *
        FROM
            -- Real transition table
            select_old_rows
        WHERE
            FALSE)  AS new_table)  AS old_and_new_rows
    WHERE
        r.is_counted (post)
        AND (post).local) AS diff
WHERE
    diff.posts != 0;
RETURN NULL;
END;
$$;

CREATE FUNCTION r.post_insert_statement() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    UPDATE
        person AS a
    SET
        post_count = a.post_count + diff.post_count
    FROM (
        SELECT
            (post).creator_id, coalesce(sum(count_diff), 0) AS post_count
        FROM  (
        SELECT
            -1 AS count_diff,
            old_table::post AS post
        FROM
             (
        SELECT
            *
        FROM
            -- Real transition table
            select_new_rows
        WHERE
            FALSE)  AS old_table
        UNION ALL
        SELECT
            1 AS count_diff,
            new_table::post AS post
        FROM
            select_new_rows AS new_table)  AS old_and_new_rows
        WHERE
            r.is_counted (post)
        GROUP BY (post).creator_id) AS diff
WHERE
    a.id = diff.creator_id
        AND diff.post_count != 0;
UPDATE
    community AS a
SET
    posts = a.posts + diff.posts,
    comments = a.comments + diff.comments
FROM (
    SELECT
        (post).community_id,
        coalesce(sum(count_diff), 0) AS posts,
        coalesce(sum(count_diff * (post).comments), 0) AS comments
    FROM
         (
        SELECT
            -1 AS count_diff,
            old_table::post AS post
        FROM
             (
        SELECT
            *
        FROM
            -- Real transition table
            select_new_rows
        WHERE
            FALSE)  AS old_table
        UNION ALL
        SELECT
            1 AS count_diff,
            new_table::post AS post
        FROM
            select_new_rows AS new_table)  AS old_and_new_rows
    WHERE
        r.is_counted (post)
    GROUP BY
        (post).community_id) AS diff
WHERE
    a.id = diff.community_id
    AND (diff.posts,
        diff.comments) != (0,
        0);
UPDATE
    local_site AS a
SET
    posts = a.posts + diff.posts
FROM (
    SELECT
        coalesce(sum(count_diff), 0) AS posts
    FROM
         (
        SELECT
            -1 AS count_diff,
            old_table::post AS post
        FROM
             (
        SELECT
            *
        FROM
            -- Real transition table
            select_new_rows
        WHERE
            FALSE)  AS old_table
        UNION ALL
        SELECT
            1 AS count_diff,
            new_table::post AS post
        FROM
            select_new_rows AS new_table)  AS old_and_new_rows
    WHERE
        r.is_counted (post)
        AND (post).local) AS diff
WHERE
    diff.posts != 0;
RETURN NULL;
END;
$$;

CREATE PROCEDURE r.post_or_comment(IN table_name text)
    LANGUAGE plpgsql
    AS $_$
BEGIN
    EXECUTE replace($b$
        -- When a thing gets a vote, update its aggregates and its creator's aggregates
        CALL r.create_triggers ('thing_actions', $$
            BEGIN
                WITH thing_diff AS ( UPDATE
                        thing AS a
                    SET
                        score = a.score + diff.upvotes - diff.downvotes, upvotes = a.upvotes + diff.upvotes, downvotes = a.downvotes + diff.downvotes, controversy_rank = r.controversy_rank ((a.upvotes + diff.upvotes)::numeric, (a.downvotes + diff.downvotes)::numeric)
                    FROM (
                        SELECT
                            (thing_actions).thing_id, coalesce(sum(count_diff) FILTER (WHERE (thing_actions).vote_is_upvote), 0) AS upvotes, coalesce(sum(count_diff) FILTER (WHERE NOT (thing_actions).vote_is_upvote), 0) AS downvotes FROM select_old_and_new_rows AS old_and_new_rows
                WHERE (thing_actions).vote_is_upvote IS NOT NULL GROUP BY (thing_actions).thing_id) AS diff
            WHERE
                a.id = diff.thing_id
                    AND (diff.upvotes, diff.downvotes) != (0, 0)
                RETURNING
                    a.creator_id AS creator_id, diff.upvotes - diff.downvotes AS score)
                UPDATE
                    person AS a
                SET
                    thing_score = a.thing_score + diff.score FROM (
                        SELECT
                            creator_id, sum(score) AS score FROM thing_diff GROUP BY creator_id) AS diff
                    WHERE
                        a.id = diff.creator_id
                        AND diff.score != 0;
                RETURN NULL;
            END;
    $$);
    $b$,
    'thing',
    table_name);
END;
$_$;

CREATE FUNCTION r.post_report_delete_statement() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    UPDATE
        post AS a
    SET
        report_count = a.report_count + diff.report_count, unresolved_report_count = a.unresolved_report_count + diff.unresolved_report_count
    FROM (
        SELECT
            (post_report).post_id, coalesce(sum(count_diff), 0) AS report_count, coalesce(sum(count_diff) FILTER (WHERE NOT (post_report).resolved
                AND NOT (post_report).violates_instance_rules), 0) AS unresolved_report_count
FROM  (
        SELECT
            -1 AS count_diff,
            old_table::post_report AS post_report
        FROM
            select_old_rows AS old_table
        UNION ALL
        SELECT
            1 AS count_diff,
            new_table::post_report AS post_report
        FROM
             (
        SELECT
            *
        FROM
            -- Real transition table
            select_old_rows
        WHERE
            FALSE)  AS new_table)  AS old_and_new_rows GROUP BY (post_report).post_id) AS diff
WHERE (diff.report_count, diff.unresolved_report_count) != (0, 0)
AND a.id = diff.post_id;
RETURN NULL;
END;
$$;

CREATE FUNCTION r.post_report_insert_statement() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    UPDATE
        post AS a
    SET
        report_count = a.report_count + diff.report_count, unresolved_report_count = a.unresolved_report_count + diff.unresolved_report_count
    FROM (
        SELECT
            (post_report).post_id, coalesce(sum(count_diff), 0) AS report_count, coalesce(sum(count_diff) FILTER (WHERE NOT (post_report).resolved
                AND NOT (post_report).violates_instance_rules), 0) AS unresolved_report_count
FROM  (
        SELECT
            -1 AS count_diff,
            old_table::post_report AS post_report
        FROM
             (
        SELECT
            *
        FROM
            -- Real transition table
            select_new_rows
        WHERE
            FALSE)  AS old_table
        UNION ALL
        SELECT
            1 AS count_diff,
            new_table::post_report AS post_report
        FROM
            select_new_rows AS new_table)  AS old_and_new_rows GROUP BY (post_report).post_id) AS diff
WHERE (diff.report_count, diff.unresolved_report_count) != (0, 0)
AND a.id = diff.post_id;
RETURN NULL;
END;
$$;

CREATE FUNCTION r.post_report_update_statement() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    UPDATE
        post AS a
    SET
        report_count = a.report_count + diff.report_count, unresolved_report_count = a.unresolved_report_count + diff.unresolved_report_count
    FROM (
        SELECT
            (post_report).post_id, coalesce(sum(count_diff), 0) AS report_count, coalesce(sum(count_diff) FILTER (WHERE NOT (post_report).resolved
                AND NOT (post_report).violates_instance_rules), 0) AS unresolved_report_count
FROM  (
        SELECT
            -1 AS count_diff,
            old_table::post_report AS post_report
        FROM
            select_old_rows AS old_table
        UNION ALL
        SELECT
            1 AS count_diff,
            new_table::post_report AS post_report
        FROM
            select_new_rows AS new_table)  AS old_and_new_rows GROUP BY (post_report).post_id) AS diff
WHERE (diff.report_count, diff.unresolved_report_count) != (0, 0)
AND a.id = diff.post_id;
RETURN NULL;
END;
$$;

CREATE FUNCTION r.post_update_statement() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    UPDATE
        person AS a
    SET
        post_count = a.post_count + diff.post_count
    FROM (
        SELECT
            (post).creator_id, coalesce(sum(count_diff), 0) AS post_count
        FROM  (
        SELECT
            -1 AS count_diff,
            old_table::post AS post
        FROM
            select_old_rows AS old_table
        UNION ALL
        SELECT
            1 AS count_diff,
            new_table::post AS post
        FROM
            select_new_rows AS new_table)  AS old_and_new_rows
        WHERE
            r.is_counted (post)
        GROUP BY (post).creator_id) AS diff
WHERE
    a.id = diff.creator_id
        AND diff.post_count != 0;
UPDATE
    community AS a
SET
    posts = a.posts + diff.posts,
    comments = a.comments + diff.comments
FROM (
    SELECT
        (post).community_id,
        coalesce(sum(count_diff), 0) AS posts,
        coalesce(sum(count_diff * (post).comments), 0) AS comments
    FROM
         (
        SELECT
            -1 AS count_diff,
            old_table::post AS post
        FROM
            select_old_rows AS old_table
        UNION ALL
        SELECT
            1 AS count_diff,
            new_table::post AS post
        FROM
            select_new_rows AS new_table)  AS old_and_new_rows
    WHERE
        r.is_counted (post)
    GROUP BY
        (post).community_id) AS diff
WHERE
    a.id = diff.community_id
    AND (diff.posts,
        diff.comments) != (0,
        0);
UPDATE
    local_site AS a
SET
    posts = a.posts + diff.posts
FROM (
    SELECT
        coalesce(sum(count_diff), 0) AS posts
    FROM
         (
        SELECT
            -1 AS count_diff,
            old_table::post AS post
        FROM
            select_old_rows AS old_table
        UNION ALL
        SELECT
            1 AS count_diff,
            new_table::post AS post
        FROM
            select_new_rows AS new_table)  AS old_and_new_rows
    WHERE
        r.is_counted (post)
        AND (post).local) AS diff
WHERE
    diff.posts != 0;
RETURN NULL;
END;
$$;

CREATE FUNCTION r.private_message_change_values() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    -- Set local ap_id
    IF NEW.local THEN
        NEW.ap_id = coalesce(NEW.ap_id, r.local_url ('/private_message/' || NEW.id::text));
    END IF;
    RETURN NEW;
END
$$;

CREATE FUNCTION r.report_combined_comment_insert() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    INSERT INTO report_combined (published_at, comment_report_id, report_creator_id, item_creator_id, comment_id, post_id, community_id)
    SELECT
        NEW.published_at,
        NEW.id,
        NEW.creator_id,
        c.creator_id,
        c.id,
        c.post_id,
        c.community_id
    FROM
        comment c
    WHERE
        NEW.comment_id = c.id;
    RETURN NEW;
END
$$;

CREATE FUNCTION r.report_combined_comment_update() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    UPDATE
        report_combined
    SET
        resolved = NEW.resolved,
        resolver_id = NEW.resolver_id
    WHERE
        comment_report_id = NEW.id;
    RETURN NULL;
END
$$;

CREATE FUNCTION r.report_combined_community_insert() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    INSERT INTO report_combined (published_at, community_report_id, report_creator_id, community_id)
        VALUES (NEW.published_at, NEW.id, NEW.creator_id, NEW.community_id);
    RETURN NEW;
END
$$;

CREATE FUNCTION r.report_combined_community_update() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    UPDATE
        report_combined
    SET
        resolved = NEW.resolved,
        resolver_id = NEW.resolver_id
    WHERE
        community_report_id = NEW.id;
    RETURN NULL;
END
$$;

CREATE FUNCTION r.report_combined_post_insert() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    INSERT INTO report_combined (published_at, post_report_id, report_creator_id, item_creator_id, post_id, community_id)
    SELECT
        NEW.published_at,
        NEW.id,
        NEW.creator_id,
        p.creator_id,
        p.id,
        p.community_id
    FROM
        post p
    WHERE
        NEW.post_id = p.id;
    RETURN NEW;
END
$$;

CREATE FUNCTION r.report_combined_post_update() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    UPDATE
        report_combined
    SET
        resolved = NEW.resolved,
        resolver_id = NEW.resolver_id
    WHERE
        post_report_id = NEW.id;
    RETURN NULL;
END
$$;

CREATE FUNCTION r.report_combined_private_message_insert() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    INSERT INTO report_combined (published_at, private_message_report_id, report_creator_id, item_creator_id, private_message_id)
    SELECT
        NEW.published_at,
        NEW.id,
        NEW.creator_id,
        p.creator_id,
        p.id
    FROM
        private_message p
    WHERE
        NEW.private_message_id = p.id;
    RETURN NEW;
END
$$;

CREATE FUNCTION r.report_combined_private_message_update() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    UPDATE
        report_combined
    SET
        resolved = NEW.resolved,
        resolver_id = NEW.resolver_id
    WHERE
        private_message_report_id = NEW.id;
    RETURN NULL;
END
$$;

CREATE FUNCTION r.require_uplete() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF pg_trigger_depth() = 1 AND NOT starts_with (current_query(), '/**/') THEN
        RAISE 'using delete instead of uplete is not allowed for this table';
    END IF;
    RETURN NULL;
END
$$;

CREATE FUNCTION r.scaled_rank(score numeric, published_at timestamp with time zone, interactions_month numeric) RETURNS real
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN (r.hot_rank(score, published_at) / (log(((2)::numeric + interactions_month)))::double precision);

CREATE FUNCTION r.site_aggregates_activity(i text) RETURNS integer
    LANGUAGE plpgsql
    AS $$
DECLARE
    count_ integer;
BEGIN
    SELECT
        count(*) INTO count_
    FROM (
        SELECT
            c.creator_id
        FROM
            comment c
            INNER JOIN person pe ON c.creator_id = pe.id
        WHERE
            c.published_at > ('now'::timestamp - i::interval)
            AND pe.local = TRUE
            AND pe.bot_account = FALSE
        UNION
        SELECT
            p.creator_id
        FROM
            post p
            INNER JOIN person pe ON p.creator_id = pe.id
        WHERE
            p.published_at > ('now'::timestamp - i::interval)
            AND pe.local = TRUE
            AND pe.bot_account = FALSE
        UNION
        SELECT
            pa.person_id
        FROM
            post_actions pa
            INNER JOIN person pe ON pa.person_id = pe.id
        WHERE
            pa.voted_at > ('now'::timestamp - i::interval)
            AND pe.local = TRUE
            AND pe.bot_account = FALSE
        UNION
        SELECT
            ca.person_id
        FROM
            comment_actions ca
            INNER JOIN person pe ON ca.person_id = pe.id
        WHERE
            ca.voted_at > ('now'::timestamp - i::interval)
            AND pe.local = TRUE
            AND pe.bot_account = FALSE) a;
    RETURN count_;
END;
$$;

CREATE TABLE public.comment (
    id integer NOT NULL,
    creator_id integer NOT NULL,
    post_id integer NOT NULL,
    content text NOT NULL,
    removed boolean DEFAULT false NOT NULL,
    published_at timestamp with time zone DEFAULT now() CONSTRAINT comment_published_not_null NOT NULL,
    updated_at timestamp with time zone,
    deleted boolean DEFAULT false NOT NULL,
    ap_id character varying(255) NOT NULL,
    local boolean DEFAULT true NOT NULL,
    path public.ltree DEFAULT '0'::public.ltree NOT NULL,
    distinguished boolean DEFAULT false NOT NULL,
    language_id integer DEFAULT 0 NOT NULL,
    score integer DEFAULT 0 NOT NULL,
    upvotes integer DEFAULT 0 NOT NULL,
    downvotes integer DEFAULT 0 NOT NULL,
    child_count integer DEFAULT 0 NOT NULL,
    hot_rank real DEFAULT 0.0001 NOT NULL,
    controversy_rank real DEFAULT 0 NOT NULL,
    report_count smallint DEFAULT 0 NOT NULL,
    unresolved_report_count smallint DEFAULT 0 NOT NULL,
    federation_pending boolean DEFAULT false NOT NULL,
    locked boolean DEFAULT false NOT NULL,
    community_id integer NOT NULL
);

CREATE TABLE public.comment_actions (
    voted_at timestamp with time zone,
    saved_at timestamp with time zone,
    person_id integer NOT NULL,
    comment_id integer NOT NULL,
    vote_is_upvote boolean,
    CONSTRAINT comment_actions_check_liked CHECK (((voted_at IS NULL) = (vote_is_upvote IS NULL)))
);

CREATE SEQUENCE public.comment_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE public.comment_id_seq OWNED BY public.comment.id;

CREATE TABLE public.community (
    id integer NOT NULL,
    name character varying(255) NOT NULL,
    title character varying(50),
    sidebar text,
    removed boolean DEFAULT false NOT NULL,
    published_at timestamp with time zone DEFAULT now() CONSTRAINT community_published_not_null NOT NULL,
    updated_at timestamp with time zone,
    deleted boolean DEFAULT false NOT NULL,
    nsfw boolean DEFAULT false NOT NULL,
    ap_id character varying(255) DEFAULT public.generate_unique_changeme() CONSTRAINT community_actor_id_not_null NOT NULL,
    local boolean DEFAULT true NOT NULL,
    private_key text,
    public_key text NOT NULL,
    last_refreshed_at timestamp with time zone DEFAULT now() NOT NULL,
    icon text,
    banner text,
    followers_url character varying(255) DEFAULT public.generate_unique_changeme(),
    inbox_url character varying(255) DEFAULT public.generate_unique_changeme() CONSTRAINT community_shared_inbox_url_not_null NOT NULL,
    posting_restricted_to_mods boolean DEFAULT false NOT NULL,
    instance_id integer NOT NULL,
    moderators_url character varying(255),
    featured_url character varying(255),
    visibility public.community_visibility DEFAULT 'Public'::public.community_visibility NOT NULL,
    summary character varying(150),
    random_number smallint DEFAULT public.random_smallint() NOT NULL,
    subscribers integer DEFAULT 0 NOT NULL,
    posts integer DEFAULT 0 NOT NULL,
    comments integer DEFAULT 0 NOT NULL,
    users_active_day integer DEFAULT 0 NOT NULL,
    users_active_week integer DEFAULT 0 NOT NULL,
    users_active_month integer DEFAULT 0 NOT NULL,
    users_active_half_year integer DEFAULT 0 NOT NULL,
    hot_rank real DEFAULT 0.0001 NOT NULL,
    subscribers_local integer DEFAULT 0 NOT NULL,
    interactions_month integer DEFAULT 0 NOT NULL,
    report_count smallint DEFAULT 0 NOT NULL,
    unresolved_report_count smallint DEFAULT 0 NOT NULL,
    local_removed boolean DEFAULT false NOT NULL
);

CREATE TABLE public.community_actions (
    followed_at timestamp with time zone,
    blocked_at timestamp with time zone,
    became_moderator_at timestamp with time zone,
    received_ban_at timestamp with time zone,
    ban_expires_at timestamp with time zone,
    person_id integer NOT NULL,
    community_id integer NOT NULL,
    follow_state public.community_follower_state,
    follow_approver_id integer,
    notifications public.community_notifications_mode_enum,
    follow_activity_id text,
    CONSTRAINT community_actions_check_followed CHECK ((((followed_at IS NULL) = (follow_state IS NULL)) AND (NOT ((followed_at IS NULL) AND (follow_approver_id IS NOT NULL))))),
    CONSTRAINT community_actions_check_received_ban CHECK ((NOT ((received_ban_at IS NULL) AND (ban_expires_at IS NOT NULL))))
);

CREATE SEQUENCE public.community_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE public.community_id_seq OWNED BY public.community.id;

CREATE TABLE public.community_tag (
    id integer CONSTRAINT tag_id_not_null NOT NULL,
    ap_id text CONSTRAINT tag_ap_id_not_null NOT NULL,
    name character varying(255) CONSTRAINT tag_name_not_null NOT NULL,
    display_name character varying(255),
    summary character varying(150),
    community_id integer CONSTRAINT tag_community_id_not_null NOT NULL,
    published_at timestamp with time zone DEFAULT now() CONSTRAINT tag_published_not_null NOT NULL,
    updated_at timestamp with time zone,
    deleted boolean DEFAULT false CONSTRAINT tag_deleted_not_null NOT NULL,
    color public.tag_color_enum DEFAULT 'color01'::public.tag_color_enum CONSTRAINT tag_color_not_null NOT NULL
);

CREATE TABLE public.image_details (
    link text NOT NULL,
    width integer NOT NULL,
    height integer NOT NULL,
    content_type text NOT NULL,
    blurhash character varying(50)
);

CREATE TABLE public.instance (
    id integer NOT NULL,
    domain character varying(255) NOT NULL,
    published_at timestamp with time zone DEFAULT now() CONSTRAINT instance_published_not_null NOT NULL,
    updated_at timestamp with time zone,
    software character varying(255),
    version character varying(255)
);

CREATE TABLE public.instance_actions (
    blocked_communities_at timestamp with time zone,
    person_id integer NOT NULL,
    instance_id integer NOT NULL,
    received_ban_at timestamp with time zone,
    ban_expires_at timestamp with time zone,
    blocked_persons_at timestamp with time zone
);

CREATE SEQUENCE public.instance_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE public.instance_id_seq OWNED BY public.instance.id;

CREATE TABLE public.language (
    id integer NOT NULL,
    code character varying(3) NOT NULL,
    name text NOT NULL
);

CREATE SEQUENCE public.language_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE public.language_id_seq OWNED BY public.language.id;

CREATE TABLE public.local_site (
    id integer NOT NULL,
    site_id integer NOT NULL,
    site_setup boolean DEFAULT false NOT NULL,
    community_creation_admin_only boolean DEFAULT false NOT NULL,
    email_verification_required boolean DEFAULT false CONSTRAINT local_site_require_email_verification_not_null NOT NULL,
    application_question text DEFAULT 'to verify that you are human, please explain why you want to create an account on this site'::text,
    private_instance boolean DEFAULT false NOT NULL,
    default_theme text DEFAULT 'browser'::text NOT NULL,
    default_post_listing_type public.listing_type_enum DEFAULT 'Local'::public.listing_type_enum NOT NULL,
    legal_information text,
    application_email_admins boolean DEFAULT false NOT NULL,
    slur_filter_regex text,
    federation_enabled boolean DEFAULT true NOT NULL,
    published_at timestamp with time zone DEFAULT now() CONSTRAINT local_site_published_not_null NOT NULL,
    updated_at timestamp with time zone,
    registration_mode public.registration_mode_enum DEFAULT 'RequireApplication'::public.registration_mode_enum NOT NULL,
    reports_email_admins boolean DEFAULT false NOT NULL,
    federation_signed_fetch boolean DEFAULT true NOT NULL,
    default_post_listing_mode public.post_listing_mode_enum DEFAULT 'List'::public.post_listing_mode_enum NOT NULL,
    default_post_sort_type public.post_sort_type_enum DEFAULT 'Active'::public.post_sort_type_enum CONSTRAINT local_site_default_sort_type_not_null NOT NULL,
    default_comment_sort_type public.comment_sort_type_enum DEFAULT 'Hot'::public.comment_sort_type_enum NOT NULL,
    oauth_registration boolean DEFAULT true NOT NULL,
    post_upvotes public.federation_mode_enum DEFAULT 'All'::public.federation_mode_enum NOT NULL,
    post_downvotes public.federation_mode_enum DEFAULT 'All'::public.federation_mode_enum NOT NULL,
    comment_upvotes public.federation_mode_enum DEFAULT 'All'::public.federation_mode_enum NOT NULL,
    comment_downvotes public.federation_mode_enum DEFAULT 'All'::public.federation_mode_enum NOT NULL,
    default_post_time_range_seconds integer,
    nsfw_content_disallowed boolean DEFAULT false CONSTRAINT local_site_disallow_nsfw_content_not_null NOT NULL,
    users integer DEFAULT 1 NOT NULL,
    posts integer DEFAULT 0 NOT NULL,
    comments integer DEFAULT 0 NOT NULL,
    communities integer DEFAULT 0 NOT NULL,
    users_active_day integer DEFAULT 0 NOT NULL,
    users_active_week integer DEFAULT 0 NOT NULL,
    users_active_month integer DEFAULT 0 NOT NULL,
    users_active_half_year integer DEFAULT 0 NOT NULL,
    email_notifications_disabled boolean DEFAULT false CONSTRAINT local_site_disable_email_notifications_not_null NOT NULL,
    suggested_multi_community_id integer,
    system_account integer NOT NULL,
    default_items_per_page integer DEFAULT 20 NOT NULL,
    image_mode public.image_mode_enum DEFAULT 'ProxyAllImages'::public.image_mode_enum NOT NULL,
    image_proxy_bypass_domains text,
    image_upload_timeout_seconds integer DEFAULT 30 NOT NULL,
    image_max_thumbnail_size integer DEFAULT 512 NOT NULL,
    image_max_avatar_size integer DEFAULT 512 NOT NULL,
    image_max_banner_size integer DEFAULT 1024 NOT NULL,
    image_max_upload_size integer DEFAULT 1024 NOT NULL,
    image_allow_video_uploads boolean DEFAULT true NOT NULL,
    image_upload_disabled boolean DEFAULT false NOT NULL,
    max_invites_per_user_allowed integer DEFAULT 10 NOT NULL
);

CREATE SEQUENCE public.local_site_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE public.local_site_id_seq OWNED BY public.local_site.id;

CREATE TABLE public.local_user (
    id integer NOT NULL,
    person_id integer NOT NULL,
    password_encrypted text,
    email text,
    show_nsfw boolean DEFAULT false NOT NULL,
    theme text DEFAULT 'browser'::text NOT NULL,
    default_post_sort_type public.post_sort_type_enum DEFAULT 'Active'::public.post_sort_type_enum CONSTRAINT local_user_default_sort_type_not_null NOT NULL,
    default_listing_type public.listing_type_enum DEFAULT 'Local'::public.listing_type_enum NOT NULL,
    interface_language character varying(20) DEFAULT 'browser'::character varying CONSTRAINT local_user_lang_not_null NOT NULL,
    show_avatars boolean DEFAULT true NOT NULL,
    send_notifications_to_email boolean DEFAULT false NOT NULL,
    show_bot_accounts boolean DEFAULT true NOT NULL,
    show_read_posts boolean DEFAULT true NOT NULL,
    email_verified boolean DEFAULT false NOT NULL,
    accepted_application boolean DEFAULT false NOT NULL,
    totp_2fa_secret text,
    open_links_in_new_tab boolean DEFAULT false NOT NULL,
    blur_nsfw boolean DEFAULT true NOT NULL,
    infinite_scroll_enabled boolean DEFAULT false NOT NULL,
    admin boolean DEFAULT false NOT NULL,
    post_listing_mode public.post_listing_mode_enum DEFAULT 'List'::public.post_listing_mode_enum NOT NULL,
    totp_2fa_enabled boolean DEFAULT false NOT NULL,
    animated_images_enabled boolean DEFAULT true CONSTRAINT local_user_enable_animated_images_not_null NOT NULL,
    collapse_bot_comments boolean DEFAULT false NOT NULL,
    last_donation_notification_at timestamp with time zone DEFAULT (now() - (random() * '1 year'::interval)) CONSTRAINT local_user_last_donation_notification_not_null NOT NULL,
    private_messages_enabled boolean DEFAULT true CONSTRAINT local_user_enable_private_messages_not_null NOT NULL,
    default_comment_sort_type public.comment_sort_type_enum DEFAULT 'Hot'::public.comment_sort_type_enum NOT NULL,
    auto_mark_fetched_posts_as_read boolean DEFAULT false NOT NULL,
    hide_posts_with_media boolean DEFAULT false CONSTRAINT local_user_hide_media_not_null NOT NULL,
    default_post_time_range_seconds integer,
    show_score boolean DEFAULT false NOT NULL,
    show_upvotes boolean DEFAULT true NOT NULL,
    show_downvotes public.vote_show_enum DEFAULT 'Show'::public.vote_show_enum NOT NULL,
    show_upvote_percentage boolean DEFAULT false NOT NULL,
    show_person_votes boolean DEFAULT true NOT NULL,
    default_items_per_page integer DEFAULT 20 NOT NULL,
    invited_by_local_user_id integer,
    show_media boolean DEFAULT true NOT NULL
);

CREATE SEQUENCE public.local_user_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE public.local_user_id_seq OWNED BY public.local_user.id;

CREATE TABLE public.multi_community (
    id integer NOT NULL,
    creator_id integer NOT NULL,
    instance_id integer NOT NULL,
    name character varying(255) NOT NULL,
    title character varying(255),
    summary character varying(255),
    local boolean DEFAULT true NOT NULL,
    deleted boolean DEFAULT false NOT NULL,
    ap_id text DEFAULT public.generate_unique_changeme() NOT NULL,
    public_key text NOT NULL,
    private_key text,
    inbox_url text DEFAULT public.generate_unique_changeme() NOT NULL,
    last_refreshed_at timestamp with time zone DEFAULT now() NOT NULL,
    following_url text DEFAULT public.generate_unique_changeme() NOT NULL,
    published_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone,
    subscribers integer DEFAULT 0 NOT NULL,
    subscribers_local integer DEFAULT 0 NOT NULL,
    communities integer DEFAULT 0 NOT NULL,
    sidebar text
);

CREATE SEQUENCE public.multi_community_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE public.multi_community_id_seq OWNED BY public.multi_community.id;

CREATE TABLE public.person (
    id integer CONSTRAINT user__id_not_null NOT NULL,
    name character varying(255) CONSTRAINT user__name_not_null NOT NULL,
    display_name character varying(50),
    avatar text,
    published_at timestamp with time zone DEFAULT now() CONSTRAINT user__published_not_null NOT NULL,
    updated_at timestamp with time zone,
    ap_id character varying(255) DEFAULT public.generate_unique_changeme() CONSTRAINT user__actor_id_not_null NOT NULL,
    bio text,
    local boolean DEFAULT true CONSTRAINT user__local_not_null NOT NULL,
    private_key text,
    public_key text NOT NULL,
    last_refreshed_at timestamp with time zone DEFAULT now() CONSTRAINT user__last_refreshed_at_not_null NOT NULL,
    banner text,
    deleted boolean DEFAULT false CONSTRAINT user__deleted_not_null NOT NULL,
    inbox_url character varying(255) DEFAULT public.generate_unique_changeme() CONSTRAINT person_shared_inbox_url_not_null NOT NULL,
    matrix_user_id text,
    bot_account boolean DEFAULT false NOT NULL,
    instance_id integer NOT NULL,
    post_count integer DEFAULT 0 NOT NULL,
    post_score integer DEFAULT 0 NOT NULL,
    comment_count integer DEFAULT 0 NOT NULL,
    comment_score integer DEFAULT 0 NOT NULL
);

CREATE TABLE public.person_actions (
    followed_at timestamp with time zone,
    blocked_at timestamp with time zone,
    person_id integer NOT NULL,
    target_id integer NOT NULL,
    follow_pending boolean,
    noted_at timestamp with time zone,
    note text,
    voted_at timestamp with time zone,
    upvotes integer,
    downvotes integer,
    CONSTRAINT person_actions_check_followed CHECK (((followed_at IS NULL) = (follow_pending IS NULL)))
);

CREATE SEQUENCE public.person_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE public.person_id_seq OWNED BY public.person.id;

CREATE TABLE public.person_liked_combined (
    voted_at timestamp with time zone CONSTRAINT person_liked_combined_liked_not_null NOT NULL,
    id integer NOT NULL,
    person_id integer NOT NULL,
    creator_id integer NOT NULL,
    post_id integer NOT NULL,
    comment_id integer,
    vote_is_upvote boolean NOT NULL,
    community_id integer NOT NULL
);

CREATE SEQUENCE public.person_liked_combined_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE public.person_liked_combined_id_seq OWNED BY public.person_liked_combined.id;

CREATE TABLE public.post (
    id integer NOT NULL,
    name character varying(200) NOT NULL,
    url character varying(2000),
    body text,
    creator_id integer NOT NULL,
    community_id integer NOT NULL,
    removed boolean DEFAULT false NOT NULL,
    locked boolean DEFAULT false NOT NULL,
    published_at timestamp with time zone DEFAULT now() CONSTRAINT post_published_not_null NOT NULL,
    updated_at timestamp with time zone,
    deleted boolean DEFAULT false NOT NULL,
    nsfw boolean DEFAULT false NOT NULL,
    embed_title text,
    embed_description text,
    thumbnail_url text,
    ap_id character varying(255) NOT NULL,
    local boolean DEFAULT true NOT NULL,
    embed_video_url text,
    language_id integer DEFAULT 0 NOT NULL,
    featured_community boolean DEFAULT false NOT NULL,
    featured_local boolean DEFAULT false NOT NULL,
    url_content_type text,
    alt_text text,
    scheduled_publish_time_at timestamp with time zone,
    newest_comment_time_necro_at timestamp with time zone,
    newest_comment_time_at timestamp with time zone,
    comments integer DEFAULT 0 NOT NULL,
    score integer DEFAULT 0 NOT NULL,
    upvotes integer DEFAULT 0 NOT NULL,
    downvotes integer DEFAULT 0 NOT NULL,
    hot_rank real DEFAULT 0.0001 NOT NULL,
    hot_rank_active real DEFAULT 0.0001 NOT NULL,
    controversy_rank real DEFAULT 0 NOT NULL,
    scaled_rank real DEFAULT 0.0001 NOT NULL,
    report_count smallint DEFAULT 0 NOT NULL,
    unresolved_report_count smallint DEFAULT 0 NOT NULL,
    federation_pending boolean DEFAULT false NOT NULL,
    embed_video_width integer,
    embed_video_height integer
);

CREATE TABLE public.post_actions (
    read_at timestamp with time zone,
    read_comments_at timestamp with time zone,
    saved_at timestamp with time zone,
    voted_at timestamp with time zone,
    hidden_at timestamp with time zone,
    person_id integer NOT NULL,
    post_id integer NOT NULL,
    read_comments_amount integer,
    vote_is_upvote boolean,
    notifications public.post_notifications_mode_enum,
    CONSTRAINT post_actions_check_liked CHECK (((voted_at IS NULL) = (vote_is_upvote IS NULL))),
    CONSTRAINT post_actions_check_read_comments CHECK (((read_comments_at IS NULL) = (read_comments_amount IS NULL)))
);

CREATE TABLE public.post_community_tag (
    post_id integer CONSTRAINT post_tag_post_id_not_null NOT NULL,
    community_tag_id integer CONSTRAINT post_tag_tag_id_not_null NOT NULL,
    published_at timestamp with time zone DEFAULT now() CONSTRAINT post_tag_published_not_null NOT NULL
);

CREATE SEQUENCE public.post_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE public.post_id_seq OWNED BY public.post.id;

CREATE TABLE public.site (
    id integer NOT NULL,
    name character varying(20) NOT NULL,
    sidebar text,
    published_at timestamp with time zone DEFAULT now() CONSTRAINT site_published_not_null NOT NULL,
    updated_at timestamp with time zone,
    icon text,
    banner text,
    summary character varying(150),
    ap_id character varying(255) DEFAULT public.generate_unique_changeme() CONSTRAINT site_actor_id_not_null NOT NULL,
    last_refreshed_at timestamp with time zone DEFAULT now() NOT NULL,
    inbox_url character varying(255) DEFAULT public.generate_unique_changeme() NOT NULL,
    private_key text,
    public_key text DEFAULT public.generate_unique_changeme() NOT NULL,
    instance_id integer NOT NULL,
    content_warning text
);

CREATE SEQUENCE public.site_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE public.site_id_seq OWNED BY public.site.id;

CREATE SEQUENCE public.tag_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE public.tag_id_seq OWNED BY public.community_tag.id;

ALTER TABLE ONLY public.comment ALTER COLUMN id SET DEFAULT nextval('public.comment_id_seq'::regclass);

ALTER TABLE ONLY public.community ALTER COLUMN id SET DEFAULT nextval('public.community_id_seq'::regclass);

ALTER TABLE ONLY public.community_tag ALTER COLUMN id SET DEFAULT nextval('public.tag_id_seq'::regclass);

ALTER TABLE ONLY public.instance ALTER COLUMN id SET DEFAULT nextval('public.instance_id_seq'::regclass);

ALTER TABLE ONLY public.language ALTER COLUMN id SET DEFAULT nextval('public.language_id_seq'::regclass);

ALTER TABLE ONLY public.local_site ALTER COLUMN id SET DEFAULT nextval('public.local_site_id_seq'::regclass);

ALTER TABLE ONLY public.local_user ALTER COLUMN id SET DEFAULT nextval('public.local_user_id_seq'::regclass);

ALTER TABLE ONLY public.multi_community ALTER COLUMN id SET DEFAULT nextval('public.multi_community_id_seq'::regclass);

ALTER TABLE ONLY public.person ALTER COLUMN id SET DEFAULT nextval('public.person_id_seq'::regclass);

ALTER TABLE ONLY public.person_liked_combined ALTER COLUMN id SET DEFAULT nextval('public.person_liked_combined_id_seq'::regclass);

ALTER TABLE ONLY public.post ALTER COLUMN id SET DEFAULT nextval('public.post_id_seq'::regclass);

ALTER TABLE ONLY public.site ALTER COLUMN id SET DEFAULT nextval('public.site_id_seq'::regclass);

ALTER TABLE ONLY public.comment_actions
    ADD CONSTRAINT comment_actions_pkey PRIMARY KEY (person_id, comment_id);

ALTER TABLE ONLY public.comment
    ADD CONSTRAINT comment_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.community_actions
    ADD CONSTRAINT community_actions_pkey PRIMARY KEY (person_id, community_id);

ALTER TABLE ONLY public.community
    ADD CONSTRAINT community_featured_url_key UNIQUE (featured_url);

ALTER TABLE ONLY public.community
    ADD CONSTRAINT community_moderators_url_key UNIQUE (moderators_url);

ALTER TABLE ONLY public.community
    ADD CONSTRAINT community_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.comment
    ADD CONSTRAINT idx_comment_ap_id UNIQUE (ap_id);

ALTER TABLE ONLY public.community
    ADD CONSTRAINT idx_community_actor_id UNIQUE (ap_id);

ALTER TABLE ONLY public.community
    ADD CONSTRAINT idx_community_followers_url UNIQUE (followers_url);

ALTER TABLE ONLY public.person
    ADD CONSTRAINT idx_person_actor_id UNIQUE (ap_id);

ALTER TABLE ONLY public.post
    ADD CONSTRAINT idx_post_ap_id UNIQUE (ap_id);

ALTER TABLE ONLY public.site
    ADD CONSTRAINT idx_site_instance_unique UNIQUE (instance_id);

ALTER TABLE ONLY public.image_details
    ADD CONSTRAINT image_details_pkey PRIMARY KEY (link);

ALTER TABLE ONLY public.instance_actions
    ADD CONSTRAINT instance_actions_pkey PRIMARY KEY (person_id, instance_id);

ALTER TABLE ONLY public.instance
    ADD CONSTRAINT instance_domain_key UNIQUE (domain);

ALTER TABLE ONLY public.instance
    ADD CONSTRAINT instance_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.language
    ADD CONSTRAINT language_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.local_site
    ADD CONSTRAINT local_site_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.local_site
    ADD CONSTRAINT local_site_site_id_key UNIQUE (site_id);

ALTER TABLE ONLY public.local_user
    ADD CONSTRAINT local_user_email_key UNIQUE (email);

ALTER TABLE ONLY public.local_user
    ADD CONSTRAINT local_user_person_id_key UNIQUE (person_id);

ALTER TABLE ONLY public.local_user
    ADD CONSTRAINT local_user_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.multi_community
    ADD CONSTRAINT multi_community_ap_id_key UNIQUE (ap_id);

ALTER TABLE ONLY public.multi_community
    ADD CONSTRAINT multi_community_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.person
    ADD CONSTRAINT person__pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.person_actions
    ADD CONSTRAINT person_actions_pkey PRIMARY KEY (person_id, target_id);

ALTER TABLE ONLY public.person_liked_combined
    ADD CONSTRAINT person_liked_combined_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.person_liked_combined
    ADD CONSTRAINT person_liked_combined_unique UNIQUE NULLS NOT DISTINCT (person_id, comment_id, post_id);

ALTER TABLE ONLY public.person
    ADD CONSTRAINT person_name_instance_unique UNIQUE (name, instance_id);

ALTER TABLE ONLY public.post_actions
    ADD CONSTRAINT post_actions_pkey PRIMARY KEY (person_id, post_id);

ALTER TABLE ONLY public.post
    ADD CONSTRAINT post_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.post_community_tag
    ADD CONSTRAINT post_tag_pkey PRIMARY KEY (post_id, community_tag_id);

ALTER TABLE ONLY public.site
    ADD CONSTRAINT site_actor_id_key UNIQUE (ap_id);

ALTER TABLE ONLY public.site
    ADD CONSTRAINT site_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.community_tag
    ADD CONSTRAINT tag_ap_id_key UNIQUE (ap_id);

ALTER TABLE ONLY public.community_tag
    ADD CONSTRAINT tag_pkey PRIMARY KEY (id);

CREATE INDEX idx_comment_actions_comment ON public.comment_actions USING btree (comment_id);

CREATE INDEX idx_comment_actions_like_score ON public.comment_actions USING btree (comment_id, vote_is_upvote, person_id) WHERE (vote_is_upvote IS NOT NULL);

CREATE INDEX idx_comment_actions_liked_not_null ON public.comment_actions USING btree (person_id, comment_id) WHERE ((voted_at IS NOT NULL) OR (vote_is_upvote IS NOT NULL));

CREATE INDEX idx_comment_actions_person ON public.comment_actions USING btree (person_id);

CREATE INDEX idx_comment_actions_saved_not_null ON public.comment_actions USING btree (person_id, comment_id) WHERE (saved_at IS NOT NULL);

CREATE INDEX idx_comment_actions_voted_at ON public.comment_actions USING btree (voted_at) WHERE (voted_at IS NOT NULL);

CREATE INDEX idx_comment_community ON public.comment USING btree (community_id);

CREATE INDEX idx_comment_content_trigram ON public.comment USING gin (content public.gin_trgm_ops);

CREATE INDEX idx_comment_controversy ON public.comment USING btree (controversy_rank DESC);

CREATE INDEX idx_comment_creator ON public.comment USING btree (creator_id);

CREATE INDEX idx_comment_hot ON public.comment USING btree (hot_rank DESC, score DESC);

CREATE INDEX idx_comment_language ON public.comment USING btree (language_id);

CREATE INDEX idx_comment_nonzero_hotrank ON public.comment USING btree (published_at) WHERE (hot_rank <> (0)::double precision);

CREATE INDEX idx_comment_post ON public.comment USING btree (post_id);

CREATE INDEX idx_comment_published ON public.comment USING btree (published_at DESC);

CREATE INDEX idx_comment_score ON public.comment USING btree (score DESC);

CREATE INDEX idx_community_actions_became_moderator ON public.community_actions USING btree (became_moderator_at) WHERE (became_moderator_at IS NOT NULL);

CREATE INDEX idx_community_actions_became_moderator_not_null ON public.community_actions USING btree (person_id, community_id) WHERE (became_moderator_at IS NOT NULL);

CREATE INDEX idx_community_actions_blocked_not_null ON public.community_actions USING btree (person_id, community_id) WHERE (blocked_at IS NOT NULL);

CREATE INDEX idx_community_actions_community ON public.community_actions USING btree (community_id);

CREATE INDEX idx_community_actions_follow_approver ON public.community_actions USING btree (follow_approver_id);

CREATE INDEX idx_community_actions_followed ON public.community_actions USING btree (followed_at) WHERE (followed_at IS NOT NULL);

CREATE INDEX idx_community_actions_followed_not_null ON public.community_actions USING btree (person_id, community_id) WHERE ((followed_at IS NOT NULL) OR (follow_state IS NOT NULL));

CREATE INDEX idx_community_actions_person ON public.community_actions USING btree (person_id);

CREATE INDEX idx_community_actions_received_ban_not_null ON public.community_actions USING btree (person_id, community_id) WHERE (received_ban_at IS NOT NULL);

CREATE INDEX idx_community_comments ON public.community USING btree (comments DESC, id DESC);

CREATE INDEX idx_community_hot ON public.community USING btree (hot_rank DESC, id DESC);

CREATE INDEX idx_community_instance ON public.community USING btree (instance_id);

CREATE UNIQUE INDEX idx_community_lower_actor_id ON public.community USING btree (lower((ap_id)::text));

CREATE INDEX idx_community_lower_name ON public.community USING btree (lower((name)::text) DESC, id DESC);

CREATE INDEX idx_community_nonzero_hotrank ON public.community USING btree (published_at) WHERE (hot_rank <> (0)::double precision);

CREATE INDEX idx_community_posts ON public.community USING btree (posts DESC, id DESC);

CREATE INDEX idx_community_published ON public.community USING btree (published_at DESC, id DESC);

CREATE INDEX idx_community_random_number ON public.community USING btree (random_number) INCLUDE (local, nsfw) WHERE (NOT (deleted OR removed OR (visibility = 'Private'::public.community_visibility) OR (visibility = 'Unlisted'::public.community_visibility)));

CREATE INDEX idx_community_subscribers ON public.community USING btree (subscribers DESC, id DESC);

CREATE INDEX idx_community_subscribers_local ON public.community USING btree (subscribers_local DESC, id DESC);

CREATE INDEX idx_community_title ON public.community USING btree (title DESC, id DESC);

CREATE INDEX idx_community_trigram ON public.community USING gin (name public.gin_trgm_ops, title public.gin_trgm_ops, summary public.gin_trgm_ops, sidebar public.gin_trgm_ops);

CREATE INDEX idx_community_users_active_day ON public.community USING btree (users_active_day DESC, id DESC);

CREATE INDEX idx_community_users_active_half_year ON public.community USING btree (users_active_half_year DESC, id DESC);

CREATE INDEX idx_community_users_active_month ON public.community USING btree (users_active_month DESC, id DESC);

CREATE INDEX idx_community_users_active_week ON public.community USING btree (users_active_week DESC, id DESC);

CREATE INDEX idx_instance_actions_blocked_not_null ON public.instance_actions USING btree (person_id, instance_id) WHERE (blocked_communities_at IS NOT NULL);

CREATE INDEX idx_instance_actions_instance ON public.instance_actions USING btree (instance_id);

CREATE INDEX idx_instance_actions_person ON public.instance_actions USING btree (person_id);

CREATE INDEX idx_local_site_suggested_communities ON public.local_site USING btree (suggested_multi_community_id);

CREATE INDEX idx_local_site_system_account ON public.local_site USING btree (system_account);

CREATE INDEX idx_local_user_invited_by_local_user_id ON public.local_user USING btree (invited_by_local_user_id);

CREATE INDEX idx_multi_community_ap_id ON public.multi_community USING btree (ap_id);

CREATE INDEX idx_multi_community_communities ON public.multi_community USING btree (communities DESC, id DESC);

CREATE INDEX idx_multi_community_instance ON public.multi_community USING btree (instance_id);

CREATE UNIQUE INDEX idx_multi_community_lower_actor_id ON public.multi_community USING btree (lower(ap_id));

CREATE INDEX idx_multi_community_lower_name ON public.multi_community USING btree (lower((name)::text) DESC, id DESC);

CREATE INDEX idx_multi_community_published ON public.multi_community USING btree (published_at DESC, id DESC);

CREATE INDEX idx_multi_community_read_from_name ON public.multi_community USING btree (local) WHERE (local AND (NOT deleted));

CREATE INDEX idx_multi_community_subscribers ON public.multi_community USING btree (subscribers DESC, id DESC);

CREATE INDEX idx_multi_community_subscribers_local ON public.multi_community USING btree (subscribers_local DESC, id DESC);

CREATE INDEX idx_multi_community_trigram ON public.multi_community USING gin (name public.gin_trgm_ops, title public.gin_trgm_ops, summary public.gin_trgm_ops, sidebar public.gin_trgm_ops);

CREATE INDEX idx_multi_creator_id ON public.multi_community USING btree (creator_id);

CREATE INDEX idx_path_gist ON public.comment USING gist (path);

CREATE INDEX idx_person_actions_blocked_not_null ON public.person_actions USING btree (person_id, target_id) WHERE (blocked_at IS NOT NULL);

CREATE INDEX idx_person_actions_followed_not_null ON public.person_actions USING btree (person_id, target_id) WHERE ((followed_at IS NOT NULL) OR (follow_pending IS NOT NULL));

CREATE INDEX idx_person_actions_person ON public.person_actions USING btree (person_id);

CREATE INDEX idx_person_actions_target ON public.person_actions USING btree (target_id);

CREATE INDEX idx_person_comment_score ON public.person USING btree (comment_score DESC);

CREATE INDEX idx_person_instance ON public.person USING btree (instance_id);

CREATE INDEX idx_person_liked_combined_comment ON public.person_liked_combined USING btree (comment_id) WHERE (comment_id IS NOT NULL);

CREATE INDEX idx_person_liked_combined_community ON public.person_liked_combined USING btree (community_id);

CREATE INDEX idx_person_liked_combined_creator ON public.person_liked_combined USING btree (creator_id);

CREATE INDEX idx_person_liked_combined_person ON public.person_liked_combined USING btree (person_id);

CREATE INDEX idx_person_liked_combined_person_voted_at ON public.person_liked_combined USING btree (person_id, voted_at DESC, id DESC);

CREATE INDEX idx_person_liked_combined_post ON public.person_liked_combined USING btree (post_id) WHERE (post_id IS NOT NULL);

CREATE INDEX idx_person_local_instance ON public.person USING btree (local DESC, instance_id);

CREATE UNIQUE INDEX idx_person_lower_actor_id ON public.person USING btree (lower((ap_id)::text));

CREATE INDEX idx_person_lower_name ON public.person USING btree (lower((name)::text));

CREATE INDEX idx_person_post_score ON public.person USING btree (post_score DESC);

CREATE INDEX idx_person_published ON public.person USING btree (published_at DESC);

CREATE INDEX idx_person_trigram ON public.person USING gin (name public.gin_trgm_ops, display_name public.gin_trgm_ops, bio public.gin_trgm_ops);

CREATE INDEX idx_post_actions_like_score ON public.post_actions USING btree (post_id, vote_is_upvote, person_id) WHERE (vote_is_upvote IS NOT NULL);

CREATE INDEX idx_post_actions_liked_not_null ON public.post_actions USING btree (person_id, post_id) WHERE ((voted_at IS NOT NULL) OR (vote_is_upvote IS NOT NULL));

CREATE INDEX idx_post_actions_person ON public.post_actions USING btree (person_id);

CREATE INDEX idx_post_actions_person_hidden ON public.post_actions USING btree (person_id, hidden_at DESC, post_id DESC) WHERE (hidden_at IS NOT NULL);

CREATE INDEX idx_post_actions_person_read ON public.post_actions USING btree (person_id, read_at DESC, post_id DESC) WHERE (read_at IS NOT NULL);

CREATE INDEX idx_post_actions_post ON public.post_actions USING btree (post_id);

CREATE INDEX idx_post_actions_read_comments_not_null ON public.post_actions USING btree (person_id, post_id) WHERE ((read_comments_at IS NOT NULL) OR (read_comments_amount IS NOT NULL));

CREATE INDEX idx_post_actions_saved_not_null ON public.post_actions USING btree (person_id, post_id) WHERE (saved_at IS NOT NULL);

CREATE INDEX idx_post_actions_voted_at ON public.post_actions USING btree (voted_at) WHERE (voted_at IS NOT NULL);

CREATE INDEX idx_post_community ON public.post USING btree (community_id);

CREATE INDEX idx_post_community_active ON public.post USING btree (featured_local DESC, hot_rank_active DESC, published_at DESC, id DESC, community_id);

CREATE INDEX idx_post_community_controversy ON public.post USING btree (featured_local DESC, controversy_rank DESC, id DESC, community_id);

CREATE INDEX idx_post_community_hot ON public.post USING btree (featured_local DESC, hot_rank DESC, published_at DESC, id DESC, community_id);

CREATE INDEX idx_post_community_most_comments ON public.post USING btree (featured_local DESC, comments DESC, published_at DESC, id DESC, community_id);

CREATE INDEX idx_post_community_newest_comment_time ON public.post USING btree (featured_local DESC, COALESCE(newest_comment_time_at, published_at) DESC, id DESC, community_id);

CREATE INDEX idx_post_community_newest_comment_time_necro ON public.post USING btree (featured_local DESC, COALESCE(newest_comment_time_necro_at, published_at) DESC, id DESC, community_id);

CREATE INDEX idx_post_community_published ON public.post USING btree (published_at DESC, id DESC, community_id);

CREATE INDEX idx_post_community_scaled ON public.post USING btree (featured_local DESC, scaled_rank DESC, published_at DESC, id DESC, community_id);

CREATE INDEX idx_post_community_score ON public.post USING btree (featured_local DESC, score DESC, published_at DESC, id DESC, community_id);

CREATE INDEX idx_post_creator ON public.post USING btree (creator_id);

CREATE INDEX idx_post_featured_community_active ON public.post USING btree (featured_community DESC, hot_rank_active DESC, published_at DESC, id DESC, community_id);

CREATE INDEX idx_post_featured_community_controversy ON public.post USING btree (featured_community DESC, controversy_rank DESC, id DESC, community_id);

CREATE INDEX idx_post_featured_community_hot ON public.post USING btree (featured_community DESC, hot_rank DESC, published_at DESC, id DESC, community_id);

CREATE INDEX idx_post_featured_community_most_comments ON public.post USING btree (featured_community DESC, comments DESC, published_at DESC, id DESC, community_id);

CREATE INDEX idx_post_featured_community_newest_comment_time ON public.post USING btree (featured_community DESC, COALESCE(newest_comment_time_at, published_at) DESC, id DESC, community_id);

CREATE INDEX idx_post_featured_community_newest_comment_time_necr ON public.post USING btree (featured_community DESC, COALESCE(newest_comment_time_necro_at, published_at) DESC, id DESC, community_id);

CREATE INDEX idx_post_featured_community_published ON public.post USING btree (featured_community DESC, published_at DESC, id DESC, community_id);

CREATE INDEX idx_post_featured_community_published_asc ON public.post USING btree (featured_community DESC, public.reverse_timestamp_sort(published_at) DESC, id DESC, community_id);

CREATE INDEX idx_post_featured_community_scaled ON public.post USING btree (featured_community DESC, scaled_rank DESC, published_at DESC, id DESC, community_id);

CREATE INDEX idx_post_featured_community_score ON public.post USING btree (featured_community DESC, score DESC, published_at DESC, id DESC, community_id);

CREATE INDEX idx_post_featured_local_active ON public.post USING btree (featured_local DESC, hot_rank_active DESC, published_at DESC, id DESC);

CREATE INDEX idx_post_featured_local_controversy ON public.post USING btree (featured_local DESC, controversy_rank DESC, id DESC);

CREATE INDEX idx_post_featured_local_hot ON public.post USING btree (featured_local DESC, hot_rank DESC, published_at DESC, id DESC);

CREATE INDEX idx_post_featured_local_most_comments ON public.post USING btree (featured_local DESC, comments DESC, published_at DESC, id DESC);

CREATE INDEX idx_post_featured_local_newest_comment_time ON public.post USING btree (featured_local DESC, COALESCE(newest_comment_time_at, published_at) DESC, id DESC);

CREATE INDEX idx_post_featured_local_newest_comment_time_necro ON public.post USING btree (featured_local DESC, COALESCE(newest_comment_time_necro_at, published_at) DESC, id DESC);

CREATE INDEX idx_post_featured_local_published ON public.post USING btree (featured_local DESC, published_at DESC, id DESC);

CREATE INDEX idx_post_featured_local_scaled ON public.post USING btree (featured_local DESC, scaled_rank DESC, published_at DESC, id DESC);

CREATE INDEX idx_post_featured_local_score ON public.post USING btree (featured_local DESC, score DESC, published_at DESC, id DESC);

CREATE INDEX idx_post_language ON public.post USING btree (language_id);

CREATE INDEX idx_post_nonzero_hotrank ON public.post USING btree (published_at DESC) WHERE ((hot_rank <> (0)::double precision) OR (hot_rank_active <> (0)::double precision));

CREATE INDEX idx_post_published ON public.post USING btree (published_at);

CREATE INDEX idx_post_scheduled_publish_time ON public.post USING btree (scheduled_publish_time_at);

CREATE INDEX idx_post_tag_tag ON public.post_community_tag USING btree (community_tag_id);

CREATE INDEX idx_post_trigram ON public.post USING gin (name public.gin_trgm_ops, body public.gin_trgm_ops, alt_text public.gin_trgm_ops);

CREATE INDEX idx_post_url ON public.post USING btree (url);

CREATE INDEX idx_post_url_content_type ON public.post USING gin (url_content_type public.gin_trgm_ops);

CREATE INDEX idx_tag_community ON public.community_tag USING btree (community_id);

CREATE STATISTICS public.comment_actions_liked_stat ON (voted_at IS NULL), (vote_is_upvote IS NULL) FROM public.comment_actions;

CREATE STATISTICS public.community_actions_followed_stat ON (followed_at IS NULL), (follow_state IS NULL) FROM public.community_actions;

CREATE STATISTICS public.person_actions_followed_stat ON (followed_at IS NULL), (follow_pending IS NULL) FROM public.person_actions;

CREATE STATISTICS public.post_actions_liked_stat ON (voted_at IS NULL), (vote_is_upvote IS NULL), (post_id IS NULL) FROM public.post_actions;

CREATE STATISTICS public.post_actions_read_comments_stat ON (read_comments_at IS NULL), (read_comments_amount IS NULL) FROM public.post_actions;

CREATE TRIGGER change_values BEFORE INSERT OR UPDATE ON public.comment FOR EACH ROW EXECUTE FUNCTION r.comment_change_values();

CREATE TRIGGER change_values BEFORE INSERT ON public.post FOR EACH ROW EXECUTE FUNCTION r.post_change_values();

CREATE TRIGGER delete_follow BEFORE DELETE ON public.person FOR EACH ROW EXECUTE FUNCTION r.delete_follow_before_person();

CREATE TRIGGER delete_statement AFTER DELETE ON public.comment REFERENCING OLD TABLE AS select_old_rows FOR EACH STATEMENT EXECUTE FUNCTION r.comment_delete_statement();

CREATE TRIGGER delete_statement AFTER DELETE ON public.comment_actions REFERENCING OLD TABLE AS select_old_rows FOR EACH STATEMENT EXECUTE FUNCTION r.comment_actions_delete_statement();

CREATE TRIGGER delete_statement AFTER DELETE ON public.community REFERENCING OLD TABLE AS select_old_rows FOR EACH STATEMENT EXECUTE FUNCTION r.community_delete_statement();

CREATE TRIGGER delete_statement AFTER DELETE ON public.community_actions REFERENCING OLD TABLE AS select_old_rows FOR EACH STATEMENT EXECUTE FUNCTION r.community_actions_delete_statement();

CREATE TRIGGER delete_statement AFTER DELETE ON public.post REFERENCING OLD TABLE AS select_old_rows FOR EACH STATEMENT EXECUTE FUNCTION r.post_delete_statement();

CREATE TRIGGER delete_statement AFTER DELETE ON public.post_actions REFERENCING OLD TABLE AS select_old_rows FOR EACH STATEMENT EXECUTE FUNCTION r.post_actions_delete_statement();

CREATE TRIGGER insert_statement AFTER INSERT ON public.comment REFERENCING NEW TABLE AS select_new_rows FOR EACH STATEMENT EXECUTE FUNCTION r.comment_insert_statement();

CREATE TRIGGER insert_statement AFTER INSERT ON public.comment_actions REFERENCING NEW TABLE AS select_new_rows FOR EACH STATEMENT EXECUTE FUNCTION r.comment_actions_insert_statement();

CREATE TRIGGER insert_statement AFTER INSERT ON public.community REFERENCING NEW TABLE AS select_new_rows FOR EACH STATEMENT EXECUTE FUNCTION r.community_insert_statement();

CREATE TRIGGER insert_statement AFTER INSERT ON public.community_actions REFERENCING NEW TABLE AS select_new_rows FOR EACH STATEMENT EXECUTE FUNCTION r.community_actions_insert_statement();

CREATE TRIGGER insert_statement AFTER INSERT ON public.post REFERENCING NEW TABLE AS select_new_rows FOR EACH STATEMENT EXECUTE FUNCTION r.post_insert_statement();

CREATE TRIGGER insert_statement AFTER INSERT ON public.post_actions REFERENCING NEW TABLE AS select_new_rows FOR EACH STATEMENT EXECUTE FUNCTION r.post_actions_insert_statement();

CREATE TRIGGER person_content_combined_comment AFTER INSERT ON public.comment FOR EACH ROW EXECUTE FUNCTION r.person_content_combined_comment_insert();

CREATE TRIGGER person_content_combined_post AFTER INSERT ON public.post FOR EACH ROW EXECUTE FUNCTION r.person_content_combined_post_insert();

CREATE TRIGGER person_liked_combined_comment_delete AFTER DELETE ON public.comment_actions FOR EACH ROW EXECUTE FUNCTION r.person_liked_combined_comment_delete();

CREATE TRIGGER person_liked_combined_comment_insert AFTER INSERT ON public.comment_actions FOR EACH ROW EXECUTE FUNCTION r.person_liked_combined_comment_insert();

CREATE TRIGGER person_liked_combined_comment_update AFTER UPDATE OF voted_at ON public.comment_actions FOR EACH ROW EXECUTE FUNCTION r.person_liked_combined_comment_update();

CREATE TRIGGER person_liked_combined_post_delete AFTER DELETE ON public.post_actions FOR EACH ROW EXECUTE FUNCTION r.person_liked_combined_post_delete();

CREATE TRIGGER person_liked_combined_post_insert AFTER INSERT ON public.post_actions FOR EACH ROW EXECUTE FUNCTION r.person_liked_combined_post_insert();

CREATE TRIGGER person_liked_combined_post_update AFTER UPDATE OF voted_at ON public.post_actions FOR EACH ROW EXECUTE FUNCTION r.person_liked_combined_post_update();

CREATE TRIGGER person_saved_combined_comment_delete AFTER DELETE ON public.comment_actions FOR EACH ROW EXECUTE FUNCTION r.person_saved_combined_comment_delete();

CREATE TRIGGER person_saved_combined_comment_insert AFTER INSERT ON public.comment_actions FOR EACH ROW EXECUTE FUNCTION r.person_saved_combined_comment_insert();

CREATE TRIGGER person_saved_combined_comment_update AFTER UPDATE OF saved_at ON public.comment_actions FOR EACH ROW EXECUTE FUNCTION r.person_saved_combined_comment_update();

CREATE TRIGGER person_saved_combined_post_delete AFTER DELETE ON public.post_actions FOR EACH ROW EXECUTE FUNCTION r.person_saved_combined_post_delete();

CREATE TRIGGER person_saved_combined_post_insert AFTER INSERT ON public.post_actions FOR EACH ROW EXECUTE FUNCTION r.person_saved_combined_post_insert();

CREATE TRIGGER person_saved_combined_post_update AFTER UPDATE OF saved_at ON public.post_actions FOR EACH ROW EXECUTE FUNCTION r.person_saved_combined_post_update();

CREATE TRIGGER require_uplete BEFORE DELETE ON public.comment_actions FOR EACH STATEMENT EXECUTE FUNCTION r.require_uplete();

CREATE TRIGGER require_uplete BEFORE DELETE ON public.community_actions FOR EACH STATEMENT EXECUTE FUNCTION r.require_uplete();

CREATE TRIGGER require_uplete BEFORE DELETE ON public.instance_actions FOR EACH STATEMENT EXECUTE FUNCTION r.require_uplete();

CREATE TRIGGER require_uplete BEFORE DELETE ON public.person_actions FOR EACH STATEMENT EXECUTE FUNCTION r.require_uplete();

CREATE TRIGGER require_uplete BEFORE DELETE ON public.post_actions FOR EACH STATEMENT EXECUTE FUNCTION r.require_uplete();

CREATE TRIGGER update_statement AFTER UPDATE ON public.comment REFERENCING OLD TABLE AS select_old_rows NEW TABLE AS select_new_rows FOR EACH STATEMENT EXECUTE FUNCTION r.comment_update_statement();

CREATE TRIGGER update_statement AFTER UPDATE ON public.comment_actions REFERENCING OLD TABLE AS select_old_rows NEW TABLE AS select_new_rows FOR EACH STATEMENT EXECUTE FUNCTION r.comment_actions_update_statement();

CREATE TRIGGER update_statement AFTER UPDATE ON public.community REFERENCING OLD TABLE AS select_old_rows NEW TABLE AS select_new_rows FOR EACH STATEMENT EXECUTE FUNCTION r.community_update_statement();

CREATE TRIGGER update_statement AFTER UPDATE ON public.community_actions REFERENCING OLD TABLE AS select_old_rows NEW TABLE AS select_new_rows FOR EACH STATEMENT EXECUTE FUNCTION r.community_actions_update_statement();

CREATE TRIGGER update_statement AFTER UPDATE ON public.post REFERENCING OLD TABLE AS select_old_rows NEW TABLE AS select_new_rows FOR EACH STATEMENT EXECUTE FUNCTION r.post_update_statement();

CREATE TRIGGER update_statement AFTER UPDATE ON public.post_actions REFERENCING OLD TABLE AS select_old_rows NEW TABLE AS select_new_rows FOR EACH STATEMENT EXECUTE FUNCTION r.post_actions_update_statement();

ALTER TABLE ONLY public.comment_actions
    ADD CONSTRAINT comment_actions_comment_id_fkey FOREIGN KEY (comment_id) REFERENCES public.comment(id) ON UPDATE CASCADE ON DELETE CASCADE;

ALTER TABLE ONLY public.comment_actions
    ADD CONSTRAINT comment_actions_person_id_fkey FOREIGN KEY (person_id) REFERENCES public.person(id) ON UPDATE CASCADE ON DELETE CASCADE;

ALTER TABLE ONLY public.comment
    ADD CONSTRAINT comment_community_id_fkey FOREIGN KEY (community_id) REFERENCES public.community(id) ON UPDATE CASCADE ON DELETE CASCADE;

ALTER TABLE ONLY public.comment
    ADD CONSTRAINT comment_creator_id_fkey FOREIGN KEY (creator_id) REFERENCES public.person(id) ON UPDATE CASCADE ON DELETE CASCADE;

ALTER TABLE ONLY public.comment
    ADD CONSTRAINT comment_language_id_fkey FOREIGN KEY (language_id) REFERENCES public.language(id);

ALTER TABLE ONLY public.comment
    ADD CONSTRAINT comment_post_id_fkey FOREIGN KEY (post_id) REFERENCES public.post(id) ON UPDATE CASCADE ON DELETE CASCADE;

ALTER TABLE ONLY public.community_actions
    ADD CONSTRAINT community_actions_community_id_fkey FOREIGN KEY (community_id) REFERENCES public.community(id) ON UPDATE CASCADE ON DELETE CASCADE;

ALTER TABLE ONLY public.community_actions
    ADD CONSTRAINT community_actions_follow_approver_id_fkey FOREIGN KEY (follow_approver_id) REFERENCES public.person(id) ON UPDATE CASCADE ON DELETE CASCADE;

ALTER TABLE ONLY public.community_actions
    ADD CONSTRAINT community_actions_person_id_fkey FOREIGN KEY (person_id) REFERENCES public.person(id) ON UPDATE CASCADE ON DELETE CASCADE;

ALTER TABLE ONLY public.community
    ADD CONSTRAINT community_instance_id_fkey FOREIGN KEY (instance_id) REFERENCES public.instance(id) ON UPDATE CASCADE ON DELETE CASCADE;

ALTER TABLE ONLY public.instance_actions
    ADD CONSTRAINT instance_actions_instance_id_fkey FOREIGN KEY (instance_id) REFERENCES public.instance(id) ON UPDATE CASCADE ON DELETE CASCADE;

ALTER TABLE ONLY public.instance_actions
    ADD CONSTRAINT instance_actions_person_id_fkey FOREIGN KEY (person_id) REFERENCES public.person(id) ON UPDATE CASCADE ON DELETE CASCADE;

ALTER TABLE ONLY public.local_site
    ADD CONSTRAINT local_site_site_id_fkey FOREIGN KEY (site_id) REFERENCES public.site(id) ON UPDATE CASCADE ON DELETE CASCADE;

ALTER TABLE ONLY public.local_site
    ADD CONSTRAINT local_site_suggested_communities_fkey FOREIGN KEY (suggested_multi_community_id) REFERENCES public.multi_community(id) ON UPDATE CASCADE ON DELETE CASCADE;

ALTER TABLE ONLY public.local_site
    ADD CONSTRAINT local_site_system_account_fkey FOREIGN KEY (system_account) REFERENCES public.person(id) ON UPDATE CASCADE ON DELETE CASCADE;

ALTER TABLE ONLY public.local_user
    ADD CONSTRAINT local_user_invited_by_local_user_id_fkey FOREIGN KEY (invited_by_local_user_id) REFERENCES public.local_user(id) ON DELETE SET NULL;

ALTER TABLE ONLY public.local_user
    ADD CONSTRAINT local_user_person_id_fkey FOREIGN KEY (person_id) REFERENCES public.person(id) ON UPDATE CASCADE ON DELETE CASCADE;

ALTER TABLE ONLY public.multi_community
    ADD CONSTRAINT multi_community_creator_id_fkey FOREIGN KEY (creator_id) REFERENCES public.person(id) ON UPDATE CASCADE ON DELETE CASCADE;

ALTER TABLE ONLY public.multi_community
    ADD CONSTRAINT multi_community_instance_id_fkey FOREIGN KEY (instance_id) REFERENCES public.instance(id) ON UPDATE CASCADE ON DELETE CASCADE;

ALTER TABLE ONLY public.person_actions
    ADD CONSTRAINT person_actions_person_id_fkey FOREIGN KEY (person_id) REFERENCES public.person(id) ON UPDATE CASCADE ON DELETE CASCADE;

ALTER TABLE ONLY public.person_actions
    ADD CONSTRAINT person_actions_target_id_fkey FOREIGN KEY (target_id) REFERENCES public.person(id) ON UPDATE CASCADE ON DELETE CASCADE;

ALTER TABLE ONLY public.person
    ADD CONSTRAINT person_instance_id_fkey FOREIGN KEY (instance_id) REFERENCES public.instance(id) ON UPDATE CASCADE ON DELETE CASCADE;

ALTER TABLE ONLY public.person_liked_combined
    ADD CONSTRAINT person_liked_combined_comment_id_fkey FOREIGN KEY (comment_id) REFERENCES public.comment(id) ON UPDATE CASCADE ON DELETE CASCADE;

ALTER TABLE ONLY public.person_liked_combined
    ADD CONSTRAINT person_liked_combined_community_id_fkey FOREIGN KEY (community_id) REFERENCES public.community(id) ON UPDATE CASCADE ON DELETE CASCADE;

ALTER TABLE ONLY public.person_liked_combined
    ADD CONSTRAINT person_liked_combined_creator_id_fkey FOREIGN KEY (creator_id) REFERENCES public.person(id) ON UPDATE CASCADE ON DELETE CASCADE;

ALTER TABLE ONLY public.person_liked_combined
    ADD CONSTRAINT person_liked_combined_person_id_fkey FOREIGN KEY (person_id) REFERENCES public.person(id) ON UPDATE CASCADE ON DELETE CASCADE;

ALTER TABLE ONLY public.person_liked_combined
    ADD CONSTRAINT person_liked_combined_post_id_fkey FOREIGN KEY (post_id) REFERENCES public.post(id) ON UPDATE CASCADE ON DELETE CASCADE;

ALTER TABLE ONLY public.post_actions
    ADD CONSTRAINT post_actions_person_id_fkey FOREIGN KEY (person_id) REFERENCES public.person(id) ON UPDATE CASCADE ON DELETE CASCADE;

ALTER TABLE ONLY public.post_actions
    ADD CONSTRAINT post_actions_post_id_fkey FOREIGN KEY (post_id) REFERENCES public.post(id) ON UPDATE CASCADE ON DELETE CASCADE;

ALTER TABLE ONLY public.post
    ADD CONSTRAINT post_community_id_fkey FOREIGN KEY (community_id) REFERENCES public.community(id) ON UPDATE CASCADE ON DELETE CASCADE;

ALTER TABLE ONLY public.post
    ADD CONSTRAINT post_creator_id_fkey FOREIGN KEY (creator_id) REFERENCES public.person(id) ON UPDATE CASCADE ON DELETE CASCADE;

ALTER TABLE ONLY public.post
    ADD CONSTRAINT post_language_id_fkey FOREIGN KEY (language_id) REFERENCES public.language(id);

ALTER TABLE ONLY public.post_community_tag
    ADD CONSTRAINT post_tag_post_id_fkey FOREIGN KEY (post_id) REFERENCES public.post(id) ON UPDATE CASCADE ON DELETE CASCADE;

ALTER TABLE ONLY public.post_community_tag
    ADD CONSTRAINT post_tag_tag_id_fkey FOREIGN KEY (community_tag_id) REFERENCES public.community_tag(id) ON UPDATE CASCADE ON DELETE CASCADE;

ALTER TABLE ONLY public.site
    ADD CONSTRAINT site_instance_id_fkey FOREIGN KEY (instance_id) REFERENCES public.instance(id) ON UPDATE CASCADE ON DELETE CASCADE;

ALTER TABLE ONLY public.community_tag
    ADD CONSTRAINT tag_community_id_fkey FOREIGN KEY (community_id) REFERENCES public.community(id) ON UPDATE CASCADE ON DELETE CASCADE;


--
-- PostgreSQL database dump complete
--
