-- UPDATE of a referenced key, ON UPDATE NO ACTION (the child's FK column indexed)
-- include: dept.ddl
create table emp (id int primary key, dept_code int references dept (code), name text);
create index emp_dept on emp (dept_code);
insert into emp select g, 1000 + 1 + 2 * (g % 50), 'e' || g from generate_series(1, 1000) g;
-- transaction
-- params: 5000, 2
update dept set code = $1 where id = $2;
