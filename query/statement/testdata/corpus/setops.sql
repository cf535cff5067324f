-- case union_all
SELECT 'events' AS src, count() FROM events UNION ALL SELECT 'users', count() FROM users
-- case union_distinct
SELECT region FROM events UNION DISTINCT SELECT country FROM users
-- case union_plain
SELECT region FROM events UNION SELECT country FROM users
-- case union_three
SELECT 1 AS x UNION ALL SELECT 2 UNION ALL SELECT 3
-- case union_order_limit
SELECT region AS r FROM events UNION ALL SELECT country FROM users ORDER BY r LIMIT 10
-- case intersect
SELECT user.id FROM events WHERE event = 'signup' INTERSECT SELECT user.id FROM events WHERE event = 'purchase'
-- case except
SELECT user.id FROM events WHERE event = 'signup' EXCEPT SELECT user.id FROM events WHERE event = 'purchase'
-- case union_in_subquery
SELECT count() FROM (SELECT user.id AS u FROM events UNION ALL SELECT id FROM users)
