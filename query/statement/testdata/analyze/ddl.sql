-- case create_table
CREATE TABLE clicks ENGINE = ReplicatedRawMergeTree
-- case create_table_key
CREATE TABLE IF NOT EXISTS clicks ENGINE = ReplicatedRawMergeTree ORDER BY (user.id, toDate(ts))
-- case create_table_key_single
CREATE TABLE analytics.clicks ENGINE = ReplicatedRawMergeTree ORDER BY ts
-- case create_table_tuple_empty
CREATE TABLE clicks ENGINE = ReplicatedRawMergeTree() ORDER BY tuple()
-- case create_table_exists
CREATE TABLE events ENGINE = ReplicatedRawMergeTree
-- case create_table_exists_ok
CREATE TABLE IF NOT EXISTS events ENGINE = ReplicatedRawMergeTree
-- case create_table_engine
CREATE TABLE clicks ENGINE = MergeTree ORDER BY ts
-- case create_table_columns
CREATE TABLE clicks (a Int64, b String) ENGINE = ReplicatedRawMergeTree
-- case create_table_args
CREATE TABLE clicks ENGINE = ReplicatedRawMergeTree('/path', 'r1')
-- case create_table_as_select
CREATE TABLE clicks ENGINE = ReplicatedRawMergeTree AS SELECT * FROM events
-- case create_table_partition
CREATE TABLE clicks ENGINE = ReplicatedRawMergeTree PARTITION BY toYYYYMM(ts) ORDER BY ts
-- case create_table_settings
CREATE TABLE clicks ENGINE = ReplicatedRawMergeTree ORDER BY ts SETTINGS index_granularity = 1024
-- case create_table_desc
CREATE TABLE clicks ENGINE = ReplicatedRawMergeTree ORDER BY ts DESC
-- case create_table_not_admin as=read_write
CREATE TABLE clicks ENGINE = ReplicatedRawMergeTree
-- case create_table_role_key as=roles:auditor
CREATE TABLE clicks ENGINE = ReplicatedRawMergeTree
-- case create_table_orgadmin as=orgadmin
CREATE TABLE clicks ENGINE = ReplicatedRawMergeTree
-- case create_table_bad_name
CREATE TABLE click__g1 ENGINE = ReplicatedRawMergeTree
-- case create_table_other_db
CREATE TABLE nope.clicks ENGINE = ReplicatedRawMergeTree
-- case create_table_system
CREATE TABLE system.clicks ENGINE = ReplicatedRawMergeTree
-- case create_table_on_cluster
CREATE TABLE clicks ON CLUSTER 'default' ENGINE = ReplicatedRawMergeTree
-- case create_table_aggregate_key
CREATE TABLE clicks ENGINE = ReplicatedRawMergeTree ORDER BY count()
-- case create_table_subquery_key
CREATE TABLE clicks ENGINE = ReplicatedRawMergeTree ORDER BY (SELECT 1)
-- case create_table_garbage
CREATE TABLE clicks ENGINE = ReplicatedRawMergeTree ORDER BY a b c
-- case create_or_replace_table
CREATE OR REPLACE TABLE clicks ENGINE = ReplicatedRawMergeTree
-- case alter_order_by
ALTER TABLE events MODIFY ORDER BY (user.id, toStartOfHour(ts::DateTime))
-- case alter_order_by_single
ALTER TABLE analytics.daily MODIFY ORDER BY day
-- case alter_order_by_missing_table
ALTER TABLE nope MODIFY ORDER BY a
-- case alter_order_by_remove
ALTER TABLE events MODIFY ORDER BY tuple()
-- case alter_not_admin as=read_write
ALTER TABLE events MODIFY ORDER BY a
-- case alter_other
ALTER TABLE events DELETE WHERE 1
-- case alter_on_cluster
ALTER TABLE events ON CLUSTER 'default' MODIFY ORDER BY a
-- case drop_table
DROP TABLE events
-- case truncate
TRUNCATE TABLE events
-- case show_tables
SHOW TABLES
-- case multi
CREATE ROLE a; CREATE ROLE b
-- case empty
;
