-- pgbench_accounts gets exactly @count@ extra indexes on bid besides its primary key, named @prefix@_1 ..
-- @prefix@_@count@: indexes of that name pattern above the count are dropped, missing ones created. One
-- transaction per index (run outside a transaction block), so no run holds many new-index locks at once.
do $$
declare
  r record;
begin
  for r in
    select c.relname::text as name
    from pg_catalog.pg_index i join pg_catalog.pg_class c on c.oid = i.indexrelid
    where i.indrelid = 'public.pgbench_accounts'::regclass
      and c.relname ~ '^@prefix@_[0-9]+$'
      and substring(c.relname from '[0-9]+$')::int > @count@
  loop
    execute format('drop index public.%I', r.name);
    commit;
  end loop;
  for k in 1..@count@ loop
    if pg_catalog.to_regclass(format('public.%I', '@prefix@_' || k)) is null then
      execute format('create index %I on public.pgbench_accounts (bid)', '@prefix@_' || k);
      commit;
    end if;
  end loop;
end $$;
