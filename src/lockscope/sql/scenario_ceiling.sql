-- lab ceiling's tables on a scratch server (lab/ceiling.py): @pool@ one-table candidates cal_p1.. for the spilled
-- sets, partitioned parents with @fillers@ fillers each, cal_g@big@ (@big_parts@ partitions), two scanned parents with
-- an index, and cal_ix@big_ix@ with @big_indexes@ extra indexes.
DO $$
DECLARE parent text;
BEGIN
  FOR i IN 1..@pool@ LOOP EXECUTE format('CREATE TABLE cal_p%s (k int)', i); END LOOP;
  CREATE TABLE cal_g2 (k int) PARTITION BY LIST (k);
  CREATE TABLE cal_g2_1 PARTITION OF cal_g2 FOR VALUES IN (1);
  FOREACH parent IN ARRAY ARRAY['cal_g16', 'cal_gone', 'cal_gspread'] LOOP
    EXECUTE format('CREATE TABLE %s (k int) PARTITION BY LIST (k)', parent);
    FOR i IN 1..@fillers@ LOOP
      EXECUTE format('CREATE TABLE %s_%s PARTITION OF %s FOR VALUES IN (%s)', parent, i, parent, i);
    END LOOP;
  END LOOP;
  CREATE TABLE cal_ix1 (id int PRIMARY KEY, a int);
  CREATE TABLE cal_g@big@ (k int) PARTITION BY LIST (k);
  FOR i IN 1..@big_parts@ LOOP
    EXECUTE format('CREATE TABLE cal_g@big@_%s PARTITION OF cal_g@big@ FOR VALUES IN (%s)', i, i);
  END LOOP;
  FOREACH parent IN ARRAY ARRAY['cal_s2', 'cal_s@big@'] LOOP
    EXECUTE format('CREATE TABLE %s (k int, v int) PARTITION BY LIST (k)', parent);
    EXECUTE format('CREATE INDEX ON %s (v)', parent);
    FOR i IN 1..(CASE WHEN parent = 'cal_s2' THEN 1 ELSE @big_parts@ END) LOOP
      EXECUTE format('CREATE TABLE %s_%s PARTITION OF %s FOR VALUES IN (%s)', parent, i, parent, i);
      EXECUTE format('INSERT INTO %s SELECT %s, v FROM generate_series(1, 1000) v', parent, i);
    END LOOP;
    EXECUTE format('ANALYZE %s', parent);
  END LOOP;
  CREATE TABLE cal_ix@big_ix@ (id int PRIMARY KEY, a int);
  FOR i IN 1..@big_indexes@ LOOP
    EXECUTE format('CREATE INDEX cal_ix@big_ix@_%s ON cal_ix@big_ix@ (a)', i);
  END LOOP;
END $$;
