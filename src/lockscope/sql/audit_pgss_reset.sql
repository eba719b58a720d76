-- lockscope audit: when pg_stat_statements was last reset (pg_stat_statements_info, extension 1.9 / PG 14+).
SELECT /* lockscope */ stats_reset FROM @schema@.pg_stat_statements_info
