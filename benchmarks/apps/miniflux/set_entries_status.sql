-- internal/storage/entry.go:412-428 (Storage.SetEntriesStatus, marking one entry read): an UPDATE of a table
-- with 13 indexes (status is indexed: not a HOT update)
-- example: e=12345 uid=23
\set e random(1, 240000)
\set uid 1 + (((:e - 1) % 6000)) / 30
UPDATE
    entries
SET
    status='read',
    changed_at=now()
WHERE
    user_id=:uid AND
    id=ANY('{:e}');
