-- INSERT routed into a sub-partitioned table: RANGE by year (3), each LIST by kind (4); a primary key and an index
create table sale (yr int not null, kind text not null, id int not null, amount int,
  primary key (yr, kind, id)) partition by range (yr);
create index sale_amount on sale (amount);
do $$ begin
  for y in 2024..2026 loop
    execute format('create table sale_%s partition of sale for values from (%s) to (%s) partition by list (kind)',
                   y, y, y + 1);
    for k in 1..4 loop
      execute format('create table sale_%s_k%s partition of sale_%s for values in (%L)', y, k, y, 'k' || k);
    end loop;
  end loop;
end $$;
insert into sale select 2024 + g % 3, 'k' || (1 + g % 4), g, g from generate_series(1, 1200) g;
-- transaction
-- params: 2025, 'k2', 100000, 10
insert into sale (yr, kind, id, amount) values ($1, $2, $3, $4);
