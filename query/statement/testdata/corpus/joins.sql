-- case inner_join
SELECT e.user.id, u.plan, count() FROM events AS e INNER JOIN users AS u ON e.user.id::UInt64 = u.id::UInt64 GROUP BY 1, 2
-- case left_join
SELECT u.id, count(e.user.id) FROM users AS u LEFT JOIN events AS e ON u.id::UInt64 = e.user.id::UInt64 GROUP BY u.id
-- case right_join
SELECT count() FROM events AS e RIGHT JOIN users AS u ON e.user.id::UInt64 = u.id::UInt64
-- case full_join
SELECT count() FROM events AS e FULL OUTER JOIN users AS u ON e.user.id::UInt64 = u.id::UInt64
-- case cross_join
SELECT count() FROM events AS e CROSS JOIN numbers(3) AS n
-- case comma_join
SELECT count() FROM events AS e, users AS u WHERE e.user.id::UInt64 = u.id::UInt64
-- case any_left_join
SELECT e.url, u.plan FROM events AS e ANY LEFT JOIN users AS u ON e.user.id::UInt64 = u.id::UInt64
-- case left_any_join
SELECT e.url, u.plan FROM events AS e LEFT ANY JOIN users AS u ON e.user.id::UInt64 = u.id::UInt64
-- case semi_join
SELECT count() FROM events AS e LEFT SEMI JOIN users AS u ON e.user.id::UInt64 = u.id::UInt64
-- case anti_join
SELECT count() FROM events AS e LEFT ANTI JOIN users AS u ON e.user.id::UInt64 = u.id::UInt64
-- case asof_join
SELECT e.user.id, s.id FROM events AS e ASOF JOIN sessions AS s ON e.user.id::UInt64 = s.user_id::UInt64 AND e.ts::DateTime >= s.started::DateTime
-- case global_join
SELECT count() FROM events AS e GLOBAL LEFT JOIN users AS u ON e.user.id::UInt64 = u.id::UInt64
-- case using_join
SELECT count() FROM events AS e JOIN users AS u USING (id)
-- case join_subquery
SELECT e.region, s.c FROM events AS e JOIN (SELECT user.id::UInt64 AS uid, count() AS c FROM events GROUP BY uid) AS s ON e.user.id::UInt64 = s.uid
-- case join_two_subqueries
SELECT a.d, a.c, b.c FROM (SELECT toDate(ts::DateTime) AS d, count() AS c FROM events GROUP BY d) AS a JOIN (SELECT toDate(ts::DateTime) AS d, count() AS c FROM sessions GROUP BY d) AS b ON a.d = b.d
-- case join_three
SELECT count() FROM events AS e JOIN users AS u ON e.user.id::UInt64 = u.id::UInt64 JOIN sessions AS s ON s.user_id::UInt64 = u.id::UInt64
-- case join_cross_db
SELECT count() FROM events AS e JOIN analytics.daily AS d ON toDate(e.ts::DateTime) = d.day::Date
-- case join_unqualified_ambiguous
SELECT plan FROM events AS e JOIN users AS u ON e.user.id::UInt64 = u.id::UInt64
-- case join_on_multiple
SELECT count() FROM events AS a JOIN events AS b ON a.session.id = b.session.id AND a.ts < b.ts
-- case paste_join
SELECT * FROM events AS a PASTE JOIN users AS b
-- case join_table_function
SELECT n.number, count() FROM numbers(24) AS n LEFT JOIN events AS e ON toHour(e.ts::DateTime) = n.number GROUP BY n.number
-- case self_join_unaliased
SELECT count() FROM events JOIN users ON events.user.id::UInt64 = users.id::UInt64
-- case db_qualified_column
SELECT default.events.user.id FROM default.events LIMIT 1
