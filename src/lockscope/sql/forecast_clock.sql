-- /* lockscope */ The server's clock now (the start of an interval, compared with pg_stat_activity.state_change).
SELECT /* lockscope */ pg_catalog.clock_timestamp() AS now
