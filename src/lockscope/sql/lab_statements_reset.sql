-- Forget pg_stat_statements counters before a lab point (not transactional: survives the rollback).
SELECT pg_stat_statements_reset() IS NULL AS reset
