\set a random(1, 1000)
select /* fcbench:agg_part */ kind, count(*), sum(value) from events where account_id = :a group by kind;
