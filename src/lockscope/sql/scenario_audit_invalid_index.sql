-- Fails on purpose (division by zero at id 1000): a failed CREATE INDEX CONCURRENTLY leaves an invalid index
-- behind, which the planner still locks.
create index concurrently orders_ratio on orders ((100 / (id - 1000)))
