-- A statement-level AFTER INSERT trigger updating a counter table
create table hit (id int primary key, at timestamptz not null default now());
create table hit_stats (name text primary key, n bigint not null);
insert into hit_stats values ('hit', 0);
create function hit_count() returns trigger language plpgsql as $$
begin
  update hit_stats set n = n + 1 where name = tg_table_name;
  return null;
end $$;
create trigger hit_count after insert on hit for each statement execute function hit_count();
-- transaction
-- params: 1
insert into hit (id) values ($1);
