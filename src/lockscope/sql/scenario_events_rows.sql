-- @rows_per_partition@ rows into each of the 12 events partitions (one second apart), then VACUUM ANALYZE.
do $$
declare i int; start_date date;
begin
  for i in 0..11 loop
    start_date := '2024-01-01'::date + make_interval(months => i);
    execute format('insert into %I (event_id, event_time, event_data)
                    select s, %L::timestamptz + (s * interval ''1 second''), ''data_'' || s
                    from generate_series(1, @rows_per_partition@) s',
                   'events_' || to_char(start_date, 'YYYY_MM'), start_date);
  end loop;
end $$;
vacuum analyze events;
