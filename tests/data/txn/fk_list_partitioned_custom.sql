-- FK to a LIST-partitioned table (40 partitions) with plan_cache_mode = force_custom_plan: the RI check's plans too
-- set: plan_cache_mode = force_custom_plan
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
-- params: 7, 47
insert into seg_link (tenant, seg_id) values ($1, $2);
