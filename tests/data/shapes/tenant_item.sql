-- Issue 37's shapes: partitioned tables with foreign keys, cascades, routing, upserts, MERGE.
-- tenant1 <- item1 (40-partition LIST, ON DELETE CASCADE): one level of cascade.
-- tenant <- item (40-partition LIST, ON DELETE CASCADE) <- sub (8-partition HASH, ON DELETE CASCADE): two levels.
-- item_5 has an AFTER ROW trigger inserting into audit_log (a serial): a routed INSERT fires it.
create table tenant1 (id int primary key, name text not null);
insert into tenant1 select g, 't' || g from generate_series(0, 39) g;
create table item1 (tenant_id int not null references tenant1 on delete cascade, id int not null, v text,
                    primary key (tenant_id, id)) partition by list (tenant_id);
do $$ begin for i in 0..39 loop
  execute format('create table item1_%s partition of item1 for values in (%s)', i, i);
end loop; end $$;
insert into item1 select t, g, 'x' from generate_series(0, 39) t, generate_series(1, 3) g;

create table tenant (id int primary key, name text not null);
insert into tenant select g, 't' || g from generate_series(0, 39) g;
create table item (tenant_id int not null references tenant on delete cascade, id int not null, v text,
                   primary key (tenant_id, id)) partition by list (tenant_id);
do $$ begin for i in 0..39 loop
  execute format('create table item_%s partition of item for values in (%s)', i, i);
end loop; end $$;
insert into item select t, g, 'x' from generate_series(0, 39) t, generate_series(1, 3) g;
create table sub (tenant_id int not null, item_id int not null, n int not null, primary key (tenant_id, item_id, n),
                  foreign key (tenant_id, item_id) references item on delete cascade) partition by hash (item_id);
do $$ begin for i in 0..7 loop
  execute format('create table sub_%s partition of sub for values with (modulus 8, remainder %s)', i, i);
end loop; end $$;
insert into sub select t, g, n from generate_series(0, 39) t, generate_series(1, 2) g, generate_series(1, 2) n;

create table audit_log (id bigserial primary key, tenant_id int, item_id int, at timestamptz default now());
create function item_audit() returns trigger language plpgsql as $$
begin
  insert into audit_log (tenant_id, item_id) values (new.tenant_id, new.id);
  return null;
end $$;
create trigger item_5_audit after insert on item_5 for each row execute function item_audit();
analyze;
