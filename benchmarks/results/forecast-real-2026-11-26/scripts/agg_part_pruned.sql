\set d random(0, 31)
\set a random(1, 1000)
select /* fcbench:agg_part_pruned */ kind, count(*), sum(value) from events where day = date '2025-01-01' + cast(:d as int) and account_id = :a group by kind;
