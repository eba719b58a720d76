-- Tables of the seed experiments (/work/shared/seeds) besides t and events (lockscope's own scenario_t5 and
-- scenario_events scripts, loaded first): Franck Pachot's payments_part (hash-partitioned; 4 partitions here, 100
-- there) and pgbench's tables as pgbench -i creates them (the postgresmarathon runs use pgbench -S and -M prepared).
CREATE TABLE payments_part (
       primary key (payment_id)
     , payment_id bigint generated always as identity (cache 1000)
     , created timestamptz not null default now()
     , account_id bigint not null
     , amount decimal(10,2) not null
) partition by hash (payment_id);
create table payments_001 partition of payments_part for values with (modulus 4, remainder 0);
create table payments_002 partition of payments_part for values with (modulus 4, remainder 1);
create table payments_003 partition of payments_part for values with (modulus 4, remainder 2);
create table payments_004 partition of payments_part for values with (modulus 4, remainder 3);
create index payments_by_account_part on payments_part(account_id, amount desc);
create table pgbench_accounts (aid int not null primary key, bid int, abalance int, filler char(84));
create table pgbench_branches (bid int not null primary key, bbalance int, filler char(88));
create table pgbench_tellers (tid int not null primary key, bid int, tbalance int, filler char(84));
create table pgbench_history (tid int, bid int, aid int, delta int, mtime timestamp, filler char(22));
