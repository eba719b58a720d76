-- Seed scenario p40: 40 range partitions x 1 index (k = 150 prunes at plan time, k = (select 150) does not).
create table p40 (k int, v text) partition by range (k);
do $$ begin
  for i in 0..39 loop
    execute format('create table p40_%s partition of p40 for values from (%s) to (%s)', i, i * 10, i * 10 + 10);
  end loop;
end $$;
create index on p40 (k);
