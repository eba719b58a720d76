-- The audit demo database beyond the seed scenarios (events, t, p40 are created first): pg_stat_statements,
-- rows in p40, customers, orders (primary key and 16 indexes, among them two duplicates and a redundant prefix),
-- metrics (60 range partitions x 2 indexes), then ANALYZE.
create extension if not exists pg_stat_statements;
insert into p40 select g % 400, 'v' || g from generate_series(1, 4000) g;
create table customers (id int primary key, email text not null, region text);
insert into customers select g, 'c' || g || '@example.com', 'r' || (g % 7) from generate_series(1, 500) g;
create table orders (id int primary key, customer_id int not null, status text not null,
                     created_at timestamptz not null,
                     updated_at timestamptz, total numeric, note text, region text, coupon text, email text);
insert into orders select g, 1 + g % 500, (array['new','paid','shipped','void'])[1 + g % 4],
       '2024-01-01'::timestamptz + g * interval '1 hour', null, g % 1000, 'n' || g, 'r' || (g % 7), null, null
from generate_series(1, 2000) g;
create index orders_customer_id on orders (customer_id);
create index orders_customer_id_again on orders (customer_id);
create index orders_status on orders (status);
create index orders_status_copy on orders (status);
create index orders_created_at on orders (created_at);
create index orders_customer_created on orders (customer_id, created_at);
create index orders_customer_status on orders (customer_id, status);
create index orders_note on orders (note);
create index orders_note_lower on orders (lower(note));
create index orders_total on orders (total);
create index orders_updated_at on orders (updated_at);
create index orders_region on orders (region);
create index orders_region_created on orders (region, created_at);
create index orders_created_id on orders (created_at, id);
create index orders_coupon on orders (coupon) where coupon is not null;
create index orders_email on orders (email);
create table metrics (day int not null, device int not null, value float8) partition by range (day);
do $$ begin
  for i in 0..59 loop
    execute format('create table metrics_d%s partition of metrics for values from (%s) to (%s)', i, i, i + 1);
  end loop;
end $$;
create index on metrics (device);
create index on metrics (day, device);
insert into metrics select g % 60, g % 50, random() from generate_series(1, 6000) g;
analyze;
