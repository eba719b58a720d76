-- Server facts lockscope needs (one row). PG 13+; settings missing in a version come back via missing_ok.
SELECT current_setting('server_version_num')::int                      AS server_version_num,
       split_part(current_setting('server_version'), ' ', 1)           AS server_version,
       current_database()                                              AS database,
       current_setting('max_locks_per_transaction')::int               AS max_locks_per_transaction,
       current_setting('max_connections')::int                         AS max_connections,
       current_setting('max_prepared_transactions')::int               AS max_prepared_transactions,
       coalesce(current_setting('autovacuum_worker_slots', true),
                current_setting('autovacuum_max_workers'))::int        AS autovacuum_workers,
       current_setting('max_worker_processes')::int                    AS max_worker_processes,
       current_setting('max_wal_senders')::int                         AS max_wal_senders,
       current_setting('plan_cache_mode')                              AS plan_cache_mode,
       pg_is_in_recovery()                                             AS in_recovery,
       'pg_catalog.pg_locks'::regclass::oid::int8                      AS pg_locks_oid,
       -- a managed service, by a setting only it defines (lockscope.services): its fixes use its own interface
       CASE WHEN current_setting('rds.extensions', true) IS NOT NULL THEN 'rds'
            WHEN current_setting('cloudsql.iam_authentication', true) IS NOT NULL THEN 'cloudsql'
            WHEN current_setting('azure.extensions', true) IS NOT NULL THEN 'azure'
            ELSE '' END                                                AS managed_service,
       -- the session rules lockscope sends in the connection's options (db.connect), as the server holds them
       -- (Session checks them): a pooler that drops the options (PgBouncer's ignore_startup_parameters) leaves
       -- them unset
       (SELECT setting FROM pg_catalog.pg_settings WHERE name = 'statement_timeout')::int8 AS statement_timeout_ms,
       (SELECT setting FROM pg_catalog.pg_settings WHERE name = 'lock_timeout')::int8      AS lock_timeout_ms,
       current_setting('default_transaction_read_only')                AS default_transaction_read_only
