-- case plain as=roles:eu expect=ok
SELECT * FROM events
-- case qualified as=roles:eu expect=ok
SELECT * FROM default.events
-- case subquery as=roles:eu expect=ok
SELECT * FROM (SELECT * FROM events)
-- case cte as=roles:eu expect=ok
WITH x AS (SELECT * FROM events) SELECT * FROM x
-- case cte_same_name as=roles:eu expect=ok
WITH events AS (SELECT * FROM events) SELECT * FROM events
-- case union as=roles:eu expect=ok
SELECT 1 UNION ALL SELECT count() FROM events
-- case in_subquery as=roles:eu expect=ok
SELECT 1 WHERE 'x' IN (SELECT user.name FROM events)
-- case exists as=roles:eu expect=ok
SELECT EXISTS (SELECT 1 FROM events WHERE region = 'us')
-- case join_self as=roles:eu expect=ok
SELECT count() FROM events AS a JOIN events AS b ON a.user.id::Int64 = b.user.id::Int64
-- case alias_hijack_where as=roles:eu expect=ok
SELECT CAST('{"region":"eu","user":{"name":"x"}}' AS JSON) AS region FROM events
-- case alias_doc as=roles:eu expect=refuse
SELECT CAST('{"region":"eu"}' AS JSON) AS doc FROM events
-- case alias_doc_inline as=roles:eu expect=refuse
SELECT count() FROM events WHERE (CAST('{}' AS JSON) AS doc) IS NOT NULL
-- case lambda_doc as=roles:eu expect=refuse
SELECT arrayMap(doc -> doc, [1]) FROM events
-- case with_doc as=roles:eu expect=refuse
WITH 1 AS doc SELECT doc FROM events
-- case cte_doc as=roles:eu expect=refuse
WITH doc AS (SELECT 1) SELECT * FROM doc
-- case table_alias_doc as=roles:eu expect=refuse
SELECT count() FROM events AS doc
-- case alias_table_name as=roles:eu expect=refuse
SELECT 1 AS events FROM events
-- case lambda_table_alias as=roles:eu expect=refuse
SELECT arrayMap(e -> e.doc, [1]) FROM events AS e
-- case merge_function as=roles:eu expect=refuse
SELECT * FROM merge('default', '^events')
-- case view_function as=roles:eu expect=refuse
SELECT * FROM view(SELECT * FROM events)
-- case generation as=roles:eu expect=refuse
SELECT * FROM events__g3
-- case final as=roles:eu expect=ok
SELECT * FROM events FINAL
-- case prewhere as=roles:eu expect=ok
SELECT * FROM events PREWHERE 1
-- case correlated_doc as=roles:eu expect=ok
SELECT (SELECT doc) FROM events
-- case doc_path as=roles:eu expect=ok
SELECT doc, events.doc FROM events
-- case generate_random_doc as=roles:eu expect=ok
SELECT doc FROM events, generateRandom('doc String') LIMIT 1
-- case system_views as=roles:eu expect=ok
SELECT * FROM system.tables
-- case explain as=roles:eu expect=refuse
EXPLAIN SYNTAX SELECT * FROM events
-- case column_grant_star as=roles:analyst expect=refuse
SELECT * FROM events
-- case column_grant_doc as=roles:analyst expect=refuse
SELECT doc FROM events
-- case column_grant_qualified_doc as=roles:analyst expect=refuse
SELECT e.doc FROM events AS e
-- case column_grant_correlated_doc as=roles:analyst expect=refuse
SELECT (SELECT doc) FROM events
-- case column_grant_tuple_star as=roles:analyst expect=refuse
SELECT tuple(*) FROM events
-- case column_grant_subquery_star as=roles:analyst expect=refuse
SELECT user FROM (SELECT * FROM events)
-- case column_grant_columns_matcher as=roles:analyst expect=refuse
SELECT COLUMNS('.*') FROM events
-- case column_grant_except as=roles:analyst expect=refuse
SELECT * EXCEPT (secret) FROM events
-- case column_grant_where as=roles:analyst expect=refuse
SELECT count() FROM events WHERE secret = 'x'
-- case column_grant_order as=roles:analyst expect=refuse
SELECT user FROM events ORDER BY secret
-- case column_grant_lambda as=roles:analyst expect=refuse
SELECT arrayMap(x -> secret, [1]) FROM events
-- case column_grant_ok as=roles:analyst expect=ok
SELECT user.id, region, team FROM events WHERE event = 'click'
-- case role_other_table as=roles:analyst expect=refuse
SELECT * FROM analytics.daily
-- case role_system_db_table as=roles:analyst expect=ok db=system
SELECT name FROM tables
-- case role_ddl as=roles:auditor expect=refuse
CREATE ROLE r
-- case role_grant_self as=roles:analyst expect=refuse
GRANT SELECT ON *.* TO analyst
-- case role_policy_drop as=roles:eu expect=refuse
DROP ROW POLICY eu_only ON events
-- case role_profile_lock as=roles:eu expect=refuse
SELECT * FROM events SETTINGS use_concurrency_control = 0
-- case role_insert_ungranted as=roles:analyst expect=refuse
INSERT INTO events SELECT * FROM events
-- case describe_scalar_side_channel as=roles:eu expect=ok
DESCRIBE (SELECT toFixedString('', (SELECT length(user.name) FROM events LIMIT 1)) AS x)
