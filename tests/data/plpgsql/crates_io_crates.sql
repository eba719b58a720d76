-- crates.io: the four triggers of `crates` (search vector, updated_at, reserved names, the downloads row)
-- source: rust-lang/crates.io@57fa000662f511321daa61e6769f190ea0e80771, migrations/ (MIT OR Apache-2.0)
create table crates (id integer primary key, name varchar not null, description varchar, readme varchar,
  textsearchable_index_col tsvector not null default '', created_at timestamptz not null default now(),
  updated_at timestamptz not null default now());
create table keywords (id integer primary key, keyword text not null, crates_cnt integer not null default 0);
create table crates_keywords (crate_id integer not null, keyword_id integer not null,
  primary key (crate_id, keyword_id));
create table reserved_crate_names (name text primary key);
create table crate_downloads (crate_id integer primary key, downloads bigint not null default 0);
insert into crates (id, name) select g, 'crate' || g from generate_series(1, 50) g;
insert into keywords select g, 'kw' || g from generate_series(1, 20) g;
insert into crates_keywords select g, 1 + g % 20 from generate_series(1, 50) g;
insert into reserved_crate_names values ('core'), ('std'), ('alloc');
insert into crate_downloads (crate_id) select id from crates;
-- migrations/20150319224700_dumped_migration_93/up.sql
CREATE FUNCTION canon_crate_name(text) RETURNS text AS $$
                    SELECT replace(lower($1), '-', '_')
                $$ LANGUAGE SQL
            ;
-- migrations/20160219125609_dumped_migration_105/up.sql
                CREATE OR REPLACE FUNCTION trigger_crates_name_search() RETURNS trigger AS $$
                DECLARE kws TEXT;
                begin
                  SELECT array_to_string(array_agg(keyword), ',') INTO kws
                    FROM keywords INNER JOIN crates_keywords
                    ON keywords.id = crates_keywords.keyword_id
                    WHERE crates_keywords.crate_id = new.id;
                  new.textsearchable_index_col :=
                     setweight(to_tsvector('pg_catalog.english',
                                           coalesce(new.name, '')), 'A') ||
                     setweight(to_tsvector('pg_catalog.english',
                                           coalesce(kws, '')), 'B') ||
                     setweight(to_tsvector('pg_catalog.english',
                                           coalesce(new.description, '')), 'C') ||
                     setweight(to_tsvector('pg_catalog.english',
                                           coalesce(new.readme, '')), 'D');
                  return new;
                end
                $$ LANGUAGE plpgsql;
-- migrations/20170706165855_dont_touch_timestamps_unless_row_changed/up.sql
CREATE OR REPLACE FUNCTION set_updated_at() RETURNS trigger AS $$
BEGIN
    IF (
        NEW IS DISTINCT FROM OLD AND
        NEW.updated_at IS NOT DISTINCT FROM OLD.updated_at
    ) THEN
        NEW.updated_at = CURRENT_TIMESTAMP;
    END IF;
    RETURN NEW;
END
$$ LANGUAGE plpgsql;
-- migrations/20170305095748_create_reserved_crate_names/up.sql
CREATE FUNCTION ensure_crate_name_not_reserved() RETURNS trigger AS $$
BEGIN
    IF canon_crate_name(NEW.name) IN (
        SELECT canon_crate_name(name) FROM reserved_crate_names
    ) THEN
        RAISE EXCEPTION 'cannot upload crate with reserved name';
    END IF;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER trigger_ensure_crate_name_not_reserved
BEFORE INSERT OR UPDATE ON crates
FOR EACH ROW EXECUTE PROCEDURE ensure_crate_name_not_reserved();
-- migrations/2024-03-04-092044_crate-downloads-table/up.sql
create or replace function insert_crate_downloads_row() returns trigger as $$
begin
    insert into crate_downloads(crate_id) values (new.id);
    return new;
end;
$$ language plpgsql;

create trigger insert_crate_downloads_row
    after insert on crates
    for each row
execute function insert_crate_downloads_row();
-- migrations/2024-04-12-144026_change-crates-updated-at-trigger/up.sql
create trigger trigger_crates_set_updated_at
    before update
    on crates
    for each row
execute procedure set_updated_at();
-- migrations/2025-02-17-133723_timezones/up.sql
create trigger trigger_crates_tsvector_update
    before insert or update
        of updated_at
    on crates
    for each row
execute procedure trigger_crates_name_search();
-- event: insert into crates (id, name, description) values (100, 'serde-json', 'JSON');
-- runs: trigger_crates_name_search:4 ensure_crate_name_not_reserved:3 insert_crate_downloads_row:3
-- event: update crates set updated_at = now(), description = 'x' where id = 7;
-- runs: trigger_crates_name_search:4 ensure_crate_name_not_reserved:3
-- event: update crates set description = 'y' where id = 8;
-- runs: ensure_crate_name_not_reserved:3
