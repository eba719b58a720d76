\set id random(1, 50000)
select /* fcbench:join3 */ o.id, o.status, o.amount, c.name, c.email, i.sku, i.name, i.price from orders o join customers c on c.id = o.customer_id join items i on i.id = o.item_id where o.id = :id;
