-- /* lockscope */ The current database's transactions so far (pgstat_database.c: xact_commit + xact_rollback, counted at
-- each transaction's end and flushed by every backend at most once a second): read at both ends of an interval, its
-- delta is the interval's transactions, lockscope's own included. The database's OID comes from this session's own
-- pg_stat_get_activity row, not from pg_database (a shared catalog: its lock is never a fast-path one).
SELECT /* lockscope */ (pg_catalog.pg_stat_get_db_xact_commit(a.datid)
        + pg_catalog.pg_stat_get_db_xact_rollback(a.datid))::int8 AS transactions
FROM pg_catalog.pg_stat_get_activity(pg_catalog.pg_backend_pid()) a
