-- Five key lookups on five tables (7 locks each when planned): each fits the fast path alone, together they spill
do $$ begin
  for t in 1..5 loop
    execute format('create table look%s (id int primary key, a int, b int, c int, d int, e int)', t);
    execute format('create index look%1$s_a on look%1$s (a); create index look%1$s_b on look%1$s (b); '
                   'create index look%1$s_c on look%1$s (c); create index look%1$s_d on look%1$s (d); '
                   'create index look%1$s_e on look%1$s (e)', t);
    execute format('insert into look%s select g, g, g, g, g, g from generate_series(1, 500) g', t);
  end loop;
end $$;
-- transaction
-- params: 10
select a from look1 where id = $1;
-- params: 20
select a from look2 where id = $1;
-- params: 30
select a from look3 where id = $1;
-- params: 40
select a from look4 where id = $1;
-- params: 50
select a from look5 where id = $1;
