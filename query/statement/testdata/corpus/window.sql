-- case row_number
SELECT user.id, ts, row_number() OVER (PARTITION BY user.id ORDER BY ts) AS rn FROM events
-- case rank
SELECT url, c, rank() OVER (ORDER BY c DESC) FROM (SELECT url, count() AS c FROM events GROUP BY url)
-- case dense_rank
SELECT region, dense_rank() OVER (PARTITION BY region ORDER BY amount::Float64 DESC) FROM events
-- case running_total
SELECT d, c, sum(c) OVER (ORDER BY d ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS total FROM (SELECT toDate(ts::DateTime) AS d, count() AS c FROM events GROUP BY d)
-- case moving_average
SELECT d, avg(c) OVER (ORDER BY d ROWS BETWEEN 6 PRECEDING AND CURRENT ROW) FROM (SELECT toDate(ts::DateTime) AS d, count() AS c FROM events GROUP BY d)
-- case lag_lead
SELECT d, c, lagInFrame(c) OVER (ORDER BY d) AS prev, leadInFrame(c) OVER (ORDER BY d ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS next FROM (SELECT toDate(ts::DateTime) AS d, count() AS c FROM events GROUP BY d)
-- case named_window
SELECT user.id, count() OVER w, max(ts) OVER w FROM events WINDOW w AS (PARTITION BY user.id)
-- case window_with_where
SELECT user.id, row_number() OVER (PARTITION BY user.id ORDER BY ts) AS rn FROM events WHERE event = 'click' WINDOW w AS (ORDER BY ts)
-- case first_value
SELECT user.id, first_value(url) OVER (PARTITION BY user.id ORDER BY ts) FROM events
-- case ntile
SELECT user.id, ntile(4) OVER (ORDER BY amount::Float64) FROM events
-- case qualify
SELECT user.id, ts FROM events QUALIFY row_number() OVER (PARTITION BY user.id ORDER BY ts DESC) = 1
-- case range_frame
SELECT ts, count() OVER (ORDER BY toUnixTimestamp(ts::DateTime) RANGE BETWEEN 3600 PRECEDING AND CURRENT ROW) FROM events
-- case percent_of_total
SELECT region, c, c / sum(c) OVER () AS share FROM (SELECT region, count() AS c FROM events GROUP BY region)
