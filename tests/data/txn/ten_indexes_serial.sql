-- INSERT into a table with 10 indexes and a serial (the executor's index locks are released at statement end)
create table wide (id serial primary key, a int, b int, c int, d int, e int, f int, g int, h int, k text);
create index wide_a on wide (a);
create index wide_b on wide (b);
create index wide_c on wide (c);
create index wide_d on wide (d);
create index wide_e on wide (e);
create index wide_f on wide (f);
create index wide_g on wide (g);
create index wide_h on wide (h);
create index wide_k on wide (k);
insert into wide (a, b, c, d, e, f, g, h, k) select g, g, g, g, g, g, g, g, 'k' || g from generate_series(1, 1000) g;
-- transaction
-- params: 1, 2, 3, 4, 5, 6, 7, 8, 'x'
insert into wide (a, b, c, d, e, f, g, h, k) values ($1, $2, $3, $4, $5, $6, $7, $8, $9);
