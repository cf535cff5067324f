-- case insert_copy
INSERT INTO events SELECT * FROM events WHERE ts < '2024-01-01'
-- case insert_objects
INSERT INTO events SELECT user.id AS uid, count() AS n FROM events GROUP BY uid
-- case insert_table_keyword
INSERT INTO TABLE default.events SELECT * FROM users
-- case insert_with
INSERT INTO events WITH x AS (SELECT * FROM users) SELECT * FROM x
-- case insert_settings_trailing
INSERT INTO events SELECT * FROM users SETTINGS max_execution_time = 5, max_threads = 2
-- case insert_settings_header
INSERT INTO events SETTINGS max_insert_threads = 2 SELECT * FROM users
-- case insert_settings_denied
INSERT INTO events SELECT * FROM users SETTINGS insert_quorum = 2
-- case insert_values
INSERT INTO events VALUES (1)
-- case insert_format
INSERT INTO events FORMAT JSONEachRow
-- case insert_function_url
INSERT INTO FUNCTION url('http://example.com/x', JSONEachRow, 'a String') SELECT 1
-- case insert_from_url
INSERT INTO events SELECT * FROM url('http://example.com/x', JSONEachRow, 'a String')
-- case insert_columns
INSERT INTO events (a, b) SELECT 1, 2
-- case insert_other_db
INSERT INTO analytics.daily SELECT * FROM events
-- case insert_missing_table
INSERT INTO nope SELECT 1
-- case insert_no_generation
INSERT INTO fresh SELECT * FROM events
-- case insert_read_only as=read_only
INSERT INTO events SELECT * FROM events
-- case insert_write_only as=write_only
INSERT INTO events SELECT * FROM events
-- case insert_read_write as=read_write
INSERT INTO events SELECT * FROM users
-- case insert_member as=member
INSERT INTO events SELECT * FROM users
-- case insert_role_with_insert as=roles:writer
INSERT INTO events SELECT * FROM sessions
-- case insert_role_without_insert as=roles:auditor
INSERT INTO events SELECT * FROM sessions
-- case insert_role_without_select as=roles:writer
INSERT INTO events SELECT * FROM analytics.daily
-- case insert_policy_filters_reads as=roles:eu,writer
INSERT INTO events SELECT * FROM events
-- case insert_workload as=read_write
INSERT INTO events SELECT * FROM users SETTINGS workload = 'etl'
-- case explain_plain
EXPLAIN SELECT count() FROM events WHERE user.id = 1
-- case explain_kinds
EXPLAIN PLAN indexes = 1, actions = 1 SELECT count() FROM events
-- case explain_query_tree
EXPLAIN QUERY TREE SELECT 1
-- case explain_syntax
EXPLAIN SYNTAX SELECT user.id FROM events
-- case explain_estimate
EXPLAIN ESTIMATE SELECT * FROM events
-- case explain_insert
EXPLAIN INSERT INTO events SELECT * FROM events
-- case explain_other_org
EXPLAIN SELECT * FROM o_fedcba9876543210fedcba9876543210__default.events
-- case explain_write_only as=write_only
EXPLAIN SELECT 1
-- case describe_table
DESCRIBE events
-- case describe_table_keyword
DESC TABLE analytics.daily
-- case describe_subquery
DESCRIBE (SELECT user.id AS uid FROM events)
-- case describe_function
DESCRIBE TABLE numbers(10)
-- case describe_system
DESCRIBE system.tables
-- case describe_system_denied
DESCRIBE system.users
-- case show_create
SHOW CREATE TABLE events
-- case show_create_no_key
SHOW CREATE analytics.daily
-- case show_create_missing
SHOW CREATE TABLE nosuch
-- case show_create_system
SHOW CREATE TABLE system.tables
-- case show_create_function
SHOW CREATE TABLE numbers(10)
-- case describe_url
DESCRIBE url('http://example.com', CSV)
-- case describe_missing
DESCRIBE nope
-- case describe_role_ungranted as=roles:analyst
DESCRIBE sessions
-- case describe_role_column_grant as=roles:analyst
DESCRIBE events
-- case describe_system_db db=system
DESCRIBE tables
-- case select_system_db db=system
SELECT name FROM databases
