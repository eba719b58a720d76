-- An AFTER ROW trigger inserting into an audit table (bigserial, 2 indexes) on UPDATE
create table item (id int primary key, name text not null, qty int not null);
insert into item select g, 'i' || g, g from generate_series(1, 500) g;
create table item_audit (id bigserial primary key, item_id int not null, old_qty int, new_qty int,
  at timestamptz not null default now());
create index item_audit_item on item_audit (item_id);
create function item_audit() returns trigger language plpgsql as $$
begin
  insert into item_audit (item_id, old_qty, new_qty) values (new.id, old.qty, new.qty);
  return null;
end $$;
create trigger item_audit after update on item for each row execute function item_audit();
-- transaction
-- params: 5, 9
update item set qty = qty + $1 where id = $2;
