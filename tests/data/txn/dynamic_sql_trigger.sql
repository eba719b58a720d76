-- A trigger whose function runs dynamic SQL (EXECUTE format(...)) on a table named by its argument
create table post (id int primary key, board int not null, title text);
create table board_count (board int primary key, n int not null);
create index board_count_n on board_count (n);
insert into board_count select g, 0 from generate_series(1, 50) g;
create function bump() returns trigger language plpgsql as $$
begin
  execute format('update %I set n = n + 1 where board = $1', tg_argv[0]) using new.board;
  return new;
end $$;
create trigger post_bump after insert on post for each row execute function bump('board_count');
-- transaction
-- params: 1, 7, 'hello'
insert into post (id, board, title) values ($1, $2, $3);
