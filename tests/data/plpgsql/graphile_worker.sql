-- graphile-worker (before v0.16): job_queues counter cache, updated_at, NOTIFY on insert, with UPDATE OF and WHEN
-- source: graphile/worker@abfb4cff30747ad423046d117dfb88470f03ae00, sql/000001.sql and sql/000003.sql (MIT);
-- :GRAPHILE_WORKER_SCHEMA written as graphile_worker (its default); jobs.queue_name nullable as 000003.sql leaves it
create table graphile_worker.job_queues (
  queue_name text not null primary key,
  job_count int not null,
  locked_at timestamptz,
  locked_by text
);
create table graphile_worker.jobs (
  id bigserial primary key,
  queue_name text,
  task_identifier text not null,
  payload json default '{}'::json not null,
  priority int default 0 not null,
  run_at timestamptz default now() not null,
  attempts int default 0 not null,
  max_attempts int default 25 not null,
  last_error text,
  created_at timestamp with time zone not null default now(),
  updated_at timestamp with time zone not null default now()
);
create index on graphile_worker.jobs (priority, run_at, id);
insert into graphile_worker.jobs (queue_name, task_identifier) select 'q' || (g % 5), 't' from generate_series(1, 100) g;
insert into graphile_worker.job_queues select queue_name, count(*) from graphile_worker.jobs group by queue_name;
-- sql/000001.sql
create function graphile_worker.tg__update_timestamp() returns trigger as $$
begin
  new.updated_at = greatest(now(), old.updated_at + interval '1 millisecond');
  return new;
end;
$$ language plpgsql;
create trigger _100_timestamps before update on graphile_worker.jobs for each row execute procedure graphile_worker.tg__update_timestamp();

-- Manage the job_queues table - creating and deleting entries as appropriate
create function graphile_worker.jobs__decrease_job_queue_count() returns trigger as $$
declare
  v_new_job_count int;
begin
  update graphile_worker.job_queues
    set job_count = job_queues.job_count - 1
    where queue_name = old.queue_name
    returning job_count into v_new_job_count;

  if v_new_job_count <= 0 then
    delete from graphile_worker.job_queues where queue_name = old.queue_name and job_count <= 0;
  end if;

  return old;
end;
$$ language plpgsql;
create function graphile_worker.jobs__increase_job_queue_count() returns trigger as $$
begin
  insert into graphile_worker.job_queues(queue_name, job_count)
    values(new.queue_name, 1)
    on conflict (queue_name)
    do update
    set job_count = job_queues.job_count + 1;

  return new;
end;
$$ language plpgsql;

-- Notify worker of new jobs
create function graphile_worker.tg_jobs__notify_new_jobs() returns trigger as $$
begin
  perform pg_notify('jobs:insert', '');
  return new;
end;
$$ language plpgsql;
create trigger _900_notify_worker after insert on graphile_worker.jobs for each statement execute procedure graphile_worker.tg_jobs__notify_new_jobs();
-- sql/000003.sql
create trigger _500_increase_job_queue_count after insert on graphile_worker.jobs for each row when (NEW.queue_name is not null) execute procedure graphile_worker.jobs__increase_job_queue_count();
create trigger _500_decrease_job_queue_count after delete on graphile_worker.jobs for each row when (OLD.queue_name is not null) execute procedure graphile_worker.jobs__decrease_job_queue_count();
create trigger _500_increase_job_queue_count_update after update of queue_name on graphile_worker.jobs for each row when (NEW.queue_name is distinct from OLD.queue_name AND NEW.queue_name is not null) execute procedure graphile_worker.jobs__increase_job_queue_count();
create trigger _500_decrease_job_queue_count_update after update of queue_name on graphile_worker.jobs for each row when (NEW.queue_name is distinct from OLD.queue_name AND OLD.queue_name is not null) execute procedure graphile_worker.jobs__decrease_job_queue_count();
-- event: insert into graphile_worker.jobs (queue_name, task_identifier) values ('q1', 'send_email');
-- runs: jobs__increase_job_queue_count:3
-- event: update graphile_worker.jobs set queue_name = 'q9' where id = 4;
-- runs: jobs__increase_job_queue_count:3 jobs__decrease_job_queue_count:5
-- event: update graphile_worker.jobs set attempts = attempts + 1 where id = 5;
-- runs:
-- event: delete from graphile_worker.jobs where id = 6;
-- runs: jobs__decrease_job_queue_count:5
-- unreached: jobs__decrease_job_queue_count:11
