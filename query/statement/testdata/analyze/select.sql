-- case bare_path
SELECT user.id, event FROM events WHERE ts > now() - INTERVAL 1 DAY
-- case star
SELECT * FROM events LIMIT 10
-- case qualified_db
SELECT count() FROM analytics.daily
-- case alias_and_qualified
SELECT e.user.id AS uid, count() AS n FROM events AS e GROUP BY uid ORDER BY n DESC LIMIT 5
-- case join
SELECT e.user.id, u.name FROM events AS e JOIN users AS u ON e.user.id::Int64 = u.id::Int64
-- case join_unqualified_ambiguous
SELECT name FROM events AS e JOIN users AS u ON e.user.id::Int64 = u.id::Int64
-- case cte
WITH recent AS (SELECT * FROM events WHERE ts > '2024-01-01') SELECT user.id, count() FROM recent GROUP BY user.id
-- case cte_twice
WITH ids AS (SELECT user.id AS id FROM events) SELECT count() FROM ids AS a JOIN ids AS b ON a.id::Int64 = b.id::Int64
-- case lambda
SELECT arrayMap(x -> x * 2, [1, 2, 3]) AS doubled, arrayFilter((t, i) -> i > 1, tags::Array(String), [1, 2]) FROM events
-- case window
SELECT user.id, row_number() OVER (PARTITION BY user.id ORDER BY ts) AS rn FROM events WHERE event = 'click' WINDOW w AS (ORDER BY ts)
-- case array_join
SELECT tag, count() FROM events ARRAY JOIN tags::Array(String) AS tag GROUP BY tag
-- case array_join_path
SELECT tags FROM events ARRAY JOIN tags
-- case in_subquery
SELECT count() FROM events WHERE user.id IN (SELECT id FROM users WHERE plan = 'pro')
-- case union
SELECT user.id FROM events UNION ALL SELECT id FROM users
-- case literals
SELECT NULL, true, false, inf, nan, 'x', 1.5 FROM events LIMIT 1
-- case current_database
SELECT currentDatabase(), database()
-- case settings_ok
SELECT count() FROM events SETTINGS max_threads = 2, workload = 'analytics'
-- case settings_denied
SELECT count() FROM events SETTINGS readonly = 0
-- case format_denied
SELECT 1 FORMAT JSON
-- case system_tables
SELECT database, name, total_rows FROM system.tables ORDER BY name
-- case system_processes
SELECT * FROM system.processes
-- case numbers
SELECT number FROM numbers(10)
-- case url
SELECT * FROM url('http://169.254.169.254/latest/meta-data', CSV, 'a String')
-- case other_org
SELECT * FROM o_fedcba9876543210fedcba9876543210__default.events
-- case svc
SELECT * FROM _svc.ingest_keys
-- case alias_doc
SELECT 1 AS doc FROM events
-- case date_add
SELECT dateAdd(day, 1, ts), DATE_DIFF(hour, ts, now()) FROM events
-- case cast_type
SELECT CAST(n AS Nullable(Int64)), n::Float64, CAST(n, 'String') FROM events
-- case json_backtick
SELECT `odd name`.`x y`, "dq" FROM events
-- case no_from
SELECT 1 + 1, now()
-- case write_only as=write_only
SELECT 1
-- case grouping_sets
SELECT region, team, count() FROM events GROUP BY GROUPING SETS ((region, team), (region), ())
-- case with_fill
SELECT toStartOfDay(ts::DateTime) AS d, count() AS c FROM events GROUP BY d ORDER BY d WITH FILL STEP INTERVAL 1 DAY
-- case limit_by
SELECT user.id, ts FROM events ORDER BY ts DESC LIMIT 1 BY user.id
-- case outer_alias_in_subquery
SELECT 1 AS x, (SELECT x) FROM events
-- case tuple_element
SELECT (1, 'a').1, meta.1 FROM events
