-- A DVD-rental schema in the style of the well-known pagila sample database, written for lockscope's tests
-- (no sample database could be downloaded here). Tables carry the indexes such applications grow (6-20 each)
-- so that fast-path groups overflow at max_locks_per_transaction 16..128. Partitions are created out of bound order.
create table country (country_id int primary key, country text not null, last_update timestamptz default now());
create table city (city_id int primary key, city text not null, country_id int not null references country,
                   last_update timestamptz default now());
create table address (address_id int primary key, address text not null, address2 text, district text,
                      city_id int not null references city, postal_code text, phone text,
                      last_update timestamptz default now());
create table language (language_id int primary key, name text not null, last_update timestamptz default now());
create table category (category_id int primary key, name text not null, last_update timestamptz default now());
create table actor (actor_id int primary key, first_name text not null, last_name text not null,
                    last_update timestamptz default now());
create table film (film_id int primary key, title text not null, description text, release_year int,
                   language_id int not null references language, original_language_id int, rental_duration int,
                   rental_rate numeric(4,2), length int, replacement_cost numeric(5,2), rating text,
                   special_features text[], fulltext tsvector, last_update timestamptz default now());
create table film_actor (actor_id int not null references actor, film_id int not null references film,
                         last_update timestamptz default now(), primary key (actor_id, film_id));
create table film_category (film_id int not null references film, category_id int not null references category,
                            last_update timestamptz default now(), primary key (film_id, category_id));
create table store (store_id int primary key, manager_staff_id int, address_id int not null references address,
                    last_update timestamptz default now());
create table staff (staff_id int primary key, first_name text, last_name text, address_id int references address,
                    email text, store_id int references store, active bool, username text, password text,
                    last_update timestamptz default now());
create table customer (customer_id int primary key, store_id int references store, first_name text not null,
                       last_name text not null, email text, address_id int references address,
                       activebool bool default true, create_date date default current_date,
                       last_update timestamptz default now(), active int);
create table inventory (inventory_id int primary key, film_id int not null references film,
                        store_id int not null references store, last_update timestamptz default now());
create table rental (rental_id int primary key, rental_date timestamptz not null, inventory_id int not null
                     references inventory, customer_id int not null references customer, return_date timestamptz,
                     staff_id int not null references staff, last_update timestamptz default now());
-- payment: RANGE partitioned by month, partitions created out of bound order
create table payment (payment_id int not null, customer_id int not null, staff_id int not null,
                      rental_id int, amount numeric(5,2) not null, payment_date timestamptz not null,
                      primary key (payment_date, payment_id)) partition by range (payment_date);
create table payment_p2022_05 partition of payment for values from ('2022-05-01 00:00:00+00') to ('2022-06-01 00:00:00+00');
create table payment_p2022_02 partition of payment for values from ('2022-02-01 00:00:00+00') to ('2022-03-01 00:00:00+00');
create table payment_p2022_07 partition of payment for values from ('2022-07-01 00:00:00+00') to ('2022-08-01 00:00:00+00');
create table payment_p2022_01 partition of payment for values from ('2022-01-01 00:00:00+00') to ('2022-02-01 00:00:00+00');
create table payment_p2022_04 partition of payment for values from ('2022-04-01 00:00:00+00') to ('2022-05-01 00:00:00+00');
create table payment_p2022_06 partition of payment for values from ('2022-06-01 00:00:00+00') to ('2022-07-01 00:00:00+00');
create table payment_p2022_03 partition of payment for values from ('2022-03-01 00:00:00+00') to ('2022-04-01 00:00:00+00');
create table payment_old partition of payment default;
create index on payment (customer_id);
create index on payment (staff_id);
create index on payment (rental_id);
-- many indexes (what grows in real applications)
create index on film (title); create index on film (language_id); create index on film (original_language_id);
create index on film (release_year); create index on film (rating); create index on film (length);
create index on film (rental_rate); create index on film using gin (fulltext); create index on film (last_update);
create index on film (replacement_cost); create index on film (lower(title)); create index on film (rating, length);
create index on actor (last_name); create index on actor (first_name); create index on actor (last_update);
create index on actor (lower(last_name)); create index on actor (first_name, last_name);
create index on customer (store_id); create index on customer (last_name); create index on customer (address_id);
create index on customer (email); create index on customer (lower(email)); create index on customer (create_date);
create index on customer (active); create index on customer (first_name, last_name);
create index on rental (inventory_id); create index on rental (customer_id); create index on rental (staff_id);
create index on rental (rental_date); create index on rental (return_date); create index on rental (last_update);
create unique index on rental (rental_date, inventory_id, customer_id);
create index on rental (customer_id, rental_date); create index on rental (inventory_id, return_date);
create index on inventory (film_id); create index on inventory (store_id); create index on inventory (store_id, film_id);
create index on inventory (last_update); create index on inventory (film_id, store_id);
create index on film_actor (film_id); create index on film_actor (last_update);
create index on film_category (category_id); create index on film_category (last_update);
create index on address (city_id); create index on address (postal_code); create index on address (phone);
create index on address (district); create index on city (country_id); create index on city (city);
create index on staff (store_id); create index on staff (address_id); create index on staff (email);
create index on store (address_id); create unique index on store (manager_staff_id);
create view film_list as
  select f.film_id as fid, f.title, f.description, c.name as category, f.rental_rate as price, f.length, f.rating,
         a.first_name || ' ' || a.last_name as actor
  from category c
  left join film_category fc on c.category_id = fc.category_id
  left join film f on fc.film_id = f.film_id
  join film_actor fa on f.film_id = fa.film_id
  join actor a on fa.actor_id = a.actor_id;
create view customer_list as
  select cu.customer_id as id, cu.first_name || ' ' || cu.last_name as name, a.address, a.postal_code as zip,
         a.phone, city.city, country.country, cu.store_id as sid
  from customer cu join address a on cu.address_id = a.address_id join city on a.city_id = city.city_id
  join country on city.country_id = country.country_id;
create view sales_by_store as
  select s.store_id, sum(p.amount) as total_sales
  from payment p join rental r on p.rental_id = r.rental_id join inventory i on r.inventory_id = i.inventory_id
  join store s on i.store_id = s.store_id group by s.store_id;
insert into country select g, 'country' || g from generate_series(1, 20) g;
insert into city select g, 'city' || g, 1 + g % 20 from generate_series(1, 100) g;
insert into address select g, g || ' main st', null, 'd' || (g % 10), 1 + g % 100, lpad(g::text, 5, '0'), '555'
  from generate_series(1, 300) g;
insert into language select g, 'lang' || g from generate_series(1, 6) g;
insert into category select g, 'cat' || g from generate_series(1, 16) g;
insert into actor select g, 'first' || g, 'last' || g from generate_series(1, 200) g;
insert into film (film_id, title, language_id, release_year, rating, length, rental_rate)
  select g, 'film ' || g, 1 + g % 6, 2000 + g % 20, 'PG', 60 + g % 100, 2.99 from generate_series(1, 1000) g;
insert into film_actor select 1 + g % 200, g from generate_series(1, 1000) g;
insert into film_category select g, 1 + g % 16 from generate_series(1, 1000) g;
insert into store values (1, null, 1), (2, null, 2);
insert into staff (staff_id, first_name, address_id, store_id) values (1, 'Mike', 3, 1), (2, 'Jon', 4, 2);
insert into customer (customer_id, store_id, first_name, last_name, address_id)
  select g, 1 + g % 2, 'c' || g, 'l' || g, 1 + g % 300 from generate_series(1, 600) g;
insert into inventory select g, 1 + g % 1000, 1 + g % 2 from generate_series(1, 4000) g;
insert into rental (rental_id, rental_date, inventory_id, customer_id, staff_id)
  select g, '2022-01-01'::timestamptz + g * interval '1 hour', 1 + g % 4000, 1 + g % 600, 1 + g % 2
  from generate_series(1, 5000) g;
insert into payment select g, 1 + g % 600, 1 + g % 2, g, 4.99, '2022-01-01'::timestamptz + g * interval '1 hour'
  from generate_series(1, 5000) g;
analyze;
