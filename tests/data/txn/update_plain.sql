-- UPDATE by key of a plain table with 3 indexes (a non-indexed column: HOT)
create table stock (id int primary key, sku text not null, loc int not null, qty int not null);
create unique index stock_sku on stock (sku);
create index stock_loc on stock (loc);
insert into stock select g, 's' || g, g % 10, 0 from generate_series(1, 1000) g;
-- transaction
-- params: 4, 77
update stock set qty = qty + $1 where id = $2;
