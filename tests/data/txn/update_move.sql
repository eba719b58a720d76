-- UPDATE moving a row to another partition (LIST by status, 4 partitions with a primary key and an index)
create table job (status text not null, id int not null, owner int, primary key (status, id)) partition by list (status);
create index job_owner on job (owner);
create table job_new partition of job for values in ('new');
create table job_run partition of job for values in ('run');
create table job_done partition of job for values in ('done');
create table job_fail partition of job for values in ('fail');
insert into job select (array['new', 'run', 'done', 'fail'])[1 + g % 4], g, g % 30 from generate_series(1, 800) g;
-- transaction
-- params: 'done', 'run', 5
update job set status = $1 where status = $2 and id = $3;
