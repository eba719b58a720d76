\set lo random(1, 1000)
select /* fcbench:count50k */ count(*) from orders where amount >= :lo;
