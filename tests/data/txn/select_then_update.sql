-- SELECT then UPDATE of the same table (11 relations with its 10 indexes): 22 pg_locks rows in 11 fast-path slots
create table wallet (id int primary key, owner text not null, balance int not null, a int, b int, c int, d int,
  e int, f int, g int);
create index wallet_owner on wallet (owner);
create index wallet_a on wallet (a);
create index wallet_b on wallet (b);
create index wallet_c on wallet (c);
create index wallet_d on wallet (d);
create index wallet_e on wallet (e);
create index wallet_f on wallet (f);
create index wallet_g on wallet (g);
create index wallet_balance on wallet (balance);
insert into wallet select g, 'o' || g, 100, g, g, g, g, g, g, g from generate_series(1, 500) g;
-- transaction
-- params: 9
select balance from wallet where id = $1;
-- params: 5, 9
update wallet set balance = balance - $1 where id = $2;
