-- An extract of Miniflux's schema (Apache License 2.0; see README.md in this directory): the tables
-- miniflux.sql uses as internal/database/migrations.go leaves them after its last migration (read back with
-- pg_dump -s from a database the migrations built), with their enum types, primary keys, unique constraints and
-- the unique indexes ON CONFLICT infers; sequences, foreign keys, triggers and other indexes are left out.

CREATE TYPE entry_status AS ENUM ('unread', 'read', 'removed');
CREATE TYPE entry_sorting_direction AS ENUM ('asc', 'desc');
CREATE TYPE entry_sorting_order AS ENUM ('published_at', 'created_at');
CREATE TYPE webapp_display_mode AS ENUM ('fullscreen', 'standalone', 'minimal-ui', 'browser');

CREATE TABLE acme_cache (
    key character varying(400) NOT NULL,
    data bytea NOT NULL,
    updated_at timestamp with time zone NOT NULL
);

CREATE TABLE api_keys (
    id integer NOT NULL,
    user_id integer NOT NULL,
    token text NOT NULL,
    description text NOT NULL,
    last_used_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now()
);

CREATE TABLE categories (
    id integer NOT NULL,
    user_id integer NOT NULL,
    title text NOT NULL,
    hide_globally boolean DEFAULT false NOT NULL
);

CREATE TABLE enclosures (
    id bigint NOT NULL,
    user_id integer NOT NULL,
    entry_id bigint NOT NULL,
    url text NOT NULL,
    size bigint DEFAULT 0,
    mime_type text DEFAULT ''::text,
    media_progression integer DEFAULT 0
);

CREATE TABLE entries (
    id bigint NOT NULL,
    user_id integer NOT NULL,
    feed_id bigint NOT NULL,
    hash text NOT NULL,
    published_at timestamp with time zone NOT NULL,
    title text NOT NULL,
    url text NOT NULL,
    author text,
    content text,
    status entry_status DEFAULT 'unread'::entry_status,
    starred boolean DEFAULT false,
    comments_url text DEFAULT ''::text,
    document_vectors tsvector,
    changed_at timestamp with time zone NOT NULL,
    share_code text DEFAULT ''::text NOT NULL,
    reading_time integer DEFAULT 0 NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    tags text[] DEFAULT '{}'::text[],
    language text DEFAULT ''::text NOT NULL
);

CREATE TABLE entry_tombstones (
    feed_id bigint NOT NULL,
    hash text NOT NULL,
    deleted_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT entry_tombstones_hash_check CHECK ((hash <> ''::text))
);

CREATE TABLE feed_icons (
    feed_id bigint NOT NULL,
    icon_id bigint NOT NULL
);

CREATE TABLE feeds (
    id bigint NOT NULL,
    user_id integer NOT NULL,
    category_id integer NOT NULL,
    title text NOT NULL,
    feed_url text NOT NULL,
    site_url text NOT NULL,
    checked_at timestamp with time zone DEFAULT now(),
    etag_header text DEFAULT ''::text,
    last_modified_header text DEFAULT ''::text,
    parsing_error_msg text DEFAULT ''::text,
    parsing_error_count integer DEFAULT 0,
    scraper_rules text DEFAULT ''::text,
    rewrite_rules text DEFAULT ''::text,
    crawler boolean DEFAULT false,
    username text DEFAULT ''::text,
    password text DEFAULT ''::text,
    user_agent text DEFAULT ''::text,
    disabled boolean DEFAULT false,
    next_check_at timestamp with time zone DEFAULT now(),
    ignore_http_cache boolean DEFAULT false,
    fetch_via_proxy boolean DEFAULT false,
    blocklist_rules text DEFAULT ''::text NOT NULL,
    keeplist_rules text DEFAULT ''::text NOT NULL,
    allow_self_signed_certificates boolean DEFAULT false NOT NULL,
    cookie text DEFAULT ''::text,
    hide_globally boolean DEFAULT false NOT NULL,
    url_rewrite_rules text DEFAULT ''::text NOT NULL,
    no_media_player boolean DEFAULT false,
    apprise_service_urls text DEFAULT ''::text,
    disable_http2 boolean DEFAULT false,
    description text DEFAULT ''::text,
    ntfy_enabled boolean DEFAULT false,
    ntfy_priority integer DEFAULT 3,
    webhook_url text DEFAULT ''::text,
    pushover_enabled boolean DEFAULT false,
    pushover_priority integer DEFAULT 0,
    ntfy_topic text DEFAULT ''::text,
    proxy_url text DEFAULT ''::text,
    block_filter_entry_rules text DEFAULT ''::text NOT NULL,
    keep_filter_entry_rules text DEFAULT ''::text NOT NULL,
    ignore_entry_updates boolean DEFAULT false,
    language text DEFAULT ''::text NOT NULL
);

CREATE TABLE icons (
    id bigint NOT NULL,
    hash text NOT NULL,
    mime_type text NOT NULL,
    content bytea NOT NULL,
    external_id text DEFAULT ''::text
);

CREATE TABLE users (
    id integer NOT NULL,
    username text NOT NULL,
    password text,
    is_admin boolean DEFAULT false,
    language text DEFAULT 'en_US'::text,
    timezone text DEFAULT 'UTC'::text,
    theme text DEFAULT 'light_serif'::text,
    last_login_at timestamp with time zone,
    entry_direction entry_sorting_direction DEFAULT 'asc'::entry_sorting_direction,
    keyboard_shortcuts boolean DEFAULT true,
    entries_per_page integer DEFAULT 100,
    show_reading_time boolean DEFAULT true,
    entry_swipe boolean DEFAULT true,
    stylesheet text DEFAULT ''::text NOT NULL,
    google_id text DEFAULT ''::text NOT NULL,
    openid_connect_id text DEFAULT ''::text NOT NULL,
    display_mode webapp_display_mode DEFAULT 'standalone'::webapp_display_mode,
    entry_order entry_sorting_order DEFAULT 'published_at'::entry_sorting_order,
    default_reading_speed integer DEFAULT 265,
    cjk_reading_speed integer DEFAULT 500,
    default_home_page text DEFAULT 'unread'::text,
    categories_sorting_order text DEFAULT 'unread_count'::text NOT NULL,
    gesture_nav text DEFAULT 'tap'::text,
    mark_read_on_view boolean DEFAULT true,
    media_playback_rate numeric DEFAULT 1,
    block_filter_entry_rules text DEFAULT ''::text NOT NULL,
    keep_filter_entry_rules text DEFAULT ''::text NOT NULL,
    mark_read_on_media_player_completion boolean DEFAULT false,
    custom_js text DEFAULT ''::text NOT NULL,
    external_font_hosts text DEFAULT ''::text NOT NULL,
    always_open_external_links boolean DEFAULT false,
    open_external_links_in_new_tab boolean DEFAULT true
);

CREATE TABLE web_sessions (
    id text NOT NULL,
    secret_hash bytea NOT NULL,
    user_id integer,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    user_agent text DEFAULT ''::text NOT NULL,
    ip inet,
    state jsonb DEFAULT '{}'::jsonb NOT NULL,
    CONSTRAINT web_sessions_state_check CHECK ((jsonb_typeof(state) = 'object'::text))
);

CREATE TABLE webauthn_credentials (
    handle bytea NOT NULL,
    cred_id bytea NOT NULL,
    user_id integer NOT NULL,
    public_key bytea NOT NULL,
    attestation_type character varying(255) NOT NULL,
    aaguid bytea,
    sign_count bigint,
    clone_warning boolean,
    name text DEFAULT ''::text NOT NULL,
    added_on timestamp with time zone DEFAULT now(),
    last_seen_on timestamp with time zone DEFAULT now(),
    backup_eligible boolean,
    backup_state boolean DEFAULT false NOT NULL
);

ALTER TABLE acme_cache ADD CONSTRAINT acme_cache_pkey PRIMARY KEY (key);
ALTER TABLE api_keys ADD CONSTRAINT api_keys_pkey PRIMARY KEY (id);
ALTER TABLE api_keys ADD CONSTRAINT api_keys_token_key UNIQUE (token);
ALTER TABLE api_keys ADD CONSTRAINT api_keys_user_id_description_key UNIQUE (user_id, description);
ALTER TABLE categories ADD CONSTRAINT categories_pkey PRIMARY KEY (id);
ALTER TABLE categories ADD CONSTRAINT categories_user_id_title_key UNIQUE (user_id, title);
ALTER TABLE enclosures ADD CONSTRAINT enclosures_pkey PRIMARY KEY (id);
ALTER TABLE entries ADD CONSTRAINT entries_feed_id_hash_key UNIQUE (feed_id, hash);
ALTER TABLE entries ADD CONSTRAINT entries_pkey PRIMARY KEY (id);
ALTER TABLE entry_tombstones ADD CONSTRAINT entry_tombstones_pkey PRIMARY KEY (feed_id, hash);
ALTER TABLE feed_icons ADD CONSTRAINT feed_icons_pkey PRIMARY KEY (feed_id, icon_id);
ALTER TABLE feeds ADD CONSTRAINT feeds_pkey PRIMARY KEY (id);
ALTER TABLE feeds ADD CONSTRAINT feeds_user_id_feed_url_key UNIQUE (user_id, feed_url);
ALTER TABLE icons ADD CONSTRAINT icons_hash_key UNIQUE (hash);
ALTER TABLE icons ADD CONSTRAINT icons_pkey PRIMARY KEY (id);
ALTER TABLE users ADD CONSTRAINT users_pkey PRIMARY KEY (id);
ALTER TABLE users ADD CONSTRAINT users_username_key UNIQUE (username);
ALTER TABLE web_sessions ADD CONSTRAINT web_sessions_pkey PRIMARY KEY (id);
ALTER TABLE webauthn_credentials ADD CONSTRAINT webauthn_credentials_cred_id_key UNIQUE (cred_id);
ALTER TABLE webauthn_credentials ADD CONSTRAINT webauthn_credentials_pkey PRIMARY KEY (handle);
CREATE UNIQUE INDEX enclosures_user_entry_url_unique_idx ON enclosures USING btree (user_id, entry_id, encode(sha256((url)::bytea), 'hex'::text));
CREATE UNIQUE INDEX entries_share_code_idx ON entries USING btree (share_code) WHERE (share_code <> ''::text);
CREATE UNIQUE INDEX icons_external_id_idx ON icons USING btree (external_id) WHERE (external_id <> ''::text);
CREATE UNIQUE INDEX users_google_id_idx ON users USING btree (google_id) WHERE (google_id <> ''::text);
CREATE UNIQUE INDEX users_openid_connect_id_idx ON users USING btree (openid_connect_id) WHERE (openid_connect_id <> ''::text);
