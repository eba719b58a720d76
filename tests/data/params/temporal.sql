-- common/persistence/sql/sqlplugin/postgresql/admin.go
SELECT curr_version from schema_version where version_partition=0 and db_name=$1
SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()
INSERT into schema_version(version_partition, db_name, creation_time, curr_version, min_compatible_version) VALUES (0,$1,$2,$3,$4) ON CONFLICT (version_partition, db_name) DO UPDATE SET creation_time = excluded.creation_time, curr_version = excluded.curr_version, min_compatible_version = excluded.min_compatible_version;
-- common/persistence/sql/sqlplugin/postgresql/cluster_metadata.go
SELECT data, data_encoding, version FROM cluster_metadata_info WHERE metadata_partition = $1 ORDER BY cluster_name LIMIT $2
DELETE FROM cluster_membership WHERE host_id = ANY(ARRAY( SELECT host_id FROM cluster_membership WHERE membership_partition = $1 AND record_expiry < $2))
INSERT INTO cluster_membership (membership_partition, host_id, rpc_address, rpc_port, role, session_start, last_heartbeat, record_expiry) VALUES($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT(membership_partition, host_id) DO UPDATE SET membership_partition = $1, host_id = $2, rpc_address = $3, rpc_port = $4, role = $5, session_start = $6, last_heartbeat = $7, record_expiry = $8
SELECT data, data_encoding, version FROM cluster_metadata_info WHERE metadata_partition = $1 AND cluster_name = $2 FOR UPDATE
-- common/persistence/sql/sqlplugin/postgresql/events.go
INSERT INTO history_node (shard_id, tree_id, branch_id, node_id, prev_txn_id, txn_id, data, data_encoding) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (shard_id, tree_id, branch_id, node_id, txn_id) DO UPDATE SET prev_txn_id=$9, data=$10, data_encoding=$11
INSERT INTO history_tree (shard_id, tree_id, branch_id, data, data_encoding) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (shard_id, tree_id, branch_id) DO UPDATE SET data = excluded.data, data_encoding = excluded.data_encoding
SELECT node_id, prev_txn_id, txn_id, data, data_encoding FROM history_node WHERE shard_id = $1 AND tree_id = $2 AND branch_id = $3 AND ((node_id = $4 AND txn_id > $5) OR node_id > $6) AND node_id < $7 ORDER BY shard_id, tree_id, branch_id, node_id, txn_id LIMIT $8
SELECT node_id, prev_txn_id, txn_id, data, data_encoding FROM history_node WHERE shard_id = $1 AND tree_id = $2 AND branch_id = $3 AND node_id >= $4 AND ((node_id = $5 AND txn_id < $6) OR node_id < $7) ORDER BY shard_id, tree_id, branch_id DESC, node_id DESC, txn_id DESC LIMIT $8
SELECT shard_id, tree_id, branch_id, data, data_encoding FROM history_tree WHERE (shard_id, tree_id, branch_id) > ($1, $2, $3) ORDER BY shard_id, tree_id, branch_id LIMIT $4
-- common/persistence/sql/sqlplugin/postgresql/execution.go
INSERT INTO current_executions (shard_id, namespace_id, workflow_id, run_id, create_request_id, state, status, start_time, last_write_version, data, data_encoding) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
INSERT INTO executions(shard_id, namespace_id, workflow_id, run_id, next_event_id, last_write_version, data, data_encoding, state, state_encoding, db_record_version) VALUES($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
SELECT data, data_encoding FROM buffered_events WHERE shard_id = $1 AND namespace_id = $2 AND workflow_id = $3 AND run_id = $4 ORDER BY id
SELECT shard_id, namespace_id, workflow_id, run_id, create_request_id, state, status, start_time, last_write_version, data, data_encoding FROM current_executions WHERE shard_id = $1 AND namespace_id = $2 AND workflow_id = $3
SELECT task_id, data, data_encoding FROM history_immediate_tasks WHERE shard_id = $1 AND category_id = $2 AND task_id >= $3 AND task_id < $4 ORDER BY task_id LIMIT $5
SELECT visibility_timestamp, task_id, data, data_encoding FROM history_scheduled_tasks WHERE shard_id = $1 AND category_id = $2 AND ((visibility_timestamp >= $3 AND task_id >= $4) OR visibility_timestamp > $5) AND visibility_timestamp < $6 ORDER BY visibility_timestamp,task_id LIMIT $7
SELECT visibility_timestamp, task_id, data, data_encoding FROM timer_tasks WHERE shard_id = $1 AND ((visibility_timestamp >= $2 AND task_id >= $3) OR visibility_timestamp > $4) AND visibility_timestamp < $5 ORDER BY visibility_timestamp,task_id LIMIT $6
SELECT db_record_version, next_event_id FROM executions WHERE shard_id = $1 AND namespace_id = $2 AND workflow_id = $3 AND run_id = $4 FOR SHARE
UPDATE current_executions SET run_id = $1, create_request_id = $2, state = $3, status = $4, start_time = $5, last_write_version = $6, data = $7, data_encoding = $8 WHERE shard_id = $9 AND namespace_id = $10 AND workflow_id = $11
UPDATE executions SET db_record_version = $1, next_event_id = $2, last_write_version = $3, data = $4, data_encoding = $5, state = $6, state_encoding = $7 WHERE shard_id = $8 AND namespace_id = $9 AND workflow_id = $10 AND run_id = $11
SELECT db_record_version, next_event_id FROM executions WHERE shard_id = $1 AND namespace_id = $2 AND workflow_id = $3 AND run_id = $4 FOR UPDATE
-- common/persistence/sql/sqlplugin/postgresql/execution_maps.go
INSERT INTO signals_requested_sets (shard_id, namespace_id, workflow_id, run_id, signal_id) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (shard_id, namespace_id, workflow_id, run_id, signal_id) DO NOTHING
-- common/persistence/sql/sqlplugin/postgresql/namespace.go
UPDATE namespace_metadata SET notification_version = $1 WHERE notification_version = $2 AND partition_id=$3
UPDATE namespaces SET name = $1, data = $2, data_encoding = $3, is_global = $4, notification_version = $5 WHERE partition_id=54321 AND id = $6
-- common/persistence/sql/sqlplugin/postgresql/nexus_endpoints.go
UPDATE nexus_endpoints SET data = $1, data_encoding = $2, version = $3 WHERE id = $4 AND version = $5
-- common/persistence/sql/sqlplugin/postgresql/queue.go
SELECT message_id FROM queue WHERE message_id >= (SELECT message_id FROM queue WHERE queue_type=$1 ORDER BY message_id DESC LIMIT 1) FOR UPDATE
UPDATE queue_metadata SET data = $1, data_encoding = $2, version = $3+1 WHERE queue_type = $4 and version = $5
-- common/persistence/sql/sqlplugin/postgresql/queue_v2.go
SELECT message_id FROM queue_messages WHERE queue_type=$1 and queue_name=$2 and queue_partition=$3 and message_id >= (SELECT message_id FROM queue_messages WHERE queue_type=$1 and queue_name=$2 and queue_partition=$3 ORDER BY message_id DESC LIMIT 1) FOR UPDATE
SELECT queue_type, queue_name, metadata_payload, metadata_encoding from queues WHERE queue_type=$1 LIMIT $2 OFFSET $3
-- common/persistence/sql/sqlplugin/postgresql/task_queues.go
SELECT range_hash, task_queue_id, range_id, data, data_encoding FROM task_queues_v2 WHERE range_hash >= $1 AND range_hash <= $2 AND task_queue_id > $3 ORDER BY task_queue_id ASC LIMIT $4
-- common/persistence/sql/sqlplugin/postgresql/task_v1.go
DELETE FROM tasks WHERE range_hash = $1 AND task_queue_id = $2 AND task_id IN (SELECT task_id FROM tasks WHERE range_hash = $1 AND task_queue_id = $2 AND task_id < $3 ORDER BY task_queue_id,task_id LIMIT $4 )
-- common/persistence/sql/sqlplugin/postgresql/task_v2.go
SELECT task_id, data, data_encoding FROM tasks_v2 WHERE range_hash = $1 AND task_queue_id = $2 AND (pass, task_id) >= ($3, $4) ORDER BY pass, task_id
DELETE FROM tasks_v2 WHERE range_hash = $1 AND task_queue_id = $2 AND task_id IN (SELECT task_id FROM tasks_v2 WHERE range_hash = $1 AND task_queue_id = $2 AND (pass, task_id) < ($3, $4) ORDER BY task_queue_id,pass,task_id LIMIT $5 )
