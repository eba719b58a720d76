\set id random(1, 50000)
select /* fcbench:join2 */ o.id, o.status, o.amount, o.created_at, c.name, c.email, c.country from orders o join customers c on c.id = o.customer_id where o.id = :id;
