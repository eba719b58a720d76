-- A TOAST-sized value written (about 64 kB after compression: the TOAST table and its index are written)
create table doc (id int primary key, body text);
-- transaction
-- params: 1
insert into doc (id, body) values ($1, (select string_agg(md5(g::text), '') from generate_series(1, 4000) g));
