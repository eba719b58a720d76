-- INSERT into a table whose key is an identity column (GENERATED ALWAYS AS IDENTITY) with one more index
create table ticket (id bigint generated always as identity primary key, subject text not null, prio int);
create index ticket_prio on ticket (prio);
insert into ticket (subject, prio) select 's' || g, g % 5 from generate_series(1, 500) g;
-- transaction
-- params: 'help', 3
insert into ticket (subject, prio) values ($1, $2);
