-- case create_role
CREATE ROLE reader
-- case create_role_if_not_exists_existing
CREATE ROLE IF NOT EXISTS analyst
-- case create_role_existing
CREATE ROLE analyst
-- case create_role_on_cluster
CREATE ROLE reader ON CLUSTER 'default'
-- case create_role_other_cluster
CREATE ROLE reader ON CLUSTER 'prod'
-- case create_role_user_collision
CREATE ROLE k_0001
-- case create_role_settings
CREATE ROLE reader SETTINGS max_threads = 1
-- case create_role_two
CREATE ROLE a, b
-- case create_role_not_admin as=read_write
CREATE ROLE reader
-- case create_role_member as=member
CREATE ROLE reader
-- case create_role_orgadmin as=orgadmin
CREATE ROLE reader
-- case drop_role
DROP ROLE analyst
-- case drop_role_missing
DROP ROLE nobody
-- case drop_role_if_exists_missing
DROP ROLE IF EXISTS nobody
-- case drop_role_on_cluster_no_if_exists
DROP ROLE analyst ON CLUSTER 'default'
-- case drop_role_on_cluster
DROP ROLE IF EXISTS analyst ON CLUSTER 'default'
-- case drop_role_two
DROP ROLE analyst, writer
-- case drop_user
DROP USER k_0001
-- case grant_select
GRANT SELECT ON default.events TO analyst
-- case grant_columns_and_insert
GRANT SELECT(user, ts), INSERT ON events TO analyst, writer
-- case grant_db_wildcard
GRANT SELECT ON analytics.* TO partner
-- case grant_all_wildcard
GRANT SELECT ON *.* TO auditor
-- case grant_on_cluster
GRANT ON CLUSTER 'default' SELECT ON events TO analyst
-- case grant_other_cluster
GRANT ON CLUSTER 'prod' SELECT ON events TO analyst
-- case grant_all
GRANT ALL ON *.* TO analyst
-- case grant_alter
GRANT ALTER ON events TO analyst
-- case grant_option
GRANT SELECT ON events TO analyst WITH GRANT OPTION
-- case grant_role_inheritance
GRANT analyst TO writer
-- case grant_to_user
GRANT SELECT ON events TO k_0001
-- case grant_unknown_role
GRANT SELECT ON events TO nobody
-- case grant_unknown_db
GRANT SELECT ON nope.* TO analyst
-- case grant_system
GRANT SELECT ON system.* TO analyst
-- case grant_not_admin as=read_only
GRANT SELECT ON events TO analyst
-- case revoke
REVOKE SELECT ON events FROM analyst
-- case policy_create
CREATE ROW POLICY eu_team ON events FOR SELECT USING team = 'eu' TO analyst
-- case policy_restrictive_before
CREATE ROW POLICY IF NOT EXISTS no_bots ON default.events AS RESTRICTIVE FOR SELECT USING NOT startsWith(user.agent, 'bot') TO analyst, eu
-- case policy_restrictive_after
CREATE ROW POLICY OR REPLACE no_bots ON events FOR SELECT USING user.agent != 'bot' AS RESTRICTIVE TO eu
-- case policy_exists
CREATE ROW POLICY eu_only ON events FOR SELECT USING 1 TO eu
-- case policy_on_cluster_before
CREATE ROW POLICY p ON CLUSTER 'default' ON default.events FOR SELECT USING team = 'a' TO analyst
-- case policy_on_cluster_after
CREATE ROW POLICY p ON default.events ON CLUSTER 'default' FOR SELECT USING team = 'a' TO analyst
-- case policy_on_cluster_unqualified
CREATE ROW POLICY p ON events ON CLUSTER 'default' FOR SELECT USING team = 'a' TO analyst
-- case policy_on_cluster_replicated cluster=replicated
CREATE ROW POLICY p ON default.events ON CLUSTER 'default' FOR SELECT USING team = 'a' TO analyst
-- case policy_on_cluster_replicated_ine cluster=replicated
CREATE ROW POLICY IF NOT EXISTS p ON default.events ON CLUSTER 'default' FOR SELECT USING team = 'a' TO analyst
-- case policy_other_cluster
CREATE ROW POLICY p ON default.events ON CLUSTER 'prod' FOR SELECT USING team = 'a' TO analyst
-- case policy_cross_db
CREATE ROW POLICY p ON analytics.daily FOR SELECT USING 1 TO partner
-- case policy_wildcard
CREATE ROW POLICY p ON default.* FOR SELECT USING 1 TO analyst
-- case policy_subquery
CREATE ROW POLICY p ON events FOR SELECT USING user.id IN (SELECT id FROM users) TO analyst
-- case policy_aggregate
CREATE ROW POLICY p ON events FOR SELECT USING count() > 1 TO analyst
-- case policy_dict
CREATE ROW POLICY p ON events FOR SELECT USING dictGet('d', 'a', 1) = 1 TO analyst
-- case policy_role_without_select
CREATE ROW POLICY p ON events FOR SELECT USING 1 TO partner
-- case policy_unknown_role
CREATE ROW POLICY p ON events FOR SELECT USING 1 TO nobody
-- case policy_user_target
CREATE ROW POLICY p ON events FOR SELECT USING 1 TO k_0001
-- case policy_all
CREATE ROW POLICY p ON events FOR SELECT USING 1 TO ALL
-- case policy_all_except
CREATE ROW POLICY p ON events FOR SELECT USING 1 TO ALL EXCEPT analyst
-- case policy_duplicate_roles
CREATE ROW POLICY p ON events FOR SELECT USING 1 TO analyst, analyst
-- case policy_no_to
CREATE ROW POLICY p ON events FOR SELECT USING 1
-- case policy_for_insert
CREATE ROW POLICY p ON events FOR INSERT USING 1 TO analyst
-- case policy_storage
CREATE ROW POLICY p ON events IN replicated FOR SELECT USING 1 TO analyst
-- case policy_system
CREATE ROW POLICY p ON system.tables FOR SELECT USING 1 TO analyst
-- case policy_internal cluster=internal
CREATE ROW POLICY p ON events FOR SELECT USING 1 TO analyst
-- case policy_not_admin as=read_write
CREATE ROW POLICY p ON events FOR SELECT USING 1 TO analyst
-- case policy_alter
ALTER ROW POLICY eu_only ON events FOR SELECT USING 1 TO eu
-- case policy_drop
DROP ROW POLICY eu_only ON events
-- case policy_drop_missing
DROP ROW POLICY nope ON events
-- case policy_drop_if_exists
DROP ROW POLICY IF EXISTS nope ON default.events ON CLUSTER 'default'
-- case policy_drop_replicated_on_cluster cluster=replicated
DROP ROW POLICY eu_only ON default.events ON CLUSTER 'default'
-- case policy_drop_two
DROP ROW POLICY eu_only, no_test ON events
-- case workload_create
CREATE WORKLOAD all
-- case workload_create_child
CREATE WORKLOAD IF NOT EXISTS analytics ON CLUSTER 'default' IN all SETTINGS max_concurrent_threads = 4 FOR cpu, weight = 2, priority = -1
-- case workload_replace
CREATE OR REPLACE WORKLOAD analytics IN all SETTINGS max_io_requests = 10 FOR disk_io
-- case workload_keeper_on_cluster cluster=keeper
CREATE WORKLOAD analytics ON CLUSTER 'default' IN all
-- case workload_keeper cluster=keeper
CREATE WORKLOAD analytics IN all
-- case workload_other_cluster
CREATE WORKLOAD analytics ON CLUSTER 'prod'
-- case workload_backslash
CREATE WORKLOAD `an\alytics`
-- case workload_expression_setting
CREATE WORKLOAD analytics SETTINGS weight = 1 + 1
-- case workload_multi
CREATE WORKLOAD a; CREATE WORKLOAD b
-- case workload_internal cluster=internal
CREATE WORKLOAD analytics
-- case workload_not_admin as=read_only
CREATE WORKLOAD analytics
-- case workload_shared_engine cluster=shared
CREATE WORKLOAD analytics
-- case resource_shared_engine cluster=shared
CREATE RESOURCE cpu (MASTER THREAD, WORKER THREAD)
-- case workload_drop_shared_engine cluster=shared
DROP WORKLOAD IF EXISTS analytics
-- case workload_drop
DROP WORKLOAD IF EXISTS analytics ON CLUSTER 'default'
-- case resource_create
CREATE RESOURCE cpu (MASTER THREAD, WORKER THREAD)
-- case resource_disks
CREATE OR REPLACE RESOURCE io ON CLUSTER 'default' (READ DISK s3, WRITE DISK s3, READ ANY DISK, WRITE ANY DISK)
-- case resource_memory
CREATE RESOURCE mem (MEMORY RESERVATION)
-- case resource_query
CREATE RESOURCE q (QUERY)
-- case resource_drop
DROP RESOURCE cpu
-- case profile_create
CREATE SETTINGS PROFILE reports SETTINGS workload = 'analytics' READONLY, use_concurrency_control = 1 CONST TO analyst
-- case profile_replace_on_cluster
CREATE SETTINGS PROFILE OR REPLACE analysts ON CLUSTER 'default' SETTINGS workload = 'adhoc' TO analyst, eu
-- case profile_replicated_on_cluster cluster=replicated
CREATE SETTINGS PROFILE p ON CLUSTER 'default' SETTINGS workload = 'adhoc' TO analyst
-- case profile_exists
CREATE SETTINGS PROFILE analysts SETTINGS workload = 'x' TO analyst
-- case profile_other_setting
CREATE SETTINGS PROFILE p SETTINGS max_memory_usage = 1000 TO analyst
-- case profile_bad_value
CREATE SETTINGS PROFILE p SETTINGS use_concurrency_control = 2 TO analyst
-- case profile_empty_workload
CREATE SETTINGS PROFILE p SETTINGS workload = '' TO analyst
-- case profile_min_max
CREATE SETTINGS PROFILE p SETTINGS use_concurrency_control = 1 MIN 0 TO analyst
-- case profile_inherit
CREATE SETTINGS PROFILE p SETTINGS INHERIT 'default' TO analyst
-- case profile_no_to
CREATE SETTINGS PROFILE p SETTINGS workload = 'x'
-- case profile_user_target
CREATE SETTINGS PROFILE p SETTINGS workload = 'x' TO k_0001
-- case profile_none
CREATE SETTINGS PROFILE p SETTINGS workload = 'x' TO NONE
-- case profile_internal cluster=internal
CREATE SETTINGS PROFILE p SETTINGS workload = 'x' TO analyst
-- case profile_workflow as=workflow
CREATE SETTINGS PROFILE p SETTINGS workload = 'x' TO analyst
-- case profile_drop
DROP SETTINGS PROFILE analysts
-- case profile_drop_missing
DROP SETTINGS PROFILE nope
-- case profile_alter
ALTER SETTINGS PROFILE analysts SETTINGS workload = 'x'
