-- INSERT ... ON CONFLICT DO UPDATE on an existing key (arbiter index inferred; 3 indexes)
create table kv (k int primary key, v text, tag int, hits int not null default 0);
create unique index kv_tag on kv (tag);
create index kv_v on kv (v);
insert into kv select g, 'v' || g, g from generate_series(1, 1000) g;
-- transaction
-- params: 7, 'x'
insert into kv (k, v) values ($1, $2) on conflict (k) do update set hits = kv.hits + 1;
