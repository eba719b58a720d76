-- internal/storage/entry.go:412-428 (Storage.SetEntriesStatus, marking one entry read): an UPDATE of a table
-- with 13 indexes (changed_at is indexed: not a HOT update); the entry is one generate.sql made read (id % 10 = 5),
-- so that the unread counts the other statements read stay the same at every point
-- example: e=12345 uid=12
\set k random(0, 23999)
\set e 10 * :k + 5
\set uid 1 + (((:e - 1) % 6000)) / 30
UPDATE
    entries
SET
    status='read',
    changed_at=now()
WHERE
    user_id=:uid AND
    id=ANY('{:e}');
