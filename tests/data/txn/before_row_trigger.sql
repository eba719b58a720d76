-- A BEFORE ROW trigger (PL/pgSQL) running a query on another table (3 indexes) for every inserted row
create table product (id int primary key, sku text not null unique, price int not null, cat int);
create index product_cat on product (cat);
insert into product select g, 'sku' || g, g * 10, g % 20 from generate_series(1, 1000) g;
create table line (id int primary key, product_id int not null, qty int not null, price int);
create function line_price() returns trigger language plpgsql as $$
begin
  select p.price * new.qty into new.price from product p where p.id = new.product_id;
  return new;
end $$;
create trigger line_price before insert on line for each row execute function line_price();
-- transaction
-- params: 1, 17, 3
insert into line (id, product_id, qty) values ($1, $2, $3);
