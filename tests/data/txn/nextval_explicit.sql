-- An explicit nextval('s') in VALUES (the sequence is a constant of the statement, locked only when it runs)
create sequence note_seq;
create table note (id bigint primary key, body text);
-- transaction
-- params: 'hello'
insert into note (id, body) values (nextval('note_seq'), $1);
