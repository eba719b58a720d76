-- Typical GitLab queries on the tables of schema.sql, written for lockscope's tests (not taken from GitLab).
-- One statement per line; $n parameters are bound by the test with values from the loaded data.
select * from namespaces where id = $1
select * from namespaces where type = 'Group' and parent_id is null and lower(path) = lower($1)
select * from merge_requests where target_project_id = $1 and iid = $2
select id, title from merge_requests where target_project_id = $1 and state_id = 1 order by created_at desc limit 20
update merge_requests set updated_at = now() where id = $1
select * from merge_request_diffs where merge_request_id = $1 order by id desc limit 1
select * from members where source_id = $1 and source_type = 'Namespace' and requested_at is null
select * from p_ci_builds where partition_id = $1 and id = $2
select * from p_ci_builds where commit_id = $1 and type = 'Ci::Build' order by stage_idx
