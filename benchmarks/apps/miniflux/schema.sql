-- miniflux (github.com/miniflux/v2, internal/database/migrations.go at 106cdd09): the tables the statements touch,
-- as the migrations leave them (columns added by later migrations folded in; users cut to the columns used).
CREATE TABLE users (
    id SERIAL,
    username text NOT NULL UNIQUE,
    password text,
    is_admin bool default 'f',
    language text default 'en_US',
    timezone text default 'UTC',
    theme text default 'light_serif',
    last_login_at timestamp with time zone,
    PRIMARY KEY (id)
);

CREATE TABLE categories (
    id SERIAL,
    user_id int NOT NULL,
    title text NOT NULL,
    hide_globally boolean NOT NULL default false,
    PRIMARY KEY (id),
    UNIQUE (user_id, title),
    FOREIGN KEY (user_id) REFERENCES users(id) ON DELETE CASCADE
);

CREATE TABLE feeds (
    id BIGSERIAL,
    user_id int NOT NULL,
    category_id int NOT NULL,
    title text NOT NULL,
    feed_url text NOT NULL,
    site_url text NOT NULL,
    checked_at timestamp with time zone default now(),
    etag_header text default '',
    last_modified_header text default '',
    parsing_error_msg text default '',
    parsing_error_count int default 0,
    scraper_rules text default '',
    rewrite_rules text default '',
    crawler boolean default 'f',
    user_agent text default '',
    disabled boolean default 'f',
    next_check_at timestamp with time zone default now(),
    ignore_http_cache bool default false,
    fetch_via_proxy bool default false,
    allow_self_signed_certificates boolean NOT NULL default false,
    cookie text default '',
    hide_globally boolean NOT NULL default false,
    url_rewrite_rules text NOT NULL default '',
    no_media_player boolean default 'f',
    description text default '',
    proxy_url text default '',
    ignore_entry_updates bool default 'f',
    language text NOT NULL default '',
    PRIMARY KEY (id),
    UNIQUE (user_id, feed_url),
    FOREIGN KEY (user_id) REFERENCES users(id) ON DELETE CASCADE,
    FOREIGN KEY (category_id) REFERENCES categories(id) ON DELETE CASCADE
);
CREATE INDEX feeds_user_category_idx ON feeds(user_id, category_id);
CREATE INDEX feeds_feed_id_hide_globally_idx ON feeds(id, hide_globally);

CREATE TYPE entry_status AS enum('unread', 'read', 'removed');

CREATE TABLE entries (
    id BIGSERIAL,
    user_id int NOT NULL,
    feed_id bigint NOT NULL,
    hash text NOT NULL,
    published_at timestamp with time zone NOT NULL,
    title text NOT NULL,
    url text NOT NULL,
    author text,
    content text,
    status entry_status default 'unread',
    starred bool default 'f',
    comments_url text default '',
    document_vectors tsvector,
    changed_at timestamp with time zone NOT NULL,
    share_code text NOT NULL default '',
    reading_time int NOT NULL default 0,
    created_at timestamp with time zone NOT NULL default now(),
    tags text[] default '{}',
    language text NOT NULL default '',
    PRIMARY KEY (id),
    UNIQUE (feed_id, hash),
    FOREIGN KEY (user_id) REFERENCES users(id) ON DELETE CASCADE,
    FOREIGN KEY (feed_id) REFERENCES feeds(id) ON DELETE CASCADE
);
-- entries_feed_idx, entries_user_status_idx and entries_feed_url_idx were dropped by later migrations
CREATE INDEX document_vectors_idx ON entries USING gin(document_vectors);
CREATE UNIQUE INDEX entries_share_code_idx ON entries USING btree(share_code) WHERE share_code <> '';
CREATE INDEX entries_user_feed_idx ON entries (user_id, feed_id);
CREATE INDEX entries_id_user_status_idx ON entries USING btree (id, user_id, status);
CREATE INDEX entries_feed_id_status_hash_idx ON entries USING btree (feed_id, status, hash);
CREATE INDEX entries_user_id_status_starred_idx ON entries (user_id, status, starred);
CREATE INDEX entries_user_status_feed_idx ON entries(user_id, status, feed_id);
CREATE INDEX entries_user_status_changed_idx ON entries(user_id, status, changed_at);
CREATE INDEX entries_user_status_published_idx ON entries(user_id, status, published_at);
CREATE INDEX entries_user_status_created_idx ON entries(user_id, status, created_at);
CREATE INDEX entries_user_status_changed_published_idx ON entries(user_id, status, changed_at, published_at);
