-- case insert_copy
INSERT INTO events SELECT * FROM events WHERE ts < '2023-01-01'
-- case insert_rollup
INSERT INTO events SELECT toDate(ts::DateTime) AS day, event, count() AS c FROM events GROUP BY day, event
-- case insert_with_settings
INSERT INTO users SELECT * FROM users SETTINGS max_execution_time = 120
-- case insert_cte
INSERT INTO users WITH s AS (SELECT user.id AS id, any(user.name) AS name FROM events GROUP BY id) SELECT * FROM s
-- case insert_values
INSERT INTO events VALUES ('{"a": 1}')
-- case create_table
CREATE TABLE clicks ENGINE = ReplicatedRawMergeTree ORDER BY (user.id, toDate(ts))
-- case create_table_plain
CREATE TABLE IF NOT EXISTS audit ENGINE = ReplicatedRawMergeTree
-- case alter_key
ALTER TABLE events MODIFY ORDER BY (event, toStartOfHour(ts::DateTime))
-- case create_role
CREATE ROLE support
-- case grant
GRANT SELECT(user, ts, event), INSERT ON default.events TO analyst
-- case row_policy
CREATE ROW POLICY eu_support ON events FOR SELECT USING region = 'eu' TO analyst
-- case workload
CREATE WORKLOAD reports IN all SETTINGS max_concurrent_threads = 8 FOR cpu
-- case resource
CREATE RESOURCE cpu (MASTER THREAD, WORKER THREAD)
-- case profile
CREATE SETTINGS PROFILE support SETTINGS workload = 'reports' READONLY TO analyst
-- case drop_role
DROP ROLE IF EXISTS support
