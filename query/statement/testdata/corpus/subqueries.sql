-- case in_subquery
SELECT count() FROM events WHERE user.id::UInt64 IN (SELECT id::UInt64 FROM users WHERE plan = 'pro')
-- case not_in_subquery
SELECT count() FROM events WHERE user.id::UInt64 NOT IN (SELECT id::UInt64 FROM users WHERE banned)
-- case global_in
SELECT count() FROM events WHERE user.id::UInt64 GLOBAL IN (SELECT id::UInt64 FROM users)
-- case scalar_subquery
SELECT count() / (SELECT count() FROM events) AS share FROM events WHERE event = 'click'
-- case exists
SELECT count() FROM users AS u WHERE EXISTS (SELECT 1 FROM events AS e WHERE e.user.id::UInt64 = u.id::UInt64)
-- case from_subquery
SELECT avg(c) FROM (SELECT user.id, count() AS c FROM events GROUP BY user.id)
-- case from_subquery_alias
SELECT t.c FROM (SELECT count() AS c FROM events) AS t
-- case nested_three
SELECT max(c) FROM (SELECT c FROM (SELECT user.id, count() AS c FROM events GROUP BY user.id) WHERE c > 1)
-- case subquery_star_paths
SELECT user.id FROM (SELECT * FROM events WHERE region = 'eu') LIMIT 10
-- case tuple_in
SELECT count() FROM events WHERE (region, team) IN (('eu', 'a'), ('us', 'b'))
-- case tuple_in_subquery
SELECT count() FROM events WHERE (region, team) IN (SELECT region, team FROM users)
-- case any_subquery
SELECT count() FROM events WHERE amount::Float64 > (SELECT avg(amount::Float64) FROM events)
-- case subquery_in_select_list
SELECT region, (SELECT count() FROM users) AS total_users FROM events GROUP BY region
-- case correlated_scalar
SELECT u.id, (SELECT count() FROM events AS e WHERE e.user.id::UInt64 = u.id::UInt64) FROM users AS u
-- case parenthesized_union
(SELECT 1) UNION ALL (SELECT 2)
