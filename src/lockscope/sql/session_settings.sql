-- The session rules lockscope sends in the connection's options (db.connect), as the server holds them: a
-- connection pooler that drops the options (PgBouncer's ignore_startup_parameters = options) leaves them unset.
SELECT (SELECT setting FROM pg_catalog.pg_settings WHERE name = 'statement_timeout')::int8 AS statement_timeout_ms,
       (SELECT setting FROM pg_catalog.pg_settings WHERE name = 'lock_timeout')::int8      AS lock_timeout_ms,
       current_setting('default_transaction_read_only')                                   AS default_transaction_read_only
