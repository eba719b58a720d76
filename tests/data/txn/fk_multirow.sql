-- A multi-row INSERT (8 rows) with an FK to a LIST-partitioned table (40 partitions): one RI check per row
-- include: tenant_seg.ddl
-- transaction
-- params: 1, 41, 2, 42, 3, 43, 4, 44, 5, 45, 6, 46, 7, 47, 8, 48
insert into seg_link (tenant, seg_id) values ($1, $2), ($3, $4), ($5, $6), ($7, $8), ($9, $10), ($11, $12), ($13, $14), ($15, $16);
