-- The shared lock-table entries this backend holds outside the fast path, one row per locked object (a LOCK of
-- lock.c, keyed by its LOCKTAG), read after each statement of a migration lockscope runs on its own scratch server
-- (lockscope.migration). pg_lock_status() lists one row per mode held (lockfuncs.c pg_lock_status), so the modes one
-- object is held in are folded into one row: the table takes one entry per object, whatever the modes. The
-- function, not the pg_locks view: the view's own AccessShareLock would take a slot in the transaction measured.
SELECT locktype,
       relation::int8                                   AS relation_oid,
       array_agg(mode::text ORDER BY mode)              AS modes
FROM pg_catalog.pg_lock_status()
WHERE pid = pg_catalog.pg_backend_pid()
  AND granted
  AND NOT fastpath
-- xid has no ordering nor hash opclass on every major: the LOCKTAG fields grouped as text
GROUP BY locktype, database, relation, page, tuple, virtualxid::text, transactionid::text, classid, objid, objsubid
