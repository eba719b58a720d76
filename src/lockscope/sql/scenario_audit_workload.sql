\set id random(1, 2000)
\set d random(0, 59)
\set k random(0, 399)
select * from orders where id = :id;
update orders set updated_at = now() where id = :id;
select * from metrics where day = :d and device = 3;
select count(*) from metrics where device = :d;
select * from p40 where k = :k;
select * from p40 where k = (select :k::int);
select * from customers where id = :k;
