-- lockscope's optional EXPLAIN helper (docs/privileges.md). A DBA creates it once per database, as a superuser (RDS:
-- rds_superuser; Cloud SQL: cloudsqlsuperuser; Azure: azure_pg_admin). lockscope never creates it.
--
-- It lets a monitoring role (here every member of pg_monitor) EXPLAIN statements on tables it may not read, as
-- pganalyze's collector does. It never runs a statement: it accepts only the EXPLAIN option lists lockscope sends
-- (never ANALYZE), one statement (no ';'), and only inside a READ ONLY transaction, so nothing can be written even
-- through a function the planner folds. Its EXPLAIN runs with the privileges of its owner, lockscope_explainer: a
-- role that cannot log in (pg_read_all_data and pg_write_all_data, PostgreSQL 14+; on 13, GRANT SELECT, INSERT,
-- UPDATE, DELETE on the application's tables to it instead). lockscope checks the owner's privileges in the catalog
-- before it uses the helper, and derives the footprint where they fall short. Do not make a superuser its owner: immutable functions a monitoring role
-- writes would be folded by the planner with the owner's rights.
--
-- psql -d yourdb -f contrib/explain_helper.sql     (undo: DROP SCHEMA lockscope CASCADE; DROP ROLE lockscope_explainer;)

CREATE ROLE lockscope_explainer NOLOGIN;
GRANT pg_read_all_data TO lockscope_explainer;
-- EXPLAIN of an INSERT, UPDATE, DELETE or MERGE checks the write privilege too (it still writes nothing: the function
-- refuses any transaction that is not READ ONLY). Leave this out and lockscope derives writes' footprints instead.
GRANT pg_write_all_data TO lockscope_explainer;
CREATE SCHEMA IF NOT EXISTS lockscope;
REVOKE ALL ON SCHEMA lockscope FROM PUBLIC;

CREATE FUNCTION lockscope.explain(options text, statement text) RETURNS SETOF json
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
AS $helper$
BEGIN
  IF options NOT IN ('FORMAT JSON', 'VERBOSE, FORMAT JSON', 'GENERIC_PLAN, FORMAT JSON', 'SUMMARY, FORMAT JSON',
                     'SUMMARY, VERBOSE, FORMAT JSON') THEN
    RAISE EXCEPTION 'lockscope.explain: EXPLAIN options "%" are not allowed', options;
  END IF;
  IF pg_catalog.strpos(statement, ';') > 0 THEN
    RAISE EXCEPTION 'lockscope.explain: one statement without '';'' only';
  END IF;
  IF pg_catalog.current_setting('transaction_read_only') <> 'on' THEN
    RAISE EXCEPTION 'lockscope.explain: only inside a READ ONLY transaction';
  END IF;
  RETURN QUERY EXECUTE pg_catalog.format('EXPLAIN (%s) %s', options, statement);
END
$helper$;

ALTER FUNCTION lockscope.explain(text, text) OWNER TO lockscope_explainer;
ALTER SCHEMA lockscope OWNER TO lockscope_explainer;
REVOKE ALL ON FUNCTION lockscope.explain(text, text) FROM PUBLIC;
GRANT USAGE ON SCHEMA lockscope TO pg_monitor;
GRANT EXECUTE ON FUNCTION lockscope.explain(text, text) TO pg_monitor;
