-- FK to a LIST-partitioned table (40 partitions): the seg_link shape of issue 25
-- include: tenant_seg.ddl
-- transaction
-- params: 7, 47
insert into seg_link (tenant, seg_id) values ($1, $2);
