-- * | chart limit=bottom1 useother=f usenull=false count, avg(bytes) AS b OVER status BY host
-- result: statistics
-- column: status
-- column: count:web1
-- column: b:web1
-- stage: search | *
-- stage: chart | limit=bottom1 useother=f usenull=false count, avg(bytes) AS b OVER status BY host

-- resolved before compiling the rest:
WITH
  s0 AS (SELECT doc._time AS `@_time`, doc.`bytes` AS `@bytes`, doc.`status` AS `@status`, doc.`host` AS `@host` FROM `db`.`logsearch_events` WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC')),
  s1 AS (SELECT CAST(`@status` AS Nullable(String)) AS c1, `@status` AS c2, nullIf(`@host`, '') AS c3, `@bytes` AS c4 FROM s0 WHERE (CAST(`@status` AS Nullable(String)) IS NOT NULL) AND (nullIf(`@host`, '') IS NOT NULL))
SELECT toUInt8(c3 IS NULL) AS is_null, CAST(c3 AS Nullable(String)) AS value, toFloat64(count()) AS score FROM s1 GROUP BY c3 ORDER BY is_null ASC, score ASC, value ASC LIMIT 2 BY is_null

-- main:
WITH
  s0 AS (SELECT doc._time AS `@_time`, doc.`bytes` AS `@bytes`, doc.`status` AS `@status`, doc.`host` AS `@host` FROM `db`.`logsearch_events` WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC')),
  s1 AS (SELECT CAST(`@status` AS Nullable(String)) AS c1, `@status` AS c2, nullIf(`@host`, '') AS c3, `@bytes` AS c4 FROM s0 WHERE (CAST(`@status` AS Nullable(String)) IS NOT NULL) AND (nullIf(`@host`, '') IS NOT NULL)),
  s2 AS (SELECT c1 AS c5, any(c2) AS c6, countIf(c3 = 'web1') AS c7, avgIf(toNullable(toFloat64(toFloat64OrNull(CAST(c4 AS Nullable(String))))), c3 = 'web1') AS c8 FROM s1 GROUP BY c5)
SELECT toJSONString(c6) AS o1, c7 AS o2, c8 AS o3 FROM s2 ORDER BY (c5 IS NULL) ASC, (toFloat64OrNull(c5) IS NULL) ASC, toFloat64OrNull(c5) ASC, c5 ASC LIMIT 10001

-- stage counts:
WITH
  s0 AS (SELECT doc._time AS `@_time`, doc.`bytes` AS `@bytes`, doc.`status` AS `@status`, doc.`host` AS `@host` FROM `db`.`logsearch_events` WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC')),
  s1 AS (SELECT CAST(`@status` AS Nullable(String)) AS c1, `@status` AS c2, nullIf(`@host`, '') AS c3, `@bytes` AS c4 FROM s0 WHERE (CAST(`@status` AS Nullable(String)) IS NOT NULL) AND (nullIf(`@host`, '') IS NOT NULL)),
  s2 AS (SELECT c1 AS c5, any(c2) AS c6, countIf(c3 = 'web1') AS c7, avgIf(toNullable(toFloat64(toFloat64OrNull(CAST(c4 AS Nullable(String))))), c3 = 'web1') AS c8 FROM s1 GROUP BY c5)
SELECT (SELECT count() FROM (SELECT 1 FROM s0 LIMIT 10001)) AS n0, (SELECT count() FROM (SELECT 1 FROM s2 LIMIT 10001)) AS n1
