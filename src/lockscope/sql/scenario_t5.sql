-- Seed scenario t: an unpartitioned table with 5 indexes (prepared "select from t": 6 locks, then 1).
create table t ();
create index on t ((1)); create index on t ((1)); create index on t ((1));
create index on t ((1)); create index on t ((1));
