-- issue 24: the 5-index table t of postgresmarathon 2-008 (lockscope's scenario_t5); PREPARE types $1 as integer
select from t where $1 = 1
select from t
select from t where $1
select from t where $1::int = 1
-- postgresmarathon 2-009 .. 2-011 (the events table, 12 monthly partitions)
select event_id, event_data from events where event_time = $1
select * from events where event_time = $1
select count(*) from events where event_time between $1 and $2
select event_id from events where event_time >= $1 and event_time < $1 + interval '1 month'
select event_id from events where event_time = $1 and event_data = $2
-- Franck Pachot's query.sql, pgbench -M prepared (:id becomes $1)
select max(amount) from payments_part where account_id = $1
-- pgbench's built-in scripts as pgbench -M prepared sends them (tpcb-like, simple-update, select-only)
UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2
SELECT abalance FROM pgbench_accounts WHERE aid = $1
UPDATE pgbench_tellers SET tbalance = tbalance + $1 WHERE tid = $2
UPDATE pgbench_branches SET bbalance = bbalance + $1 WHERE bid = $2
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES ($1, $2, $3, $4, CURRENT_TIMESTAMP)
