-- FK to a plain table with 2 extra indexes (the RI check plans against every index of the referenced table)
create table acct (id int primary key, owner text not null, email text not null, balance int not null default 0);
create index acct_owner on acct (owner);
create unique index acct_email on acct (email);
insert into acct select g, 'o' || g, 'e' || g || '@x' from generate_series(1, 1000) g;
create table payment (id bigserial primary key, acct_id int not null references acct, amount int not null);
-- transaction
-- params: 17, 100
insert into payment (acct_id, amount) values ($1, $2);
