-- INSERT routed into a LIST-partitioned table (8 partitions with a primary key and a secondary index)
create table ev (region text not null, id int not null, kind int, primary key (region, id)) partition by list (region);
create index ev_kind on ev (kind);
do $$ begin
  for r in 1..8 loop
    execute format('create table ev_r%s partition of ev for values in (%L)', r, 'r' || r);
  end loop;
end $$;
insert into ev select 'r' || (1 + g % 8), g, g % 10 from generate_series(1, 800) g;
-- transaction
-- params: 'r3', 100000, 7
insert into ev (region, id, kind) values ($1, $2, $3);
