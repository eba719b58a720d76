-- PG 13: pg_prepared_statements has no plan counters. The function behind the view, so that the read locks no
-- relation inside the probe transaction (the view's own AccessShareLock would take a fast-path slot).
SELECT NULL::int8 AS generic_plans, NULL::int8 AS custom_plans
FROM pg_catalog.pg_prepared_statement() WHERE name = %s
