-- case permissive_and_restrictive as=roles:eu
SELECT user.id, region FROM events
-- case restrictive_alone as=roles:restricted
SELECT count() FROM events
-- case no_matching_policy as=roles:analyst
SELECT count() FROM events
-- case permission_key_unfiltered as=read_only
SELECT count() FROM events
-- case session_unfiltered as=orgadmin
SELECT count() FROM events
-- case policy_in_subquery as=roles:eu
SELECT count() FROM (SELECT * FROM events) AS s
-- case policy_in_join as=roles:eu
SELECT count() FROM events AS e JOIN users AS u ON e.user.id::Int64 = u.id::Int64
-- case policy_in_cte as=roles:eu
WITH x AS (SELECT * FROM events) SELECT count() FROM x
-- case policy_in_union as=roles:eu
SELECT 1 FROM events UNION ALL SELECT 2 FROM events
-- case policy_in_in as=roles:eu
SELECT 1 WHERE 1 IN (SELECT count() FROM events)
-- case policy_in_scalar as=roles:eu
SELECT (SELECT count() FROM events) AS c
-- case policy_alias_hijack as=roles:eu
SELECT CAST('{"region":"eu"}' AS JSON) AS region FROM events WHERE region = 'eu'
-- case policy_final_sample as=roles:eu
SELECT count() FROM events FINAL
-- case policy_prewhere as=roles:eu
SELECT count() FROM events PREWHERE team = 'a' WHERE user.id = 1
-- case policy_explain as=roles:eu
EXPLAIN SELECT count() FROM events
-- case policy_describe as=roles:eu
DESCRIBE events
-- case policy_insert_select as=roles:writer
INSERT INTO events SELECT * FROM events
-- case policy_system_parts as=roles:eu
SELECT table, sum(rows) FROM system.parts GROUP BY table
