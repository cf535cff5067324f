-- case granted_columns as=roles:analyst
SELECT user.id, count() FROM events WHERE region = 'eu' GROUP BY user.id
-- case ungranted_column as=roles:analyst
SELECT user.id, secret FROM events
-- case star_with_column_grant as=roles:analyst
SELECT * FROM events
-- case qualified_star_with_column_grant as=roles:analyst
SELECT e.* FROM events AS e
-- case function_star_with_column_grant as=roles:analyst
SELECT toJSONString(*) FROM events
-- case count_star_with_column_grant as=roles:analyst
SELECT count(*) FROM events
-- case ungranted_table as=roles:analyst
SELECT count() FROM sessions
-- case ungranted_in_subquery as=roles:analyst
SELECT count() FROM events WHERE user.id IN (SELECT id FROM sessions)
-- case ungranted_in_cte as=roles:analyst
WITH s AS (SELECT * FROM sessions) SELECT count() FROM s
-- case ungranted_via_union as=roles:analyst
SELECT user.id FROM events UNION ALL SELECT id FROM sessions
-- case ungranted_column_in_where as=roles:analyst
SELECT count() FROM events WHERE secret = 1
-- case ungranted_column_in_join as=roles:analyst
SELECT count() FROM events AS e JOIN users AS u ON e.password = u.id
-- case db_wildcard as=roles:writer
SELECT count() FROM sessions
-- case db_wildcard_other_db as=roles:writer
SELECT count() FROM analytics.daily
-- case all_wildcard as=roles:auditor
SELECT * FROM analytics.daily
-- case two_roles as=roles:analyst,partner
SELECT count() FROM analytics.sessions
-- case no_roles_grants as=roles:empty
SELECT 1
-- case no_roles_table as=roles:empty
SELECT count() FROM events
-- case system_tables_filtered as=roles:analyst
SELECT name FROM system.tables
-- case system_databases_filtered as=roles:partner
SELECT name FROM system.databases
-- case profile_applied as=roles:analyst
SELECT count() FROM events
-- case profile_readonly_same_value as=roles:analyst
SELECT count() FROM events SETTINGS workload = 'analytics'
-- case profile_readonly_changed as=roles:analyst
SELECT count() FROM events SETTINGS workload = 'other'
-- case profile_const_in_subquery as=roles:eu
SELECT count() FROM (SELECT * FROM events SETTINGS use_concurrency_control = 0)
-- case profile_writable_changed as=roles:eu
SELECT count() FROM events SETTINGS workload = 'adhoc'
-- case workload_read_only_key as=read_only
SELECT count() FROM events SETTINGS workload = 'reports'
-- case member_reads as=member
SELECT count() FROM events
-- case workflow_reads as=workflow
SELECT count() FROM events
-- case workload_select_shared_engine cluster=shared
SELECT count() FROM events SETTINGS workload = 'analytics'
