-- Plan counters of one prepared statement (PG 14+).
SELECT generic_plans, custom_plans FROM pg_catalog.pg_prepared_statements WHERE name = %s
