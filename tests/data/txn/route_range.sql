-- INSERT routed into a RANGE-partitioned table (12 partitions, a primary key and a secondary index)
create table meas (id int not null, at date not null, v int, primary key (id, at)) partition by range (at);
create index meas_v on meas (v);
do $$ begin
  for m in 1..12 loop
    execute format('create table meas_%s partition of meas for values from (%L) to (%L)', m,
                   make_date(2026, m, 1), make_date(2026, m, 1) + interval '1 month');
  end loop;
end $$;
insert into meas select g, date '2026-01-01' + (g % 365), g from generate_series(1, 3650) g;
-- transaction
-- params: 100000, '2026-03-15', 5
insert into meas (id, at, v) values ($1, $2, $3);
