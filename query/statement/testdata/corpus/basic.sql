-- case count_all
SELECT count() FROM events
-- case count_star
SELECT count(*) FROM events
-- case distinct_users
SELECT uniqExact(user.id) FROM events
-- case approx_users
SELECT uniq(user.id) AS users, uniqCombined(session.id) AS sessions FROM events
-- case group_by_event
SELECT event, count() AS c FROM events GROUP BY event ORDER BY c DESC LIMIT 20
-- case group_by_two
SELECT event, region, count() FROM events GROUP BY event, region ORDER BY event, region
-- case having
SELECT user.id, count() AS c FROM events GROUP BY user.id HAVING c > 100 ORDER BY c DESC
-- case where_and_or
SELECT count() FROM events WHERE (event = 'click' OR event = 'tap') AND region != 'test'
-- case where_in_list
SELECT count() FROM events WHERE event IN ('click', 'view', 'purchase')
-- case where_not_in
SELECT count() FROM events WHERE region NOT IN ('internal', 'test')
-- case where_like
SELECT url, count() FROM events WHERE url LIKE '%/checkout%' GROUP BY url
-- case where_ilike
SELECT count() FROM events WHERE user.agent ILIKE '%bot%'
-- case where_between
SELECT count() FROM events WHERE amount::Float64 BETWEEN 10 AND 100
-- case where_is_null
SELECT count() FROM events WHERE user.email IS NULL
-- case where_is_not_null
SELECT count() FROM events WHERE referrer IS NOT NULL
-- case top_n
SELECT TOP 10 url FROM events
-- case distinct
SELECT DISTINCT event FROM events
-- case limit_offset
SELECT user.id, ts FROM events ORDER BY ts DESC LIMIT 50 OFFSET 100
-- case limit_comma
SELECT user.id FROM events ORDER BY ts LIMIT 100, 50
-- case limit_by
SELECT user.id, url, ts FROM events ORDER BY ts DESC LIMIT 3 BY user.id
-- case sum_avg
SELECT sum(amount::Float64) AS revenue, avg(amount::Float64) AS aov FROM events WHERE event = 'purchase'
-- case min_max
SELECT min(ts), max(ts) FROM events
-- case quantiles
SELECT quantiles(0.5, 0.9, 0.99)(duration_ms::Float64) FROM events
-- case quantile_tdigest
SELECT quantileTDigest(0.95)(duration_ms::Float64) AS p95 FROM events WHERE event = 'request'
-- case median
SELECT median(duration_ms::Float64) FROM events
-- case count_if
SELECT countIf(event = 'error') / count() AS error_rate FROM events
-- case sum_if
SELECT sumIf(amount::Float64, currency = 'EUR') AS eur FROM events
-- case arg_max
SELECT user.id, argMax(plan, ts) AS current_plan FROM events GROUP BY user.id
-- case any_last
SELECT session.id, any(url) AS first_url, anyLast(url) AS last_url FROM events GROUP BY session.id
-- case top_k
SELECT topK(10)(url) FROM events
-- case group_array
SELECT user.id, groupArray(10)(event) FROM events GROUP BY user.id
-- case group_uniq_array
SELECT groupUniqArray(region) FROM events
-- case case_when
SELECT CASE WHEN amount::Float64 > 100 THEN 'large' WHEN amount::Float64 > 10 THEN 'medium' ELSE 'small' END AS bucket, count() FROM events GROUP BY bucket
-- case case_simple
SELECT CASE region WHEN 'eu' THEN 1 WHEN 'us' THEN 2 ELSE 0 END FROM events
-- case multi_if
SELECT multiIf(status::Int32 >= 500, '5xx', status::Int32 >= 400, '4xx', 'ok') AS class, count() FROM events GROUP BY class
-- case if_null
SELECT ifNull(referrer, 'direct') AS ref, count() FROM events GROUP BY ref
-- case coalesce
SELECT coalesce(user.email, user.phone, 'unknown') FROM events LIMIT 10
-- case ternary
SELECT amount::Float64 > 0 ? 'paid' : 'free' AS kind FROM events
-- case string_functions
SELECT lower(user.name), upper(region), length(url), substring(url, 1, 20), concat(region, '-', team) FROM events LIMIT 5
-- case string_concat_op
SELECT region || ':' || team FROM events
-- case extract_domain
SELECT domain(url) AS d, count() FROM events GROUP BY d ORDER BY count() DESC LIMIT 10
-- case url_path
SELECT path(url), cutQueryString(url) FROM events LIMIT 10
-- case regexp
SELECT extract(url, 'utm_source=([^&]+)') AS source, count() FROM events GROUP BY source
-- case match
SELECT count() FROM events WHERE match(user.agent, '(?i)chrome')
-- case split
SELECT splitByChar('/', url) FROM events LIMIT 3
-- case round
SELECT round(avg(amount::Float64), 2) FROM events
-- case math
SELECT abs(delta::Float64), sqrt(x::Float64), pow(2, 10), log(n::Float64 + 1), intDiv(n::Int64, 10) FROM events LIMIT 5
-- case cast_forms
SELECT CAST(user.id AS UInt64), toUInt64(user.id), user.id::UInt64, CAST(user.id, 'String') FROM events LIMIT 5
-- case to_type_or_null
SELECT toInt64OrNull(toString(user.id)), toFloat64OrZero(toString(amount)) FROM events LIMIT 5
-- case nested_paths
SELECT context.device.os.name, context.device.os.version, count() FROM events GROUP BY 1, 2
-- case backtick_paths
SELECT `http.status_code`, `user agent` FROM events LIMIT 10
-- case group_by_position
SELECT region, event, count() FROM events GROUP BY 1, 2 ORDER BY 3 DESC
-- case group_by_all
SELECT region, event, count() FROM events GROUP BY ALL
-- case order_by_all_desc
SELECT region, count() AS c FROM events GROUP BY region ORDER BY c DESC, region ASC
-- case nulls_last
SELECT user.id, max(ts) AS last_seen FROM events GROUP BY user.id ORDER BY last_seen DESC NULLS LAST
-- case with_totals
SELECT region, count() FROM events GROUP BY region WITH TOTALS
-- case rollup
SELECT region, team, count() FROM events GROUP BY ROLLUP(region, team)
-- case cube
SELECT region, team, count() FROM events GROUP BY CUBE(region, team)
-- case grouping_sets
SELECT region, team, sum(amount::Float64) FROM events GROUP BY GROUPING SETS ((region, team), (region), ())
-- case with_rollup_modifier
SELECT region, team, count() FROM events GROUP BY region, team WITH ROLLUP
-- case sample
SELECT count() * 10 FROM events SAMPLE 0.1
-- case final
SELECT count() FROM events FINAL
-- case prewhere
SELECT count() FROM events PREWHERE event = 'click' WHERE region = 'eu'
-- case settings
SELECT count() FROM events SETTINGS max_threads = 4, max_execution_time = 30
-- case format_clause
SELECT count() FROM events FORMAT JSON
-- case no_from
SELECT now(), today(), version()
-- case date_literals
SELECT count() FROM events WHERE ts >= '2024-01-01' AND ts < '2024-02-01'
-- case date_keyword_literal
SELECT count() FROM events WHERE toDate(ts) = DATE '2024-01-01'
-- case select_star_limit
SELECT * FROM events ORDER BY ts DESC LIMIT 100
-- case qualified_star
SELECT e.* FROM events AS e LIMIT 10
-- case distinct_on
SELECT DISTINCT ON (user.id) user.id, ts FROM events ORDER BY user.id, ts DESC
-- case count_distinct_syntax
SELECT count(DISTINCT user.id) FROM events
-- case uniq_if
SELECT uniqIf(user.id, event = 'purchase') AS buyers FROM events
-- case table_with_db
SELECT count() FROM analytics.daily
-- case keyword_table
SELECT count() FROM `order`
