-- A checkout: a lookup, an order inserted, a line referencing it (a foreign key checked against the row the
-- transaction just inserted), the order updated; the order table has 18 indexes (each statement fits or nearly
-- fits 16 slots alone, the transaction spills 16 locks)
create table customers (id bigint primary key, name text);
insert into customers select g, 'c' || g from generate_series(1, 100) g;
create table orders (id bigint primary key, customer_id bigint not null, status text not null,
                     created_at timestamptz not null default now());
create index orders_customer on orders (customer_id);
create index orders_status on orders (status);
create index orders_created on orders (created_at);
do $$ begin
  for i in 1..14 loop
    execute format('create index orders_x%s on orders (customer_id, id) where id > %s', i, i);
  end loop;
end $$;
insert into orders (id, customer_id, status) select g, g % 100, 'open' from generate_series(1000, 1500) g;
create table order_lines (id bigserial primary key, order_id bigint not null references orders (id), qty int);
create index on order_lines (order_id);
-- transaction
-- params: 7
select * from customers where id = $1;
-- params: 42, 7
insert into orders (id, customer_id, status) values ($1, $2, 'open');
-- params: 42, 3
insert into order_lines (order_id, qty) values ($1, $2);
-- params: 42
update orders set status = 'paid' where id = $1;
