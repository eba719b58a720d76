-- FK to a LIST-partitioned table (40 partitions) with plan_cache_mode = force_custom_plan: the RI check's plans too
-- set: plan_cache_mode = force_custom_plan
-- include: tenant_seg.ddl
-- transaction
-- params: 7, 47
insert into seg_link (tenant, seg_id) values ($1, $2);
