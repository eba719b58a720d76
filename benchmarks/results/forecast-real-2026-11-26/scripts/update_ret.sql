\set id random(1, 50000)
update /* fcbench:update_ret */ orders set amount = amount + 1, note = 'updated' where id = :id returning id, amount, status;
