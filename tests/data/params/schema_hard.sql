-- Tables, types and functions for hard.sql (hand-made for lockscope's tests): columns of many types, an enum, a
-- domain, and overloaded, polymorphic, defaulted and variadic functions.
create table ev (id bigint primary key, event_time timestamptz, name text, tags text[], data jsonb, n int, price numeric);
create table acct (id int primary key, owner text not null, balance int not null default 0, tags text[], meta jsonb,
                   created timestamptz, d date, amount numeric(10,2), v varchar(20), flag boolean, ch char(3),
                   iv interval, big bigint, sm smallint, f4 real, ip inet, u uuid, arr int[]);
create type mood as enum ('sad', 'ok', 'happy');
create table person (id serial primary key, name text, current_mood mood, acct_id int references acct (id));
create domain posint as int check (value > 0);
create table dom (id posint primary key, label text);
create function f_over(int) returns int language sql as 'select 1';
create function f_over(text) returns int language sql as 'select 2';
create function f_poly(anyelement, anyelement) returns anyelement language sql as 'select $1';
create function f_def(a int, b int default 2) returns int language sql as 'select a + b';
create function f_def(a int) returns int language sql as 'select a';
create function f_var(variadic int[]) returns int language sql as 'select 1';
create function f_num(numeric) returns int language sql as 'select 1';
create function f_num(float8) returns int language sql as 'select 2';
create function f_dt(date) returns int language sql as 'select 1';
create function f_dt(timestamptz) returns int language sql as 'select 2';
create schema other;
create function other.f_over(bigint) returns int language sql as 'select 3';
create table other.acct (id bigint primary key, owner varchar(10));
