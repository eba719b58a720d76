-- Objects for the statement shapes of tests/test_acquisition_order.py SHAPES: a schema off the search_path, a
-- quoted mixed-case table, nested and security_barrier views, a UNION view, volatile and stable SQL functions, a
-- table with row-level security enabled (the owner is not subject to it).
create schema other;
create table other.things (id int primary key, owner int, label text);
create index on other.things (owner); create index on other.things (label);
create table "MixedCase" ("Id" int primary key, "Owner" int, v int);
create index on "MixedCase" ("Owner"); create index on "MixedCase" (v);
create view top_posts as select p.id, p.author, p.score from posts p where p.score > 5;
create view top_posts_t01 as select tp.id, tp.score, t.a from top_posts tp join t01 t on t.id = tp.author;
create view secure_posts with (security_barrier) as select id, author from posts where score > 1;
create view union_view as select id, a from t01 union all select id, a from t02;
create function vol_f(int) returns int language sql volatile as 'select $1';
create function stable_f(int) returns int language sql stable as 'select $1';
create table rules_t (id int primary key, v int);
create table rls_t (id int primary key, owner text, v int);
alter table rls_t enable row level security;
create rule rules_t_notify as on update to rules_t do also notify rules_t;
