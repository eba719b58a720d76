/*
 * lockscope_locktag.c -- test-only PostgreSQL extension: the server's own lock-partition hash of a relation lock.
 *
 * Used by tests/test_lockpart.py to check lockscope.lockpart (a client-side reimplementation) against the
 * running server. Builds with PGXS (see Makefile) against PostgreSQL 13 and later.
 *
 *   lockscope_locktag_hash(dboid oid, reloid oid) returns int8
 *       LockTagHashCode() (storage/lmgr/lock.c) of the LOCKTAG that SET_LOCKTAG_RELATION (storage/lock.h)
 *       fills for a relation lock, as an unsigned 32-bit value (0 .. 4294967295).
 *   lockscope_locktag_partition(dboid oid, reloid oid) returns int4
 *       LockHashPartition() of that hash code: the main-lock-table partition (0 .. NUM_LOCK_PARTITIONS - 1).
 *
 * Both functions are pure computations: they take no lock and read no shared state.
 */
#include "postgres.h"

#include "fmgr.h"
#include "storage/lock.h"
#include "storage/lwlock.h"

PG_MODULE_MAGIC;

PG_FUNCTION_INFO_V1(lockscope_locktag_hash);
PG_FUNCTION_INFO_V1(lockscope_locktag_partition);

static uint32
relation_tag_hash(Oid dboid, Oid reloid)
{
	LOCKTAG		tag;

	/* zero the whole struct first so that no padding byte can differ between calls */
	memset(&tag, 0, sizeof(tag));
	SET_LOCKTAG_RELATION(tag, dboid, reloid);
	return LockTagHashCode(&tag);
}

Datum
lockscope_locktag_hash(PG_FUNCTION_ARGS)
{
	Oid			dboid = PG_GETARG_OID(0);
	Oid			reloid = PG_GETARG_OID(1);

	PG_RETURN_INT64((int64) relation_tag_hash(dboid, reloid));
}

Datum
lockscope_locktag_partition(PG_FUNCTION_ARGS)
{
	Oid			dboid = PG_GETARG_OID(0);
	Oid			reloid = PG_GETARG_OID(1);

	PG_RETURN_INT32((int32) LockHashPartition(relation_tag_hash(dboid, reloid)));
}
