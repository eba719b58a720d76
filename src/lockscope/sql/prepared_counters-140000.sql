-- Plan counters of one prepared statement (PG 14+). The function behind pg_prepared_statements, so that the read
-- locks no relation inside the probe transaction (the view's own AccessShareLock would take a fast-path slot).
SELECT generic_plans, custom_plans FROM pg_catalog.pg_prepared_statement() WHERE name = %s
