-- Hard cases, hand-made for lockscope's tests (tables of schema_hard.sql), each checked against PREPARE: both sides
-- unknown, overloaded and polymorphic functions, operators with many candidates, common types (CASE, COALESCE,
-- VALUES, UNION, IN lists, ARRAY), parameters typed in one place and used in another, the order parse analysis
-- follows, and statements PREPARE refuses for other reasons (left to the server).
-- expressions
select from t where $1 = 1
select $1
select $1 where $1 = 1
select 1 where $1 = 1 and $1 is null
select $1 is null, $1 = 1
select 1 where $1 is null
select count($1)
select $1 = $2
select $1 + $2
select $1 + 1
select $1 || $2
select $1 || 'a'
select -$1
select abs($1)
select lower($1)
select date_trunc($1, event_time) from ev
select date_trunc($1, $2)
select generate_series($1, $2)
select * from generate_series($1::int, $2)
select array_length($1, 1)
select coalesce($1, name) from ev
select coalesce($1, $2)
select * from ev where id = any($1)
select * from ev where id in ($1, $2, $3)
select * from ev where $1 in ($2, $3)
select * from ev where tags @> $1
select * from ev where data @> $1
select * from ev where data ->> $1 = $2
select * from ev where data -> $1 = $2
select * from ev where name like $1
select * from ev where lower(name) = lower($1)
select case when $1 then 1 else 2 end
select case when $1 = 1 then $2 else 'x' end
select case $1 when 1 then 'a' end
select * from ev limit $1 offset $2
select format('%s', $1)
select concat($1, $2)
select $2
select nullif($1, 1)
select $1 between 1 and 2
select 1 where $1 is distinct from 2
select greatest($1, 2)
select event_time + $1 from ev
select now() - $1
select $1::jsonb
select array[$1, $2]
select array[$1, 1]
select row($1, 2)
select (select $1)
select exists (select 1 where $1 = 2)
select 1 where 1 = any(array[$1])
select array_append($1, 1)
select unnest($1)
select sum($1)
select max($1)
select 1 where $1 ilike 'a'
select 1 where $1 ~ 'a'
select 1 where 'a' ~ $1
select to_char($1, 'YYYY')
select to_timestamp($1)
select round($1, 2)
select length($1)
select substring($1, 1, 2)
select position($1 in 'abc')
select extract(epoch from $1)
select $1 at time zone 'UTC'
select 1 union select $1
select $1 union select 1
select $1 union select $2
values ($1), (2)
select * from (values ($1), (2)) v(x)
select * from (select $1 as x) s where x = 1
select * from (select $1 as x) s
with c as (select $1 as x) select * from c where x = 1
-- INSERT, UPDATE, DELETE, operators and functions of many kinds
insert into acct (id, owner) values ($1, $2)
insert into acct (id, owner) values ($1, $2), ($3, $4)
insert into acct (id, owner, balance) values ($1, $2, default) on conflict (id) do update set balance = acct.balance + $3 returning id
insert into acct (id, owner) values ($1, $2) on conflict (id) do update set owner = excluded.owner || $3
insert into acct (id, owner) select $1, $2
insert into acct (id, owner) select $1, $2 where not exists (select 1 from acct where id = $1)
insert into acct (id, owner) select id + $1, owner from acct where id < $2
insert into acct select $1, $2
insert into acct (id, owner, tags[1]) values ($1, $2, $3)
insert into acct (id, owner) values ($1, $2) returning $3
update acct set balance = balance + $1 where id = $2
update acct set balance = $1, owner = $2 where id = $3 returning *
update acct set (balance, owner) = ($1, $2) where id = $3
update acct set (balance, owner) = (select $1, $2) where id = $3
update acct set tags[$1] = $2 where id = $3
update acct set meta = meta || $1 where id = $2
update acct set meta = jsonb_set(meta, $1, $2) where id = $3
update acct a set balance = p.id from person p where p.acct_id = a.id and p.name = $1
update acct set owner = $1 returning $1
delete from acct where id = $1 returning owner
delete from acct a using person p where p.acct_id = a.id and p.name = $1
delete from acct where id in (select acct_id from person where name like $1)
select * from acct where tags && $1
select * from acct where $1 = any(tags)
select * from acct where owner = any($1)
select * from acct where owner = all($1::text[])
select * from acct where id = any($1::int[])
select * from acct where meta->>'k' = $1
select * from acct where meta @> $1::jsonb
select * from acct where meta ? $1
select * from acct where meta #>> $1 = $2
select * from acct where created > now() - $1::interval
select * from acct where created > now() - $1
select * from acct where created between $1 and $2
select * from acct where d = $1
select * from acct where d > current_date - $1
select * from acct where d + $1 > now()
select * from acct where amount > $1
select * from acct where amount * $1 > 10
select * from acct where v = $1
select * from acct where v like $1
select * from acct where ch = $1
select * from acct where flag = $1
select * from acct where flag
select * from acct where not $1
select * from acct where $1 and flag
select * from acct where iv < $1
select * from acct where big = $1
select * from acct where sm = $1
select * from acct where f4 = $1
select * from acct where ip << $1
select * from acct where u = $1
select * from acct where arr @> array[$1]
select * from acct where arr @> array[$1]::int[]
select * from acct where arr[$1] = $2
select * from acct where arr[1:$1] = $2
select * from acct where coalesce(balance, $1) > 0
select * from acct where coalesce($1, balance) > 0
select * from acct where nullif(owner, $1) is null
select * from acct where greatest(balance, $1) > 0
select * from acct where owner ilike '%' || $1 || '%'
select * from acct where lower(owner) like lower($1) || '%'
select * from acct where position($1 in owner) > 0
select * from acct where owner ~* $1
select * from acct where owner similar to $1
select * from acct where owner is distinct from $1
select * from acct where (id, owner) = ($1, $2)
select * from acct where (id, owner) in (($1, $2), ($3, $4))
select * from acct where (id, owner) > ($1, $2) order by id, owner limit $3
select * from acct where id in (select id from acct where owner = $1)
select * from acct where $1 in (select owner from acct)
select * from acct where id = (select max(id) from acct where owner = $1)
select * from acct where exists (select 1 from person p where p.acct_id = acct.id and p.name = $1)
select * from acct order by $1
select * from acct order by case when $1 = 'id' then id end
select * from acct group by id having count(*) > $1
select id, count(*) filter (where balance > $1) from acct group by id
select string_agg(owner, $1) from acct
select string_agg(owner, $1 order by owner) from acct
select array_agg($1)
select json_build_object('a', $1)
select jsonb_build_object('a', $1::int)
select to_jsonb($1)
select row_number() over (partition by owner order by id) from acct where balance > $1
select sum(balance) over (order by id rows between $1 preceding and current row) from acct
select * from person where current_mood = $1
select * from person where current_mood > $1
select * from person where current_mood::text = $1
select * from person p join acct a on a.id = p.acct_id where a.owner = $1 and p.name = $2
select * from person p left join acct a using (id) where id = $1
select * from person natural join acct where id = $1
select * from acct a, lateral (select * from person p where p.acct_id = a.id and p.name = $1) x
select * from (select id, owner from acct) s(i, o) where i = $1 and o = $2
with recursive r(n) as (select $1::int union all select n + 1 from r where n < $2) select * from r
with recursive r(n) as (select 1 union all select n + $1 from r where n < 10) select * from r
with x as (update acct set balance = $1 where id = $2 returning id) select * from x
with x as (select $1 as a, $2 as b) select * from acct, x where owner = x.a
select * from generate_series($1::date, $2::date, '1 day')
select * from generate_series(1, $1)
select * from generate_series($1, 10)
select * from unnest($1::int[]) as u(x)
select * from unnest($1::int[], $2::text[]) as u(x, y)
select * from acct where id = any(select unnest($1::int[]))
select * from acct join unnest($1::int[]) with ordinality as u(x, o) on u.x = acct.id
select * from json_to_recordset($1) as r(a int, b text)
select * from jsonb_each($1)
select f_over($1)
select f_over($1::int)
select f_poly($1, 1)
select f_poly($1, $2)
select f_def($1)
select f_def($1, $2)
select f_var($1, $2)
select f_var(variadic $1)
select f_num($1)
select f_dt($1)
select * from dom where id = $1
select * from dom where id + 1 = $1
select $1::posint + 1
select $1::text::int
select cast($1 as bigint)
select int4($1)
select text($1)
select date($1)
select $1 = 1 and $1 = 'a'
select $1 = 1, $1 = 2
select $1 || $1
select $1 is true
select $1 is not null and $1 > 0
select 1 where $1 > 0 and $1 is not null
select case when $1 is null then 0 else 1 end
select $1 between $2 and $3
select $1 between 1 and $2
select coalesce($1, 0) + $2
select coalesce($1::int, $2)
select $1 + $2::int
select $1 - now()
select now() + $1
select $1 * 2.5
select 2.5 / $1
select $1 % 2
select $1 ^ 2
select @ $1
select ~ $1
select $1 & 1
select $1 << 2
select 'a' || $1 || 'b'
select $1 collate "C"
select $1 collate "C" = 'a'
select lower($1 collate "C")
select length($1::text), $1
select $3, $2, $1
select $1 from acct union all select owner from acct
select owner from acct union select $1
select $1 union select $2 union select 3
select $1 intersect select 1
select * from acct where id = $1 for update
select * from acct where id = $1 for update skip locked
select distinct $1
select distinct on ($1) id from acct
select $1 group by 1
select count(*) from acct group by $1
select id from acct order by 1 limit $1
select id from acct fetch first $1 rows only
select array[[$1, 2], [3, 4]]
select array[]::int[] || $1
select array[$1]::text[]
select $1::int[]
select ($1::int[])[1]
select (array[$1, 2])[1]
select $1[1]
select ($1::jsonb)['a']
select ($1::jsonb)->'a'
select (select $1::int) + 1
select exists(select $1)
select array(select $1)
select array(select id from acct where owner = $1)
select 1 where $1 = any(array(select id from acct))
select current_date + $1
select extract(year from $1::date)
select extract(epoch from created) > $1 from acct
select date_trunc('day', $1::timestamp)
select date_trunc('day', created) = $1 from acct
select to_char(created, $1) from acct
select to_char($1::numeric, '999')
select round($1::numeric, $2)
select trim($1)
select trim(both 'x' from $1)
select substring($1 from 2)
select overlay($1 placing 'x' from 2)
select replace($1, 'a', 'b')
select split_part($1, ',', 2)
select left($1, 3)
select md5($1)
select encode($1, 'hex')
select decode($1, 'hex')
select $1::bytea
select sha256($1)
select gen_random_uuid() = $1
select now() at time zone $1
select timezone($1, now())
select make_interval(days => $1)
select num_nulls($1, $2)
select pg_typeof($1)
select coalesce(null, $1)
select nullif($1, $2)
select greatest($1, $2)
select least($1, 1.5)
select $1 in (1, 2.5)
select $1 in ('a', 'b')
select $1 in (1, 'b')
select 1 in ($1, $2)
select 'x' in ($1, 1)
select * from acct where id in ($1)
select * from acct where id not in ($1, $2)
select * from acct where id <> all(array[$1, $2])
select * from acct where owner in ($1, $2, owner)
select * from acct where balance in ($1, id)
select array_position($1::int[], $2)
select array_position(arr, $1) from acct
select array_cat(arr, $1) from acct
select arr || $1 from acct
select $1 || arr from acct
select tags || $1 from acct
select cardinality($1)
select cardinality($1::int[])
select array_remove($1::int[], $2)
select array_prepend($1, arr) from acct
select $1 = any(arr) from acct
select * from person where current_mood = any($1)
select * from person where current_mood in ($1, $2)
select row($1::int, $2::text) = row(1, 'a')
select ($1, $2) = (1, 'a')
select (1, 2) < ($1, $2)
select $1 is distinct from $2
select $1 is not distinct from 1
select case $1 when 'a' then 1 end
select case when true then $1 end
select case when true then $1 else 1 end
select case when true then 1 else $1 end
select case when true then $1 else $2 end
select case when $1 then $2 when $3 then 'x' else $4 end
select coalesce($1, $2, 1)
select coalesce($1, 'a', 1)
select 1 where coalesce($1, false)
select 1 where $1::boolean
select 1 where $1 = true
select * from acct where balance = $1 or $1 is null
select * from acct where ($1 is null or balance = $1)
select * from acct where ($1::int is null or balance = $1)
-- more contexts: sub-selects, joins, CTEs, aggregates, window clauses, casts
select * from acct where owner ilike any (array[$1, $2])
select * from acct where owner like any ($1)
select * from acct where to_tsvector('english', owner) @@ plainto_tsquery($1)
select * from acct where to_tsvector(owner) @@ to_tsquery($1)
select * from acct where to_tsvector($1) @@ to_tsquery($2)
select count(distinct $1)
select coalesce(sum(balance), $1) from acct
select age($1)
select age($1::timestamptz)
select make_date($1, $2, $3)
select date_part('year', $1)
select interval '1 day' * $1
select $1 * interval '1 day'
select jsonb_path_exists(meta, $1) from acct
select meta #> $1 from acct
select meta - $1 from acct
select meta -> $1 -> $2 from acct
select meta ->> $1 from acct
select * from acct where (id, owner) = (select $1, $2)
select * from acct where (id, owner) in (select $1, $2)
select * from acct where id > all (select id from acct where owner = $1)
select * from acct where balance > any ($1)
select * from acct where balance > any (array[$1, $2])
select $1::int[] @> $2
select $1 @> $2::int[]
select * from (values ($1, $2), (3, 'x')) v(a, b)
select * from (values ($1::int, $2), (3, 'x')) v(a, b) where a = $3
select * from acct where (balance, owner) in (values ($1, $2))
select * from acct where id in (values ($1), ($2))
select sum(balance) over w from acct window w as (partition by $1)
select rank() over (order by $1) from acct
select $1 as x from acct order by x
select $1 as x from acct group by x
select owner as x, $1 from acct order by 2
select id from acct order by id + $1
select id from acct order by id using < limit $1
select percentile_cont($1) within group (order by balance) from acct
select mode() within group (order by $1) from acct
select f_over(a := $1)
select * from acct where id = $1::text::int
select * from acct where id::text = $1
select * from acct where owner = $1::varchar
select * from acct where v = $1::text
select * from acct where ch = $1::text
select * from acct where d = $1::timestamp
select * from acct where created = $1::date
select $1 = $2::int
select $2::int = $1
insert into acct (id, owner, created) values ($1, $2, now() - $3::interval)
insert into acct (id, owner, created) values ($1, $2, $3::timestamptz)
insert into acct (id, owner, meta) values ($1, $2, $3)
insert into acct (id, owner, tags) values ($1, $2, $3)
insert into acct (id, owner, tags) values ($1, $2, array[$3, $4])
insert into acct (id, owner, arr) values ($1, $2, array[$3, $4])
insert into acct (id, owner, arr) values ($1, $2, '{}')
insert into acct (id, owner, arr) values ($1, $2, array[]::int[])
insert into acct (id, owner) values ($1, $2) on conflict do nothing
insert into acct (id, owner) values ($1, $2) on conflict (id) do nothing returning id
insert into acct (id, owner) values ($1, $2) on conflict (id) where owner <> $3 do nothing
insert into acct (id, owner) values ($1, $2) on conflict (id) do update set owner = $3 where acct.balance > $4
insert into acct as a (id, owner) values ($1, $2) on conflict (id) do update set balance = a.balance + excluded.balance + $3
insert into person (name, current_mood) values ($1, $2)
insert into person (name, current_mood) values ($1, 'ok')
insert into person (name, acct_id) select $1, id from acct where owner = $2
insert into acct (id, owner) select * from (values ($1, $2)) v
insert into acct (id, owner) select x, y from (select $1 as x, $2 as y) s
insert into acct (id, owner) values ($1, $2) returning id, $3::text
insert into acct default values
insert into dom (id, label) values ($1, $2)
update dom set id = $1 where label = $2
update acct set tags = array_append(tags, $1) where id = $2
update acct set tags = tags || $1 where id = $2
update acct set tags = tags || $1::text where id = $2
update acct set arr = array_remove(arr, $1) where id = $2
update acct set created = coalesce($1, created) where id = $2
update acct set balance = case when $1 then balance + 1 else balance end where id = $2
update acct set balance = default where id = $1
update acct set meta = $1::jsonb - 'x' where id = $2
update acct set owner = upper($1) where id = $2
update acct set (owner) = row($1) where id = $2
delete from acct where created < $1
delete from acct where id = any($1) returning *
delete from acct where ctid = $1
delete from acct where xmin = $1
with del as (delete from acct where id = $1 returning *) insert into acct select * from del
with u as (select unnest($1::int[]) as id) delete from acct using u where acct.id = u.id
with v(a) as (values ($1)) select * from v
with v(a) as (values ($1::int)) select * from v where a = $2
with recursive t(n) as (values (1) union all select n + 1 from t where n < $1) select sum(n) from t
select * from acct where id = (select $1)
select * from acct where id = (select $1::int)
select * from acct where owner = (select $1)
select (select count(*) from acct where owner = $1) > $2
select * from acct a where balance > (select avg(balance) from acct where owner = a.owner and id <> $1)
select * from acct, person where acct.id = person.acct_id and (person.name = $1 or acct.owner = $1)
select * from acct left join person on person.acct_id = acct.id and person.name = $1
select * from acct full join person on person.acct_id = acct.id where coalesce(acct.owner, person.name) = $1
select * from acct cross join lateral (select $1::int as x) l where l.x = acct.id
select * from acct join lateral generate_series(1, $1) g(i) on true
select * from acct where id in (select generate_series(1, $1))
select * from acct where id = any(string_to_array($1, ',')::int[])
select * from acct where owner = any(string_to_array($1, ','))
select * from acct where owner = any(regexp_split_to_array($1, ','))
select regexp_replace(owner, $1, $2) from acct
select regexp_matches($1, 'a')
select * from acct where owner ~ ('^' || $1)
select * from acct where date_trunc('month', created) = date_trunc('month', $1::timestamptz)
select * from acct where created >= $1::date and created < $1::date + 1
select * from acct where created::date = $1
select * from acct where extract(year from created) = $1
select * from acct where balance::numeric / nullif($1, 0) > 1
select id::text || $1 from acct
select concat_ws($1, owner, 'x') from acct
select format('%s-%s', $1::text, $2::int)
select json_agg($1::int)
select jsonb_agg(owner order by $1) from acct
select array_agg(distinct $1::int)
select max($1::int), min($2)
select bool_and($1)
select every($1)
select count($1::int)
select avg($1)
select * from acct tablesample system ($1)
select * from acct where id = $1 and id = $2
select * from acct where id = $1 or owner = $1
select $1 from acct where owner = $1
select $1::int from acct where id = $1
select $1 where false
select $10
select $1, $2, $3 from acct where id = $3 and owner = $2 and balance = $1
-- MERGE, ordered-set aggregates, DISTINCT
merge into acct a using (select $1::int as id) s on a.id = s.id when matched and a.balance > $2 then update set balance = $3 when not matched then insert (id, owner) values (s.id, $4) when not matched by source then delete
merge into acct a using person p on a.id = p.acct_id when matched then update set owner = $1 when not matched then insert (id, owner) values ($2, $3)
merge into acct a using (values ($1, $2)) v(id, owner) on a.id = v.id when matched then update set owner = v.owner when not matched then insert values (v.id, v.owner)
merge into acct a using (values ($1::int, $2::text)) v(id, owner) on a.id = v.id when not matched then insert (id, owner) values (v.id, v.owner)
merge into acct a using person p on a.id = p.acct_id when matched and $1 then delete
merge into acct a using person p on a.id = p.acct_id when matched then update set balance = a.balance + $1
merge into acct a using person p on a.id = p.acct_id when matched then do nothing
merge into acct a using person p on a.id = p.acct_id and p.name = $1 when matched then delete
select rank($1) within group (order by balance) from acct
select percentile_disc($1) within group (order by balance) from acct
select percentile_cont(array[$1, $2]) within group (order by balance) from acct
select count(*) over (partition by $1)
select distinct $1, $2
select distinct on ($1) $1
select string_agg(distinct owner, $1) from acct
select array_agg($1 order by $1)
select array_agg(x order by $1) from (values (1)) v(x)
-- names resolved through the search path and schemas
select other.f_over($1)
select f_over($1::bigint)
select * from other.acct where owner = $1
select * from other.acct a join acct b on a.id = b.id where a.owner = $1 and b.owner = $2
select * from pg_catalog.pg_class where relname = $1
select * from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = $1 and c.relkind = any($2)
select pg_catalog.lower($1)
select $1 operator(pg_catalog.=) 1
select $1 operator(pg_catalog.+) $2
-- window clauses follow SQL99 rules (a constant is a constant), GROUP BY / ORDER BY positions
select row_number() over (order by 1) from acct where id = $1
select row_number() over (partition by 1 order by $1) from acct
select rank() over w from acct where owner = $1 window w as (order by 2)
select owner from acct group by 1 having count(*) > $1
select owner from acct order by 1, $1
select owner, $1 from acct group by 1, 2
select distinct on (1) owner, $1 from acct
select id from acct order by id desc nulls last limit $1
