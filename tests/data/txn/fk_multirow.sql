-- A multi-row INSERT (8 rows) with an FK to a LIST-partitioned table (40 partitions): one RI check per row
create table tenant_seg (tenant int not null, id int not null, label text, primary key (tenant, id))
  partition by list (tenant);
do $$ begin
  for g in 0..39 loop
    execute format('create table tenant_seg_%s partition of tenant_seg for values in (%s)', g, g);
  end loop;
end $$;
insert into tenant_seg select g % 40, g, 'seg ' || g from generate_series(1, 4000) g;
create table seg_link (id bigserial primary key, tenant int not null, seg_id int not null,
  foreign key (tenant, seg_id) references tenant_seg (tenant, id));
-- transaction
-- params: 1, 41, 2, 42, 3, 43, 4, 44, 5, 45, 6, 46, 7, 47, 8, 48
insert into seg_link (tenant, seg_id) values ($1, $2), ($3, $4), ($5, $6), ($7, $8), ($9, $10), ($11, $12), ($13, $14), ($15, $16);
