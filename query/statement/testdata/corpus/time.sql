-- case per_day
SELECT toDate(ts::DateTime) AS day, count() FROM events GROUP BY day ORDER BY day
-- case per_hour
SELECT toStartOfHour(ts::DateTime) AS hour, count() FROM events GROUP BY hour ORDER BY hour
-- case per_5_min
SELECT toStartOfInterval(ts::DateTime, INTERVAL 5 MINUTE) AS t, count() FROM events GROUP BY t ORDER BY t
-- case last_7_days
SELECT count() FROM events WHERE ts::DateTime > now() - INTERVAL 7 DAY
-- case interval_arith
SELECT now() - INTERVAL 1 HOUR, today() + INTERVAL 2 WEEK, toDate('2024-01-01') + INTERVAL 1 MONTH
-- case interval_string
SELECT count() FROM events WHERE ts::DateTime > now() - INTERVAL '1 day'
-- case to_interval_fn
SELECT count() FROM events WHERE ts::DateTime > now() - toIntervalDay(30)
-- case date_diff
SELECT dateDiff('day', min(ts::DateTime), max(ts::DateTime)) FROM events
-- case date_diff_unit
SELECT DATE_DIFF(day, min(ts::DateTime), max(ts::DateTime)) FROM events
-- case date_add_unit
SELECT DATE_ADD(day, 7, toDate(ts::DateTime)) FROM events LIMIT 1
-- case date_trunc
SELECT date_trunc('month', ts::DateTime) AS m, count() FROM events GROUP BY m
-- case extract_year
SELECT EXTRACT(YEAR FROM ts::DateTime) AS y, count() FROM events GROUP BY y
-- case format_datetime
SELECT formatDateTime(ts::DateTime, '%Y-%m-%d %H:00') AS h FROM events LIMIT 5
-- case to_yyyymm
SELECT toYYYYMM(ts::DateTime) AS m, sum(amount::Float64) FROM events GROUP BY m ORDER BY m
-- case week_day
SELECT toDayOfWeek(ts::DateTime) AS dow, count() FROM events GROUP BY dow ORDER BY dow
-- case timezone
SELECT toTimeZone(ts::DateTime, 'Europe/Berlin') FROM events LIMIT 5
-- case parse_best_effort
SELECT parseDateTimeBestEffort(ts::String) FROM events LIMIT 5
-- case datetime64
SELECT toDateTime64(ts, 3) FROM events LIMIT 5
-- case with_fill_day
SELECT toDate(ts::DateTime) AS d, count() AS c FROM events GROUP BY d ORDER BY d WITH FILL FROM toDate('2024-01-01') TO toDate('2024-02-01') STEP 1
-- case with_fill_interval
SELECT toStartOfHour(ts::DateTime) AS h, count() AS c FROM events GROUP BY h ORDER BY h WITH FILL STEP INTERVAL 1 HOUR
-- case with_fill_interpolate
SELECT toStartOfDay(ts::DateTime) AS d, count() AS c FROM events GROUP BY d ORDER BY d WITH FILL STEP INTERVAL 1 DAY INTERPOLATE (c AS c)
-- case relative_now
SELECT count() FROM events WHERE toDate(ts::DateTime) = yesterday()
-- case time_slot
SELECT timeSlot(ts::DateTime) AS slot, count() FROM events GROUP BY slot
-- case age
SELECT age('second', min(ts::DateTime), max(ts::DateTime)) FROM events
-- case unix_ts
SELECT toUnixTimestamp(ts::DateTime), fromUnixTimestamp(ts_unix::Int64) FROM events LIMIT 3
-- case session_gap
SELECT user.id, max(ts::DateTime) - min(ts::DateTime) AS span FROM events GROUP BY user.id
