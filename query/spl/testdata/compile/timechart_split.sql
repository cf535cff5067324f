-- * | timechart span=2w count, avg(bytes) BY host limit=0
-- result: statistics
-- column: _time
-- column: count:db1
-- column: count:web1
-- column: count:web2
-- column: count:NULL
-- column: avg(bytes):db1
-- column: avg(bytes):web1
-- column: avg(bytes):web2
-- column: avg(bytes):NULL
-- stage: search | *
-- stage: timechart | span=2w count, avg(bytes) BY host limit=0

-- resolved before compiling the rest:
WITH
  s0 AS (SELECT doc._time AS `@_time`, doc.`bytes` AS `@bytes`, doc.`host` AS `@host` FROM `db`.`logsearch_events` WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC')),
  s1 AS (SELECT fromUnixTimestamp64Milli(toInt64((intDiv((toUnixTimestamp64Milli(`@_time`) - 345600000), 1209600000) - ((toUnixTimestamp64Milli(`@_time`) - 345600000) % 1209600000 < 0)) * 1209600000 + 345600000), 'UTC') AS c1, nullIf(`@host`, '') AS c2, `@bytes` AS c3 FROM s0)
SELECT toUInt8(c2 IS NULL) AS is_null, CAST(c2 AS Nullable(String)) AS value, toFloat64(count()) AS score FROM s1 GROUP BY c2 ORDER BY is_null ASC, score DESC, value ASC LIMIT 101 BY is_null

-- main:
WITH
  s0 AS (SELECT doc._time AS `@_time`, doc.`bytes` AS `@bytes`, doc.`host` AS `@host` FROM `db`.`logsearch_events` WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC')),
  s1 AS (SELECT fromUnixTimestamp64Milli(toInt64((intDiv((toUnixTimestamp64Milli(`@_time`) - 345600000), 1209600000) - ((toUnixTimestamp64Milli(`@_time`) - 345600000) % 1209600000 < 0)) * 1209600000 + 345600000), 'UTC') AS c1, nullIf(`@host`, '') AS c2, `@bytes` AS c3 FROM s0),
  s2 AS (SELECT c1 AS c4, countIf(c2 = 'db1') AS c5, countIf(c2 = 'web1') AS c6, countIf(c2 = 'web2') AS c7, countIf(c2 IS NULL) AS c8, avgIf(toNullable(toFloat64(toFloat64OrNull(CAST(c3 AS Nullable(String))))), c2 = 'db1') AS c9, avgIf(toNullable(toFloat64(toFloat64OrNull(CAST(c3 AS Nullable(String))))), c2 = 'web1') AS c10, avgIf(toNullable(toFloat64(toFloat64OrNull(CAST(c3 AS Nullable(String))))), c2 = 'web2') AS c11, avgIf(toNullable(toFloat64(toFloat64OrNull(CAST(c3 AS Nullable(String))))), c2 IS NULL) AS c12 FROM s1 GROUP BY c4 ORDER BY c4 WITH FILL FROM toDateTime64('2023-12-25 00:00:00.000', 3, 'UTC') TO toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC') STEP toIntervalMillisecond(1209600000))
SELECT c4 AS o1, c5 AS o2, c6 AS o3, c7 AS o4, c8 AS o5, c9 AS o6, c10 AS o7, c11 AS o8, c12 AS o9 FROM s2 ORDER BY (c4 IS NULL) ASC, c4 ASC LIMIT 10001

-- stage counts:
WITH
  s0 AS (SELECT doc._time AS `@_time`, doc.`bytes` AS `@bytes`, doc.`host` AS `@host` FROM `db`.`logsearch_events` WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC')),
  s1 AS (SELECT fromUnixTimestamp64Milli(toInt64((intDiv((toUnixTimestamp64Milli(`@_time`) - 345600000), 1209600000) - ((toUnixTimestamp64Milli(`@_time`) - 345600000) % 1209600000 < 0)) * 1209600000 + 345600000), 'UTC') AS c1, nullIf(`@host`, '') AS c2, `@bytes` AS c3 FROM s0),
  s2 AS (SELECT c1 AS c4, countIf(c2 = 'db1') AS c5, countIf(c2 = 'web1') AS c6, countIf(c2 = 'web2') AS c7, countIf(c2 IS NULL) AS c8, avgIf(toNullable(toFloat64(toFloat64OrNull(CAST(c3 AS Nullable(String))))), c2 = 'db1') AS c9, avgIf(toNullable(toFloat64(toFloat64OrNull(CAST(c3 AS Nullable(String))))), c2 = 'web1') AS c10, avgIf(toNullable(toFloat64(toFloat64OrNull(CAST(c3 AS Nullable(String))))), c2 = 'web2') AS c11, avgIf(toNullable(toFloat64(toFloat64OrNull(CAST(c3 AS Nullable(String))))), c2 IS NULL) AS c12 FROM s1 GROUP BY c4 ORDER BY c4 WITH FILL FROM toDateTime64('2023-12-25 00:00:00.000', 3, 'UTC') TO toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC') STEP toIntervalMillisecond(1209600000))
SELECT (SELECT count() FROM (SELECT 1 FROM s0 LIMIT 10001)) AS n0, (SELECT count() FROM (SELECT 1 FROM s2 LIMIT 10001)) AS n1
