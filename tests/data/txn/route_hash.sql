-- INSERT routed into a HASH-partitioned table (8 partitions with a primary key and a secondary index)
create table acc (id bigint primary key, owner int not null, note text) partition by hash (id);
create index acc_owner on acc (owner);
do $$ begin
  for r in 0..7 loop
    execute format('create table acc_%s partition of acc for values with (modulus 8, remainder %s)', r, r);
  end loop;
end $$;
insert into acc select g, g % 50, 'n' from generate_series(1, 800) g;
-- transaction
-- params: 100000, 7
insert into acc (id, owner) values ($1, $2);
