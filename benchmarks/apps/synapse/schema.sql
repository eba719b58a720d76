-- synapse (github.com/element-hq/synapse at a58ad44e): the events, event_json, rooms, rejections,
-- current_state_events and device_inbox tables as synapse/storage/schema/main/full_schemas/72/full.sql.postgres
-- creates them, with the later deltas on them: delta/74/03_membership_tables_event_stream_ordering.sql.postgres
-- (current_state_events.event_stream_ordering and its NOT VALID foreign key) and the background index updates
-- that finish on any live server (events_jump_to_date_idx: delta/73/24 + events_bg_updates.py; received_ts_idx:
-- delta/88/06 + events_worker.py; current_state_events_stream_ordering_idx: delta/77/14 + events_bg_updates.py;
-- current_state_events_members_room_index: delta/87/03 + state.py).
CREATE TABLE events (
    topological_ordering bigint NOT NULL,
    event_id text NOT NULL,
    type text NOT NULL,
    room_id text NOT NULL,
    content text,
    unrecognized_keys text,
    processed boolean NOT NULL,
    outlier boolean NOT NULL,
    depth bigint DEFAULT 0 NOT NULL,
    origin_server_ts bigint,
    received_ts bigint,
    sender text,
    contains_url boolean,
    instance_name text,
    stream_ordering bigint,
    state_key text,
    rejection_reason text
);
ALTER TABLE ONLY events ADD CONSTRAINT events_event_id_key UNIQUE (event_id);
CREATE INDEX event_contains_url_index ON events USING btree (room_id, topological_ordering, stream_ordering) WHERE ((contains_url = true) AND (outlier = false));
CREATE INDEX events_order_room ON events USING btree (room_id, topological_ordering, stream_ordering);
CREATE INDEX events_room_stream ON events USING btree (room_id, stream_ordering);
CREATE UNIQUE INDEX events_stream_ordering ON events USING btree (stream_ordering);
CREATE INDEX events_ts ON events USING btree (origin_server_ts, stream_ordering);
CREATE INDEX events_jump_to_date_idx ON events (room_id, origin_server_ts) WHERE NOT outlier;
CREATE INDEX received_ts_idx ON events (received_ts) WHERE type = 'm.room.member';

CREATE TABLE event_json (
    event_id text NOT NULL,
    room_id text NOT NULL,
    internal_metadata text NOT NULL,
    json text NOT NULL,
    format_version integer
);
ALTER TABLE ONLY event_json ADD CONSTRAINT event_json_event_id_key UNIQUE (event_id);

CREATE TABLE rooms (
    room_id text NOT NULL,
    is_public boolean,
    creator text,
    room_version text,
    has_auth_chain_index boolean
);
ALTER TABLE ONLY rooms ADD CONSTRAINT rooms_pkey PRIMARY KEY (room_id);
CREATE INDEX public_room_index ON rooms USING btree (is_public);

CREATE TABLE rejections (
    event_id text NOT NULL,
    reason text NOT NULL,
    last_check text NOT NULL
);
ALTER TABLE ONLY rejections ADD CONSTRAINT rejections_event_id_key UNIQUE (event_id);

CREATE TABLE current_state_events (
    event_id text NOT NULL,
    room_id text NOT NULL,
    type text NOT NULL,
    state_key text NOT NULL,
    membership text
);
ALTER TABLE ONLY current_state_events ADD CONSTRAINT current_state_events_event_id_key UNIQUE (event_id);
ALTER TABLE ONLY current_state_events ADD CONSTRAINT current_state_events_room_id_type_state_key_key UNIQUE (room_id, type, state_key);
CREATE INDEX current_state_events_member_index ON current_state_events USING btree (state_key) WHERE (type = 'm.room.member'::text);
ALTER TABLE current_state_events ADD COLUMN event_stream_ordering BIGINT;
ALTER TABLE current_state_events ADD CONSTRAINT event_stream_ordering_fkey FOREIGN KEY (event_stream_ordering) REFERENCES events(stream_ordering) NOT VALID;
CREATE INDEX current_state_events_stream_ordering_idx ON current_state_events (event_stream_ordering);
CREATE INDEX current_state_events_members_room_index ON current_state_events (room_id, membership) WHERE type='m.room.member';

CREATE TABLE device_inbox (
    user_id text NOT NULL,
    device_id text NOT NULL,
    stream_id bigint NOT NULL,
    message_json text NOT NULL,
    instance_name text
);
CREATE INDEX device_inbox_stream_id_user_id ON device_inbox USING btree (stream_id, user_id);
CREATE INDEX device_inbox_user_stream_id ON device_inbox USING btree (user_id, device_id, stream_id);
