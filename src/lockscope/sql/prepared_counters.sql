-- PG 13: pg_prepared_statements has no plan counters.
SELECT NULL::int8 AS generic_plans, NULL::int8 AS custom_plans
FROM pg_catalog.pg_prepared_statements WHERE name = %s
