-- DELETE of a referenced row: an ON DELETE CASCADE child and an ON DELETE SET NULL child, FK columns NOT indexed
create table author (id int primary key, name text not null);
create index author_name on author (name);
insert into author select g, 'a' || g from generate_series(1, 200) g;
create table book (id int primary key, author_id int not null references author on delete cascade, title text);
insert into book select g, 1 + g % 200, 't' || g from generate_series(1, 2000) g;
create table review (id int primary key, author_id int references author on delete set null, body text);
insert into review select g, 1 + g % 200, 'r' || g from generate_series(1, 2000) g;
-- transaction
-- params: 42
delete from author where id = $1;
