-- forecast_real: the "app" schema (deterministic data)
create table customers (
  id bigint primary key, email text not null, name text not null, country char(2) not null, city text not null,
  created_at timestamptz not null, status smallint not null, segment text not null, phone text,
  last_login timestamptz, credit_limit numeric(12, 2) not null default 0);
create unique index customers_email_key on customers (email);
create index customers_country_idx on customers (country);
create index customers_city_idx on customers (city);
create index customers_created_at_idx on customers (created_at);
create index customers_status_idx on customers (status);
create index customers_segment_idx on customers (segment);
create index customers_phone_idx on customers (phone);
create index customers_last_login_idx on customers (last_login);
insert into customers
select g, 'c' || g || '@example.com', 'customer ' || g,
       (array['DE','FR','US','GB','NL','ES','IT','PL'])[1 + g % 8], 'city ' || (g % 300),
       timestamptz '2020-01-01' + (g % 1500) * interval '1 day', (g % 4)::smallint,
       (array['retail','smb','enterprise'])[1 + g % 3], '+49' || (100000000 + g * 7),
       timestamptz '2025-01-01' + (g % 700) * interval '1 hour', (g % 50) * 100
from generate_series(1, 5000) g;

create table items (
  id bigint primary key, sku text not null, name text not null, category int not null, brand text not null,
  supplier_id int not null, price numeric(10, 2) not null, created_at timestamptz not null,
  updated_at timestamptz not null, status smallint not null, description text);
create unique index items_sku_key on items (sku);
create index items_name_idx on items (name);
create index items_category_idx on items (category);
create index items_brand_idx on items (brand);
create index items_supplier_id_idx on items (supplier_id);
create index items_price_idx on items (price);
create index items_created_at_idx on items (created_at);
create index items_updated_at_idx on items (updated_at);
create index items_status_idx on items (status);
create index items_category_price_idx on items (category, price);
insert into items
select g, 'SKU-' || lpad(g::text, 6, '0'), 'item ' || g, g % 200, 'brand ' || (g % 150), g % 400,
       1 + (g * 37 % 50000) / 100.0, timestamptz '2019-01-01' + (g % 2000) * interval '1 day',
       timestamptz '2024-01-01' + (g % 500) * interval '1 hour', (g % 3)::smallint, repeat('d', 40)
from generate_series(1, 20000) g;

create table orders (
  id bigint primary key, customer_id bigint not null references customers (id),
  item_id bigint not null references items (id), status text not null, created_at timestamptz not null,
  updated_at timestamptz not null, shipped_at timestamptz, currency char(3) not null, channel text not null,
  warehouse_id int not null, sales_rep_id int, region text not null, external_ref text not null,
  coupon_code text, amount numeric(12, 2) not null, quantity int not null, note text)
  with (fillfactor = 90);
create index orders_customer_id_idx on orders (customer_id);
create index orders_customer_id_created_at_idx on orders (customer_id, created_at);
create index orders_item_id_idx on orders (item_id);
create index orders_status_idx on orders (status);
create index orders_status_created_at_idx on orders (status, created_at);
create index orders_created_at_idx on orders (created_at);
create index orders_updated_at_idx on orders (updated_at);
create index orders_shipped_at_idx on orders (shipped_at);
create index orders_currency_idx on orders (currency);
create index orders_channel_idx on orders (channel);
create index orders_warehouse_id_idx on orders (warehouse_id);
create index orders_sales_rep_id_idx on orders (sales_rep_id);
create index orders_region_idx on orders (region);
create unique index orders_external_ref_key on orders (external_ref);
create index orders_coupon_code_idx on orders (coupon_code);
insert into orders
select g, 1 + (g * 7919) % 5000, 1 + (g::bigint * 104729) % 20000,
       (array['new','paid','shipped','delivered','cancelled'])[1 + g % 5],
       timestamptz '2024-01-01' + g * interval '10 minutes', timestamptz '2024-01-01' + g * interval '11 minutes',
       case when g % 5 >= 2 then timestamptz '2024-01-02' + g * interval '10 minutes' end,
       (array['EUR','USD','GBP'])[1 + g % 3], (array['web','app','store','phone'])[1 + g % 4], g % 12,
       case when g % 3 = 0 then g % 80 end, (array['north','south','east','west'])[1 + g % 4],
       'EXT-' || g, case when g % 10 = 0 then 'CPN' || (g % 97) end, 1 + (g * 53 % 100000) / 100.0,
       1 + g % 5, 'order note ' || g
from generate_series(1, 50000) g;

create table events (
  id bigint not null, day date not null, ts timestamptz not null, kind smallint not null, account_id int not null,
  value numeric(10, 2) not null, payload text) partition by range (day);
do $$
begin
  for i in 0..31 loop
    execute format('create table events_%s partition of events for values from (%L) to (%L)',
                   to_char(date '2025-01-01' + i, 'YYYYMMDD'), date '2025-01-01' + i, date '2025-01-01' + i + 1);
  end loop;
end $$;
create index events_account_id_idx on events (account_id);
create index events_ts_idx on events (ts);
insert into events
select g, date '2025-01-01' + (g % 32), timestamptz '2025-01-01' + (g % 32) * interval '1 day'
         + (g % 86400) * interval '1 second', (g % 8)::smallint, 1 + (g * 31) % 1000, (g % 1000) / 10.0,
       'payload ' || g
from generate_series(1, 100000) g;

vacuum analyze;
