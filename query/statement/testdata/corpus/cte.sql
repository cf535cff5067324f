-- case cte_basic
WITH pro AS (SELECT id FROM users WHERE plan = 'pro') SELECT count() FROM events WHERE user.id IN (SELECT id FROM pro)
-- case cte_two
WITH a AS (SELECT user.id AS uid FROM events WHERE event = 'signup'), b AS (SELECT user.id AS uid FROM events WHERE event = 'purchase') SELECT count() FROM a WHERE uid IN (SELECT uid FROM b)
-- case cte_chained
WITH daily AS (SELECT toDate(ts::DateTime) AS d, count() AS c FROM events GROUP BY d), weekly AS (SELECT toStartOfWeek(d) AS w, sum(c) AS c FROM daily GROUP BY w) SELECT * FROM weekly ORDER BY w
-- case cte_scalar
WITH 0.95 AS q SELECT quantile(q)(duration_ms::Float64) FROM events
-- case cte_scalar_expression
WITH toDate('2024-01-01') AS start SELECT count() FROM events WHERE ts::DateTime >= start
-- case cte_scalar_subquery
WITH (SELECT max(ts::DateTime) FROM events) AS last SELECT count() FROM events WHERE ts::DateTime > last - INTERVAL 1 DAY
-- case cte_star
WITH recent AS (SELECT * FROM events WHERE ts > '2024-06-01') SELECT event, count() FROM recent GROUP BY event
-- case cte_join
WITH u AS (SELECT id::UInt64 AS id, plan FROM users) SELECT u.plan, count() FROM events AS e JOIN u ON e.user.id::UInt64 = u.id GROUP BY u.plan
-- case cte_union
WITH x AS (SELECT 1 AS v) SELECT v FROM x UNION ALL SELECT v + 1 FROM x
-- case cte_lambda
WITH (x -> x * 2) AS double SELECT double(3)
-- case cte_in_subquery
SELECT count() FROM (WITH t AS (SELECT * FROM events) SELECT * FROM t)
-- case cte_funnel
WITH steps AS (SELECT user.id AS uid, windowFunnel(3600)(ts::DateTime, event = 'view', event = 'cart', event = 'purchase') AS level FROM events GROUP BY uid) SELECT level, count() FROM steps GROUP BY level ORDER BY level
-- case recursive_cte
WITH RECURSIVE r AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM r WHERE n < 10) SELECT * FROM r
