-- SELECT then UPDATE of the same table in one transaction: the second lock mode shares the relation's fast-path slot
create table wallet (id int primary key, owner text not null, balance int not null);
create index wallet_owner on wallet (owner);
insert into wallet select g, 'o' || g, 100 from generate_series(1, 500) g;
-- transaction
-- params: 9
select balance from wallet where id = $1;
-- params: 5, 9
update wallet set balance = balance - $1 where id = $2;
