-- crates.io: counter caches of `crates_categories` (the category's crate count, the crate's updated_at)
-- source: rust-lang/crates.io@57fa000662f511321daa61e6769f190ea0e80771, migrations/ (MIT OR Apache-2.0)
create table crates (id integer primary key, name varchar not null, updated_at timestamptz not null default now());
create table categories (id integer primary key, category varchar not null, crates_cnt integer not null default 0);
create table crates_categories (crate_id integer not null, category_id integer not null,
  primary key (crate_id, category_id));
insert into crates (id, name) select g, 'crate' || g from generate_series(1, 50) g;
insert into categories (id, category) select g, 'cat' || g from generate_series(1, 10) g;
insert into crates_categories select g, 1 + g % 10 from generate_series(1, 50) g;
-- migrations/20160219125609_dumped_migration_105/up.sql
                CREATE OR REPLACE FUNCTION touch_crate() RETURNS trigger AS $$
                BEGIN
                    IF TG_OP = 'DELETE' THEN
                        UPDATE crates SET updated_at = CURRENT_TIMESTAMP WHERE
                            id = OLD.crate_id;
                        RETURN OLD;
                    ELSE
                        UPDATE crates SET updated_at = CURRENT_TIMESTAMP WHERE
                            id = NEW.crate_id;
                        RETURN NEW;
                    END IF;
                END
                $$ LANGUAGE plpgsql;
-- migrations/20161115111957_dumped_migration_119/up.sql
CREATE FUNCTION update_categories_crates_cnt() RETURNS trigger AS $$ BEGIN IF (TG_OP = 'INSERT') THEN UPDATE categories SET crates_cnt = crates_cnt + 1 WHERE id = NEW.category_id; return NEW; ELSIF (TG_OP = 'DELETE') THEN UPDATE categories SET crates_cnt = crates_cnt - 1 WHERE id = OLD.category_id; return OLD; END IF; END $$ LANGUAGE plpgsql; CREATE TRIGGER trigger_update_categories_crates_cnt BEFORE INSERT OR DELETE ON crates_categories FOR EACH ROW EXECUTE PROCEDURE update_categories_crates_cnt(); CREATE TRIGGER touch_crate_on_modify_categories AFTER INSERT OR DELETE ON crates_categories FOR EACH ROW EXECUTE PROCEDURE touch_crate();
-- event: insert into crates_categories values (3, 7);
-- runs: update_categories_crates_cnt:1 touch_crate:8
-- event: delete from crates_categories where crate_id = 5;
-- runs: update_categories_crates_cnt:1 touch_crate:4
