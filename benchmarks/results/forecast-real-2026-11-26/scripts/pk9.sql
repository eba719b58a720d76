\set id random(1, 5000)
select /* fcbench:pk9 */ * from customers where id = :id;
