-- Seed scenario events (PostgresAI #PostgresMarathon 2-008..2-011): 12 monthly range partitions x 3 indexes.
-- Used by lockscope demo, lab prepared, the audit demo database and the tests.
create table events (event_id bigint, event_time timestamptz, event_data text) partition by range (event_time);
do $$
declare i int; start_date date;
begin
  for i in 0..11 loop
    start_date := '2024-01-01'::date + make_interval(months => i);
    execute format('create table events_%s partition of events for values from (%L) to (%L)',
                   to_char(start_date, 'YYYY_MM'), start_date, start_date + interval '1 month');
  end loop;
end $$;
create index on events (event_id);
create index on events (event_time);
create index on events (event_data);
vacuum analyze events;
