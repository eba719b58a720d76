-- crates.io: the triggers of `versions` (touch the crate, count its versions in default_versions)
-- source: rust-lang/crates.io@57fa000662f511321daa61e6769f190ea0e80771, migrations/ (MIT OR Apache-2.0)
create table crates (id integer primary key, name varchar not null, updated_at timestamptz not null default now());
create table versions (id integer primary key, crate_id integer not null, num varchar not null,
  yanked boolean not null default false, created_at timestamptz not null default now(),
  updated_at timestamptz not null default now());
create table default_versions (crate_id integer primary key, version_id integer not null, num_versions integer);
insert into crates (id, name) select g, 'crate' || g from generate_series(1, 50) g;
insert into versions (id, crate_id, num) select g, 1 + g % 50, '1.0.' || g from generate_series(1, 200) g;
insert into default_versions select c, max(id), count(*) from versions, lateral (select crate_id) x(c) group by c;
-- migrations/20170801133919_touch_crates_when_versions_modified/up.sql
CREATE OR REPLACE FUNCTION touch_crate_on_version_modified() RETURNS trigger AS $$
BEGIN
  IF (
    TG_OP = 'INSERT' OR
    NEW.updated_at IS DISTINCT FROM OLD.updated_at
  ) THEN
    UPDATE crates SET updated_at = CURRENT_TIMESTAMP WHERE
      crates.id = NEW.crate_id;
  END IF;
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER touch_crate BEFORE INSERT OR UPDATE ON versions
  FOR EACH ROW EXECUTE PROCEDURE touch_crate_on_version_modified();
-- migrations/2025-02-11-163554_fix-num-versions-trigger/up.sql
CREATE OR REPLACE FUNCTION update_num_versions_from_versions() RETURNS TRIGGER AS $$
BEGIN
    IF (TG_OP = 'INSERT') THEN
        INSERT INTO default_versions (crate_id, version_id, num_versions)
        VALUES (NEW.crate_id, NEW.id, 1)
        ON CONFLICT (crate_id) DO UPDATE
        SET num_versions = default_versions.num_versions + 1;
        RETURN NEW;
    ELSIF (TG_OP = 'DELETE') THEN
        UPDATE default_versions
        SET num_versions = num_versions - 1
        WHERE crate_id = OLD.crate_id;
        RETURN OLD;
    END IF;
END
$$ LANGUAGE plpgsql;
-- migrations/2025-02-05-083109_add-num-versions-column/up.sql
CREATE TRIGGER trigger_update_num_versions_from_versions
     AFTER INSERT OR DELETE ON versions
     FOR EACH ROW
     EXECUTE PROCEDURE update_num_versions_from_versions();
-- event: insert into versions (id, crate_id, num) values (500, 3, '2.0.0');
-- runs: touch_crate_on_version_modified:7 update_num_versions_from_versions:4
-- event: update versions set updated_at = now() + interval '1 s' where id = 10;
-- runs: touch_crate_on_version_modified:7
-- event: update versions set yanked = true where id = 11;
-- runs:
-- event: delete from versions where id = 12;
-- runs: update_num_versions_from_versions:10
