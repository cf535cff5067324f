-- case readonly expect=refuse
SELECT 1 SETTINGS readonly = 0
-- case allow_ddl expect=refuse
SELECT 1 SETTINGS allow_ddl = 1
-- case introspection expect=refuse
SELECT 1 SETTINGS allow_introspection_functions = 1
-- case analyzer_off expect=refuse
SELECT 1 SETTINGS enable_analyzer = 0
-- case old_analyzer expect=refuse
SELECT 1 SETTINGS allow_experimental_analyzer = 0
-- case prefer_column expect=refuse
SELECT 1 SETTINGS prefer_column_name_to_alias = 1
-- case additional_filters expect=refuse
SELECT * FROM events SETTINGS additional_table_filters = {'events': '1'}
-- case param expect=refuse
SELECT 1 SETTINGS param_x = 'y'
-- case query_cache expect=refuse
SELECT 1 SETTINGS use_query_cache = 1
-- case send_logs expect=refuse
SELECT 1 SETTINGS send_logs_level = 'trace'
-- case log_queries expect=refuse
SELECT 1 SETTINGS log_queries = 0
-- case experimental expect=refuse
SELECT 1 SETTINGS allow_experimental_correlated_subqueries = 1
-- case settings_in_subquery expect=refuse
SELECT * FROM (SELECT 1 SETTINGS readonly = 0)
-- case settings_in_cte expect=refuse
WITH x AS (SELECT 1 SETTINGS allow_ddl = 1) SELECT * FROM x
-- case setting_expression expect=refuse
SELECT 1 SETTINGS max_threads = (SELECT count() FROM _svc.ingest_keys)
-- case workload_escape expect=refuse
SELECT 1 SETTINGS workload = 'a\'b'
-- case workload_number expect=refuse
SELECT 1 SETTINGS workload = 1
-- case insert_header_readonly expect=refuse
INSERT INTO events SETTINGS readonly = 0 SELECT * FROM events
-- case max_memory_usage_ok expect=ok
SELECT 1 SETTINGS max_memory_usage = 1000000000, max_execution_time = 10
-- case explain_setting_ok expect=ok
EXPLAIN PLAN header = 1 SELECT 1
-- case explain_setting_string expect=refuse
EXPLAIN PLAN header = 'x' SELECT 1
-- case set_statement expect=refuse
SET readonly = 0
-- case use_statement expect=refuse
USE _svc
-- case system_statement expect=refuse
SYSTEM RELOAD DICTIONARIES
-- case kill_query expect=refuse
KILL QUERY WHERE 1
-- case optimize expect=refuse
OPTIMIZE TABLE events FINAL
-- case attach expect=refuse
ATTACH TABLE x FROM '/tmp'
-- case create_function expect=refuse
CREATE FUNCTION f AS x -> x
-- case create_view expect=refuse
CREATE VIEW v AS SELECT * FROM events
-- case create_dictionary expect=refuse
CREATE DICTIONARY d (k UInt64) PRIMARY KEY k SOURCE(CLICKHOUSE(TABLE 'x')) LAYOUT(FLAT()) LIFETIME(0)
-- case create_user expect=refuse
CREATE USER u IDENTIFIED BY 'p'
-- case grant_to_user expect=refuse
GRANT SELECT ON *.* TO k_0001
-- case grant_svc expect=refuse
GRANT SELECT ON _svc.* TO analyst
-- case grant_other_org expect=refuse
GRANT SELECT ON o_fedcba9876543210fedcba9876543210__default.* TO analyst
-- case create_table_svc expect=refuse
CREATE TABLE _svc.x ENGINE = ReplicatedRawMergeTree
-- case create_table_other_org expect=refuse
CREATE TABLE o_fedcba9876543210fedcba9876543210__default.x ENGINE = ReplicatedRawMergeTree
-- case alter_svc expect=refuse
ALTER TABLE _svc.ingest_keys MODIFY ORDER BY key
-- case insert_into_svc expect=refuse
INSERT INTO _svc.ingest_keys SELECT 1
-- case insert_into_generation expect=refuse
INSERT INTO events__g1 SELECT 1
-- case describe_svc expect=refuse
DESCRIBE _svc.ingest_keys
-- case explain_svc expect=refuse
EXPLAIN SELECT * FROM _svc.ingest_keys
-- case policy_on_svc expect=refuse
CREATE ROW POLICY p ON _svc.ingest_keys FOR SELECT USING 1 TO analyst
-- case policy_filter_subquery_svc expect=refuse
CREATE ROW POLICY p ON events FOR SELECT USING user.id IN (SELECT 1 FROM _svc.ingest_keys) TO analyst
-- case workload_injection expect=refuse
CREATE WORKLOAD w SETTINGS weight = 1; DROP TABLE x
-- case workload_string_injection expect=refuse
CREATE WORKLOAD w SETTINGS weight = 'a'' OR 1'
-- case profile_injection expect=refuse
CREATE SETTINGS PROFILE p SETTINGS workload = 'w'' SETTINGS readonly = 0' TO analyst
-- case dedup_token_insert_select expect=refuse
INSERT INTO events SELECT 1 AS a SETTINGS insert_deduplication_token = 'svc.x.ingest/0/10-20/t'
-- case dedup_token_header expect=refuse
INSERT INTO events SETTINGS insert_deduplication_token = 'svc.x.ingest/0/10-20/t' SELECT 1 AS a
-- case dedup_off expect=refuse
INSERT INTO events SETTINGS insert_deduplicate = 0 SELECT 1 AS a
-- case dedup_dependent_views expect=refuse
INSERT INTO events SELECT 1 AS a SETTINGS deduplicate_blocks_in_dependent_materialized_views = 1
-- case async_insert expect=refuse
INSERT INTO events SETTINGS async_insert = 1 SELECT 1 AS a
-- case async_insert_dedup expect=refuse
INSERT INTO events SELECT 1 AS a SETTINGS async_insert_deduplicate = 1
-- case wait_async expect=refuse
INSERT INTO events SELECT 1 AS a SETTINGS wait_for_async_insert = 0
-- case insert_quorum expect=refuse
INSERT INTO events SELECT 1 AS a SETTINGS insert_quorum = 2
-- case insert_quorum_parallel expect=refuse
INSERT INTO events SELECT 1 AS a SETTINGS insert_quorum_parallel = 0
-- case dedup_window expect=refuse
INSERT INTO events SELECT 1 AS a SETTINGS non_replicated_deduplication_window = 0
-- case replicated_dedup_window expect=refuse
INSERT INTO events SELECT 1 AS a SETTINGS replicated_deduplication_window = 0
-- case dedup_token_select expect=refuse
SELECT 1 SETTINGS insert_deduplication_token = 'x'
-- case compatibility expect=refuse
SELECT 1 SETTINGS compatibility = '23.1'
-- case deleted_rows expect=refuse
SELECT * FROM events SETTINGS apply_deleted_mask = 0
-- case display_secrets expect=refuse
SELECT 1 SETTINGS format_display_secrets_in_show_and_select = 1
-- case user_limit expect=refuse
SELECT 1 SETTINGS max_memory_usage_for_user = 0
-- case url_settings expect=refuse
SELECT 1 SETTINGS http_max_tries = 100
-- case object_storage expect=refuse
SELECT 1 SETTINGS s3_max_connections = 1000
-- case engine_output expect=refuse
SELECT 1 SETTINGS output_format_json_array_of_rows = 1
-- case hidden_columns expect=refuse
SELECT * FROM events SETTINGS asterisk_include_materialized_columns = 1
-- case priority expect=refuse
SELECT 1 SETTINGS priority = 1
-- case uppercase_denied expect=refuse
SELECT 1 SETTINGS Readonly = 0
-- case insert_header_compatibility expect=refuse
INSERT INTO events SETTINGS compatibility = '23.1' SELECT * FROM events
-- case passed_setting_ok expect=ok
SELECT 1 SETTINGS optimize_throw_if_noop = 1, join_any_take_last_row = 1, input_format_null_as_default = 'x'
-- case insert_passed_setting_ok expect=ok
INSERT INTO events SETTINGS insert_null_as_default = 1 SELECT * FROM events SETTINGS optimize_on_insert = 0
