-- Five key lookups on five tables (6 locks each when planned): each fits the fast path alone, together they spill
create table look1 (id int primary key, a int, b int, c int, d int, e int);
create index look1_a on look1 (a);
create index look1_b on look1 (b);
create index look1_c on look1 (c);
create index look1_d on look1 (d);
create index look1_e on look1 (e);
insert into look1 select g, g, g, g, g, g from generate_series(1, 500) g;
create table look2 (id int primary key, a int, b int, c int, d int, e int);
create index look2_a on look2 (a);
create index look2_b on look2 (b);
create index look2_c on look2 (c);
create index look2_d on look2 (d);
create index look2_e on look2 (e);
insert into look2 select g, g, g, g, g, g from generate_series(1, 500) g;
create table look3 (id int primary key, a int, b int, c int, d int, e int);
create index look3_a on look3 (a);
create index look3_b on look3 (b);
create index look3_c on look3 (c);
create index look3_d on look3 (d);
create index look3_e on look3 (e);
insert into look3 select g, g, g, g, g, g from generate_series(1, 500) g;
create table look4 (id int primary key, a int, b int, c int, d int, e int);
create index look4_a on look4 (a);
create index look4_b on look4 (b);
create index look4_c on look4 (c);
create index look4_d on look4 (d);
create index look4_e on look4 (e);
insert into look4 select g, g, g, g, g, g from generate_series(1, 500) g;
create table look5 (id int primary key, a int, b int, c int, d int, e int);
create index look5_a on look5 (a);
create index look5_b on look5 (b);
create index look5_c on look5 (c);
create index look5_d on look5 (d);
create index look5_e on look5 (e);
insert into look5 select g, g, g, g, g, g from generate_series(1, 500) g;
-- transaction
-- params: 10
select a from look1 where id = $1;
-- params: 20
select a from look2 where id = $1;
-- params: 30
select a from look3 where id = $1;
-- params: 40
select a from look4 where id = $1;
-- params: 50
select a from look5 where id = $1;
