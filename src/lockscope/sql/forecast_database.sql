-- /* lockscope */ The current database's OID (pg_locks.database of its relation locks, lock.h SET_LOCKTAG_RELATION)
-- and its client backends running a statement now, other than this session (the forecast's default clients).
SELECT d.oid::int8                                                     AS database_oid,
       (SELECT count(*)
          FROM pg_catalog.pg_stat_activity a
         WHERE a.datid = d.oid
           AND a.backend_type = 'client backend'
           AND a.state = 'active'
           AND a.pid <> pg_catalog.pg_backend_pid())::int              AS active_backends
  FROM pg_catalog.pg_database d
 WHERE d.datname = pg_catalog.current_database()
